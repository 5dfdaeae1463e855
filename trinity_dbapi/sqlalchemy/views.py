"""Reflection of views: their names, their stored query and their bound columns.

Mixed into :class:`~trinity_dbapi.sqlalchemy.dialect.TrinityDialect`. Each answer
is read as :mod:`~trinity_dbapi.sqlalchemy.lookups` reads tables: a key-range
scan of a namespace's view keys for the names, a point lookup and one
definition file for one view. A view's columns are those bound when it was
made (``CREATE VIEW``), as ``information_schema.columns`` shows them.

Imports from sqlalchemy/: compat, lookups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import exc

from trinity_dbapi.errors import InvalidNameError, NoSuchNamespaceError
from trinity_dbapi.lakehouse.catalog_views import view_text
from trinity_dbapi.sqlalchemy import lookups
from trinity_dbapi.sqlalchemy.compat import reflection_cache

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import ViewDefinition
    from trinity_dbapi.lakehouse.transaction import Transaction

__all__ = ["ViewReflection", "view_facts", "view_names"]


def view_names(txn: Transaction, namespace: str) -> list[str]:
    """The sorted views of ``namespace`` (none when it does not exist): one key-range scan."""
    try:
        return sorted(txn.list_views(namespace))
    except (InvalidNameError, NoSuchNamespaceError):
        return []


def _definition(txn: Transaction, namespace: str, name: str) -> ViewDefinition | None:
    try:
        if not txn.view_exists(namespace, name):
            return None
    except InvalidNameError:
        return None
    return txn.load_view(namespace, name)


def view_facts(txn: Transaction, namespace: str, name: str) -> lookups.TableFacts | None:
    """A view's facts as a table's (columns, comment; no key, partitions or options)."""
    definition = _definition(txn, namespace, name)
    if definition is None:
        return None
    columns = tuple((c.name, c.type, c.nullable, c.comment) for c in definition.columns)
    table: dict[str, Any] = {field: [] for field in lookups.TABLE_FIELDS}
    return lookups.TableFacts(columns, {**table, "comment": definition.properties.get("comment")})


class ViewReflection:
    """``get_view_names`` and ``get_view_definition`` of the trinity dialect."""

    def _schema(self, schema: str | None) -> str:  # the dialect's own
        raise NotImplementedError

    @reflection_cache
    def get_view_names(self, connection: Any, schema: str | None = None, **kw: Any) -> list[str]:
        namespace = self._schema(schema)
        return lookups.read(
            connection, lambda txn: view_names(txn, namespace), f"list the views of {namespace}"
        )

    @reflection_cache
    def _views_facts(
        self, connection: Any, schema: str | None, filter_names: Any, **kw: Any
    ) -> dict[str, lookups.TableFacts]:
        """The facts of the views of a namespace (or of those of ``filter_names``)."""
        namespace = self._schema(schema)

        def work(txn: Transaction) -> dict[str, lookups.TableFacts]:
            names = view_names(txn, namespace) if filter_names is None else filter_names
            found = {name: view_facts(txn, namespace, name) for name in names}
            return {name: facts for name, facts in found.items() if facts is not None}

        return lookups.read(connection, work, f"reflect the views of {namespace}")

    @reflection_cache
    def get_view_definition(
        self, connection: Any, view_name: str, schema: str | None = None, **kw: Any
    ) -> str:
        namespace = self._schema(schema)
        definition = lookups.read(
            connection,
            lambda txn: _definition(txn, namespace, view_name),
            f"reflect view {namespace}.{view_name}",
        )
        if definition is None:
            raise exc.NoSuchTableError(f"{namespace}.{view_name}")
        return view_text(definition)
