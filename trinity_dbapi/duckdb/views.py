"""The SQL text of the bridge's views: empty views and the Arrow fallback's casts.

The Parquet scan a view reads is planned and written by
:mod:`trinity_dbapi.tables.scan`, shared with the SQL engine and Spark.

Imports from duckdb/: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.format.sql_text import quote_identifier

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import Column


def duckdb_type_of(column: Column) -> str:
    """The DuckDB type a column reads as."""
    from trinity_dbapi.format.type_mapping import duckdb_type

    return duckdb_type(column.type)


def empty_select(columns: Sequence[Column]) -> str:
    """A SELECT of no rows with exactly the columns' names and types."""
    items = ", ".join(
        f"CAST(NULL AS {duckdb_type_of(c)}) AS {quote_identifier(c.name)}" for c in columns
    )
    return f"SELECT {items} WHERE false"


def cast_items(columns: Sequence[Column]) -> str:
    """The fallback view's select list over the registered Arrow dataset.

    The casts are no-ops except for ``timetz``, which Arrow carries as a time.
    """
    return ", ".join(
        f"CAST({quote_identifier(c.name)} AS {duckdb_type_of(c)}) AS {quote_identifier(c.name)}"
        for c in columns
    )


def check_unique(names: Mapping[str, object], what: str, where: str) -> None:
    """DuckDB names are case-insensitive: refuse two names that differ only in case."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name.casefold(), name)
        if other != name:
            raise ProgrammingError(
                f"the {what}s {other!r} and {name!r} of the {where} differ only in case, and "
                f"DuckDB names are case-insensitive: they cannot both be exposed; rename one "
                "in the lakehouse"
            )
