"""Scan planning (trinity_dbapi.tables.scan): which files of a version each reader reads, and how."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import trinity_dbapi
from trinity_dbapi.lakehouse.transaction import Transaction
from trinity_dbapi.tables import scan


def _lake(uri: str) -> Any:
    conn = trinity_dbapi.connect(uri, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (p INT4, k VARCHAR(8), v INT8) PARTITIONED BY (p)")
    cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?)", [(i % 4, f"k{i}", i) for i in range(20)])
    cur.execute("CREATE INDEX by_k ON ns.t (k)")
    cur.execute("CREATE TABLE ns.empty (a INT4)")
    return conn


def _definition(conn: Any, table: str) -> Any:
    lakehouse = conn.lakehouse
    view = Transaction(lakehouse, lakehouse.snapshot(), read_only=True)
    return view.load_table("ns", table)


def test_a_local_root_is_read_by_duckdb_and_pruned(tmp_path: Path) -> None:
    conn = _lake(str(tmp_path / "lake"))
    storage = conn.lakehouse.storage
    definition = _definition(conn, "t")
    everything = scan.plan_query_scan(storage, definition, {})
    assert everything.form is scan.ScanForm.READ_PARQUET
    assert everything.local_root == storage.local_root
    assert len(everything.files) == 4
    one = scan.plan_query_scan(storage, definition, {"p": [2]})
    assert one.form is scan.ScanForm.READ_PARQUET and len(one.files) == 1
    by_index = scan.plan_query_scan(storage, definition, {"k": ["k5"]})
    assert by_index.labels is not None and len(by_index.files) == 1
    # A dataset without files: an Arrow dataset of none (DuckDB binds no empty file list).
    empty = scan.plan_query_scan(storage, _definition(conn, "empty"), {})
    assert empty.form is scan.ScanForm.ARROW_DATASET and empty.files == ()
    assert scan.plan_view_scan(storage, _definition(conn, "empty")).form is scan.ScanForm.EMPTY
    conn.close()


def test_other_stores_are_read_through_an_arrow_dataset() -> None:
    conn = _lake(f"memory://scan-{uuid.uuid4().hex}/lake")
    storage = conn.lakehouse.storage
    definition = _definition(conn, "t")
    plan = scan.plan_query_scan(storage, definition, {"p": [1, 3]})
    assert plan.form is scan.ScanForm.ARROW_DATASET and len(plan.files) == 2
    assert sorted(plan.arrow_dataset(storage).to_table()["p"].unique().to_pylist()) == [1, 3]
    # The bridge reads any store it can reach with read_parquet, every file.
    view = scan.plan_view_scan(storage, definition)
    assert view.form is scan.ScanForm.READ_PARQUET and len(view.files) == 4
    conn.close()


def test_pruned_labels_keep_the_dataset_order(tmp_path: Path) -> None:
    conn = _lake(str(tmp_path / "lake"))
    storage = conn.lakehouse.storage
    definition = _definition(conn, "t")
    from trinity_dbapi.tables import managed

    meta = managed.metadata(storage, definition)
    labels = list(meta.partitions)
    assert scan.pruned_labels(storage, definition, meta, {}) == labels
    chosen = scan.pruned_labels(storage, definition, meta, {"p": [3, 0]})
    assert chosen == [label for label in labels if label in chosen] and len(chosen) == 2
    conn.close()


def test_conjoined_ands_two_conditions_on_one_column() -> None:
    from trinity_dbapi.tables.partitions import ValueRange

    assert scan.conjoined(None, [1, 2]) == [1, 2]
    assert scan.conjoined([1, 2, 3], [3, 2, 9]) == [3, 2]
    # Values win over a range, either way round: pruning reads a file more, never one fewer.
    assert scan.conjoined([1], ValueRange(5)) == [1]
    assert scan.conjoined(ValueRange(5), [1]) == [1]
    assert scan.conjoined(ValueRange(1, 9), ValueRange(3, 12)) == ValueRange(3, 9)
    assert scan.conjoined(ValueRange(1, 9), ValueRange(None, 9, False)) == ValueRange(1, 9, False)
    assert scan.conjoined(ValueRange(1, 9, False), ValueRange(None, 9)) == ValueRange(1, 9, False)
    # Bounds of kinds that do not compare: the first is kept.
    assert scan.conjoined(ValueRange(1), ValueRange("x")) == ValueRange(1)
