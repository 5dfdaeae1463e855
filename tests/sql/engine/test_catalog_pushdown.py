"""Catalog statements at the tree's cost: WHERE pushdown into the catalog tables.

Storage reads are counted with the storage's operation counters (files
served by its cache of immutable files are not reads): a point statement
reads the tree path and one definition, SHOW TABLES reads keys only, and
every pushed-down query answers exactly what the full build answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from tests.sql.engine.reads import definitions_read, lake_with_damaged_root, roots_read
from trinity_dbapi.dbapi.connection import Connection
from trinity_dbapi.errors import CorruptFileError, NoSuchNamespaceError, NoSuchTableError
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.catalog_scope import EVERYTHING

NAMESPACES = ("n0", "n1", "n2")
PER_NAMESPACE = 100


def _table(i: int) -> TableDefinition:
    return TableDefinition(
        f"t{i:04d}",
        [
            Column(1, "id", DataType("int8"), nullable=False),
            Column(2, "name", DataType.varchar(20), comment=f"name {i}"),
        ],
        primary_key=[1],
        table_format="parquet",
        properties={"comment": f"table {i}"},
    )


@pytest.fixture(scope="module")
def lake_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """300 tables in 3 namespaces, plus a mixed-case table name and an empty namespace."""
    path = str(tmp_path_factory.mktemp("catalog") / "lake")
    lake = Lakehouse.create(path, name="big")
    with lake.begin() as txn:
        for ns in NAMESPACES:
            txn.create_namespace(ns, {"comment": f"namespace {ns}"})
        txn.create_namespace("empty")
    for ns in NAMESPACES:
        with lake.begin() as txn:
            for i in range(PER_NAMESPACE):
                txn.create_table(ns, _table(i))
    with lake.begin() as txn:
        txn.create_table("n1", _table(7).replace(name="MixedCase"))
    return path


@pytest.fixture
def con(lake_path: str) -> Iterator[Connection]:
    connection = trinity_dbapi.connect(lake_path, autocommit=True)
    yield connection
    connection.close()


def _reads(con: Connection, sql: str, params: Any = ()) -> tuple[int, list[tuple[Any, ...]]]:
    storage = con.lakehouse.storage
    before = storage.stats.snapshot()
    cur = con.cursor()
    cur.execute(sql, params)
    rows = cur.fetchall()
    return storage.stats.since(before).reads, rows


def test_describe_reads_the_tree_path_and_one_definition(con: Connection) -> None:
    depth = con.lakehouse.snapshot().depth()
    con.lakehouse.storage.clear_cache()
    reads, rows = _reads(con, "DESCRIBE TABLE n1.t0050")
    assert [r[0] for r in rows] == ["id", "name"]
    assert rows[0][1:] == ("int8", False, None, True, False)
    assert reads <= depth + 3


def test_show_tables_reads_no_definition(con: Connection) -> None:
    con.lakehouse.storage.clear_cache()
    reads, rows = _reads(con, "SHOW TABLES IN n2")
    assert [r[0] for r in rows] == [f"t{i:04d}" for i in range(PER_NAMESPACE)]
    assert reads <= con.lakehouse.snapshot().depth() + 4  # keys only, never 100 definitions
    reads, rows = _reads(con, "SHOW TABLES IN n1 LIKE 'Mixed%'")
    assert rows == [("MixedCase",)]
    con.lakehouse.storage.clear_cache()
    assert definitions_read(con, "SHOW TABLES IN n0") == []
    con.lakehouse.storage.clear_cache()
    one = definitions_read(
        con, "SELECT * FROM information_schema.columns WHERE table_name = 't0001'"
    )
    assert len(one) == 3  # one per namespace holding a t0001


def test_information_schema_columns_of_one_table_reads_one_definition(con: Connection) -> None:
    con.lakehouse.storage.clear_cache()
    reads, rows = _reads(
        con,
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = 'n0' AND table_name = 't0099' ORDER BY ordinal_position",
    )
    assert rows == [("id",), ("name",)]
    assert reads <= con.lakehouse.snapshot().depth() + 3


def test_describe_and_show_errors_are_unchanged(con: Connection) -> None:
    with pytest.raises(NoSuchTableError):
        con.cursor().execute("DESCRIBE TABLE n1.nothing")
    with pytest.raises(NoSuchNamespaceError):
        con.cursor().execute("SHOW TABLES IN nothing")
    with pytest.raises(NoSuchNamespaceError):
        con.cursor().execute("DESCRIBE NAMESPACE nothing")
    rows = con.cursor().execute("DESCRIBE NAMESPACE n1").fetchall()
    assert rows == [("n1", "namespace n1", [])]  # an empty map


WHERE_SHAPES = [
    "table_name = 't0005'",
    "table_name = 'T0005'",
    "table_name IN ('t0001', 't0002', 'nope', 'MixedCase')",
    "table_name IN ('t0001', NULL)",
    "table_name LIKE 't001%'",
    "table_name LIKE 'Mixed%'",
    "table_name LIKE '%05'",
    "table_name LIKE 't00_1%'",
    "table_name = 't0005' OR table_name = 't0006'",
    "NOT table_name = 't0005'",
    "{ns} = 'n1'",
    "{ns} = 'N1'",
    "{ns} IN ('n0', 'n2', 'nothing', 'system')",
    "{ns} = 'n1' AND table_name = 't0003'",
    "{ns} = 'n1' AND table_name LIKE 't002%' AND table_name LIKE 't0021%'",
    "{ns} = 'n1' AND table_name = 't0003' AND table_name = 't0004'",
    "\"TABLE_NAME\" = 't0007'",
    "{ns} = 'system'",
    "{ns} = 'bad name!' AND table_name = 'x'",
    "table_name = 1",
    "lower(table_name) = 't0005'",
]
CATALOG = [
    ("system.tables", "namespace_name"),
    ("system.columns", "namespace_name"),
    ("system.namespaces", "namespace_name"),
    ("information_schema.tables", "table_schema"),
    ("information_schema.columns", "table_schema"),
    ("information_schema.schemata", "schema_name"),
]


@pytest.mark.parametrize(("table", "ns"), CATALOG)
@pytest.mark.parametrize("where", WHERE_SHAPES)
def test_pushdown_answers_what_the_full_build_answers(
    con: Connection, monkeypatch: pytest.MonkeyPatch, table: str, ns: str, where: str
) -> None:
    condition = where.format(ns=ns)
    if "table_name" in condition.lower() and "tables" not in table and "columns" not in table:
        condition = condition.lower().replace("table_name", ns)
    for select in ("*", f"{ns}"):
        sql = f"SELECT {select} FROM {table} WHERE {condition}"
        try:
            pushed = sorted(map(repr, con.cursor().execute(sql).fetchall()))
        except trinity_dbapi.Error as exc:
            pushed = [type(exc).__name__]
        with monkeypatch.context() as m:
            m.setattr(
                "trinity_dbapi.sql.engine.catalog_pushdown.catalog_scope", lambda *a: EVERYTHING
            )
            try:
                full = sorted(map(repr, con.cursor().execute(sql).fetchall()))
            except trinity_dbapi.Error as exc:
                full = [type(exc).__name__]
        assert pushed == full, sql


def test_pushdown_with_parameters_and_joins(con: Connection) -> None:
    cur = con.cursor()
    rows = cur.execute(
        "SELECT t.table_name, count(*) FROM information_schema.tables t "
        "JOIN information_schema.columns c ON c.table_schema = t.table_schema "
        "AND c.table_name = t.table_name WHERE t.table_schema = ? AND t.table_name IN (?, ?) "
        "GROUP BY 1 ORDER BY 1",
        ["n2", "t0010", "t0011"],
    ).fetchall()
    assert rows == [("t0010", 2), ("t0011", 2)]
    comment = cur.execute(
        "SELECT TABLE_COMMENT FROM information_schema.tables WHERE table_name = 'MixedCase'"
    ).fetchall()
    assert comment == [("table 7",)]


@pytest.fixture(scope="module")
def versions_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Versions 0..30: each commit after the first creates one namespace."""
    path = str(tmp_path_factory.mktemp("versions") / "lake")
    lake = Lakehouse.create(path)
    for i in range(30):
        with lake.begin() as txn:
            txn.create_namespace(f"v{i:02d}")
    return path


def test_newest_versions_read_k_roots(versions_path: str) -> None:
    con = trinity_dbapi.connect(versions_path)
    try:
        con.lakehouse.storage.clear_cache()
        reads, rows = roots_read(
            con, "SELECT version FROM system.versions ORDER BY version DESC LIMIT 3"
        )
        assert rows == [(30,), (29,), (28,)]
        assert reads <= 3
        reads, rows = roots_read(
            con, "SELECT version FROM system.versions ORDER BY version DESC LIMIT ? OFFSET 1", [2]
        )
        assert rows == [(29,), (28,)]
        assert reads <= 3
    finally:
        con.close()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM system.versions ORDER BY version DESC LIMIT 3",
        "SELECT * FROM system.versions ORDER BY version DESC LIMIT 0",
        "SELECT * FROM system.versions ORDER BY version DESC LIMIT 50",
        "SELECT * FROM system.versions ORDER BY version DESC LIMIT 2 OFFSET 5",
        "SELECT * FROM system.versions FOR SYSTEM_VERSION AS OF 10 ORDER BY version DESC LIMIT 4",
        "SELECT * FROM system.versions v ORDER BY v.version DESC, created_at LIMIT 2",
        "SELECT * FROM system.versions ORDER BY version ASC LIMIT 3",
        "SELECT * FROM system.versions WHERE version % 2 = 0 ORDER BY version DESC LIMIT 3",
        "SELECT DISTINCT txn_id IS NULL FROM system.versions ORDER BY 1 DESC LIMIT 1",
        "SELECT count(*) FROM system.versions ORDER BY 1 DESC LIMIT 1",
        "SELECT version, row_number() OVER () FROM system.versions ORDER BY version DESC LIMIT 2",
    ],
)
def test_newest_versions_answer_what_the_full_build_answers(
    versions_path: str, monkeypatch: pytest.MonkeyPatch, sql: str
) -> None:
    con = trinity_dbapi.connect(versions_path)
    try:
        pushed = con.cursor().execute(sql).fetchall()
        monkeypatch.setattr(
            "trinity_dbapi.sql.engine.catalog_pushdown.catalog_scope", lambda *a: EVERYTHING
        )
        assert pushed == con.cursor().execute(sql).fetchall()
    finally:
        con.close()


def test_newest_versions_read_no_older_damaged_root(tmp_path: Path) -> None:
    """The k newest versions of a time-travel read: damaged roots outside them are not read."""
    path = tmp_path / "lake"
    lake = Lakehouse.create(str(path))
    for i in range(6):
        with lake.begin() as txn:
            txn.create_namespace(f"v{i}")
    (path / root_node_file_name(5)).write_bytes(b"damaged")
    (path / root_node_file_name(1)).write_bytes(b"damaged")
    # Open at the intact version 4: version 5 is not the latest intact root.
    con = trinity_dbapi.connect(str(path), version=4)
    try:
        rows = con.cursor().execute(
            "SELECT version FROM system.versions ORDER BY version DESC LIMIT 2"
        )
        assert rows.fetchall() == [(4,), (3,)]
    finally:
        con.close()


def test_newest_versions_raise_on_a_damaged_root_among_them(tmp_path: Path) -> None:
    con = trinity_dbapi.connect(lake_with_damaged_root(tmp_path / "lake"))
    try:
        newest = "SELECT version FROM system.versions ORDER BY version DESC LIMIT {}"
        assert con.cursor().execute(newest.format(2)).fetchall() == [(6,), (5,)]
        with pytest.raises(CorruptFileError, match=root_node_file_name(3)):
            con.cursor().execute(newest.format(5))
        with pytest.raises(CorruptFileError, match=root_node_file_name(3)):
            con.cursor().execute("SELECT version FROM system.versions")  # the full build
    finally:
        con.close()
