"""The ``system`` and ``information_schema`` catalog tables, built from a pinned view."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from trinity_dbapi.errors import NoSuchTableError
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.format.type_mapping import duckdb_type
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.catalog import (
    CATALOG_TABLES,
    RESERVED_NAMESPACES,
    catalog_schema,
    catalog_table,
    catalog_table_names,
    is_catalog_table,
)
from trinity_dbapi.lakehouse.transaction import Transaction

D = DataType

ORDERS = TableDefinition(
    "orders",
    [
        Column(1, "id", D("int8"), nullable=False, comment="order number"),
        Column(2, "customer", D.varchar(64)),
        Column(3, "amount", D.decimal(12, 2)),
        Column(4, "tags", D.list_of(Column(5, "tag", D.char(2)))),
        Column(
            6,
            "ship",
            D.struct_of(
                Column(7, "city", D.varchar(32)),
                Column(
                    8,
                    "geo",
                    D.map_of(Column(9, "k", D.varchar(8), False), Column(10, "v", D("float8"))),
                ),
            ),
        ),
        Column(11, "at", D.timestamptz(3), nullable=False),
    ],
    primary_key=[1],
    table_format="parquet",
    format_properties={"partitioned_by": "customer, at", "compression": "zstd"},
    properties={"comment": "All orders", "retention": "30d"},
)
RETURNS = TableDefinition(
    "returns",
    [Column(1, "order_id", D("int8"), nullable=False), Column(2, "why", D.binary(100))],
    table_type="EXTERNAL",
    table_format="csv",
)


def _view(lake: Lakehouse, version: int | None = None) -> Transaction:
    return Transaction(lake, lake.snapshot(version), read_only=True)


def _rows(
    lake: Lakehouse, namespace: str, name: str, version: int | None = None
) -> list[dict[str, Any]]:
    view = _view(lake, version)
    table = catalog_table(view, view.snapshot, namespace, name)
    assert table.schema == catalog_schema(namespace, name)
    return table.to_pylist()


@pytest.fixture
def lake(tmp_path: Path) -> Lakehouse:
    """Versions: 1 namespaces, 2 orders, 3 returns."""
    lake = Lakehouse.create(str(tmp_path / "lake"), name="shop")
    with lake.begin() as txn:
        txn.create_namespace("sales", {"comment": "Sales data", "owner": "ann"})
        txn.create_namespace("empty")
    with lake.begin() as txn:
        txn.create_table("sales", ORDERS)
    with lake.begin() as txn:
        txn.create_table("sales", RETURNS)
    return lake


@pytest.fixture
def empty(tmp_path: Path) -> Lakehouse:
    return Lakehouse.create(str(tmp_path / "empty"))


# --- registry --------------------------------------------------------------------


def test_registry() -> None:
    assert frozenset({"system", "information_schema"}) == RESERVED_NAMESPACES
    assert catalog_table_names("system") == [
        "columns",
        "data_files",
        "namespaces",
        "refs",
        "tables",
        "versions",
    ]
    assert catalog_table_names("information_schema") == ["columns", "schemata", "tables", "views"]
    assert catalog_table_names("sales") == []
    assert is_catalog_table("system", "tables")
    assert not is_catalog_table("system", "schemata")
    assert not is_catalog_table("SYSTEM", "tables")
    assert len(CATALOG_TABLES) == 10


def test_unknown_catalog_tables_raise(lake: Lakehouse) -> None:
    view = _view(lake)
    with pytest.raises(NoSuchTableError, match=r"'system\.nope'") as info:
        catalog_table(view, view.snapshot, "system", "nope")
    assert (info.value.namespace, info.value.table) == ("system", "nope")
    with pytest.raises(NoSuchTableError):
        catalog_schema("information_schema", "routines")


def test_partition_columns() -> None:
    assert ORDERS.partition_columns == ["customer", "at"]
    assert RETURNS.partition_columns == []


# --- system ------------------------------------------------------------------------


def test_system_namespaces(lake: Lakehouse) -> None:
    assert _rows(lake, "system", "namespaces") == [
        {"namespace_name": "empty", "comment": None, "properties": []},
        {"namespace_name": "sales", "comment": "Sales data", "properties": [("owner", "ann")]},
    ]


ORDERS_ROW: dict[str, Any] = {
    "namespace_name": "sales",
    "table_name": "orders",
    "table_type": "MANAGED",
    "table_format": "parquet",
    "comment": "All orders",
    "column_count": 6,
    "primary_key": ["id"],
    "partition_columns": ["customer", "at"],
    "properties": [("retention", "30d")],
    "format_properties": [("compression", "zstd"), ("partitioned_by", "customer, at")],
}
RETURNS_ROW: dict[str, Any] = {
    "namespace_name": "sales",
    "table_name": "returns",
    "table_type": "EXTERNAL",
    "table_format": "csv",
    "comment": None,
    "column_count": 2,
    "primary_key": [],
    "partition_columns": [],
    "properties": [],
    "format_properties": [],
}


def test_system_tables(lake: Lakehouse) -> None:
    assert _rows(lake, "system", "tables") == [ORDERS_ROW, RETURNS_ROW]


def _column(
    table: str, position: int, name: str, column_id: int, data_type: str, **kw: Any
) -> dict[str, Any]:
    return {
        "namespace_name": "sales",
        "table_name": table,
        "column_name": name,
        "ordinal_position": position,
        "column_id": column_id,
        "data_type": data_type,
        "is_nullable": kw.get("is_nullable", True),
        "comment": kw.get("comment"),
        "is_primary_key": kw.get("is_primary_key", False),
        "is_partition_key": kw.get("is_partition_key", False),
    }


ORDERS_COLUMNS = [
    _column(
        "orders", 1, "id", 1, "int8", is_nullable=False, comment="order number", is_primary_key=True
    ),
    _column("orders", 2, "customer", 2, "varchar(64)", is_partition_key=True),
    _column("orders", 3, "amount", 3, "decimal(12,2)"),
    _column("orders", 4, "tags", 4, "list<char(2)>"),
    _column("orders", 5, "ship", 6, "struct<city: varchar(32), geo: map<varchar(8), float8>>"),
    _column("orders", 6, "at", 11, "timestamptz(3)", is_nullable=False, is_partition_key=True),
]
RETURNS_COLUMNS = [
    _column("returns", 1, "order_id", 1, "int8", is_nullable=False),
    _column("returns", 2, "why", 2, "binary(100)"),
]


def test_system_columns(lake: Lakehouse) -> None:
    assert _rows(lake, "system", "columns") == ORDERS_COLUMNS + RETURNS_COLUMNS


def _key(lake: Lakehouse, namespace: str, table: str | None = None) -> str:
    limits = lake.definition.key_limits
    if table is None:
        return keys.namespace_key(namespace, limits)
    return keys.table_key(namespace, table, limits)


def test_system_versions(lake: Lakehouse) -> None:
    rows = _rows(lake, "system", "versions")
    history = lake.history()
    assert [row["version"] for row in rows] == [0, 1, 2, 3]
    assert [row["changed_objects"] for row in rows] == [
        [],
        ["namespace empty", "namespace sales"],
        ["table sales.orders"],
        ["table sales.returns"],
    ]
    assert [row["changed_keys"] for row in rows] == [
        [],
        sorted([_key(lake, "empty"), _key(lake, "sales")]),
        [_key(lake, "sales", "orders")],
        [_key(lake, "sales", "returns")],
    ]
    for row, info in zip(rows, history):
        assert row["created_at"] == datetime.fromtimestamp(
            info.created_at_millis / 1000, timezone.utc
        )
        assert row["txn_id"] == info.txn_id
        assert row["previous_root"] == info.previous_root
        assert row["rollback_from_root"] is None
    assert rows[0]["txn_id"] is None and rows[0]["previous_root"] is None
    assert [row["previous_root"] for row in rows[1:]] == [root_node_file_name(v) for v in range(3)]
    assert all(row["txn_id"] for row in rows[1:])


# --- information_schema ------------------------------------------------------------

SCHEMATA_NULLS = dict.fromkeys(
    (
        "schema_owner",
        "default_character_set_catalog",
        "default_character_set_schema",
        "default_character_set_name",
        "sql_path",
    )
)


def test_information_schema_schemata(lake: Lakehouse) -> None:
    assert _rows(lake, "information_schema", "schemata") == [
        {"catalog_name": "shop", "schema_name": name, **SCHEMATA_NULLS}
        for name in ("empty", "information_schema", "sales", "system")
    ]


def _info_table(
    schema: str, name: str, comment: str | None, *, catalog: bool = False
) -> dict[str, Any]:
    return {
        "table_catalog": "shop",
        "table_schema": schema,
        "table_name": name,
        "table_type": "VIEW" if catalog else "BASE TABLE",
        "self_referencing_column_name": None,
        "reference_generation": None,
        "user_defined_type_catalog": None,
        "user_defined_type_schema": None,
        "user_defined_type_name": None,
        "is_insertable_into": "NO" if catalog else "YES",
        "is_typed": "NO",
        "commit_action": None,
        "TABLE_COMMENT": comment,
    }


CATALOG_ROWS = [
    _info_table(ns, name, CATALOG_TABLES[ns, name].comment, catalog=True)
    for ns, name in sorted(CATALOG_TABLES)
]


def test_information_schema_tables(lake: Lakehouse) -> None:
    user = [_info_table("sales", "orders", "All orders"), _info_table("sales", "returns", None)]
    expected = sorted(CATALOG_ROWS + user, key=lambda row: (row["table_schema"], row["table_name"]))
    assert _rows(lake, "information_schema", "tables") == expected


def _info_column(
    table: str, position: int, name: str, data_type: str, udt: str, **kw: Any
) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(catalog_schema("information_schema", "columns").names)
    row.update(
        table_catalog="shop",
        table_schema="sales",
        table_name=table,
        column_name=name,
        ordinal_position=position,
        is_nullable="YES",
        data_type=data_type,
        udt_name=udt,
        is_self_referencing=False,
        is_identity=False,
        is_generated="NEVER",
        is_updatable=True,
    )
    row.update(kw)
    return row


USER_INFO_COLUMNS = [
    _info_column(
        "orders",
        1,
        "id",
        "BIGINT",
        "int8",
        is_nullable="NO",
        numeric_precision=64,
        numeric_precision_radix=2,
        numeric_scale=0,
        COLUMN_COMMENT="order number",
    ),
    _info_column(
        "orders",
        2,
        "customer",
        "VARCHAR",
        "varchar(64)",
        character_maximum_length=64,
        character_octet_length=256,
    ),
    _info_column(
        "orders",
        3,
        "amount",
        "DECIMAL(12,2)",
        "decimal(12,2)",
        numeric_precision=12,
        numeric_precision_radix=10,
        numeric_scale=2,
    ),
    _info_column("orders", 4, "tags", "VARCHAR[]", "list<char(2)>"),
    _info_column(
        "orders",
        5,
        "ship",
        'STRUCT("city" VARCHAR, "geo" MAP(VARCHAR, DOUBLE))',
        "struct<city: varchar(32), geo: map<varchar(8), float8>>",
    ),
    _info_column(
        "orders",
        6,
        "at",
        "TIMESTAMP WITH TIME ZONE",
        "timestamptz(3)",
        is_nullable="NO",
        datetime_precision=3,
    ),
    _info_column(
        "returns",
        1,
        "order_id",
        "BIGINT",
        "int8",
        is_nullable="NO",
        numeric_precision=64,
        numeric_precision_radix=2,
        numeric_scale=0,
    ),
    _info_column(
        "returns",
        2,
        "why",
        "BLOB",
        "binary(100)",
        character_maximum_length=100,
        character_octet_length=100,
    ),
]


def test_information_schema_columns_of_user_tables(lake: Lakehouse) -> None:
    rows = _rows(lake, "information_schema", "columns")
    assert [row for row in rows if row["table_schema"] == "sales"] == USER_INFO_COLUMNS


def _duckdb_types(schema: pa.Schema) -> list[str]:
    return [str(t) for t in duckdb.connect().from_arrow(schema.empty_table()).types]


def test_information_schema_columns_of_catalog_tables(lake: Lakehouse) -> None:
    rows = _rows(lake, "information_schema", "columns")
    catalog = [row for row in rows if row["table_schema"] in RESERVED_NAMESPACES]
    expected = [
        (ns, name, field.name, position, "YES" if field.nullable else "NO")
        for ns, name in sorted(CATALOG_TABLES)
        for position, field in enumerate(catalog_schema(ns, name), 1)
    ]
    got = [
        (
            r["table_schema"],
            r["table_name"],
            r["column_name"],
            r["ordinal_position"],
            r["is_nullable"],
        )
        for r in catalog
    ]
    assert got == expected
    # data_type is what DuckDB makes of the catalog table's own Arrow schema
    for ns, name in CATALOG_TABLES:
        mine = [
            r["data_type"] for r in catalog if (r["table_schema"], r["table_name"]) == (ns, name)
        ]
        assert [str(duckdb.sqltype(t)) for t in mine] == _duckdb_types(catalog_schema(ns, name))
    created_at = next(r for r in catalog if r["column_name"] == "created_at")
    assert (created_at["udt_name"], created_at["datetime_precision"]) == ("timestamptz(3)", 3)
    assert all(row["is_updatable"] is False for row in catalog)


@pytest.mark.parametrize("name", ["schemata", "tables", "columns"])
def test_information_schema_mirrors_duckdb_columns(name: str) -> None:
    con = duckdb.connect()
    duck = con.sql(f"DESCRIBE information_schema.{name}").fetchall()
    ours = catalog_schema("information_schema", name)
    assert [(row[0], row[1]) for row in duck] == list(zip(ours.names, _duckdb_types(ours)))


def test_numeric_facts_match_duckdb(lake: Lakehouse) -> None:
    types = [
        D("int2"),
        D("int4"),
        D("int8"),
        D("float4"),
        D("float8"),
        D.decimal(38, 5),
        D.decimal(4, 0),
    ]
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t (" + ", ".join(f"c{i} {duckdb_type(t)}" for i, t in enumerate(types)) + ")"
    )
    facts = "data_type, numeric_precision, numeric_precision_radix, numeric_scale"
    duck = con.sql(
        f"SELECT {facts} FROM information_schema.columns ORDER BY ordinal_position"
    ).fetchall()
    columns = [Column(i + 1, f"c{i}", t) for i, t in enumerate(types)]
    with lake.begin() as txn:
        txn.create_table("empty", TableDefinition("t", columns, table_format="parquet"))
    rows = [r for r in _rows(lake, "information_schema", "columns") if r["table_schema"] == "empty"]
    ours = [tuple(r[f] for f in facts.split(", ")) for r in rows]
    assert ours == duck


# --- empty lakehouse and time travel -------------------------------------------------


@pytest.mark.parametrize(("namespace", "name"), sorted(CATALOG_TABLES))
def test_empty_lakehouse(empty: Lakehouse, namespace: str, name: str) -> None:
    rows = _rows(empty, namespace, name)
    if namespace == "system":
        # Version 0 exists, and main is a ref.
        expected = 1 if name in ("versions", "refs") else 0
        assert len(rows) == expected
    elif name == "schemata":
        assert [r["schema_name"] for r in rows] == ["information_schema", "system"]
        assert {r["catalog_name"] for r in rows} == {"lakehouse"}
    elif name == "views":
        assert rows == []  # the catalog tables are not views with a stored query
    else:
        assert {r["table_schema"] for r in rows} == RESERVED_NAMESPACES


def test_empty_tables_keep_their_schema(empty: Lakehouse) -> None:
    view = _view(empty)
    for (namespace, name), table in CATALOG_TABLES.items():
        built = catalog_table(view, view.snapshot, namespace, name)
        assert built.schema == table.schema
        if name in ("namespaces", "tables", "columns") and namespace == "system":
            assert built.num_rows == 0


def test_time_travel_shows_the_older_catalog(lake: Lakehouse) -> None:
    assert _rows(lake, "system", "tables", version=2) == [ORDERS_ROW]
    assert _rows(lake, "system", "columns", version=2) == ORDERS_COLUMNS
    assert [r["version"] for r in _rows(lake, "system", "versions", version=2)] == [0, 1, 2]
    assert _rows(lake, "system", "tables", version=1) == []
    assert [r["namespace_name"] for r in _rows(lake, "system", "namespaces", version=1)] == [
        "empty",
        "sales",
    ]
    assert _rows(lake, "system", "namespaces", version=0) == []
    user = [
        r
        for r in _rows(lake, "information_schema", "tables", version=2)
        if r["table_schema"] == "sales"
    ]
    assert [r["table_name"] for r in user] == ["orders"]


def test_a_write_transaction_sees_its_own_changes(lake: Lakehouse) -> None:
    txn = lake.begin()
    txn.drop_table("sales", "returns")
    txn.create_namespace("staging", {"comment": "new"})
    tables = catalog_table(txn, txn.snapshot, "system", "tables").to_pylist()
    assert [r["table_name"] for r in tables] == ["orders"]
    namespaces = catalog_table(txn, txn.snapshot, "system", "namespaces").to_pylist()
    assert namespaces[-1] == {"namespace_name": "staging", "comment": "new", "properties": []}
    txn.abort()


# --- DuckDB over the catalog -------------------------------------------------------


@pytest.fixture
def con(lake: Lakehouse) -> Iterator[duckdb.DuckDBPyConnection]:
    view = _view(lake)
    con = duckdb.connect()
    for namespace, name in CATALOG_TABLES:
        con.register(f"{namespace}_{name}", catalog_table(view, view.snapshot, namespace, name))
    yield con
    con.close()


def test_duckdb_join_filter_aggregate(con: duckdb.DuckDBPyConnection) -> None:
    rows = con.sql(
        """
        SELECT t.table_name, t.table_type, count(*) AS n,
               count(*) FILTER (WHERE c.is_partition_key) AS parts,
               string_agg(c.column_name, ',' ORDER BY c.ordinal_position)
                   FILTER (WHERE NOT c.is_nullable) AS required
        FROM system_tables t
        JOIN system_columns c USING (namespace_name, table_name)
        WHERE t.namespace_name = 'sales'
        GROUP BY ALL ORDER BY n DESC
        """
    ).fetchall()
    assert rows == [("orders", "MANAGED", 6, 2, "id,at"), ("returns", "EXTERNAL", 2, 0, "order_id")]


def test_duckdb_over_information_schema(con: duckdb.DuckDBPyConnection) -> None:
    rows = con.sql(
        """
        SELECT s.schema_name, count(t.table_name) AS tables,
               count(t.table_name) FILTER (WHERE t.table_type = 'BASE TABLE') AS base
        FROM information_schema_schemata s
        LEFT JOIN information_schema_tables t ON t.table_schema = s.schema_name
        GROUP BY s.schema_name ORDER BY s.schema_name
        """
    ).fetchall()
    assert rows == [
        ("empty", 0, 0),
        ("information_schema", 4, 0),
        ("sales", 2, 2),
        ("system", 6, 0),
    ]
    decimals = con.sql(
        "SELECT table_name, column_name, numeric_precision, numeric_scale "
        "FROM information_schema_columns WHERE data_type LIKE 'DECIMAL%'"
    ).fetchall()
    assert decimals == [("orders", "amount", 12, 2)]


def test_duckdb_over_versions_and_properties(con: duckdb.DuckDBPyConnection) -> None:
    changed = con.sql(
        "SELECT version, unnest(changed_objects) AS object FROM system_versions ORDER BY version, object"
    ).fetchall()
    assert changed == [
        (1, "namespace empty"),
        (1, "namespace sales"),
        (2, "table sales.orders"),
        (3, "table sales.returns"),
    ]
    assert con.sql(
        "SELECT properties['owner'], comment FROM system_namespaces WHERE namespace_name = 'sales'"
    ).fetchall() == [("ann", "Sales data")]
    newest = con.sql(
        "SELECT max(created_at) = max(created_at) FILTER (WHERE version = 3) FROM system_versions"
    )
    assert newest.fetchall() == [(True,)]
