"""The cache of immutable files a process shares between its storages.

Every TrinityLake file except ``_latest_hint.txt`` is immutable once created
(node files, definitions, dataset metadata and data files all have names
nobody writes twice), so its bytes can be kept for the life of the process
and never go stale: a new version is always a new file name. The one
mutable file is never cached, and learning the latest version always asks
the store (:mod:`trinity_dbapi.lakehouse.roots`).

One cache serves every storage of the process, so the connections a BI server
opens for its tiles, and each new connection of a script, read a file once.
Entries are keyed by the storage's :attr:`~trinity_dbapi.storage.Storage.cache_identity`
and the file's path: the identity is the root URI plus a digest of every
option the storage was opened with (credentials, endpoint, profile), so two
connections with different credentials never share an entry, and one user's
bytes are never served to another. The cache is bounded by the bytes it
holds (:data:`SHARED_CACHE_BYTES`, least recently used first out); a file
larger than a quarter of the bound is never kept.

Imports from storage/: nothing.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict

__all__ = ["SHARED_CACHE_BYTES", "ImmutableCache", "shared_cache"]

#: Bytes the process-wide cache holds at most.
SHARED_CACHE_BYTES = 256 * 1024 * 1024


class ImmutableCache:
    """A byte-bounded LRU map from ``(identity, path)`` to a file's bytes; thread-safe.

    Args:
        max_bytes: the most bytes held; an entry over a quarter of it is not kept.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[str, str], bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        """The bytes held now."""
        return self._size

    def get(self, identity: str, path: str) -> bytes | None:
        key = (identity, path)
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def put(self, identity: str, path: str, data: bytes) -> None:
        if len(data) * 4 > self.max_bytes:
            return
        key = (identity, path)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._size -= len(old)
            self._items[key] = data
            self._size += len(data)
            while self._size > self.max_bytes:
                _, evicted = self._items.popitem(last=False)
                self._size -= len(evicted)

    def discard(self, identity: str, path: str) -> None:
        with self._lock:
            old = self._items.pop((identity, path), None)
            if old is not None:
                self._size -= len(old)

    def clear(self, identity: str | None = None) -> None:
        """Forget every entry (of one identity, or all)."""
        with self._lock:
            if identity is None:
                self._items.clear()
                self._size = 0
                return
            for key in [key for key in self._items if key[0] == identity]:
                self._size -= len(self._items.pop(key))


_shared = ImmutableCache(SHARED_CACHE_BYTES)


def shared_cache() -> ImmutableCache:
    """The process-wide cache."""
    return _shared


def _forget_in_child() -> None:
    # A forked child starts with its parent's bytes, which are still true
    # (immutable files), but a fresh lock: the parent's may have been held.
    _shared._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
