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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlglot import exp

from trinity_dbapi.lakehouse.catalog import INFORMATION_SCHEMA, SYSTEM
from trinity_dbapi.lakehouse.catalog_scope import EVERYTHING, CatalogScope

#: Per catalog table: (namespace name column, table name column or None).
_NAME_COLUMNS: Mapping[tuple[str, str], tuple[str, str | None]] = {
    (SYSTEM, "namespaces"): ("namespace_name", None),
    (SYSTEM, "tables"): ("namespace_name", "table_name"),
    (SYSTEM, "columns"): ("namespace_name", "table_name"),
    (INFORMATION_SCHEMA, "schemata"): ("schema_name", None),
    (INFORMATION_SCHEMA, "tables"): ("table_schema", "table_name"),
    (INFORMATION_SCHEMA, "columns"): ("table_schema", "table_name"),
}
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
        return CatalogScope(newest_versions=_newest(node, params))
    names = _NAME_COLUMNS.get((namespace, table))
    if names is None:
        return EVERYTHING
    ns_column, table_column = names
    allowed: dict[str, frozenset[str]] = {}
    prefix: str | None = None
    for column, values, is_prefix in _conjuncts(node, params):
        if column not in (ns_column, table_column):
            continue
        if is_prefix:
            if column == table_column and (prefix is None or len(values[0]) > len(prefix)):
                prefix = values[0]
            continue
        found = frozenset(values)
        allowed[column] = found if column not in allowed else allowed[column] & found
    keys_only = (namespace, table) in _KEYS_ONLY_OK and _reads_only(
        node, {ns_column, table_column or ns_column}
    )
    return CatalogScope(
        namespaces=allowed.get(ns_column),
        tables=allowed.get(table_column) if table_column else None,
        table_prefix=prefix,
        definitions=not keys_only,
    )


def _conjuncts(node: exp.Table, params: Sequence[Any]) -> list[tuple[str, list[str], bool]]:
    """``(column, text values, is a LIKE prefix)`` of each usable top-level AND-ed condition."""
    select = node.parent_select
    if select is None:
        return []
    sources = _sources(select)
    if not any(source is node for source in sources):
        return []
    where = select.args.get("where")
    if where is None:
        return []
    name = node.alias_or_name
    alone = len(sources) == 1
    found = []
    for conjunct in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        while isinstance(conjunct, exp.Paren):
            conjunct = conjunct.this
        usable = _condition(conjunct, params)
        if usable is None:
            continue
        column, values, is_prefix = usable
        if (column.table and column.table != name) or (not column.table and not alone):
            continue
        found.append((column.name.casefold(), values, is_prefix))
    return found


def _sources(select: exp.Select) -> list[exp.Expression]:
    sources: list[exp.Expression] = []
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None:
        sources.append(from_.this)
    sources.extend(join.this for join in select.args.get("joins") or ())
    return sources


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


def _newest(node: exp.Table, params: Sequence[Any]) -> int | None:
    """k of ``SELECT ... FROM system.versions ORDER BY version DESC LIMIT k [OFFSET m]`` (+ m).

    Only for a plain select of that one table: no WHERE, grouping,
    DISTINCT, window or aggregate could make it need more rows than that.
    """
    select = node.parent_select
    if select is None or _sources(select) != [node]:
        return None
    if any(select.args.get(arg) for arg in ("where", "group", "having", "distinct", "qualify")):
        return None
    if any(True for _ in select.find_all(exp.AggFunc, exp.Window)):
        return None
    order = select.args.get("order")
    if order is None or not order.expressions:
        return None
    first = order.expressions[0]
    column = first.this
    if not first.args.get("desc") or not isinstance(column, exp.Column):
        return None
    if column.name.casefold() != "version" or column.table not in ("", node.alias_or_name):
        return None
    count = _count(select.args.get("limit"), params)
    offset = _count(select.args.get("offset"), params) if select.args.get("offset") else 0
    return None if count is None or offset is None else count + offset


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
