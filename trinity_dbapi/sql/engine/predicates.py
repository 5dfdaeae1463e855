"""A query's WHERE clause around one table reference, as plain values.

Before DuckDB opens a managed table, the planner looks at the WHERE clause
of the SELECT that reads it (:func:`scan_predicate`): every top-level AND-ed
``column = value`` or ``column IN (values)`` on one of its columns, and every
``column >= c`` / ``>`` / ``<=`` / ``<`` / ``BETWEEN`` range, becomes the
plain-value :data:`~trinity_dbapi.tables.scan.Predicate` scan planning prunes
files by (partition values, indices, value bounds). Anything not understood
is left to DuckDB, which still evaluates the whole WHERE clause: pruning only
ever skips files that cannot hold a matching row.

The clause is found here for the catalog tables too
(:mod:`~trinity_dbapi.sql.engine.catalog_pushdown`: :func:`conjuncts`,
:func:`column_of`), and :func:`constant` reads a literal or a parameter for
MERGE's pruning and the catalog answers as well.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from trinity_dbapi.tables.partitions import ValueRange
from trinity_dbapi.tables.scan import conjoined

__all__ = ["NO_VALUE", "column_of", "conjuncts", "constant", "scan_predicate", "sources"]

#: What :func:`constant` returns for an expression that is not a constant we trust.
NO_VALUE = object()


def sources(select: exp.Select) -> list[exp.Expression]:
    """What ``select`` reads from: its FROM source, then each joined one."""
    found: list[exp.Expression] = []
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None:
        found.append(from_.this)
    found.extend(join.this for join in select.args.get("joins") or ())
    return found


def conjuncts(node: exp.Table) -> list[exp.Expr] | None:
    """The top-level AND-ed conditions of the WHERE clause of the select reading ``node``.

    Parentheses around each are removed. None when ``node`` is not a source
    of its select (a subquery's table is not narrowed by the outer WHERE);
    empty without WHERE.
    """
    select = node.parent_select
    if select is None or not any(source is node for source in sources(select)):
        return None
    where = select.args.get("where")
    if where is None:
        return []
    found = where.this.flatten() if isinstance(where.this, exp.And) else [where.this]
    return [condition.unnest() for condition in found]


def column_of(node: exp.Table, column: exp.Column) -> bool:
    """Whether ``column`` surely is a column of ``node`` (a source of its select).

    Unqualified: only when the select reads ``node`` alone. Qualified: the
    qualifier must be the node's alias or name, with the node's namespace
    when it names one; ``t.c`` beside both ``t`` and ``s.t`` is not decided
    here (pruning must never skip a file of the table a column is not of).
    """
    select = node.parent_select
    if select is None:
        return False
    read = sources(select)
    if not column.table:
        return len(read) == 1
    name = node.alias_or_name
    if column.table != name:
        return False
    if column.db or column.catalog:
        return (
            not node.alias
            and column.db == node.db
            and (not column.catalog or column.catalog == node.catalog)
        )
    return sum(1 for source in read if source.alias_or_name == name) == 1


def scan_predicate(node: exp.Table, params: Sequence[Any]) -> dict[str, Sequence[Any] | ValueRange]:
    """The plain-value predicate the WHERE around ``node`` demands of every row of its table.

    ``column -> allowed values`` for ``column = c`` and ``column IN (c, ...)``
    (NULL dropped: it matches nothing), ``column -> ValueRange`` for ``>=``,
    ``>``, ``<=``, ``<`` (either side) and ``BETWEEN``; conditions on one
    column are ANDed by :func:`~trinity_dbapi.tables.scan.conjoined`. A
    strict lower bound is kept as inclusive (pruning may read more, never less).

    Args:
        node: a table reference of a query (before it is rewritten).
        params: the statement's parameter values ($1 is ``params[0]``).
    """
    found: dict[str, Sequence[Any] | ValueRange] = {}
    for condition in conjuncts(node) or ():
        for column, demanded in _terms(condition, params):
            if column_of(node, column):
                found[column.name] = conjoined(found.get(column.name), demanded)
    return found


#: ``value OP column`` is ``column FLIPPED[OP] value``.
_FLIPPED: dict[type, type] = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE}


def _terms(
    condition: exp.Expr, params: Sequence[Any]
) -> list[tuple[exp.Column, list[Any] | ValueRange]]:
    """``(column, allowed values or ValueRange)`` of one condition; empty if not understood."""
    if isinstance(condition, exp.EQ):
        left, right = condition.this, condition.expression
        if isinstance(right, exp.Column):
            left, right = right, left
        value = constant(right, params)
        if isinstance(left, exp.Column) and value is not NO_VALUE and value is not None:
            return [(left, [value])]
        return []
    if isinstance(condition, exp.In) and isinstance(condition.this, exp.Column):
        if condition.args.get("query") or condition.args.get("unnest"):
            return []
        values = [constant(item, params) for item in condition.expressions]
        if not values or any(v is NO_VALUE for v in values):
            return []
        return [(condition.this, [v for v in values if v is not None])]
    if isinstance(condition, exp.Between) and isinstance(condition.this, exp.Column):
        if condition.args.get("symmetric"):
            return []
        low_node, high_node = condition.args.get("low"), condition.args.get("high")
        if low_node is None or high_node is None:
            return []
        low, high = constant(low_node, params), constant(high_node, params)
        if low is NO_VALUE or high is NO_VALUE or low is None or high is None:
            return []
        return [(condition.this, ValueRange(low, high))]
    kind = type(condition)
    if kind not in _FLIPPED:
        return []
    left, right = condition.this, condition.expression  # type: ignore[attr-defined]
    if isinstance(right, exp.Column) and not isinstance(left, exp.Column):
        left, right, kind = right, left, _FLIPPED[kind]
    if not isinstance(left, exp.Column):
        return []
    value = constant(right, params)
    if value is NO_VALUE or value is None:
        return []
    if kind in (exp.GT, exp.GTE):
        return [(left, ValueRange(low=value))]
    return [(left, ValueRange(high=value, high_inclusive=kind is exp.LTE))]


def constant(node: exp.Expr, params: Sequence[Any]) -> Any:
    """The Python value of a literal, a parameter or a typed literal; :data:`NO_VALUE` otherwise."""
    if isinstance(node, exp.Paren):
        return constant(node.this, params)
    if isinstance(node, exp.Placeholder) and str(node.this).isdigit():
        index = int(node.this) - 1
        return params[index] if 0 <= index < len(params) else NO_VALUE
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        value = constant(node.this, params)
        ok = isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)
        return -value if ok else NO_VALUE
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        try:
            return int(text) if text.lstrip("-").isdigit() else decimal.Decimal(text)
        except decimal.InvalidOperation:
            return NO_VALUE
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        # DATE '2024-01-01', TIMESTAMP '...': the text, cast to the column's type later
        return node.this.this
    return NO_VALUE
