"""Reflection shares its connection's definition cache: reflecting a table again parses nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import sqlalchemy as sa

from trinity_dbapi.format.definitions import NamespaceDefinition, TableDefinition


def test_reflecting_again_reads_no_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = sa.create_engine(
        f"trinity:///memory://dcache-sqla-{uuid.uuid4().hex}?autocommit=true"
        "&definition_cache_bytes=1048576",
        poolclass=sa.pool.StaticPool,  # one DB-API connection, so one cache
    )
    with engine.connect() as conn:
        conn.exec_driver_sql("CREATE NAMESPACE ns")
        conn.exec_driver_sql("CREATE TABLE ns.t (id INT8 NOT NULL, name VARCHAR)")
        raw = conn.connection.dbapi_connection
    assert raw.lakehouse.definition_cache.max_bytes == 1048576
    parses = [0]
    for kind in (TableDefinition, NamespaceDefinition):
        original = kind.from_bytes.__func__  # type: ignore[attr-defined]

        def counted(cls: Any, data: bytes, path: str, _original: Any = original) -> Any:
            parses[0] += 1
            return _original(cls, data, path)

        monkeypatch.setattr(kind, "from_bytes", classmethod(counted))

    def reflect() -> list[str]:
        inspector = sa.inspect(engine)
        assert inspector.has_table("t", schema="ns")
        return [column["name"] for column in inspector.get_columns("t", schema="ns")]

    assert reflect() == ["id", "name"]
    first = parses[0]
    assert first > 0  # the first reflection read the definitions
    for _ in range(5):
        assert reflect() == ["id", "name"]
    assert parses[0] == first
    engine.dispose()


def test_a_bad_bound_in_connect_args_names_the_option() -> None:
    engine = sa.create_engine(
        f"trinity:///memory://dcache-sqla-{uuid.uuid4().hex}",
        connect_args={"definition_cache_bytes": -5},
    )
    with pytest.raises(sa.exc.ProgrammingError, match="definition_cache_bytes"):
        engine.connect()
