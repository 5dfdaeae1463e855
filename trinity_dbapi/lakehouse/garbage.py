"""Garbage collection: files that no retained version and no export reaches go.

A file is collected only if it is older than a grace period, so files of
transactions still in flight are never collected; a dry run only lists them.
Tables reach data files through their table format, which garbage
collection follows through :mod:`trinity_dbapi.lakehouse.table_formats`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import TableDefinition
from trinity_dbapi.format.keys import is_table_key
from trinity_dbapi.format.locations import is_uri, qualify
from trinity_dbapi.format.paths import LATEST_HINT_FILE, root_node_file_name
from trinity_dbapi.lakehouse.derived import live_derived_files
from trinity_dbapi.lakehouse.expiration import delete_file, retained_versions
from trinity_dbapi.lakehouse.history import to_millis
from trinity_dbapi.lakehouse.table_formats import referenced_files_of

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse
    from trinity_dbapi.lakehouse.transaction import Progress

#: Files younger than this are never collected: they may belong to a
#: transaction that has not created its root yet.
DEFAULT_GRACE_PERIOD_MILLIS = 60 * 60 * 1000


@dataclass
class GarbageResult:
    """What garbage collection deleted (or would delete, in a dry run)."""

    deleted: list[str] = field(default_factory=list)
    reachable: int = 0
    too_young: int = 0
    dry_run: bool = False


def reachable_files(lakehouse: Lakehouse) -> set[str]:
    """Paths of every file in this storage that a retained version or an export reaches.

    Also the derived files of the newest version's tables (see
    :mod:`trinity_dbapi.lakehouse.derived`).
    """
    marker = _Marker(lakehouse)
    for version in retained_versions(lakehouse):
        marker.root(root_node_file_name(version))
    newest = lakehouse.snapshot()
    for location in newest.definition.exported_snapshots.values():
        marker.root(location)
    # Derived files (Kartothek's main metadata files) of the newest version's
    # tables stay; those of dropped tables go.
    marker.live.update(live_derived_files(lakehouse, newest))
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
            delete_file(lakehouse, path)
        result.deleted.append(path)
        if progress is not None:
            progress(done, len(doomed))
    if progress is not None and not doomed:
        progress(0, 0)
    return result


def _old_enough(
    candidates: list[tuple[str, float | None]], now_s: float, grace_ms: int, result: GarbageResult
) -> Iterator[str]:
    for path, mtime in candidates:
        if grace_ms and (mtime is None or mtime > now_s - grace_ms / 1000):
            result.too_young += 1  # unknown times count as young: never guess
            continue
        yield path


__all__ = ["DEFAULT_GRACE_PERIOD_MILLIS", "GarbageResult", "collect_garbage", "reachable_files"]
