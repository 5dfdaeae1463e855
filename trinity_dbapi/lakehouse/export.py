"""Snapshot export: one version replicated to a new lakehouse, or pinned in place.

An export copies one version to a target root URI down to a depth:
``minimal`` copies the root only, ``partial`` the top ``depth`` levels,
``full`` every node and object definition, giving an independent lakehouse.
Pointers at the cut become fully qualified URIs of the source. Without a
target, a minimal export pins the version in place. Every export is recorded
in the lakehouse definition's ``exported_snapshots``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import LakehouseExistsError, ObjectExistsError, ProgrammingError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.locations import is_uri, qualify
from trinity_dbapi.format.node_file import NodeData, encode_node
from trinity_dbapi.format.paths import (
    LATEST_HINT_FILE,
    new_lakehouse_definition_path,
    root_node_file_name,
)
from trinity_dbapi.lakehouse import roots
from trinity_dbapi.storage import Storage, open_storage

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse
    from trinity_dbapi.lakehouse.snapshot import Snapshot
    from trinity_dbapi.lakehouse.transaction import Progress
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
        self.source = lakehouse
        self.snap = snap
        self.target: Storage = open_storage(
            target,
            storage_options=dict(options if options is not None else lakehouse.storage_options),
        )
        if roots.lakehouse_exists(self.target):
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


__all__ = ["EXPORT_MODES", "ExportResult", "export_snapshot"]
