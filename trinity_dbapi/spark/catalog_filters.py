"""Spark's pushed filters as a :class:`~trinity_dbapi.lakehouse.catalog_scope.CatalogScope`.

A catalog table read through the data source (``load("information_schema.columns")``)
is built on the driver from the objects its filters can match, as a SQL
query's WHERE clause narrows it (:mod:`trinity_dbapi.sql.engine.catalog_pushdown`):
``name_column = 'text'`` and ``name_column IN ('a', 'b')`` on a namespace or
table name column become tree point lookups, ``table_name LIKE 'prefix%'``
(Spark's ``StringStartsWith``) a key range scan. Spark hands the filters
AND-ed; anything else (``NOT``, ranges, a non-text value, a nested column)
narrows nothing. The scope decides only which rows are *built*: every filter
is still returned to Spark, which evaluates it on those rows.

Imports from spark/: nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pyspark.sql.datasource import EqualNullSafe, EqualTo, In, StringStartsWith

from trinity_dbapi.lakehouse.catalog_scope import (
    EVERYTHING,
    NAME_COLUMNS,
    CatalogScope,
    names_scope,
)

__all__ = ["catalog_scope"]


def catalog_scope(
    namespace: str,
    table: str,
    filters: Iterable[Any],
    namespaces: frozenset[str] | None = None,
) -> CatalogScope:
    """The objects whose rows catalog table ``namespace.table`` needs under ``filters``.

    Args:
        namespace: ``system`` or ``information_schema``.
        table: the catalog table's name.
        filters: the filters Spark pushed (``pyspark.sql.datasource.Filter``), AND-ed.
        namespaces: the namespaces the read is restricted to (the ``namespaces``
            read option, as ``register_views(namespaces=...)`` sets it), or None.

    Returns:
        The scope: it includes every object a row matching all filters could
        come from. Definitions are always read (Spark does not tell a data
        source which columns a query uses).
    """
    names = NAME_COLUMNS.get((namespace, table))
    if names is None:  # system.versions: no name columns
        return EVERYTHING
    conditions = (usable for usable in map(_condition, filters) if usable is not None)
    return names_scope(names, conditions, namespaces=namespaces)


def _condition(pushed: Any) -> tuple[str, list[str], bool] | None:
    """``(column, text values, is a prefix)`` of a usable filter, or None."""
    if not isinstance(pushed, (EqualTo, EqualNullSafe, In, StringStartsWith)):
        return None  # Not(...), ranges, IS NULL, ...: not understood
    if len(pushed.attribute) != 1:
        return None  # a nested field
    column = str(pushed.attribute[0]).casefold()
    if isinstance(pushed, In):
        values = list(pushed.value)
        if not values or not all(isinstance(v, str) for v in values):
            return None
        return column, values, False
    if not isinstance(pushed.value, str):
        return None  # NULL (EqualNullSafe), or a value of another type
    return column, [pushed.value], isinstance(pushed, StringStartsWith)
