"""Garbage collection: the lakehouse's own files that nothing retained reaches go.

A file is deleted only if all of these hold (docs/transactions.md, "What
garbage collection deletes"):

1. the lakehouse wrote it: its name is one the lakehouse gives, at its place,
   in a group (a managed table's dataset) the lakehouse owns
   (:mod:`trinity_dbapi.lakehouse.ownership`); files of other programs, of
   another lakehouse or export target inside the root, and of a store a table
   reads in place are never touched;
2. no retained version, export or table reaches it;
3. it is older than a grace period, so files of transactions still in
   flight stay. A dry run only lists what would go.

Within a group no retained version reaches any more, the files that prove it
is the lakehouse's (its claim file, the table definitions that owned it) are
deleted after all its other files, and kept while any of them stays, so an
interrupted collection leaves nothing it cannot collect later.

Saved transactions not expired keep their own files and what their running
roots reach (:mod:`.saved_transactions`); an expired one's go like any garbage.

Imports from lakehouse/: chain, commit_point, derived, expiration, history, ownership,
saved_transactions, table_formats.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from trinity_dbapi.errors import Error, ProgrammingError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import BRANCH_FOLDER_PREFIX, TableDefinition
from trinity_dbapi.format.definitions.branches import branch_root_files
from trinity_dbapi.format.keys import is_table_key
from trinity_dbapi.format.locations import is_uri, qualify, split_uri
from trinity_dbapi.format.paths import LATEST_HINT_FILE, claim_path, root_node_file_name
from trinity_dbapi.lakehouse import ownership
from trinity_dbapi.lakehouse.derived import live_derived_files
from trinity_dbapi.lakehouse.expiration import delete_file, retained_versions
from trinity_dbapi.lakehouse.history import to_millis
from trinity_dbapi.lakehouse.saved_transactions import kept_alive
from trinity_dbapi.lakehouse.table_formats import FileRules, file_rules, referenced_files_of

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import VersionChain
    from trinity_dbapi.lakehouse.commit_point import Progress

#: Files younger than this are never collected: they may belong to a
#: transaction that has not created its root yet.
DEFAULT_GRACE_PERIOD_MILLIS = 60 * 60 * 1000

#: Unreached table definitions read at once on object storage.
_READ_THREADS = 16


@dataclass
class GarbageResult:
    """What garbage collection deleted (or would delete, in a dry run).

    Attributes:
        deleted: the paths deleted, in the order they went.
        reachable: files some retained version, export or table reaches.
        too_young: the lakehouse's unreachable files kept for the grace period.
        foreign: files under the root that are not the lakehouse's to delete:
            another lakehouse's or export target's, a store a table reads in
            place, files other programs wrote.
        dry_run: whether nothing was deleted.
    """

    deleted: list[str] = field(default_factory=list)
    reachable: int = 0
    too_young: int = 0
    foreign: int = 0
    dry_run: bool = False


def reachable_files(lakehouse: VersionChain) -> set[str]:
    """Paths of every file in this storage that a retained version or an export reaches.

    Also the derived files of the newest version's tables (see
    :mod:`trinity_dbapi.lakehouse.derived`) and the claim files of the groups
    the reached tables own.
    """
    return _reach(lakehouse).live


def _reach(
    lakehouse: VersionChain, now_ms: int | None = None, listed: list[str] | None = None
) -> _Marker:
    marker = _Marker(lakehouse)
    for version in retained_versions(lakehouse):
        marker.root(root_node_file_name(version))
    saved = kept_alive(lakehouse, now_ms)  # saved transactions not expired at now_ms
    marker.live.update(saved.files)
    for running in saved.running_roots:
        marker.root(running)
    newest = lakehouse.snapshot()
    live_branches = newest.definition.branches
    if live_branches:
        # The roots live branches reach (their own, and those of the branches
        # they were made from, up to where they left them) and their hints;
        # the folders of dropped branches are garbage (docs/format.md, "Branches").
        if listed is None:
            listed = lakehouse.storage.list(BRANCH_FOLDER_PREFIX)
        in_folders = [p for p in listed if p.startswith(BRANCH_FOLDER_PREFIX)]
        roots, hints = branch_root_files(live_branches, in_folders)
        for root in roots:
            marker.root(root)
        marker.live.update(hints)
    for location in newest.definition.exported_snapshots.values():
        marker.root(location)
        if is_uri(location) and location.startswith(marker.root_uri):
            # An export written inside this root is another lakehouse.
            marker.other_roots.add(split_uri(location)[0][len(marker.root_uri) :])
    # Derived files (Kartothek's main metadata files) of the newest version's
    # tables stay; those of dropped tables go.
    marker.live.update(live_derived_files(lakehouse, newest))
    marker.live.update(claim_path(*group) for group in marker.claims.groups)
    return marker


class _Marker:
    """Marks files reachable from roots; shared subtrees are visited once."""

    def __init__(self, lakehouse: VersionChain) -> None:
        self.lakehouse = lakehouse
        self.root_uri = lakehouse.storage.root_uri
        self.live: set[str] = {LATEST_HINT_FILE}
        self.seen: set[str] = set()
        self.claims = ownership.Claims()
        self.other_roots: set[str] = set()
        self.rules = file_rules()

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
        """Mark what a table definition reaches through its table format, and what it owns."""
        definition = TableDefinition.from_bytes(self.lakehouse.read_location(location), location)
        rules = self.rules.get(definition.table_format)
        own = rules.ownership(definition, self.root_uri) if rules is not None else None
        if own is not None:
            self.claims.protected_folders.update(p for p in own.protected if p.endswith("/"))
            self.claims.protected_files.update(p for p in own.protected if not p.endswith("/"))
        if self._local(location) is None:
            # A table of another lakehouse (a full export's): its own files
            # are relative to that lakehouse; only what it reads in place
            # here (above) concerns this one.
            return
        if own is not None:
            self.claims.groups.update((definition.table_format, g) for g in own.groups)
            self.claims.files.update(own.files)
        referenced_files = referenced_files_of(definition.table_format)
        if referenced_files is not None:
            for path in referenced_files(self.lakehouse.storage, definition):
                self.mark(path)


def collect_garbage(
    lakehouse: VersionChain,
    *,
    grace_period_millis: int = DEFAULT_GRACE_PERIOD_MILLIS,
    now: datetime | float | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> GarbageResult:
    """Delete every file no retained version or export reaches, once old enough.

    Unreachable: not reached by any retained version (its root, lakehouse
    definition, nodes, object definitions and table files), an export or a
    table. That covers files of expired versions, of dropped objects, and
    orphans of failed or killed commits; see the module docstring for what
    is never deleted.

    Args:
        grace_period_millis: files younger than this are kept (they may
            belong to a commit in flight).
        now: the current time (a datetime, naive = UTC, or epoch ms).
        dry_run: only report what would be deleted.
        progress: called with (files deleted, files to delete) after each
            deletion (counted alike in a dry run), or once with (0, 0) when
            there is nothing to delete.

    Returns:
        The files deleted, and how many were reachable or too young.

    Raises:
        NotSupportedError: a table has a table format nobody registered
            (:func:`table_formats.register_table_format`).
        UnsupportedFeatureError: the lakehouse requires a feature this
            release does not know: what such a feature reaches would look
            like garbage.
        ReadOnlyError: the lakehouse is pinned (opened with ``version=N``):
            the newer versions' files would look unreachable.
    """
    # A newer release's features may reach files this one cannot see.
    lakehouse.require_known_features("collect_garbage")
    lakehouse.require_unpinned("collect_garbage")
    if grace_period_millis < 0:
        raise ProgrammingError("grace_period_millis must not be negative")
    now_ms = to_millis(now) if now is not None else int(time.time() * 1000)
    now_s = now_ms / 1000
    listed = lakehouse.storage.list_with_times("")
    marker = _reach(lakehouse, now_ms, [path for path, _ in listed])
    result = GarbageResult(reachable=len(marker.live), dry_run=dry_run)

    def young(mtime: float | None) -> bool:
        # Unknown times count as young: never guess.
        return bool(grace_period_millis) and (
            mtime is None or mtime > now_s - grace_period_millis / 1000
        )

    doomed = _Plan(lakehouse, marker, marker.rules, young, result).doomed(listed)
    for done, path in enumerate(doomed, 1):
        if not dry_run:
            delete_file(lakehouse, path)
        result.deleted.append(path)
        if progress is not None:
            progress(done, len(doomed))
    if progress is not None and not doomed:
        progress(0, 0)
    return result


class _Plan:
    """Sorts the listed files into kept and doomed, in the order they may go."""

    def __init__(
        self,
        lakehouse: VersionChain,
        marker: _Marker,
        rules: dict[str, FileRules],
        young: Callable[[float | None], bool],
        result: GarbageResult,
    ) -> None:
        self.lakehouse = lakehouse
        self.marker = marker
        self.rules = rules
        self.young = young
        self.result = result

    def doomed(self, listed: list[tuple[str, float | None]]) -> list[str]:
        live, claims = self.marker.live, self.marker.claims
        # A branch's folder holds roots and a hint, as another lakehouse's
        # root does, but it is this lakehouse's own.
        nested = ownership.nested_roots(p for p, _ in listed)
        nested = {f for f in nested if not f.startswith(BRANCH_FOLDER_PREFIX)}
        others = nested | self.marker.other_roots
        present = {path for path, _ in listed}
        catalog: list[tuple[str, str, float | None]] = []
        branch_files: list[str] = []
        groups: dict[tuple[str, str], list[tuple[ownership.GroupFile, float | None]]] = defaultdict(
            list
        )
        for path, mtime in listed:
            if path in live:
                continue
            if ownership.is_branch_file(path):
                if self.young(mtime):
                    self.result.too_young += 1
                else:
                    branch_files.append(path)  # a dropped branch's root or hint
                continue
            if ownership.under(path, others) or claims.protects(path):
                self.result.foreign += 1
                continue
            kind = ownership.catalog_kind(path)
            if kind is not None:
                catalog.append((path, kind, mtime))
                continue
            found = ownership.group_file(path, self.rules)
            if found is None:
                self.result.foreign += 1
            else:
                groups[(found.table_format, found.group)].append((found, mtime))
        proven = {g for g in groups if g in claims.groups or claim_path(*g) in present}
        own_files = set(claims.files)
        proofs: dict[tuple[str, str], list[str]] = defaultdict(list)
        if any(g not in proven for g in groups):
            # Groups made before claim files existed: owned if a table
            # definition of the lakehouse that no version reaches said so.
            self._read_definitions(catalog, proofs, own_files)

        first: list[tuple[int, str]] = []  # group files, by rank
        kept_groups: set[tuple[str, str]] = set()
        for group, files in groups.items():
            owned = group in proven or group in proofs
            for found, mtime in files:
                if not owned and found.path not in own_files:
                    self.result.foreign += 1
                elif self.young(mtime):
                    self.result.too_young += 1
                    kept_groups.add(group)
                else:
                    first.append((found.rank, found.path))
        keep_proofs = {p for g in kept_groups if g not in claims.groups for p in proofs.get(g, ())}
        keep_proofs.update(claim_path(*g) for g in kept_groups)
        catalog_files, last = [], []
        for path, kind, mtime in catalog:
            if self.young(mtime):
                self.result.too_young += 1
            elif path in keep_proofs:
                self.result.too_young += 1  # kept while its group keeps files
            elif kind in (ownership.CLAIM, ownership.TABLE_DEFINITION):
                last.append(path)  # they prove groups: after every group file
            else:
                catalog_files.append(path)
        # Groups' files first (a dataset's main metadata file before its data,
        # its metadata last), then the catalog's, then what proved a group.
        # A dropped branch's roots go first: nothing may point at what they
        # point at once they are gone.
        return sorted(branch_files) + [p for _, p in sorted(first)] + catalog_files + sorted(last)

    def _read_definitions(
        self,
        catalog: list[tuple[str, str, float | None]],
        proofs: dict[tuple[str, str], list[str]],
        own_files: set[str],
    ) -> None:
        storage = self.lakehouse.storage
        paths = [path for path, kind, _ in catalog if kind == ownership.TABLE_DEFINITION]

        def read(path: str) -> TableDefinition | None:
            try:
                return TableDefinition.from_bytes(storage.read(path), path)
            except Error:
                return None  # unreadable: it proves nothing, and it is still garbage

        # Each read is a round trip on object storage: side by side there.
        threads = 1 if storage.local_root is not None else _READ_THREADS
        with ThreadPoolExecutor(max_workers=threads) as pool:
            for path, definition in zip(paths, pool.map(read, paths), strict=True):
                rules = None if definition is None else self.rules.get(definition.table_format)
                if definition is None or rules is None:
                    continue
                own = rules.ownership(definition, storage.root_uri)
                for group in own.groups:
                    proofs[(definition.table_format, group)].append(path)
                own_files.update(own.files)


__all__ = ["DEFAULT_GRACE_PERIOD_MILLIS", "GarbageResult", "collect_garbage", "reachable_files"]
