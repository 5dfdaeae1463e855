"""The dialect on SQLAlchemy 1.4 and 2.x: the stand-ins of ``compat.py`` and what differs.

These run on both lines; the 1.4 stand-ins are also exercised directly on 2.x
(their fallbacks are plain functions), so a change to them is seen in every
environment, not only in the 1.4 CI leg.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import exc
from sqlalchemy.engine import reflection

import trinity_dbapi
from tests.sqlalchemy.helpers import rows
from trinity_dbapi.sqlalchemy import TrinityDialect, TrinityDialect_trinity_dbapi, compat


class _Probe:
    """A dialect-like object whose reflection method counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        self.calls += 1
        return [f"{schema}.{self.calls}"]


@pytest.mark.parametrize("decorate", [compat.reflection_cache, compat._info_cache])
def test_reflection_cache_keeps_a_result_per_inspector(decorate: Any) -> None:
    cached = decorate(_Probe.names)
    probe = _Probe()
    info: dict[Any, Any] = {}
    assert cached(probe, None, "ns", info_cache=info) == ["ns.1"]
    assert cached(probe, None, "ns", info_cache=info) == ["ns.1"]  # from the cache
    assert cached(probe, None, "other", info_cache=info) == ["other.2"]
    assert cached(probe, None, "ns") == ["ns.3"]  # no cache given: computed
    assert probe.calls == 3
    assert cached.__name__ == "names" and cached.__wrapped__ is _Probe.names


def test_info_cache_takes_list_valued_options() -> None:
    # SQLAlchemy 1.4 passes a table's reflected options (lists, dicts) on to
    # the later reflection methods; they are part of the key, not an error.
    cached = compat._info_cache(_Probe.names)
    probe = _Probe()
    info: dict[Any, Any] = {}
    options = {"trinity_partitioned_by": ["day"], "trinity_properties": {"a": "1"}}
    assert cached(probe, None, "ns", info_cache=info, **options) == ["ns.1"]
    assert cached(probe, None, "ns", info_cache=info, **options) == ["ns.1"]
    assert cached(probe, None, "ns", info_cache=info) == ["ns.2"]  # other options: apart
    assert compat._hashable({"b": [1, {"c": 2}], "a": None}) == (
        ("a", None),
        ("b", (1, (("c", 2),))),
    )


def test_reflection_cache_takes_pep_563_annotations() -> None:
    # This module's annotations are strings (from __future__ import annotations):
    # the decorator must take such a method on both lines.
    assert "list[str]" in str(_Probe.names.__annotations__["return"])
    cached = compat.reflection_cache(_Probe.names)
    assert cached(_Probe(), None, "x", info_cache={}) == ["x.1"]


def test_flexi_cache_or_no_cache() -> None:
    if hasattr(reflection, "flexi_cache"):
        assert compat.flexi_cache is reflection.flexi_cache
    else:
        assert compat.flexi_cache is compat._uncached
    assert compat._uncached("anything")(len) is len


def test_object_kind_and_scope_have_sqlalchemy_2s_members() -> None:
    kind, scope = compat.ObjectKind, compat.ObjectScope
    assert kind.TABLE in kind.ANY and kind.VIEW in kind.ANY_VIEW
    assert kind.TABLE not in kind.ANY_VIEW
    assert scope.DEFAULT in scope.ANY and scope.DEFAULT not in scope.TEMPORARY


def test_double_renders_float8_and_reflects_as_double() -> None:
    assert issubclass(compat.DOUBLE, sa.Float)
    assert compat.DOUBLE.__visit_name__ == "DOUBLE"
    assert compat.type_compiler(TrinityDialect()).process(compat.DOUBLE()) == "FLOAT8"
    assert compat.type_compiler(TrinityDialect()).process(sa.Float()) == "FLOAT8"


def test_type_compiler_is_the_dialects_instance() -> None:
    dialect = TrinityDialect()
    assert compat.type_compiler(dialect) is dialect.type_compiler
    assert type(compat.type_compiler(dialect)).__name__ == "TrinityTypeCompiler"


def test_both_dbapi_entry_points_give_the_driver() -> None:
    assert TrinityDialect_trinity_dbapi.import_dbapi() is trinity_dbapi
    assert TrinityDialect_trinity_dbapi.dbapi() is trinity_dbapi
    # SQLAlchemy 2 finds import_dbapi in the class itself, so it never warns
    # that dbapi() is deprecated.
    assert "import_dbapi" in TrinityDialect_trinity_dbapi.__dict__


def test_driver_connection_under_a_connection(engine: sa.engine.Engine) -> None:
    with engine.connect() as conn:
        raw = compat.driver_connection(conn)
        assert isinstance(raw, trinity_dbapi.dbapi.connection.Connection)
        assert raw.namespace == "default"

        class _FirstConnect:  # SQLAlchemy 1.4's first connect: no pool proxy
            connection = raw

        assert compat.driver_connection(_FirstConnect()) is raw


def test_isolation_level_of_the_engine_is_set_and_checked(tmp_path: Path) -> None:
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}", isolation_level="SNAPSHOT")
    try:
        with engine.connect() as conn:
            assert conn.get_isolation_level() == "SNAPSHOT"
            assert compat.driver_connection(conn).isolation_level == "SNAPSHOT ISOLATION"
    finally:
        engine.dispose()
    bad = sa.create_engine(f"trinity:///{tmp_path / 'lake'}", isolation_level="READ COMMITTED")
    try:
        with pytest.raises(exc.ArgumentError, match="Valid isolation levels for 'trinity' are"):
            bad.connect()
    finally:
        bad.dispose()


def test_set_isolation_level_reaches_the_driver_through_a_pool_proxy(
    engine: sa.engine.Engine,
) -> None:
    # SQLAlchemy 1.4's reset_isolation_level hands over the pool's proxy.
    with engine.connect() as conn:
        proxy = conn.connection
        engine.dialect.set_isolation_level(proxy, "autocommit")
        assert compat.driver_connection(conn).autocommit is True
        engine.dialect.set_isolation_level(proxy, "SERIALIZABLE")
        assert compat.driver_connection(conn).autocommit is False


def test_a_statement_outside_a_transaction(engine: sa.engine.Engine) -> None:
    """SQLAlchemy 1.4's default engines autocommit DML text; 2.x's roll back at close."""
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE ns.t (id INT4)")
    with engine.connect() as conn:
        conn.execute(sa.text("INSERT INTO ns.t VALUES (1)"))
        legacy = not hasattr(conn, "commit")  # 1.4's non-future Connection
    assert rows(engine, "SELECT id FROM ns.t") == ([(1,)] if legacy else [])
    with engine.begin() as conn:  # the same on both lines
        conn.execute(sa.text("INSERT INTO ns.t VALUES (2)"))
    assert rows(engine, "SELECT id FROM ns.t ORDER BY id") == ([(1,), (2,)] if legacy else [(2,)])
