"""The statement cache: parsed SQL texts kept by an LRU bounded in bytes.

Applications run the same texts again and again (sqlite3 keeps such a cache
too), so :func:`trinity_dbapi.sql.statements.parse` remembers what it parsed.
The cache is process-wide and outlives connections, so it must be bounded by
what it holds, not by how many entries: a parsed tree costs about 340 to 560
bytes per sqlglot node (measured with ``tracemalloc`` on dense select lists,
long ``CASE`` chains and multi-row ``VALUES``), which is 60 to 270 bytes per
character of token-dense SQL. An entry's cost is therefore estimated as the
size of its text plus :data:`NODE_BYTES` per node of its trees, and the total
is kept under :data:`DEFAULT_MAX_BYTES`. A text whose own size is over
:data:`MAX_ENTRY_BYTES` is not cached at all (nor walked to be measured):
parsing dominates for such texts anyway, and one of them would push out
hundreds of the small texts the cache is for.

Imports from sql/: nothing.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

#: Estimated bytes one parsed node keeps alive (its object, its args dict, meta).
NODE_BYTES = 600
#: The default bound of the whole cache, in estimated bytes.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: Entries estimated above this are not cached.
MAX_ENTRY_BYTES = DEFAULT_MAX_BYTES // 16

V = TypeVar("V")


class StatementCache(Generic[V]):
    """A thread-safe LRU map from SQL text to its parsed statements, bounded in bytes.

    Args:
        parse: computes the value of a text not in the cache.
        cost: the estimated bytes a parsed value keeps alive besides its text.
        max_bytes: the bound of the estimated bytes of all entries.
        max_entry_bytes: entries estimated above this are computed, not kept.
    """

    def __init__(
        self,
        parse: Callable[[str], V],
        cost: Callable[[V], int],
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_entry_bytes: int = MAX_ENTRY_BYTES,
    ) -> None:
        self._parse = parse
        self._cost = cost
        self.max_bytes = max_bytes
        self.max_entry_bytes = min(max_entry_bytes, max_bytes)
        self._entries: OrderedDict[str, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def size_bytes(self) -> int:
        """The estimated bytes the entries keep alive."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, sql: str) -> V:
        """The parsed value of ``sql``, from the cache or parsed now (and kept if it fits).

        Errors of ``parse`` propagate and nothing is kept.
        """
        with self._lock:
            found = self._entries.get(sql)
            if found is not None:
                self._entries.move_to_end(sql)
                self.hits += 1
                return found[0]
            self.misses += 1
        text_bytes = sys.getsizeof(sql)
        # Parse outside the lock: a long parse must not stall other threads'
        # hits; two threads parsing the same new text both keep a result, the
        # second replacing the first.
        value = self._parse(sql)
        if text_bytes > self.max_entry_bytes:
            return value
        size = text_bytes + self._cost(value)
        if size > self.max_entry_bytes:
            return value
        with self._lock:
            old = self._entries.pop(sql, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[sql] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted
        return value

    def clear(self) -> None:
        """Drop every entry (the counters stay)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def resize(self, max_bytes: int, max_entry_bytes: int | None = None) -> None:
        """Change the bounds, evicting the least recently used entries over the new one."""
        with self._lock:
            self.max_bytes = max_bytes
            self.max_entry_bytes = min(
                max_bytes if max_entry_bytes is None else max_entry_bytes, max_bytes
            )
            for sql, (_, size) in list(self._entries.items()):
                if size > self.max_entry_bytes:
                    del self._entries[sql]
                    self._bytes -= size
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted


def node_cost(trees: Sequence[object]) -> int:
    """:data:`NODE_BYTES` per node of sqlglot trees (anything with ``walk()``)."""
    total = 0
    for tree in trees:
        walk = getattr(tree, "walk", None)
        if walk is not None:
            total += sum(1 for _ in walk())
    return total * NODE_BYTES
