"""SQL text to the statement model: :func:`parse` and :func:`to_statement`.

:func:`parse` splits SQL text into statements and parses each with the
``trinity`` dialect into a :class:`Parsed` (syntax tree, own text, number of
``?`` placeholders); :func:`to_statement` binds one execution's parameter
values and returns the statement's model object (the frozen dataclasses of
:mod:`trinity_dbapi.sql.model`), which the executor runs.
Names in the model are plain ``str`` after identifier normalisation:
unquoted identifiers are case-insensitive and lower-cased, quoted ones keep
their case; a namespace of ``None`` means the connection's current namespace.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timezone
from typing import Any

from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from trinity_dbapi.errors import ProgrammingError, UnsupportedStatementError
from trinity_dbapi.format.definitions import Column
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql.binding import Binder, as_utc, literal_value, parse_timestamp, text_value
from trinity_dbapi.sql.binding import value_node as _value_node
from trinity_dbapi.sql.compat import meta_get
from trinity_dbapi.sql.diagnostics import syntax_error, token_error
from trinity_dbapi.sql.dialect import Trinity
from trinity_dbapi.sql.identifiers import check_identifiers
from trinity_dbapi.sql.literals import check_numbers
from trinity_dbapi.sql.model import (
    AddColumn,
    AlterAction,
    AlterColumnType,
    AlterNamespace,
    AlterTable,
    AsOf,
    Begin,
    Call,
    Commit,
    CreateIndex,
    CreateNamespace,
    CreateTable,
    CreateTableAs,
    CreateView,
    DescribeNamespace,
    DescribeTable,
    Dml,
    DropColumn,
    DropIndex,
    DropNamespace,
    DropTable,
    DropView,
    PartitionTransform,
    Query,
    RenameColumn,
    RenameTable,
    Rollback,
    SetPartitioning,
    SetTableProperties,
    SetTransaction,
    ShowCreateTable,
    ShowNamespaces,
    ShowTables,
    ShowViews,
    Statement,
    TableName,
    TableRef,
    TruncateTable,
    UnsetTableProperties,
    Use,
)
from trinity_dbapi.sql.nesting import check_depth, recursion_budget
from trinity_dbapi.sql.parser import TrinityParser
from trinity_dbapi.sql.statement_cache import StatementCache, node_cost
from trinity_dbapi.sql.table_functions import check_table_functions, refuse_file_name
from trinity_dbapi.sql.types_sql import convert_type, data_type, name_of

__all__ = [
    "Parsed",
    "parse",
    "to_statement",
]


@dataclass(frozen=True)
class Parsed:
    """One parsed statement: its syntax tree, its own text and its number of ``?``."""

    expression: exp.Expression
    sql: str
    param_count: int


# -- parsing ------------------------------------------------------------------------------


def parse(sql: str) -> list[Parsed]:
    """Split and parse a SQL string (one or more ;-separated statements).

    Each ``?`` is numbered by its textual position in its statement (1-based):
    the tree holds ``exp.Placeholder(this="1")``, ... which DuckDB's generator
    prints as ``$1``, .... Empty statements (``;;``, comments) are skipped.

    Raises:
        SQLSyntaxError: The text does not parse; it carries the line, column
            and text of the offending token, and its message a snippet with
            the token underlined and a hint.
        UnsupportedStatementError: A statement outside the grammar (GRANT,
            VACUUM, CREATE VIEW, ...).
        NestingTooDeepError: A statement nests deeper than
            :data:`~trinity_dbapi.sql.nesting.MAX_NESTING_DEPTH`.
        DataError: A number literal DuckDB would not read as the number
            written (:mod:`~trinity_dbapi.sql.literals`).
        InvalidNameError: An identifier holds U+0000
            (:mod:`~trinity_dbapi.sql.identifiers`).
    """
    if not isinstance(sql, str):
        raise ProgrammingError(f"SQL must be a str, not {type(sql).__name__}")
    with recursion_budget():
        return list(_parse_cached(sql))


def _cost(parsed: tuple[Parsed, ...]) -> int:
    """Estimated bytes a parse result keeps alive besides its text (see statement_cache)."""
    texts = sum(sys.getsizeof(p.sql) for p in parsed)  # a statement's own slice of the text
    return texts + node_cost([p.expression for p in parsed])


# A statement cache, as sqlite3 keeps one: applications run the same texts
# again and again. It is bounded by the bytes it keeps, not by entries: one
# big text's trees can weigh hundreds of megabytes. Parsed trees are shared,
# so nothing may modify one: every consumer copies (to_statement copies
# queries and DML before binding).
STATEMENT_CACHE: StatementCache[tuple[Parsed, ...]] = StatementCache(
    lambda sql: tuple(_parse(sql)), _cost
)
_parse_cached = STATEMENT_CACHE.get


def _parse(sql: str) -> list[Parsed]:
    dialect = Trinity()
    tokenizer = dialect.tokenizer()
    try:
        tokens = tokenizer.tokenize(sql)
    except TokenError as error:
        core = getattr(tokenizer, "_core", tokenizer)  # where the bad token starts
        raise token_error(sql, getattr(core, "_start", None), error) from None
    check_depth(tokens)  # before anything recursive sees the statement
    statements = []
    for chunk in _split(tokens):
        parser = dialect.parser(error_level=ErrorLevel.IMMEDIATE)
        try:
            expression = parser.parse(chunk, sql)[0]
        except ParseError as error:
            raise syntax_error(sql, error) from None
        if expression is None:
            continue
        if not isinstance(expression, exp.Expression) or expression.find(exp.Command):
            raise UnsupportedStatementError(  # the parser never falls back to Command: a guard
                f"statement {sql[chunk[0].start : chunk[-1].end + 1]!r} is outside the trinity "
                "grammar; see docs/sql.md for the supported statements"
            )
        check_numbers(expression)  # before the tree is cached and shared
        check_identifiers(expression, sql)
        count = sum(1 for token in chunk if token.token_type == TokenType.PLACEHOLDER)
        statements.append(Parsed(expression, sql[chunk[0].start : chunk[-1].end + 1], count))
    return statements


def _split(tokens: list[Token]) -> list[list[Token]]:
    chunks: list[list[Token]] = [[]]
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            chunks.append([])
        else:
            chunks[-1].append(token)
    return [chunk for chunk in chunks if chunk]


# -- conversion ---------------------------------------------------------------------------


def to_statement(parsed: Parsed, params: Sequence[object] = ()) -> Statement:
    """Convert a parsed statement into the model, binding ``params`` to its ``?``.

    ``params[i - 1]`` is the value of placeholder ``i``. Where the grammar
    allows a literal (comments, property values, LIKE patterns, procedure
    arguments, time travel values) the value is bound into the model; in
    queries, DML and the query of ``CREATE TABLE ... AS`` the remaining
    placeholders stay in the tree for DuckDB, renumbered 1..k in textual order.

    Raises:
        ProgrammingError: Wrong number of parameters, a parameter of the wrong
            type, or an invalid definition (unknown primary key column, ...).
    """
    binder = Binder(params, parsed.param_count)
    node = parsed.expression
    for node_type, convert in _CONVERTERS.items():
        if isinstance(node, node_type):
            return convert(node, binder)
    raise ProgrammingError(  # parse() never returns other nodes
        f"{type(node).__name__} is not a trinity statement: {parsed.sql!r}; see docs/sql.md"
    )


def _table_name(table: exp.Table) -> TableName:
    if table.args.get("catalog") or not isinstance(table.this, exp.Identifier):
        raise ProgrammingError(
            f"{table.sql(dialect='trinity')} is not a table name: write [namespace.]table "
            "(a ? placeholder cannot stand for a name)"
        )
    db = table.args.get("db")
    return TableName(name_of(db) if db else None, name_of(table.this))


def _properties(items: list[exp.Expression] | None, binder: Binder) -> dict[str, str]:
    properties = {}
    for item in items or ():
        key = _key(item.this)
        value = text_value(item.args["value"], binder, f"the value of property {key!r}")
        if value is None:
            raise ProgrammingError(
                f"property {key!r} has no value (its ? parameter is None); property values are "
                "strings: pass a str, or UNSET the property"
            )
        properties[key] = value
    return properties


def _key(node: exp.Expression) -> str:
    """A property key: a string as written, a (dotted) name normalised part by part."""
    if isinstance(node, exp.Literal):
        return node.name
    parts = node.flatten() if isinstance(node, exp.Dot) else [node]
    return ".".join(name_of(part) for part in parts)


def _like(node: exp.Expression | None, binder: Binder) -> str | None:
    if node is None:
        return None
    pattern = text_value(node, binder, "the LIKE pattern")
    if pattern is None:
        raise ProgrammingError(
            "the LIKE pattern's ? parameter is None; pass a str pattern such as 'sales%', or "
            "leave out the LIKE clause"
        )
    return pattern


def _column(node: texp.ColumnDefinition, binder: Binder, next_id: Callable[[], int]) -> Column:
    column_id = next_id()
    return Column(
        column_id,
        name_of(node.this),
        convert_type(node.args["kind"], next_id),
        nullable=not node.args.get("not_null"),
        comment=text_value(node.args.get("comment"), binder, "a column comment"),
    )


def _names(nodes: list[exp.Expression] | None) -> tuple[str, ...]:
    return tuple(name_of(node) for node in nodes or ())


def _partitions(
    nodes: list[exp.Expression] | None,
) -> tuple[tuple[str, ...], tuple[PartitionTransform, ...]]:
    """PARTITIONED BY items: the directory names, and the transforms among them."""
    names: list[str] = []
    transforms: list[PartitionTransform] = []
    for node in nodes or ():
        if not isinstance(node, texp.PartitionTransform):
            names.append(name_of(node))
            continue
        kind, source = node.this, name_of(node.expression)
        width = node.args.get("width")
        name = f"{source}_{'trunc' if kind == 'truncate' else kind}"
        transforms.append(
            PartitionTransform(name, kind, source, None if width is None else int(width.this))
        )
        names.append(name)
    return tuple(names), tuple(transforms)


def _create_table(node: texp.CreateTable, binder: Binder) -> CreateTable:
    table = _table_name(node.this)
    ids = itertools.count(1)
    columns = [_column(c, binder, lambda: next(ids)) for c in node.expressions]
    names = [c.name for c in columns]
    where = f"table {table.name!r}"
    for name in names:
        if names.count(name) > 1:
            raise ProgrammingError(
                f"column {name!r} is declared twice in {where}; give each column a unique name"
            )
    primary_key = _names(node.args.get("primary_key"))
    partitioned_by, transforms = _partitions(node.args.get("partitioned_by"))
    identity = tuple(p for p in partitioned_by if p not in {t.name for t in transforms})
    for transform in transforms:
        if transform.source not in names:
            raise ProgrammingError(
                f"PARTITIONED BY {transform.kind}(...) column {transform.source!r} is not a "
                f"column of {where}; transform one of its columns ({', '.join(names)})"
            )
        if transform.name in names or partitioned_by.count(transform.name) > 1:
            raise ProgrammingError(
                f"PARTITIONED BY: the directory name {transform.name!r} of "
                f"{transform.kind}(...{transform.source}) is taken by a column or another "
                f"partition of {where}; transform each column at most once per transform"
            )
    for clause, keys in (("PRIMARY KEY", primary_key), ("PARTITIONED BY", identity)):
        for key in keys:
            if key not in names or keys.count(key) > 1:
                rule = "is not a column of" if key not in names else "appears twice in"
                raise ProgrammingError(
                    f"{clause} column {key!r} {rule} {where}; list each declared column "
                    f"({', '.join(names)}) at most once"
                )
    # A primary key column is NOT NULL, as in standard SQL.
    columns = [replace(c, nullable=False) if c.name in primary_key else c for c in columns]
    return CreateTable(
        table=table,
        columns=tuple(columns),
        primary_key=primary_key,
        partitioned_by=partitioned_by,
        comment=text_value(node.args.get("comment"), binder, "the table comment"),
        properties=_properties(node.args.get("properties"), binder),
        if_not_exists=bool(node.args.get("exists")),
        partition_transforms=transforms,
    )


def _create_table_as(node: texp.CreateTableAs, binder: Binder) -> CreateTableAs:
    table = _table_name(node.this)
    partitioned_by, transforms = _partitions(node.args.get("partitioned_by"))
    # The query's columns are known only when it runs: the engine checks that
    # partition columns and transform sources are among them.
    for key in partitioned_by:
        if partitioned_by.count(key) > 1:
            what = "the directory name" if key in {t.name for t in transforms} else "column"
            raise ProgrammingError(
                f"PARTITIONED BY {what} {key!r} appears twice in table {table.name!r}; list each "
                "column of the query's result, and each transform of one, at most once"
            )
    return CreateTableAs(
        table=table,
        query=_query(node.expression, binder),
        partitioned_by=partitioned_by,
        comment=text_value(node.args.get("comment"), binder, "the table comment"),
        properties=_properties(node.args.get("properties"), binder),
        if_not_exists=bool(node.args.get("exists")),
        partition_transforms=transforms,
    )


def _alter_table(node: texp.AlterTable, binder: Binder) -> AlterTable:
    action = node.args["action"]
    converted: AlterAction
    if isinstance(action, texp.AddColumn):
        converted = AddColumn(_column(action.this, binder, lambda: 0))
    elif isinstance(action, texp.DropColumn):
        converted = DropColumn(name_of(action.this))
    elif isinstance(action, texp.RenameColumnTo):
        converted = RenameColumn(name_of(action.this), name_of(action.args["to"]))
    elif isinstance(action, texp.SetProperties):
        converted = SetTableProperties(_properties(action.expressions, binder))
    elif isinstance(action, texp.UnsetProperties):
        converted = UnsetTableProperties(tuple(_key(k) for k in action.expressions))
    elif isinstance(action, texp.AlterColumnType):
        converted = AlterColumnType(name_of(action.this), data_type(action.args["kind"]))
    elif isinstance(action, texp.SetPartitioning):
        names, transforms = _partitions(action.expressions)
        for name in names:
            if names.count(name) > 1:
                raise ProgrammingError(
                    f"SET PARTITIONED BY lists {name!r} twice; list each column or transform once"
                )
        converted = SetPartitioning(names, transforms)
    else:
        converted = RenameTable(_table_name(action.this))
    return AlterTable(_table_name(node.this), converted)


def _alter_namespace(node: texp.AlterNamespace, binder: Binder) -> AlterNamespace:
    action = node.args["action"]
    if isinstance(action, texp.SetProperties):
        return AlterNamespace(name_of(node.this), _properties(action.expressions, binder), ())
    return AlterNamespace(name_of(node.this), {}, tuple(_key(k) for k in action.expressions))


def _call(node: texp.Call, binder: Binder) -> Call:
    args, kwargs = [], {}
    for arg in node.expressions:
        if isinstance(arg, exp.Kwarg):
            kwargs[name_of(arg.this)] = literal_value(arg.expression, binder)
        else:
            args.append(literal_value(arg, binder))
    return Call(_table_name(node.this), tuple(args), kwargs)


# -- queries ------------------------------------------------------------------------------


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
        refs.append(TableRef(target, _table_name(target), None))
    check_table_functions(expression)
    tables = sorted(expression.find_all(exp.Table), key=_text_position)
    for table in tables:
        if table is target:
            continue
        if table.this is None or isinstance(table.this, exp.Func):
            continue  # ROWS FROM or a table function, both whitelisted above
        if not isinstance(table.this, exp.Identifier):
            _table_name(table)  # raises: a placeholder (or anything else) is not a name
        if table.this.meta.get(texp.STRING_NAME):
            raise refuse_file_name(table.this.name)
        if _is_cte(table):
            continue
        refs.append(TableRef(table, _table_name(table), _as_of(table.args.get("version"), binder)))
    return tuple(refs)


def _bind_placeholders(expression: exp.Expression, binder: Binder) -> tuple[object, ...]:
    """Bind time travel values into ``expression``; number the other ``?`` 1..n in text order."""
    for version in expression.find_all(exp.Version):
        for placeholder in list(version.find_all(exp.Placeholder)):
            placeholder.replace(_value_node(binder.value(placeholder)))
    remaining = sorted(expression.find_all(exp.Placeholder), key=lambda p: int(p.name))
    values = []
    for number, placeholder in enumerate(remaining, start=1):
        values.append(binder.value(placeholder))
        placeholder.set("this", str(number))
    return tuple(values)


def _query(node: exp.Expression, binder: Binder) -> Query:
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
        kind, name = expression.key.upper(), _table_name(target).name
        raise ProgrammingError(
            f"{kind} writes the current version of table {name!r}; FOR {version.name} AS OF "
            f"applies to the tables a statement reads: remove it from the {kind} target"
        )
    return target


def _dml(node: exp.Expression, binder: Binder) -> Dml:
    """Like :func:`_query`, with the written table first in ``tables``."""
    expression = node.copy()
    refs = _table_refs(expression, binder, target=_dml_target(expression))
    params = _bind_placeholders(expression, binder)
    return Dml(expression, refs, len(params), params)


def _create_view(node: texp.CreateView, binder: Binder) -> CreateView:
    view = _table_name(node.this)
    query = node.expression
    if any(True for _ in query.find_all(exp.Placeholder)):
        raise ProgrammingError(
            f"the query of view {view.name!r} has a ? parameter; a view's query is stored and "
            "run later without parameters: write the values into the query as literals"
        )
    columns = _names(node.args.get("columns"))
    for name in columns:
        if columns.count(name) > 1:
            raise ProgrammingError(
                f"column {name!r} appears twice in the column list of view {view.name!r}; "
                "give each column a unique name"
            )
    return CreateView(
        view=view,
        columns=columns,
        comment=text_value(node.args.get("comment"), binder, "the view comment"),
        query=_query(query, binder),
        or_replace=bool(node.args.get("replace")),
        if_not_exists=bool(node.args.get("exists")),
    )


_CONVERTERS: dict[type[exp.Expr], Callable[[Any, Binder], Statement]] = {
    texp.CreateNamespace: lambda node, binder: CreateNamespace(
        name_of(node.this),
        bool(node.args.get("exists")),
        text_value(node.args.get("comment"), binder, "the namespace comment"),
        _properties(node.args.get("properties"), binder),
    ),
    texp.DropNamespace: lambda node, binder: DropNamespace(
        name_of(node.this), bool(node.args.get("exists")), node.args.get("mode") == "CASCADE"
    ),
    texp.AlterNamespace: _alter_namespace,
    texp.ShowNamespaces: lambda node, binder: ShowNamespaces(_like(node.args.get("like"), binder)),
    texp.DescribeNamespace: lambda node, binder: DescribeNamespace(name_of(node.this)),
    texp.CreateTable: _create_table,
    texp.CreateTableAs: _create_table_as,
    texp.DropTable: lambda node, binder: DropTable(
        _table_name(node.this), bool(node.args.get("exists"))
    ),
    texp.CreateView: _create_view,
    texp.DropView: lambda node, binder: DropView(
        _table_name(node.this), bool(node.args.get("exists"))
    ),
    texp.ShowViews: lambda node, binder: ShowViews(name_of(node.this) if node.this else None),
    texp.Truncate: lambda node, binder: TruncateTable(_table_name(node.this)),
    texp.CreateIndex: lambda node, binder: CreateIndex(
        name_of(node.this),
        _table_name(node.args["table"]),
        name_of(node.args["column"]),
        bool(node.args.get("exists")),
    ),
    texp.DropIndex: lambda node, binder: DropIndex(
        name_of(node.this), _table_name(node.args["table"]), bool(node.args.get("exists"))
    ),
    texp.AlterTable: _alter_table,
    texp.ShowTables: lambda node, binder: ShowTables(
        name_of(node.this) if node.this else None, _like(node.args.get("like"), binder)
    ),
    texp.DescribeTable: lambda node, binder: DescribeTable(_table_name(node.this)),
    texp.ShowCreateTable: lambda node, binder: ShowCreateTable(_table_name(node.this)),
    texp.Begin: lambda node, binder: Begin(node.args.get("isolation")),
    exp.Commit: lambda node, binder: Commit(),
    exp.Rollback: lambda node, binder: Rollback(),
    texp.SetTransaction: lambda node, binder: SetTransaction(node.args["isolation"]),
    texp.UseNamespace: lambda node, binder: Use(name_of(node.this)),
    texp.Call: _call,
    texp.Explain: _query,
    exp.Query: _query,
    exp.Values: _query,
    exp.Insert: _dml,
    exp.Update: _dml,
    exp.Delete: _dml,
    exp.Merge: _dml,
}
