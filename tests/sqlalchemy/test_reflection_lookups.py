"""Reflection on the tree's point-lookup path: storage reads, and the same answers as SQL.

Reflection reads the connection's transaction directly (``lookups.py``):
one table costs its key's path and its definition file, whatever the
lakehouse holds; ``MetaData.reflect`` reads each definition once. What it
reports is compared, method by method, with the SQL over the catalog tables
it replaced (``sql_reflection.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.sqlalchemy.helpers import has_schema
from tests.sqlalchemy.sql_reflection import MULTI, SqlReflectionDialect
from tests.sqlalchemy.test_reflection import everything
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.lakehouse.lakehouse import Lakehouse
from trinity_dbapi.sqlalchemy.compat import ObjectKind, ObjectScope

#: Tables of the big namespace, and of a second one.
TABLES = 300
OTHERS = 40


def _table(name: str) -> TableDefinition:
    columns = (Column(1, "id", DataType("int8"), nullable=False), Column(2, "v", DataType("int4")))
    return TableDefinition(name, columns, table_format="parquet", primary_key=(1,))


@pytest.fixture(scope="module")
def big_lake(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A lakehouse of order 8 with 300 tables in ``ns`` and 40 in ``other``."""
    path = str(tmp_path_factory.mktemp("big") / "lake")
    lake = Lakehouse.create(path, order=8)
    names = [("ns", f"t{i:04d}") for i in range(TABLES)]
    names += [("other", f"o{i:04d}") for i in range(OTHERS)]
    # Commits of 20 tables each: the buffers flush down, and the tree grows levels.
    for start in range(0, len(names), 20):
        txn = lake.begin()
        if start == 0:
            txn.create_namespace("ns")
            txn.create_namespace("other")
        for namespace, name in names[start : start + 20]:
            txn.create_table(namespace, _table(name))
        txn.commit()
    return path


def _storage(conn: sa.Connection) -> Any:
    return conn.connection.dbapi_connection.lakehouse.storage  # type: ignore[union-attr]


def test_one_table_reads_its_path_only(big_lake: str) -> None:
    depth = Lakehouse.open(big_lake).snapshot().depth()
    assert depth >= 3  # 340 keys at order 8: the lookup really walks down
    engine = sa.create_engine(f"trinity:///{big_lake}")
    try:
        with engine.connect() as conn:
            stats = _storage(conn).stats
            before = stats.snapshot()
            inspector = sa.inspect(conn)
            assert [c["name"] for c in inspector.get_columns("t0150", "ns")] == ["id", "v"]
            assert inspector.has_table("t0150", "ns") is True
            assert inspector.get_pk_constraint("t0150", "ns")["constrained_columns"] == ["id"]
            used = stats.since(before)
        assert used.reads <= depth + 3
        assert used.lists == 0
    finally:
        engine.dispose()


def test_names_read_no_definition(big_lake: str, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = sa.create_engine(f"trinity:///{big_lake}")
    try:
        with engine.connect() as conn:
            storage = _storage(conn)
            paths = _spy(storage, monkeypatch)
            inspector = sa.inspect(conn)
            assert inspector.get_table_names("ns") == [f"t{i:04d}" for i in range(TABLES)]
            assert inspector.get_schema_names() == ["information_schema", "ns", "other", "system"]
            assert has_schema(inspector, "other") is True
            assert inspector.has_table("o0001", "other") is True
            assert inspector.get_view_names("ns") == []
        assert not [path for path in paths if path.endswith(".binpb")]
    finally:
        engine.dispose()


def _spy(storage: Any, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count every read of ``storage`` by path, cache hits included."""
    paths: Counter[str] = Counter()
    real = storage.read

    def read(path: str) -> bytes:
        paths[path] += 1
        return bytes(real(path))

    monkeypatch.setattr(storage, "read", read)
    return paths


def test_metadata_reflect_reads_each_definition_once(
    big_lake: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = sa.create_engine(f"trinity:///{big_lake}")
    try:
        with engine.connect() as conn:
            paths = _spy(_storage(conn), monkeypatch)
            metadata = sa.MetaData()
            metadata.reflect(conn, schema="ns")
        assert len(metadata.tables) == TABLES
        assert [c.name for c in metadata.tables["ns.t0007"].primary_key] == ["id"]
        definitions = [n for path, n in paths.items() if path.endswith(".binpb")]
        assert sorted(definitions) == [1] * TABLES  # ns's tables, once each; not other's
    finally:
        engine.dispose()


def test_autoload_reads_one_definition(big_lake: str, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = sa.create_engine(f"trinity:///{big_lake}")
    try:
        with engine.connect() as conn:
            paths = _spy(_storage(conn), monkeypatch)
            table = sa.Table("t0042", sa.MetaData(), schema="ns", autoload_with=conn)
        assert [c.name for c in table.columns] == ["id", "v"]
        assert [n for path, n in paths.items() if path.endswith(".binpb")] == [1]
    finally:
        engine.dispose()


# -- the same answers as the SQL over the catalog tables -----------------------------------


@pytest.fixture
def engines(tmp_path: Path) -> Iterator[tuple[sa.Engine, sa.Engine]]:
    """Two engines on one rich lakehouse: the lookups', and the SQL reflection's."""
    url = f"trinity:///{tmp_path / 'lake'}"
    new = sa.create_engine(url)
    with new.begin() as conn:
        conn.execute(sa.schema.CreateSchema("ns"))
    metadata = sa.MetaData()
    everything(metadata)
    metadata.create_all(new)
    with new.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE ns.plain (a INT4)")
        conn.exec_driver_sql(
            "CREATE TABLE ns.keyed (k VARCHAR NOT NULL, d DATE, v DOUBLE COMMENT 'the value', "
            "PRIMARY KEY (k)) PARTITIONED BY (d) COMMENT 'keyed' WITH (a = '1', b = '2')"
        )
        conn.exec_driver_sql("CREATE INDEX ix_v ON ns.keyed (v)")
        conn.exec_driver_sql("CREATE INDEX ix_d ON ns.keyed (d)")
        conn.exec_driver_sql("CREATE TABLE t (a INT4)")  # in the default namespace
    old = sa.create_engine(url)
    old.dialect.__class__ = SqlReflectionDialect
    try:
        yield new, old
    finally:
        new.dispose()
        old.dispose()


def _shown(value: Any) -> Any:
    """A reflection result with its types as their reprs (types compare by identity)."""
    if isinstance(value, dict):
        return {key: _shown(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_shown(item) for item in value)
    if isinstance(value, sa.types.TypeEngine):
        return (type(value).__name__, repr(value))
    return value


def _outcome(inspector: sa.Inspector, method: str, *args: Any, **kw: Any) -> Any:
    try:
        return _shown(getattr(inspector, method)(*args, **kw))
    except sa.exc.NoSuchTableError as error:
        return ("NoSuchTableError", str(error))


SINGLE = (
    "get_columns",
    "get_pk_constraint",
    "get_foreign_keys",
    "get_indexes",
    "get_unique_constraints",
    "get_check_constraints",
    "get_table_comment",
    "get_table_options",
    "has_table",
)
PLACES = [
    ("everything", "ns"),
    ("plain", "ns"),
    ("keyed", "ns"),
    ("t", None),
    ("nothing", "ns"),
    ("everything", "elsewhere"),
    ("tables", "system"),
    ("columns", "information_schema"),
    ("nothing", "system"),
    ("bad/name", "ns"),
]


@pytest.mark.parametrize("method", SINGLE)
def test_single_table_methods_answer_as_sql_did(
    engines: tuple[sa.Engine, sa.Engine], method: str
) -> None:
    new, old = (sa.inspect(engine) for engine in engines)
    for name, schema in PLACES:
        assert _outcome(new, method, name, schema) == _outcome(old, method, name, schema), (
            method,
            name,
            schema,
        )


def test_names_answer_as_sql_did(engines: tuple[sa.Engine, sa.Engine]) -> None:
    new, old = (sa.inspect(engine) for engine in engines)
    assert new.get_schema_names() == old.get_schema_names()
    for schema in ("ns", None, "system", "information_schema", "elsewhere", "bad/name"):
        assert new.get_table_names(schema) == old.get_table_names(schema), schema
        assert new.get_view_names(schema) == old.get_view_names(schema), schema
        name = schema or "default"
        assert has_schema(new, name) == has_schema(old, name)


@pytest.mark.skipif(
    not hasattr(sa.engine.default.DefaultDialect, "get_multi_columns"),
    reason="SQLAlchemy 1.4 has no get_multi_* reflection methods",
)
@pytest.mark.parametrize("method", MULTI)
@pytest.mark.parametrize(
    "kw",
    [
        {"schema": "ns"},
        {"schema": None},
        {"schema": "system"},
        {"schema": "elsewhere"},
        {"schema": "ns", "filter_names": ["keyed", "nothing", "plain"]},
        {
            "schema": "ns",
            "filter_names": ["everything", "nothing"],
            "kind": ObjectKind.ANY,
            "scope": ObjectScope.ANY,
        },
        {"schema": "ns", "kind": ObjectKind.VIEW},
        {"schema": "ns", "scope": ObjectScope.TEMPORARY},
    ],
)
def test_multi_methods_answer_as_the_default_ones(
    engines: tuple[sa.Engine, sa.Engine], method: str, kw: dict[str, Any]
) -> None:
    new, old = (sa.inspect(engine) for engine in engines)
    assert _shown(getattr(new, method)(**kw)) == _shown(getattr(old, method)(**kw))


def test_metadata_reflect_builds_the_same_tables(engines: tuple[sa.Engine, sa.Engine]) -> None:
    built = []
    for engine in engines:
        metadata = sa.MetaData()
        metadata.reflect(engine, schema="ns")
        built.append(
            {
                key: (
                    str(sa.schema.CreateTable(table).compile(engine)),
                    sorted((ix.name, [c.name for c in ix.columns]) for ix in table.indexes),
                    table.comment,
                    dict(table.dialect_options["trinity"]),
                )
                for key, table in metadata.tables.items()
            }
        )
    assert built[0] == built[1]
    assert sorted(built[0]) == ["ns.everything", "ns.keyed", "ns.plain"]


def test_reflection_sees_what_the_transaction_sees(tmp_path: Path) -> None:
    url = f"trinity:///{tmp_path / 'lake'}"
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn, conn.begin():
            conn.exec_driver_sql("CREATE NAMESPACE ns")
            conn.exec_driver_sql("CREATE TABLE ns.mine (a INT4)")  # not committed yet
            assert sa.inspect(conn).get_table_names("ns") == ["mine"]
            with engine.connect() as other:
                assert sa.inspect(other).has_table("mine", "ns") is False
        assert sa.inspect(engine).has_table("mine", "ns") is True
    finally:
        engine.dispose()


def test_autocommit_reflection_pins_no_version(tmp_path: Path) -> None:
    url = f"trinity:///{tmp_path / 'lake'}"
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("CREATE NAMESPACE ns")
            assert sa.inspect(conn).get_table_names("ns") == []
            assert not conn.connection.dbapi_connection.in_transaction  # type: ignore[union-attr]
            with engine.connect() as other:
                other.exec_driver_sql("CREATE TABLE ns.later (a INT4)")
            assert sa.inspect(conn).get_table_names("ns") == ["later"]
    finally:
        engine.dispose()
