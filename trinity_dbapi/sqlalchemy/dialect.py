"""The trinity SQLAlchemy dialect: its capabilities and its reflection.

As trino-python-client's ``dialect.py``, this module puts together what the
dialect is: the compilers (:mod:`~trinity_dbapi.sqlalchemy.compiler`), the
types (:mod:`~trinity_dbapi.sqlalchemy.types`), the flags that say what the
database does, and reflection. It knows nothing about connecting:
:mod:`trinity_dbapi.sqlalchemy.driver` adapts the DB-API driver.

Namespaces are SQLAlchemy schemas; reflection reads through the
connection's own transaction, so it sees exactly what a statement would, as
point lookups and key-range scans of the tree
(:mod:`trinity_dbapi.sqlalchemy.lookups`): one table's definition is read
once, names cost a scan of keys, and ``MetaData.reflect`` reads each
definition of a namespace once (SQLAlchemy 2's ``get_multi_*`` methods).
What each per-table method reports is one table, ``lookups.FACETS``: a
``get_<kind>`` and a ``get_multi_<kind>`` method are made from each entry.

As with every database without sequences, SQLAlchemy leaves a column's
``Sequence`` out of the DDL; ``RETURNING`` goes to the driver, which refuses
it (SQLAlchemy's own rule).

One code base serves SQLAlchemy 1.4 and 2.x: the names only 2.x has come
from :mod:`trinity_dbapi.sqlalchemy.compat`, found by feature detection.

Imports from sqlalchemy/: compat, compiler, lookups, types, views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import exc, schema
from sqlalchemy.engine import default
from sqlalchemy.sql.visitors import InternalTraversal

from trinity_dbapi.sqlalchemy import lookups
from trinity_dbapi.sqlalchemy.compat import (
    ObjectKind,
    ObjectScope,
    driver_connection,
    flexi_cache,
    reflection_cache,
)
from trinity_dbapi.sqlalchemy.compiler import (
    TrinityCompiler,
    TrinityDDLCompiler,
    TrinityIdentifierPreparer,
)
from trinity_dbapi.sqlalchemy.types import TypeDialect
from trinity_dbapi.sqlalchemy.views import ViewReflection, view_facts

#: Namespaces holding the read-only catalog tables.
CATALOG_NAMESPACES = ("information_schema", "system")


#: What one table's facts report for one reflection kind (a value of ``lookups.FACETS``).
Facet = Callable[[lookups.TableFacts], Any]
D = TypeVar("D", bound=type)


def _one_table(name: str, facet: Facet) -> Callable[..., Any]:
    """``get_<kind>``: what ``facet`` reports of one table (or view), cached per inspector."""

    def method(
        self: TrinityDialect, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> Any:
        return facet(self._facts(connection, table_name, schema, kw))

    return reflection_cache(_named(method, name, facet))


def _many_tables(name: str, facet: Facet) -> Callable[..., Any]:
    """``get_multi_<kind>``: what ``facet`` reports of each table of a namespace."""

    def method(
        self: TrinityDialect,
        connection: Any,
        *,
        schema: str | None = None,
        filter_names: Any = None,
        scope: ObjectScope = ObjectScope.DEFAULT,
        kind: ObjectKind = ObjectKind.TABLE,
        **kw: Any,
    ) -> list[tuple[tuple[str | None, str], Any]]:
        return self._multi(facet, connection, schema, filter_names, scope, kind, kw)

    return _named(method, name, facet)


def _named(method: Callable[..., Any], name: str, facet: Facet) -> Callable[..., Any]:
    # Named before it is cached: SQLAlchemy's reflection cache keys by __name__.
    method.__name__ = name
    method.__qualname__ = f"TrinityDialect.{name}"
    method.__doc__ = (
        f"SQLAlchemy's ``{name}``: :func:`~trinity_dbapi.sqlalchemy.lookups.{facet.__name__}`."
    )
    return method


def _with_facets(cls: D) -> D:
    """Give the dialect ``get_<kind>`` and ``get_multi_<kind>`` for each kind of ``lookups.FACETS``.

    They are set on the class itself, where SQLAlchemy's ``Inspector`` finds
    them, as if written out by hand; one written out by hand is an error.
    """
    for kind, facet in lookups.FACETS.items():
        for name, make in ((f"get_{kind}", _one_table), (f"get_multi_{kind}", _many_tables)):
            if name in vars(cls):
                raise TypeError(f"{cls.__name__}.{name} is made from lookups.FACETS[{kind!r}]")
            setattr(cls, name, make(name, facet))
    return cls


class TrinityExecutionContext(default.DefaultExecutionContext):
    """Server-side cursors are plain cursors: every result streams from DuckDB."""

    def create_server_side_cursor(self) -> Any:
        cursor = self._dbapi_connection.cursor()
        cursor.server_side = True  # type: ignore[attr-defined]
        return cursor


@_with_facets
class TrinityDialect(ViewReflection, TypeDialect):
    """SQLAlchemy dialect for a Trinity Lakehouse (the SQL side; no DB-API).

    Its name, type compiler and ``colspecs`` are its type side's
    (:class:`~trinity_dbapi.sqlalchemy.types.TypeDialect`).
    """

    supports_statement_cache = True

    statement_compiler = TrinityCompiler
    ddl_compiler = TrinityDDLCompiler
    preparer = TrinityIdentifierPreparer
    execution_ctx_cls = TrinityExecutionContext

    default_paramstyle = "qmark"
    supports_alter = True
    supports_schemas = True
    supports_comments = True
    inline_comments = True
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

    # -- reflection of many tables (SQLAlchemy 2's get_multi_*) -----------------------
    #
    # MetaData.reflect and Table(autoload_with=...) ask for every facet of a
    # namespace's tables, one facet at a time: the facts of the tables are read
    # once (cached in the inspector's cache like PostgreSQL's table OIDs), and
    # every facet is computed from them. The get_<kind> and get_multi_<kind>
    # methods themselves are made from lookups.FACETS (_with_facets).

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
        facet: Facet,
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


__all__ = [
    "CATALOG_NAMESPACES",
    "TrinityDialect",
    "TrinityExecutionContext",
]
