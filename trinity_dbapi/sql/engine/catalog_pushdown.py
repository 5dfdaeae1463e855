"""Which catalog rows a query needs: its WHERE clause as a :class:`CatalogScope`.

Before a catalog table (``system.tables``, ``information_schema.columns``,
...) is built, the query reading it is looked at: every top-level AND-ed
``name_column = 'text'``, ``name_column IN ('a', 'b')`` or ``name_column LIKE
'prefix%'`` on a namespace or table name column narrows the objects whose
rows are built to point lookups or a key range scan; a query that reads
nothing but name columns reads no definition file. DuckDB still evaluates
the whole WHERE clause over the rows built, so the scope only ever decides
what is *built*, never what is answered: anything not understood (OR, NOT,
ILIKE, a comparison with a non-text value) narrows nothing.

``system.versions`` is narrowed by bounds on ``version`` (integers) and
``created_at`` (timestamps read as DuckDB reads them, in the session's UTC),
and its ``ORDER BY version LIMIT k`` by k, when those bounds are exactly
the whole WHERE clause (:class:`~trinity_dbapi.lakehouse.catalog_scope.VersionScope`).

The WHERE clause, and which of its columns are the catalog table's, are
found as for file pruning (:mod:`~trinity_dbapi.sql.engine.predicates`).

Imports from sql/engine/: predicates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from sqlglot import exp

from trinity_dbapi.lakehouse.catalog import INFORMATION_SCHEMA, SYSTEM
from trinity_dbapi.lakehouse.catalog_scope import (
    EVERYTHING,
    NAME_COLUMNS,
    CatalogScope,
    VersionScope,
    names_scope,
)
from trinity_dbapi.sql.binding import as_utc, exact_timestamp
from trinity_dbapi.sql.compat import DType
from trinity_dbapi.sql.engine.predicates import column_of, conjuncts, sources

#: Tables whose every row comes from a definition file unless only keys are read.
_KEYS_ONLY_OK = frozenset({(SYSTEM, "tables"), (INFORMATION_SCHEMA, "tables")})
_LIKE_WILDCARDS = "%_\\"


def catalog_scope(
    node: exp.Table, params: Sequence[Any], namespace: str, table: str
) -> CatalogScope:
    """The objects whose rows the query around ``node`` (catalog table ``namespace.table``) needs.

    Args:
        node: the catalog table's reference in the query, before it is rewritten.
        params: the statement's parameter values ($1 is ``params[0]``).
        namespace: ``system`` or ``information_schema``.
        table: the catalog table's name.
    """
    if (namespace, table) == (SYSTEM, "versions"):
        return CatalogScope(versions=_version_scope(node, params))
    names = NAME_COLUMNS.get((namespace, table))
    if names is None:
        return EVERYTHING
    ns_column, table_column = names
    keys_only = (namespace, table) in _KEYS_ONLY_OK and _reads_only(
        node, {ns_column, table_column or ns_column}
    )
    return names_scope(names, _conjuncts(node, params), definitions=not keys_only)


def _conjuncts(node: exp.Table, params: Sequence[Any]) -> list[tuple[str, list[str], bool]]:
    """``(column, text values, is a LIKE prefix)`` of each usable top-level AND-ed condition."""
    found = []
    for conjunct in conjuncts(node) or ():
        usable = _condition(conjunct, params)
        if usable is None:
            continue
        column, values, is_prefix = usable
        if column_of(node, column):
            found.append((column.name.casefold(), values, is_prefix))
    return found


def _unparen(node: exp.Expr) -> exp.Expr:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _condition(
    condition: exp.Expr, params: Sequence[Any]
) -> tuple[exp.Column, list[str], bool] | None:
    if isinstance(condition, exp.EQ):
        left, right = condition.this, condition.expression
        if isinstance(right, exp.Column):
            left, right = right, left
        value = _text(right, params)
        if isinstance(left, exp.Column) and value is not None:
            return left, [value], False
        return None
    if isinstance(condition, exp.In) and isinstance(condition.this, exp.Column):
        if condition.args.get("query") or condition.args.get("unnest"):
            return None
        values = [_text(item, params) for item in condition.expressions]
        if not values or any(v is None for v in values):
            return None  # NULL matches nothing, but a non-text value is not understood
        return condition.this, [v for v in values if v is not None], False
    if isinstance(condition, exp.Like) and isinstance(condition.this, exp.Column):
        pattern = _text(condition.expression, params)
        if pattern is None:
            return None
        end = min((i for i, c in enumerate(pattern) if c in _LIKE_WILDCARDS), default=None)
        prefix = pattern if end is None else pattern[:end]
        return condition.this, [prefix], True
    return None


def _text(node: exp.Expr, params: Sequence[Any]) -> str | None:
    """The text of a string literal or a text parameter; None for anything else."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Literal) and node.is_string:
        return str(node.this)
    if isinstance(node, exp.Placeholder) and str(node.this).isdigit():
        index = int(node.this) - 1
        value = params[index] if 0 <= index < len(params) else None
        return value if isinstance(value, str) else None
    return None


def _reads_only(node: exp.Table, columns: set[str]) -> bool:
    """Whether the whole statement names no column of any table but ``columns``.

    Conservative: any ``*`` (``SELECT *``, ``count(*)``, ``t.*``) or any
    other column name anywhere in the statement means definitions are read.
    """
    root = node.root()
    if any(True for _ in root.find_all(exp.Star)):
        return False
    return all(column.name.casefold() in columns for column in root.find_all(exp.Column))


def _version_scope(node: exp.Table, params: Sequence[Any]) -> VersionScope | None:
    """The versions ``system.versions`` must build for the query around ``node``.

    AND-ed ``version`` comparisons (``=``, ``IN``, ``<``, ``<=``, ``>``,
    ``>=``, ``BETWEEN``) with integers, and ``created_at`` comparisons with
    a timestamp (literal, text or bound datetime) bound the versions; any
    other condition narrows nothing. ``ORDER BY version [DESC] LIMIT k``
    reads only k versions of the range when the bounds are the whole WHERE
    clause, exactly.
    """
    found = conjuncts(node)
    if found is None:
        return None
    bounds = _VersionBounds()
    exact = True
    for conjunct in found:  # every one is added: no short cut
        exact = bounds.add(node, conjunct, params) and exact
    limit = _limit(node, params) if exact else None
    if bounds.empty and limit is None:
        return None
    count, newest_first = limit if limit is not None else (None, True)
    return VersionScope(
        lowest=bounds.lowest,
        highest=bounds.highest,
        numbers=bounds.numbers,
        created_from=bounds.created_from,
        created_to=bounds.created_to,
        count=count,
        newest_first=newest_first,
    )


#: ``value OP column`` is ``column FLIPPED[OP] value``.
_FLIPPED: Mapping[type[exp.Expr], type[exp.Expr]] = {
    exp.EQ: exp.EQ,
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
}
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


class _VersionBounds:
    """Inclusive bounds on ``version`` and ``created_at`` (ms), from conditions understood."""

    def __init__(self) -> None:
        self.lowest: int | None = None
        self.highest: int | None = None
        self.numbers: frozenset[int] | None = None
        self.created_from: int | None = None
        self.created_to: int | None = None

    @property
    def empty(self) -> bool:
        """Whether no condition bounded anything."""
        return all(
            bound is None
            for bound in (
                self.lowest,
                self.highest,
                self.numbers,
                self.created_from,
                self.created_to,
            )
        )

    def add(self, node: exp.Table, condition: exp.Expr, params: Sequence[Any]) -> bool:
        """Narrow by ``condition``; whether it was understood exactly (else it narrows nothing)."""
        if isinstance(condition, exp.In):
            return self._in(node, condition, params)
        if isinstance(condition, exp.Between):
            if condition.args.get("symmetric"):
                return False
            column = condition.this
            sides = [
                _bound(node, column, exp.GTE, condition.args.get("low"), params),
                _bound(node, column, exp.LTE, condition.args.get("high"), params),
            ]
        elif type(condition) in _FLIPPED:
            left, right = condition.this, condition.expression
            op = type(condition)
            if not isinstance(_unparen(left), exp.Column):
                left, right, op = right, left, _FLIPPED[op]
            sides = [_bound(node, left, op, right, params)]
        else:
            return False
        if any(side is None for side in sides):
            return False  # a BETWEEN narrows by both of its bounds or by neither
        for side in sides:
            assert side is not None
            name, op, value = side
            if name == "version":
                self._versions(op, value)
            else:
                self._created(op, value)
        return True

    def _in(self, node: exp.Table, condition: exp.In, params: Sequence[Any]) -> bool:
        column = _unparen(condition.this)
        if condition.args.get("query") or condition.args.get("unnest"):
            return False
        if not isinstance(column, exp.Column) or column.name.casefold() != "version":
            return False
        if not column_of(node, column):
            return False
        numbers = [_integer(item, params) for item in condition.expressions]
        if not numbers or any(number is None for number in numbers):
            return False
        found = frozenset(number for number in numbers if number is not None)
        self.numbers = found if self.numbers is None else self.numbers & found
        return True

    def _versions(self, op: type[exp.Expr], number: int) -> None:
        if op is exp.EQ:
            found = frozenset({number})
            self.numbers = found if self.numbers is None else self.numbers & found
            return
        lows: dict[type[exp.Expr], int] = {exp.GT: number + 1, exp.GTE: number}
        highs: dict[type[exp.Expr], int] = {exp.LT: number - 1, exp.LTE: number}
        low, high = lows.get(op), highs.get(op)
        if low is not None:
            self.lowest = low if self.lowest is None else max(self.lowest, low)
        if high is not None:
            self.highest = high if self.highest is None else min(self.highest, high)

    def _created(self, op: type[exp.Expr], micros: int) -> None:
        # created_at holds whole milliseconds: bound it by the ones on each side.
        floor, ceiling = micros // 1000, -(-micros // 1000)
        lows: dict[type[exp.Expr], int] = {exp.EQ: ceiling, exp.GT: floor + 1, exp.GTE: ceiling}
        highs: dict[type[exp.Expr], int] = {exp.EQ: floor, exp.LT: ceiling - 1, exp.LTE: floor}
        low, high = lows.get(op), highs.get(op)
        if low is not None:
            self.created_from = low if self.created_from is None else max(self.created_from, low)
        if high is not None:
            self.created_to = high if self.created_to is None else min(self.created_to, high)


def _bound(
    node: exp.Table,
    column: exp.Expr,
    op: type[exp.Expr],
    value: exp.Expr | None,
    params: Sequence[Any],
) -> tuple[str, type[exp.Expr], int] | None:
    """``(column name, operator, value)`` of ``column OP value`` on ``version`` or
    ``created_at`` of ``node``; the value of ``created_at`` in µs. None if not understood."""
    column = _unparen(column)
    if value is None or not isinstance(column, exp.Column) or not column_of(node, column):
        return None
    name = column.name.casefold()
    if name == "version":
        number = _integer(value, params)
    elif name == "created_at":
        number = _micros(value, params)
    else:
        return None
    return None if number is None else (name, op, number)


def _integer(node: exp.Expr, params: Sequence[Any]) -> int | None:
    """An integer literal (maybe negated) or integer parameter; None for anything else."""
    node = _unparen(node)
    if isinstance(node, exp.Neg):
        value = _integer(node.this, params)
        return None if value is None else -value
    if isinstance(node, exp.Literal) and not node.is_string and node.is_int:
        return int(node.this)
    if isinstance(node, exp.Placeholder) and str(node.this).isdigit():
        index = int(node.this) - 1
        value = params[index] if 0 <= index < len(params) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _micros(node: exp.Expr, params: Sequence[Any]) -> int | None:
    """The instant a timestamp value stands for, in µs since the epoch; None if unsure.

    A string is cast to the column's ``TIMESTAMP WITH TIME ZONE``; a
    ``TIMESTAMP`` without zone is read in the session's time zone, UTC; a
    bound naive datetime is UTC, as binding takes it. Anything else (a
    DATE, other precisions, an expression, NULL) is not understood.
    """
    node = _unparen(node)
    instant: datetime | None = None
    if isinstance(node, exp.Literal) and node.is_string:
        instant = exact_timestamp(str(node.this), zoned=True)
    elif isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        kind = node.to.this
        if kind == DType.TIMESTAMPTZ:
            instant = exact_timestamp(str(node.this.this), zoned=True)
        elif kind in (DType.TIMESTAMP, DType.TIMESTAMPNTZ):
            instant = exact_timestamp(str(node.this.this), zoned=False)
    elif isinstance(node, exp.Placeholder) and str(node.this).isdigit():
        index = int(node.this) - 1
        value = params[index] if 0 <= index < len(params) else None
        if isinstance(value, datetime):
            instant = as_utc(value)
        elif isinstance(value, str):
            instant = exact_timestamp(value, zoned=True)
    if instant is None:
        return None
    return (instant - _EPOCH) // _MICROSECOND


def _limit(node: exp.Table, params: Sequence[Any]) -> tuple[int, bool] | None:
    """``(k, newest first)`` of ``... FROM system.versions ORDER BY version [DESC] LIMIT k``.

    k counts the OFFSET too. Only for a plain select of that one table: no
    grouping, DISTINCT, window or aggregate could make it need more rows
    than that. The caller makes sure the WHERE clause is exactly the bounds.
    """
    select = node.parent_select
    if select is None or sources(select) != [node]:
        return None
    if any(select.args.get(arg) for arg in ("group", "having", "distinct", "qualify")):
        return None
    if any(True for _ in select.find_all(exp.AggFunc, exp.Window)):
        return None
    order = select.args.get("order")
    if order is None or not order.expressions:
        return None
    first = order.expressions[0]
    column = first.this
    if not isinstance(column, exp.Column) or column.name.casefold() != "version":
        return None
    if column.table not in ("", node.alias_or_name):
        return None
    for projection in select.expressions:
        # ORDER BY version may name an output column: it must be the column itself.
        if projection.alias_or_name.casefold() == "version" and not (
            isinstance(projection.unalias(), exp.Column)
            and projection.unalias().name.casefold() == "version"
        ):
            return None
    count = _count(select.args.get("limit"), params)
    offset = _count(select.args.get("offset"), params) if select.args.get("offset") else 0
    if count is None or offset is None:
        return None
    return count + offset, bool(first.args.get("desc"))


def _count(clause: exp.Expression | None, params: Sequence[Any]) -> int | None:
    """The non-negative integer of a LIMIT or OFFSET clause; None if not a plain one."""
    if clause is None:
        return None
    value = clause.args.get("expression") or clause.this
    number: Any = None
    if isinstance(value, exp.Literal) and value.is_int:
        number = int(value.this)
    elif isinstance(value, exp.Placeholder) and str(value.this).isdigit():
        index = int(value.this) - 1
        number = params[index] if 0 <= index < len(params) else None
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        return None
    return number
