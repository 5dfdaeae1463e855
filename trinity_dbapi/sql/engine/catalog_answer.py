"""Point queries over one catalog table, answered without DuckDB.

Tools look objects up with queries like ``SELECT column_name, data_type
FROM information_schema.columns WHERE table_schema = 'n1' AND table_name =
't1' ORDER BY ordinal_position``. The catalog scope already builds only the
rows of ``n1.t1`` (a point lookup and a cached definition: tens of
microseconds); handing those rows to DuckDB to filter and sort them costs
milliseconds (registering an Arrow table, planning, converting the result).
So this narrow, exactly understood shape is evaluated here, with Arrow:

* one catalog table (any ``FOR SYSTEM_VERSION``), nothing else: no join,
  DISTINCT, GROUP BY, LIMIT, window or subquery;
* a select list of ``*`` and plain column names (optionally aliased);
* a WHERE clause that is an AND of ``column = constant`` and ``column IN
  (constants)``, each constant of the column's own kind (text for text
  columns, an integer for integer columns, a boolean for boolean ones);
* ORDER BY plain columns, ascending or descending, NULLs last.

Every column involved must be text, integer or boolean, the types whose
equality, order and Arrow result type are the same in Arrow and in DuckDB.
Any other query, or any doubt (a name written in another case, a NULL, a
cast), returns None and DuckDB answers it, as before. The tests compare this
path with DuckDB's answers, ``cursor.description`` included.

Imports from sql/engine/: catalog_pushdown, predicates, session.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from trinity_dbapi.format import arrow_values
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql.engine import catalog_pushdown
from trinity_dbapi.sql.engine.predicates import constant

if TYPE_CHECKING:
    from trinity_dbapi.sql.engine.session import Session
    from trinity_dbapi.sql.model import TableRef

__all__ = ["answer"]

#: Select arguments this path understands; any other one set means DuckDB.
_UNDERSTOOD = frozenset({"expressions", "from", "from_", "where", "order"})


class _NotHere(Exception):
    """The query is not of the shape evaluated here: DuckDB answers it."""


def _kind(data_type: pa.DataType) -> type | None:
    """The Python type of constants comparable with a column here; None: not handled."""
    if pa.types.is_string(data_type):
        return str
    if pa.types.is_integer(data_type):
        return int
    if pa.types.is_boolean(data_type):
        return bool
    return None


def answer(
    session: Session, expression: exp.Expression, refs: Sequence[TableRef], params: Sequence[Any]
) -> pa.Table | None:
    """The rows of ``expression`` if it is a point query over one catalog table, else None."""
    if len(refs) != 1 or not isinstance(expression, exp.Select):
        return None
    ref = refs[0]
    namespace = ref.table.namespace or session.namespace
    if namespace not in catalog.RESERVED_NAMESPACES:
        return None
    if not catalog.is_catalog_table(namespace, ref.table.name):
        return None  # DuckDB's path raises the error that names it
    try:
        plan = _Plan(expression, ref.node, catalog.catalog_schema(namespace, ref.table.name))
        plan.check_shape()
        projection = plan.projection()
        filters = plan.filters(params)
        order = plan.order(projection)
    except _NotHere:
        return None
    view, snapshot = session.view_for(ref.as_of)
    # by module attribute: the tests swap it to build whole tables as their oracle
    scope = catalog_pushdown.catalog_scope(ref.node, params, namespace, ref.table.name)
    rows = list(catalog.catalog_rows(view, snapshot, namespace, ref.table.name, scope))
    for column, values in filters:
        # Constants have the column's own kind (see _Plan.filters), so Python's
        # equality is Arrow's and DuckDB's; a NULL never matches.
        allowed = frozenset(values)
        rows = [row for row in rows if row.get(column) in allowed]
    for column, direction in reversed(order):  # stable sorts, the last key first
        known = [row for row in rows if row.get(column) is not None]
        known.sort(key=operator.itemgetter(column), reverse=direction == "descending")
        rows = known + [row for row in rows if row.get(column) is None]  # NULLs last
    # Python orders str by code point, which is UTF-8 byte order: DuckDB's.
    schema = pa.schema([pa.field(name, plan.type_of(source)) for source, name in projection])
    try:
        columns = [
            arrow_values.array([row.get(source) for row in rows], plan.type_of(source))
            for source, _ in projection  # not pa.array: it imports pandas
        ]
    except (pa.ArrowException, OverflowError):
        return None  # a value Arrow would not take: DuckDB's path reports it
    return pa.Table.from_arrays(columns, schema=schema)


class _Plan:
    """Reads one SELECT; each method raises :class:`_NotHere` on anything it does not know."""

    def __init__(self, select: exp.Select, node: exp.Table, schema: pa.Schema) -> None:
        self.select = select
        self.node = node
        self.schema = schema

    def check_shape(self) -> None:
        for key, value in self.select.args.items():
            if value in (None, [], False):
                continue
            if key not in _UNDERSTOOD:
                raise _NotHere(key)
        source = self.select.args.get("from_") or self.select.args.get("from")
        if source is None or source.this is not self.node:
            raise _NotHere("from")
        if self.node.args.get("alias") is not None:
            raise _NotHere("alias")  # a qualified column could then name it: keep it simple

    def type_of(self, column: str) -> pa.DataType:
        return self.schema.field(column).type

    def column(self, node: exp.Expression) -> str:
        """A handled column of the table named exactly as the schema spells it."""
        if (
            not isinstance(node, exp.Column)
            or node.table
            or not isinstance(node.this, exp.Identifier)
        ):
            raise _NotHere("column")
        name = node.name
        if self.schema.get_field_index(name) < 0 or _kind(self.schema.field(name).type) is None:
            raise _NotHere(name)
        return name

    def projection(self) -> list[tuple[str, str]]:
        """(source column, result name) per result column."""
        out: list[tuple[str, str]] = []
        for item in self.select.expressions:
            if isinstance(item, exp.Star):
                names = self.schema.names
                if any(_kind(self.schema.field(n).type) is None for n in names):
                    raise _NotHere("*")
                out.extend((name, name) for name in names)
            elif isinstance(item, exp.Alias):
                out.append((self.column(item.this), item.alias))
            else:
                name = self.column(item)
                out.append((name, name))
        if not out or len({name.casefold() for _, name in out}) != len(out):
            raise _NotHere("names")  # DuckDB renames duplicates: leave that to it
        return out

    def filters(self, params: Sequence[Any]) -> list[tuple[str, list[Any]]]:
        where = self.select.args.get("where")
        if where is None:
            return []
        out = []
        for condition in _conjuncts(where.this):
            if isinstance(condition, exp.EQ):
                column, values = self.column(condition.this), [condition.expression]
            elif isinstance(condition, exp.In) and not (
                condition.args.get("query") or condition.args.get("unnest")
            ):
                column, values = self.column(condition.this), list(condition.expressions)
            else:
                raise _NotHere("condition")
            kind = _kind(self.schema.field(column).type)
            found = [constant(value, params) for value in values]
            # bool is an int in Python: compare kinds exactly
            if not found or any(type(value) is not kind for value in found):
                raise _NotHere("constant")
            out.append((column, found))
        return out

    def order(self, projection: list[tuple[str, str]]) -> list[tuple[str, str]]:
        order = self.select.args.get("order")
        if order is None:
            return []
        # ORDER BY prefers a result column's alias to the table's column of that name
        renamed = {name.casefold() for source, name in projection if source != name}
        keys = []
        for item in order.expressions:
            if not isinstance(item, exp.Ordered):
                raise _NotHere("order")
            if isinstance(item.this, exp.Column) and item.this.name.casefold() in renamed:
                raise _NotHere("alias")
            keys.append(
                (self.column(item.this), "descending" if item.args.get("desc") else "ascending")
            )
            if item.args.get("nulls_first"):
                # Arrow places NULLs per sort (per key only in recent releases)
                raise _NotHere("nulls first")
        return keys


def _conjuncts(condition: exp.Expression) -> list[exp.Expression]:
    while isinstance(condition, exp.Paren):
        condition = condition.this
    if isinstance(condition, exp.And):
        return _conjuncts(condition.this) + _conjuncts(condition.expression)
    return [condition]
