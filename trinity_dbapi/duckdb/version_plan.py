"""What one lakehouse version looks like in DuckDB: the objects an attachment keeps.

:func:`plan_version` reads a pinned version (its tables, catalog tables and
lakehouse views, of the namespaces attached) and says, per DuckDB schema,
which view or table each becomes (:class:`BridgeObject`): a table's view
over the files :func:`~trinity_dbapi.tables.scan.plan_view_scan` lists (or
an Arrow dataset), a catalog table's rows, a lakehouse view's query over the
attached objects (:mod:`~trinity_dbapi.duckdb.lake_views`).
:class:`~trinity_dbapi.duckdb.attached.Attached` then makes the caller's
DuckDB connection hold exactly that; nothing here touches it.

Imports from duckdb/: lake_views, views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trinity_dbapi.duckdb import lake_views, views

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition, ViewDefinition
    from trinity_dbapi.lakehouse.catalog_scope import CatalogScope
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse, Snapshot
    from trinity_dbapi.lakehouse.transaction import Transaction

__all__ = ["CATALOG_SCHEMAS", "BridgeObject", "Plan", "plan_version"]

#: Lakehouse catalog namespace -> the DuckDB schema name (before the prefix).
CATALOG_SCHEMAS: Mapping[str, str] = {
    "system": "trinity_system",
    "information_schema": "trinity_information_schema",
}


@dataclass(frozen=True)
class BridgeObject:
    """One view or table the bridge keeps in DuckDB.

    Attributes:
        kind: ``VIEW`` or ``TABLE``.
        select: the SELECT it holds; with ``data``, only the select list, read
            from the hidden name ``data`` is registered under.
        comment: what it shows (stored after the marker). Not compared: a view
            whose SELECT did not change is kept, with the version it was made at.
        data: a pyarrow dataset (a view's fallback) or table (a catalog table)
            to register for the statement, or None. Objects with data are made
            again on every refresh.
        rank: 0, or for a lakehouse view its place in the order DuckDB can
            create them in (after the objects it reads). Lakehouse views are
            made again on every refresh, after every other object: DuckDB
            binds a view when it is created.
    """

    kind: str
    select: str
    comment: str = field(compare=False)
    data: Any = field(default=None, compare=False)
    rank: int = field(default=0, compare=False)


#: DuckDB schema -> object name -> object.
Plan = dict[str, dict[str, BridgeObject]]


def plan_version(
    lakehouse: Lakehouse,
    snapshot: Snapshot,
    *,
    prefix: str,
    namespaces: Iterable[str] | None,
    catalog: bool,
    file_path: Callable[[str], str],
) -> tuple[Plan, dict[str, str], dict[str, str]]:
    """Every object the version needs, by schema; namespace -> schema; unreadable views.

    The tables are read as the catalog tables read them (the same
    :class:`~trinity_dbapi.lakehouse.catalog_scope.CatalogScope`): one
    key range scan per namespace and each definition through the
    lakehouse's definition cache, so the catalog tables built next read
    no definition file again, and chosen namespaces read nothing else.

    Args:
        lakehouse: the attached lakehouse.
        snapshot: the version pinned.
        prefix: put before every schema name.
        namespaces: the namespaces attached (None: every one).
        catalog: whether the catalog tables are attached.
        file_path: a data file's path as DuckDB reads it, from its path
            relative to the lakehouse root.
    """
    from trinity_dbapi.lakehouse.catalog_scope import (
        namespaces_scope,
        scoped_namespace_names,
        scoped_tables,
    )
    from trinity_dbapi.lakehouse.catalog_views import scoped_views
    from trinity_dbapi.lakehouse.transaction import Transaction

    view = Transaction(lakehouse, snapshot, read_only=True)
    scope = namespaces_scope(view, namespaces)  # NoSuchNamespaceError
    where = f"lakehouse {lakehouse.storage.root_uri} as of version {snapshot.version}"
    plan: Plan = {}
    schemas: dict[str, str] = {}
    for namespace in scoped_namespace_names(view, scope):
        schema = schemas[namespace] = prefix + namespace
        plan[schema] = {}
    stand_ins: dict[str, dict[str, Any]] = {}
    tables = scoped_tables(view, scope)
    for namespace, definition in tables:
        obj = _table_object(lakehouse, definition, namespace, where, file_path)
        plan[schemas[namespace]][definition.name] = obj
        empty = views.empty_select(definition.columns)
        stand_ins.setdefault(schemas[namespace], {})[definition.name] = empty
    lakehouse_views = scoped_views(view, scope, {(ns, t.name) for ns, t in tables})
    if catalog:
        _plan_catalog(view, snapshot, scope, prefix, plan, schemas, where, stand_ins)
    unreadable = _plan_views(lakehouse_views, plan, schemas, where, stand_ins)
    return plan, schemas, unreadable


def _plan_catalog(
    view: Transaction,
    snapshot: Snapshot,
    scope: CatalogScope,
    prefix: str,
    plan: Plan,
    schemas: dict[str, str],
    where: str,
    stand_ins: dict[str, dict[str, Any]],
) -> None:
    from trinity_dbapi.lakehouse import catalog

    if scope.namespaces is not None:
        # The catalog's own tables stay listed in information_schema, as
        # in a full attachment: their rows belong to the reserved namespaces.
        shown = scope.namespaces | catalog.RESERVED_NAMESPACES
        scope = dataclasses.replace(scope, namespaces=shown)
    for namespace, name in catalog.CATALOG_TABLES:
        schema = schemas[namespace] = prefix + CATALOG_SCHEMAS[namespace]
        data = catalog.catalog_table(view, snapshot, namespace, name, scope)
        comment = f"{where}, catalog table {namespace}.{name}"
        plan.setdefault(schema, {})[name] = BridgeObject("TABLE", "*", comment, data)
        stand_ins.setdefault(schema, {})[name] = data


def _plan_views(
    definitions: list[tuple[str, ViewDefinition]],
    plan: Plan,
    schemas: dict[str, str],
    where: str,
    stand_ins: dict[str, dict[str, Any]],
) -> dict[str, str]:
    """Add the lakehouse views to ``plan``; return the unreadable ones and why."""
    names = {schema: set(objects) for schema, objects in plan.items()}
    made, unreadable = lake_views.view_objects(definitions, names, schemas, where, stand_ins)
    for rank, (schema, name, select, comment) in enumerate(made, 1):
        plan[schema][name] = BridgeObject("VIEW", select, comment, rank=rank)
    return unreadable


def _table_object(
    lakehouse: Lakehouse,
    definition: TableDefinition,
    namespace: str,
    where: str,
    file_path: Callable[[str], str],
) -> BridgeObject:
    from trinity_dbapi.tables import scan

    comment = f"{where}, table {namespace}.{definition.name}"
    columns = definition.columns
    storage = lakehouse.storage
    plan = scan.plan_view_scan(storage, definition)
    if plan.form is scan.ScanForm.EMPTY:
        return BridgeObject("VIEW", views.empty_select(columns), comment)
    if plan.form is scan.ScanForm.ARROW_DATASET:
        dataset = plan.arrow_dataset(storage)
        return BridgeObject(
            "VIEW", views.cast_items(columns), f"{comment} (Arrow dataset)", dataset
        )
    files = [file_path(relative) for relative in plan.files]
    select = scan.parquet_select(columns, plan.partition_by, files)
    return BridgeObject("VIEW", select, comment)
