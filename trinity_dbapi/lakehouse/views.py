"""Views: lakehouse objects (schema ID 3), as operations of a transaction.

A view is one tree key (``keys.view_key``) whose value is the path of its
:class:`~trinity_dbapi.format.definitions.ViewDefinition` file, versioned and
time-travelled as every object is. Views and tables share one set of names
per namespace: making either reads the other's key with
:meth:`~trinity_dbapi.lakehouse.objects.ObjectOperations.require`, so a
concurrent transaction that takes the name makes this one conflict at any
isolation level. A view does not hold its tables: a table a view names may
be dropped (concurrently too) and the view then fails when it is queried.

Imports from lakehouse/: objects.
"""

from __future__ import annotations

from trinity_dbapi.errors import NoSuchObjectError, ObjectExistsError
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import ViewDefinition
from trinity_dbapi.format.paths import view_definition_path
from trinity_dbapi.lakehouse.objects import ObjectOperations

__all__ = ["NoSuchViewError", "ViewOperations"]


class NoSuchViewError(NoSuchObjectError):
    """The view does not exist."""

    def __init__(self, namespace: str, view: str) -> None:
        super().__init__(
            "view", f"{namespace}.{view}", "create it first or check the namespace and name"
        )
        self.namespace = namespace
        self.view = view


class ViewOperations(ObjectOperations):
    """View operations; mixed into :class:`~trinity_dbapi.lakehouse.transaction.Transaction`."""

    def view_exists(self, namespace: str, view: str) -> bool:
        """Whether view ``namespace.view`` exists."""
        return self.get(self._view_key(namespace, view)) is not None

    def list_views(self, namespace: str) -> list[str]:
        """Names of the views of ``namespace``, sorted by key order.

        Raises:
            NoSuchNamespaceError: the namespace does not exist.
        """
        self._require_namespace(namespace)
        limits = self._limits
        prefix = keys.namespace_views_prefix(namespace, limits)
        return [str(keys.decode_key(key, limits).table) for key, _ in self.scan_prefix(prefix)]

    def load_view(self, namespace: str, view: str) -> ViewDefinition:
        """The definition of view ``namespace.view``.

        Raises:
            NoSuchViewError: it does not exist.
        """
        path = self.get(self._view_key(namespace, view))
        if path is None:
            raise NoSuchViewError(namespace, view)
        return self.read_object_definition(path, ViewDefinition)

    def create_view(
        self,
        namespace: str,
        definition: ViewDefinition,
        *,
        if_not_exists: bool = False,
        or_replace: bool = False,
    ) -> bool:
        """Create (or with ``or_replace`` replace) a view; False if it existed and ``if_not_exists``.

        Raises:
            NoSuchNamespaceError: the namespace does not exist.
            ObjectExistsError: a table has the name, or the view exists and
                neither ``if_not_exists`` nor ``or_replace`` is given.
        """
        self._require_namespace(namespace)
        key = self._view_key(namespace, definition.name)  # validates both names first
        where = f"{namespace}.{definition.name}"
        if self.require(self._table_key(namespace, definition.name)) is not None:
            raise ObjectExistsError("table", where)
        existing = self.get(key)
        if existing is not None and not or_replace:
            if if_not_exists:
                return False
            raise ObjectExistsError("view", where)
        # The names the view introduces obey the rule for new names; those of
        # the view it replaces are kept as stored.
        previous = (
            None if existing is None else self.read_object_definition(existing, ViewDefinition)
        )
        definition.check_new_names(previous, namespace=namespace)
        path = view_definition_path(namespace, definition.name)
        self.stage_file(path, definition.to_bytes())
        self.put(key, path)
        return True

    def drop_view(self, namespace: str, view: str, *, if_exists: bool = False) -> bool:
        """Drop a view; return whether it existed.

        Raises:
            NoSuchViewError: it does not exist and ``if_exists`` is false.
        """
        key = self._view_key(namespace, view)
        if self.get(key) is None:
            if if_exists:
                return False
            raise NoSuchViewError(namespace, view)
        self.delete(key)
        return True

    def _view_key(self, namespace: str, view: str) -> str:
        return keys.view_key(namespace, view, self._limits)
