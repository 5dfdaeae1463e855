"""The storage seam: one small interface every backend implements.

TrinityLake needs six operations from a storage (FORMAT-NOTES section 1): read,
write (overwrite; used only for the latest-version hint), create-exclusive
(exactly one of several concurrent creators of a path wins and the winner's
file is never seen half-written), delete, exists and list by prefix.

Backends implement the ``_``-prefixed primitives; this base class adds what all
of them share: operation counters (so tests and benchmarks can assert request
counts) and a bounded LRU cache of immutable files. Every TrinityLake file
except ``_latest_hint.txt`` is immutable once created, so only the hint is
never cached.
"""

from __future__ import annotations

import builtins
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from trinity_dbapi.errors import FileAlreadyExistsError, StorageFileNotFoundError

#: Files that may be overwritten and therefore must never be served from cache.
MUTABLE_FILES = frozenset({"_latest_hint.txt"})

DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


@dataclass
class StorageStats:
    """Counts of the operations a backend really performed (cache hits excluded)."""

    reads: int = 0
    writes: int = 0
    creates: int = 0
    deletes: int = 0
    exists: int = 0
    lists: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    cache_hits: int = 0

    def snapshot(self) -> StorageStats:
        """A copy of the current counts."""
        return StorageStats(**{f.name: getattr(self, f.name) for f in fields(self)})

    def since(self, earlier: StorageStats) -> StorageStats:
        """The operations performed after ``earlier`` was taken."""
        return StorageStats(
            **{f.name: getattr(self, f.name) - getattr(earlier, f.name) for f in fields(self)}
        )

    def reset(self) -> None:
        """Set every counter back to zero."""
        for f in fields(self):
            setattr(self, f.name, 0)


class _LRUCache:
    """A byte-bounded LRU map from path to file content; thread-safe."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, path: str) -> bytes | None:
        with self._lock:
            data = self._items.get(path)
            if data is not None:
                self._items.move_to_end(path)
            return data

    def put(self, path: str, data: bytes) -> None:
        if len(data) > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(path, None)
            if old is not None:
                self._size -= len(old)
            self._items[path] = data
            self._size += len(data)
            while self._size > self.max_bytes:
                _, evicted = self._items.popitem(last=False)
                self._size -= len(evicted)

    def discard(self, path: str) -> None:
        with self._lock:
            old = self._items.pop(path, None)
            if old is not None:
                self._size -= len(old)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._size = 0


class Storage(ABC):
    """A Trinity Lakehouse storage: files addressed by paths under one root URI.

    Paths are relative to the root URI, use ``/`` as separator and never start
    with ``/`` (seed 000, "Path").

    Args:
        root_uri: the normalized root URI, always ending in ``/``.
        cache_bytes: capacity of the immutable-file cache; 0 disables it.
    """

    #: Whether ``create_exclusive`` really guarantees a single winner.
    supports_exclusive_create: bool = True

    def __init__(self, root_uri: str, *, cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.root_uri = root_uri
        self.stats = StorageStats()
        self._cache = _LRUCache(cache_bytes) if cache_bytes > 0 else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.root_uri!r})"

    # -- public operations ----------------------------------------------------

    def read(self, path: str) -> bytes:
        """Return the content of ``path``.

        Raises:
            StorageFileNotFoundError: there is no such file.
        """
        cacheable = self._cache is not None and _is_immutable(path)
        if cacheable:
            assert self._cache is not None
            data = self._cache.get(path)
            if data is not None:
                self.stats.cache_hits += 1
                return data
        self.stats.reads += 1
        data = self._read(path)
        self.stats.bytes_read += len(data)
        if cacheable:
            assert self._cache is not None
            self._cache.put(path, data)
        return data

    def write(self, path: str, data: bytes) -> None:
        """Create or overwrite ``path``; only for mutable files such as the hint."""
        self.stats.writes += 1
        self.stats.bytes_written += len(data)
        if self._cache is not None:
            self._cache.discard(path)
        self._write(path, data)

    def create_exclusive(
        self,
        path: str,
        data: bytes,
        *,
        before_publish: Callable[[], None] | None = None,
    ) -> None:
        """Atomically create ``path`` with ``data`` unless it already exists.

        Exactly one of several concurrent creators of the same path wins; the
        file is never visible with partial content.

        Args:
            path: the file to create.
            data: its whole content.
            before_publish: called after the backend has done every step it can
                do privately (a local backend writes and syncs a hidden temp
                file) and before the file becomes visible. A commit waits there
                for the files its root points at, so their I/O overlaps the
                root's own; if it raises, nothing is published.

        Raises:
            FileAlreadyExistsError: the file existed, or another creator won.
            ExclusiveCreateNotSupportedError: the backend cannot guarantee it.
        """
        self.stats.creates += 1
        self.stats.bytes_written += len(data)
        if before_publish is None:
            self._create_exclusive(path, data)
        else:
            self._create_exclusive_staged(path, data, before_publish)
        if self._cache is not None and _is_immutable(path):
            self._cache.put(path, data)

    def create_unique(self, path: str, data: bytes) -> None:
        """Create a file whose name nobody else will ever create (a fresh UUID name).

        Like :meth:`create_exclusive`, but it need not hide the file while it is
        being written: no reader looks at such a file before a root that
        points at it exists, and that root is created only after this call
        returned. Backends may use it to save work (no temporary file).

        Raises:
            FileAlreadyExistsError: the file exists with other content (a
                file with exactly ``data`` is taken as this call's own create
                whose reply was lost).
        """
        self.stats.creates += 1
        self.stats.bytes_written += len(data)
        try:
            self._create_unique(path, data)
        except FileAlreadyExistsError:
            # Nobody else creates this name: an object store lost the reply to
            # our own create and its retry failed the precondition.
            self.stats.reads += 1
            if self._read(path) != data:
                raise
        if self._cache is not None:
            self._cache.put(path, data)

    def delete(self, path: str) -> None:
        """Delete ``path``; deleting a missing file is not an error."""
        self.stats.deletes += 1
        if self._cache is not None:
            self._cache.discard(path)
        self._delete(path)

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists (always asks the backend)."""
        self.stats.exists += 1
        return self._exists(path)

    def list(self, prefix: str = "") -> builtins.list[str]:
        """Sorted paths of every file whose path starts with ``prefix``."""
        self.stats.lists += 1
        return sorted(self._list(prefix))

    def list_with_times(self, prefix: str = "") -> builtins.list[tuple[str, float | None]]:
        """Like :meth:`list`, with each file's modification time (epoch seconds).

        Garbage collection uses the times for its grace period. Backends also
        report their own leftovers here (such as the temporary files of a
        writer killed before it linked them into place); the time is None
        where the store does not say.
        """
        self.stats.lists += 1
        return sorted(self._list_with_times(prefix))

    # -- what readers that open files themselves need ---------------------------

    @property
    def local_root(self) -> str | None:
        """The root's folder on the local file system, or None for other stores.

        The path has no trailing ``/``, so ``local_root + "/" + path`` names a
        file. Readers that open files themselves (DuckDB's ``read_parquet``,
        Arrow's local file system) read a local root directly, which is their
        fastest path; every other store goes through :meth:`fsspec_filesystem`.
        """
        return None

    def fsspec_filesystem(self) -> tuple[Any, str] | None:
        """An fsspec file system reaching this storage's files, and the root's path on it.

        The path has no trailing ``/``. Readers that need a file system rather
        than bytes (an Arrow dataset, a DuckDB-registered file system) use it.

        Returns:
            ``(filesystem, root_path)``, or None for a backend without one.
        """
        return None

    def clear_cache(self) -> None:
        """Forget every cached file (benchmarks use it to measure cold reads)."""
        if self._cache is not None:
            self._cache.clear()

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release backend resources."""

    # -- backend primitives ---------------------------------------------------

    @abstractmethod
    def _read(self, path: str) -> bytes:
        """Read a whole file; raise StorageFileNotFoundError when missing."""

    @abstractmethod
    def _write(self, path: str, data: bytes) -> None:
        """Create or overwrite a file."""

    @abstractmethod
    def _create_exclusive(self, path: str, data: bytes) -> None:
        """Create a file atomically; raise FileAlreadyExistsError if it exists."""

    @abstractmethod
    def _delete(self, path: str) -> None:
        """Delete a file; a missing file is not an error."""

    @abstractmethod
    def _exists(self, path: str) -> bool:
        """Whether a file exists."""

    @abstractmethod
    def _list(self, prefix: str) -> builtins.list[str]:
        """Paths (relative to the root) of all files starting with ``prefix``."""

    def _create_exclusive_staged(
        self, path: str, data: bytes, before_publish: Callable[[], None]
    ) -> None:
        """An exclusive create that calls ``before_publish`` before the file appears.

        By default the hook runs first; backends with a private staging step
        (a temp file) override this to run it in between.
        """
        before_publish()
        self._create_exclusive(path, data)

    def _create_unique(self, path: str, data: bytes) -> None:
        """Create a uniquely named file; by default an exclusive create."""
        self._create_exclusive(path, data)

    def _list_with_times(self, prefix: str) -> builtins.list[tuple[str, float | None]]:
        """Paths with modification times; backends that know them override this."""
        return [(path, None) for path in self._list(prefix)]


def _is_immutable(path: str) -> bool:
    return path.rsplit("/", 1)[-1] not in MUTABLE_FILES


__all__ = [
    "DEFAULT_CACHE_BYTES",
    "FileAlreadyExistsError",
    "Storage",
    "StorageFileNotFoundError",
    "StorageStats",
]
