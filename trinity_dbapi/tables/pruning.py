"""Which files a query needs: point predicates on partition and indexed columns, ranges.

Before DuckDB opens a managed table, the planner looks at the WHERE clause
of the SELECT that reads it: every top-level AND-ed ``column = value`` or
``column IN (values)`` on one of its partition columns or indexed columns
narrows the files to scan (partition values from the file labels; indexed
values from the index file, one read), and so do ``column >= c`` /
``<`` / ``BETWEEN`` ranges on the source column of a ``year`` .. ``hour``
partition transform (:func:`range_predicates`). Anything it does not understand is
left to DuckDB, which still evaluates the whole WHERE clause: pruning only
ever skips files that cannot hold a matching row. The files themselves are
chosen by :mod:`~trinity_dbapi.tables.scan`.
"""

from __future__ import annotations

import decimal
from collections.abc import Sequence
from typing import Any

from sqlglot import exp

from trinity_dbapi.tables.partitions import ValueRange

#: Column value -> a Python value; None when the expression is not a constant we trust.
_NO_VALUE = object()
#: What :func:`constant` returns for an expression that is not a constant (public name).
NO_VALUE = _NO_VALUE


def point_predicates(node: exp.Table, params: Sequence[Any]) -> dict[str, list[Any]]:
    """``column -> allowed values`` that the WHERE around ``node`` demands of every row.

    Args:
        node: a table reference of a query (before it is rewritten).
        params: the statement's parameter values ($1 is ``params[0]``).
    """
    select = node.parent_select
    if select is None or not _reads_directly(select, node):
        return {}
    where = select.args.get("where")
    if where is None:
        return {}
    sources = _sources(select)
    allowed: dict[str, list[Any]] = {}
    for conjunct in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        found = _point(conjunct, params)
        if found is None:
            continue
        column, values = found
        if not _names(column, node, sources):
            continue
        previous = allowed.get(column.name)
        allowed[column.name] = values if previous is None else [v for v in values if v in previous]
    return allowed


def range_predicates(node: exp.Table, params: Sequence[Any]) -> dict[str, ValueRange]:
    """``column -> ValueRange`` for the AND-ed comparisons the WHERE around ``node`` demands.

    ``column >= c``, ``>``, ``<=``, ``<`` (either side) and ``column BETWEEN a
    AND b``; bounds of one column narrow each other when they are of one
    comparable kind, else the first is kept. A strict lower bound is kept as
    inclusive (pruning may read more, never less).
    """
    select = node.parent_select
    if select is None or not _reads_directly(select, node):
        return {}
    where = select.args.get("where")
    if where is None:
        return {}
    sources = _sources(select)
    found: dict[str, ValueRange] = {}
    for conjunct in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        for column, bounds in _ranges(conjunct, params):
            if not _names(column, node, sources):
                continue
            found[column.name] = _narrowed(found.get(column.name), bounds)
    return found


def _narrowed(old: ValueRange | None, new: ValueRange) -> ValueRange:
    if old is None:
        return new
    low, high, inclusive = old.low, old.high, old.high_inclusive
    try:
        if new.low is not None and (low is None or new.low > low):  # type: ignore[operator]
            low = new.low
        if new.high is not None and (
            high is None
            or new.high < high  # type: ignore[operator]
            or (new.high == high and not new.high_inclusive)
        ):
            high, inclusive = new.high, new.high_inclusive
    except TypeError:
        return old  # bounds of different kinds (text and a number): keep the first
    return ValueRange(low, high, inclusive)


_FLIPPED: dict[type, type] = {exp.GT: exp.LT, exp.GTE: exp.LTE, exp.LT: exp.GT, exp.LTE: exp.GTE}


def _ranges(condition: exp.Expr, params: Sequence[Any]) -> list[tuple[exp.Column, ValueRange]]:
    if isinstance(condition, exp.Paren):
        return _ranges(condition.this, params)
    if isinstance(condition, exp.Between) and isinstance(condition.this, exp.Column):
        if condition.args.get("symmetric"):
            return []
        low_node, high_node = condition.args.get("low"), condition.args.get("high")
        if low_node is None or high_node is None:
            return []
        low = constant(low_node, params)
        high = constant(high_node, params)
        if low is _NO_VALUE or high is _NO_VALUE or low is None or high is None:
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
    if value is _NO_VALUE or value is None:
        return []
    if kind in (exp.GT, exp.GTE):
        return [(left, ValueRange(low=value))]
    return [(left, ValueRange(high=value, high_inclusive=kind is exp.LTE))]


def _sources(select: exp.Select) -> list[exp.Expression]:
    sources: list[exp.Expression] = []
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None:
        sources.append(from_.this)
    sources.extend(join.this for join in select.args.get("joins") or ())
    return sources


def _names(column: exp.Column, node: exp.Table, sources: Sequence[exp.Expression]) -> bool:
    """Whether ``column`` surely is a column of ``node`` (one of the query's ``sources``).

    Unqualified: only when the query reads ``node`` alone. Qualified: the
    qualifier must be the node's alias or name, with the node's namespace
    when it names one; ``t.c`` beside both ``t`` and ``s.t`` is not decided
    here (pruning must never skip a file of the table a column is not of).
    """
    if not column.table:
        return len(sources) == 1
    name = node.alias_or_name
    if column.table != name:
        return False
    if column.db or column.catalog:
        return (
            not node.alias
            and column.db == node.db
            and (not column.catalog or column.catalog == node.catalog)
        )
    return sum(1 for source in sources if source.alias_or_name == name) == 1


def _reads_directly(select: exp.Select, node: exp.Table) -> bool:
    return any(source is node for source in _sources(select))


def _point(condition: exp.Expr, params: Sequence[Any]) -> tuple[exp.Column, list[Any]] | None:
    """``column = constant`` or ``column IN (constants)``; None for anything else."""
    if isinstance(condition, exp.Paren):
        return _point(condition.this, params)
    if isinstance(condition, exp.EQ):
        left, right = condition.this, condition.expression
        if isinstance(right, exp.Column):
            left, right = right, left
        if isinstance(left, exp.Column):
            value = constant(right, params)
            if value is not _NO_VALUE and value is not None:
                return left, [value]
        return None
    if isinstance(condition, exp.In) and isinstance(condition.this, exp.Column):
        if condition.args.get("query") or condition.args.get("unnest"):
            return None
        values = [constant(item, params) for item in condition.expressions]
        if not values or any(v is _NO_VALUE for v in values):
            return None
        return condition.this, [v for v in values if v is not None]
    return None


def constant(node: exp.Expr, params: Sequence[Any]) -> Any:
    """The Python value of a literal, a parameter or a typed literal; ``_NO_VALUE`` otherwise."""
    if isinstance(node, exp.Paren):
        return constant(node.this, params)
    if isinstance(node, exp.Placeholder) and str(node.this).isdigit():
        index = int(node.this) - 1
        return params[index] if 0 <= index < len(params) else _NO_VALUE
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Neg):
        value = constant(node.this, params)
        ok = isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)
        return -value if ok else _NO_VALUE
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        try:
            return int(text) if text.lstrip("-").isdigit() else decimal.Decimal(text)
        except decimal.InvalidOperation:
            return _NO_VALUE
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        # DATE '2024-01-01', TIMESTAMP '...': the text, cast to the column's type later
        return node.this.this
    return _NO_VALUE
