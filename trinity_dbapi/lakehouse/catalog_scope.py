"""Which objects a catalog table read builds rows for: point lookups and range scans.

A :class:`CatalogScope` narrows what :func:`~trinity_dbapi.lakehouse.catalog.catalog_table`
loads, never what a query answers: the SQL layer derives it from the WHERE
clause (``namespace_name = 'n1'``, ``table_name IN (...)``, ``table_name
LIKE 't01%'``) and still evaluates the whole clause over the rows built. So
a scope must only ever *include* every object a matching row could come
from. Exact names become tree point lookups (depth + 2 reads each); a
namespace alone or a name prefix becomes a scan of that key range, which
reads keys only; a definition file is read only when the query needs a
column the key does not hold (``definitions``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trinity_dbapi.errors import InvalidNameError, NoSuchNamespaceError, ProgrammingError
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import NamespaceDefinition, TableDefinition

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.objects import ObjectOperations

__all__ = [
    "EVERYTHING",
    "NAME_COLUMNS",
    "CatalogScope",
    "namespace_names",
    "namespaces_scope",
    "scoped_namespace_names",
    "scoped_namespaces",
    "scoped_tables",
]


@dataclass(frozen=True)
class CatalogScope:
    """The objects a catalog read must cover; None means no restriction.

    Attributes:
        namespaces: exact namespace names (``namespace_name IN (...)``).
        tables: exact table names.
        table_prefix: every table name starts with it (``LIKE 'prefix%'``).
        definitions: whether columns held only by definition files are needed;
            when false, rows carry names only and their other columns are NULL
            or empty (the query never reads them).
        newest_versions: ``system.versions`` needs only this many newest
            versions (``ORDER BY version DESC LIMIT k``): k roots are read.
    """

    namespaces: frozenset[str] | None = None
    tables: frozenset[str] | None = None
    table_prefix: str | None = None
    definitions: bool = True
    newest_versions: int | None = None


#: No narrowing: every object, with its definition.
EVERYTHING = CatalogScope()


def _existing_namespace(view: ObjectOperations, name: str) -> bool:
    try:
        key = keys.namespace_key(name, view.snapshot.definition.key_limits)
    except InvalidNameError:
        return False  # no namespace can have this name, so no row matches it
    return view.get(key) is not None


def scoped_namespace_names(view: ObjectOperations, scope: CatalogScope) -> list[str]:
    """The namespace names in scope, in key order (sorted), read as keys only."""
    if scope.namespaces is None:
        return view.list_namespaces()
    return [name for name in sorted(scope.namespaces) if _existing_namespace(view, name)]


def scoped_namespaces(view: ObjectOperations, scope: CatalogScope) -> list[NamespaceDefinition]:
    """The namespaces in scope; without ``definitions``, name-only stand-ins."""
    names = scoped_namespace_names(view, scope)
    if not scope.definitions:
        return [NamespaceDefinition(name, {}) for name in names]
    return [view.load_namespace(name) for name in names]


def scoped_tables(view: ObjectOperations, scope: CatalogScope) -> list[tuple[str, TableDefinition]]:
    """The tables in scope, in key order.

    A table's key exists only while its namespace's does, so named
    namespaces are not looked up first. Without ``definitions`` each table
    is a name-only stand-in and no definition file is read.
    """
    limits = view.snapshot.definition.key_limits
    named = scope.namespaces
    namespaces = view.list_namespaces() if named is None else sorted(named)
    found: list[tuple[str, TableDefinition]] = []
    for namespace in namespaces:
        for name, path in _table_paths(view, scope, namespace, limits):
            if scope.definitions:
                definition = view.read_object_definition(path, TableDefinition)
            else:
                # A stand-in: the query reads none of the columns it fills.
                definition = TableDefinition(name, table_format="(not read)")
            found.append((namespace, definition))
    return found


def _table_paths(
    view: ObjectOperations, scope: CatalogScope, namespace: str, limits: keys.KeyLimits
) -> list[tuple[str, str]]:
    """``(table name, definition path)`` of the tables in scope of one namespace."""
    if scope.tables is not None:
        paths = []
        for name in sorted(scope.tables):
            if scope.table_prefix is not None and not name.startswith(scope.table_prefix):
                continue
            try:
                key = keys.table_key(namespace, name, limits)
            except InvalidNameError:
                continue  # no table can have this name
            path = view.get(key)
            if path is not None:
                paths.append((name, path))
        return paths
    try:
        prefix = keys.namespace_tables_prefix(namespace, limits)
    except InvalidNameError:
        return []  # no namespace can have this name
    if scope.table_prefix is not None:
        # A table key is the prefix, a space, the name, padding spaces: a name
        # prefix is a key prefix (names hold no character at or below space).
        prefix += " " + scope.table_prefix
    return [
        (str(keys.decode_key(key, limits).table), path) for key, path in view.scan_prefix(prefix)
    ]


def namespace_names(namespaces: Iterable[str] | None) -> frozenset[str] | None:
    """A caller's ``namespaces=`` argument as a set of names (None stays None).

    Raises:
        ProgrammingError: ``namespaces`` is a string (a list of names is
            meant) or holds something other than strings.
    """
    if namespaces is None:
        return None
    if isinstance(namespaces, str):
        raise ProgrammingError(
            f"namespaces must be a list of namespace names such as [{namespaces!r}], "
            f"not the string {namespaces!r}"
        )
    names = frozenset(namespaces)
    for name in names:
        if not isinstance(name, str):
            raise ProgrammingError(
                f"namespaces must hold namespace names (strings), not "
                f"{type(name).__name__} {name!r}"
            )
    return names


def namespaces_scope(view: ObjectOperations, namespaces: Iterable[str] | None) -> CatalogScope:
    """The scope of exactly ``namespaces``, each looked up to exist; None gives :data:`EVERYTHING`.

    For callers that expose a chosen set of namespaces (the DuckDB bridge's
    ``attach(namespaces=...)``, Spark's ``register_views``): their tables are
    then read as one key range each, and catalog rows cover those only.

    Raises:
        ProgrammingError: see :func:`namespace_names`.
        NoSuchNamespaceError: a named namespace does not exist (the first
            such name in sorted order).
    """
    names = namespace_names(namespaces)
    if names is None:
        return EVERYTHING
    for name in sorted(names):
        if not _existing_namespace(view, name):
            raise NoSuchNamespaceError(name)
    return CatalogScope(namespaces=names)


#: Per catalog table ``(namespace, name)``: the column holding each row's
#: namespace name and the one holding its table name (None: no table column).
#: A condition on these narrows a scope; ``system.versions`` has neither.
NAME_COLUMNS: Mapping[tuple[str, str], tuple[str, str | None]] = {
    ("system", "namespaces"): ("namespace_name", None),
    ("system", "tables"): ("namespace_name", "table_name"),
    ("system", "columns"): ("namespace_name", "table_name"),
    ("information_schema", "schemata"): ("schema_name", None),
    ("information_schema", "tables"): ("table_schema", "table_name"),
    ("information_schema", "columns"): ("table_schema", "table_name"),
}
