"""The DDL of the trinity parser: namespaces, tables, indices and column types.

:class:`DDLParser` parses ``CREATE``, ``DROP`` and ``ALTER`` of namespaces and
tables (``CREATE TABLE ... AS query`` included), ``CREATE`` and ``DROP`` of
secondary indices, and every TrinityLake column type with its aliases
(:data:`~trinity_dbapi.sql.types_sql.TYPE_NAMES`). Sub-statements are chosen
by tables keyed by their leading words (``CREATE_PARSERS``,
``ALTER_TABLE_PARSERS``, ``TYPE_PARSERS``, ...), each with its trie, never by
``if`` chains.

Imports from sql/: expressions, parser_base, types_sql.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from trinity_dbapi.format.definitions import MAX_DECIMAL_PRECISION, MAX_TIME_PRECISION
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql import types_sql
from trinity_dbapi.sql.parser_base import BaseParser, trie

_MAX_LENGTH = types_sql.UNBOUNDED_LENGTH
#: How each index statement is written, for its error hints.
_INDEX_SYNTAX = {
    "CREATE": "write CREATE INDEX name ON [namespace.]table (column)",
    "DROP": "write DROP INDEX name ON [namespace.]table",
}


class DDLParser(BaseParser):
    """The namespace and table statements and the column types."""

    CREATE_PARSERS: ClassVar[dict[str, Callable[[DDLParser], exp.Expression]]] = {
        "NAMESPACE": lambda self: self._parse_create_namespace(),
        "SCHEMA": lambda self: self._parse_create_namespace(),
        "TABLE": lambda self: self._parse_create_table(),
        "INDEX": lambda self: self._parse_create_index(),
        "VIEW": lambda self: self._parse_create_view(replace=False),
        "OR REPLACE VIEW": lambda self: self._parse_create_view(replace=True),
    }
    DROP_PARSERS: ClassVar[dict[str, Callable[[DDLParser], exp.Expression]]] = {
        "NAMESPACE": lambda self: self._parse_drop_namespace(),
        "SCHEMA": lambda self: self._parse_drop_namespace(),
        "TABLE": lambda self: self._parse_drop_table(),
        "INDEX": lambda self: self._parse_drop_index(),
        "VIEW": lambda self: self._parse_drop_view(),
    }
    ALTER_PARSERS_BY_OBJECT: ClassVar[dict[str, Callable[[DDLParser], exp.Expression]]] = {
        "NAMESPACE": lambda self: self._parse_alter_namespace(),
        "SCHEMA": lambda self: self._parse_alter_namespace(),
        "TABLE": lambda self: self._parse_alter_table(),
    }
    PROPERTY_ACTIONS: ClassVar[dict[str, Callable[[DDLParser], exp.Expression]]] = {
        "SET PROPERTIES": lambda self: texp.SetProperties(expressions=self._parse_property_list()),
        "UNSET PROPERTIES": lambda self: texp.UnsetProperties(expressions=self._parse_keys()),
    }
    ALTER_TABLE_PARSERS: ClassVar[dict[str, Callable[[DDLParser], exp.Expression]]] = {
        **PROPERTY_ACTIONS,
        "ADD": lambda self: self._parse_column_addition(),
        "DROP": lambda self: self._parse_column_drop(),
        "RENAME COLUMN": lambda self: self._parse_rename_column(),
        "RENAME TO": lambda self: texp.RenameTable(this=self._parse_table_name()),
        "ALTER": lambda self: self._parse_alter_column_type(),
        "SET PARTITIONED BY": lambda self: self._parse_set_partitioning(),
    }
    CREATE_TRIE: ClassVar[dict] = trie(CREATE_PARSERS)
    DROP_TRIE: ClassVar[dict] = trie(DROP_PARSERS)
    ALTER_OBJECT_TRIE: ClassVar[dict] = trie(ALTER_PARSERS_BY_OBJECT)
    PROPERTY_ACTION_TRIE: ClassVar[dict] = trie(PROPERTY_ACTIONS)
    ALTER_TABLE_TRIE: ClassVar[dict] = trie(ALTER_TABLE_PARSERS)

    #: How the parameters and children of each kind are parsed.
    TYPE_PARSERS: ClassVar[dict[str, Callable[[DDLParser, str], exp.DataType]]] = {
        **dict.fromkeys(
            ("boolean", "int2", "int4", "int8", "float4", "float8", "date"),
            lambda self, kind: self._type_node(kind),
        ),
        "decimal": lambda self, kind: self._parse_decimal_type(),
        "char": lambda self, kind: self._parse_length_type(kind, types_sql.DEFAULT_CHAR_LENGTH),
        "varchar": lambda self, kind: self._parse_length_type(kind, None),
        "binary": lambda self, kind: self._parse_length_type(kind, None),
        "fixed": lambda self, kind: self._parse_length_type(kind, "required"),
        **dict.fromkeys(
            ("time", "timetz", "timestamp", "timestamptz"),
            lambda self, kind: self._parse_time_type(kind),
        ),
        "struct": lambda self, kind: self._parse_struct_type(),
        "map": lambda self, kind: self._parse_map_type(),
        "list": lambda self, kind: self._parse_list_type(),
    }

    # -- namespaces ------------------------------------------------------------------------

    def _namespace_kind(self) -> str:
        return self._prev.text.upper()

    def _parse_create_namespace(self) -> texp.CreateNamespace:
        kind = self._namespace_kind()
        exists = self._parse_exists(not_=True)
        return texp.CreateNamespace(
            this=self._parse_namespace_name(),
            kind=kind,
            exists=exists,
            comment=self._parse_comment_clause(),
            properties=self._parse_with_properties(),
        )

    def _parse_drop_namespace(self) -> texp.DropNamespace:
        kind = self._namespace_kind()
        exists = self._parse_exists()
        this = self._parse_namespace_name()
        mode = self._prev.text.upper() if self._match_texts(("RESTRICT", "CASCADE")) else None
        return texp.DropNamespace(this=this, kind=kind, exists=exists, mode=mode)

    def _parse_alter_namespace(self) -> texp.AlterNamespace:
        kind = self._namespace_kind()
        this = self._parse_namespace_name()
        action = self._dispatch(
            "ALTER NAMESPACE ns", self.PROPERTY_ACTIONS, self.PROPERTY_ACTION_TRIE
        )
        return texp.AlterNamespace(this=this, kind=kind, action=action)

    # -- tables ------------------------------------------------------------------------------

    def _parse_create_table(
        self,
    ) -> texp.CreateTable | texp.CreateTableAs | texp.CreateTableClone:
        exists = self._parse_exists(not_=True)
        table = self._parse_table_name()
        if self._match_text_seq("CLONE"):
            return self._parse_create_table_clone(table, exists)
        if not self._match(TokenType.L_PAREN):
            return self._parse_create_table_as(table, exists)
        columns = [self._parse_column_definition()]
        primary_key = None
        while self._match(TokenType.COMMA):
            if self._match(TokenType.PRIMARY_KEY):
                primary_key = self._parse_names("a primary key column")
                break
            columns.append(self._parse_column_definition())
        self._expect(TokenType.R_PAREN, ", or ) after the column", "PRIMARY KEY (...) comes last")
        return texp.CreateTable(
            this=table,
            exists=exists,
            expressions=columns,
            primary_key=primary_key,
            partitioned_by=self._parse_partition_columns(),
            comment=self._parse_comment_clause(),
            properties=self._parse_with_properties(),
        )

    def _parse_create_table_clone(
        self, table: exp.Table, exists: bool | None
    ) -> texp.CreateTableClone:
        """``CREATE TABLE t CLONE source [FOR SYSTEM_VERSION AS OF v]`` (after ``CLONE``)."""
        source = self._parse_table_name()
        version = self._parse_version()
        if version is not None:
            source.set("version", version)
        return texp.CreateTableClone(this=table, exists=exists, expression=source)

    def _parse_create_table_as(self, table: exp.Table, exists: bool | None) -> texp.CreateTableAs:
        """``CREATE TABLE t [PARTITIONED BY (...)] [COMMENT c] [WITH (...)] AS query``."""
        partitioned_by = self._parse_partition_columns()
        comment = self._parse_comment_clause()
        properties = self._parse_with_properties()
        if not self._match(TokenType.ALIAS):
            with_clauses = partitioned_by or comment or properties
            what = "AS and the query" if with_clauses else "( and the columns, or AS and a query"
            self._expected(
                what, "write CREATE TABLE t (id INT8, ...) or CREATE TABLE t AS SELECT ..."
            )
        return texp.CreateTableAs(
            this=table,
            exists=exists,
            partitioned_by=partitioned_by,
            comment=comment,
            properties=properties,
            expression=self._parse_query(),
        )

    def _parse_partition_columns(self) -> list[exp.Expression] | None:
        if self._curr.token_type != TokenType.PARTITION_BY:
            return None
        if " ".join(self._curr.text.upper().split()) != "PARTITIONED BY":
            self._expected("PARTITIONED BY")
        self._advance()
        return self._parse_wrapped_list(
            self._parse_partition_item, "a partition column or transform"
        )

    def _parse_set_partitioning(self) -> texp.SetPartitioning:
        """``SET PARTITIONED BY (item, ...)``, or ``()``: no partitioning for new data."""
        if self._match_pair(TokenType.L_PAREN, TokenType.R_PAREN):
            return texp.SetPartitioning(expressions=[])
        return texp.SetPartitioning(
            expressions=self._parse_wrapped_list(
                self._parse_partition_item, "a partition column or transform"
            )
        )

    #: Partition transforms (Iceberg's), and whether they take a width first.
    PARTITION_TRANSFORMS: ClassVar[dict[str, bool]] = {
        "year": False,
        "month": False,
        "day": False,
        "hour": False,
        "bucket": True,
        "truncate": True,
    }

    def _parse_partition_item(self) -> exp.Expression:
        """A column, or ``transform([width,] column)`` (``day(ts)``, ``bucket(16, id)``)."""
        name = self._parse_name("a partition column or transform")
        if self._curr is None or self._curr.token_type != TokenType.L_PAREN:
            return name
        kind = name.name.lower()
        if name.quoted or kind not in self.PARTITION_TRANSFORMS:
            self._fail(
                f"{name.name}(...) is not a partition transform",
                "partition by a column or by year, month, day, hour (col), bucket (n, col) "
                "or truncate (width, col)",
            )
        self._advance()
        width = None
        if self.PARTITION_TRANSFORMS[kind]:
            if not self._match(TokenType.NUMBER) or not self._prev.text.isdigit():
                self._expected(f"the number of {kind}(n, column)", f"write {kind}(16, column)")
            width = exp.Literal.number(self._prev.text)
            self._expect(TokenType.COMMA, f", after the width of {kind}(n, column)")
        column = self._parse_name(f"the column of {kind}(...)")
        self._expect(TokenType.R_PAREN, f") after {kind}(...)")
        return self.expression(texp.PartitionTransform(this=kind, expression=column, width=width))

    def _parse_column_definition(self) -> texp.ColumnDefinition:
        name = self._parse_name("a column name")
        kind = self._parse_column_type()
        not_null = self._match_pair(TokenType.NOT, TokenType.NULL)
        if self._curr.token_type in (TokenType.PRIMARY_KEY, TokenType.NULL, TokenType.DEFAULT):
            self._fail(
                f"Column constraint {self._curr.text.upper()} is not supported",
                "a column takes NOT NULL and COMMENT '...'; declare PRIMARY KEY (col) after the "
                "columns",
            )
        return self.expression(
            texp.ColumnDefinition(
                this=name, kind=kind, not_null=not_null, comment=self._parse_comment_clause()
            )
        )

    def _parse_drop_table(self) -> texp.DropTable:
        exists = self._parse_exists()
        return texp.DropTable(this=self._parse_table_name(), exists=exists)

    # -- views -------------------------------------------------------------------------------

    def _parse_create_view(self, replace: bool) -> texp.CreateView:
        """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(col, ...)] [COMMENT c] AS query``."""
        exists = self._parse_exists(not_=True)
        view = self._parse_table_name("a view name")
        columns = (
            self._parse_names("a view column")
            if self._curr.token_type == TokenType.L_PAREN
            else None
        )
        comment = self._parse_comment_clause()
        if not self._match(TokenType.ALIAS):
            self._expected("AS and the query", "write CREATE VIEW v AS SELECT ...")
        return texp.CreateView(
            this=view,
            replace=replace or None,
            exists=exists,
            columns=columns,
            comment=comment,
            expression=self._parse_query(),
        )

    def _parse_drop_view(self) -> texp.DropView:
        exists = self._parse_exists()
        return texp.DropView(this=self._parse_table_name("a view name"), exists=exists)

    def _parse_alter_table(self) -> texp.AlterTable:
        this = self._parse_table_name()
        action = self._dispatch(
            "ALTER TABLE t", self.ALTER_TABLE_PARSERS, self.ALTER_TABLE_TRIE, unsupported=None
        )
        return texp.AlterTable(this=this, action=action)

    def _parse_column_addition(self) -> texp.AddColumn:
        self._match(TokenType.COLUMN)
        return texp.AddColumn(this=self._parse_column_definition())

    def _parse_column_drop(self) -> texp.DropColumn:
        self._match(TokenType.COLUMN)
        return texp.DropColumn(this=self._parse_name("a column name"))

    def _parse_rename_column(self) -> texp.RenameColumnTo:
        old = self._parse_name("a column name")
        if not self._match_text_seq("TO"):
            self._expected("TO after the column name", "write RENAME COLUMN old TO new")
        return texp.RenameColumnTo(this=old, to=self._parse_name("the new column name"))

    def _parse_alter_column_type(self) -> texp.AlterColumnType:
        """``ALTER [COLUMN] c [SET DATA] TYPE t``: DuckDB's and Postgres' spellings."""
        self._match(TokenType.COLUMN)
        name = self._parse_name("a column name")
        syntax = "ALTER COLUMN c [SET DATA] TYPE new_type"
        token = self._curr
        if self._match_text_seq("SET", "DATA") or self._match_text_seq("TYPE"):
            if self._prev.text.upper() == "DATA" and not self._match_text_seq("TYPE"):
                self._expected("TYPE after SET DATA", f"write {syntax}")
            return texp.AlterColumnType(this=name, kind=self._parse_column_type())
        if token and token.text.upper() in ("SET", "DROP"):
            # DuckDB's and Postgres' SET/DROP DEFAULT, SET/DROP NOT NULL
            self._unsupported(f"ALTER COLUMN ... {token.text.upper()}", syntax, token)
        self._expected("TYPE after the column name", f"write {syntax}")

    # -- secondary indices ---------------------------------------------------------------------

    def _parse_index_name(self) -> exp.Identifier:
        name = self._parse_name("an index name")
        if self._curr.token_type == TokenType.DOT:
            self._fail(
                "An index name has one part",
                "an index belongs to its table: write CREATE INDEX i ON ns.t (column)",
            )
        return name

    def _parse_index_table(self, verb: str) -> exp.Table:
        hint = f"an index belongs to its table: {_INDEX_SYNTAX[verb]}"
        self._expect(TokenType.ON, "ON and the table name", hint)
        return self._parse_table_name()

    def _parse_create_index(self) -> texp.CreateIndex:
        exists = self._parse_exists(not_=True)
        name = self._parse_index_name()
        table = self._parse_index_table("CREATE")
        self._expect(TokenType.L_PAREN, "( and the indexed column", _INDEX_SYNTAX["CREATE"])
        column = self._parse_name("the indexed column")
        if self._match(TokenType.COMMA):
            self._fail(
                "An index covers exactly one column",
                "secondary indices are single-column: create one index per column, as in "
                "CREATE INDEX t_b ON t (b)",
                self._curr,
            )
        self._expect(TokenType.R_PAREN, ") after the indexed column", _INDEX_SYNTAX["CREATE"])
        return texp.CreateIndex(this=name, table=table, column=column, exists=exists)

    def _parse_drop_index(self) -> texp.DropIndex:
        exists = self._parse_exists()
        name = self._parse_index_name()
        return texp.DropIndex(this=name, table=self._parse_index_table("DROP"), exists=exists)

    # -- column types -----------------------------------------------------------------------

    def _parse_column_type(self) -> exp.DataType:
        """A TrinityLake type by any of its names, with ``[]`` list suffixes."""
        token = self._curr
        name = " ".join(token.text.upper().split()) if token else ""
        kind = types_sql.TYPE_NAMES.get(name)
        if kind is None or token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
            self._expected(
                "a column type", "the types are " + ", ".join(types_sql.CANONICAL_NAMES.values())
            )
        self._advance()
        if name == "BINARY":
            self._match_text_seq("VARYING")
        node = self.TYPE_PARSERS[kind](self, kind)
        while self._match(TokenType.L_BRACKET):
            if not self._match(TokenType.R_BRACKET):
                self._fail("Fixed-size arrays are not supported", "write t[] or LIST<t>")
            node = self._type_node("list", [node])
        return node

    def _type_node(
        self, kind: str, children: Sequence[exp.Expr] | None = None, params: tuple = ()
    ) -> exp.DataType:
        expressions = children or [
            exp.DataTypeParam(this=exp.Literal.number(p)) for p in params if p is not None
        ]
        return exp.DataType(
            this=types_sql.KIND_DTYPES[kind],
            expressions=expressions or None,
            nested=True if children else None,
        )

    _param_tokens: tuple[Token, ...] = ()

    def _parse_type_params(self, most: int) -> list[int]:
        """``(n [, m])``; the tokens are kept for :meth:`_check_range`'s error position."""
        tokens: list[Token] = []
        self._param_tokens = ()
        if not self._match(TokenType.L_PAREN):
            return []
        while True:
            if not self._match(TokenType.NUMBER) or not self._prev.text.isdigit():
                self._expected("an unsigned integer type parameter")
            tokens.append(self._prev)
            if not self._match(TokenType.COMMA):
                break
        if len(tokens) > most or not self._match(TokenType.R_PAREN):
            self._expected(") after the type parameters", f"this type takes at most {most}")
        self._param_tokens = tuple(tokens)
        return [int(token.text) for token in tokens]

    def _check_range(self, what: str, value: int, low: int, high: int, position: int = 0) -> None:
        """Fail unless ``low <= value <= high``, pointing at type parameter ``position``."""
        if not low <= value <= high:
            tokens = self._param_tokens
            self._fail(
                f"The {what} {value} is out of range",
                f"use a {what} between {low} and {high}",
                tokens[position] if position < len(tokens) else None,
            )

    def _parse_decimal_type(self) -> exp.DataType:
        params = self._parse_type_params(2) or list(types_sql.DEFAULT_DECIMAL)
        precision, scale = params[0], params[1] if len(params) > 1 else 0
        self._check_range("decimal precision", precision, 1, MAX_DECIMAL_PRECISION)
        self._check_range("decimal scale", scale, 0, precision, position=1)
        return self._type_node("decimal", params=(precision, scale))

    def _parse_length_type(self, kind: str, default: int | str | None) -> exp.DataType:
        params = self._parse_type_params(1)
        if not params and default == "required":
            self._expected(f"the length of {kind.upper()}, as in {kind.upper()}(16)")
        length = params[0] if params else default
        if isinstance(length, int):
            self._check_range(f"{kind} length", length, 1, _MAX_LENGTH)
        return self._type_node(kind, params=(length,))

    def _parse_time_type(self, kind: str) -> exp.DataType:
        params = self._parse_type_params(1)
        precision = params[0] if params else types_sql.DEFAULT_TIME_PRECISION
        self._check_range(f"{kind} precision", precision, 0, MAX_TIME_PRECISION)
        if kind in types_sql.WITH_TIME_ZONE and self._match_text_seq("WITH", "TIME", "ZONE"):
            kind = types_sql.WITH_TIME_ZONE[kind]
        elif kind in types_sql.WITH_TIME_ZONE:
            self._match_text_seq("WITHOUT", "TIME", "ZONE")
        return self._type_node(kind, params=(precision,))

    def _parse_list_type(self) -> exp.DataType:
        self._expect(TokenType.LT, "< after LIST", "write LIST<INT4> or INT4[]")
        element = self._parse_column_type()
        self._expect(TokenType.GT, "> after the element type")
        return self._type_node("list", [element])

    def _parse_map_type(self) -> exp.DataType:
        self._expect(TokenType.LT, "< after MAP", "write MAP<key type, value type>")
        key = self._parse_column_type()
        self._expect(TokenType.COMMA, ", between the key and value types")
        value = self._parse_column_type()
        self._expect(TokenType.GT, "> after the value type")
        return self._type_node("map", [key, value])

    _STRUCT_HINT: ClassVar[dict[bool, str]] = {
        False: "write STRUCT<name: type, ...>",
        True: "write ROW(name type, ...)",
    }

    def _parse_struct_type(self) -> exp.DataType:
        row = self._prev.text.upper() == "ROW"
        opening, closing = (
            (TokenType.L_PAREN, TokenType.R_PAREN) if row else (TokenType.LT, TokenType.GT)
        )
        self._expect(opening, "( after ROW" if row else "< after STRUCT", self._STRUCT_HINT[row])
        members = []
        while True:
            name = self._parse_field_name()
            if not row:
                self._expect(TokenType.COLON, ": after the field name", self._STRUCT_HINT[row])
            members.append(exp.ColumnDef(this=name, kind=self._parse_column_type()))
            if not self._match(TokenType.COMMA):
                break
        self._expect(closing, ", or the end of the fields", self._STRUCT_HINT[row])
        return self._type_node("struct", members)
