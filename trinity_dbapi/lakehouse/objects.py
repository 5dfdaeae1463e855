"""Namespaces and tables: the lakehouse objects, as operations of a transaction.

Each object is one tree key (its encoded object ID) whose value is the path
of its immutable protobuf definition file. Creating or changing an object
stages a new definition file and a write of its key; dropping it stages a
delete. Every read goes through the transaction, so SERIALIZABLE sees the
exact keys and ranges an operation depended on: listing the tables of a
namespace scans the namespace's key range, and conflicts with a concurrent
``CREATE TABLE`` in it.

Imports from lakehouse/: chain, definition_cache, table_formats.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from trinity_dbapi.errors import (
    CommitConflictError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchObjectError,
    NoSuchTableError,
    ObjectExistsError,
)
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import NamespaceDefinition, TableDefinition
from trinity_dbapi.format.paths import namespace_definition_path, table_definition_path
from trinity_dbapi.lakehouse.definition_cache import D
from trinity_dbapi.lakehouse.table_formats import located
from trinity_dbapi.tree.btree import prefix_end

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot

NAMESPACE_PREFIX = keys.encode_schema_id(keys.NAMESPACE_SCHEMA_ID)


class ViewIsNotATableError(NoSuchTableError):
    """A table statement (INSERT, ALTER TABLE, DESCRIBE, ...) names a view."""

    def __init__(self, namespace: str, table: str) -> None:
        where = f"{namespace}.{table}"
        NoSuchObjectError.__init__(
            self,
            "table",
            where,
            f"{where} is a view, which is read-only and has no table definition: read it "
            "with SELECT, change it with CREATE OR REPLACE VIEW, drop it with DROP VIEW",
        )
        self.namespace = namespace
        self.table = table


class ObjectOperations(ABC):
    """Namespace and table operations; mixed into :class:`Transaction`."""

    snapshot: Snapshot

    @abstractmethod
    def get(self, key: str) -> str | None:
        """The value of a key as the transaction sees it."""

    @abstractmethod
    def put(self, key: str, value: str) -> None:
        """Stage setting a key."""

    @abstractmethod
    def delete(self, key: str) -> None:
        """Stage deleting a key."""

    @abstractmethod
    def scan_prefix(self, prefix: str) -> Iterator[tuple[str, str]]:
        """Every key and value under a prefix, as the transaction sees them."""

    @abstractmethod
    def require(self, key: str) -> str | None:
        """Read a key that must stay unchanged until the commit."""

    @abstractmethod
    def require_range(self, lo: str | None, hi: str | None) -> list[tuple[str, str]]:
        """Scan a range that must stay unchanged until the commit."""

    @abstractmethod
    def peek(self, key: str) -> str | None:
        """The value of a key as the transaction sees it, without recording a read."""

    @abstractmethod
    def merge(self, key: str, change: Callable[[str | None], str | None]) -> str | None:
        """Stage a blind change of a key, recomputed from its newest value on rebase."""

    @abstractmethod
    def stage_file(self, path: str, data: bytes) -> None:
        """Stage an immutable file written at commit."""

    @abstractmethod
    def read_file(self, path: str) -> bytes:
        """A staged file, or else one from storage."""

    def read_object_definition(self, path: str, kind: type[D]) -> D:
        """The namespace or table definition at ``path``, read and parsed.

        :class:`Transaction` serves committed files from its lakehouse's
        definition cache instead. A table definition another lakehouse holds
        reaches its files there (:func:`~trinity_dbapi.lakehouse.table_formats.located`).
        """
        definition = kind.from_bytes(self.read_file(path), path)
        return located(definition, path, self.snapshot.lakehouse.storage.root_uri)

    @property
    def _limits(self) -> keys.KeyLimits:
        return self.snapshot.definition.key_limits

    # -- namespaces ------------------------------------------------------------------

    def namespace_exists(self, namespace: str) -> bool:
        """Whether ``namespace`` exists."""
        return self.get(self._namespace_key(namespace)) is not None

    def list_namespaces(self) -> list[str]:
        """Names of every namespace, sorted by key order."""
        limits = self._limits
        return [
            keys.decode_key(key, limits).namespace for key, _ in self.scan_prefix(NAMESPACE_PREFIX)
        ]

    def load_namespace(self, namespace: str) -> NamespaceDefinition:
        """The definition of ``namespace``.

        Raises:
            NoSuchNamespaceError: it does not exist.
        """
        path = self.get(self._namespace_key(namespace))
        if path is None:
            raise NoSuchNamespaceError(namespace)
        return self.read_object_definition(path, NamespaceDefinition)

    def create_namespace(
        self,
        namespace: str,
        properties: Mapping[str, str] | None = None,
        *,
        if_not_exists: bool = False,
    ) -> bool:
        """Create ``namespace``; return False if it existed and ``if_not_exists``.

        Raises:
            ObjectExistsError: it exists and ``if_not_exists`` is false.
            InvalidNameError: the name breaks the object name rules.
        """
        key = self._namespace_key(namespace)
        if self.get(key) is not None:
            if if_not_exists:
                return False
            raise ObjectExistsError("namespace", namespace)
        self._store_namespace(NamespaceDefinition(namespace, dict(properties or {})), None)
        return True

    def alter_namespace(
        self,
        namespace: str,
        *,
        set_properties: Mapping[str, str] | None = None,
        unset_properties: tuple[str, ...] | list[str] = (),
    ) -> NamespaceDefinition:
        """Set and unset properties of ``namespace``; return the new definition."""
        current = self.load_namespace(namespace)
        properties = dict(current.properties)
        for name in unset_properties:
            properties.pop(name, None)
        properties.update(set_properties or {})
        definition = NamespaceDefinition(namespace, properties)
        self._store_namespace(definition, current)
        return definition

    def drop_namespace(
        self, namespace: str, *, cascade: bool = False, if_exists: bool = False
    ) -> bool:
        """Drop ``namespace`` (with its tables and views when ``cascade``); return whether it existed.

        Raises:
            NoSuchNamespaceError: it does not exist and ``if_exists`` is false.
            NamespaceNotEmptyError: it holds tables or views and ``cascade`` is false.
        """
        key = self._namespace_key(namespace)
        if self.get(key) is None:
            if if_exists:
                return False
            raise NoSuchNamespaceError(namespace)
        # A table or view created concurrently must stop the drop, at any
        # isolation level: otherwise it would outlive its namespace.
        object_keys = []
        for prefix in (
            self._tables_prefix(namespace),
            keys.namespace_views_prefix(namespace, self._limits),
        ):
            object_keys += [k for k, _ in self.require_range(prefix, prefix_end(prefix))]
        if object_keys and not cascade:
            raise NamespaceNotEmptyError(namespace, len(object_keys))
        for object_key in object_keys:
            self.delete(object_key)
        self.delete(key)
        return True

    # -- tables ------------------------------------------------------------------------

    def table_exists(self, namespace: str, table: str) -> bool:
        """Whether table ``namespace.table`` exists."""
        return self.get(self._table_key(namespace, table)) is not None

    def list_tables(self, namespace: str) -> list[str]:
        """Names of the tables of ``namespace``, sorted by key order.

        Raises:
            NoSuchNamespaceError: the namespace does not exist.
        """
        self._require_namespace(namespace)
        limits = self._limits  # once, not per key: listings are hot (SHOW TABLES)
        prefix = self._tables_prefix(namespace)
        return [keys.table_name_under(key, prefix, limits) for key, _ in self.scan_prefix(prefix)]

    def load_table(self, namespace: str, table: str) -> TableDefinition:
        """The definition of table ``namespace.table``.

        Raises:
            NoSuchTableError: it does not exist.
        """
        path = self.get(self._table_key(namespace, table))
        if path is None:
            if self.get(keys.view_key(namespace, table, self._limits)) is not None:
                raise ViewIsNotATableError(namespace, table)
            raise NoSuchTableError(namespace, table)
        return self.read_object_definition(path, TableDefinition)

    def peek_table(self, namespace: str, table: str) -> TableDefinition:
        """Like :meth:`load_table`, but a blind read: no conflict is recorded for it.

        For writers that only append: what they rely on (the columns) is
        checked again by their merge when the commit is rebased.
        """
        path = self.peek(self._table_key(namespace, table))
        if path is None:
            if self.get(keys.view_key(namespace, table, self._limits)) is not None:
                raise ViewIsNotATableError(namespace, table)
            raise NoSuchTableError(namespace, table)
        return self.read_object_definition(path, TableDefinition)

    def create_table(
        self, namespace: str, definition: TableDefinition, *, if_not_exists: bool = False
    ) -> bool:
        """Create a table in ``namespace``; return False if it existed and ``if_not_exists``.

        Raises:
            NoSuchNamespaceError: the namespace does not exist.
            ObjectExistsError: the table exists and ``if_not_exists`` is false.
            InvalidNameError: a name of the table breaks the rule for new names
                (:mod:`trinity_dbapi.format.names`).
        """
        self._require_namespace(namespace)
        key = self._table_key(namespace, definition.name)
        if self.get(key) is not None:
            if if_not_exists:
                return False
            raise ObjectExistsError("table", f"{namespace}.{definition.name}")
        self._check_no_view(namespace, definition.name)
        self._store_table(namespace, definition, None)
        return True

    def replace_table(self, namespace: str, definition: TableDefinition) -> None:
        """Replace the definition of an existing table (ALTER TABLE).

        Raises:
            NoSuchTableError: the table does not exist.
            InvalidNameError: a name the new definition introduces breaks the
                rule for new names.
        """
        previous = self.load_table(namespace, definition.name)
        self._store_table(namespace, definition, previous)

    def rename_table(
        self, namespace: str, table: str, new_namespace: str, new_name: str
    ) -> TableDefinition:
        """Rename (and possibly move) a table; return its new definition.

        Raises:
            NoSuchTableError: the table does not exist.
            NoSuchNamespaceError: the target namespace does not exist.
            ObjectExistsError: a table with the new name exists.
            InvalidNameError: the new name breaks the rule for new names.
        """
        previous = self.load_table(namespace, table)
        definition = previous.replace(name=new_name)
        self._require_namespace(new_namespace)
        if self.get(self._table_key(new_namespace, new_name)) is not None:
            raise ObjectExistsError("table", f"{new_namespace}.{new_name}")
        self._check_no_view(new_namespace, new_name)
        self.delete(self._table_key(namespace, table))
        self._store_table(new_namespace, definition, previous)
        return definition

    def merge_table(
        self,
        namespace: str,
        table: str,
        change: Callable[[TableDefinition], TableDefinition],
    ) -> TableDefinition:
        """Change a table's definition blindly: ``change`` runs again on rebase.

        Adding data files to a table is such a change (see
        :meth:`Transaction.merge`): two transactions appending to one table both
        commit. Returns the definition as this transaction now sees it.

        Raises:
            NoSuchTableError: the table does not exist.
            CommitConflictError: (at commit) a concurrent commit dropped it.
        """
        key = self._table_key(namespace, table)
        results: list[TableDefinition] = []

        def apply(current: str | None) -> str | None:
            if current is None:
                if not results:  # staging, not a rebase: the table is simply missing
                    raise NoSuchTableError(namespace, table)
                raise CommitConflictError(
                    f"commit conflict on table {namespace}.{table}: a concurrent commit dropped "
                    "it; run the transaction again if the table should exist",
                    key=key,
                )
            previous = self.read_object_definition(current, TableDefinition)
            definition = change(previous)
            definition.check_new_names(previous, namespace=namespace)
            path = table_definition_path(namespace, table)
            self.stage_file(path, definition.to_bytes())
            results.append(definition)
            return path

        self.merge(key, apply)
        return results[-1]

    def drop_table(self, namespace: str, table: str, *, if_exists: bool = False) -> bool:
        """Drop a table; return whether it existed.

        Raises:
            NoSuchTableError: it does not exist and ``if_exists`` is false.
        """
        key = self._table_key(namespace, table)
        if self.get(key) is None:
            if if_exists:
                return False
            raise NoSuchTableError(namespace, table)
        self.delete(key)
        return True

    # -- helpers ---------------------------------------------------------------------

    def _namespace_key(self, namespace: str) -> str:
        return keys.namespace_key(namespace, self._limits)

    def _table_key(self, namespace: str, table: str) -> str:
        return keys.table_key(namespace, table, self._limits)

    def _tables_prefix(self, namespace: str) -> str:
        return keys.namespace_tables_prefix(namespace, self._limits)

    def _check_no_view(self, namespace: str, name: str) -> None:
        # Views and tables share names; a view made concurrently conflicts.
        if self.require(keys.view_key(namespace, name, self._limits)) is not None:
            raise ObjectExistsError("view", f"{namespace}.{name}")

    def _require_namespace(self, namespace: str) -> None:
        # The namespace must still exist when this commits, at any isolation level.
        if self.require(self._namespace_key(namespace)) is None:
            raise NoSuchNamespaceError(namespace)

    def _store_namespace(
        self, definition: NamespaceDefinition, previous: NamespaceDefinition | None
    ) -> None:
        # Every namespace write passes here: the names it introduces obey
        # the rule for new names; those ``previous`` has are kept as stored.
        definition.check_new_names(previous)
        path = namespace_definition_path(definition.name)
        self.stage_file(path, definition.to_bytes())
        self.put(self._namespace_key(definition.name), path)

    def _store_table(
        self, namespace: str, definition: TableDefinition, previous: TableDefinition | None
    ) -> None:
        key = self._table_key(namespace, definition.name)  # validates both names first
        # Every table write but merge_table's passes here (that one checks
        # too): the names it introduces obey the rule for new names.
        definition.check_new_names(previous, namespace=namespace)
        path = table_definition_path(namespace, definition.name)
        self.stage_file(path, definition.to_bytes())
        self.put(key, path)
