"""Partitioned tables in Superset: the partition columns and the latest partition.

A table created with ``PARTITIONED BY (...)`` keeps one folder of files per
value of its partition columns (docs/datasets.md). Superset's Presto and Trino
specs show such a table's partitioning in SQL Lab's table preview and limit
the preview's ``SELECT *`` to the newest partition; the spec does the same:

* the partition columns are read from the table's definition, through the
  dialect's reflection (``get_table_options``: one point lookup), never by
  scanning data;
* the **latest partition** is the greatest combination of partition values,
  compared column by column in the order of ``PARTITIONED BY``, as Presto's
  ``latest_partition`` orders them (for a table partitioned by a date first,
  the newest date). NULL values sort last. It is found with one query over
  the partition columns alone, which DuckDB answers from the file paths.

An unpartitioned table has no partition columns and no latest partition; an
empty partitioned table has its columns and no latest partition.

Imports from superset/: nothing.
"""

from __future__ import annotations

from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from trinity_dbapi.format.sql_text import qualified_name, quote_identifier

__all__ = [
    "PARTITION_INDEX",
    "json_value",
    "latest_values",
    "partition_columns",
    "partition_index",
    "partition_query",
]

#: The name of the pseudo-index that reports a table's partition columns (Trino's).
PARTITION_INDEX = "partition"


def partition_columns(inspector: Any, table: Any) -> list[str]:
    """The ``PARTITIONED BY`` columns of ``table``, in order; empty if it has none.

    Args:
        inspector: a SQLAlchemy inspector on a ``trinity://`` engine.
        table: Superset's ``Table`` (``table``, ``schema``).
    """
    options = inspector.get_table_options(table.table, table.schema)
    return [str(name) for name in options.get("trinity_partitioned_by") or ()]


def partition_index(columns: list[str]) -> dict[str, Any]:
    """The partition columns as one index entry, the shape ``get_indexes`` returns."""
    return {"name": PARTITION_INDEX, "column_names": list(columns), "unique": False}


def partition_query(table: Any, columns: list[str], limit: int | None = None) -> str:
    """SQL listing the table's partitions, the latest first.

    Args:
        table: Superset's ``Table``; without a schema the name resolves in the
            connection's namespace.
        columns: the partition columns.
        limit: how many partitions, or None for all.
    """
    names = ", ".join(quote_identifier(name) for name in columns)
    order = ", ".join(f"{quote_identifier(name)} DESC NULLS LAST" for name in columns)
    parts = [table.schema, table.table] if table.schema else [table.table]
    sql = f"SELECT DISTINCT {names} FROM {qualified_name(*parts)} ORDER BY {order}"
    return sql if limit is None else f"{sql} LIMIT {int(limit)}"


def _missing(value: Any) -> bool:
    """Whether a value of a pandas frame stands for NULL."""
    if value is None:
        return True
    try:
        # NaN (a NULL float) and NaT (a NULL timestamp) differ from themselves.
        return bool(value != value)  # noqa: PLR0124
    except TypeError:  # pandas.NA, whose comparisons have no truth value
        return True


def latest_values(database: Any, table: Any, columns: list[str]) -> list[Any] | None:
    """The values of the latest partition, one per column; None if there is no row.

    Args:
        database: Superset's ``Database``: its ``get_df(sql, catalog, schema)``
            runs the query.
        table: Superset's ``Table``.
        columns: the partition columns (not empty).
    """
    frame = database.get_df(
        partition_query(table, columns, limit=1), catalog=table.catalog, schema=table.schema
    )
    records = frame.to_dict("records")
    if not records:
        return None
    row = records[0]
    values = [row[name] for name in columns]
    return [None if _missing(value) else value for value in values]


def json_value(value: Any) -> Any:
    """A partition value as JSON can carry it: dates and times in ISO form, decimals as text."""
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value
