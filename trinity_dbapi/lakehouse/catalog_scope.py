"""Which objects a catalog table read builds rows for: point lookups and range scans.

A :class:`CatalogScope` narrows what :func:`~trinity_dbapi.lakehouse.catalog.catalog_table`
loads, never what a query answers: the SQL layer derives it from the WHERE
clause (``namespace_name = 'n1'``, ``table_name IN (...)``, ``table_name
LIKE 't01%'``) and still evaluates the whole clause over the rows built. So
a scope must only ever *include* every object a matching row could come
from. Exact names become tree point lookups (depth + 2 reads each); a
namespace alone or a name prefix becomes a scan of that key range, which
reads keys only; a definition file is read only when the query needs a
column the key does not hold (``definitions``). For ``system.versions``, a
:class:`VersionScope` bounds the version numbers and creation times: exact
numbers are read root by root, a time bound costs the binary search time
travel uses, and a ``LIMIT`` reads only that many roots of the range.

Imports from lakehouse/: chain, history, objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trinity_dbapi.errors import (
    CorruptFileError,
    InvalidNameError,
    NoSuchNamespaceError,
    ProgrammingError,
)
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import NamespaceDefinition, TableDefinition
from trinity_dbapi.lakehouse.history import (
    VersionInfo,
    history,
    newest_versions,
    oldest_versions,
    versions_created,
)

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot
    from trinity_dbapi.lakehouse.objects import ObjectOperations

__all__ = [
    "EVERYTHING",
    "NAME_COLUMNS",
    "CatalogScope",
    "VersionScope",
    "names_scope",
    "namespace_names",
    "namespaces_scope",
    "scoped_namespace_names",
    "scoped_namespaces",
    "scoped_tables",
    "scoped_versions",
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
        versions: the versions ``system.versions`` needs (see :class:`VersionScope`).
    """

    namespaces: frozenset[str] | None = None
    tables: frozenset[str] | None = None
    table_prefix: str | None = None
    definitions: bool = True
    versions: VersionScope | None = None


@dataclass(frozen=True)
class VersionScope:
    """The versions whose ``system.versions`` rows a query needs; None means no restriction.

    Every bound is inclusive, and the snapshot's own version is always an
    upper bound (a time-travelled or in-transaction read never sees newer
    versions). Exact numbers are read root by root; a timestamp bound
    becomes a version bound by the binary search time travel uses
    (:func:`~trinity_dbapi.lakehouse.history.versions_created`).

    Attributes:
        lowest: ``version >= lowest``.
        highest: ``version <= highest``.
        numbers: ``version IN (...)``.
        created_from: ``created_at >= created_from`` (ms since the epoch, UTC).
        created_to: ``created_at <= created_to`` (ms since the epoch, UTC).
        count: only this many versions of the range are needed, the newest
            (``newest_first``) or the oldest ones: set only when the bounds
            above are the query's whole WHERE clause, so that every version
            in range is a row of the answer (``ORDER BY version LIMIT k``).
        newest_first: which end ``count`` counts from.
    """

    lowest: int | None = None
    highest: int | None = None
    numbers: frozenset[int] | None = None
    created_from: int | None = None
    created_to: int | None = None
    count: int | None = None
    newest_first: bool = True


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
    scanned = prefix
    if scope.table_prefix is not None:
        # A table key is the prefix, a space, the name, padding spaces: a name
        # prefix is a key prefix (names hold no character at or below space).
        scanned += " " + scope.table_prefix
    return [
        (keys.table_name_under(key, prefix, limits), path)
        for key, path in view.scan_prefix(scanned)
    ]


def scoped_versions(snapshot: Snapshot, scope: VersionScope | None) -> list[VersionInfo]:
    """The retained versions in scope, up to the snapshot's, oldest first.

    Reads the roots of the versions in range (or only ``count`` of them)
    plus, per timestamp bound, the binary search's roots; without a scope,
    or when that search meets a damaged root, the whole history up to the
    snapshot (the rows the caller filters are then all there).
    """
    lakehouse, upto = snapshot.lakehouse, snapshot.version
    if scope is None:
        return [info for info in history(lakehouse) if info.version <= upto]
    lowest = max(scope.lowest or 0, 0)
    highest = upto if scope.highest is None else min(scope.highest, upto)
    if scope.created_from is not None or scope.created_to is not None:
        try:
            first, last = versions_created(lakehouse, scope.created_from, scope.created_to)
        except CorruptFileError:
            return scoped_versions(snapshot, None)
        lowest, highest = max(lowest, first), min(highest, last)
    if lowest > highest:
        return []
    count = scope.count
    if scope.numbers is not None:
        numbers = sorted(v for v in scope.numbers if lowest <= v <= highest)
        if not numbers:
            return []
        if scope.newest_first and count is not None:
            # The last `count` retained ones: read downwards from the highest.
            found: list[VersionInfo] = []
            for number in reversed(numbers):
                found[:0] = oldest_versions(lakehouse, [number])
                if len(found) >= count:
                    break
            return found
        return oldest_versions(lakehouse, numbers, count)
    if scope.newest_first and count is not None:
        return newest_versions(lakehouse, highest, count, lowest=lowest)[::-1]
    return oldest_versions(lakehouse, range(lowest, highest + 1), count)


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
    ("system", "data_files"): ("namespace_name", "table_name"),
    ("information_schema", "schemata"): ("schema_name", None),
    ("information_schema", "tables"): ("table_schema", "table_name"),
    ("information_schema", "columns"): ("table_schema", "table_name"),
}


def names_scope(
    names: tuple[str, str | None],
    conditions: Iterable[tuple[str, Sequence[str], bool]],
    *,
    namespaces: frozenset[str] | None = None,
    definitions: bool = True,
) -> CatalogScope:
    """AND-ed conditions on a catalog table's name columns, as the scope they allow.

    The SQL pushdown and Spark's pushed filters both end here.

    Args:
        names: the table's ``(namespace column, table column or None)``
            (:data:`NAME_COLUMNS`).
        conditions: ``(column, allowed values, whether the one value is a
            prefix)``; conditions on other columns narrow nothing.
        namespaces: the namespaces the read is already restricted to, or None.
        definitions: see :attr:`CatalogScope.definitions`.
    """
    ns_column, table_column = names
    allowed: dict[str, frozenset[str]] = {}
    if namespaces is not None:
        allowed[ns_column] = namespaces
    prefix: str | None = None
    for column, values, is_prefix in conditions:
        if column not in (ns_column, table_column):
            continue
        if is_prefix:
            # Two prefixes must both hold: keeping the longer still includes every match.
            if column == table_column and (prefix is None or len(values[0]) > len(prefix)):
                prefix = values[0]
            continue
        found = frozenset(values)
        allowed[column] = found if column not in allowed else allowed[column] & found
    return CatalogScope(
        namespaces=allowed.get(ns_column),
        tables=allowed.get(table_column) if table_column else None,
        table_prefix=prefix,
        definitions=definitions,
    )
