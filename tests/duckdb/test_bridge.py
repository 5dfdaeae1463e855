"""The DuckDB bridge (trinity_dbapi.duckdb): a lakehouse as views in a user's DuckDB."""

from __future__ import annotations

import datetime
import decimal
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.duckdb import Attached, attach
from trinity_dbapi.tables import datasets, managed

DOCS = Path(__file__).resolve().parents[2] / "docs"

D1, D2 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)

#: The rows of shop.orders, in id order, as both DuckDB and the DB-API return them.
ORDERS = [
    (1, D1, "a/b", decimal.Decimal("1.50"), ["x", "y"], {"a": 1, "b": "q"}, 10),
    (2, D2, None, decimal.Decimal("2.25"), None, None, 20),
    (3, D2, "ü %20=x", decimal.Decimal("3.00"), [], {"a": 2, "b": None}, 10),
    (4, D1, "__HIVE_DEFAULT_PARTITION__", decimal.Decimal("-4.00"), ["z"], None, None),
]


def build(uri: str, **options: Any) -> Any:
    """A lakehouse made through the DB-API: two joinable tables, an empty one, an empty namespace."""
    conn = trinity_dbapi.connect(uri, autocommit=True, **options)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE shop COMMENT 'Web shop'")
    cur.execute("CREATE NAMESPACE ops")
    cur.execute(
        "CREATE TABLE shop.orders (id INT8 NOT NULL, day DATE, region VARCHAR(40),"
        " amount DECIMAL(12, 2), tags LIST<VARCHAR>, info STRUCT<a: INT4, b: VARCHAR>,"
        " customer INT4, PRIMARY KEY (id)) PARTITIONED BY (day, region) COMMENT 'Orders'"
    )
    cur.execute(
        "CREATE TABLE shop.customers (id INT4 NOT NULL, name VARCHAR, since TIMESTAMP(3),"
        " props MAP<VARCHAR, INT8>)"
    )
    cur.execute("CREATE TABLE shop.empty (id INT8, at TIMESTAMPTZ, t TIMETZ) PARTITIONED BY (id)")
    cur.execute(
        "INSERT INTO shop.orders VALUES (1, DATE '2024-01-01', 'a/b', 1.50, ['x', 'y'],"
        " {'a': 1, 'b': 'q'}, 10), (2, DATE '2024-01-02', NULL, 2.25, NULL, NULL, 20)"
    )
    cur.execute(
        "INSERT INTO shop.orders VALUES (3, DATE '2024-01-02', 'ü %20=x', 3.00, [],"
        " {'a': 2, 'b': NULL}, 10), (4, ?, '__HIVE_DEFAULT_PARTITION__', -4.00, ['z'], NULL, NULL)",
        [D1],
    )
    cur.execute(
        "INSERT INTO shop.customers VALUES (10, 'ann', TIMESTAMP '2020-01-01 10:00:00.123',"
        " MAP {'k': 1}), (20, 'bob', NULL, NULL)"
    )
    return conn


@pytest.fixture
def lake(tmp_path: Path) -> Iterator[Any]:
    conn = build(str(tmp_path / "lake"))
    yield conn
    conn.close()


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    yield connection
    connection.close()


def uri_of(conn: Any) -> str:
    return str(conn.lakehouse.storage.root_uri)


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    return con.sql(sql).fetchall()


def schemas(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {name for (name,) in rows(con, "SELECT schema_name FROM duckdb_schemas()")}


# -- views ------------------------------------------------------------------------------


def test_views_return_exactly_the_rows(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attached = attach(con, uri_of(lake))
    assert rows(con, "SELECT * FROM shop.orders ORDER BY id") == ORDERS
    assert rows(con, "SELECT count(*) FROM shop.empty") == [(0,)]
    assert rows(con, "SELECT name, props FROM shop.customers ORDER BY id") == [
        ("ann", {"k": 1}),
        ("bob", None),
    ]
    assert {"shop", "ops", "trinity_system", "trinity_information_schema"} <= schemas(con)
    assert attached.schemas == {
        "ops": "ops",
        "shop": "shop",
        "system": "trinity_system",
        "information_schema": "trinity_information_schema",
    }
    # The same rows as the DB-API driver returns for the same query.
    query = "SELECT * FROM shop.orders ORDER BY id"
    assert lake.cursor().execute(query).fetchall() == rows(con, query)


def test_timestamptz_values_reach_python_as_the_driver_gives_them(
    lake: Any, con: duckdb.DuckDBPyConnection
) -> None:
    # DuckDB makes pytz-aware datetimes of TIMESTAMPTZ values and does not
    # install pytz: the duckdb extra does (setup.cfg).
    lake.execute(
        "INSERT INTO shop.empty VALUES (1, TIMESTAMPTZ '2025-03-04 05:06:07.5+02:00', NULL)"
    )
    attach(con, uri_of(lake))
    (at,) = rows(con, 'SELECT "at" FROM shop.empty')[0]
    (ours,) = lake.execute('SELECT "at" FROM shop.empty').fetchone()
    assert (
        at == ours == datetime.datetime(2025, 3, 4, 3, 6, 7, 500000, tzinfo=datetime.timezone.utc)
    )
    assert at.utcoffset() == datetime.timedelta(0)


def test_column_names_and_types_are_the_tables(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attach(con, uri_of(lake))
    described = [(name, type_) for name, type_, *_ in rows(con, "DESCRIBE shop.orders")]
    assert described == [
        ("id", "BIGINT"),
        ("day", "DATE"),
        ("region", "VARCHAR"),
        ("amount", "DECIMAL(12,2)"),
        ("tags", "VARCHAR[]"),
        ("info", "STRUCT(a INTEGER, b VARCHAR)"),
        ("customer", "INTEGER"),
    ]
    described = [(name, type_) for name, type_, *_ in rows(con, "DESCRIBE shop.empty")]
    assert described == [
        ("id", "BIGINT"),
        ("at", "TIMESTAMP WITH TIME ZONE"),
        ("t", "TIME WITH TIME ZONE"),
    ]
    # Every view's columns are what trinity_information_schema.columns says.
    declared = rows(
        con,
        "SELECT table_name, column_name, data_type FROM trinity_information_schema.columns"
        " WHERE table_schema = 'shop' ORDER BY table_name, ordinal_position",
    )
    shown = rows(
        con,
        "SELECT table_name, column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = 'shop' ORDER BY table_name, ordinal_position",
    )
    assert [(t, c, d.replace('"', "")) for t, c, d in declared] == shown


def test_joins_filters_and_aggregates(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attach(con, uri_of(lake))
    assert rows(
        con,
        "SELECT c.name, count(*), sum(o.amount) FROM shop.orders o JOIN shop.customers c"
        " ON o.customer = c.id GROUP BY c.name ORDER BY c.name",
    ) == [("ann", 2, decimal.Decimal("4.50")), ("bob", 1, decimal.Decimal("2.25"))]
    assert rows(con, "SELECT id FROM shop.orders WHERE day = DATE '2024-01-02' ORDER BY id") == [
        (2,),
        (3,),
    ]
    assert rows(con, "SELECT id FROM shop.orders WHERE region IS NULL") == [(2,)]
    assert rows(con, "SELECT id FROM shop.orders WHERE region = 'a/b'") == [(1,)]
    assert rows(con, "SELECT id FROM shop.orders WHERE region = '__HIVE_DEFAULT_PARTITION__'") == [
        (4,)
    ]
    assert rows(con, "SELECT day, count(*) FROM shop.orders GROUP BY day ORDER BY day") == [
        (D1, 2),
        (D2, 2),
    ]
    # Views work on the connection's cursors too (tools use them).
    assert con.cursor().sql("SELECT count(*) FROM shop.orders").fetchall() == [(4,)]


def test_partition_filters_skip_the_other_files(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attach(con, uri_of(lake))
    definition = lake.lakehouse.begin().load_table("shop", "orders")
    files = managed.metadata(lake.lakehouse.storage, definition).files()
    storage_root = Path(lake.lakehouse.storage.root_dir)
    for label, path in files.items():
        if label.startswith("day=2024-01-01/"):
            (storage_root / path).write_bytes(b"not parquet")  # the queries never open it
    assert rows(con, "SELECT sum(id) FROM shop.orders WHERE day = DATE '2024-01-02'") == [(5,)]
    assert rows(con, "SELECT count(*) FROM shop.orders WHERE day > DATE '2024-01-01'") == [(2,)]
    with pytest.raises(duckdb.Error):
        rows(con, "SELECT count(*) FROM shop.orders")


def append(conn: Any, namespace: str, table: str, columns: dict[str, list[Any]]) -> None:
    """Commit rows with the dataset API of trinity_dbapi.tables (not through SQL)."""
    import pyarrow as pa

    from trinity_dbapi.tables.writer import write_data

    lakehouse = conn.lakehouse
    with lakehouse.begin() as txn:
        definition = txn.load_table(namespace, table)
        schema = managed.schema(definition)
        data = pa.table({name: pa.array(v, schema.field(name).type) for name, v in columns.items()})
        meta = managed.metadata(lakehouse.storage, definition)
        by = definition.partition_columns
        files = write_data(lakehouse.storage, meta, schema, by, data)
        datasets.change_files(
            txn, lakehouse.storage, namespace, table, added=files, columns=definition.columns
        )


def reference_rows(conn: Any, namespace: str, table: str) -> list[tuple[str, ...]]:
    """Every row as ``read_table`` (the reference reader) returns it, values as text."""
    from trinity_dbapi.tables.reader import read_table

    storage = conn.lakehouse.storage
    definition = conn.lakehouse.begin().load_table(namespace, table)
    meta = managed.metadata(storage, definition)
    by = definition.partition_columns
    data = read_table(storage, meta, managed.schema(definition), by).to_pylist()
    return sorted(tuple(str(value) for value in row.values()) for row in data)


def bridge_rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[str, ...]]:
    relation = con.sql(sql)
    to_arrow = getattr(relation, "to_arrow_table", None) or relation.arrow  # DuckDB < 2: arrow
    data = to_arrow().to_pylist()
    return sorted(tuple(str(value) for value in row.values()) for row in data)


UTC = datetime.timezone.utc


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("BOOLEAN", [True, False]),
        ("INT2", [-3, 32767]),
        ("FLOAT8", [0.1, 1e20, float("inf"), float("nan"), -0.0]),
        ("FLOAT4", [1.5, -2.25]),
        ("DECIMAL(10, 3)", [decimal.Decimal("-12.345"), decimal.Decimal("0.000")]),
        ("DATE", [datetime.date(1, 1, 1), datetime.date(9999, 12, 31)]),
        ("TIME(3)", [datetime.time(23, 59, 59, 123000), datetime.time(0, 0)]),
        ("TIMETZ", [datetime.time(10, 0, 0, 5)]),
        ("TIMESTAMP(0)", [datetime.datetime(2024, 1, 1, 12, 30, 1)]),
        ("TIMESTAMP", [datetime.datetime(2024, 1, 1, 12, 0, 0, 123456)]),
        ("TIMESTAMPTZ", [datetime.datetime(2024, 1, 1, 12, 0, 0, 5, tzinfo=UTC)]),
        ("VARCHAR", ["", "x=y/z %41 +", "%5F", "ü", "'quoted'", "__HIVE_DEFAULT_PARTITION__"]),
    ],
)
def test_partition_values_of_every_type(
    tmp_path: Path, con: duckdb.DuckDBPyConnection, column: str, values: list[Any]
) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    conn.execute("CREATE NAMESPACE ty")
    conn.execute(f"CREATE TABLE ty.t (id INT4, p {column}) PARTITIONED BY (p)")
    append(conn, "ty", "t", {"id": list(range(len(values) + 1)), "p": [*values, None]})
    attach(con, uri_of(conn))
    assert bridge_rows(con, "SELECT * FROM ty.t") == reference_rows(conn, "ty", "t")
    assert len(rows(con, "SELECT * FROM ty.t WHERE p IS NULL")) == 1
    for value in values:
        if not (isinstance(value, float) and math.isnan(value)):
            found = con.execute("SELECT id FROM ty.t WHERE p = ?", [value]).fetchall()
            assert found == [(values.index(value),)], value
    declared = conn.execute(
        "SELECT data_type FROM information_schema.columns WHERE column_name = 'p'"
    )
    assert rows(
        con, "SELECT data_type FROM information_schema.columns WHERE column_name = 'p'"
    ) == [(declared.fetchall()[0][0],)]
    conn.close()


def test_nanosecond_partition_values(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    conn.execute("CREATE NAMESPACE ty")
    conn.execute("CREATE TABLE ty.t (id INT4, ts TIMESTAMP(9), tm TIME(9)) PARTITIONED BY (ts, tm)")
    append(conn, "ty", "t", {"id": [1], "ts": [1_704_110_400_123_456_789], "tm": [1_000_000_001]})
    attach(con, uri_of(conn))
    assert rows(con, "SELECT CAST(ts AS VARCHAR), CAST(tm AS VARCHAR) FROM ty.t") == [
        ("2024-01-01 12:00:00.123456789", "00:00:01.000000001")
    ]
    described = [(name, type_) for name, type_, *_ in rows(con, "DESCRIBE ty.t")]
    assert described == [("id", "INTEGER"), ("ts", "TIMESTAMP_NS"), ("tm", "TIME_NS")]
    conn.close()


@pytest.mark.parametrize("where", ["local", "memory"])
def test_partition_columns_with_odd_names(
    tmp_path: Path, con: duckdb.DuckDBPyConnection, where: str
) -> None:
    # Names the layout URL-encodes, and a payload column named like the
    # scan's file path column in another case (DuckDB names fold case).
    uri = str(tmp_path / "lake") if where == "local" else f"memory://odd-{time.monotonic_ns()}/l"
    conn = trinity_dbapi.connect(uri, autocommit=True)
    conn.execute("CREATE NAMESPACE ty")
    conn.execute(
        'CREATE TABLE ty.t ("a b,c" VARCHAR, "x=%2F/é" INT4, "__TRINITY_FILE" INT4)'
        ' PARTITIONED BY ("a b,c", "x=%2F/é")'
    )
    conn.cursor().executemany(
        "INSERT INTO ty.t VALUES (?, ?, ?)", [("a/b", 1, 10), (None, None, 20), ("%41", 1, 30)]
    )
    attach(con, uri)
    assert bridge_rows(con, "SELECT * FROM ty.t") == reference_rows(conn, "ty", "t")
    assert rows(con, 'SELECT "__TRINITY_FILE" FROM ty.t WHERE "a b,c" = \'%41\'') == [(30,)]
    assert rows(con, 'SELECT sum("__TRINITY_FILE") FROM ty.t WHERE "x=%2F/é" = 1') == [(40,)]
    assert rows(con, 'SELECT "__TRINITY_FILE" FROM ty.t WHERE "a b,c" IS NULL') == [(20,)]
    conn.close()


def test_binary_partitions_use_the_arrow_dataset(
    tmp_path: Path, con: duckdb.DuckDBPyConnection
) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ty")
    cur.execute("CREATE TABLE ty.b (id INT4, key BINARY, t TIMETZ) PARTITIONED BY (key)")
    cur.execute(
        "INSERT INTO ty.b VALUES (1, ?, NULL), (2, ?, NULL), (3, NULL, NULL)",
        [b"\x00\xff/", b"plain"],
    )
    attached = attach(con, uri_of(conn))
    assert rows(con, "SELECT id, key FROM ty.b ORDER BY id") == [
        (1, b"\x00\xff/"),
        (2, b"plain"),
        (3, None),
    ]
    assert rows(con, "SELECT id FROM ty.b WHERE key = 'plain'::BLOB") == [(2,)]
    described = [(name, type_) for name, type_, *_ in rows(con, "DESCRIBE ty.b")]
    assert described == [("id", "INTEGER"), ("key", "BLOB"), ("t", "TIME WITH TIME ZONE")]
    (comment,) = rows(con, "SELECT comment FROM duckdb_views() WHERE view_name = 'b'")[0]
    assert comment.endswith("(Arrow dataset)")
    hidden = "SELECT count(*) FROM duckdb_views() WHERE temporary AND view_name LIKE '__trinity_%'"
    assert rows(con, hidden) == [(1,)]  # the registered dataset
    cur.execute("INSERT INTO ty.b VALUES (4, ?, NULL)", [b"plain"])
    attached.refresh()
    assert rows(con, "SELECT id FROM ty.b WHERE key = 'plain'::BLOB ORDER BY id") == [(2,), (4,)]
    assert rows(con, hidden) == [(1,)]  # the old one was unregistered
    attached.detach()
    assert rows(con, hidden) == [(0,)]
    conn.close()


def test_columns_are_matched_by_id(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    cur = lake.cursor()
    cur.execute("ALTER TABLE shop.customers ADD COLUMN vip BOOLEAN")  # in no file yet
    cur.execute("ALTER TABLE shop.customers DROP COLUMN name")
    cur.execute("ALTER TABLE shop.customers ADD COLUMN name VARCHAR")  # a new column ID
    cur.execute("INSERT INTO shop.customers (id, name, vip) VALUES (30, 'cy', true)")
    attach(con, uri_of(lake))
    assert rows(con, "SELECT id, vip, name FROM shop.customers ORDER BY id") == [
        (10, None, None),  # the dropped column's old values do not come back
        (20, None, None),
        (30, True, "cy"),
    ]
    definition = lake.lakehouse.begin().load_table("shop", "customers")
    reference = managed.metadata(lake.lakehouse.storage, definition)
    from trinity_dbapi.tables.reader import read_table

    table = read_table(
        lake.lakehouse.storage, reference, managed.schema(definition), [], columns=["id", "name"]
    )
    assert sorted(table.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 10, "name": None},
        {"id": 20, "name": None},
        {"id": 30, "name": "cy"},
    ]


def test_a_root_with_glob_characters_and_equal_signs(
    tmp_path: Path, con: duckdb.DuckDBPyConnection
) -> None:
    conn = build(str(tmp_path / "day=x [lake]*"))
    attached = attach(con, uri_of(conn))
    assert rows(con, "SELECT id, day, region FROM shop.orders ORDER BY id") == [
        row[:3] for row in ORDERS
    ]
    assert con.list_filesystems() == [attached._files.protocol]  # read through fsspec
    attached.detach()
    assert con.list_filesystems() == []
    conn.close()


# -- catalog tables ------------------------------------------------------------------------


def test_catalog_tables(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attached = attach(con, uri_of(lake))
    assert rows(
        con,
        "SELECT namespace_name, table_name, comment, primary_key, partition_columns"
        " FROM trinity_system.tables ORDER BY table_name",
    ) == [
        ("shop", "customers", None, [], []),
        ("shop", "empty", None, [], ["id"]),
        ("shop", "orders", "Orders", ["id"], ["day", "region"]),
    ]
    assert rows(
        con, "SELECT namespace_name, comment FROM trinity_system.namespaces ORDER BY 1"
    ) == [("ops", None), ("shop", "Web shop")]
    assert rows(con, "SELECT max(version), count(*) FROM trinity_system.versions") == [
        (attached.version, attached.version + 1)
    ]
    assert rows(
        con,
        "SELECT column_name, is_partition_key FROM trinity_system.columns"
        " WHERE table_name = 'orders' AND is_partition_key",
    ) == [("day", True), ("region", True)]
    # Joined with the views, as in the demo.
    assert rows(
        con,
        "SELECT t.table_name, count(c.column_name) FROM trinity_system.tables t"
        " JOIN trinity_system.columns c USING (namespace_name, table_name)"
        " GROUP BY 1 ORDER BY 1",
    ) == [("customers", 4), ("empty", 3), ("orders", 7)]
    assert ("shop",) in rows(con, "SELECT schema_name FROM trinity_information_schema.schemata")
    assert rows(
        con,
        "SELECT data_type, udt_name FROM trinity_information_schema.columns"
        " WHERE table_name = 'orders' AND column_name = 'region'",
    ) == [("VARCHAR", "varchar(40)")]


# -- versions ---------------------------------------------------------------------------------


def test_time_travel(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    latest = lake.lakehouse.latest_version()
    before_second_insert = latest - 2  # then came the 2nd orders insert, and the customers
    first = attach(con, uri_of(lake), version=before_second_insert, prefix="old_")
    assert first.version == before_second_insert
    assert rows(con, "SELECT id FROM old_shop.orders ORDER BY id") == [(1,), (2,)]
    assert rows(con, "SELECT max(version) FROM old_trinity_system.versions") == [
        (before_second_insert,)
    ]

    time.sleep(0.01)
    moment = datetime.datetime.now(datetime.timezone.utc)
    time.sleep(0.01)
    lake.cursor().execute("DROP TABLE shop.empty")
    at_time = attach(con, uri_of(lake), timestamp=moment, prefix="then_")
    assert at_time.version == latest
    assert rows(con, "SELECT count(*) FROM then_shop.empty") == [(0,)]

    lake.lakehouse.maintenance.export_snapshot("q1", version=before_second_insert)
    exported = attach(con, lake.lakehouse, export="q1", prefix="q1_")
    assert exported.version == before_second_insert
    assert rows(con, "SELECT count(*) FROM q1_shop.orders") == [(2,)]

    now = attach(con, uri_of(lake))
    assert now.version == lake.lakehouse.latest_version() > latest  # the drop, the export
    views = rows(con, "SELECT view_name FROM duckdb_views() WHERE schema_name = 'shop'")
    assert sorted(views) == [("customers",), ("orders",)]

    exported.refresh(version=before_second_insert + 1)
    assert rows(con, "SELECT count(*) FROM q1_shop.orders") == [(4,)]
    with pytest.raises(errors.NoSuchVersionError):
        now.refresh(version=latest + 100)
    with pytest.raises(errors.ProgrammingError, match="at most one"):
        attach(con, uri_of(lake), version=1, export="q1", prefix="x_")
    with pytest.raises(errors.NoSuchVersionError):
        attach(con, uri_of(lake), export="nope", prefix="x_")
    assert not any(name.startswith("x_") for name in schemas(con))


def test_views_are_frozen_until_refresh(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attached = attach(con, uri_of(lake))
    version = attached.version

    def oids() -> dict[str, int]:
        sql = "SELECT view_name, view_oid FROM duckdb_views() WHERE schema_name = 'shop'"
        return dict(rows(con, sql))

    before = oids()
    cur = lake.cursor()
    cur.execute("INSERT INTO shop.orders VALUES (5, DATE '2024-01-03', 'new', 5, NULL, NULL, 20)")
    cur.execute("CREATE TABLE shop.returns (order_id INT8)")
    cur.execute("INSERT INTO shop.returns VALUES (1)")
    cur.execute("DROP TABLE shop.empty")
    cur.execute("CREATE NAMESPACE audit")
    cur.execute("DROP NAMESPACE ops")
    # Nothing moved: the views list the old version's files.
    assert rows(con, "SELECT count(*) FROM shop.orders") == [(4,)]
    assert attached.version == version

    assert attached.refresh() is attached
    assert attached.version == version + 6
    assert rows(con, "SELECT count(*) FROM shop.orders") == [(5,)]
    assert rows(con, "SELECT * FROM shop.returns") == [(1,)]
    after = oids()
    assert set(after) == {"orders", "customers", "returns"}
    assert after["customers"] == before["customers"]  # unchanged: left alone
    assert after["orders"] != before["orders"]
    assert "audit" in schemas(con)
    assert "ops" not in schemas(con)
    assert rows(con, "SELECT count(*) FROM trinity_system.tables") == [(3,)]

    attached.refresh(version=version)
    assert rows(con, "SELECT count(*) FROM shop.orders") == [(4,)]
    assert "returns" not in oids()


def test_a_failed_refresh_changes_nothing(
    lake: Any, con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.tables import scan

    attached = attach(con, uri_of(lake))
    version = attached.version
    cur = lake.cursor()
    cur.execute("CREATE TABLE shop.returns (order_id INT8)")
    cur.execute("INSERT INTO shop.returns VALUES (1)")
    cur.execute("INSERT INTO shop.orders VALUES (5, DATE '2024-01-03', 'n', 5, NULL, NULL, 20)")
    original = scan.parquet_select

    def broken(columns: Any, partition_by: Any, files: list[str]) -> str:
        if columns[0].name == "order_id":
            return "SELECT * FROM no_such_function()"
        return original(columns, partition_by, files)

    monkeypatch.setattr(scan, "parquet_select", broken)
    with pytest.raises(errors.ProgrammingError, match="no_such_function"):
        attached.refresh()
    # DuckDB rolled back: the old views, the old version, nothing new.
    assert attached.version == version
    assert rows(con, "SELECT count(*) FROM shop.orders") == [(4,)]
    assert rows(con, "SELECT count(*) FROM duckdb_views() WHERE view_name = 'returns'") == [(0,)]
    monkeypatch.undo()
    attached.refresh()
    assert rows(con, "SELECT count(*) FROM shop.orders") == [(5,)]
    assert rows(con, "SELECT * FROM shop.returns") == [(1,)]
    attached.detach()
    assert rows(con, "SELECT count(*) FROM duckdb_views() WHERE NOT internal") == [(0,)]


def test_refresh_inside_the_users_transaction(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    con.execute("BEGIN TRANSACTION")
    attached = attach(con, uri_of(lake))
    con.execute("COMMIT")
    assert rows(con, "SELECT count(*) FROM shop.orders") == [(4,)]
    attached.detach()


# -- detach ---------------------------------------------------------------------------------


def test_detach_removes_everything(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE main.mine (x INT)")
    before = schemas(con)
    attached = attach(con, uri_of(lake), prefix="lake_")
    assert "lake_shop" in schemas(con)
    attached.detach()
    assert schemas(con) == before
    assert rows(con, "SELECT count(*) FROM duckdb_views() WHERE NOT internal") == [(0,)]
    assert rows(con, "SELECT count(*) FROM duckdb_tables()") == [(1,)]  # main.mine
    assert con.list_filesystems() == []
    attached.detach()  # twice is fine
    assert attached.detached
    with pytest.raises(errors.InterfaceError, match="detached"):
        attached.refresh()
    with pytest.raises(errors.InterfaceError):
        _ = attached.version
    # The same names can be attached again.
    with attach(con, uri_of(lake), prefix="lake_") as again:
        assert rows(con, "SELECT count(*) FROM lake_shop.orders") == [(4,)]
    assert again.detached
    assert schemas(con) == before


def test_detach_keeps_user_objects_and_pre_existing_schemas(
    lake: Any, con: duckdb.DuckDBPyConnection
) -> None:
    con.execute("CREATE SCHEMA ops")  # empty: used as it is, and kept
    attached = attach(con, uri_of(lake))
    con.execute("CREATE TABLE shop.notes (x INT)")  # the user's own table in a bridge schema
    attached.detach()
    assert {"ops", "shop"} <= schemas(con)
    assert rows(con, "SELECT table_name FROM duckdb_tables()") == [("notes",)]
    assert rows(con, "SELECT count(*) FROM duckdb_views() WHERE NOT internal") == [(0,)]


def test_detach_after_the_connection_closed(lake: Any) -> None:
    con = duckdb.connect()
    attached = attach(con, uri_of(lake))
    con.close()
    attached.detach()
    assert attached.detached


def test_stale_objects_in_a_database_file_are_taken_over(lake: Any, tmp_path: Path) -> None:
    database = str(tmp_path / "analytics.duckdb")
    code = (
        "import duckdb, trinity_dbapi.duckdb as bridge\n"
        f"con = duckdb.connect({database!r})\n"
        f"bridge.attach(con, {uri_of(lake)!r}, prefix='p_')\n"
        "con.close()\n"  # no detach: the process ends
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    con = duckdb.connect(database)
    try:
        assert "p_shop" in schemas(con)
        attached = attach(con, uri_of(lake), prefix="p_")
        assert rows(con, "SELECT count(*) FROM p_shop.orders") == [(4,)]
        attached.detach()
        # An empty schema carries no mark, so it is kept like any empty schema that existed.
        assert {name for name in schemas(con) if name.startswith("p_")} == {"p_ops"}
    finally:
        con.close()


# -- names and errors -------------------------------------------------------------------------


def test_a_schema_of_the_user_is_a_clash(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SCHEMA Shop")  # DuckDB names are case-insensitive
    con.execute("CREATE VIEW Shop.v AS SELECT 1 AS x")
    before = schemas(con)
    with pytest.raises(errors.ProgrammingError, match=r"'shop'.*prefix=") as info:
        attach(con, uri_of(lake))
    assert "v" in str(info.value)
    assert schemas(con) == before  # nothing was created
    assert con.list_filesystems() == []
    attached = attach(con, uri_of(lake), prefix="lake_")
    assert rows(con, "SELECT count(*) FROM lake_shop.orders") == [(4,)]
    assert rows(con, "SELECT x FROM shop.v") == [(1,)]
    # A second attachment of the same names clashes with the first.
    with pytest.raises(errors.ProgrammingError, match="prefix="):
        attach(con, uri_of(lake), prefix="lake_")
    attached.detach()


def test_a_namespace_named_like_a_duckdb_catalog(tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    conn.execute("CREATE NAMESPACE temp")
    con = duckdb.connect()
    with pytest.raises(errors.ProgrammingError, match=r"ambiguous.*prefix="):
        attach(con, uri_of(conn))
    attach(con, uri_of(conn), prefix="lake_")
    assert "lake_temp" in schemas(con)
    con.close()
    conn.close()


def test_lakehouse_errors_are_pep_249(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(errors.LakehouseNotFoundError) as info:
        attach(con, str(tmp_path / "nowhere"))
    assert isinstance(info.value, trinity_dbapi.OperationalError)
    assert not (tmp_path / "nowhere").exists()  # never created
    with pytest.raises(errors.ProgrammingError, match="DuckDBPyConnection"):
        attach("not a connection", str(tmp_path))  # type: ignore[arg-type]


def test_a_read_only_database_file(lake: Any, tmp_path: Path) -> None:
    database = str(tmp_path / "ro.duckdb")
    duckdb.connect(database).close()
    con = duckdb.connect(database, read_only=True)
    try:
        with pytest.raises(trinity_dbapi.DatabaseError, match="exposing the lakehouse"):
            attach(con, uri_of(lake))
    finally:
        con.close()


# -- storages ---------------------------------------------------------------------------------


def test_memory_storage_through_a_registered_filesystem(con: duckdb.DuckDBPyConnection) -> None:
    conn = build(f"memory://bridge-{os.getpid()}-{time.monotonic_ns()}/lake")
    attached = attach(con, conn.lakehouse)
    assert rows(con, "SELECT * FROM shop.orders ORDER BY id") == ORDERS
    assert con.list_filesystems() == [attached._files.protocol]
    assert con.cursor().sql("SELECT count(*) FROM shop.customers").fetchall() == [(2,)]
    attached.detach()
    assert con.list_filesystems() == []
    conn.close()


def test_object_stores_through_fsspec_without_extensions(cloud: tuple[str, dict[str, Any]]) -> None:
    """S3, GCS and Azure roots: read through the storage, no DuckDB extension, the driver's rows."""
    uri, options = cloud
    conn = build(uri, storage_options=options)
    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions = false")  # a download would fail the test
    attached = attach(con, uri, storage_options=options)
    driver = conn.cursor()
    assert rows(con, "SELECT * FROM shop.orders ORDER BY id") == ORDERS
    assert driver.execute("SELECT * FROM shop.orders ORDER BY id").fetchall() == ORDERS
    assert rows(con, "SELECT id FROM shop.orders WHERE region = 'a/b'") == [(1,)]
    joined = (
        "SELECT c.name, sum(o.amount) FROM shop.orders o JOIN shop.customers c"
        " ON o.customer = c.id GROUP BY 1 ORDER BY 1"
    )
    assert rows(con, joined) == [("ann", decimal.Decimal("4.50")), ("bob", decimal.Decimal("2.25"))]
    assert rows(con, joined) == driver.execute(joined).fetchall()
    customers = "SELECT id, name, since FROM shop.customers ORDER BY id"
    assert rows(con, customers) == driver.execute(customers).fetchall()
    assert rows(con, "SELECT count(*) FROM shop.empty") == [(0,)]
    loaded = rows(con, "SELECT extension_name FROM duckdb_extensions() WHERE loaded")
    assert not {("httpfs",), ("azure",)} & set(loaded)
    file_paths = rows(con, "SELECT sql FROM duckdb_views() WHERE view_name = 'orders'")[0][0]
    assert f"{attached._files.protocol}://" in file_paths
    assert f"{uri.split('://')[0]}://" not in file_paths

    conn.execute("INSERT INTO shop.orders VALUES (9, DATE '2024-01-09', 'r', 1, NULL, NULL, NULL)")
    attached.refresh()
    assert rows(con, "SELECT count(*) FROM shop.orders") == [(5,)]
    assert (
        rows(con, "SELECT * FROM shop.orders WHERE id = 9")
        == driver.execute("SELECT * FROM shop.orders WHERE id = 9").fetchall()
    )
    attached.detach()
    assert con.list_filesystems() == []
    con.close()
    conn.close()


# -- module and docs ------------------------------------------------------------------------


def test_import_trinity_dbapi_does_not_import_duckdb() -> None:
    code = "import sys, trinity_dbapi; print('duckdb' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_attached_repr(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attached = attach(con, uri_of(lake), prefix="r_")
    assert isinstance(attached, Attached)
    assert re.fullmatch(r"Attached\('file://.*/lake/', version=\d+, prefix='r_'\)", repr(attached))
    attached.detach()
    assert "detached" in repr(attached)


#: A python block, and the text block right after it: what the block prints.
_EXAMPLE = re.compile(r"```python\n(.*?)```(?:\n\n```text\n(.*?)```)?", re.DOTALL)


def test_docs_examples_run_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("LAKE_S3_BUCKET", "LAKE_GCS_BUCKET", "LAKE_AZURE_CONTAINER"):
        monkeypatch.delenv(variable, raising=False)  # they need a real bucket or container
    text = (DOCS / "duckdb.md").read_text()
    scope: dict[str, object] = {}
    checked = 0
    for match in _EXAMPLE.finditer(text):
        code, expected = match.groups()
        exec(code.replace("/tmp/duckdb-demo", str(tmp_path)), scope)  # noqa: S102
        printed = capsys.readouterr().out
        if expected is not None:
            assert printed == expected, f"the example starting {code.splitlines()[0]!r}"
            checked += 1
    assert checked == text.count("```text\n") >= 6
    scope["con"].close()  # type: ignore[attr-defined]
    scope["writer"].close()  # type: ignore[attr-defined]
