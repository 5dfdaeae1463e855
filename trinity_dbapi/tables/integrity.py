"""Integrity check: read every file one version reaches, and report each problem.

``CALL system.check_integrity()`` runs :func:`check_integrity`. Like SQLite's
``PRAGMA integrity_check`` it reports rather than stops: every file the
version reaches is read from storage (not from a cache), and each file that
is missing or does not parse is one :class:`Problem`. What is read:

* the version's root node file and the lakehouse definition it points at;
* every node file of the tree (a node that cannot be read hides its
  subtree, which is then not checked: its files cannot be known);
* every object definition a node's keys or buffered messages point at
  (shadowed values too, as garbage collection keeps them);
* for each managed table, its dataset metadata file, ``_common_metadata``,
  the footer of every data file, and every index file;
* the root node file of every older retained version (the root only: a
  damaged one breaks time travel to it, expiration and garbage collection).

Older versions' trees are not walked (follow ``previous_root`` by checking
them: ``connect(uri, version=N)``). See docs/recovery.md.

Imports from tables/: layout, managed; inside functions: file_facts, indices,
metadata_io.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import CorruptFileError, Error, StorageFileNotFoundError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import NamespaceDefinition, TableDefinition, ViewDefinition
from trinity_dbapi.format.keys import is_table_key, is_view_key
from trinity_dbapi.lakehouse.table_formats import located
from trinity_dbapi.storage import open_storage
from trinity_dbapi.tables import layout, managed

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse, Snapshot
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tree.node import Node


@dataclass(frozen=True)
class Problem:
    """One damaged or missing file.

    Attributes:
        file: the file's location (a path under the lakehouse root, or a URI).
        object: the namespace or table it belongs to (``ns.table``), or None
            for the tree itself (roots, nodes, the lakehouse definition).
        problem: what is wrong with it.
    """

    file: str
    object: str | None
    problem: str


def describe(exc: BaseException) -> str:
    """A problem's text from the reader's exception (whatever its class)."""
    if isinstance(exc, CorruptFileError):
        # A reader's missing file also says what points at it; here the row's
        # file is the missing one, and that it is missing is the problem.
        return (
            "the file is missing" if exc.problem.startswith("the file is missing") else exc.problem
        )
    if isinstance(exc, StorageFileNotFoundError):
        return "the file is missing"
    return f"{type(exc).__name__}: {exc}"


#: The check's own cache (a file two objects share is read once).
_OWN_CACHE_BYTES = 64 * 1024 * 1024
#: Files read ahead in one round.
AHEAD_FILES = 64


class _Checker:
    def __init__(self, lakehouse: Lakehouse, each_file: Callable[[int], None] | None) -> None:
        from trinity_dbapi.lakehouse.lakehouse import Lakehouse

        # A fresh storage with a cache of its own, and a fresh node store:
        # the process's caches would hide a file changed or deleted after it
        # was first read.
        storage = open_storage(
            lakehouse.storage.root_uri,
            storage_options=dict(lakehouse.storage_options),
            cache_bytes=_OWN_CACHE_BYTES,
        )
        self.lake = Lakehouse(
            storage, lakehouse.definition, storage_options=lakehouse.storage_options
        )
        self.storage = storage
        self.problems: list[Problem] = []
        self.checked = 0
        self.each_file = each_file
        self.seen: set[str] = set()
        self.seen_ahead: set[str] = set()

    def read(
        self,
        location: str,
        obj: str | None,
        parse: Callable[[bytes], Any],
        store: Storage | None = None,
    ) -> Any:
        """Read and parse one file; None (and a problem row) when that fails.

        ``store``: the other store the file is in (a referenced dataset's);
        its problem rows then name the file by its full URI.
        """
        self.checked += 1
        if self.each_file is not None:
            self.each_file(self.checked)
        try:
            data = self.lake.read_location(location) if store is None else store.read(location)
            return parse(data)
        except Exception as exc:  # noqa: BLE001 - whatever a reader raises, the file is at fault
            shown = location if store is None else store.root_uri.rstrip("/") + "/" + location
            self.problems.append(Problem(shown, obj, describe(exc)))
        return None

    def ahead(
        self,
        locations: Iterable[str],
        store: Storage | None = None,
        sizes: Mapping[str, int] | None = None,
    ) -> None:
        """Read ``locations`` into the checker's cache side by side, before one by one.

        On a store with round trips a lakehouse of N files then costs about
        N / :data:`AHEAD_FILES` rounds, not N. Only what the cache keeps is
        read ahead (a file the facts say is big is read once, when checked);
        a batch that fails is left to the reads one by one, which name the
        file at fault.
        """
        target = self.storage if store is None else store
        if not target.caches_reads:
            return  # the local disk: nothing to overlap, and nothing kept
        known = sizes or {}
        batch: list[str] = []
        held = 0
        for location in dict.fromkeys(locations):
            size = known.get(location, 0)
            if "://" in location or size > _OWN_CACHE_BYTES // 4 or location in self.seen_ahead:
                continue
            self.seen_ahead.add(location)
            if batch and (len(batch) == AHEAD_FILES or held + size > _OWN_CACHE_BYTES // 2):
                self._read_ahead(target, batch)
                batch, held = [], 0
            batch.append(location)
            held += size
        self._read_ahead(target, batch)

    @staticmethod
    def _read_ahead(store: Storage, batch: list[str]) -> None:
        if batch:
            with contextlib.suppress(Error):
                store.read_many(batch)

    def node(self, location: str) -> Node | None:
        # The bytes are read (and cached) first, so a missing file is told apart.
        return self.read(location, None, lambda _data: self.lake.nodes.load(location))

    def tree(self, root_location: str) -> None:
        root = self.node(root_location)
        if root is None:
            return
        definition = root.system.get(system_keys.LAKEHOUSE_DEF)
        if definition is not None:
            from trinity_dbapi.format.definitions import LakehouseDefinition

            self.read(definition, None, lambda b: LakehouseDefinition.from_bytes(b, definition))
        self.entries(root)

    def entries(self, node: Node) -> None:
        effective: dict[str, str | None] = dict(zip(node.keys, node.values, strict=True))
        effective.update((m.key, m.value) for m in node.buffer)
        children = [c for c in node.children or () if isinstance(c, str)]
        self.ahead([*(v for v in effective.values() if v is not None), *children])
        for key, value in effective.items():
            if value is not None and value not in self.seen:
                self.seen.add(value)
                self.object(key, value)
        for child in node.children or ():
            if isinstance(child, str) and child not in self.seen:
                self.seen.add(child)
                sub = self.node(child)
                if sub is not None:
                    self.entries(sub)

    def object(self, key: str, location: str) -> None:
        limits = self.lake.definition.key_limits
        try:
            obj_id = system_keys.decode_key(key, limits)
            name = (
                obj_id.namespace if obj_id.table is None else f"{obj_id.namespace}.{obj_id.table}"
            )
        except Error:
            name = key
        if is_view_key(key):
            self.read(location, name, lambda b: ViewDefinition.from_bytes(b, location))
            return
        if not is_table_key(key):
            self.read(location, name, lambda b: NamespaceDefinition.from_bytes(b, location))
            return
        table = self.read(location, name, lambda b: TableDefinition.from_bytes(b, location))
        if table is not None and managed.has_dataset(table):
            # A table another lakehouse holds (through an export) has its files there.
            self.dataset(name, located(table, location, self.storage.root_uri))

    def dataset(self, name: str, table: TableDefinition) -> None:
        from trinity_dbapi.tables import file_facts
        from trinity_dbapi.tables.metadata_io import decode_metadata

        path = table.format_properties[managed.METADATA_LOCATION]
        home = managed.metadata_storage(self.storage, table, cached=False)
        meta = self.read(
            path, name, lambda b: decode_metadata(path, b), None if home is self.storage else home
        )
        if meta is None:
            return
        # A referenced dataset's files are in its own store, read afresh too.
        store = managed.data_storage(self.storage, table, cached=False)
        other = None if store is self.storage else store
        common = layout.common_metadata_path(meta.dataset_uuid)
        sizes = file_facts.recorded_sizes(meta)
        self.ahead([common, *meta.files().values(), *meta.indices.values()], other, sizes)
        self.read(common, name, lambda b: _parquet_footer(common, b), other)
        for data_file in meta.files().values():
            self.read(data_file, name, partial(_parquet_footer, data_file), other)
        for index_file in meta.indices.values():
            self.read(index_file, name, partial(_index, store, index_file), other)


def _index(storage: Storage, path: str, _data: bytes) -> Any:
    from trinity_dbapi.tables.indices import read_index

    return read_index(storage, path)  # reads the file again (cached): full validation


def _parquet_footer(path: str, data: bytes) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(pa.BufferReader(data)).metadata
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise CorruptFileError(path, f"not a readable Parquet file ({exc})") from exc


def check_integrity(
    lakehouse: Lakehouse,
    snapshot: Snapshot | None = None,
    *,
    each_file: Callable[[int], None] | None = None,
) -> tuple[list[Problem], int]:
    """Read every file ``snapshot`` (the latest by default) reaches; return the problems.

    Args:
        lakehouse: the lakehouse.
        snapshot: the version to check.
        each_file: called with the number of files checked so far, after each.

    Returns:
        The problems (empty when every file reads) and the number of files checked.
    """
    from trinity_dbapi.lakehouse.roots import listed_versions

    snap = snapshot if snapshot is not None else lakehouse.snapshot()
    checker = _Checker(lakehouse, each_file)
    root = snap.root.path
    if root is None:  # a root just written by this process: check what it points at
        checker.entries(snap.root)
    else:
        checker.tree(root)
    chain = snap.lakehouse
    base = chain.base_version  # a branch's own roots follow it; -1 on main
    versions = {v for v in listed_versions(checker.storage) if v < snap.version}
    if base >= 0:  # a branch: main's roots up to its base, then its own
        versions = {v for v in versions if v <= base} | set(range(base + 1, snap.version))
    older = [chain.root_name(v) for v in sorted(versions)]
    checker.ahead(older)  # every older root, AHEAD_FILES to a round
    for location in older:
        checker.node(location)
    return checker.problems, checker.checked
