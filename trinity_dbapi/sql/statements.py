"""SQL text to the statement model: :func:`parse` and :func:`to_statement`.

:func:`parse` splits SQL text into statements and parses each with the
``trinity`` dialect into a :class:`Parsed` (syntax tree, own text, number of
``?`` placeholders); :func:`to_statement` binds one execution's parameter
values and returns the statement's model object (the frozen dataclasses of
:mod:`trinity_dbapi.sql.model`), which the executor runs.
Names in the model are plain ``str`` after identifier normalisation:
unquoted identifiers are case-insensitive and lower-cased, quoted ones keep
their case; a namespace of ``None`` means the connection's current namespace.

This module converts the statements that define and manage things (DDL,
``SHOW``, transactions, ``CALL``, ``COPY``); a query or DML statement is the work of
:mod:`~trinity_dbapi.sql.queries` (its tables, time travel and placeholders).

Imports from sql/: binding, diagnostics, dialect, expressions, identifiers, literals,
model, nesting, queries, statement_cache, types_sql.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from trinity_dbapi.errors import ProgrammingError, UnsupportedStatementError
from trinity_dbapi.format.definitions import Column
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql import queries
from trinity_dbapi.sql.binding import Binder, literal_value, text_value
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
    Begin,
    Call,
    Commit,
    CopyFrom,
    CopyOptions,
    CopyTo,
    CreateIndex,
    CreateNamespace,
    CreateTable,
    CreateTableAs,
    CreateTableClone,
    CreateView,
    DescribeNamespace,
    DescribeTable,
    DropColumn,
    DropIndex,
    DropNamespace,
    DropTable,
    DropView,
    LoadTransaction,
    PartitionTransform,
    RefCommand,
    RenameColumn,
    RenameTable,
    Rollback,
    SaveTransaction,
    SetCommitMessage,
    SetPartitioning,
    SetTableProperties,
    SetTransaction,
    ShowCreateTable,
    ShowNamespaces,
    ShowTables,
    ShowViews,
    Statement,
    TruncateTable,
    UnsetTableProperties,
    Use,
)
from trinity_dbapi.sql.nesting import check_depth, recursion_budget
from trinity_dbapi.sql.statement_cache import StatementCache, node_cost
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
    table = queries.table_name(node.this)
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
    table = queries.table_name(node.this)
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
        query=queries.query(node.expression, binder),
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
        converted = RenameTable(queries.table_name(action.this))
    return AlterTable(queries.table_name(node.this), converted)


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
    return Call(queries.table_name(node.this), tuple(args), kwargs)


def _create_view(node: texp.CreateView, binder: Binder) -> CreateView:
    view = queries.table_name(node.this)
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
        query=queries.query(query, binder),
        or_replace=bool(node.args.get("replace")),
        if_not_exists=bool(node.args.get("exists")),
    )


def _copy_options(node: exp.Expression, binder: Binder) -> CopyOptions:
    values: dict[str, Any] = {}
    for option in node.args.get("options") or ():
        word, value = option.this, option.args.get("value")
        if word == "FORMAT":
            values["format"] = value.name
        elif word == "DELIMITER":
            delimiter = text_value(value, binder, "the COPY option DELIMITER")
            if delimiter is None or len(delimiter) != 1 or delimiter in '\r\n"':
                raise ProgrammingError(
                    f"COPY option DELIMITER takes one character, not {delimiter!r} (and not a "
                    "quote or a line break): write DELIMITER ',' or DELIMITER '|'"
                )
            values["delimiter"] = delimiter
        else:  # HEADER, OVERWRITE: a bare word is true
            values[word.lower()] = value is None or bool(value.this)
    return CopyOptions(**values)


def _copy_path(node: exp.Expression, binder: Binder) -> str:
    path = text_value(node.args["file"], binder, "the file name of COPY")
    if not path:
        raise ProgrammingError(
            "COPY needs a file name: the name is empty or its ? parameter is None; name the "
            "file, e.g. COPY t TO 'out.csv'"
        )
    return path


def _copy_from(node: texp.CopyFrom, binder: Binder) -> CopyFrom:
    return CopyFrom(
        queries.table_name(node.this), _copy_path(node, binder), _copy_options(node, binder)
    )


def _ref_command(node: texp.RefStatement | texp.RefChange) -> RefCommand:
    source = node.args.get("source")
    source_value: str | int | None = None
    if isinstance(source, exp.Literal):
        source_value = int(source.this)
    elif source is not None:
        source_value = name_of(source)
    target = node.args.get("target")
    return RefCommand(
        node.args["action"],
        name_of(node.this) if node.this is not None else None,
        bool(node.args.get("exists")),
        node.args.get("source_kind"),
        source_value,
        name_of(target) if target is not None else None,
    )


def _copy_to(node: texp.CopyTo, binder: Binder) -> CopyTo:
    return CopyTo(
        queries.query(node.this, binder), _copy_path(node, binder), _copy_options(node, binder)
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
    texp.CreateTableClone: lambda node, binder: CreateTableClone(
        queries.table_name(node.this),
        queries.table_name(node.expression),
        queries.as_of(node.expression, binder),
        bool(node.args.get("exists")),
    ),
    texp.DropTable: lambda node, binder: DropTable(
        queries.table_name(node.this), bool(node.args.get("exists"))
    ),
    texp.CreateView: _create_view,
    texp.DropView: lambda node, binder: DropView(
        queries.table_name(node.this), bool(node.args.get("exists"))
    ),
    texp.ShowViews: lambda node, binder: ShowViews(name_of(node.this) if node.this else None),
    texp.Truncate: lambda node, binder: TruncateTable(queries.table_name(node.this)),
    texp.CreateIndex: lambda node, binder: CreateIndex(
        name_of(node.this),
        queries.table_name(node.args["table"]),
        name_of(node.args["column"]),
        bool(node.args.get("exists")),
    ),
    texp.DropIndex: lambda node, binder: DropIndex(
        name_of(node.this), queries.table_name(node.args["table"]), bool(node.args.get("exists"))
    ),
    texp.AlterTable: _alter_table,
    texp.ShowTables: lambda node, binder: ShowTables(
        name_of(node.this) if node.this else None, _like(node.args.get("like"), binder)
    ),
    texp.DescribeTable: lambda node, binder: DescribeTable(queries.table_name(node.this)),
    texp.ShowCreateTable: lambda node, binder: ShowCreateTable(queries.table_name(node.this)),
    texp.Begin: lambda node, binder: Begin(node.args.get("isolation")),
    exp.Commit: lambda node, binder: Commit(),
    exp.Rollback: lambda node, binder: Rollback(),
    texp.SetTransaction: lambda node, binder: SetTransaction(node.args["isolation"]),
    texp.SaveTransaction: lambda node, binder: SaveTransaction(),
    texp.LoadTransaction: lambda node, binder: LoadTransaction(
        text_value(node.this, binder, "the transaction id") or ""
    ),
    texp.SetCommitMessage: lambda node, binder: SetCommitMessage(
        text_value(node.this, binder, "the commit message")
    ),
    texp.UseNamespace: lambda node, binder: Use(name_of(node.this)),
    texp.RefStatement: lambda node, binder: _ref_command(node),
    texp.RefChange: lambda node, binder: _ref_command(node),
    texp.Call: _call,
    texp.Explain: queries.query,
    texp.SummarizeQuery: queries.query,
    texp.DescribeQuery: queries.query,
    texp.CopyFrom: _copy_from,
    texp.CopyTo: _copy_to,
    exp.Query: queries.query,
    exp.Values: queries.query,
    exp.Insert: queries.dml,
    exp.Update: queries.dml,
    exp.Delete: queries.dml,
    exp.Merge: queries.dml,
}
