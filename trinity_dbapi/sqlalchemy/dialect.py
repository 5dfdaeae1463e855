"""The SQL side of the SQLAlchemy dialect: compilers, identifier rules and reflection.

As SQLAlchemy's own dialects are built, this module knows the trinity SQL
dialect but nothing about connecting: :mod:`trinity_dbapi.sqlalchemy.driver`
adapts the DB-API driver. Namespaces are SQLAlchemy schemas; reflection
reads through the connection's own transaction, so it sees exactly what a
statement would, as point lookups and key-range scans of the tree
(:mod:`trinity_dbapi.sqlalchemy.lookups`): one table's definition is read
once, names cost a scan of keys, and ``MetaData.reflect`` reads each
definition of a namespace once (SQLAlchemy 2's ``get_multi_*`` methods).

What the format does not have is refused at compile time with a message
that says what to do instead: server defaults, identity columns,
``CREATE SEQUENCE``, JSON and INTERVAL columns. As with every database
without sequences, SQLAlchemy leaves a column's ``Sequence`` out of the DDL;
``RETURNING`` goes to the driver, which refuses it (SQLAlchemy's own rule). Foreign key, unique and check
constraints are not rendered (TrinityLake records primary keys only, and as
information), which SQLAlchemy's reflection then reports as absent.

One code base serves SQLAlchemy 1.4 and 2.x: the names only 2.x has come
from :mod:`trinity_dbapi.sqlalchemy.compat`, found by feature detection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import exc, schema
from sqlalchemy import types as sqltypes
from sqlalchemy.engine import default
from sqlalchemy.sql import compiler, elements
from sqlalchemy.sql import expression as sql_expression
from sqlalchemy.sql.visitors import InternalTraversal

from trinity_dbapi.sqlalchemy import lookups
from trinity_dbapi.sqlalchemy.compat import (
    ObjectKind,
    ObjectScope,
    ReflectedCheckConstraint,
    ReflectedColumn,
    ReflectedForeignKeyConstraint,
    ReflectedIndex,
    ReflectedPrimaryKeyConstraint,
    ReflectedTableComment,
    ReflectedUniqueConstraint,
    driver_connection,
    flexi_cache,
    reflection_cache,
    type_compiler,
)
from trinity_dbapi.sqlalchemy.types import COLSPECS, TrinityTypeCompiler
from trinity_dbapi.sqlalchemy.views import ViewReflection, view_facts

#: Namespaces holding the read-only catalog tables.
CATALOG_NAMESPACES = ("information_schema", "system")

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


class TrinityExecutionContext(default.DefaultExecutionContext):
    """Server-side cursors are plain cursors: every result streams from DuckDB."""

    def create_server_side_cursor(self) -> Any:
        cursor = self._dbapi_connection.cursor()
        cursor.server_side = True  # type: ignore[attr-defined]
        return cursor


class TrinityDialect(ViewReflection, default.DefaultDialect):
    """SQLAlchemy dialect for a Trinity Lakehouse (the SQL side; no DB-API)."""

    name = "trinity"
    supports_statement_cache = True

    statement_compiler = TrinityCompiler
    ddl_compiler = TrinityDDLCompiler
    type_compiler_cls = TrinityTypeCompiler
    # SQLAlchemy 1.4 reads the class here; 2.x takes it too (as a legacy name).
    type_compiler = TrinityTypeCompiler
    preparer = TrinityIdentifierPreparer
    execution_ctx_cls = TrinityExecutionContext
    colspecs = COLSPECS

    default_paramstyle = "qmark"
    supports_alter = True
    supports_schemas = True
    supports_comments = True
    inline_comments = True
    supports_native_boolean = True
    supports_native_decimal = True
    supports_native_enum = False
    supports_native_uuid = False
    supports_sequences = False
    sequences_optional = False
    postfetch_lastrowid = False
    supports_default_values = False
    supports_default_metavalue = False
    supports_empty_insert = False
    supports_multivalues_insert = True
    # executemany of one INSERT is one Arrow write in the driver: faster than
    # SQLAlchemy's multi-row VALUES batches, which each parse as one statement.
    use_insertmanyvalues = False
    insert_returning = False
    update_returning = False
    delete_returning = False
    supports_server_side_cursors = True
    supports_simple_order_by_label = True
    # DuckDB's "/" on integers is true division ("//" floors).
    div_is_floordiv = False
    tuple_in_values = True
    max_identifier_length = 255
    default_schema_name = "default"

    # Dialect options of Table and Index (mutable only in SQLAlchemy's own typing).
    construct_arguments = [  # noqa: RUF012
        (schema.Table, {"partitioned_by": None, "properties": None}),
        (schema.Index, {}),
    ]

    # -- reflection ---------------------------------------------------------------
    #
    # Point lookups and key-range scans of the connection's own transaction
    # (lookups.py): one table costs its key and its definition file, names
    # cost a scan of keys, never a catalog table built from every definition.

    def _schema(self, schema_name: str | None) -> str:
        return schema_name or self.default_schema_name

    def _get_default_schema_name(self, connection: Any) -> str:
        return str(driver_connection(connection).namespace)

    @reflection_cache
    def get_schema_names(self, connection: Any, **kw: Any) -> list[str]:
        names = lookups.read(connection, lookups.namespace_names, "list the namespaces")
        # The catalog namespaces are browsable too (has_schema agrees).
        return sorted(names + list(CATALOG_NAMESPACES))

    @reflection_cache
    def has_schema(self, connection: Any, schema_name: str, **kw: Any) -> bool:
        if schema_name in CATALOG_NAMESPACES:
            return True
        return lookups.read(
            connection,
            lambda txn: lookups.namespace_exists(txn, schema_name),
            f"look up namespace {schema_name}",
        )

    @reflection_cache
    def get_table_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        namespace = self._schema(schema)
        if namespace in CATALOG_NAMESPACES:
            from trinity_dbapi.lakehouse import catalog

            return sorted(catalog.catalog_table_names(namespace))
        # A namespace that does not exist has no tables (as in PostgreSQL); the
        # default one exists only once something is created in it.
        return lookups.read(
            connection,
            lambda txn: lookups.table_names(txn, namespace),
            f"list the tables of {namespace}",
        )

    @reflection_cache
    def get_sequence_names(
        self, connection: Any, schema: str | None = None, **kw: Any
    ) -> list[str]:
        return []

    @reflection_cache
    def has_table(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> bool:
        self._ensure_has_table_connection(connection)
        namespace = self._schema(schema)
        if namespace in CATALOG_NAMESPACES:
            return table_name in self.get_table_names(connection, namespace, **kw)
        return lookups.read(
            connection,
            lambda txn: lookups.table_exists(txn, namespace, table_name),
            f"look up table {namespace}.{table_name}",
        )

    @reflection_cache
    def _table_facts(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> lookups.TableFacts:
        """One table's facts, read once per inspector cache by every single-table method."""
        namespace = self._schema(schema)
        if namespace in CATALOG_NAMESPACES:
            return self._catalog_facts(namespace, table_name)
        found = lookups.read(
            connection,
            lambda txn: (
                lookups.table_facts(txn, namespace, table_name)
                or view_facts(txn, namespace, table_name)
            ),  # a view reflects as a table
            f"reflect table {namespace}.{table_name}",
        )
        if found is None:
            raise exc.NoSuchTableError(f"{namespace}.{table_name}")
        return found

    def _facts(
        self, connection: Any, table_name: str, schema: str | None, kw: dict[str, Any]
    ) -> lookups.TableFacts:
        # Cached under the names alone: SQLAlchemy 1.4 passes a table's reflected
        # options on to the later methods, which must not read the definition again.
        return self._table_facts(connection, table_name, schema, info_cache=kw.get("info_cache"))

    def _catalog_facts(self, namespace: str, table_name: str) -> lookups.TableFacts:
        from trinity_dbapi.lakehouse import catalog

        if not catalog.is_catalog_table(namespace, table_name):
            raise exc.NoSuchTableError(f"{namespace}.{table_name}")
        return lookups.catalog_table_facts(namespace, table_name)

    @reflection_cache
    def get_columns(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedColumn]:
        return lookups.columns(self._facts(connection, table_name, schema, kw))

    @reflection_cache
    def get_pk_constraint(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> ReflectedPrimaryKeyConstraint:
        return lookups.pk_constraint(self._facts(connection, table_name, schema, kw))

    @reflection_cache
    def get_foreign_keys(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedForeignKeyConstraint]:
        self._facts(connection, table_name, schema, kw)
        return []

    @reflection_cache
    def get_unique_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedUniqueConstraint]:
        self._facts(connection, table_name, schema, kw)
        return []

    @reflection_cache
    def get_check_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedCheckConstraint]:
        self._facts(connection, table_name, schema, kw)
        return []

    @reflection_cache
    def get_indexes(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedIndex]:
        return lookups.indexes(self._facts(connection, table_name, schema, kw))

    @reflection_cache
    def get_table_comment(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> ReflectedTableComment:
        return lookups.table_comment(self._facts(connection, table_name, schema, kw))

    @reflection_cache
    def get_table_options(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        return lookups.table_options(self._facts(connection, table_name, schema, kw))

    # -- reflection of many tables (SQLAlchemy 2's get_multi_*) -----------------------
    #
    # MetaData.reflect and Table(autoload_with=...) ask for every facet of a
    # namespace's tables, one facet at a time: the facts of the tables are read
    # once (cached in the inspector's cache like PostgreSQL's table OIDs), and
    # every facet is computed from them.

    @flexi_cache(
        ("schema", InternalTraversal.dp_string),
        ("filter_names", InternalTraversal.dp_string_list),
    )
    def _namespace_facts(
        self, connection: Any, schema: str | None, filter_names: Any, **kw: Any
    ) -> dict[str, lookups.TableFacts]:
        namespace = self._schema(schema)
        if namespace in CATALOG_NAMESPACES:
            names = self.get_table_names(connection, namespace)
            wanted = names if filter_names is None else [n for n in filter_names if n in names]
            return {name: self._catalog_facts(namespace, name) for name in wanted}
        return lookups.read(
            connection,
            lambda txn: lookups.namespace_facts(txn, namespace, filter_names),
            f"reflect the tables of {namespace}",
        )

    def _multi(
        self,
        facet: Callable[[lookups.TableFacts], Any],
        connection: Any,
        schema: str | None,
        filter_names: Any,
        scope: ObjectScope,
        kind: ObjectKind,
        kw: dict[str, Any],
    ) -> list[tuple[tuple[str | None, str], Any]]:
        # Tables and views exist, none temporary: other kinds and scopes are empty.
        if ObjectScope.DEFAULT not in scope:
            return []
        names = None if filter_names is None else list(filter_names)
        tables: dict[str, lookups.TableFacts] = {}
        if ObjectKind.TABLE in kind:
            tables.update(
                self._namespace_facts(connection, schema, names, info_cache=kw.get("info_cache"))
            )
        if ObjectKind.VIEW in kind:
            tables.update(
                self._views_facts(connection, schema, names, info_cache=kw.get("info_cache"))
            )
        return [((schema, name), facet(table)) for name, table in tables.items()]

    def get_multi_columns(  # type: ignore[override]
        self,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], list[ReflectedColumn]]]:
        return self._multi(lookups.columns, connection, schema, filter_names, scope, kind, kw)

    def get_multi_pk_constraint(  # type: ignore[override]
        self,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], ReflectedPrimaryKeyConstraint]]:
        return self._multi(lookups.pk_constraint, connection, schema, filter_names, scope, kind, kw)

    def get_multi_foreign_keys(  # type: ignore[override]
        self,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], list[ReflectedForeignKeyConstraint]]]:
        return self._multi(lookups.nothing, connection, schema, filter_names, scope, kind, kw)

    def get_multi_indexes(  # type: ignore[override]
        self,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], list[ReflectedIndex]]]:
        return self._multi(lookups.indexes, connection, schema, filter_names, scope, kind, kw)

    def get_multi_unique_constraints(  # type: ignore[override]
        self,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], list[ReflectedUniqueConstraint]]]:
        return self._multi(lookups.nothing, connection, schema, filter_names, scope, kind, kw)

    def get_multi_check_constraints(  # type: ignore[override]
        self,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], list[ReflectedCheckConstraint]]]:
        return self._multi(lookups.nothing, connection, schema, filter_names, scope, kind, kw)

    def get_multi_table_comment(  # type: ignore[override]
        self,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], ReflectedTableComment]]:
        return self._multi(lookups.table_comment, connection, schema, filter_names, scope, kind, kw)

    def get_multi_table_options(  # type: ignore[override]
        self,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], dict[str, Any]]]:
        return self._multi(lookups.table_options, connection, schema, filter_names, scope, kind, kw)


__all__ = [
    "TrinityCompiler",
    "TrinityDDLCompiler",
    "TrinityDialect",
    "TrinityIdentifierPreparer",
]
