"""Queries and DML in the statement model: the tables they read and write, and their values.

:func:`~trinity_dbapi.sql.statements.to_statement` hands a query (``SELECT``,
``VALUES``, ``EXPLAIN``, the query of ``CREATE TABLE ... AS`` or of a view)
to :func:`query` and an ``INSERT``, ``UPDATE``, ``DELETE`` or ``MERGE`` to
:func:`dml`. Each copies the shared parsed tree and finds in it:

* the lakehouse tables it names, in textual order (:class:`~trinity_dbapi.sql.model.TableRef`),
  telling them from common table expressions by DuckDB's own scoping rules,
  and refusing file names and table functions outside the sandbox's list;
* each table's time travel (``FOR SYSTEM_VERSION AS OF`` / ``FOR SYSTEM_TIME
  AS OF``), its ``?`` bound into the tree;
* the other ``?`` placeholders, renumbered 1..k for DuckDB, with their values.

:func:`table_name` is the ``[namespace.]table`` of any statement.

Imports from sql/: binding, compat, expressions, model, parser, table_functions,
types_sql.
"""

from __future__ import annotations

from datetime import date, datetime, timezone

from sqlglot import exp

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql.binding import Binder, as_utc, literal_value, parse_timestamp, value_node
from trinity_dbapi.sql.compat import meta_get
from trinity_dbapi.sql.model import AsOf, Dml, Query, TableName, TableRef
from trinity_dbapi.sql.parser import TrinityParser
from trinity_dbapi.sql.table_functions import (
    check_table_functions,
    lakehouse_function,
    refuse_file_name,
)
from trinity_dbapi.sql.types_sql import name_of

__all__ = ["as_of", "dml", "query", "table_name"]


def table_name(table: exp.Table) -> TableName:
    if table.args.get("catalog") or not isinstance(table.this, exp.Identifier):
        raise ProgrammingError(
            f"{table.sql(dialect='trinity')} is not a table name: write [namespace.]table "
            "(a ? placeholder cannot stand for a name)"
        )
    db = table.args.get("db")
    return TableName(name_of(db) if db else None, name_of(table.this))


def as_of(table: exp.Table, binder: Binder) -> AsOf | None:
    """The time travel target of a table name (its ``FOR ... AS OF`` clause), or None."""
    return _as_of(table.args.get("version"), binder)


def _as_of(version: exp.Version | None, binder: Binder) -> AsOf | None:
    if version is None:
        return None
    spelling = version.name
    value = literal_value(version.expression, binder)
    clause = f"FOR {spelling} AS OF"
    if TrinityParser.TIME_TRAVEL_BY_TIME[spelling]:
        if isinstance(value, datetime):
            return AsOf("timestamp", as_utc(value))
        if isinstance(value, date):
            midnight = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
            return AsOf("timestamp", midnight)
        if isinstance(value, str):
            return AsOf("timestamp", parse_timestamp(value, f"the {clause} value"))
        rule = "a datetime or an ISO timestamp string"
    else:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return AsOf("version", value)
        if isinstance(value, str):
            return AsOf("export", value)
        rule = "a version number (int >= 0) or an export name (str)"
    raise ProgrammingError(f"{clause} got {value!r}; it takes {rule}")


def _is_cte(table: exp.Table) -> bool:
    """Whether DuckDB binds ``table`` to a common table expression (else: a lakehouse table).

    DuckDB's scoping, which this must match exactly (a name it does not bind
    to a CTE it looks up as a table, and then as a file by a replacement
    scan): a CTE is visible to the body of its WITH and to the CTEs after it,
    not to itself or the ones before it, except a RECURSIVE one to the
    recursive (right) branch of its own UNION; an inner WITH hides an outer one.
    """
    if table.args.get("db") or table.args.get("catalog"):
        return False
    name = name_of(table.this)
    path = {id(table)}
    ancestor = table.parent
    while ancestor is not None:
        path.add(id(ancestor))
        with_ = ancestor.args.get("with_")
        if with_ and _cte_visible(with_, name, table, path):
            if table.args.get("version"):
                raise ProgrammingError(
                    f"{name!r} is a common table expression, which has no versions to travel "
                    "to; put FOR SYSTEM_VERSION / FOR SYSTEM_TIME on the tables it reads"
                )
            return True
        ancestor = ancestor.parent
    return False


def _cte_visible(with_: exp.With, name: str, table: exp.Table, path: set[int]) -> bool:
    """Whether a CTE ``name`` of ``with_`` is visible where ``table`` stands."""
    ctes = with_.expressions
    inside = next((i for i, cte in enumerate(ctes) if id(cte) in path), None)
    for i, cte in enumerate(ctes):
        if name_of(cte.args["alias"].this) != name:
            continue
        if inside is None or i < inside:
            return True
        if i == inside and with_.args.get("recursive"):
            body = cte.this
            recursive = body.expression.find_all(exp.Table) if isinstance(body, exp.Union) else ()
            if any(node is table for node in recursive):
                return True
    return False


def _text_position(table: exp.Table) -> int:
    """Where a table reference starts in the statement text (parsed identifiers know)."""
    start = meta_get(table.this, "start") if isinstance(table.this, exp.Expression) else None
    return start if isinstance(start, int) else -1


def _table_refs(
    expression: exp.Expression, binder: Binder, target: exp.Table | None = None
) -> tuple[TableRef, ...]:
    """The real tables of ``expression`` in textual order; a DML ``target`` comes first.

    The target is always a real table, even where a common table expression
    has its name (``WITH t AS (...) INSERT INTO t ...`` writes table ``t``).
    """
    refs = []
    if target is not None:
        refs.append(TableRef(target, table_name(target), None))
    check_table_functions(expression)
    tables = sorted(expression.find_all(exp.Table), key=_text_position)
    for table in tables:
        if table is target:
            continue
        function = lakehouse_function(table.this)
        if function is not None:  # system.table_changes(...): the engine computes it
            arguments = tuple(literal_value(arg, binder) for arg in table.this.expressions)
            refs.append(TableRef(table, TableName("system", function), None, arguments))
            continue
        if table.this is None or isinstance(table.this, exp.Func):
            continue  # ROWS FROM or a table function, both whitelisted above
        if not isinstance(table.this, exp.Identifier):
            table_name(table)  # raises: a placeholder (or anything else) is not a name
        if table.this.meta.get(texp.STRING_NAME):
            raise refuse_file_name(table.this.name)
        if _is_cte(table):
            continue
        refs.append(TableRef(table, table_name(table), _as_of(table.args.get("version"), binder)))
    return tuple(refs)


def _bind_placeholders(expression: exp.Expression, binder: Binder) -> tuple[object, ...]:
    """Bind time travel values into ``expression``; number the other ``?`` 1..n in text order.

    The arguments of the lakehouse's table functions are bound too: the
    engine reads them, DuckDB never sees them.
    """
    functions = [t.this for t in expression.find_all(exp.Table) if lakehouse_function(t.this)]
    for version in [*expression.find_all(exp.Version), *functions]:
        for placeholder in list(version.find_all(exp.Placeholder)):
            placeholder.replace(value_node(binder.value(placeholder)))
    remaining = sorted(expression.find_all(exp.Placeholder), key=lambda p: int(p.name))
    values = []
    for number, placeholder in enumerate(remaining, start=1):
        values.append(binder.value(placeholder))
        placeholder.set("this", str(number))
    return tuple(values)


def query(node: exp.Expression, binder: Binder) -> Query:
    """A copy of the query's tree with its tables found and its placeholders bound."""
    expression = node.copy()
    refs = _table_refs(expression, binder)
    params = _bind_placeholders(expression, binder)
    return Query(expression, refs, len(params), params)


def _dml_target(expression: exp.Expression) -> exp.Table:
    """The table an ``INSERT`` (``INTO t`` or ``INTO t (columns)``), UPDATE or DELETE writes."""
    target = expression.this
    if isinstance(target, exp.Schema):
        target = target.this
    if not isinstance(target, exp.Table):
        raise ProgrammingError(
            f"{expression.sql(dialect='trinity')!r} does not write a table: name one as "
            "[namespace.]table"
        )
    version = target.args.get("version")
    if version is not None:
        kind, name = expression.key.upper(), table_name(target).name
        raise ProgrammingError(
            f"{kind} writes the current version of table {name!r}; FOR {version.name} AS OF "
            f"applies to the tables a statement reads: remove it from the {kind} target"
        )
    return target


def dml(node: exp.Expression, binder: Binder) -> Dml:
    """Like :func:`query`, with the written table first in ``tables``."""
    expression = node.copy()
    refs = _table_refs(expression, binder, target=_dml_target(expression))
    params = _bind_placeholders(expression, binder)
    return Dml(expression, refs, len(params), params)
