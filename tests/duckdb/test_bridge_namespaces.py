"""``attach(namespaces=..., catalog=...)``: one namespace attached reads that namespace only.

Reads are recorded per path on the attachment's own lakehouse handle (fresh
caches), so "reads no definition file of another namespace" is checked
file by file; the scoped catalog tables are compared with the rows of a
full attachment, restricted to the attached namespaces.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.duckdb import attach
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.format.keys import namespace_key, namespace_tables_prefix
from trinity_dbapi.lakehouse import Lakehouse

NAMESPACES = ("n0", "n1", "n2")
PER_NAMESPACE = 50
CATALOG = {"trinity_system", "trinity_information_schema"}


def _table(i: int) -> TableDefinition:
    return TableDefinition(
        f"t{i:02d}",
        [
            Column(1, "id", DataType("int8"), nullable=False),
            Column(2, "name", DataType.varchar(20), comment=f"name {i}"),
        ],
        table_format="parquet",  # no dataset: an empty view
    )


@pytest.fixture(scope="module")
def lake_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """3 namespaces x 50 tables, an empty namespace, and one table with rows in n0 and n1."""
    path = str(tmp_path_factory.mktemp("attach") / "lake")
    lake = Lakehouse.create(path, name="big")
    with lake.begin() as txn:
        for ns in NAMESPACES:
            txn.create_namespace(ns, {"comment": f"namespace {ns}"})
        txn.create_namespace("empty")
    for ns in NAMESPACES:
        with lake.begin() as txn:
            for i in range(PER_NAMESPACE):
                txn.create_table(ns, _table(i))
    with trinity_dbapi.connect(path, autocommit=True) as conn:
        for ns in ("n0", "n1"):
            conn.execute(f"CREATE TABLE {ns}.orders (id INT8, day DATE) PARTITIONED BY (day)")
            conn.execute(
                f"INSERT INTO {ns}.orders VALUES (1, DATE '2024-01-01'), (2, DATE '2024-01-02')"
            )
    return path


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    yield connection
    connection.close()


def _definition_paths(path: str) -> dict[str, set[str]]:
    """Namespace -> the definition files of its tables; ``"namespace <name>"`` -> its own."""
    lake = Lakehouse.open(path)
    txn = lake.begin(read_only=True)
    limits = txn.snapshot.definition.key_limits
    found = {
        ns: {p for _, p in txn.scan_prefix(namespace_tables_prefix(ns, limits))}
        for ns in txn.list_namespaces()
    }
    for ns in txn.list_namespaces():
        found[f"namespace {ns}"] = {str(txn.get(namespace_key(ns, limits)))}
    return found


def _recording(path: str) -> tuple[Lakehouse, Counter[str]]:
    """A fresh lakehouse handle whose storage reads are counted per path."""
    lake = Lakehouse.open(path)
    lake.storage.clear_cache()  # as a fresh process finds it
    seen: Counter[str] = Counter()
    original = lake.storage._read

    def counting(file: str) -> bytes:
        seen[file] += 1
        return original(file)

    lake.storage._read = counting  # type: ignore[method-assign]
    return lake, seen


def _schemas(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.sql("SELECT schema_name FROM duckdb_schemas() WHERE NOT internal").fetchall()
    return {name for (name,) in rows} - {"main"}


def _catalog(con: duckdb.DuckDBPyConnection, prefix: str = "") -> dict[str, list[Any]]:
    """Every catalog table's rows, sorted (``created_at`` left out: it needs pytz)."""
    tables = {
        "trinity_system": ("namespaces", "tables", "columns", "versions"),
        "trinity_information_schema": ("schemata", "tables", "columns"),
    }
    found = {}
    for schema, names in tables.items():
        for name in names:
            select = "* EXCLUDE (created_at)" if name == "versions" else "*"
            rows = con.sql(f"SELECT {select} FROM {prefix}{schema}.{name}").fetchall()
            found[f"{schema}.{name}"] = sorted(rows, key=repr)
    return found


def test_one_namespace_reads_only_its_definitions(
    lake_path: str, con: duckdb.DuckDBPyConnection
) -> None:
    paths = _definition_paths(lake_path)
    lake, seen = _recording(lake_path)
    attached = attach(con, lake, namespaces=["n1"])

    others = paths["n0"] | paths["n2"] | paths["namespace n0"] | paths["namespace n2"]
    assert not others & set(seen), "a definition of another namespace was read"
    assert paths["namespace n1"] <= set(seen)  # system.namespaces shows its comment
    assert paths["n1"] <= set(seen)  # 51 definitions, each read once
    assert all(seen[p] == 1 for p in paths["n1"])

    assert attached.namespaces == frozenset({"n1"})
    assert set(attached.schemas) == {"n1", "system", "information_schema"}
    assert _schemas(con) == {"n1"} | CATALOG
    assert con.sql("SELECT id, day::VARCHAR FROM n1.orders ORDER BY id").fetchall() == [
        (1, "2024-01-01"),
        (2, "2024-01-02"),
    ]
    views = con.sql("SELECT count(*) FROM duckdb_views() WHERE schema_name = 'n1'").fetchall()
    assert views == [(PER_NAMESPACE + 1,)]


def test_scoped_catalog_tables_are_the_full_ones_restricted(lake_path: str) -> None:
    """The oracle: a full attachment's catalog rows, keeping the attached namespaces only."""
    with duckdb.connect() as con:
        attach(con, lake_path, prefix="all_")
        attach(con, lake_path, namespaces=["n1", "empty"], prefix="one_")
        full, scoped = _catalog(con, "all_"), _catalog(con, "one_")
    keep = {"n1", "empty", "system", "information_schema"}
    for name, rows in full.items():
        if name == "trinity_system.versions":
            expected = rows  # not per namespace
        elif name == "trinity_information_schema.schemata":
            expected = [r for r in rows if r[1] in keep]
        else:  # the namespace (or schema) name is each row's first or second column
            column = 0 if name.startswith("trinity_system.") else 1
            expected = [r for r in rows if r[column] in keep]
        assert scoped[name] == expected, name
        assert expected  # every table has rows of the attached namespaces
    every = {"n0", "n1", "n2", "empty"}
    with duckdb.connect() as con:
        attach(con, lake_path, namespaces=every, prefix="named_")
        attach(con, lake_path, prefix="all_")
        assert _catalog(con, "named_") == _catalog(con, "all_")


def test_attaching_everything_reads_every_definition(lake_path: str) -> None:
    """The baseline the scoped attachment is measured against: unchanged behaviour."""
    paths = _definition_paths(lake_path)
    lake, seen = _recording(lake_path)
    with duckdb.connect() as con:
        attach(con, lake)
        assert _schemas(con) == {"n0", "n1", "n2", "empty"} | CATALOG
        assert con.sql("SELECT count(*) FROM n0.orders").fetchall() == [(2,)]
    for ns in NAMESPACES:
        assert paths[ns] <= set(seen)
        assert all(seen[p] == 1 for p in paths[ns])  # the catalog tables read none again


def test_catalog_false_attaches_the_tables_only(
    lake_path: str, con: duckdb.DuckDBPyConnection
) -> None:
    paths = _definition_paths(lake_path)
    lake, seen = _recording(lake_path)
    attached = attach(con, lake, namespaces=["n2"], catalog=False)
    assert _schemas(con) == {"n2"}
    assert attached.schemas == {"n2": "n2"}
    namespace_files = {
        p for name, files in paths.items() if name.startswith("namespace ") for p in files
    }
    assert not namespace_files & set(seen)  # no catalog rows: no namespace definition read
    assert not (paths["n0"] | paths["n1"]) & set(seen)
    assert "namespaces=['n2']" in repr(attached)
    attached.refresh()
    assert _schemas(con) == {"n2"}


def test_unknown_namespaces_and_bad_arguments(
    lake_path: str, con: duckdb.DuckDBPyConnection
) -> None:
    with pytest.raises(errors.NoSuchNamespaceError, match="'nope'") as info:
        attach(con, lake_path, namespaces=["n1", "nope"])
    assert info.value.name == "nope"
    with pytest.raises(errors.NoSuchNamespaceError, match="'system'"):
        attach(con, lake_path, namespaces=["system"])  # catalog tables come with catalog=True
    with pytest.raises(errors.ProgrammingError, match=r"such as \['n1'\]"):
        attach(con, lake_path, namespaces="n1")
    with pytest.raises(errors.ProgrammingError, match="not int 1"):
        attach(con, lake_path, namespaces=[1])  # type: ignore[list-item]
    assert _schemas(con) == set()  # nothing was created
    attached = attach(con, lake_path, namespaces=[])
    assert _schemas(con) == CATALOG
    assert con.sql("SELECT count(*) FROM trinity_system.tables").fetchall() == [(0,)]
    attached.detach()


def test_refresh_keeps_the_namespaces(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    uri = str(tmp_path / "lake")
    with trinity_dbapi.connect(uri, autocommit=True) as writer:
        writer.execute("CREATE NAMESPACE a")
        writer.execute("CREATE NAMESPACE b")
        writer.execute("CREATE TABLE a.x (id INT8)")
        attached = attach(con, uri, namespaces=("a",))
        writer.execute("CREATE TABLE a.y (id INT8)")
        writer.execute("INSERT INTO a.y VALUES (7)")
        writer.execute("CREATE TABLE b.z (id INT8)")
        writer.execute("CREATE NAMESPACE c")
        attached.refresh()
        assert _schemas(con) == {"a"} | CATALOG
        assert con.sql("SELECT * FROM a.y").fetchall() == [(7,)]
        tables = con.sql("SELECT namespace_name, table_name FROM trinity_system.tables")
        assert sorted(tables.fetchall()) == [("a", "x"), ("a", "y")]

        version = attached.version
        writer.execute("DROP NAMESPACE a CASCADE")
        with pytest.raises(errors.NoSuchNamespaceError, match="'a'"):
            attached.refresh()
        assert attached.version == version  # left as it was
        assert con.sql("SELECT * FROM a.y").fetchall() == [(7,)]
        attached.refresh(version=version)
        assert con.sql("SELECT count(*) FROM a.x").fetchall() == [(0,)]
