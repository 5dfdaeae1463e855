"""Engines: URLs and their options, the entry point, isolation levels, transactions."""

from __future__ import annotations

import contextlib
import importlib.metadata
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc
from sqlalchemy.dialects import registry
from sqlalchemy.engine import make_url
from sqlalchemy.engine.default import CACHE_HIT, CACHE_MISS

import trinity_dbapi
from tests.conftest import create_bucket, s3_options
from tests.sqlalchemy.helpers import latest_version, rows
from trinity_dbapi.sqlalchemy import TrinityDialect, TrinityDialect_trinity_dbapi


def write_and_read(engine: sa.Engine) -> list[tuple[Any, ...]]:
    """Create ``default.t`` with two rows through ``engine``; its rows read back."""
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (id INT8, name VARCHAR)")
        conn.exec_driver_sql("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    return rows(engine, "SELECT id, name FROM t ORDER BY id")


def driver_rows(uri: str, storage_options: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """``default.t`` read by the DB-API driver directly: what the engine wrote, and where."""
    conn = trinity_dbapi.connect(uri, storage_options=storage_options, create=False)
    try:
        return conn.cursor().execute("SELECT id, name FROM t ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.fixture
def memory_name() -> Iterator[str]:
    """A unique ``memory://`` lakehouse location, removed after the test."""
    import fsspec

    name = f"sqla-{uuid.uuid4().hex}"
    yield f"memory://{name}/lake"
    with contextlib.suppress(FileNotFoundError):
        fsspec.filesystem("memory").rm(f"/{name}", recursive=True)


# -- URL forms ----------------------------------------------------------------------------


def test_absolute_path_url(tmp_path: Path) -> None:
    location = tmp_path / "lake"
    engine = sa.create_engine(f"trinity:///{location}")  # trinity:////tmp/...
    assert str(engine.url) == f"trinity:///{location}"
    assert write_and_read(engine) == [(1, "a"), (2, "b")]
    engine.dispose()
    assert driver_rows(str(location)) == [(1, "a"), (2, "b")]


def test_relative_path_url_is_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    engine = sa.create_engine("trinity:///rel/lake")
    assert write_and_read(engine) == [(1, "a"), (2, "b")]
    engine.dispose()
    assert (tmp_path / "rel" / "lake").is_dir()
    assert driver_rows(str(tmp_path / "rel" / "lake")) == [(1, "a"), (2, "b")]


def test_memory_url_is_shared_by_engines_of_one_process(memory_name: str) -> None:
    engine = sa.create_engine(f"trinity:///{memory_name}", pool_pre_ping=True)
    assert write_and_read(engine) == [(1, "a"), (2, "b")]
    other = sa.create_engine(f"trinity:///{memory_name}")
    assert rows(other, "SELECT name FROM t ORDER BY id") == [("a",), ("b",)]
    assert driver_rows(memory_name) == [(1, "a"), (2, "b")]


@pytest.mark.s3
def test_s3_url_with_storage_options_in_the_query(moto_server: str) -> None:
    bucket = create_bucket(moto_server)
    url = (
        f"trinity:///s3://{bucket}/lake?storage.key=testing&storage.secret=testing"
        f"&storage.endpoint_url={moto_server}"
    )
    engine = sa.create_engine(url)
    assert engine.dialect.create_connect_args(engine.url) == (
        [f"s3://{bucket}/lake"],
        {
            "storage_options": {
                "key": "testing",
                "secret": "testing",
                "endpoint_url": moto_server,
            }
        },
    )
    assert write_and_read(engine) == [(1, "a"), (2, "b")]
    engine.dispose()
    assert driver_rows(f"s3://{bucket}/lake", s3_options(moto_server)) == [(1, "a"), (2, "b")]


@pytest.mark.s3
def test_s3_url_with_storage_options_in_connect_args(moto_server: str) -> None:
    bucket = create_bucket(moto_server)
    engine = sa.create_engine(
        f"trinity:///s3://{bucket}/lake",
        connect_args={"storage_options": s3_options(moto_server)},
    )
    assert write_and_read(engine) == [(1, "a"), (2, "b")]
    engine.dispose()
    assert driver_rows(f"s3://{bucket}/lake", s3_options(moto_server)) == [(1, "a"), (2, "b")]


def test_every_backend_through_connect_args(backend: tuple[str, dict[str, Any]]) -> None:
    uri, options = backend
    engine = sa.create_engine(f"trinity:///{uri}", connect_args={"storage_options": options})
    metadata = sa.MetaData()
    table = sa.Table("t", metadata, sa.Column("id", sa.BigInteger), sa.Column("name", sa.String))
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(table.insert(), [{"id": 2, "name": "b"}, {"id": 1, "name": "a"}])
    with engine.connect() as conn:
        assert conn.execute(sa.select(table).order_by(table.c.id)).all() == [(1, "a"), (2, "b")]
    assert sa.inspect(engine).get_table_names() == ["t"]
    engine.dispose()


def test_storage_options_in_the_query_are_decoded() -> None:
    url = make_url(
        "trinity:///s3://b/p?storage.anon=true&storage.key=%22123%22&storage.max_retries=5"
        "&storage.client_kwargs=%7B%22region_name%22%3A%22eu-west-1%22%7D"
        "&storage.endpoint_url=http://h:9000"
    )
    assert TrinityDialect_trinity_dbapi().create_connect_args(url) == (
        ["s3://b/p"],
        {
            "storage_options": {
                "anon": True,
                "key": "123",  # a JSON string: text that would read as a number
                "max_retries": 5,
                "client_kwargs": {"region_name": "eu-west-1"},
                "endpoint_url": "http://h:9000",
            }
        },
    )


def test_connect_args_add_to_and_override_the_url(tmp_path: Path) -> None:
    engine = sa.create_engine(
        f"trinity:///{tmp_path / 'lake'}?namespace=a",
        connect_args={"namespace": "b", "autocommit": False},
    )
    with engine.connect() as conn:
        assert conn.connection.dbapi_connection.namespace == "b"
        assert conn.connection.dbapi_connection.autocommit is False
    engine.dispose()


# -- URL connect options ---------------------------------------------------------------------


def test_url_options_are_parsed() -> None:
    url = make_url(
        "trinity:///lake?namespace=ns&isolation_level=SNAPSHOT&read_only=true"
        "&create=false&autocommit=off"
    )
    assert TrinityDialect_trinity_dbapi().create_connect_args(url) == (
        ["lake"],
        {
            "namespace": "ns",
            "isolation_level": "SNAPSHOT",
            "read_only": True,
            "create": False,
            "autocommit": False,
        },
    )


def test_namespace_option_resolves_unqualified_names_and_is_the_default_schema(
    tmp_path: Path,
) -> None:
    location = tmp_path / "lake"
    setup = trinity_dbapi.connect(str(location), autocommit=True)
    setup.cursor().execute("CREATE NAMESPACE sales")
    setup.cursor().execute("CREATE TABLE sales.orders (id INT4)")
    setup.cursor().execute("INSERT INTO sales.orders VALUES (7)")
    setup.close()
    engine = sa.create_engine(f"trinity:///{location}?namespace=sales")
    assert rows(engine, "SELECT id FROM orders") == [(7,)]
    inspector = sa.inspect(engine)
    assert inspector.default_schema_name == "sales"
    assert inspector.get_table_names() == ["orders"]
    engine.dispose()


def test_author_option_is_recorded_with_each_version(tmp_path: Path) -> None:
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}?author=etl%40example.com")
    assert write_and_read(engine) == [(1, "a"), (2, "b")]
    authors = rows(engine, "SELECT DISTINCT author FROM system.versions WHERE version > 0")
    assert authors == [("etl@example.com",)]
    engine.dispose()


def test_isolation_level_option(tmp_path: Path) -> None:
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}?isolation_level=SNAPSHOT")
    with engine.connect() as conn:
        assert conn.get_isolation_level() == "SNAPSHOT"
        assert conn.default_isolation_level == "SNAPSHOT"
        assert conn.connection.dbapi_connection.isolation_level == "SNAPSHOT ISOLATION"
    engine.dispose()


def test_read_only_option_reads_and_refuses_writes(tmp_path: Path) -> None:
    location = tmp_path / "lake"
    assert write_and_read(sa.create_engine(f"trinity:///{location}")) == [(1, "a"), (2, "b")]
    engine = sa.create_engine(f"trinity:///{location}?read_only=true")
    assert rows(engine, "SELECT id FROM t ORDER BY id") == [(1,), (2,)]
    before = latest_version(engine)
    with engine.connect() as conn, pytest.raises(exc.ProgrammingError, match="read-only") as info:
        conn.exec_driver_sql("INSERT INTO t VALUES (3, 'c')")
    assert isinstance(info.value.orig, trinity_dbapi.errors.ReadOnlyError)
    assert latest_version(engine) == before
    assert rows(engine, "SELECT id FROM t ORDER BY id") == [(1,), (2,)]
    engine.dispose()


def test_create_false_on_a_missing_lakehouse_raises_and_creates_nothing(tmp_path: Path) -> None:
    location = tmp_path / "missing"
    engine = sa.create_engine(f"trinity:///{location}?create=false")
    with pytest.raises(exc.OperationalError, match="no Trinity Lakehouse at") as info:
        engine.connect()
    assert isinstance(info.value.orig, trinity_dbapi.errors.LakehouseNotFoundError)
    assert "create=True" in str(info.value)
    assert not location.exists()


def test_create_false_on_an_existing_lakehouse_connects(tmp_path: Path) -> None:
    location = tmp_path / "lake"
    write_and_read(sa.create_engine(f"trinity:///{location}"))
    engine = sa.create_engine(f"trinity:///{location}?create=false")
    assert rows(engine, "SELECT name FROM t ORDER BY id") == [("a",), ("b",)]
    engine.dispose()


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("trinity://localhost/lake", r"'trinity://localhost/lake' has a host part; .*trinity:////"),
        ("trinity://user@/lake", r"has a host part; the lakehouse location follows 'trinity:///'"),
        ("trinity://:9000/lake", r"has a host part"),
        ("trinity://", r"needs the lakehouse location after 'trinity:///', e\.g\. trinity:////"),
        ("trinity:///", r"needs the lakehouse location after 'trinity:///'"),
        (
            "trinity:///lake?colour=red",
            (
                r"unknown trinity URL option 'colour'; the options are autocommit, read_only, "
                r"create, isolation_level, namespace, author, branch, statement_timeout, version, "
                r"definition_cache_bytes, storage\.<option>"
            ),
        ),
        ("trinity:///lake?storage.=x", r"unknown trinity URL option 'storage\.'"),
        ("trinity:///lake?read_only=maybe", r"URL option read_only='maybe' must be true or false"),
        (
            "trinity:///lake?definition_cache_bytes=-1",
            r"URL option definition_cache_bytes='-1' must be a whole number of bytes",
        ),
    ],
)
def test_bad_urls_raise_argument_error(url: str, message: str) -> None:
    with pytest.raises(exc.ArgumentError, match=message):
        sa.create_engine(url)


def test_host_part_error_hides_the_password() -> None:
    with pytest.raises(exc.ArgumentError, match="has a host part") as info:
        sa.create_engine("trinity://user:s3cr3t@somewhere/lake")
    assert "s3cr3t" not in str(info.value)


# -- registration -----------------------------------------------------------------------------


def test_registry_loads_the_dialect_by_name() -> None:
    assert registry.load("trinity") is TrinityDialect_trinity_dbapi
    assert registry.load("trinity.trinity_dbapi") is TrinityDialect_trinity_dbapi
    assert issubclass(TrinityDialect_trinity_dbapi, TrinityDialect)
    assert type(sa.create_engine("trinity+trinity_dbapi:///lake").dialect) is (
        TrinityDialect_trinity_dbapi
    )


def test_entry_points_name_the_dialect() -> None:
    points = {
        point.name: point.value
        for point in importlib.metadata.entry_points(group="sqlalchemy.dialects")
        if point.name.startswith("trinity")
    }
    assert points == {
        "trinity": "trinity_dbapi.sqlalchemy.driver:TrinityDialect_trinity_dbapi",
        "trinity.trinity_dbapi": "trinity_dbapi.sqlalchemy.driver:TrinityDialect_trinity_dbapi",
    }


@pytest.mark.parametrize("cls", [TrinityDialect, TrinityDialect_trinity_dbapi])
def test_statement_cache_is_declared_on_each_class(cls: type) -> None:
    # SQLAlchemy only trusts the flag when each class sets it itself.
    assert cls.__dict__["supports_statement_cache"] is True


def test_compiled_statements_are_cached(engine: sa.Engine) -> None:
    table = sa.Table("t", sa.MetaData(), sa.Column("id", sa.Integer), schema="ns")
    table.create(engine)
    with engine.connect() as conn:
        first = conn.execute(sa.select(table).where(table.c.id == 1))
        second = conn.execute(sa.select(table).where(table.c.id == 2))
        assert (first.all(), second.all()) == ([], [])
    assert first.context.cache_hit is CACHE_MISS
    assert second.context.cache_hit is CACHE_HIT


# -- isolation levels ----------------------------------------------------------------------------


def test_default_isolation_level_is_serializable(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        assert conn.get_isolation_level() == "SERIALIZABLE"
        assert conn.default_isolation_level == "SERIALIZABLE"
    assert engine.dialect.get_isolation_level_values(None) == [
        "AUTOCOMMIT",
        "SERIALIZABLE",
        "SNAPSHOT",
    ]


def test_autocommit_commits_each_statement(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE ns.t (id INT4)")
    before = latest_version(engine)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        assert conn.get_isolation_level() == "AUTOCOMMIT"
        assert conn.connection.dbapi_connection.autocommit is True
        conn.exec_driver_sql("INSERT INTO ns.t VALUES (1)")
        assert rows(engine, "SELECT id FROM ns.t") == [(1,)]  # seen by another connection
        conn.exec_driver_sql("INSERT INTO ns.t VALUES (2)")
    assert latest_version(engine) == before + 2
    # Back in the pool, the connection is reset to the default level.
    with engine.connect() as conn:
        assert conn.get_isolation_level() == "SERIALIZABLE"
        assert conn.connection.dbapi_connection.autocommit is False


def test_autocommit_engine(tmp_path: Path) -> None:
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}", isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        assert conn.get_isolation_level() == "AUTOCOMMIT"
        conn.exec_driver_sql("CREATE TABLE t (id INT4)")
        conn.exec_driver_sql("INSERT INTO t VALUES (1)")
    assert latest_version(engine) == 2
    engine.dispose()


def test_snapshot_isolation_per_connection(engine: sa.Engine) -> None:
    with engine.connect().execution_options(isolation_level="SNAPSHOT") as conn:
        assert conn.get_isolation_level() == "SNAPSHOT"
        assert conn.connection.dbapi_connection.isolation_level == "SNAPSHOT ISOLATION"
        with conn.begin():
            conn.exec_driver_sql("CREATE TABLE ns.t (id INT4)")
            conn.exec_driver_sql("INSERT INTO ns.t VALUES (1)")
    assert rows(engine, "SELECT id FROM ns.t") == [(1,)]
    with engine.connect() as conn:
        assert conn.get_isolation_level() == "SERIALIZABLE"


def test_unknown_isolation_level_lists_the_valid_ones(engine: sa.Engine) -> None:
    with (
        engine.connect() as conn,
        pytest.raises(
            exc.ArgumentError,
            match=r"Invalid value 'READ COMMITTED' for isolation_level\. Valid isolation levels "
            r"for 'trinity' are AUTOCOMMIT, SERIALIZABLE, SNAPSHOT",
        ),
    ):
        conn.execution_options(isolation_level="READ COMMITTED")


# -- transactions --------------------------------------------------------------------------------


def test_engine_begin_is_one_commit(engine: sa.Engine) -> None:
    table = sa.Table("t", sa.MetaData(), sa.Column("id", sa.Integer), schema="ns")
    table.create(engine)
    before = latest_version(engine)
    with engine.begin() as conn:
        conn.execute(table.insert(), {"id": 1})
        conn.execute(table.insert(), [{"id": 2}, {"id": 3}])
        conn.exec_driver_sql("INSERT INTO ns.t VALUES (4)")
        # The transaction reads its own writes before they are committed.
        assert conn.execute(sa.select(sa.func.count()).select_from(table)).scalar() == 4
        assert rows(engine, "SELECT count(*) FROM ns.t") == [(0,)]
    assert latest_version(engine) == before + 1
    assert rows(engine, "SELECT id FROM ns.t ORDER BY id") == [(1,), (2,), (3,), (4,)]


def test_rolled_back_transaction_leaves_nothing(engine: sa.Engine) -> None:
    table = sa.Table("t", sa.MetaData(), sa.Column("id", sa.Integer), schema="ns")
    table.create(engine)
    before = latest_version(engine)
    with engine.connect() as conn:
        transaction = conn.begin()
        conn.execute(table.insert(), [{"id": 1}, {"id": 2}])
        conn.exec_driver_sql("CREATE TABLE ns.u (id INT4)")
        transaction.rollback()
        assert conn.execute(sa.select(table)).all() == []
    assert latest_version(engine) == before
    assert rows(engine, "SELECT count(*) FROM ns.t") == [(0,)]
    assert sa.inspect(engine).get_table_names("ns") == ["t"]


def test_exception_in_engine_begin_rolls_back(engine: sa.Engine) -> None:
    table = sa.Table("t", sa.MetaData(), sa.Column("id", sa.Integer), schema="ns")
    table.create(engine)
    before = latest_version(engine)
    with pytest.raises(ZeroDivisionError), engine.begin() as conn:
        conn.execute(table.insert(), {"id": 1})
        raise ZeroDivisionError
    assert latest_version(engine) == before
    assert rows(engine, "SELECT count(*) FROM ns.t") == [(0,)]


def test_insert_rowcount_is_the_number_of_rows(engine: sa.Engine) -> None:
    table = sa.Table("t", sa.MetaData(), sa.Column("id", sa.Integer), schema="ns")
    table.create(engine)
    with engine.begin() as conn:
        assert conn.execute(table.insert(), {"id": 1}).rowcount == 1
        assert conn.execute(table.insert(), [{"id": 2}, {"id": 3}, {"id": 4}]).rowcount == 3
        assert conn.exec_driver_sql("INSERT INTO ns.t VALUES (5), (6)").rowcount == 2
        assert conn.execute(table.update().where(table.c.id > 4).values(id=0)).rowcount == 2
        assert conn.execute(table.delete().where(table.c.id == 0)).rowcount == 2


def test_version_as_a_url_parameter_reads_that_version_only(tmp_path: Path) -> None:
    """``?version=N`` pins the connection to version N, as ``connect(version=N)`` does."""
    root = tmp_path / "lake"
    with trinity_dbapi.connect(str(root), autocommit=True) as conn:
        conn.execute("CREATE TABLE t (i INT8)")
        conn.execute("INSERT INTO t VALUES (1)")
        pinned = int(conn.execute("SELECT max(version) FROM system.versions").fetchone()[0])
        conn.execute("INSERT INTO t VALUES (2)")
    engine = sa.create_engine(f"trinity:///{root}?version={pinned}")
    try:
        with engine.connect() as sa_conn:
            found = sa_conn.exec_driver_sql("SELECT i FROM t ORDER BY i").fetchall()
        assert [tuple(r) for r in found] == [(1,)]
    finally:
        engine.dispose()
    for bad in ("-1", "x", "4294967296", "1.5"):
        with pytest.raises(exc.ArgumentError, match="version number"):
            sa.create_engine(f"trinity:///{root}?version={bad}").connect()
