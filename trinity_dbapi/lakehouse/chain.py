"""The version chain: a lakehouse's handle on its root versions, and one pinned version.

A lakehouse is a chain of root node files in one storage, each naming the
one before it. A commit writes the changed non-root nodes, then exclusively
creates the next root node file: that one create is the commit point
(:mod:`.commit_point`), so a commit is all or nothing and readers never see
a partial version. The latest version is found by reading the hint and
probing forward, since the hint may be stale (FORMAT-NOTES section 3).

:class:`VersionChain` is what every module of the folder works on: the
storage, the lakehouse definition (perhaps still arriving, see
:mod:`.opening`), the node store, loading a version and finding the latest,
and committing the next one. Keys and values are raw strings here; object
names, definitions and transactions build on it. :class:`Snapshot` is one
pinned root version of a chain, through which every read resolves.
:class:`~trinity_dbapi.lakehouse.lakehouse.Lakehouse`, the chain as people
open it, adds creating and opening, time travel, transactions and upkeep on
top.

The chain and its snapshot name each other, so they share this module; every
module above types against :class:`VersionChain`, never against the facade
(:mod:`.lakehouse`).

Imports from lakehouse/: commit_point, definition_cache, expired, io_pool, roots.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from trinity_dbapi.errors import (
    BranchDroppedError,
    CorruptFileError,
    Error,
    NoSuchRefError,
    NoSuchVersionError,
    NotSupportedError,
    ReadOnlyError,
    StorageFileNotFoundError,
)
from trinity_dbapi.format import features
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.definitions.branches import MAIN, lineage_of
from trinity_dbapi.format.locations import is_uri, qualify, split_uri
from trinity_dbapi.format.node_file import DEFAULT_COMPRESSION, Message
from trinity_dbapi.format.paths import (
    latest_hint_file,
    new_lakehouse_definition_path,
    root_node_file_name,
)
from trinity_dbapi.lakehouse import commit_point, roots
from trinity_dbapi.lakehouse.definition_cache import DefinitionCache
from trinity_dbapi.lakehouse.expired import expired_error, missing_version
from trinity_dbapi.lakehouse.io_pool import worth_reading_ahead
from trinity_dbapi.tree import btree
from trinity_dbapi.tree.node import Node, NodeStore

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage

__all__ = [
    "COMPRESSION_PROPERTY",
    "Deferred",
    "Snapshot",
    "VersionChain",
    "shape",
    "tree_config",
]

#: Lakehouse definition property choosing node file compression (zstd, lz4, none).
COMPRESSION_PROPERTY = "trinity.node-file.compression"


def shape(
    storage: Storage, definition: LakehouseDefinition, storage_options: Mapping[str, Any]
) -> tuple[btree.TreeConfig, NodeStore]:
    """The tree shape ``definition`` asks for, and the node store that reads and writes it."""
    compression = definition.properties.get(COMPRESSION_PROPERTY, DEFAULT_COMPRESSION)
    nodes = NodeStore(storage, definition.order, compression=compression)
    nodes.storage_options = storage_options
    return tree_config(definition), nodes


def tree_config(definition: LakehouseDefinition) -> btree.TreeConfig:
    """The tree shape a lakehouse definition asks for."""
    return btree.TreeConfig.from_sizes(
        order=definition.order,
        namespace_name_max_size_bytes=definition.namespace_name_max_size_bytes,
        table_name_max_size_bytes=definition.table_name_max_size_bytes,
        file_name_max_size_bytes=definition.file_name_max_size_bytes,
        node_file_max_size_bytes=definition.node_file_max_size_bytes,
    )


class Deferred(Protocol):
    """A definition an open did not wait for (:class:`~trinity_dbapi.lakehouse.opening.Pending`)."""

    def settle(self, chain: VersionChain) -> None:
        """Wait for the definition, :meth:`~VersionChain.install` it and clear ``chain.pending``."""


class VersionChain:
    """A lakehouse's root versions in one storage: read them, commit the next.

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
        self.pending: Deferred | None = None
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
        #: The branch this chain is (None: main, the lakehouse's own chain), and
        #: where each of its versions' roots live: ``(first_version, folder)``
        #: pairs, newest first (docs/format.md, "Branches"). Main's is one pair.
        self.branch: str | None = None
        self.lineage: tuple[tuple[int, str], ...] = ((0, ""),)
        #: Who commits through this handle (``connect(..., author=...)``),
        #: recorded in every version it makes; None records no author.
        self.author: str | None = None

    def install(
        self,
        definition: LakehouseDefinition,
        path: str | None = None,
        shaped: tuple[btree.TreeConfig, NodeStore] | None = None,
    ) -> None:
        """Take ``definition`` (read from ``path``; ``shaped`` by :func:`shape`) as current."""
        if path is not None:
            self._definitions[path] = definition
        self._definition = definition
        self._tree_config, self._nodes = shaped or shape(
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

    def _settled(self) -> VersionChain:
        pending = self.pending
        if pending is not None:
            pending.settle(self)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.storage.root_uri!r}, name={self.definition.name!r})"

    # -- versions ------------------------------------------------------------------

    def root_name(self, version: int) -> str:
        """The root node file of ``version`` on this chain (main's, or a branch's folders)."""
        return root_node_file_name(version, lineage_of(self.lineage, version))

    @property
    def hint_file(self) -> str:
        """This chain's latest-version hint."""
        return latest_hint_file(self.lineage[0][1])

    def on_branch(self, name: str, definition: LakehouseDefinition | None = None) -> VersionChain:
        """The lakehouse as branch ``name`` sees it: a chain of its own over shared files.

        A copy of main's object sharing its storage, node store and caches;
        ``main_chain`` gives main back. Reads main's latest definition, where
        branches are recorded (docs/format.md, "Branches"), unless the
        caller has it (``definition``).

        Raises:
            NoSuchRefError: no branch has that name.
        """
        main = self.main_chain
        if name == MAIN:
            return main
        registry = definition if definition is not None else main.snapshot().definition
        record = registry.branches.get(name)
        if record is None:
            raise NoSuchRefError("branch", name)
        chain = copy.copy(main)
        chain.branch = name
        chain.lineage = record.lineage
        chain._known_latest = 0
        vars(chain)["_main"] = main  # read by main_chain; main's own object has none
        return chain

    @property
    def latest_known(self) -> int:
        """The newest version this object has seen exist (no request)."""
        return self._known_latest

    @property
    def main_chain(self) -> VersionChain:
        """Main, the lakehouse's own chain (this object when it is main)."""
        main: VersionChain | None = vars(self).get("_main")
        return self if main is None else main

    @property
    def base_version(self) -> int:
        """The version a branch was created from (-1 on main): its own roots follow it."""
        return self.lineage[0][0] - 1

    def latest_version(self) -> int:
        """The latest committed version (hint, then probe forward; the pinned one if pinned)."""
        if self.pinned_version is not None:
            return self.pinned_version
        storage = self.storage
        if self.branch is not None:
            version = roots.find_branch_latest(
                storage,
                self.root_name,
                self.hint_file,
                self.base_version,
                self._known_latest,
                read_root=worth_reading_ahead(storage),
            )
            self._known_latest = version
            return version
        version = roots.find_latest_version(
            storage, known=self._known_latest, read_root=worth_reading_ahead(storage)
        )
        self._known_latest = version
        return version

    def snapshot(self, version: int | None = None) -> Snapshot:
        """A pinned snapshot of ``version`` (the latest when None).

        Raises:
            NoSuchVersionError: the version does not exist (its message says
                when it was expired).
        """
        if version is None:
            version = self.latest_version()
        try:
            return self.load_version(version)
        except StorageFileNotFoundError:
            raise missing_version(self, version) from None

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
        return Snapshot(version, self.nodes.load(self.root_name(version)), self)

    def read_location(self, location: str) -> bytes:
        """Read a file by location: a relative path here, or a fully qualified URI."""
        return self.nodes.read_location(location)

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
        extra_system: Mapping[str, str] | None = None,
    ) -> Snapshot:
        """Commit ``changes`` (key -> value, None deletes) on top of ``base``.

        Writes the changed non-root nodes to new files, then exclusively creates
        root version ``base.version + 1``. With ``definition``, the new version
        also points at a new lakehouse definition file (exports and retention
        settings change it). Without changes or definition nothing is
        committed and ``base`` is returned. ``extra_system``: more system
        rows of the new root (the commit's author and message).

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
        if definition is not None and self.branch is not None:
            # The lakehouse definition (refs, retention, exports) is main's:
            # a branch's roots keep the one they were created with.
            raise NotSupportedError(
                f"changing the lakehouse definition on branch {self.branch!r} is refused: "
                "exports, tags, branches and retention settings belong to main; run it in a "
                "session on main (USE BRANCH main)"
            )
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
            extra_system=extra_system,
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
        # In the background, beside the tree's nodes: the root's create
        # settles it first (commit_point.create_root), so no version points
        # at a definition that is not complete.
        self.storage.create_unique_later(path, definition.to_bytes())
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
        if self.branch is not None and base.root.system.get(system_keys.BRANCH_DROPPED):
            raise BranchDroppedError(self.branch)  # sealed by DROP BRANCH: nothing goes on it
        # Creation times strictly increase with the version, whatever the
        # writers' clocks say, so time travel can binary-search versions.
        now = max(commit_point.now_millis(), base.created_at_millis + 1)
        self.nodes.write_dirty_children(new_root, now, progress)
        version = base.version + 1
        name = self.root_name(version)
        system = commit_point.root_system(
            base.version,
            base.definition_path,
            now=now,
            txn=txn,
            definition_path=definition_path,
            extra_system=extra_system,
            root_name=self.root_name,
        )
        data = self.nodes.encode(new_root, system)
        # A recovery's base is the newest root, found by name: nothing to check.
        commit_point.create_root(
            self.storage,
            version,
            data,
            check_base=not recovering,
            before_root=before_root,
            root_name=self.root_name,
        )
        new_root.path = name
        new_root.system = system
        self.nodes.remember(new_root)  # the next transaction starts here: no decode
        self._known_latest = max(self._known_latest, version)
        committed = Snapshot(version, new_root, self)
        then = None if after_root is None else partial(after_root, committed)
        commit_point.announce(self.storage, version, then, self.hint_file)
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


@dataclass(frozen=True)
class Snapshot:
    """One root version of the tree, pinned: every read resolves through it.

    Attributes:
        version: the root node version number.
        root: the root node (clean, shared).
        lakehouse: the lakehouse (its version chain) it belongs to.
    """

    version: int
    root: Node
    lakehouse: VersionChain

    @property
    def created_at_millis(self) -> int:
        return int(self.root.system.get(system_keys.CREATED_AT_MILLIS, "0"))

    @property
    def previous_root(self) -> str | None:
        return self.root.system.get(system_keys.PREVIOUS_ROOT)

    @property
    def rollback_from_root(self) -> str | None:
        return self.root.system.get(system_keys.ROLLBACK_FROM_ROOT)

    @property
    def definition_path(self) -> str:
        """Location of the lakehouse definition this version points at.

        A root read through a URI belongs to another lakehouse (the target of
        an export): its ``lakehouse_def`` row is relative to that lakehouse's
        root, not to this one's, so it is qualified against it (as the node
        store qualifies the root's other pointers).
        """
        path = self.root.system[system_keys.LAKEHOUSE_DEF]
        if self.root.path is not None and is_uri(self.root.path):
            return qualify(split_uri(self.root.path)[0], path)
        return path

    @property
    def definition(self) -> LakehouseDefinition:
        """The lakehouse definition this version points at.

        Raises:
            VersionExpiredError: the version was expired and its definition
                file collected since this snapshot was taken.
        """
        try:
            return self.lakehouse.read_definition(self.definition_path, referrer=self.root.path)
        except CorruptFileError as exc:
            self.raise_explained(exc)

    @property
    def latest_txn(self) -> str | None:
        """ID of the transaction that made this version.

        Read from the root's ``txn_id`` system row; a root written without it
        (by another implementation) falls back to its newest buffered message.
        """
        txn = self.root.system.get(system_keys.TXN_ID)
        if txn is not None:
            return txn
        return self.root.buffer[-1].txn if self.root.buffer else None

    def latest_messages(self) -> list[Message]:
        """The messages of the transaction that made this version."""
        txn = self.latest_txn
        return [m for m in self.root.buffer if m.txn == txn]

    def changed_keys(self) -> set[str]:
        """The keys the transaction that made this version set or deleted."""
        return {m.key for m in self.latest_messages()}

    # Reads below the root load node files, which expiration and garbage
    # collection may have deleted since this version was pinned: such a read
    # raises VersionExpiredError, not the CorruptFileError of damage.

    def get(self, key: str) -> str | None:
        """The value of ``key`` at this version, or None."""
        try:
            return btree.get(self.lakehouse.nodes, self.root, key)
        except CorruptFileError as exc:
            self.raise_explained(exc)

    def scan(self, lo: str | None = None, hi: str | None = None) -> Iterator[tuple[str, str]]:
        """Every ``(key, value)`` with ``lo <= key < hi``, ascending."""
        try:
            yield from btree.scan(self.lakehouse.nodes, self.root, lo, hi)
        except CorruptFileError as exc:
            self.raise_explained(exc)

    def scan_prefix(self, prefix: str) -> Iterator[tuple[str, str]]:
        """Every ``(key, value)`` whose key starts with ``prefix``, ascending."""
        return self.scan(prefix, btree.prefix_end(prefix))

    def depth(self) -> int:
        """Number of tree levels at this version."""
        try:
            return btree.depth(self.lakehouse.nodes, self.root)
        except CorruptFileError as exc:
            self.raise_explained(exc)

    def explain(self, exc: CorruptFileError) -> Error:
        """The error for a file of this version that a read found damaged or missing.

        Returns:
            :class:`~trinity_dbapi.errors.VersionExpiredError` when this version
            was expired and garbage collection deleted the file (the lakehouse
            is healthy); otherwise ``exc`` itself.
        """
        return expired_error(self.lakehouse, self.version, self.created_at_millis, exc)

    def raise_explained(self, exc: CorruptFileError) -> NoReturn:
        """Raise :meth:`explain`'s error for ``exc`` (``exc`` itself when it is damage)."""
        error = self.explain(exc)
        if error is exc:
            raise exc  # not "from exc": the error would be its own cause
        raise error from exc
