"""Helpers of the SQLAlchemy dialect tests."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa


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
