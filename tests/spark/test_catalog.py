"""Catalog tables through the data source, and ``register_views`` for Spark SQL."""

from __future__ import annotations

import decimal
from typing import Any

import pytest

pytest.importorskip("pyspark")


from tests.spark.helpers import Lake, spark_rows
from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.spark import register_views

#: The view names register_views gives the catalog tables.
CATALOG_VIEWS = {
    "information_schema_columns": "information_schema.columns",
    "information_schema_schemata": "information_schema.schemata",
    "information_schema_tables": "information_schema.tables",
    "information_schema_views": "information_schema.views",
    "system_data_files": "system.data_files",
    "system_columns": "system.columns",
    "system_namespaces": "system.namespaces",
    "system_refs": "system.refs",
    "system_tables": "system.tables",
    "system_versions": "system.versions",
}


@pytest.fixture
def sales(lake: Lake) -> Lake:
    """Two namespaces, three tables (one partitioned, one with a key), a few rows.

    Versions: 1 namespace s, 2 s.orders, 3 s.customers, 4 namespace ops,
    5 ops.events, 6 rows of s.orders, 7 rows of s.customers.
    """
    lake.execute(
        "CREATE TABLE s.orders (id INT8 NOT NULL, day DATE, amount DECIMAL(10, 2), "
        "PRIMARY KEY (id)) PARTITIONED BY (day) COMMENT 'the orders'"
    )
    lake.execute("CREATE TABLE s.customers (id INT8, name VARCHAR(20), tags LIST<VARCHAR>)")
    lake.execute("CREATE NAMESPACE ops COMMENT 'operations'")
    lake.execute("CREATE TABLE ops.events (at TIMESTAMPTZ, kind VARCHAR)")
    lake.execute(
        "INSERT INTO s.orders VALUES (1, DATE '2024-01-01', 9.99), (2, DATE '2024-01-01', 5)"
    )
    lake.execute("INSERT INTO s.customers VALUES (1, 'ann', ['a', 'b'])")
    return lake


def _dbapi_rows(
    lake: Lake, table: str, order_by: tuple[str, ...], maps: tuple[int, ...]
) -> list[Any]:
    rows = lake.rows(f"SELECT * FROM {table} ORDER BY {', '.join(order_by)}")
    return [
        tuple(
            (None if value is None else dict(value)) if index in maps else value
            for index, value in enumerate(row)
        )
        for row in rows
    ]


@pytest.mark.parametrize(
    ("table", "order_by", "maps"),
    [
        ("system.tables", ("namespace_name", "table_name"), (8, 9)),
        ("system.columns", ("namespace_name", "table_name", "ordinal_position"), ()),
        ("system.versions", ("version",), ()),
        ("system.namespaces", ("namespace_name",), (2,)),
        ("information_schema.tables", ("table_schema", "table_name"), ()),
    ],
)
def test_catalog_tables_have_the_dbapi_rows(
    sales: Lake, table: str, order_by: tuple[str, ...], maps: tuple[int, ...]
) -> None:
    frame = sales.read(table)
    assert frame.columns == [
        d[0] for d in sales.conn.cursor().execute(f"SELECT * FROM {table}").description
    ]
    expected = _dbapi_rows(sales, table, order_by, maps)
    assert spark_rows(frame, *order_by) == expected
    assert len(expected) >= 2


def test_catalog_tables_content(sales: Lake) -> None:
    tables = sales.read("system.tables").orderBy("namespace_name", "table_name")
    assert [
        (
            r.namespace_name,
            r.table_name,
            r.comment,
            r.column_count,
            r.primary_key,
            r.partition_columns,
        )
        for r in tables.collect()
    ] == [
        ("ops", "events", None, 2, [], []),
        ("s", "customers", None, 3, [], []),
        ("s", "orders", "the orders", 3, ["id"], ["day"]),
    ]
    columns = (
        sales.read("system.columns").where("table_name = 'orders'").orderBy("ordinal_position")
    )
    assert [(r.column_name, r.data_type, r.is_nullable) for r in columns.collect()] == [
        ("id", "int8", False),
        ("day", "date", True),
        ("amount", "decimal(10,2)", True),
    ]
    versions = sales.read("system.versions").orderBy("version").collect()
    assert [r.version for r in versions] == list(range(sales.version() + 1))
    assert versions[-1].changed_objects == ["table s.customers"]


def test_catalog_tables_travel_in_time(sales: Lake) -> None:
    # Version 2 holds s.orders only (1: namespace s, 2: s.orders).
    old = sales.read("system.tables", {"versionAsOf": 2})
    assert [(r.namespace_name, r.table_name) for r in old.collect()] == [("s", "orders")]
    assert sales.read("system.versions", {"versionAsOf": 2}).count() == 3


def test_register_views_registers_every_table_and_catalog_table(sales: Lake) -> None:
    views = register_views(sales.spark, sales.uri)
    assert views == {
        "ops_events": "ops.events",
        "s_customers": "s.customers",
        "s_orders": "s.orders",
        **CATALOG_VIEWS,
    }
    spark = sales.spark
    result = spark.sql(
        "SELECT o.id, o.amount, c.name FROM s_orders o LEFT JOIN s_customers c ON o.id = c.id "
        "ORDER BY o.id"
    ).collect()
    assert [tuple(r) for r in result] == [
        (1, decimal.Decimal("9.99"), "ann"),
        (2, decimal.Decimal("5.00"), None),
    ]
    tables = spark.sql("SELECT table_name FROM system_tables ORDER BY table_name").collect()
    assert [r.table_name for r in tables] == ["customers", "events", "orders"]
    assert register_views(sales.spark, sales.uri, catalog=False) == {
        "ops_events": "ops.events",
        "s_customers": "s.customers",
        "s_orders": "s.orders",
    }


def test_views_are_frozen_until_registered_again(sales: Lake) -> None:
    spark = sales.spark
    register_views(spark, sales.uri)
    pinned = sales.version()
    sales.execute("INSERT INTO s.orders VALUES (3, DATE '2024-01-02', 1)")
    sales.execute("CREATE TABLE s.later (v INT4)")
    assert spark.sql("SELECT count(*) FROM s_orders").collect() == [(2,)]
    assert spark.sql("SELECT max(version) FROM system_versions").collect() == [(pinned,)]
    assert not spark.catalog.tableExists("s_later")
    register_views(spark, sales.uri)
    assert spark.sql("SELECT count(*) FROM s_orders").collect() == [(3,)]
    assert spark.sql("SELECT max(version) FROM system_versions").collect() == [(pinned + 2,)]
    assert spark.catalog.tableExists("s_later")


def test_register_views_at_a_version(sales: Lake) -> None:
    assert sales.version() == 7
    views = register_views(sales.spark, sales.uri, version=3, catalog=False)
    assert views == {"s_customers": "s.customers", "s_orders": "s.orders"}
    register_views(sales.spark, sales.uri, version=6)
    result = sales.spark.sql("SELECT id FROM s_orders ORDER BY id").collect()
    assert [r.id for r in result] == [1, 2]
    assert sales.spark.sql("SELECT max(version) FROM system_versions").collect() == [(6,)]
    tables = sales.spark.sql("SELECT count(*) FROM system_tables").collect()
    assert tables == [(3,)]


def test_register_views_refuses_two_tables_with_one_view_name(lake: Lake) -> None:
    lake.execute("CREATE NAMESPACE a_b")
    lake.execute("CREATE TABLE a_b.c (v INT4)")
    lake.execute("CREATE NAMESPACE a")
    lake.execute("CREATE TABLE a.b_c (v INT4)")
    with pytest.raises(
        ProgrammingError, match=r"tables a\.b_c and a_b\.c would both be the view 'a_b_c'"
    ):
        register_views(lake.spark, lake.uri, catalog=False)


def _corrupt_definition(lake: Lake, namespace: str, table: str) -> None:
    """Overwrite the table's definition file: any read of it fails."""
    from trinity_dbapi.format.keys import table_key

    txn = lake.conn.lakehouse.begin(read_only=True)
    path = txn.get(table_key(namespace, table, txn.snapshot.definition.key_limits))
    assert lake.root is not None and path is not None
    (lake.root / path).write_bytes(b"not a definition")


def test_pushed_name_filters_build_only_the_matching_rows(sales: Lake) -> None:
    # ops.events cannot be read: a catalog read that reaches it fails, so
    # these succeed only because the pushed filters kept the build away.
    _corrupt_definition(sales, "ops", "events")
    columns = sales.read("information_schema.columns").where(
        "table_schema = 's' AND table_name = 'orders'"
    )
    assert [
        (r.column_name, r.data_type) for r in columns.orderBy("ordinal_position").collect()
    ] == [
        ("id", "BIGINT"),
        ("day", "DATE"),
        ("amount", "DECIMAL(10,2)"),
    ]
    prefixed = sales.read("system.tables").where("table_name LIKE 'cust%' AND column_count > 1")
    assert [(r.namespace_name, r.table_name) for r in prefixed.collect()] == [("s", "customers")]
    listed = sales.read("system.columns").where("namespace_name IN ('s', 'nope')")
    assert listed.select("table_name").distinct().count() == 2
    with pytest.raises(
        Exception, match=r"CorruptFileError: corrupt TrinityLake file .*-events-ops-"
    ):
        sales.read("system.columns").collect()  # no filter: every definition


def test_register_views_of_chosen_namespaces(sales: Lake) -> None:
    from trinity_dbapi.errors import NoSuchNamespaceError

    _corrupt_definition(sales, "ops", "events")  # never read below
    spark = sales.spark
    views = register_views(spark, sales.uri, namespaces=["s"])
    assert views == {"s_customers": "s.customers", "s_orders": "s.orders", **CATALOG_VIEWS}
    tables = spark.sql("SELECT namespace_name, table_name FROM system_tables ORDER BY 2")
    assert [tuple(r) for r in tables.collect()] == [("s", "customers"), ("s", "orders")]
    schemata = spark.sql("SELECT schema_name FROM information_schema_schemata ORDER BY 1")
    assert [r.schema_name for r in schemata.collect()] == ["information_schema", "s", "system"]
    assert spark.sql("SELECT count(*) FROM system_versions").collect() == [(sales.version() + 1,)]
    with pytest.raises(NoSuchNamespaceError, match="'nope'"):
        register_views(spark, sales.uri, namespaces=["s", "nope"], catalog=False)
