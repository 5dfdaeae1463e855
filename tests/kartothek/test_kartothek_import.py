"""Acceptance (issue 18): a dataset Kartothek 5.3.0 wrote and updated, imported through SQL.

Kartothek itself, in its Python 3.9 virtualenv (tests/kartothek/venv.py),
writes the dataset of pipeline_frames.py (partitioned on ``region`` and
``day``, indexed on ``customer``, then appended to with a ``delete_scope``)
with each metadata encoding, and prints its own ``read_table``.
``CALL system.import_kartothek`` must make a table whose SELECT gives
exactly those rows, in both modes, also through the partition and index
pruning; the plateau half is tests/sql/engine/test_import_kartothek.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from tests.tables import kartothek_sources
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.tables import managed

from . import pipeline_frames, venv
from .rows_json import to_json

pytestmark = pytest.mark.kartothek


@pytest.fixture(scope="module", params=["json", "msgpack"])
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """(store directory, Kartothek's rows) of the dataset ``orders`` in one encoding."""
    store = tmp_path_factory.mktemp(f"kartothek-{request.param}")
    try:
        rows = kartothek_sources.write_kartothek_dataset(store, "orders", request.param)
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))
    assert [r["id"] for r in rows] == pipeline_frames.EXPECTED_IDS
    return store, rows


def _select(cur: Any, sql: str) -> list[dict[str, Any]]:
    cur.execute(sql)
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, map(to_json, row), strict=True)) for row in cur.fetchall()]
    return sorted(rows, key=lambda r: r["id"])


@pytest.mark.parametrize("mode", ["copy", "reference"])
def test_imported_dataset_reads_like_kartothek(written: Any, tmp_path: Path, mode: str) -> None:
    store, expected = written
    root = tmp_path / "lake"
    conn = trinity_dbapi.connect(str(root), create=True, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE sales")
    cur.execute(
        "CALL system.import_kartothek(table => 'sales.orders', location => ?, "
        "dataset_uuid => 'orders', mode => ?)",
        [str(store), mode],
    )
    names = [d[0] for d in cur.description]
    result = dict(zip(names, cur.fetchone(), strict=True))
    assert result["mode"] == mode and result["indexed_columns"] == ["customer"]
    assert result["rows"] == (len(expected) if mode == "copy" else None)

    columns = ", ".join(f'"{c}"' for c in pipeline_frames.COLUMNS)
    assert _select(cur, f"SELECT {columns} FROM sales.orders") == expected
    # Through the pruning of the partition columns and of the index.
    by_region = _select(cur, f"SELECT {columns} FROM sales.orders WHERE region = 'süd'")
    assert by_region == [r for r in expected if r["region"] == "süd"] and by_region
    customer = expected[0]["customer"]
    by_customer = _select(cur, f"SELECT {columns} FROM sales.orders WHERE customer = '{customer}'")
    assert by_customer == [r for r in expected if r["customer"] == customer] and by_customer

    definition = Lakehouse.open(str(root)).begin(read_only=True).load_table("sales", "orders")
    assert definition.partition_columns == pipeline_frames.PARTITION_ON
    assert managed.indexes(definition) == {"customer": "customer"}
    assert managed.is_reference(definition) == (mode == "reference")
    cur.execute("CALL system.check_integrity()")
    assert cur.fetchall() == [(None, None, "ok")]
    conn.close()
