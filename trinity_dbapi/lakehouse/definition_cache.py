"""Parsed namespace and table definitions, kept by file path for one lakehouse handle.

A definition file is immutable: its name holds a fresh UUID and it is never
rewritten, so a path names the same bytes in every version that points at
it, and a parsed definition (a frozen dataclass) can be shared by every
statement, transaction and time-travel read of the handle. The storage's LRU
keeps the bytes; this cache keeps what parsing them costs too, so a repeated
``DESCRIBE`` or ``SELECT`` neither reads nor parses its table's definition.

A connection owns one :class:`Lakehouse`, and with it one cache, bounded by
the bytes of the files it holds (``connect(..., definition_cache_bytes=N)``).
Only committed files enter it: a transaction parses the files it staged
itself, which no other transaction can reach (see
:meth:`~trinity_dbapi.lakehouse.transaction.Transaction.read_object_definition`).

Imports from lakehouse/: nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.format.definitions import NamespaceDefinition, TableDefinition, ViewDefinition

#: The default bound of a connection's definition cache, in bytes of definition files.
DEFAULT_DEFINITION_CACHE_BYTES = 32 * 1024 * 1024

#: The ``connect()`` option that sets the bound.
OPTION = "definition_cache_bytes"

D = TypeVar("D", TableDefinition, NamespaceDefinition, ViewDefinition)


def check_cache_bytes(value: object) -> int:
    """A valid ``definition_cache_bytes``: a whole number of bytes, 0 or more.

    Raises:
        ProgrammingError: not an ``int`` of 0 or more, naming the option and the fix.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProgrammingError(
            f"{OPTION} must be a whole number of bytes (0 disables the definition cache), "
            f"not {type(value).__name__} {value!r}; pass an int such as "
            f"{DEFAULT_DEFINITION_CACHE_BYTES} (the default)"
        )
    if value < 0:
        raise ProgrammingError(
            f"{OPTION} must be 0 or more bytes (0 disables the definition cache), not "
            f"{value!r}; pass a non-negative int such as {DEFAULT_DEFINITION_CACHE_BYTES}"
        )
    return value


@dataclass
class DefinitionCacheStats:
    """What the cache did: lookups served, files read and parsed, entries evicted."""

    hits: int = 0
    misses: int = 0
    evictions: int = 0


class DefinitionCache:
    """A byte-bounded LRU map from definition file path to parsed definition; thread-safe.

    Args:
        max_bytes: the bound, in bytes of the cached files; 0 keeps nothing.
    """

    def __init__(self, max_bytes: int = DEFAULT_DEFINITION_CACHE_BYTES) -> None:
        self._max_bytes = check_cache_bytes(max_bytes)
        self._items: OrderedDict[
            str, tuple[TableDefinition | NamespaceDefinition | ViewDefinition, int]
        ] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.stats = DefinitionCacheStats()

    def __repr__(self) -> str:
        return f"DefinitionCache({len(self)} files, {self._size} of {self._max_bytes} bytes)"

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, path: object) -> bool:
        return path in self._items

    @property
    def max_bytes(self) -> int:
        """The bound in bytes; setting it evicts down to the new bound at once."""
        return self._max_bytes

    @max_bytes.setter
    def max_bytes(self, value: int) -> None:
        value = check_cache_bytes(value)
        with self._lock:
            self._max_bytes = value
            self._evict()

    @property
    def size_bytes(self) -> int:
        """Bytes of the definition files held now."""
        return self._size

    def load(self, path: str, kind: type[D], read: Callable[[str], bytes]) -> D:
        """The definition of kind ``kind`` at ``path``: cached, or read with ``read`` and parsed.

        Raises:
            CorruptFileError: the file is missing or does not parse (nothing is cached).
        """
        with self._lock:
            entry = self._items.get(path)
            if entry is not None and type(entry[0]) is kind:
                self._items.move_to_end(path)
                self.stats.hits += 1
                return entry[0]  # type: ignore[return-value]
            self.stats.misses += 1
        # Read and parse outside the lock: two threads may both parse one file,
        # which costs a parse but never serves a wrong definition (same bytes).
        data = read(path)
        definition = kind.from_bytes(data, path)
        self._put(path, definition, len(data))
        return definition

    def clear(self) -> None:
        """Forget every definition."""
        with self._lock:
            self._items.clear()
            self._size = 0

    def _put(
        self,
        path: str,
        definition: TableDefinition | NamespaceDefinition | ViewDefinition,
        size: int,
    ) -> None:
        with self._lock:
            if size > self._max_bytes:
                return
            old = self._items.pop(path, None)
            if old is not None:
                self._size -= old[1]
            self._items[path] = (definition, size)
            self._size += size
            self._evict()

    def _evict(self) -> None:
        # Called with the lock held.
        while self._size > self._max_bytes and self._items:
            _, (_, size) = self._items.popitem(last=False)
            self._size -= size
            self.stats.evictions += 1
