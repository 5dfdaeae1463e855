"""Catalog metadata as Arrow tables: the ``system`` and ``information_schema`` namespaces.

Two namespaces are reserved (:data:`RESERVED_NAMESPACES`): they are never stored
in the lakehouse tree, and each of their tables is computed on demand from one
pinned read view (an :class:`~trinity_dbapi.lakehouse.objects.ObjectOperations`, usually a
:class:`~trinity_dbapi.lakehouse.transaction.Transaction`) and its snapshot. Time travel
is therefore free: pass an older snapshot and ``Transaction(lakehouse,
snapshot, read_only=True)`` on it, and every table shows the catalog as it was.
A read-write transaction also shows its own uncommitted changes. A
:class:`~trinity_dbapi.lakehouse.catalog_scope.CatalogScope` narrows the
objects whose rows are built (point lookups, key range scans, names only).

``system`` describes the lakehouse objects, in TrinityLake terms:

* ``system.namespaces`` -- one row per namespace;
* ``system.tables`` -- one row per table;
* ``system.columns`` -- one row per top-level column of every table;
* ``system.versions`` -- one row per retained version up to the snapshot's;
* ``system.data_files`` -- one row per live data file (:mod:`.catalog_files`);
* ``system.refs`` -- one row per branch (main first) and tag, as the
  lakehouse has them now (:mod:`.branches`).

``information_schema`` describes everything SQL can see, in the column layout
of DuckDB's ``information_schema`` (itself the SQL standard's, as in Postgres),
so BI tools that know DuckDB or Postgres can browse a lakehouse:

* ``information_schema.schemata`` -- every namespace, plus ``system`` and
  ``information_schema`` themselves (tools expect them);
* ``information_schema.tables`` -- every table, plus the catalog tables;
* ``information_schema.columns`` -- their columns;
* ``information_schema.views`` -- every view and its query.

Views are listed beside tables (``table_type`` ``VIEW``; see
:mod:`~trinity_dbapi.lakehouse.catalog_views`).

Conventions shared with the SQL layer:

* A namespace or table ``COMMENT`` is stored in its ``comment`` property
  (:data:`COMMENT_PROPERTY`); the catalog tables show it in a ``comment``
  column and leave it out of the ``properties`` map. Column comments are
  :attr:`Column.comment <trinity_dbapi.format.definitions.Column.comment>`.
* A table's partition columns are
  :attr:`TableDefinition.partition_columns
  <trinity_dbapi.format.definitions.TableDefinition.partition_columns>`.
* The catalog name (``catalog_name``, ``table_catalog``) is the lakehouse name
  from the lakehouse definition the snapshot points at.
* Catalog tables have ``table_type`` ``VIEW`` in ``information_schema.tables``,
  as Postgres lists its own ``information_schema`` views (DuckDB does not list
  its catalog views there at all); user tables are ``BASE TABLE``.
* ``data_type`` in ``information_schema.columns`` is DuckDB type text and
  ``udt_name`` the TrinityLake type text; the numeric, length and datetime
  facts of each type are :mod:`~trinity_dbapi.lakehouse.catalog_columns`'s.
  The columns of catalog tables are typed by inference from their Arrow
  schema (:func:`~trinity_dbapi.format.type_mapping.columns_from_schema`).

Names are matched exactly (``is_catalog_table("system", "tables")``); folding
the case of SQL identifiers is the SQL layer's business.

Imports from lakehouse/: branches, catalog_columns, catalog_files, catalog_scope,
catalog_views, chain, history, objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from trinity_dbapi.errors import InvalidNameError, NoSuchTableError
from trinity_dbapi.format import arrow_values, keys
from trinity_dbapi.format.definitions import (
    MAIN,
    Column,
    FrozenMap,
    NamespaceDefinition,
    TableDefinition,
    ViewDefinition,
)
from trinity_dbapi.format.type_mapping import columns_from_schema
from trinity_dbapi.lakehouse import catalog_files
from trinity_dbapi.lakehouse import catalog_views as cv
from trinity_dbapi.lakehouse.branches import list_refs
from trinity_dbapi.lakehouse.catalog_columns import INFO_COLUMNS_SCHEMA, column_row
from trinity_dbapi.lakehouse.catalog_scope import (
    EVERYTHING,
    CatalogScope,
    scoped_namespaces,
    scoped_tables,
    scoped_versions,
)

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot
    from trinity_dbapi.lakehouse.history import VersionInfo
    from trinity_dbapi.lakehouse.objects import ObjectOperations

__all__ = [
    "CATALOG_TABLES",
    "COMMENT_PROPERTY",
    "INFORMATION_SCHEMA",
    "RESERVED_NAMESPACES",
    "SYSTEM",
    "CatalogTable",
    "catalog_rows",
    "catalog_schema",
    "catalog_table",
    "catalog_table_names",
    "is_catalog_table",
]

SYSTEM = "system"
INFORMATION_SCHEMA = "information_schema"
#: Namespaces holding read-only catalog tables; the SQL layer refuses writes to them.
RESERVED_NAMESPACES = frozenset({SYSTEM, INFORMATION_SCHEMA})
#: The namespace or table property holding its ``COMMENT``.
COMMENT_PROPERTY = "comment"

Row = Mapping[str, Any]


# --- what one catalog read sees ------------------------------------------------


@dataclass(frozen=True)
class _Relation:
    """A table as ``information_schema`` shows it: a user table or a catalog table."""

    namespace: str
    name: str
    columns: tuple[Column, ...]
    comment: str | None
    is_catalog: bool


class _Catalog:
    """The objects of one pinned view, each loaded once per catalog table built."""

    def __init__(
        self, view: ObjectOperations, snapshot: Snapshot, scope: CatalogScope = EVERYTHING
    ) -> None:
        self.view = view
        self.snapshot = snapshot
        self.scope = scope

    @cached_property
    def name(self) -> str:
        return self.snapshot.definition.name

    @cached_property
    def namespaces(self) -> list[NamespaceDefinition]:
        return scoped_namespaces(self.view, self.scope)

    @cached_property
    def tables(self) -> list[tuple[str, TableDefinition]]:
        return scoped_tables(self.view, self.scope)

    @cached_property
    def views(self) -> list[tuple[str, ViewDefinition]]:
        tables = {(ns, t.name) for ns, t in self.tables}  # a name is a table's or a view's
        return cv.scoped_views(self.view, self.scope, tables)

    @cached_property
    def relations(self) -> list[_Relation]:
        user = [
            _Relation(ns, t.name, tuple(t.columns), t.properties.get(COMMENT_PROPERTY), False)
            for ns, t in self.tables
        ] + [  # a view is read-only as a catalog table is: is_catalog marks both
            _Relation(ns, v.name, tuple(v.columns), v.properties.get(COMMENT_PROPERTY), True)
            for ns, v in self.views
        ]
        scope = self.scope
        catalog = [
            _Relation(t.namespace, t.name, _catalog_columns(t.namespace, t.name), t.comment, True)
            for t in CATALOG_TABLES.values()
            # A scope names what a matching row may come from; the catalog's own
            # tables are rows too, so they follow it (a point query skips them).
            if (scope.namespaces is None or t.namespace in scope.namespaces)
            and (scope.tables is None or t.name in scope.tables)
            and (scope.table_prefix is None or t.name.startswith(scope.table_prefix))
        ]
        return sorted(user + catalog, key=lambda rel: (rel.namespace, rel.name))

    def versions(self) -> list[VersionInfo]:
        """The retained versions in scope up to the snapshot's, oldest first."""
        return scoped_versions(self.snapshot, self.scope.versions)


# --- catalog tables --------------------------------------------------------------


@dataclass(frozen=True)
class CatalogTable:
    """One read-only catalog table.

    Attributes:
        namespace: ``system`` or ``information_schema``.
        name: the table name.
        comment: what the table holds (its ``TABLE_COMMENT``).
        schema: the fixed Arrow schema, whatever the lakehouse holds.
        rows: builds the rows, as dicts keyed by column name (missing = NULL).
    """

    namespace: str
    name: str
    comment: str
    schema: pa.Schema
    rows: Callable[[_Catalog], Iterable[Row]]

    def build(self, catalog: _Catalog) -> pa.Table:
        # Not pa.Table.from_pylist, which imports pandas (0.2 s) in a new process.
        return arrow_values.table(list(self.rows(catalog)), self.schema)


def _schema(*fields: tuple[str, pa.DataType] | tuple[str, pa.DataType, bool]) -> pa.Schema:
    """A schema from ``(name, type)`` or ``(name, type, nullable)`` tuples."""
    return pa.schema([pa.field(*field) for field in fields])


_STRING = pa.string()
_STRING_LIST = pa.list_(pa.string())
_STRING_MAP = pa.map_(pa.string(), pa.string())


def _without_comment(properties: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in properties.items() if k != COMMENT_PROPERTY}


def _column_names(table: TableDefinition, ids: Iterable[int]) -> list[str]:
    by_id = {col.id: col.name for col in table.columns}
    return [by_id[column_id] for column_id in ids]


# system.namespaces

_NAMESPACES_SCHEMA = _schema(
    ("namespace_name", _STRING, False),
    ("comment", _STRING),
    ("properties", _STRING_MAP),
)


def _namespaces_rows(catalog: _Catalog) -> Iterator[Row]:
    for ns in catalog.namespaces:
        yield {
            "namespace_name": ns.name,
            "comment": ns.properties.get(COMMENT_PROPERTY),
            "properties": _without_comment(ns.properties),
        }


# system.tables

_TABLES_SCHEMA = _schema(
    ("namespace_name", _STRING, False),
    ("table_name", _STRING, False),
    ("table_type", _STRING, False),
    ("table_format", _STRING, False),
    ("comment", _STRING),
    ("column_count", pa.int32(), False),
    ("primary_key", _STRING_LIST, False),
    ("partition_columns", _STRING_LIST, False),
    ("properties", _STRING_MAP),
    ("format_properties", _STRING_MAP),
)


def _tables_rows(catalog: _Catalog) -> Iterator[Row]:
    for ns, table in catalog.tables:
        yield {
            "namespace_name": ns,
            "table_name": table.name,
            "table_type": table.table_type,
            "table_format": table.table_format,
            "comment": table.properties.get(COMMENT_PROPERTY),
            "column_count": len(table.columns),
            "primary_key": _column_names(table, table.primary_key),
            "partition_columns": table.partition_columns,
            "properties": _without_comment(table.properties),
            "format_properties": dict(table.format_properties),
        }
    yield from (cv.system_table_row(ns, view) for ns, view in catalog.views)


# system.columns

_COLUMNS_SCHEMA = _schema(
    ("namespace_name", _STRING, False),
    ("table_name", _STRING, False),
    ("column_name", _STRING, False),
    ("ordinal_position", pa.int32(), False),
    ("column_id", pa.int64(), False),  # IDs are uint32: int32 would not hold them all
    ("data_type", _STRING, False),
    ("is_nullable", pa.bool_(), False),
    ("comment", _STRING),
    ("is_primary_key", pa.bool_(), False),
    ("is_partition_key", pa.bool_(), False),
)


def _columns_rows(catalog: _Catalog) -> Iterator[Row]:
    for ns, table in catalog.tables:
        primary_key = set(table.primary_key)
        partitions = set(table.partition_columns)
        for position, col in enumerate(table.columns, 1):
            yield {
                "namespace_name": ns,
                "table_name": table.name,
                "column_name": col.name,
                "ordinal_position": position,
                "column_id": col.id,
                "data_type": col.type.to_sql(),
                "is_nullable": col.nullable,
                "comment": col.comment,
                "is_primary_key": col.id in primary_key,
                "is_partition_key": col.name in partitions,
            }
    yield from cv.system_columns_rows(catalog.views)


# system.versions

_VERSIONS_SCHEMA = _schema(
    ("version", pa.int64(), False),
    ("created_at", pa.timestamp("ms", tz="UTC"), False),
    ("previous_root", _STRING),
    ("rollback_from_root", _STRING),
    ("txn_id", _STRING),
    ("changed_keys", _STRING_LIST, False),
    ("changed_objects", _STRING_LIST, False),
    ("author", _STRING),
    ("commit_message", _STRING),
)


def _describe_key(key: str, limits: keys.KeyLimits) -> str:
    """``namespace ns1``, ``table ns1.t1`` or ``view ns1.v1`` for an object key, else the key."""
    try:
        obj = keys.decode_key(key, limits)
    except InvalidNameError:
        return key
    if obj.table is None:
        return f"namespace {obj.namespace}"
    return f"{obj.kind} {obj.namespace}.{obj.table}"


def _versions_rows(catalog: _Catalog) -> Iterator[Row]:
    limits = catalog.snapshot.definition.key_limits
    for info in catalog.versions():
        yield {
            "version": info.version,
            "created_at": info.created_at_millis,
            "previous_root": info.previous_root,
            "rollback_from_root": info.rollback_from_root,
            "txn_id": info.txn_id,
            "changed_keys": list(info.changed_keys),
            "changed_objects": [_describe_key(key, limits) for key in info.changed_keys],
            "author": info.author,
            "commit_message": info.commit_message,
        }


# system.refs

_REFS_SCHEMA = _schema(
    ("ref_name", _STRING, False),
    ("ref_type", _STRING, False),
    ("version", pa.int64()),
    ("root", _STRING, False),
    ("base_version", pa.int64()),
    ("created_at", pa.timestamp("ms", tz="UTC")),
    ("current", pa.bool_(), False),
)


def _refs_rows(catalog: _Catalog) -> Iterator[Row]:
    # On main, the refs the version read records (no request more: time
    # travel shows them as they were); on a branch, main's latest.
    chain = catalog.snapshot.lakehouse
    current = chain.branch or MAIN
    at = catalog.snapshot if chain.branch is None else None
    for ref in list_refs(chain, at):
        yield {
            "ref_name": ref.name,
            "ref_type": ref.kind,
            "version": ref.version,
            "root": ref.root,
            "base_version": ref.base_version,
            "created_at": ref.created_at_millis,
            "current": ref.kind == "branch" and ref.name == current,
        }


# information_schema.schemata

_SCHEMATA_SCHEMA = pa.schema(
    [
        pa.field(name, _STRING)
        for name in (
            "catalog_name",
            "schema_name",
            "schema_owner",
            "default_character_set_catalog",
            "default_character_set_schema",
            "default_character_set_name",
            "sql_path",
        )
    ]
)


def _schemata_rows(catalog: _Catalog) -> Iterator[Row]:
    names = {ns.name for ns in catalog.namespaces} | RESERVED_NAMESPACES
    for name in sorted(names):
        yield {"catalog_name": catalog.name, "schema_name": name}


# information_schema.tables

_INFO_TABLES_SCHEMA = cv.INFO_TABLES_SCHEMA


def _info_tables_rows(catalog: _Catalog) -> Iterator[Row]:
    for rel in catalog.relations:
        yield {
            "table_catalog": catalog.name,
            "table_schema": rel.namespace,
            "table_name": rel.name,
            "table_type": "VIEW" if rel.is_catalog else "BASE TABLE",
            "is_insertable_into": "NO" if rel.is_catalog else "YES",
            "is_typed": "NO",
            "TABLE_COMMENT": rel.comment,
        }


# information_schema.columns


def _info_columns_rows(catalog: _Catalog) -> Iterator[Row]:
    for rel in catalog.relations:
        for position, col in enumerate(rel.columns, 1):
            yield column_row(
                catalog.name, rel.namespace, rel.name, position, col, updatable=not rel.is_catalog
            )


# --- the registry ----------------------------------------------------------------

_TABLES = (
    CatalogTable(
        SYSTEM, "namespaces", "One row per namespace", _NAMESPACES_SCHEMA, _namespaces_rows
    ),
    CatalogTable(SYSTEM, "tables", "One row per table", _TABLES_SCHEMA, _tables_rows),
    CatalogTable(
        SYSTEM, "columns", "One row per top-level table column", _COLUMNS_SCHEMA, _columns_rows
    ),
    CatalogTable(
        SYSTEM, "versions", "One row per retained version", _VERSIONS_SCHEMA, _versions_rows
    ),
    CatalogTable(SYSTEM, "data_files", *catalog_files.DATA_FILES),
    CatalogTable(
        SYSTEM, "refs", "One row per branch (main first) and tag", _REFS_SCHEMA, _refs_rows
    ),
    CatalogTable(
        INFORMATION_SCHEMA,
        "schemata",
        "Every namespace, the catalog ones included",
        _SCHEMATA_SCHEMA,
        _schemata_rows,
    ),
    CatalogTable(
        INFORMATION_SCHEMA,
        "tables",
        "Every table and catalog view",
        _INFO_TABLES_SCHEMA,
        _info_tables_rows,
    ),
    CatalogTable(
        INFORMATION_SCHEMA,
        "views",
        "Every view",
        cv.INFO_VIEWS_SCHEMA,
        lambda catalog: cv.info_views_rows(catalog.name, catalog.views),
    ),
    CatalogTable(
        INFORMATION_SCHEMA,
        "columns",
        "Every column of every table and catalog view",
        INFO_COLUMNS_SCHEMA,
        _info_columns_rows,
    ),
)

#: Every catalog table by ``(namespace, name)``.
CATALOG_TABLES: Mapping[tuple[str, str], CatalogTable] = FrozenMap(
    {(table.namespace, table.name): table for table in _TABLES}
)


@cache
def _catalog_columns(namespace: str, name: str) -> tuple[Column, ...]:
    return columns_from_schema(CATALOG_TABLES[namespace, name].schema)


def _lookup(namespace: str, name: str) -> CatalogTable:
    table = CATALOG_TABLES.get((namespace, name))
    if table is None:
        raise NoSuchTableError(namespace, name)
    return table


def is_catalog_table(namespace: str, name: str) -> bool:
    """Whether ``namespace.name`` is a catalog table (exact, case-sensitive match)."""
    return (namespace, name) in CATALOG_TABLES


def catalog_table_names(namespace: str) -> list[str]:
    """The sorted catalog table names of ``namespace``; empty unless it is reserved."""
    return sorted(name for ns, name in CATALOG_TABLES if ns == namespace)


def catalog_schema(namespace: str, name: str) -> pa.Schema:
    """The fixed Arrow schema of a catalog table (for ``DESCRIBE system.tables``).

    Raises:
        NoSuchTableError: ``namespace.name`` is not a catalog table.
    """
    return _lookup(namespace, name).schema


def catalog_rows(
    view: ObjectOperations,
    snapshot: Snapshot,
    namespace: str,
    name: str,
    scope: CatalogScope = EVERYTHING,
) -> Iterator[Row]:
    """The rows :func:`catalog_table` would hold, as dicts (missing keys are NULL).

    For a caller that keeps a few of them: it converts only those to Arrow.
    """
    return iter(_lookup(namespace, name).rows(_Catalog(view, snapshot, scope)))


def catalog_table(
    view: ObjectOperations,
    snapshot: Snapshot,
    namespace: str,
    name: str,
    scope: CatalogScope = EVERYTHING,
) -> pa.Table:
    """Build a catalog table from a pinned view and its snapshot.

    Args:
        view: reads namespaces and tables; a read-only ``Transaction`` on
            ``snapshot`` for time travel.
        snapshot: the version whose history (``system.versions``) and
            lakehouse name (the catalog name) are shown.
        namespace: ``system`` or ``information_schema``.
        name: the catalog table name.
        scope: the objects whose rows are built (see
            :mod:`~trinity_dbapi.lakehouse.catalog_scope`); rows of other
            objects may or may not be present, so the caller filters them.

    Returns:
        The table, with :func:`catalog_schema` as its schema even when empty.

    Raises:
        NoSuchTableError: ``namespace.name`` is not a catalog table.
    """
    return _lookup(namespace, name).build(_Catalog(view, snapshot, scope))
