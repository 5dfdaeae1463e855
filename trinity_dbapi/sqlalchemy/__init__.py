"""SQLAlchemy dialect for Trinity Lakehouses: ``create_engine("trinity:////path/to/lake")``.

Importing this package imports SQLAlchemy; ``import trinity_dbapi`` does not.
The dialect is registered through the ``sqlalchemy.dialects`` entry point, so
an installed trinity-dbapi is all SQLAlchemy, pandas and BI tools need.

* :mod:`~trinity_dbapi.sqlalchemy.dialect`: the dialect and its reflection;
* :mod:`~trinity_dbapi.sqlalchemy.compiler`: statements and DDL as trinity SQL;
* :mod:`~trinity_dbapi.sqlalchemy.types`: column types, both ways;
* :mod:`~trinity_dbapi.sqlalchemy.driver`: URLs and the DB-API adapter;
* :func:`as_of`: time travel for one table of a ``select()``;
* :func:`arrow_insert`: a fast ``DataFrame.to_sql(method=...)``.

See ``docs/sqlalchemy.md``.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports. This package
re-exports ``dialect``, ``driver``, ``types`` and ``writer``.

1. ``compat`` (names only SQLAlchemy 2 has, for 1.4 too), ``requirements``
   (the compliance suite's), ``merge`` (the ``MERGE`` construct)
2. ``types`` (column types both ways, the dialect's type side), ``compiler``
   (statement and DDL compilers, identifier rules), ``writer``
   (``arrow_insert``), ``provision`` (the suite's hooks)
3. ``lookups`` (reflection's reads, and what each kind reports)
4. ``views`` (reflection of views)
5. ``dialect`` (:class:`TrinityDialect`)
6. ``driver`` (the DB-API side)
"""

from __future__ import annotations

import datetime
from typing import Any, TypeVar

from sqlalchemy import exc

from trinity_dbapi.format.sql_text import quote_string
from trinity_dbapi.sqlalchemy.dialect import TrinityDialect
from trinity_dbapi.sqlalchemy.driver import TrinityDialect_trinity_dbapi
from trinity_dbapi.sqlalchemy.types import FIXED, MAP, STRUCT
from trinity_dbapi.sqlalchemy.writer import arrow_insert

__all__ = [
    "FIXED",
    "MAP",
    "STRUCT",
    "TrinityDialect",
    "TrinityDialect_trinity_dbapi",
    "arrow_insert",
    "as_of",
]

S = TypeVar("S")


def as_of(
    statement: S,
    table: Any,
    *,
    version: int | str | None = None,
    timestamp: datetime.datetime | datetime.date | None = None,
) -> S:
    """Read ``table`` in ``statement`` as of an earlier version of the lakehouse.

    Renders ``FOR SYSTEM_VERSION AS OF`` / ``FOR SYSTEM_TIME AS OF`` after the
    table (before its alias) through ``with_hint``, for the trinity dialect only.

    Args:
        statement: a ``select()`` reading ``table``.
        table: the ``Table`` (or alias of one) to read as it was.
        version: a root version number, or the name of a snapshot export.
        timestamp: the latest version committed at or before this instant
            (naive datetimes are UTC).

    Returns:
        The statement with the hint (statements are immutable).

    Example:
        >>> from sqlalchemy import column, select, table
        >>> orders = table("orders", column("id"))
        >>> print(as_of(select(orders.c.id), orders, version=3).compile(
        ...     dialect=TrinityDialect()))
        SELECT orders.id
        FROM orders FOR SYSTEM_VERSION AS OF 3
    """
    if (version is None) == (timestamp is None):
        raise exc.ArgumentError("as_of() needs exactly one of version= or timestamp=")
    if version is not None:
        if isinstance(version, bool) or not isinstance(version, (int, str)):
            raise exc.ArgumentError(f"as_of(version=...) takes an int or a str, not {version!r}")
        value = str(version) if isinstance(version, int) else quote_string(version)
        clause = f"FOR SYSTEM_VERSION AS OF {value}"
    else:
        if not isinstance(timestamp, (datetime.datetime, datetime.date)):
            raise exc.ArgumentError(
                f"as_of(timestamp=...) takes a datetime or a date, not {timestamp!r}"
            )
        kind = "TIMESTAMP" if isinstance(timestamp, datetime.datetime) else "DATE"
        if isinstance(timestamp, datetime.datetime) and timestamp.tzinfo is not None:
            kind = "TIMESTAMPTZ"
        clause = f"FOR SYSTEM_TIME AS OF {kind} {quote_string(timestamp.isoformat())}"
    return statement.with_hint(table, clause, dialect_name="trinity")  # type: ignore[attr-defined,no-any-return]
