"""Reflection as it was before it used point lookups: SQL over the catalog tables.

Kept for the tests only, to show that the lookups report exactly what these
queries reported. It is the dialect's reflection of the commit before
``trinity_dbapi.sqlalchemy.lookups``, verbatim (but for the SQLAlchemy 1.4
stand-ins of ``compat.py``), with SQLAlchemy's default
``get_multi_*`` methods (each calling the single-table method per table).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exc
from sqlalchemy.engine import default

from trinity_dbapi.sqlalchemy.compat import (
    ReflectedCheckConstraint,
    ReflectedColumn,
    ReflectedForeignKeyConstraint,
    ReflectedIndex,
    ReflectedPrimaryKeyConstraint,
    ReflectedTableComment,
    ReflectedUniqueConstraint,
    driver_connection,
    reflection_cache,
)
from trinity_dbapi.sqlalchemy.dialect import CATALOG_NAMESPACES
from trinity_dbapi.sqlalchemy.driver import TrinityDialect_trinity_dbapi
from trinity_dbapi.sqlalchemy.types import sqlalchemy_type

MULTI = (
    "get_multi_columns",
    "get_multi_pk_constraint",
    "get_multi_foreign_keys",
    "get_multi_indexes",
    "get_multi_unique_constraints",
    "get_multi_check_constraints",
    "get_multi_table_comment",
    "get_multi_table_options",
)


class SqlReflectionDialect(TrinityDialect_trinity_dbapi):  # type: ignore[misc]
    """The dialect with the SQL reflection of before."""

    # -- reflection ---------------------------------------------------------------

    def _rows(self, connection: Any, sql: str, *params: Any) -> list[Any]:
        return list(connection.exec_driver_sql(sql, params).fetchall())

    def _schema(self, schema_name: str | None) -> str:
        return schema_name or self.default_schema_name

    def _get_default_schema_name(self, connection: Any) -> str:
        return str(driver_connection(connection).namespace)

    @reflection_cache
    def get_schema_names(self, connection: Any, **kw: Any) -> list[str]:
        rows = self._rows(connection, "SELECT namespace_name FROM system.namespaces")
        # The catalog namespaces are browsable too (has_schema agrees).
        return sorted([row[0] for row in rows] + list(CATALOG_NAMESPACES))

    @reflection_cache
    def has_schema(self, connection: Any, schema_name: str, **kw: Any) -> bool:
        if schema_name in CATALOG_NAMESPACES:
            return True
        sql = "SELECT 1 FROM system.namespaces WHERE namespace_name = ?"
        return bool(self._rows(connection, sql, schema_name))

    @reflection_cache
    def get_table_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        namespace = self._schema(schema)
        if namespace in CATALOG_NAMESPACES:
            from trinity_dbapi.lakehouse import catalog

            return sorted(catalog.catalog_table_names(namespace))
        # A namespace that does not exist has no tables (as in PostgreSQL); the
        # default one exists only once something is created in it.
        sql = "SELECT table_name FROM system.tables WHERE namespace_name = ? ORDER BY 1"
        return [row[0] for row in self._rows(connection, sql, namespace)]

    @reflection_cache
    def get_view_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        return []  # the lakehouse holds tables only

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
        sql = "SELECT 1 FROM system.tables WHERE namespace_name = ? AND table_name = ?"
        return bool(self._rows(connection, sql, namespace, table_name))

    @reflection_cache
    def get_columns(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedColumn]:
        from trinity_dbapi.sql.dialect import parse_type_sql

        namespace = self._schema(schema)
        if namespace in CATALOG_NAMESPACES:
            return self._catalog_columns(connection, namespace, table_name)
        sql = (
            "SELECT column_name, data_type, is_nullable, comment FROM system.columns "
            "WHERE namespace_name = ? AND table_name = ? ORDER BY ordinal_position"
        )
        rows = self._rows(connection, sql, namespace, table_name)
        if not rows:
            self._require_table(connection, namespace, table_name)
        return [
            {
                "name": name,
                "type": sqlalchemy_type(parse_type_sql(type_text)),
                "nullable": bool(nullable),
                "default": None,
                "comment": comment,
            }
            for name, type_text, nullable, comment in rows
        ]

    def _catalog_columns(
        self, connection: Any, namespace: str, table_name: str
    ) -> list[ReflectedColumn]:
        from trinity_dbapi.format.type_mapping import data_type_from_field
        from trinity_dbapi.lakehouse import catalog

        if not catalog.is_catalog_table(namespace, table_name):
            raise exc.NoSuchTableError(f"{namespace}.{table_name}")
        return [
            {
                "name": field.name,
                "type": sqlalchemy_type(data_type_from_field(field)),
                "nullable": field.nullable,
                "default": None,
                "comment": None,
            }
            for field in catalog.catalog_schema(namespace, table_name)
        ]

    @reflection_cache
    def get_pk_constraint(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> ReflectedPrimaryKeyConstraint:
        columns = self._table_row(connection, table_name, schema)["primary_key"]
        return {"constrained_columns": list(columns or ()), "name": None}

    @reflection_cache
    def get_foreign_keys(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedForeignKeyConstraint]:
        self._table_row(connection, table_name, schema)
        return []

    @reflection_cache
    def get_unique_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedUniqueConstraint]:
        self._table_row(connection, table_name, schema)
        return []

    @reflection_cache
    def get_check_constraints(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedCheckConstraint]:
        self._table_row(connection, table_name, schema)
        return []

    @reflection_cache
    def get_indexes(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> list[ReflectedIndex]:
        row = self._table_row(connection, table_name, schema)
        # Secondary indices are the format properties "index.<name>" = column.
        found = sorted(
            (key[len("index.") :], column)
            for key, column in row["format_properties"] or ()
            if key.startswith("index.")
        )
        return [
            ReflectedIndex(name=name, column_names=[column], unique=False, dialect_options={})
            for name, column in found
        ]

    @reflection_cache
    def get_table_comment(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> ReflectedTableComment:
        return {"text": self._table_row(connection, table_name, schema)["comment"]}

    @reflection_cache
    def get_table_options(
        self, connection: Any, table_name: str, schema: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        row = self._table_row(connection, table_name, schema)
        options: dict[str, Any] = {}
        if row["partition_columns"]:
            options["trinity_partitioned_by"] = list(row["partition_columns"])
        if row["properties"]:
            options["trinity_properties"] = dict(row["properties"])
        return options

    def _table_row(self, connection: Any, table_name: str, schema: str | None) -> dict[str, Any]:
        namespace = self._schema(schema)
        if namespace in CATALOG_NAMESPACES:
            from trinity_dbapi.lakehouse import catalog

            if not catalog.is_catalog_table(namespace, table_name):
                raise exc.NoSuchTableError(f"{namespace}.{table_name}")
            return {
                "primary_key": [],
                "format_properties": [],
                "comment": None,
                "partition_columns": [],
                "properties": [],
            }
        sql = (
            "SELECT primary_key, format_properties, comment, partition_columns, properties "
            "FROM system.tables WHERE namespace_name = ? AND table_name = ?"
        )
        rows = self._rows(connection, sql, namespace, table_name)
        if not rows:
            raise exc.NoSuchTableError(f"{namespace}.{table_name}")
        names = ("primary_key", "format_properties", "comment", "partition_columns", "properties")
        return dict(zip(names, rows[0], strict=True))

    def _require_table(self, connection: Any, namespace: str, table_name: str) -> None:
        if not self.has_table(connection, table_name, namespace):
            raise exc.NoSuchTableError(f"{namespace}.{table_name}")


for _name in MULTI:
    if hasattr(default.DefaultDialect, _name):  # SQLAlchemy 2 (1.4 has no get_multi_*)
        setattr(SqlReflectionDialect, _name, getattr(default.DefaultDialect, _name))
