"""What the bridge asks of the user's DuckDB connection, and its errors translated.

Imports from duckdb/: nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from trinity_dbapi.errors import (
    DataError,
    Error,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
)


def in_transaction(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con`` is inside an explicit transaction (BEGIN without COMMIT yet).

    Without one, every statement runs in a transaction of its own, so two
    statements see two transaction IDs; inside one, they see the same.
    """
    first = scalar(con, "SELECT txid_current()")
    return bool(first == scalar(con, "SELECT txid_current()"))


def is_open(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con`` still runs statements (it was not closed)."""
    try:
        con.execute("SELECT 1")
    except duckdb.ConnectionException:
        return False
    return True


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None = None) -> Any:
    """The first value of the first row of ``sql``."""
    # fetchall, not fetchone: DuckDB 2 keeps a half-read result open, which
    # blocks the connection's next register() or sql().
    return con.execute(sql, list(params) if params else None).fetchall()[0][0]


def translate(exc: duckdb.Error) -> Error:
    """Our PEP 249 error for a DuckDB error met while creating views."""
    cls: type[Error] = OperationalError
    if isinstance(exc, (duckdb.CatalogException, duckdb.BinderException, duckdb.ParserException)):
        cls = ProgrammingError
    elif isinstance(exc, (duckdb.ConversionException, duckdb.InvalidInputException)):
        cls = DataError
    elif isinstance(exc, duckdb.NotImplementedException):
        cls = NotSupportedError
    return cls(f"exposing the lakehouse in DuckDB failed: {exc}")
