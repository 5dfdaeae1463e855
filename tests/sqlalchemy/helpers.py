"""Helpers of the SQLAlchemy dialect tests."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine.reflection import Inspector

#: SQLAlchemy 2's inspector: ``has_schema`` and a cached ``has_table`` (1.4 has neither).
INSPECTOR_2 = hasattr(Inspector, "has_schema")


def has_schema(inspector: Inspector, name: str) -> bool:
    """``inspector.has_schema(name)``; on SQLAlchemy 1.4, the dialect's method it calls."""
    if INSPECTOR_2:
        return bool(inspector.has_schema(name))
    with inspector._operation_context() as conn:
        return bool(inspector.dialect.has_schema(conn, name, info_cache=inspector.info_cache))


def latest_version(engine: sa.Engine) -> int:
    """The lakehouse's latest version: it grows by one per commit."""
    with engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT max(version) FROM system.versions")).scalar_one())


def rows(engine: sa.Engine, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    """The rows of one query, read through a new connection, as plain tuples."""
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(sql), params)]


def statements(engine: sa.Engine) -> list[str]:
    """A list that collects every statement ``engine`` sends to the driver from now on."""
    sent: list[str] = []

    @sa.event.listens_for(engine, "before_cursor_execute")
    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(statement)

    return sent
