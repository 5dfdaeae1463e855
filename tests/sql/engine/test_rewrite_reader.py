"""Compaction's DuckDB reader gives exactly what ``read_table`` gives, or steps aside.

``CALL system.rewrite_data_files`` on a local root reads each group of small
files with one ``read_parquet`` in the session's DuckDB (``rewrite_files._duckdb_reader``).
These tests hold it to the eager reader: the same Arrow table (values, types,
field metadata) for random rows of every type it takes, across added, renamed
and promoted columns and NULL partitions; None for what it does not take; and a
damaged file still named by the usual reader.
"""

from __future__ import annotations

import decimal
import math
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.sql.engine import rewrite_files
from trinity_dbapi.storage.cache import shared_cache
from trinity_dbapi.tables import managed
from trinity_dbapi.tables.reader import read_table

_COLUMNS = (
    "b BOOLEAN, i2 SMALLINT, i4 INTEGER, i8 BIGINT, f4 REAL, f8 DOUBLE, d DATE, "
    "s VARCHAR, n DECIMAL(38, 10), p VARCHAR"
)

_FLOATS = st.sampled_from([0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, math.nan, 1e300])
_ROW = st.tuples(
    st.none() | st.booleans(),
    st.none() | st.integers(-(2**15), 2**15 - 1),
    st.none() | st.integers(-(2**31), 2**31 - 1),
    st.none() | st.integers(-(2**63), 2**63 - 1),
    st.none() | st.sampled_from([0.0, -0.0, 0.5, math.inf, math.nan]),
    st.none() | _FLOATS,
    st.none() | st.dates(),
    st.none() | st.text(max_size=6),
    st.none()
    | st.decimals(
        min_value=decimal.Decimal("-9999999999999999999999999999.9999999999"),
        max_value=decimal.Decimal("9999999999999999999999999999.9999999999"),
        places=10,
        allow_nan=False,
        allow_infinity=False,
    ),
    st.none() | st.sampled_from(["a", "b/c", "é 1"]),
)


def _connect(root: Path) -> Any:
    return trinity_dbapi.connect(str(root), create=True, autocommit=True)


def _insert(conn: Any, table: str, rows: list[tuple[Any, ...]]) -> None:
    marks = ", ".join("?" for _ in rows[0])
    for row in rows:  # one file per row: what compaction is for
        conn.execute(f"INSERT INTO {table} VALUES ({marks})", list(row))


def _groups(conn: Any, table: str) -> Iterator[tuple[Any, Any, list[str]]]:
    """The reader, the eager read of a directory and its labels, per partition directory."""
    session = conn.session
    definition = session.lakehouse.begin(read_only=True).load_table("default", table)
    storage = session.lakehouse.storage
    meta = managed.metadata(storage, definition)
    reader = rewrite_files._duckdb_reader(session, definition, meta)
    schema, by = managed.schema(definition), definition.partition_columns
    directories: dict[str, list[str]] = {}
    for label in meta.partitions:
        directories.setdefault(label.rpartition("/")[0], []).append(label)
    for labels in directories.values():
        yield reader, read_table(storage, meta, schema, by, labels=labels), labels


def _same(got: pa.Table | None, want: pa.Table) -> None:
    assert got is not None
    assert got.schema.equals(want.schema, check_metadata=True)
    # By repr: NaN equals NaN there, and -0.0 differs from 0.0.
    assert repr(got.to_pylist()) == repr(want.to_pylist())


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=st.lists(_ROW, min_size=1, max_size=6), partitioned=st.booleans())
def test_random_rows_read_as_read_table_reads_them(
    tmp_path: Path, rows: list[tuple[Any, ...]], partitioned: bool
) -> None:
    root = tmp_path / uuid.uuid4().hex
    conn = _connect(root)
    suffix = " PARTITIONED BY (p)" if partitioned else ""
    conn.execute(f"CREATE TABLE t ({_COLUMNS}){suffix}")
    _insert(conn, "t", rows)
    groups = list(_groups(conn, "t"))
    assert groups
    for reader, want, labels in groups:
        assert reader is not None
        _same(reader(labels), want)
    conn.close()


def test_added_dropped_and_promoted_columns(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "lake")
    conn.execute("CREATE TABLE t (id INTEGER, v REAL, s VARCHAR(4), p VARCHAR) PARTITIONED BY (p)")
    _insert(conn, "t", [(1, 0.5, "ab", "x"), (2, None, None, None), (3, -0.0, "é", "x")])
    conn.execute("ALTER TABLE t ADD COLUMN extra DECIMAL(9, 2)")
    # A column dropped and added again under its name is another column (a new
    # ID): the older files' values of the first must not show through.
    conn.execute("ALTER TABLE t DROP COLUMN v")
    conn.execute("ALTER TABLE t ADD COLUMN v DOUBLE")
    conn.execute("ALTER TABLE t ALTER COLUMN id TYPE BIGINT")
    conn.execute("ALTER TABLE t ALTER COLUMN s TYPE VARCHAR(10)")
    _insert(conn, "t", [(2**40, "longer", "x", decimal.Decimal("1234567.89"), 1e300)])
    seen = []
    for reader, want, labels in _groups(conn, "t"):
        _same(reader(labels), want)
        seen.extend(want.to_pylist())
    assert sorted(row["v"] is None for row in seen) == [False, True, True, True]
    # The rewrite keeps every row and value.
    before = conn.execute("SELECT * FROM t ORDER BY id").fetchall()
    result = conn.execute("CALL system.rewrite_data_files('t')").fetchall()
    assert result[0][1] == 3  # the three files of partition x; NULL's one file stays
    assert conn.execute("SELECT * FROM t ORDER BY id").fetchall() == before
    conn.close()


def test_other_tables_are_left_to_read_table(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "lake")
    conn.execute("CREATE TABLE ts (id INT8, at TIMESTAMPTZ)")
    conn.execute("CREATE TABLE days (id INT8, d DATE) PARTITIONED BY (day(d))")
    conn.execute("INSERT INTO ts VALUES (1, TIMESTAMPTZ '2024-01-01 00:00:00+00')")
    conn.execute("INSERT INTO days VALUES (1, DATE '2024-01-01')")
    for table in ("ts", "days"):
        assert all(reader is None for reader, _, _ in _groups(conn, table))
    conn.close()
    remote = trinity_dbapi.connect(f"memory://reader-{uuid.uuid4().hex}", autocommit=True)
    remote.execute("CREATE TABLE t (id INT8)")
    remote.execute("INSERT INTO t VALUES (1)")
    assert all(reader is None for reader, _, _ in _groups(remote, "t"))
    remote.close()


def test_a_damaged_file_is_named_by_the_usual_reader(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "lake")
    conn.execute("CREATE TABLE t (id INT8, v DOUBLE)")
    _insert(conn, "t", [(i, i / 2) for i in range(4)])
    reader, _, labels = next(_groups(conn, "t"))
    definition = conn.session.lakehouse.begin(read_only=True).load_table("default", "t")
    meta = managed.metadata(conn.session.lakehouse.storage, definition)
    damaged = meta.partitions[labels[1]]["table"]
    path = tmp_path / "lake" / damaged
    path.write_bytes(path.read_bytes()[:-12])
    assert reader(labels) is None  # DuckDB failed: the files are read again the usual way
    conn.close()
    shared_cache().clear()  # as another process finds the damaged file
    conn = _connect(tmp_path / "lake")
    with pytest.raises(CorruptFileError, match=damaged.rpartition("/")[2]):
        conn.execute("CALL system.rewrite_data_files('t')")
    assert conn.execute("SELECT count(*) FROM system.data_files").fetchone() == (4,)
    conn.close()
