"""plateau 4.6 reads a clone (``CREATE TABLE ... CLONE``) by its own dataset UUID.

The plateau half of tests/kartothek/test_kartothek_reads_clones.py, in the
main environment (docs/datasets.md, decision 25): the clone's files under the
dropped source's dataset are read through the paths its metadata lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.kartothek import our_tables
from tests.kartothek.rows_json import frame_rows

eager = pytest.importorskip("plateau.io.eager", reason="plateau (the test extra) is not installed")
minimalkv = pytest.importorskip("minimalkv", reason="minimalkv comes with plateau")

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plateau-clones") / "lake"
    our_tables.build_clone_lake(root)
    return root


def _plateau(root: Path, table: str, predicates: Any = None) -> list[dict[str, Any]]:
    store = minimalkv.get_store_from_url(f"hfs://{root}")
    uuid = our_tables.dataset_uuid(root, table)
    frame = eager.read_table(dataset_uuid=uuid, store=store, predicates=predicates)
    return sorted(frame_rows(frame), key=lambda r: r["id"])


def test_plateau_reads_clones_of_a_dropped_table(lake: Path) -> None:
    for table, ids in (("c", [1, 3, 4, 5]), ("c2", [1, 2, 3, 4])):
        expected = our_tables.select_rows(lake, f"SELECT * FROM s.{table}")
        assert [r["id"] for r in expected] == ids
        assert _plateau(lake, table) == expected


def test_plateau_prunes_a_clone(lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.c WHERE k = 'x'")
    assert [r["id"] for r in expected] == [1, 3, 5]
    assert _plateau(lake, "c", [[("k", "==", "x")]]) == expected
