"""The views of a pinned read view as the catalog tables show them.

Views are listed by :mod:`~trinity_dbapi.lakehouse.catalog` beside the
tables: ``table_type`` ``VIEW`` in ``system.tables`` and
``information_schema.tables``, their bound columns in
``information_schema.columns``, and one row each in
``information_schema.views`` (DuckDB's column layout, as Postgres's). A
:class:`~trinity_dbapi.lakehouse.catalog_scope.CatalogScope` narrows them by
namespace, name and name prefix as it narrows tables.

Imports from lakehouse/: catalog_scope, objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from trinity_dbapi.errors import InvalidNameError
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import TRINITY_DIALECT, ViewDefinition
from trinity_dbapi.lakehouse.catalog_scope import CatalogScope

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.objects import ObjectOperations

__all__ = [
    "INFO_TABLES_SCHEMA",
    "INFO_VIEWS_SCHEMA",
    "info_views_rows",
    "scoped_views",
    "system_columns_rows",
    "system_table_row",
]

#: ``information_schema.tables`` (tables and views), column for column as DuckDB has it.
INFO_TABLES_SCHEMA = pa.schema(
    [
        pa.field(name, pa.string())
        for name in (
            "table_catalog",
            "table_schema",
            "table_name",
            "table_type",
            "self_referencing_column_name",
            "reference_generation",
            "user_defined_type_catalog",
            "user_defined_type_schema",
            "user_defined_type_name",
            "is_insertable_into",
            "is_typed",
            "commit_action",
            "TABLE_COMMENT",
        )
    ]
)

#: ``information_schema.views``, column for column as DuckDB has it.
INFO_VIEWS_SCHEMA = pa.schema(
    [
        pa.field(name, pa.string())
        for name in (
            "table_catalog",
            "table_schema",
            "table_name",
            "view_definition",
            "check_option",
            "is_updatable",
            "is_insertable_into",
            "is_trigger_updatable",
            "is_trigger_deletable",
            "is_trigger_insertable_into",
        )
    ]
)


def scoped_views(
    view: ObjectOperations, scope: CatalogScope, tables: set[tuple[str, str]]
) -> list[tuple[str, ViewDefinition]]:
    """The views in scope, in key order; as for tables, no namespace definition is read.

    Named views are point lookups, skipped for the names of ``tables`` (a name
    is a table's or a view's, never both); otherwise one key range scan per
    namespace.
    """
    limits = view.snapshot.definition.key_limits
    named = scope.namespaces
    namespaces = view.list_namespaces() if named is None else sorted(named)
    found = []
    for namespace in namespaces:
        try:
            if scope.tables is not None:
                paths = [
                    (name, view.get(keys.view_key(namespace, name, limits)))
                    for name in sorted(scope.tables)
                    if (namespace, name) not in tables
                ]
            else:
                prefix = keys.namespace_views_prefix(namespace, limits)
                paths = [
                    (str(keys.decode_key(key, limits).table), path)
                    for key, path in view.scan_prefix(prefix)
                ]
        except InvalidNameError:
            continue  # no view can have this name
        for name, path in paths:
            if path is None:
                continue
            if scope.table_prefix is not None and not name.startswith(scope.table_prefix):
                continue
            found.append((namespace, view.read_object_definition(path, ViewDefinition)))
    return found


def view_text(definition: ViewDefinition) -> str:
    """The statement that makes the view, as ``view_definition`` shows it."""
    return f"CREATE VIEW {definition.name} AS {definition.sql[TRINITY_DIALECT]};"  # as DuckDB


def system_table_row(namespace: str, definition: ViewDefinition) -> dict[str, Any]:
    """A view's row of ``system.tables``."""
    return {
        "namespace_name": namespace,
        "table_name": definition.name,
        "table_type": "VIEW",
        "table_format": "view",
        "comment": definition.properties.get("comment"),
        "column_count": len(definition.columns),
        "primary_key": [],
        "partition_columns": [],
        "properties": {k: v for k, v in definition.properties.items() if k != "comment"},
        "format_properties": {},
    }


def system_columns_rows(views: list[tuple[str, ViewDefinition]]) -> Iterator[Any]:
    """The rows of ``system.columns`` for views: their columns as bound at creation.

    A view has no primary key and no partitioning; its columns are nullable
    (DuckDB's ``information_schema.columns`` says ``YES`` for every view column).
    """
    for namespace, definition in views:
        for position, column in enumerate(definition.columns, 1):
            yield {
                "namespace_name": namespace,
                "table_name": definition.name,
                "column_name": column.name,
                "ordinal_position": position,
                "column_id": column.id,
                "data_type": column.type.to_sql(),
                "is_nullable": True,
                "comment": column.comment,
                "is_primary_key": False,
                "is_partition_key": False,
            }


def info_views_rows(catalog_name: str, views: list[tuple[str, ViewDefinition]]) -> Iterator[Any]:
    """The rows of ``information_schema.views``."""
    for namespace, definition in views:
        yield {
            "table_catalog": catalog_name,
            "table_schema": namespace,
            "table_name": definition.name,
            "view_definition": view_text(definition),
            "check_option": "NONE",
            **dict.fromkeys(
                (
                    "is_updatable",
                    "is_insertable_into",
                    "is_trigger_updatable",
                    "is_trigger_deletable",
                    "is_trigger_insertable_into",
                ),
                "NO",
            ),
        }
