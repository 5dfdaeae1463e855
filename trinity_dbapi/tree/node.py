"""Tree nodes in memory, and the store that loads and writes them.

A node loaded from storage is *clean*: it has a ``path`` and is shared by every
version that reaches it, so it is never modified. Changing a node means taking
a *dirty* copy (``path is None``) first; children are referenced either by the
path of a clean node on storage or by a dirty :class:`Node` object. Writing a
tree writes exactly its dirty nodes, bottom up, each to a new file: that is the
copy-on-write rule of FORMAT-NOTES section 2.

Imports from tree/: nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Union

from trinity_dbapi.errors import CorruptFileError, InvalidURIError, StorageFileNotFoundError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.locations import is_uri, qualify, split_uri
from trinity_dbapi.format.node_file import (
    DEFAULT_COMPRESSION,
    Message,
    NodeData,
    decode_node,
    encode_node_and_buffer,
)
from trinity_dbapi.format.paths import new_node_file_path, root_node_version

if TYPE_CHECKING:
    from trinity_dbapi.storage.base import Storage

ChildRef = Union["Node", str]

#: Pointers whose node file :class:`NodeStore` remembers, for error messages.
_MAX_REFERRERS = 65536


class Node:
    """One node of the TrinityLake tree."""

    __slots__ = (
        "_buffer_index",
        "buffer",
        "buffer_arrow",
        "children",
        "keys",
        "path",
        "system",
        "values",
    )

    def __init__(
        self,
        keys: list[str] | None = None,
        values: list[str] | None = None,
        children: list[ChildRef] | None = None,
        buffer: list[Message] | None = None,
        *,
        path: str | None = None,
        system: dict[str, str] | None = None,
    ) -> None:
        self.keys: list[str] = keys if keys is not None else []
        self.values: list[str] = values if values is not None else []
        self.children: list[ChildRef] | None = children
        self.buffer: list[Message] = buffer if buffer is not None else []
        self.path = path
        self.system: dict[str, str] = system if system is not None else {}
        self._buffer_index: dict[str, Message] | None = None
        #: Messages and their Arrow table, as read or last written (see NodeData).
        self.buffer_arrow: tuple[list[Message], Any] | None = None

    @property
    def is_leaf(self) -> bool:
        return self.children is None

    def copy(self) -> Node:
        """A dirty copy that can be changed without touching this node."""
        node = Node(
            list(self.keys),
            list(self.values),
            list(self.children) if self.children is not None else None,
            list(self.buffer),
        )
        node.buffer_arrow = self.buffer_arrow  # immutable: shared until the buffer changes
        return node

    def buffered(self, key: str) -> Message | None:
        """The newest buffered message for ``key``, if any."""
        if self.path is None:  # dirty nodes change; do not index them
            for m in reversed(self.buffer):
                if m.key == key:
                    return m
            return None
        if self._buffer_index is None:
            self._buffer_index = {m.key: m for m in self.buffer}
        return self._buffer_index.get(key)

    def __repr__(self) -> str:
        kind = "leaf" if self.is_leaf else "internal"
        return f"Node({kind}, keys={self.keys!r}, buffer={len(self.buffer)}, path={self.path!r})"


class NodeStore:
    """Loads clean nodes (with a bounded cache of parsed nodes) and writes dirty ones.

    Args:
        storage: where node files live.
        order: the lakehouse order N (node key tables have N rows).
        compression: Arrow IPC body compression for written node files.
        cache_nodes: how many parsed nodes to keep in memory.
    """

    def __init__(
        self,
        storage: Storage,
        order: int,
        *,
        compression: str = DEFAULT_COMPRESSION,
        cache_nodes: int = 4096,
    ) -> None:
        self.storage = storage
        self.order = order
        self.compression = compression
        self._cache: OrderedDict[str, Node] = OrderedDict()
        self._cache_nodes = cache_nodes
        self._lock = threading.Lock()
        #: Options for the storages of other lakehouses that locations name.
        self.storage_options: Mapping[str, Any] = {}
        self._foreign: dict[str, Storage] = {}
        self._referrers: dict[str, str] = {}

    def load(self, path: str) -> Node:
        """The clean node stored at ``path`` (shared: never modify it).

        ``path`` may also be a fully qualified URI (a node left in the source
        lakehouse of a partial export); such a node's relative pointers are
        made absolute against its own lakehouse root.
        """
        with self._lock:
            node = self._cache.get(path)
            if node is not None:
                self._cache.move_to_end(path)
                return node
        data = decode_node(self.read_location(path), path, self.order)
        self._note_referrers(path, data)
        if is_uri(path):
            data = _qualified(data, split_uri(path)[0])
        node = node_from_data(data, path)
        with self._lock:
            self._cache[path] = node
            while len(self._cache) > self._cache_nodes:
                self._cache.popitem(last=False)
        return node

    def holds(self, path: str) -> bool:
        """Whether the node at ``path`` is parsed and kept here (loading it reads nothing)."""
        with self._lock:
            return path in self._cache

    def read_location(self, location: str) -> bytes:
        """Read a file by location: a path in this storage, or a URI in another.

        Locations are pointers read from lakehouse files (child nodes, object
        and lakehouse definitions), so a missing file or a location that cannot
        be followed means a damaged lakehouse. Root node files are the exception:
        they are found by version number, and a missing one is a version that
        does not exist (or was expired), which callers handle.

        Raises:
            CorruptFileError: the file is missing, or the location is invalid.
            StorageFileNotFoundError: a root node file is missing.
        """
        try:
            return self._read_location(location)
        except StorageFileNotFoundError:
            if root_node_version(location.rpartition("/")[2]) is not None:
                raise
            raise CorruptFileError(
                location,
                f"the file is missing, yet {self._referrer(location)} points at it (a lost or "
                "deleted file, or a damaged pointer in the file that names it)",
            ) from None
        except InvalidURIError as exc:
            raise CorruptFileError(
                location,
                f"{self._referrer(location)} points at it, but it is not a valid location ({exc})",
            ) from None

    def _referrer(self, location: str) -> str:
        with self._lock:
            referrer = self._referrers.get(location)
        return "the lakehouse" if referrer is None else f"node file {referrer!r}"

    def _note_referrers(self, path: str, data: NodeData) -> None:
        """Remember which node file holds each pointer, to name it if the pointer is broken.

        Only for messages: a damaged pointer is found when it is followed, and
        the file to blame is the one that held it. Bounded: cleared when full.
        """
        pointers = [*(data.children or ()), *data.values]
        pointers += [m.value for m in data.buffer if m.value is not None]
        with self._lock:
            if len(self._referrers) + len(pointers) > _MAX_REFERRERS:
                self._referrers.clear()
            self._referrers.update(dict.fromkeys(pointers, path))

    def _read_location(self, location: str) -> bytes:
        if not is_uri(location):
            return self.storage.read(location)
        if location.startswith(self.storage.root_uri):
            return self.storage.read(location[len(self.storage.root_uri) :])
        root, path = split_uri(location)
        with self._lock:
            foreign = self._foreign.get(root)
            if foreign is None:
                from trinity_dbapi.storage import open_storage

                foreign = self._foreign[root] = open_storage(
                    root, storage_options=dict(self.storage_options)
                )
        return foreign.read(path)

    def remember(self, node: Node) -> None:
        """Cache a node just written (it is clean now: ``node.path`` is set)."""
        assert node.path is not None
        with self._lock:
            self._cache[node.path] = node
            while len(self._cache) > self._cache_nodes:
                self._cache.popitem(last=False)

    def forget(self, path: str) -> None:
        """Drop one parsed node, after its file was deleted (expiration, GC)."""
        with self._lock:
            self._cache.pop(path, None)

    def clear_cache(self) -> None:
        """Forget parsed nodes (benchmarks measure cold reads with it)."""
        with self._lock:
            self._cache.clear()

    def resolve(self, ref: ChildRef) -> Node:
        """The node a child reference points at (clean or dirty)."""
        return self.load(ref) if isinstance(ref, str) else ref

    def mutable(self, ref: ChildRef) -> Node:
        """A node that may be changed: dirty nodes as they are, clean ones copied."""
        node = self.resolve(ref)
        return node if node.path is None else node.copy()

    def encode(self, node: Node, system: dict[str, str]) -> bytes:
        """Node file bytes for a node whose children are all written already.

        Written children are replaced by their paths in ``node`` itself, so a
        node that becomes clean looks exactly like one loaded from storage.
        """
        children = None
        if node.children is not None:
            children = [c if isinstance(c, str) else _written_path(c) for c in node.children]
            node.children = list(children)
        data = NodeData(system, node.keys, node.values, children, node.buffer, node.buffer_arrow)
        encoded, buffer_table = encode_node_and_buffer(
            data, self.order, compression=self.compression
        )
        node.buffer_arrow = (list(node.buffer), buffer_table)
        return encoded

    def write_dirty_children(
        self, root: Node, now_millis: int, progress: Callable[[int], None] | None = None
    ) -> int:
        """Write every dirty node below ``root`` to a new node file.

        Nodes of one level are independent, so they are encoded and created in
        parallel (object stores are latency bound); levels go bottom up because
        a parent names its children's paths. Returns the number of files written.
        """
        levels: list[list[Node]] = []
        frontier = [root]
        while frontier:
            nxt = [
                c
                for n in frontier
                for c in (n.children or ())
                if isinstance(c, Node) and c.path is None
            ]
            if nxt:
                levels.append(nxt)
            frontier = nxt
        if not levels:
            return 0
        system = {system_keys.CREATED_AT_MILLIS: str(now_millis)}
        written = 0
        with ThreadPoolExecutor(max_workers=8) as pool:
            for level in reversed(levels):
                for _ in pool.map(lambda n: self._write_one(n, system), level):
                    written += 1
                    if progress is not None:
                        progress(written)
        return written

    def _write_one(self, node: Node, system: dict[str, str]) -> None:
        data = self.encode(node, system)
        path = new_node_file_path()
        # A fresh UUID name: nobody else creates it, and no reader looks at it
        # before the root that points at it exists.
        self.storage.create_unique(path, data)
        node.path = path
        node.system = dict(system)
        self.remember(node)


def _written_path(node: Node) -> str:
    if node.path is None:
        raise AssertionError("a child must be written before its parent")
    return node.path


def _qualified(data: NodeData, root_uri: str) -> NodeData:
    """``data`` with every relative pointer (children, values) made absolute."""
    children = None if data.children is None else [qualify(root_uri, c) for c in data.children]
    return NodeData(
        data.system,
        data.keys,
        [qualify(root_uri, v) for v in data.values],
        children,
        [
            m._replace(value=None if m.value is None else qualify(root_uri, m.value))
            for m in data.buffer
        ],
    )


def node_from_data(data: NodeData, path: str | None) -> Node:
    """A clean :class:`Node` from decoded node-file content."""
    children: list[ChildRef] | None = list(data.children) if data.children is not None else None
    node = Node(data.keys, data.values, children, data.buffer, path=path, system=data.system)
    node.buffer_arrow = data.buffer_arrow
    return node
