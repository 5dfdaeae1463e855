"""The statement, DDL and identifier compilers of the trinity SQLAlchemy dialect.

What SQLAlchemy constructs become as trinity SQL (DuckDB's query syntax plus
TrinityLake's DDL): queries and DML (:class:`TrinityCompiler`), ``CREATE`` and
``DROP`` (:class:`TrinityDDLCompiler`) and quoting (:class:`TrinityIdentifierPreparer`).
Column types are rendered by :class:`~trinity_dbapi.sqlalchemy.types.TrinityTypeCompiler`,
beside their inverse. As trino-python-client's ``compiler.py``, this module
knows nothing of connections or reflection
(:mod:`~trinity_dbapi.sqlalchemy.dialect`).

What the format does not have is refused at compile time with a message
that says what to do instead: server defaults, identity columns,
``CREATE SEQUENCE``, INTERVAL columns (JSON is the type compiler's). Foreign
key, unique and check constraints are not rendered (TrinityLake records
primary keys only, and as information), which SQLAlchemy's reflection then
reports as absent.

Imports from sqlalchemy/: compat.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exc, schema
from sqlalchemy import types as sqltypes
from sqlalchemy.sql import compiler, elements
from sqlalchemy.sql import expression as sql_expression

from trinity_dbapi.sqlalchemy.compat import type_compiler

#: Words the trinity dialect reserves on top of SQL's: quoted when used as names.
RESERVED_WORDS = compiler.RESERVED_WORDS | {
    "analyze",
    "asof",
    "describe",
    "explain",
    "ilike",
    "index",
    "namespace",
    "partitioned",
    "pivot",
    "qualify",
    "show",
    "summarize",
    "truncate",
    "unpivot",
}


class TrinityIdentifierPreparer(compiler.IdentifierPreparer):
    """Double-quoted identifiers; unquoted names fold to lower case, as in PostgreSQL."""

    reserved_words = RESERVED_WORDS


class TrinityCompiler(compiler.SQLCompiler):
    """Queries and DML in the trinity dialect (DuckDB's query syntax)."""

    def get_from_hint_text(self, table: Any, text: str | None) -> str | None:
        # Time travel: select(t).with_hint(t, "FOR SYSTEM_VERSION AS OF 3").
        return text

    def format_from_hint_text(self, sqltext: str, table: Any, hint: str, iscrud: bool) -> str:
        # The clause goes between the table and its alias: t FOR ... AS t_1.
        if isinstance(table, sql_expression.Alias):
            name = table.name
            if isinstance(name, elements._truncated_label):  # anonymous: as visit_alias names it
                name = self._truncated_identifier("alias", name)
            suffix = self.get_render_as_alias_suffix(self.preparer.format_alias(table, name))
            if sqltext.endswith(suffix):
                return f"{sqltext[: -len(suffix)]} {hint}{suffix}"
        return f"{sqltext} {hint}"

    def visit_floordiv_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        # FLOOR(a / b) is a DOUBLE in DuckDB (whose // truncates towards zero);
        # integers floor-divided stay integers, as in Python.
        text = f"FLOOR({self.process(binary.left, **kw)} / {self.process(binary.right, **kw)})"
        integers = all(
            isinstance(side.type, sqltypes.Integer) for side in (binary.left, binary.right)
        )
        return f"CAST({text} AS BIGINT)" if integers else text

    def limit_clause(self, select: Any, **kw: Any) -> str:
        text = ""
        if select._limit_clause is not None:
            text += "\n LIMIT " + self.process(select._limit_clause, **kw)
        if select._offset_clause is not None:
            text += "\n OFFSET " + self.process(select._offset_clause, **kw)
        return text

    def for_update_clause(self, select: Any, **kw: Any) -> str:
        # Snapshot isolation needs no row locks: a conflicting commit fails instead.
        return ""

    def visit_ilike_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        escape = binary.modifiers.get("escape")
        text = f"{self.process(binary.left, **kw)} ILIKE {self.process(binary.right, **kw)}"
        return text + (
            f" ESCAPE {self.render_literal_value(escape, sqltypes.STRINGTYPE)}" if escape else ""
        )

    def visit_not_ilike_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        escape = binary.modifiers.get("escape")
        text = f"{self.process(binary.left, **kw)} NOT ILIKE {self.process(binary.right, **kw)}"
        return text + (
            f" ESCAPE {self.render_literal_value(escape, sqltypes.STRINGTYPE)}" if escape else ""
        )

    def visit_regexp_match_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        return self._regexp("regexp_matches", binary, **kw)

    def visit_not_regexp_match_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        return "NOT " + self._regexp("regexp_matches", binary, **kw)

    def visit_regexp_replace_op_binary(self, binary: Any, operator: Any, **kw: Any) -> str:
        pattern, replacement = binary.right.clauses
        args = [binary.left, pattern, replacement]
        flags = binary.modifiers.get("flags")
        text = ", ".join(self.process(arg, **kw) for arg in args)
        if flags:
            text += ", " + self.render_literal_value(flags, sqltypes.STRINGTYPE)
        return f"regexp_replace({text})"

    def update_from_clause(
        self, update_stmt: Any, from_table: Any, extra_froms: Any, from_hints: Any, **kw: Any
    ) -> str:
        # UPDATE t SET ... FROM other WHERE ... (DuckDB's syntax, as PostgreSQL's).
        kw["asfrom"] = True
        froms = (t._compiler_dispatch(self, fromhints=from_hints, **kw) for t in extra_froms)
        return "FROM " + ", ".join(froms)

    def _regexp(self, function: str, binary: Any, **kw: Any) -> str:
        text = f"{self.process(binary.left, **kw)}, {self.process(binary.right, **kw)}"
        flags = binary.modifiers.get("flags")
        if flags:
            text += ", " + self.render_literal_value(flags, sqltypes.STRINGTYPE)
        return f"{function}({text})"


class TrinityDDLCompiler(compiler.DDLCompiler):
    """CREATE / DROP statements of the trinity dialect.

    ``Table(..., trinity_partitioned_by=["day"], trinity_properties={"k": "v"})``
    add ``PARTITIONED BY`` and ``WITH (...)``; comments are rendered inline.
    """

    def get_column_specification(self, column: Any, **kw: Any) -> str:
        # Identity is also the column's server_default: check it first.
        if column.identity is not None:
            raise exc.CompileError(
                f"column {column.name!r}: TrinityLake has no identity (auto-increment) "
                "columns; generate keys in Python (e.g. Column(default=uuid.uuid4))"
            )
        if column.server_default is not None or column.computed is not None:
            raise exc.CompileError(
                f"column {column.name!r}: TrinityLake columns have no server defaults or "
                "computed values; give the value in Python (Column(default=...)) instead"
            )
        if isinstance(column.type, sqltypes.Interval):
            # A TypeDecorator over DateTime: the type compiler would see a timestamp.
            raise exc.CompileError(
                f"column {column.name!r}: TrinityLake has no INTERVAL column type; store a "
                "duration as a number (e.g. microseconds in a BigInteger column)"
            )
        column_type = column.type
        if isinstance(column_type, sqltypes.NullType) and column.foreign_keys:
            # A column typed by its foreign key gets the type when the key is
            # compiled; keys are not rendered here, so resolve it directly.
            column_type = next(iter(column.foreign_keys)).column.type
        text = self.preparer.format_column(column) + " "
        text += type_compiler(self.dialect).process(column_type, type_expression=column)
        if not column.nullable:
            text += " NOT NULL"
        if column.comment is not None:
            text += " COMMENT " + self.sql_compiler.render_literal_value(
                column.comment, sqltypes.STRINGTYPE
            )
        return text

    def visit_primary_key_constraint(self, constraint: Any, **kw: Any) -> Any:
        if len(constraint) == 0:
            return None
        # The grammar has no CONSTRAINT name: keys are unnamed, as reflected.
        columns = ", ".join(self.preparer.quote(c.name) for c in constraint)
        return f"PRIMARY KEY ({columns})"

    def visit_foreign_key_constraint(self, constraint: Any, **kw: Any) -> Any:
        return None  # not recorded by the format: reflection reports none

    def visit_unique_constraint(self, constraint: Any, **kw: Any) -> Any:
        return None

    def visit_check_constraint(self, constraint: Any, **kw: Any) -> Any:
        return None

    def visit_column_check_constraint(self, constraint: Any, **kw: Any) -> Any:
        return ""  # appended to the column's text: empty, not None

    def post_create_table(self, table: Any) -> str:
        options = table.dialect_options["trinity"]
        literal = self.sql_compiler.render_literal_value
        text = ""
        if options["partitioned_by"]:
            names = ", ".join(self.preparer.quote(name) for name in options["partitioned_by"])
            text += f"\nPARTITIONED BY ({names})"
        if table.comment is not None:
            text += "\nCOMMENT " + literal(table.comment, sqltypes.STRINGTYPE)
        if options["properties"]:
            pairs = ", ".join(
                f"{self.preparer.quote(str(key))} = {literal(str(value), sqltypes.STRINGTYPE)}"
                for key, value in options["properties"].items()
            )
            text += f"\nWITH ({pairs})"
        return text

    def visit_create_index(self, create: Any, **kw: Any) -> Any:  # type: ignore[override]
        index = create.element
        # unique=True becomes an ordinary index: like primary keys, uniqueness
        # is not enforced by the format (docs/sqlalchemy.md).
        columns = list(index.expressions)
        if len(columns) != 1 or not isinstance(columns[0], schema.Column):
            raise exc.CompileError(
                f"index {index.name!r}: a TrinityLake secondary index covers exactly one "
                "column (not several, not an expression); create one index per column"
            )
        if index.name is None:
            raise exc.CompileError("TrinityLake indices need a name: Index('name', column)")
        text = "CREATE INDEX "
        if create.if_not_exists:
            text += "IF NOT EXISTS "
        table = self.preparer.format_table(index.table)
        name = self._prepared_index_name(index, include_schema=False)
        return f"{text}{name} ON {table} ({self.preparer.quote(columns[0].name)})"

    def visit_drop_index(self, drop: Any, **kw: Any) -> str:
        index = drop.element
        text = "\nDROP INDEX "
        if drop.if_exists:
            text += "IF EXISTS "
        name = self._prepared_index_name(index, include_schema=False)
        return f"{text}{name} ON {self.preparer.format_table(index.table)}"

    def visit_create_sequence(self, create: Any, **kw: Any) -> Any:  # type: ignore[override]
        raise exc.CompileError("TrinityLake has no sequences: generate keys in Python")

    def visit_set_table_comment(self, create: Any, **kw: Any) -> str:
        # The table comment is the "comment" table property.
        comment = self.sql_compiler.render_literal_value(
            create.element.comment, sqltypes.STRINGTYPE
        )
        table = self.preparer.format_table(create.element)
        return f"ALTER TABLE {table} SET PROPERTIES (comment = {comment})"

    def visit_drop_table_comment(self, drop: Any, **kw: Any) -> str:
        return f"ALTER TABLE {self.preparer.format_table(drop.element)} UNSET PROPERTIES (comment)"

    def visit_set_column_comment(self, create: Any, **kw: Any) -> str:
        raise exc.CompileError(
            "trinity sets column comments in CREATE TABLE and ALTER TABLE ADD COLUMN only"
        )


__all__ = [
    "RESERVED_WORDS",
    "TrinityCompiler",
    "TrinityDDLCompiler",
    "TrinityIdentifierPreparer",
]
