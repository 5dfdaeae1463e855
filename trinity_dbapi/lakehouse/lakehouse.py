"""A Trinity Lakehouse: a versioned TrinityLake tree in one storage.

Creating a lakehouse writes its definition file, exclusively creates root node
version 0 and writes the latest-version hint. Opening finds the latest version
by reading the hint and probing forward, since the hint may be stale
(FORMAT-NOTES section 3). A commit writes the changed non-root nodes, then
exclusively creates the next root node file: that one create is the commit
point, so a commit is all or nothing and readers never see a partial version.

This module is the storage-level API: keys and values are raw strings. Object
names, definitions and transactions with isolation levels build on it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import (
    FileAlreadyExistsError,
    LakehouseExistsError,
    NestedLakehouseError,
    NoSuchVersionError,
    ReadOnlyError,
    StorageError,
    StorageFileNotFoundError,
)
from trinity_dbapi.format import features
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.locations import is_uri
from trinity_dbapi.format.paths import (
    new_lakehouse_definition_path,
    root_node_file_name,
    root_node_version,
)
from trinity_dbapi.lakehouse import (
    commit_point,
    expired,
    history,
    opening,
    read_ahead,
    roots,
)
from trinity_dbapi.lakehouse.definition_cache import DefinitionCache
from trinity_dbapi.lakehouse.expiration import ExpireResult
from trinity_dbapi.lakehouse.export import ExportResult
from trinity_dbapi.lakehouse.garbage import DEFAULT_GRACE_PERIOD_MILLIS, GarbageResult
from trinity_dbapi.lakehouse.maintenance import Maintenance
from trinity_dbapi.lakehouse.snapshot import Snapshot
from trinity_dbapi.lakehouse.transaction import (
    DEFAULT_ISOLATION,
    IsolationLevel,
    Progress,
    RetryPolicy,
    Transaction,
    _io_pool,
)
from trinity_dbapi.storage import Storage, open_storage
from trinity_dbapi.tree import btree
from trinity_dbapi.tree.node import Node, NodeStore

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.history import VersionInfo


class Lakehouse:
    """A Trinity Lakehouse in a storage; use :meth:`create` or :meth:`open`.

    Args:
        storage: the lakehouse storage (root URI already applied).
        definition: the current lakehouse definition; None while an open
            reads it (:mod:`~trinity_dbapi.lakehouse.opening`).
    """

    def __init__(
        self,
        storage: Storage,
        definition: LakehouseDefinition | None,
        *,
        storage_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.storage = storage
        self.storage_options: Mapping[str, Any] = dict(storage_options or {})
        self._definitions: dict[str, LakehouseDefinition] = {}
        #: The definition an open is still reading; the first use waits for it.
        self.pending: opening.Pending | None = None
        if definition is not None:
            self.install(definition)
        #: Parsed namespace and table definitions by file path, shared by every
        #: transaction of this handle (a connection owns one handle).
        self.definition_cache = DefinitionCache()
        #: The latest version when the lakehouse was opened or created; a reader
        #: that starts at once pins it without probing for the latest again.
        self.opened_version = 0
        #: Set by ``open(..., version=N)``: the only version readable, and the
        #: latest as far as this object knows; later roots are never read.
        self.pinned_version: int | None = None
        # The newest version this process has seen exist; versions only ever
        # disappear from the old end, so probing may start here.
        self._known_latest = 0

    def install(
        self,
        definition: LakehouseDefinition,
        path: str | None = None,
        shaped: tuple[btree.TreeConfig, NodeStore] | None = None,
    ) -> None:
        """Take ``definition`` (read from ``path``; ``shaped`` by ``opening.shape``) as current."""
        if path is not None:
            self._definitions[path] = definition
        self._definition = definition
        self._tree_config, self._nodes = shaped or opening.shape(
            self.storage, definition, self.storage_options
        )

    @property
    def definition(self) -> LakehouseDefinition:
        """The lakehouse definition of the version opened (or created)."""
        return self._settled()._definition

    @property
    def tree_config(self) -> btree.TreeConfig:
        """The tree shape the definition asks for."""
        return self._settled()._tree_config

    @property
    def nodes(self) -> NodeStore:
        """Loads, caches and writes this lakehouse's node files."""
        return self._settled()._nodes

    def _settled(self) -> Lakehouse:
        if self.pending is not None:
            opening.settle(self)
        return self

    def __repr__(self) -> str:
        return f"Lakehouse({self.storage.root_uri!r}, name={self.definition.name!r})"

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
        version = read_ahead.latest_version(self, self._known_latest, prefetch)
        self._known_latest = version
        return version

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
        try:
            return self.load_version(version)
        except StorageFileNotFoundError:
            raise expired.missing_version(self, version) from None

    def load_version(self, version: int) -> Snapshot:
        """Load root ``version`` (one read, cached afterwards).

        Raises:
            StorageFileNotFoundError: the version does not exist.
            NoSuchVersionError: the lakehouse is pinned to an older version.
        """
        if self.pinned_version is not None and version > self.pinned_version:
            raise NoSuchVersionError(
                version,
                self.pinned_version,
                f"version {version} is after version {self.pinned_version}, the version this "
                f"connection was opened at (version={self.pinned_version}), and it never reads "
                "later versions; connect without version= to read the latest",
            )
        return Snapshot(version, self.nodes.load(root_node_file_name(version)), self)

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
        definition = self.snapshot().definition
        location = definition.exported_snapshots.get(name)
        if location is None:
            known = ", ".join(sorted(definition.exported_snapshots)) or "none"
            raise NoSuchVersionError(
                -1,
                self.latest_version(),
                f"no exported snapshot is named {name!r} (exports: {known}); "
                "export one first with export_snapshot",
            )
        root = self.nodes.load(location)
        exported = root.system.get(system_keys.EXPORTED_FROM_VERSION)
        version = int(exported) if exported else root_node_version(location.rpartition("/")[2])
        return Snapshot(-1 if version is None else version, root, self)

    def history(self, *, since: int = 0) -> list[VersionInfo]:
        """Every retained version from ``since`` on: time, previous root, rollback
        source, transaction and the keys it changed."""
        return list(history.history(self, since=since))

    # -- lifecycle (trinity_dbapi.lakehouse.maintenance) ------------------------------

    @cached_property
    def maintenance(self) -> Maintenance:
        """Rollback, compaction, export, expiration and garbage collection."""
        return Maintenance(self)

    def rollback(
        self, version: int, *, retry: RetryPolicy | None = None, progress: Progress | None = None
    ) -> Snapshot:
        """Roll back to ``version`` by committing a copy of its tree; see :meth:`Maintenance.rollback`."""
        return self.maintenance.rollback(version, retry=retry, progress=progress)

    def compact(
        self, *, retry: RetryPolicy | None = None, progress: Progress | None = None
    ) -> Snapshot:
        """Flush all buffers as one commit; see :meth:`Maintenance.compact`."""
        return self.maintenance.compact(retry=retry, progress=progress)

    def export_snapshot(
        self,
        name: str,
        *,
        version: int | None = None,
        mode: str = "minimal",
        target: str | None = None,
        depth: int | None = None,
        target_storage_options: dict[str, Any] | None = None,
        progress: Progress | None = None,
    ) -> ExportResult:
        """Export a version under ``name``; see :meth:`Maintenance.export_snapshot`."""
        return self.maintenance.export_snapshot(
            name,
            version=version,
            mode=mode,
            target=target,
            depth=depth,
            target_storage_options=target_storage_options,
            progress=progress,
        )

    def expire_versions(
        self,
        *,
        older_than: datetime | float | None = None,
        retain_last: int | None = None,
        now: datetime | float | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ExpireResult:
        """Delete versions past their age; see :meth:`Maintenance.expire_versions`."""
        return self.maintenance.expire_versions(
            older_than=older_than,
            retain_last=retain_last,
            now=now,
            dry_run=dry_run,
            progress=progress,
        )

    def collect_garbage(
        self,
        *,
        grace_period_millis: int = DEFAULT_GRACE_PERIOD_MILLIS,
        now: datetime | float | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> GarbageResult:
        """Delete unreachable files; see :meth:`Maintenance.collect_garbage`."""
        return self.maintenance.collect_garbage(
            grace_period_millis=grace_period_millis, now=now, dry_run=dry_run, progress=progress
        )

    def read_location(self, location: str) -> bytes:
        """Read a file by location: a relative path here, or a fully qualified URI."""
        return self.nodes.read_location(location)

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

    def read_definition(self, path: str, *, referrer: str | None = None) -> LakehouseDefinition:
        """The lakehouse definition stored at ``path`` (cached: definitions are immutable).

        ``path`` may be a fully qualified URI: the definition of the lakehouse
        an export was written to, which the exported root points at.

        Raises:
            CorruptFileError: it is missing (naming ``referrer``, the root pointing
                at it), not a location, or invalid.
        """
        definition = self._definitions.get(path)
        if definition is None:
            read = self.nodes.read_location if is_uri(path) else self.storage.read
            definition = roots.read_definition(read, path, referrer)
            self._definitions[path] = definition
        return definition

    # -- committing ----------------------------------------------------------------

    def commit(
        self,
        base: Snapshot,
        changes: Mapping[str, str | None],
        *,
        txn_id: str | None = None,
        definition: LakehouseDefinition | None = None,
        progress: Callable[[int], None] | None = None,
        before_root: Callable[[], None] | None = None,
        after_root: Callable[[Snapshot], None] | None = None,
    ) -> Snapshot:
        """Commit ``changes`` (key -> value, None deletes) on top of ``base``.

        Writes the changed non-root nodes to new files, then exclusively creates
        root version ``base.version + 1``. With ``definition``, the new version
        also points at a new lakehouse definition file (exports and retention
        settings change it). Without changes or definition nothing is
        committed and ``base`` is returned.

        Raises:
            CommitConflictError: another writer created that version first; the
                files this commit wrote are unreachable and garbage collection
                removes them.
            UnsupportedFeatureError: ``base`` or ``definition`` requires a
                feature this release does not know.
        """
        if not changes and definition is None:
            return base
        self.require_unpinned("a commit")
        self.require_known_features("a commit", base.definition)
        if definition is not None:  # this release records only the features it knows
            self.require_known_features("a commit", definition)
        txn = txn_id or str(uuid.uuid4())
        messages = commit_point.messages(changes, txn)
        def_path = None if definition is None else self.write_definition(base, definition)
        new_root = btree.TreeWriter(self.nodes, self.tree_config).commit(base.root, messages, txn)
        return self.write_root(
            base,
            new_root,
            txn=txn,
            definition_path=def_path,
            progress=progress,
            before_root=before_root,
            after_root=after_root,
        )

    def write_definition(self, base: Snapshot, definition: LakehouseDefinition) -> str:
        """Write a new lakehouse definition file for a commit on ``base``; return its path.

        Raises:
            NotSupportedError: the change would alter the tree's shape or key
                encoding (order, name and node sizes), which means re-encoding
                every key.
            InvalidNameError: a property key or exported snapshot name the
                change introduces breaks the rule for new names.
        """
        commit_point.check_definition_change(base.definition, definition)
        definition.check_new_names(base.definition)
        path = new_lakehouse_definition_path()
        self.storage.create_unique(path, definition.to_bytes())
        self._definitions[path] = definition
        return path

    def write_root(
        self,
        base: Snapshot,
        new_root: Node,
        *,
        txn: str,
        definition_path: str | None = None,
        extra_system: Mapping[str, str] | None = None,
        progress: Callable[[int], None] | None = None,
        before_root: Callable[[], None] | None = None,
        after_root: Callable[[Snapshot], None] | None = None,
        recovering: bool = False,
    ) -> Snapshot:
        """Write ``new_root``'s dirty nodes, then exclusively create root ``base.version + 1``.

        This is the commit point every kind of commit goes through.
        ``before_root`` runs just before the root becomes visible (after the
        storage has staged it privately): a caller whose files are still being
        written in the background waits there, so a root never points at a
        file that is not complete and durable, and their syncs overlap.
        ``after_root`` runs once the version is committed, while the hint is
        written (a commit's derived files: their requests share its round);
        it must not raise.

        With ``recovering`` (a rollback on a pinned lakehouse), ``base`` is the
        root after the newest existing one, which may be unreadable.

        Raises:
            CommitConflictError: another writer created that version first, or
                ``base`` was expired meanwhile.
            ReadOnlyError: the lakehouse is pinned and this is no recovery.
            UnsupportedFeatureError: ``base`` requires a feature this release
                does not know (a recovery checks its target itself).
        """
        if not recovering:
            self.require_unpinned("a commit")
            self.require_known_features("a commit", base.definition)
        # Creation times strictly increase with the version, whatever the
        # writers' clocks say, so time travel can binary-search versions.
        now = max(commit_point.now_millis(), base.created_at_millis + 1)
        self.nodes.write_dirty_children(new_root, now, progress)
        version = base.version + 1
        name = root_node_file_name(version)
        system = commit_point.root_system(
            base, now=now, txn=txn, definition_path=definition_path, extra_system=extra_system
        )
        data = self.nodes.encode(new_root, system)
        storage = self.storage
        retained = None
        if not recovering:  # a recovery's base is the newest root, found by name
            # Asked while the staged files are written: its round overlaps theirs.
            check = partial(commit_point.check_base_retained, storage, base)
            retained = _io_pool().submit(storage.this_round(check))

        def before_publish() -> None:
            # Everything the root points at is complete before it appears:
            # the caller's staged files, then the data and metadata files
            # this storage is still creating in the background.
            try:
                if before_root is not None:
                    before_root()
                storage.settle()
            finally:
                if retained is not None:
                    retained.result()

        try:
            self.storage.create_exclusive(name, data, before_publish=before_publish)
        except FileAlreadyExistsError:
            # Another writer's, or this commit's own whose reply was lost.
            commit_point.settle_root(self.storage, name, data, base, version)
        except StorageError as exc:
            # No clear answer (the client gave up): made or not, the root tells.
            commit_point.settle_root(self.storage, name, data, base, version, exc)
        new_root.path = name
        new_root.system = system
        self.nodes.remember(new_root)  # the next transaction starts here: no decode
        self._known_latest = max(self._known_latest, version)
        committed = Snapshot(version, new_root, self)
        if after_root is None:
            commit_point.write_hint(self.storage, version)
            return committed
        write = partial(commit_point.write_hint, self.storage, version)
        hint = _io_pool().submit(self.storage.this_round(write))
        try:
            after_root(committed)
        finally:
            hint.result()
        return committed

    def require_known_features(
        self, operation: str, definition: LakehouseDefinition | None = None
    ) -> None:
        """Refuse ``operation``, a change, on a lakehouse requiring an unknown feature.

        The one check every change goes through (commits, rollback,
        compaction, export, expiration, garbage collection): a newer release
        records in the definition the features this release must know not to
        damage what it wrote (docs/format.md, "Required features").

        Args:
            operation: what is refused, for the message (``"expire_versions"``).
            definition: the definition to check; the latest version's when None.

        Raises:
            UnsupportedFeatureError: naming the feature and the release that knows it.
        """
        features.check_writable(definition or self.snapshot().definition, operation)

    def require_unpinned(self, what: str) -> None:
        """Refuse ``what`` (a change to the lakehouse) on a pinned lakehouse.

        Raises:
            ReadOnlyError: opened with ``version=N``.
        """
        if self.pinned_version is not None:
            n = self.pinned_version
            raise ReadOnlyError(
                f"{what} is refused: this connection reads version {n} (opened with "
                f"version={n}) and cannot change the lakehouse; run CALL "
                f"system.rollback_to_version({n}) to make version {n}'s content the latest, then "
                "connect without version= to write"
            )


def _storage(uri: str | Storage, storage_options: Mapping[str, Any] | None) -> Storage:
    if isinstance(uri, Storage):
        return uri
    return open_storage(uri, storage_options=dict(storage_options or {}))
