"""ALTER TABLE ... ALTER COLUMN ... TYPE: widenings the data files need not follow."""

from __future__ import annotations

import decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import trinity_dbapi
from trinity_dbapi import errors, tables
from trinity_dbapi.duckdb import attach
from trinity_dbapi.tables import managed

D = decimal.Decimal
CREATE = (
    "CREATE TABLE ns.t (a INT4, b INT2, f FLOAT4, d DECIMAL(5, 2), s VARCHAR(3), p INT2)"
    " PARTITIONED BY (p)"
)
#: Every promotion, in both spellings.
ALTERS = (
    "ALTER TABLE ns.t ALTER COLUMN a TYPE INT8",
    "ALTER TABLE ns.t ALTER b SET DATA TYPE INT4",
    "ALTER TABLE ns.t ALTER COLUMN b TYPE INT8",
    "ALTER TABLE ns.t ALTER COLUMN f SET DATA TYPE FLOAT8",
    "ALTER TABLE ns.t ALTER COLUMN d TYPE DECIMAL(14, 2)",
    "ALTER TABLE ns.t ALTER COLUMN s TYPE VARCHAR(10)",
    "ALTER TABLE ns.t ALTER COLUMN s TYPE VARCHAR",
    "ALTER TABLE ns.t ALTER COLUMN p TYPE INT4",
)
OLD_ROW = (1, 2, 1.5, D("123.45"), "abc", 7)
NEW_ROW = (5_000_000_000, 6_000_000_000, 1e300, D("123456789012.34"), "abcdefghijkl", 70_000)
NEW_TYPES = ["int8", "int8", "float8", "decimal(14,2)", "varchar", "int4"]


def _make(uri: str, options: dict[str, Any] | None = None) -> Any:
    conn = trinity_dbapi.connect(uri, create=True, autocommit=True, storage_options=options)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute(CREATE)
    cur.execute("INSERT INTO ns.t VALUES (?, ?, ?, ?, ?, ?)", list(OLD_ROW))
    return conn


def _promote(conn: Any) -> int:
    """Apply every promotion; the version before them."""
    before = conn.lakehouse.latest_version()
    for sql in ALTERS:
        conn.execute(sql)
    conn.execute("INSERT INTO ns.t VALUES (?, ?, ?, ?, ?, ?)", list(NEW_ROW))
    return int(before)


def test_every_promotion_reads_old_and_new_rows(backend: tuple[str, dict[str, Any]]) -> None:
    uri, options = backend
    conn = _make(uri, options)
    before = _promote(conn)
    cur = conn.cursor()
    assert [r[1] for r in cur.execute("DESCRIBE ns.t").fetchall()] == NEW_TYPES
    assert cur.execute("SELECT * FROM ns.t ORDER BY a").fetchall() == [OLD_ROW, NEW_ROW]
    # Filters compare in the new type, partition pruning included.
    assert cur.execute("SELECT a FROM ns.t WHERE p = 70000").fetchall() == [(NEW_ROW[0],)]
    assert cur.execute("SELECT a FROM ns.t WHERE a > 4000000000").fetchall() == [(NEW_ROW[0],)]
    assert cur.execute("SELECT sum(b) FROM ns.t").fetchall() == [(6_000_000_002,)]
    # Time travel keeps the old types and rows.
    old = cur.execute(f"SELECT * FROM ns.t FOR SYSTEM_VERSION AS OF {before}")
    assert [d[1] for d in old.description][:2] == ["INTEGER", "SMALLINT"]
    assert old.fetchall() == [OLD_ROW]


def test_the_duckdb_bridge_reads_the_promoted_columns(backend: tuple[str, dict[str, Any]]) -> None:
    uri, options = backend
    conn = _make(uri, options)
    _promote(conn)
    con = duckdb.connect()
    attach(con, uri, storage_options=options)
    query = "SELECT * FROM ns.t ORDER BY a"
    assert con.sql(query).fetchall() == [OLD_ROW, NEW_ROW]
    types = [str(t) for t in con.sql(query).types]
    assert types == ["BIGINT", "BIGINT", "DOUBLE", "DECIMAL(14,2)", "VARCHAR", "INTEGER"]


def test_the_arrow_readers_cast_each_file(tmp_path: Path) -> None:
    conn = _make(str(tmp_path / "lake"))
    _promote(conn)
    lake = conn.lakehouse
    table = lake.begin(read_only=True).load_table("ns", "t")
    meta = managed.metadata(lake.storage, table)
    schema = managed.schema(table)
    by = table.partition_columns
    for read in (
        tables.read_table(lake.storage, meta, schema, by),
        tables.arrow_dataset(lake.storage, meta, schema, by).to_table(),
    ):
        assert read.schema == schema
        assert sorted(read.column("a").to_pylist()) == [1, 5_000_000_000]
        assert sorted(read.column("s").to_pylist()) == ["abc", "abcdefghijkl"]


def test_an_index_on_a_promoted_column_finds_old_and_new_values(tmp_path: Path) -> None:
    conn = _make(str(tmp_path / "lake"))
    conn.execute("CREATE INDEX t_a ON ns.t (a)")
    _promote(conn)
    cur = conn.cursor()
    assert cur.execute("SELECT s FROM ns.t WHERE a = 1").fetchall() == [("abc",)]
    assert cur.execute("SELECT s FROM ns.t WHERE a = 5000000000").fetchall() == [("abcdefghijkl",)]
    assert cur.execute("SELECT s FROM ns.t WHERE a = 5000000001").fetchall() == []


def test_kartothek_common_metadata_follows_the_new_types(tmp_path: Path) -> None:
    conn = _make(str(tmp_path / "lake"))
    _promote(conn)
    lake = conn.lakehouse
    table = lake.begin(read_only=True).load_table("ns", "t")
    uuid = managed.metadata(lake.storage, table).dataset_uuid
    common = pq.read_schema(tmp_path / "lake" / uuid / "table" / "_common_metadata")
    assert common.field("a").type == pa.int64()
    assert common.field("f").type == pa.float64()
    assert common.field("d").type == pa.decimal128(14, 2)


@pytest.mark.parametrize(
    ("alter", "old", "new"),
    [
        ("ALTER COLUMN a TYPE INT2", "INT4", "INT2"),
        ("ALTER COLUMN a TYPE FLOAT8", "INT4", "FLOAT8"),
        ("ALTER COLUMN f TYPE FLOAT4", "FLOAT4", "FLOAT4"),
        ("ALTER COLUMN d TYPE DECIMAL(10, 3)", "DECIMAL(5, 2)", "DECIMAL(10, 3)"),
        ("ALTER COLUMN d TYPE DECIMAL(4, 2)", "DECIMAL(5, 2)", "DECIMAL(4, 2)"),
        ("ALTER COLUMN s TYPE VARCHAR(2)", "VARCHAR(3)", "VARCHAR(2)"),
        ("ALTER COLUMN s TYPE INT8", "VARCHAR(3)", "INT8"),
        ("ALTER COLUMN c TYPE VARCHAR(9)", "CHAR(4)", "VARCHAR(9)"),
        ("ALTER COLUMN l TYPE LIST<INT8>", "LIST<INT4>", "LIST<INT8>"),
    ],
)
def test_other_changes_are_refused_naming_the_way_out(
    tmp_path: Path, alter: str, old: str, new: str
) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), create=True, autocommit=True)
    conn.execute("CREATE NAMESPACE ns")
    conn.execute(
        "CREATE TABLE ns.t (a INT4, f FLOAT4, d DECIMAL(5, 2), s VARCHAR(3), c CHAR(4),"
        " l LIST<INT4>)"
    )
    before = conn.lakehouse.latest_version()
    if old == new:  # the type it has: nothing to do, nothing committed
        conn.execute(f"ALTER TABLE ns.t {alter}")
        assert conn.lakehouse.latest_version() == before
        return
    with pytest.raises(errors.NotSupportedError) as caught:
        conn.execute(f"ALTER TABLE ns.t {alter}")
    message = str(caught.value)
    column = alter.split()[2]
    assert f"ALTER COLUMN {column}" in message and "ns.t" in message
    assert f"changing {old} to {new}".replace(" ", "") in message.replace(" ", "")
    assert "CREATE TABLE ... AS SELECT CAST(" in message
    assert conn.lakehouse.latest_version() == before


def test_unknown_column_and_syntax(tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), create=True, autocommit=True)
    conn.execute("CREATE NAMESPACE ns").execute("CREATE TABLE ns.t (a INT4)")
    with pytest.raises(errors.NoSuchObjectError, match=r"ns\.t\.z"):
        conn.execute("ALTER TABLE ns.t ALTER COLUMN z TYPE INT8")
    with pytest.raises(errors.ProgrammingError, match="TYPE after the column name"):
        conn.execute("ALTER TABLE ns.t ALTER COLUMN a INT8")


def test_a_concurrent_write_with_the_old_type_conflicts(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    _make(uri)
    writer = trinity_dbapi.connect(uri)
    writer.execute("INSERT INTO ns.t VALUES (3, 3, 3.0, 3.00, 'x', 7)")  # open transaction
    trinity_dbapi.connect(uri, autocommit=True).execute(ALTERS[0])
    with pytest.raises(errors.CommitConflictError, match="changed its columns"):
        writer.commit()
    check = trinity_dbapi.connect(uri, autocommit=True)
    assert check.execute("SELECT a FROM ns.t").fetchall() == [(1,)]
