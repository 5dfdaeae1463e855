"""Snapshot export: one version replicated to a new lakehouse, or pinned in place.

An export copies one version to a target root URI down to a depth:
``minimal`` copies the root only, ``partial`` the top ``depth`` levels of
nodes, ``full`` every node, object definition and every file a table's
format keeps under the root (a managed table's dataset metadata, data and
index files), giving an independent lakehouse: a backup. Pointers at the cut
become fully qualified URIs of the source. Without a target, a minimal
export pins the version in place. Every export is recorded in the lakehouse
definition's ``exported_snapshots``.

The target must be a new location outside the source lakehouse and outside
any other lakehouse (``NestedLakehouseError``): an export written inside a
lakehouse root would be files no lakehouse knows how to keep.

It records the export with a :class:`~.transaction.Transaction` and opens the
target as a chain (:mod:`.opening`), never through the facade.

Imports from lakehouse/: chain, commit_point, derived, opening, ownership, roots,
table_formats, transaction.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import (
    FileAlreadyExistsError,
    LakehouseExistsError,
    NestedLakehouseError,
    ObjectExistsError,
    ProgrammingError,
)
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import MAIN, LakehouseDefinition, TableDefinition
from trinity_dbapi.format.features import BRANCHES
from trinity_dbapi.format.keys import is_table_key
from trinity_dbapi.format.locations import is_uri, qualify
from trinity_dbapi.format.node_file import NodeData, encode_node
from trinity_dbapi.format.paths import (
    LATEST_HINT_FILE,
    claim_path,
    new_lakehouse_definition_path,
    root_node_file_name,
)
from trinity_dbapi.lakehouse import opening, roots
from trinity_dbapi.lakehouse.chain import VersionChain
from trinity_dbapi.lakehouse.derived import publish_after_commit
from trinity_dbapi.lakehouse.ownership import claim_content
from trinity_dbapi.lakehouse.table_formats import file_rules, referenced_files_of
from trinity_dbapi.lakehouse.transaction import Transaction
from trinity_dbapi.storage import Storage, open_storage

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot
    from trinity_dbapi.lakehouse.commit_point import Progress
    from trinity_dbapi.tree.node import Node

EXPORT_MODES = ("minimal", "partial", "full")


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
    lakehouse: VersionChain,
    name: str,
    *,
    version: int | None = None,
    mode: str = "minimal",
    target: str | None = None,
    depth: int | None = None,
    target_storage_options: dict[str, Any] | None = None,
    progress: Progress | None = None,
) -> ExportResult:
    """Export one version under ``name``: pin it in place, or copy it to ``target``.

    :mod:`~trinity_dbapi.lakehouse.export` describes the modes.

    Args:
        name: the export's name (not all digits: ``AS OF 3`` means version 3).
        version: the version to export (the latest when None).
        mode: ``minimal`` (the root), ``partial`` (the top ``depth`` levels)
            or ``full`` (an independent lakehouse).
        target: root URI of the new lakehouse; None pins the version in place
            (minimal only).
        depth: tree levels a partial export copies (1 = the root only).
        target_storage_options: fsspec options for the target (default: the
            source's).
        progress: called with (files copied, -1) as the copy goes, and with
            (n, n) once it is complete, before the export is recorded (so a
            callback that raises leaves no export behind; the target may keep
            the files copied so far, and a later export there reuses them).

    Returns:
        What the export did, and the version that records it.

    Raises:
        ObjectExistsError: an export of that name exists.
        LakehouseExistsError: the target already holds a lakehouse.
        NestedLakehouseError: the target lies inside this lakehouse or
            another one, or this lakehouse lies inside the target.
        UnsupportedFeatureError: the lakehouse, or the version exported,
            requires a feature this release does not know (checked before
            anything is copied).
        ReadOnlyError: the lakehouse is pinned (opened with ``version=N``).
    """
    lakehouse.require_known_features("export_snapshot")
    if version is not None:  # its definition is what the copy writes
        lakehouse.require_known_features("export_snapshot", lakehouse.snapshot(version).definition)
    lakehouse.require_unpinned("export_snapshot")
    if mode not in EXPORT_MODES:
        raise ProgrammingError(f"export mode {mode!r} is not one of {', '.join(EXPORT_MODES)}")
    if mode == "partial" and (depth is None or depth < 1):
        raise ProgrammingError("a partial export needs depth >= 1 (tree levels to copy)")
    levels = {"minimal": 1, "partial": depth or 1, "full": None}[mode]
    snap = lakehouse.snapshot(version)
    lakehouse.require_known_features("export_snapshot", snap.definition)
    current = lakehouse.snapshot().definition
    if name in current.exported_snapshots:
        raise ObjectExistsError("exported snapshot", name)
    if name in current.branches or name.lower() == MAIN:  # one namespace for ref names
        raise ObjectExistsError("branch", name)
    # The name's rules are the definition's: checked before anything is copied.
    pending = {**current.exported_snapshots, name: root_node_file_name(snap.version)}
    current.replace(exported_snapshots=pending).check_new_names(current)
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
        if mode == "full":
            _publish_derived(copier.target)
    if progress is not None:
        progress(copied, copied)

    txn = Transaction(lakehouse, lakehouse.snapshot())

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
        lakehouse: VersionChain,
        snap: Snapshot,
        target: str,
        options: dict[str, Any] | None,
        levels: int | None,
        progress: Progress | None,
    ) -> None:
        self.source = lakehouse
        self.snap = snap
        self.target: Storage = open_storage(
            target,
            storage_options=dict(options if options is not None else lakehouse.storage_options),
        )
        self.root_uri = lakehouse.storage.root_uri
        _check_target(self.root_uri, self.target)
        self.levels = levels
        self.progress = progress
        self.files = 0
        self.bytes = 0
        self._lock = threading.Lock()
        #: Definition paths of the tables a full export copied (their files follow).
        self.tables: list[str] = []

    def run(self) -> str:
        # The copy is a lakehouse of one version: no exports, no branches
        # (their roots stay behind), so nothing to require of a release for them.
        required = {
            k: v for k, v in self.snap.definition.required_writer_features.items() if k != BRANCHES
        }
        definition = self.snap.definition.replace(
            exported_snapshots={}, branches={}, required_writer_features=required
        )
        def_path = new_lakehouse_definition_path()
        self._put(def_path, definition.to_bytes())
        root = self.snap.root
        system = {
            system_keys.CREATED_AT_MILLIS: str(self.snap.created_at_millis),
            system_keys.LAKEHOUSE_DEF: def_path,
            system_keys.TXN_ID: self.snap.latest_txn or str(uuid.uuid4()),
            system_keys.EXPORTED_FROM_VERSION: str(self.snap.version),
        }
        encoded = self._encode(root, 1, system)  # copies every node below first
        if self.levels is None:
            self._copy_table_files()
        self._put(root_node_file_name(0), encoded)
        self.target.write(LATEST_HINT_FILE, b"0")
        return self.target.root_uri + root_node_file_name(0)

    def _copy_table_files(self) -> None:
        """Copy every file the tables' formats keep, and claim their groups, before the root.

        The files keep their paths: every pointer inside a table's files is
        relative to the lakehouse root. The root is created last, so a target
        that opens as a lakehouse holds everything its tables need.
        """
        rules = file_rules()
        paths: dict[str, None] = {}
        groups: dict[tuple[str, str], None] = {}
        for location in self.tables:
            table = TableDefinition.from_bytes(self.source.read_location(location), location)
            referenced = referenced_files_of(table.table_format)
            if referenced is not None:
                paths.update(dict.fromkeys(referenced(self.source.storage, table)))
            rule = rules.get(table.table_format)
            if rule is not None:
                for group in rule.ownership(table, self.root_uri).groups:
                    groups[(table.table_format, group)] = None
        for table_format, group in groups:  # before the files, as a writer claims a group
            content = claim_content(table_format, group)
            self._put(claim_path(table_format, group), content, check=False)
        source = self.source.storage
        threads = _COPY_THREADS if source.local_root is None else 4
        with ThreadPoolExecutor(max_workers=threads) as pool:
            # list() re-raises the first failure, once the pool has finished.
            list(pool.map(lambda p: self._put(p, source.read(p), check=False), paths))

    def _encode(
        self, node: Node, level: int, system: dict[str, str], shadowed: frozenset[str] = frozenset()
    ) -> bytes:
        """Encode a copy of ``node``, copying what it points at down to the export's depth.

        ``shadowed``: keys a message in an ancestor's write buffer sets, which
        is newer than anything below it: their values here are not the
        version's, so their tables' files are not copied.
        """
        deeper = self.levels is None or level < self.levels
        # The newest message of each key (oldest first) is what the version
        # holds; it shadows the key table and every older message.
        newest = {m.key: i for i, m in enumerate(node.buffer)}
        below = shadowed | frozenset(newest)
        children = None
        if node.children is not None:
            children = [
                self._child(c, level + 1, below) if deeper else self._pointer(c)
                for c in node.children
            ]
        full = self.levels is None
        values = [
            self._value(v, full, k if k not in below else None)
            for k, v in zip(node.keys, node.values, strict=True)
        ]
        buffer = [
            m._replace(
                value=None
                if m.value is None
                else self._value(
                    m.value, full, m.key if newest[m.key] == i and m.key not in shadowed else None
                )
            )
            for i, m in enumerate(node.buffer)
        ]
        data = NodeData(system, node.keys, values, children, buffer)
        return encode_node(
            data, self.source.definition.order, compression=self.source.nodes.compression
        )

    def _child(self, ref: Any, level: int, shadowed: frozenset[str]) -> str:
        node = self.source.nodes.resolve(ref)
        path = ref if isinstance(ref, str) and not is_uri(ref) else None
        if path is None:  # a node that already lives elsewhere stays there
            return self._pointer(ref)
        self._put(path, self._encode(node, level, dict(node.system), shadowed))
        return path

    def _pointer(self, ref: Any) -> str:
        assert isinstance(ref, str)
        return qualify(self.root_uri, ref)

    def _value(self, value: str, copy: bool, key: str | None) -> str:
        """Copy the definition ``value`` points at; ``key``: its key, None if shadowed.

        A shadowed value is no version's any more: it is not copied, and its
        pointer is left as garbage collection leaves such pointers.
        """
        if not copy or is_uri(value):
            return qualify(self.root_uri, value)
        if key is None:
            return value
        self._put(value, self.source.read_location(value))
        if key is not None and is_table_key(key) and value not in self.tables:
            self.tables.append(value)
        return value

    def _put(self, path: str, data: bytes, *, check: bool = True) -> None:
        if check and self.target.exists(path):
            return  # a definition shared by several keys is copied once
        try:
            self.target.create_exclusive(path, data)
        except FileAlreadyExistsError:
            return  # copied by an earlier, interrupted export to this target
        with self._lock:
            self.files += 1
            self.bytes += len(data)
            if self.progress is not None:
                self.progress(self.files, -1)


def _publish_derived(target: Storage) -> None:
    """Write the derived files of the export's tables (Kartothek's main metadata files).

    Best effort, as after a commit: the export is complete without them, and
    a commit or ``CALL system.sync_kartothek()`` in the target writes them.
    """
    exported = opening.open_lakehouse(VersionChain, target, None, version=None, defer=False)
    publish_after_commit(exported, exported.snapshot(), None)


#: Files a full export copies at once from object storage.
_COPY_THREADS = 8


def _check_target(source_root: str, target: Storage) -> None:
    """Refuse a target that is, holds, or lies inside a lakehouse.

    Raises:
        LakehouseExistsError: the target holds a lakehouse.
        NestedLakehouseError: the target lies inside the source or another
            lakehouse, or the source lies inside the target.
    """
    target_root = target.root_uri
    if target_root == source_root:
        raise LakehouseExistsError(target_root)
    if target_root.startswith(source_root) or source_root.startswith(target_root):
        raise NestedLakehouseError(
            target_root, source_root, "an export", around=not target_root.startswith(source_root)
        )
    if roots.lakehouse_exists(target):
        raise LakehouseExistsError(target_root)
    outer = roots.enclosing_lakehouse(target)
    if outer is not None:
        raise NestedLakehouseError(target_root, outer, "an export")


__all__ = ["EXPORT_MODES", "ExportResult", "export_snapshot"]
