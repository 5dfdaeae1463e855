"""A Trinity Lakehouse, as people open it: create, open, time travel, transactions, upkeep.

Creating a lakehouse writes its definition file, exclusively creates root node
version 0 and writes the latest-version hint. Opening finds the latest version
by reading the hint and probing forward (:mod:`.opening`). :class:`Lakehouse`
is the version chain (:class:`~trinity_dbapi.lakehouse.chain.VersionChain`:
loading versions and committing the next) with what its users ask for on top:
versions by time and by export name (:mod:`.history`), the definitions a
statement is about to read fetched beside its check for the latest version
(:mod:`.read_ahead`), transactions (:mod:`.transaction`) and upkeep behind
``lakehouse.maintenance`` (:mod:`.maintenance`).

The top: nothing in the folder imports it.

Imports from lakehouse/: chain, commit_point, history, maintenance, opening, read_ahead,
roots, transaction.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from trinity_dbapi.errors import (
    FileAlreadyExistsError,
    LakehouseExistsError,
    NestedLakehouseError,
    NoSuchVersionError,
)
from trinity_dbapi.format import features
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import MAIN, LakehouseDefinition
from trinity_dbapi.format.paths import (
    new_lakehouse_definition_path,
    root_node_file_name,
    root_node_version,
)
from trinity_dbapi.lakehouse import commit_point, history, opening, read_ahead, roots
from trinity_dbapi.lakehouse.chain import Snapshot, VersionChain
from trinity_dbapi.lakehouse.maintenance import Maintenance
from trinity_dbapi.lakehouse.transaction import (
    DEFAULT_ISOLATION,
    IsolationLevel,
    RetryPolicy,
    Transaction,
)
from trinity_dbapi.storage import Storage, open_storage
from trinity_dbapi.tree.node import Node

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.history import VersionInfo

__all__ = ["Lakehouse", "Snapshot"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _deprecated(
    operation: Callable[Concatenate[Maintenance, _P], _R],
) -> Callable[Concatenate[Lakehouse, _P], _R]:
    """A deprecated ``Lakehouse`` method that warns, then runs ``operation`` on ``maintenance``.

    ``functools.wraps`` gives it the operation's name and signature; its
    docstring says what replaces it, then what the operation's says.
    """
    name = operation.__name__

    @functools.wraps(operation)
    def alias(self: Lakehouse, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        warnings.warn(
            f"Lakehouse.{name} is deprecated; use lakehouse.maintenance.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return operation(self.maintenance, *args, **kwargs)

    alias.__qualname__ = f"Lakehouse.{name}"
    alias.__doc__ = (
        f"Deprecated: use ``lakehouse.maintenance.{name}``, which this forwards to.\n\n"
        f"    {operation.__doc__ or ''}"
    )
    return alias


class Lakehouse(VersionChain):
    """A Trinity Lakehouse in a storage; use :meth:`create` or :meth:`open`.

    Args:
        storage: the lakehouse storage (root URI already applied).
        definition: the current lakehouse definition; None while an open
            reads it (:mod:`~trinity_dbapi.lakehouse.opening`).
    """

    # -- create and open ---------------------------------------------------------

    @classmethod
    def create(
        cls,
        uri: str | Storage,
        definition: LakehouseDefinition | None = None,
        *,
        storage_options: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> Lakehouse:
        """Create a new, empty lakehouse at ``uri`` and return it.

        Args:
            uri: the root URI (or an already opened storage).
            definition: the lakehouse definition; built from ``fields``
                (``name`` defaults to ``"lakehouse"``) when omitted.
            storage_options: passed to the fsspec file system.
            **fields: fields of :class:`LakehouseDefinition`.

        Raises:
            LakehouseExistsError: a lakehouse already exists there.
            NestedLakehouseError: ``uri`` lies inside another lakehouse.
            InvalidNameError: a property key or exported snapshot name breaks
                the rule for new names (:mod:`trinity_dbapi.format.names`).
        """
        storage = _storage(uri, storage_options)
        if definition is None:
            definition = LakehouseDefinition(**{"name": "lakehouse", **fields})
        definition.check_new_names()
        features.check_writable(definition, "creating a lakehouse")
        if storage.exists(root_node_file_name(0)):
            raise LakehouseExistsError(storage.root_uri)
        outer = roots.enclosing_lakehouse(storage)
        if outer is not None:
            raise NestedLakehouseError(storage.root_uri, outer)
        def_path = new_lakehouse_definition_path()
        storage.create_exclusive(def_path, definition.to_bytes())
        lakehouse = cls(storage, definition, storage_options=storage_options)
        system = {
            system_keys.CREATED_AT_MILLIS: str(commit_point.now_millis()),
            system_keys.LAKEHOUSE_DEF: def_path,
        }
        try:
            storage.create_exclusive(root_node_file_name(0), lakehouse.nodes.encode(Node(), system))
        except FileAlreadyExistsError:
            storage.delete(def_path)  # lost the race: leave nothing behind
            raise LakehouseExistsError(storage.root_uri) from None
        commit_point.write_hint(storage, 0)
        return lakehouse

    @classmethod
    def open(
        cls,
        uri: str | Storage,
        *,
        storage_options: Mapping[str, Any] | None = None,
        version: int | None = None,
        defer: bool = False,
    ) -> Lakehouse:
        """Open the lakehouse at ``uri``, with the definition of its latest version.

        Args:
            uri: the root URI (or an already opened storage).
            storage_options: passed to the fsspec file system.
            version: open this version, pinned: the latest as far as this object
                knows, later roots never read, no commit but a recovery rollback
                (docs/recovery.md).
            defer: on a store with round trips, return before the definition
                arrives; its first user waits for it and meets its errors
                (:mod:`~trinity_dbapi.lakehouse.opening`).

        Raises:
            LakehouseNotFoundError: no lakehouse exists there.
            NoSuchVersionError: ``version`` does not exist.
            DamagedVersionError: the version's root, its definition or a file
                it needs is damaged or missing; the message names the newest
                older version that opens.
            UnsupportedFormatVersionError: it was written by an incompatible version.
        """
        return opening.open_lakehouse(
            cls, _storage(uri, storage_options), storage_options, version=version, defer=defer
        )

    @classmethod
    def exists(
        cls, uri: str | Storage, *, storage_options: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether a lakehouse exists at ``uri``."""
        return roots.lakehouse_exists(_storage(uri, storage_options))

    def take_over(self, other: Lakehouse) -> dict[str, Any]:
        """Become ``other``, staying this object: ``other``'s state replaces this one's.

        A connection to a lakehouse not created yet reads an empty stand-in in
        process memory; when its first write creates the lakehouse (or it is
        found created by another writer), the stand-in takes the new one's
        state, so every reference its users hold (``Connection.lakehouse``)
        goes on working. ``other`` is not used afterwards.

        Returns:
            This object's state before, for :meth:`restore`.
        """
        previous = dict(vars(self))
        vars(self).clear()
        vars(self).update(vars(other))
        vars(self).pop("maintenance", None)  # other's, bound to other: made again on use
        self.author = previous.get("author")  # the connection's, not the new object's
        return previous

    def restore(self, state: dict[str, Any]) -> None:
        """Go back to the state :meth:`take_over` returned (the creation was undone)."""
        vars(self).clear()
        vars(self).update(state)

    # -- branches --------------------------------------------------------------------

    @property
    def main(self) -> Lakehouse:
        """Main, the lakehouse's own chain (this object when it is main)."""
        return self.main_chain  # type: ignore[return-value]  # made by on_branch: a Lakehouse

    def on_branch(self, name: str, definition: LakehouseDefinition | None = None) -> Lakehouse:
        """The lakehouse as branch ``name`` sees it (:meth:`VersionChain.on_branch`).

        Raises:
            NoSuchRefError: no branch has that name.
        """
        chain = super().on_branch(name, definition)
        vars(chain).pop("maintenance", None)  # main's, bound to main: made again on use
        return chain  # type: ignore[return-value]  # a copy of a Lakehouse

    def snapshot_by_name(self, name: str) -> Snapshot:
        """The snapshot a ref names: a branch's head, a tag (an export), or main's latest.

        Raises:
            NoSuchVersionError: no branch, tag or export has that name.
        """
        if name == MAIN or name in self.main.snapshot().definition.branches:
            return self.on_branch(name).snapshot()
        return self.snapshot_by_export(name)

    # -- versions ------------------------------------------------------------------

    def latest_version(self, *, prefetch: Sequence[tuple[str, str]] = ()) -> int:
        """The latest committed version (hint, then probe forward; the pinned one if pinned).

        Args:
            prefetch: ``(namespace, table)`` pairs a statement is about to
                load, whose definitions are read in the round of the check
                (:mod:`~trinity_dbapi.lakehouse.read_ahead`).
        """
        if self.pinned_version is not None:
            return self.pinned_version
        find = super().latest_version
        return read_ahead.latest_version(self, self._known_latest, prefetch, find)

    def snapshot(
        self, version: int | None = None, *, prefetch: Sequence[tuple[str, str]] = ()
    ) -> Snapshot:
        """A pinned snapshot of ``version`` (the latest when None).

        Args:
            version: the version; None for the latest.
            prefetch: tables to read ahead while the latest is looked up
                (see :meth:`latest_version`).

        Raises:
            NoSuchVersionError: the version does not exist (its message says
                when it was expired).
        """
        if version is None:
            version = self.latest_version(prefetch=prefetch)
        return super().snapshot(version)

    def snapshot_at(self, timestamp: datetime | float) -> Snapshot:
        """The snapshot current at ``timestamp`` (a datetime, naive = UTC, or epoch ms).

        Raises:
            NoSuchVersionError: every retained version is newer.
        """
        return self.snapshot(history.version_at(self, timestamp))

    def snapshot_by_export(self, name: str) -> Snapshot:
        """The snapshot recorded as the exported snapshot ``name``.

        Raises:
            NoSuchVersionError: no export has that name.
        """
        definition = self.main.snapshot().definition
        location = definition.exported_snapshots.get(name)
        if location is None:
            known = ", ".join(sorted(definition.exported_snapshots)) or "none"
            raise NoSuchVersionError(
                -1,
                self.latest_version(),
                f"no tag, branch or exported snapshot is named {name!r} (tags and exports: "
                f"{known}); SHOW BRANCHES and SHOW TAGS list the refs",
            )
        root = self.nodes.load(location)
        exported = root.system.get(system_keys.EXPORTED_FROM_VERSION)
        version = int(exported) if exported else root_node_version(location.rpartition("/")[2])
        return Snapshot(-1 if version is None else version, root, self)

    def history(self, *, since: int = 0) -> list[VersionInfo]:
        """Every retained version from ``since`` on: time, previous root, rollback
        source, transaction and the keys it changed."""
        return list(history.history(self, since=since))

    # -- upkeep (trinity_dbapi.lakehouse.maintenance) --------------------------------

    @cached_property
    def maintenance(self) -> Maintenance:
        """Rollback, compaction, export, expiration and garbage collection."""
        return Maintenance(self)

    # Deprecated: each forwards to lakehouse.maintenance, with its signature.
    rollback = _deprecated(Maintenance.rollback)
    compact = _deprecated(Maintenance.compact)
    export_snapshot = _deprecated(Maintenance.export_snapshot)
    expire_versions = _deprecated(Maintenance.expire_versions)
    collect_garbage = _deprecated(Maintenance.collect_garbage)

    # -- transactions ----------------------------------------------------------------

    def begin(
        self,
        *,
        isolation: IsolationLevel | str = DEFAULT_ISOLATION,
        read_only: bool = False,
        version: int | None = None,
        retry: RetryPolicy | None = None,
        prefetch: Sequence[tuple[str, str]] = (),
    ) -> Transaction:
        """Begin a transaction pinned to ``version`` (the latest when None).

        Args:
            isolation: SERIALIZABLE (the default) or SNAPSHOT ISOLATION.
            read_only: refuse writes (a time-travel read, a report).
            version: the version to pin; any retained version can be read.
            retry: how a commit retries after losing the race for a version.
            prefetch: ``(namespace, table)`` pairs the first statement reads
                (see :meth:`latest_version`).
        """
        snapshot = self.snapshot(version, prefetch=prefetch)
        return Transaction(self, snapshot, isolation=isolation, read_only=read_only, retry=retry)


def _storage(uri: str | Storage, storage_options: Mapping[str, Any] | None) -> Storage:
    if isinstance(uri, Storage):
        return uri
    return open_storage(uri, storage_options=dict(storage_options or {}))
