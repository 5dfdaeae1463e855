"""Lakehouse lifecycle: rollback, compaction, snapshot export, expiration, GC.

* **Rollback** is a roll forward (FORMAT-NOTES section 6): undoing to version
  ``u`` while the latest is ``v`` commits ``v + 1`` whose tree *is* root
  ``u``'s (same key table, children and buffer; only the root file is new),
  with ``rollback_from_root`` naming root ``v``. Concurrent writers based on
  an older version conflict with it, since it may change any key.
* **Compaction** flushes every buffer except the latest transaction's
  messages in the root, as one ordinary commit of no keys.
* **Export** replicates one version to a target root URI down to a depth:
  ``minimal`` copies the root only, ``partial`` the top ``depth`` levels,
  ``full`` every node and object definition, giving an independent
  lakehouse. Pointers at the cut become fully qualified URIs of the source.
  Without a target, a minimal export pins the version in place. Every export
  is recorded in the lakehouse definition's ``exported_snapshots``.
* **Expiration** deletes the root files of versions older than their maximum
  age (the definition's, a per-version override, or an explicit cut-off),
  always keeping the newest ``minimum_versions_to_keep``, the latest, and
  versions pinned by an export.
* **Garbage collection** deletes every file that no retained version and no
  export reaches, if it is older than a grace period (so files of
  transactions still in flight are never collected), with a dry run.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import (
    CommitConflictError,
    CorruptFileError,
    LakehouseExistsError,
    ObjectExistsError,
    ProgrammingError,
    RetriesExhaustedError,
)
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.keys import is_table_key
from trinity_dbapi.format.locations import is_uri, qualify
from trinity_dbapi.format.node_file import NodeData, encode_node
from trinity_dbapi.format.paths import (
    LATEST_HINT_FILE,
    new_lakehouse_definition_path,
    root_node_file_name,
    root_node_version,
)
from trinity_dbapi.lakehouse.history import to_millis
from trinity_dbapi.lakehouse.recovery import recovery_base
from trinity_dbapi.lakehouse.table_formats import referenced_files_of
from trinity_dbapi.lakehouse.transaction import Progress, RetryPolicy, node_file_progress
from trinity_dbapi.tree import btree

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse, Snapshot
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tree.node import Node

#: Files younger than this are never collected: they may belong to a
#: transaction that has not created its root yet.
DEFAULT_GRACE_PERIOD_MILLIS = 60 * 60 * 1000

EXPORT_MODES = ("minimal", "partial", "full")


def _retrying(
    lakehouse: Lakehouse, retry: RetryPolicy | None, attempt_once: Callable[[], Snapshot]
) -> Snapshot:
    """Run a blind commit (rollback, compaction) until it wins a version."""
    policy = retry or RetryPolicy()
    for attempt in range(policy.max_attempts):
        try:
            return attempt_once()
        except CommitConflictError:
            time.sleep(policy.delay(attempt, _rng))
    raise RetriesExhaustedError(policy.max_attempts, lakehouse.latest_version())


_rng = random.Random()


# -- rollback and compaction ------------------------------------------------------------


def rollback(
    lakehouse: Lakehouse,
    version: int,
    *,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> Snapshot:
    """Roll the lakehouse back to ``version`` by committing a copy of its tree.

    Rolling back a rollback works the same way: name the version to return to.

    On a lakehouse opened pinned (``Lakehouse.open(uri, version=N)``, the way
    in past a damaged latest root), this is the recovery: the new version
    comes after the newest existing root, which is never read
    (:func:`recovery.recovery_base`), takes ``version``'s lakehouse definition
    too (the damaged version's may be unreadable), and its ``previous_root``
    names ``version``'s root, so the chain from it reaches intact roots only;
    ``rollback_from_root`` names the damaged one.

    Args:
        lakehouse: the lakehouse.
        version: the version whose content the new version takes.
        retry: how the commit retries after losing a race.
        progress: node files written, as for :meth:`Transaction.commit`.

    Raises:
        NoSuchVersionError: ``version`` does not exist (never made, or expired).
    """
    target = lakehouse.snapshot(version)
    recovering = lakehouse.pinned_version is not None

    def attempt() -> Snapshot:
        base = recovery_base(lakehouse, target) if recovering else lakehouse.snapshot()
        # The copy shares every child, so only the root is new. Its messages
        # now belong to an older transaction: settle them like any root's.
        writer = btree.TreeWriter(lakehouse.nodes, lakehouse.tree_config)
        new_root = writer.settle(target.root.copy(), keep=None)
        each_file, before_root = node_file_progress(progress)
        extra = {system_keys.ROLLBACK_FROM_ROOT: root_node_file_name(base.version)}
        if recovering:
            extra[system_keys.PREVIOUS_ROOT] = root_node_file_name(target.version)
        return lakehouse.write_root(
            base,
            new_root,
            txn=str(uuid.uuid4()),
            definition_path=target.definition_path if recovering else None,
            extra_system=extra,
            progress=each_file,
            before_root=before_root,
            recovering=recovering,
        )

    return _retrying(lakehouse, retry, attempt)


def compact(
    lakehouse: Lakehouse, *, retry: RetryPolicy | None = None, progress: Progress | None = None
) -> Snapshot:
    """Flush every buffer (but the latest transaction's messages) as one commit.

    ``progress`` reports the node files written, as for :meth:`Transaction.commit`.
    """

    def attempt() -> Snapshot:
        base = lakehouse.snapshot()
        writer = btree.TreeWriter(lakehouse.nodes, lakehouse.tree_config)
        new_root = writer.compact(base.root, base.latest_txn)
        each_file, before_root = node_file_progress(progress)
        return lakehouse.write_root(
            base, new_root, txn=str(uuid.uuid4()), progress=each_file, before_root=before_root
        )

    return _retrying(lakehouse, retry, attempt)


# -- export ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportResult:
    """What an export did."""

    name: str
    version: int
    mode: str
    location: str
    files_copied: int
    bytes_copied: int
    recorded_in_version: int


def export_snapshot(
    lakehouse: Lakehouse,
    name: str,
    *,
    version: int | None = None,
    mode: str = "minimal",
    target: str | None = None,
    depth: int | None = None,
    target_storage_options: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> ExportResult:
    """Export one version under ``name``; see the module docstring for the modes.

    Args:
        name: the export's name (not all digits: ``AS OF 3`` means version 3).
        version: the version to export (the latest when None).
        mode: ``minimal``, ``partial`` (needs ``depth``) or ``full``.
        target: root URI of the new lakehouse; None pins the version in place
            (minimal only).
        depth: tree levels a partial export copies (1 = the root only).
        target_storage_options: fsspec options for the target (default: the
            source's).
        progress: called with (files copied, -1) as the copy goes, and with
            (n, n) once it is complete, before the export is recorded (so a
            callback that raises leaves no export behind; the target may keep
            the files copied so far, and a later export there reuses them).

    Raises:
        ObjectExistsError: an export of that name exists.
        LakehouseExistsError: the target already holds a lakehouse.
    """
    lakehouse.require_unpinned("export_snapshot")
    if mode not in EXPORT_MODES:
        raise ProgrammingError(f"export mode {mode!r} is not one of {', '.join(EXPORT_MODES)}")
    if mode == "partial" and (depth is None or depth < 1):
        raise ProgrammingError("a partial export needs depth >= 1 (tree levels to copy)")
    levels = {"minimal": 1, "partial": depth or 1, "full": None}[mode]
    snap = lakehouse.snapshot(version)
    if name in snap.lakehouse.snapshot().definition.exported_snapshots:
        raise ObjectExistsError("exported snapshot", name)
    if target is None:
        if mode != "minimal":
            raise ProgrammingError(
                f"a {mode} export copies files: give it a target root URI (only a minimal "
                "export can pin a version in place)"
            )
        location, copied, nbytes = root_node_file_name(snap.version), 0, 0
    else:
        copier = _Copier(lakehouse, snap, target, target_storage_options, levels, progress)
        location = copier.run()
        copied, nbytes = copier.files, copier.bytes
    if progress is not None:
        progress(copied, copied)

    txn = lakehouse.begin()

    def record(definition: LakehouseDefinition) -> LakehouseDefinition:
        if name in definition.exported_snapshots:
            raise ObjectExistsError("exported snapshot", name)
        return definition.replace(
            exported_snapshots={**definition.exported_snapshots, name: location}
        )

    txn.change_definition(record)
    recorded = txn.commit()
    return ExportResult(name, snap.version, mode, location, copied, nbytes, recorded.version)


class _Copier:
    """Copies one version's tree to a new lakehouse, down to a number of levels."""

    def __init__(
        self,
        lakehouse: Lakehouse,
        snap: Snapshot,
        target: str,
        options: dict[str, Any] | None,
        levels: int | None,
        progress: Progress | None,
    ) -> None:
        from trinity_dbapi.lakehouse.lakehouse import Lakehouse
        from trinity_dbapi.storage import open_storage

        self.source = lakehouse
        self.snap = snap
        self.target: Storage = open_storage(
            target,
            storage_options=dict(options if options is not None else lakehouse.storage_options),
        )
        if Lakehouse.exists(self.target):
            raise LakehouseExistsError(self.target.root_uri)
        self.levels = levels
        self.progress = progress
        self.files = 0
        self.bytes = 0
        self.root_uri = lakehouse.storage.root_uri

    def run(self) -> str:
        definition = self.snap.definition.replace(exported_snapshots={})
        def_path = new_lakehouse_definition_path()
        self._put(def_path, definition.to_bytes())
        root = self.snap.root
        system = {
            system_keys.CREATED_AT_MILLIS: str(self.snap.created_at_millis),
            system_keys.LAKEHOUSE_DEF: def_path,
            system_keys.TXN_ID: self.snap.latest_txn or str(uuid.uuid4()),
            system_keys.EXPORTED_FROM_VERSION: str(self.snap.version),
        }
        self._put(root_node_file_name(0), self._encode(root, 1, system))
        self.target.write(LATEST_HINT_FILE, b"0")
        return self.target.root_uri + root_node_file_name(0)

    def _encode(self, node: Node, level: int, system: dict[str, str]) -> bytes:
        deeper = self.levels is None or level < self.levels
        children = None
        if node.children is not None:
            children = [
                self._child(c, level + 1) if deeper else self._pointer(c) for c in node.children
            ]
        full = self.levels is None
        values = [self._value(v, full) for v in node.values]
        buffer = [
            m._replace(value=None if m.value is None else self._value(m.value, full))
            for m in node.buffer
        ]
        data = NodeData(system, node.keys, values, children, buffer)
        return encode_node(
            data, self.source.definition.order, compression=self.source.nodes.compression
        )

    def _child(self, ref: Any, level: int) -> str:
        node = self.source.nodes.resolve(ref)
        path = ref if isinstance(ref, str) and not is_uri(ref) else None
        if path is None:  # a node that already lives elsewhere stays there
            return self._pointer(ref)
        self._put(path, self._encode(node, level, dict(node.system)))
        return path

    def _pointer(self, ref: Any) -> str:
        assert isinstance(ref, str)
        return qualify(self.root_uri, ref)

    def _value(self, value: str, copy: bool) -> str:
        if not copy or is_uri(value):
            return qualify(self.root_uri, value)
        self._put(value, self.source.read_location(value))
        return value

    def _put(self, path: str, data: bytes) -> None:
        if self.target.exists(path):
            return  # a definition shared by several keys is copied once
        self.target.create_exclusive(path, data)
        self.files += 1
        self.bytes += len(data)
        if self.progress is not None:
            self.progress(self.files, -1)


# -- expiration -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpireResult:
    """Versions an expiration removed (or would remove, in a dry run)."""

    expired: tuple[int, ...]
    retained: tuple[int, ...]
    dry_run: bool


def retained_versions(lakehouse: Lakehouse) -> list[int]:
    """Every version whose root file exists, ascending (one list request)."""
    versions = (root_node_version(p) for p in lakehouse.storage.list("_"))
    return sorted(v for v in versions if v is not None)


def expire_versions(
    lakehouse: Lakehouse,
    *,
    older_than: datetime | float | None = None,
    retain_last: int | None = None,
    now: datetime | float | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ExpireResult:
    """Delete the root files of versions past their maximum age.

    A version expires when it was created before its cut-off: ``older_than``
    if given, else now minus the definition's ``maximum_version_age_millis``;
    a per-version override (``maximum_version_age_millis_overrides``) always
    sets that version's own cut-off. Never expired: the newest ``retain_last``
    versions (default ``minimum_versions_to_keep``), the latest version, and
    versions an export pins in place.

    ``progress`` is called with (versions done, versions to check): a version
    that may expire is done once it is found young enough to keep, or once
    its root file is deleted (found expired, in a dry run); the last call has
    done == total, also when no version may expire (0, 0).
    """
    # Pinned, the newer versions would look expirable and their files garbage.
    lakehouse.require_unpinned("expire_versions")
    latest = lakehouse.snapshot()
    definition = latest.definition
    now_ms = to_millis(now) if now is not None else int(time.time() * 1000)
    keep_last = definition.minimum_versions_to_keep if retain_last is None else retain_last
    if keep_last < 1:
        raise ProgrammingError(
            f"retain_last must be at least 1 (the latest version), not {keep_last}"
        )
    versions = [v for v in retained_versions(lakehouse) if v <= latest.version]
    protected = set(versions[-keep_last:]) | {latest.version}
    for location in definition.exported_snapshots.values():
        pinned = None if is_uri(location) else root_node_version(location)
        if pinned is not None:
            protected.add(pinned)
    default_cutoff = (
        to_millis(older_than)
        if older_than is not None
        else now_ms - definition.maximum_version_age_millis
    )
    candidates = [v for v in versions if v not in protected]
    done = 0

    def one_done() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(candidates))

    expired = []
    for version in candidates:
        override = definition.maximum_version_age_millis_overrides.get(version)
        cutoff = default_cutoff if override is None else now_ms - override
        if _created_at_most(lakehouse, version, versions) < cutoff:
            expired.append(version)
            if not dry_run:
                continue  # done once deleted
        one_done()
    if not dry_run:
        for version in expired:  # oldest first: the retained run stays contiguous
            _delete(lakehouse, root_node_file_name(version))
            one_done()
    if progress is not None and not candidates:
        progress(0, 0)
    gone = set(expired)
    kept = tuple(v for v in versions if v not in gone)
    return ExpireResult(tuple(expired), kept, dry_run)


def _created_at_most(lakehouse: Lakehouse, version: int, versions: list[int]) -> int:
    """When ``version`` was created, or a time after it when its root is damaged.

    Creation times strictly increase with the version, so a damaged root
    (kept after a recovery, docs/recovery.md) is older than the next readable
    one: it expires once that one would, never sooner.
    """
    for later in (v for v in versions if v >= version):
        try:
            return lakehouse.load_version(later).created_at_millis
        except CorruptFileError:
            continue
    return 2**63 - 1  # nothing readable after it: keep it


# -- garbage collection -----------------------------------------------------------------------


@dataclass
class GarbageResult:
    """What garbage collection deleted (or would delete, in a dry run)."""

    deleted: list[str] = field(default_factory=list)
    reachable: int = 0
    too_young: int = 0
    dry_run: bool = False


def reachable_files(lakehouse: Lakehouse) -> set[str]:
    """Paths of every file in this storage that a retained version or an export reaches."""
    marker = _Marker(lakehouse)
    for version in retained_versions(lakehouse):
        marker.root(root_node_file_name(version))
    for location in lakehouse.snapshot().definition.exported_snapshots.values():
        marker.root(location)
    return marker.live


class _Marker:
    """Marks files reachable from roots; shared subtrees are visited once."""

    def __init__(self, lakehouse: Lakehouse) -> None:
        self.lakehouse = lakehouse
        self.root_uri = lakehouse.storage.root_uri
        self.live: set[str] = {LATEST_HINT_FILE}
        self.seen: set[str] = set()

    def _local(self, location: str) -> str | None:
        if not is_uri(location):
            return location
        if location.startswith(self.root_uri):
            return location[len(self.root_uri) :]
        return None

    def root(self, location: str) -> None:
        self.node(location)
        node = self.lakehouse.nodes.load(location)
        definition = node.system.get(system_keys.LAKEHOUSE_DEF)
        if definition is not None:
            self.mark(
                qualify(location.rpartition("/")[0] + "/", definition)
                if is_uri(location)
                else definition
            )

    def mark(self, location: str) -> None:
        local = self._local(location)
        if local is not None:
            self.live.add(local)

    def node(self, location: str) -> None:
        if location in self.seen:
            return
        self.seen.add(location)
        self.mark(location)
        node = self.lakehouse.nodes.load(location)
        # What this node says each key holds: its buffered messages (oldest
        # first) are newer than its own key table, so they shadow it. Values
        # shadowed by a message in an ancestor's buffer stay marked until a
        # flush moves that message down: conservative, never wrong.
        effective: dict[str, str | None] = dict(zip(node.keys, node.values, strict=True))
        effective.update((m.key, m.value) for m in node.buffer)
        for key, value in effective.items():
            if value is None:
                continue
            self.mark(value)
            if is_table_key(key) and value not in self.seen:
                self.seen.add(value)
                self.table_files(value)
        for child in node.children or ():
            assert isinstance(child, str)
            self.node(child)

    def table_files(self, location: str) -> None:
        """Mark the data files a table definition reaches through its table format."""
        from trinity_dbapi.format.definitions import TableDefinition

        definition = TableDefinition.from_bytes(self.lakehouse.read_location(location), location)
        referenced_files = referenced_files_of(definition.table_format)
        if referenced_files is not None:
            for path in referenced_files(self.lakehouse.storage, definition):
                self.mark(path)


def collect_garbage(
    lakehouse: Lakehouse,
    *,
    grace_period_millis: int = DEFAULT_GRACE_PERIOD_MILLIS,
    now: datetime | float | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> GarbageResult:
    """Delete every unreachable file older than the grace period.

    Unreachable: not reached by any retained version (its root, lakehouse
    definition, nodes and object definitions) nor by an export. That covers
    files of expired versions, of dropped objects, and orphans of failed or
    killed commits.

    ``progress`` is called with (files deleted, files to delete) after each
    deletion (counted alike in a dry run), or once with (0, 0) when there is
    nothing to delete.
    """
    lakehouse.require_unpinned("collect_garbage")
    if grace_period_millis < 0:
        raise ProgrammingError("grace_period_millis must not be negative")
    now_s = (to_millis(now) if now is not None else int(time.time() * 1000)) / 1000
    listed = lakehouse.storage.list_with_times("")
    live = reachable_files(lakehouse)
    result = GarbageResult(reachable=len(live), dry_run=dry_run)
    candidates = [(p, t) for p, t in listed if p not in live]
    # Sorted out first (in memory), so progress knows the total.
    doomed = list(_old_enough(candidates, now_s, grace_period_millis, result))
    for done, path in enumerate(doomed, 1):
        if not dry_run:
            _delete(lakehouse, path)
        result.deleted.append(path)
        if progress is not None:
            progress(done, len(doomed))
    if progress is not None and not doomed:
        progress(0, 0)
    return result


def _delete(lakehouse: Lakehouse, path: str) -> None:
    lakehouse.storage.delete(path)
    lakehouse.nodes.forget(path)  # a deleted version must not live on in the cache


def _old_enough(
    candidates: list[tuple[str, float | None]], now_s: float, grace_ms: int, result: GarbageResult
) -> Iterator[str]:
    for path, mtime in candidates:
        if grace_ms and (mtime is None or mtime > now_s - grace_ms / 1000):
            result.too_young += 1  # unknown times count as young: never guess
            continue
        yield path


__all__ = [
    "DEFAULT_GRACE_PERIOD_MILLIS",
    "EXPORT_MODES",
    "ExpireResult",
    "ExportResult",
    "GarbageResult",
    "collect_garbage",
    "compact",
    "expire_versions",
    "export_snapshot",
    "reachable_files",
    "retained_versions",
    "rollback",
]
