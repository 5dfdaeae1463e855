"""Kartothek 5.3.0 reads a clone (``CREATE TABLE ... CLONE``) by its own dataset UUID.

docs/datasets.md, decision 25: a clone's main metadata file lists the files
it shares with the table it was cloned from under that table's dataset UUID;
Kartothek follows the paths and gives the rows SELECT gives, with predicates
on the partition and the indexed column, also after the source was dropped
and its garbage collected (tests/kartothek/our_tables.py, ``build_clone_lake``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from . import our_tables, venv
from .test_kartothek_reads_ours import _kartothek

pytestmark = pytest.mark.kartothek


@pytest.fixture(scope="module")
def kartothek_python() -> Path:
    try:
        return venv.ensure_venv()
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kartothek-clones") / "lake"
    our_tables.build_clone_lake(root)
    return root


def test_kartothek_reads_a_clone_of_a_dropped_table(kartothek_python: Path, lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.c")
    assert [r["id"] for r in expected] == [1, 3, 4, 5]
    assert _kartothek(kartothek_python, lake, "c") == expected


def test_kartothek_prunes_a_clone(kartothek_python: Path, lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.c WHERE day = DATE '2024-01-03'")
    assert [r["id"] for r in expected] == [4, 5]
    assert _kartothek(kartothek_python, lake, "c", [[["day", "==", "date:2024-01-03"]]]) == expected
    expected = our_tables.select_rows(lake, "SELECT * FROM s.c WHERE k = 'x'")
    assert [r["id"] for r in expected] == [1, 3, 5]
    assert _kartothek(kartothek_python, lake, "c", [[["k", "==", "x"]]]) == expected


def test_kartothek_reads_a_time_travel_clone(kartothek_python: Path, lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.c2")
    assert [r["id"] for r in expected] == [1, 2, 3, 4]
    assert _kartothek(kartothek_python, lake, "c2") == expected
