"""A storage's requests: counted by kind and in rounds, and sent side by side.

What a TrinityLake operation costs on object storage is its round trips, not
its bytes, so every storage counts what it really asks its store
(:class:`StorageStats`) and, above all, in how many rounds: the longest chain
of requests that waited on one another. :class:`Rounds` is the part of
:class:`~trinity_dbapi.storage.base.Storage` that keeps those counts and
sends many requests in one round (:meth:`Rounds.concurrently`) on the
process-wide pool of storage threads (:func:`batch_pool`), made again in a
forked child. Backends count their own requests with ``_request`` (or
``_next_round`` / ``_begin`` and ``_end`` around asynchronous I/O).

Imports from storage/: nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, fields
from typing import TypeVar

_T = TypeVar("_T")


@dataclass
class StorageStats:
    """Counts of the requests a backend really performed (cache hits excluded).

    ``exists`` counts every metadata request (an existence check or a size:
    one ``HEAD`` on object storage). ``rounds`` counts request rounds: the
    longest chain of requests that waited on one another, which is what a
    store's round trip multiplies. A request that starts while another is in
    flight is in that one's round; one that starts after a request ended is
    in the round after it. The requests a batch call sends together are in
    one round however late the thread carrying one of them starts
    (:meth:`Rounds.this_round`), so the count follows what waits on what,
    not how busy the machine is. ``requests`` is the sum of the six kinds.
    """

    reads: int = 0
    writes: int = 0
    creates: int = 0
    deletes: int = 0
    exists: int = 0
    lists: int = 0
    bytes_read: int = 0
    bytes_written: int = 0
    cache_hits: int = 0
    rounds: int = 0

    @property
    def requests(self) -> int:
        """Every request of the six kinds."""
        return self.reads + self.writes + self.creates + self.deletes + self.exists + self.lists

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


#: Requests one batch call (:meth:`Storage.read_many` and its kin) has in
#: flight at once on a backend without an asynchronous client.
BATCH_THREADS = 32

#: The name every storage pool thread starts with.
POOL_PREFIX = "trinity-storage"
#: Per thread, ``id(storage) -> round`` for the first request a call handed
#: to this thread makes (:meth:`Rounds.this_round`).
_pinned = threading.local()


class ForkSafePool:
    """A process-wide thread pool, made on first use and made again in a forked child.

    A forked child has none of its parent's threads, so it must not submit
    to the parent's pool: the fork hook forgets it, and the child's first
    use makes its own.
    """

    def __init__(self, max_workers: int, prefix: str) -> None:
        self._max_workers = max_workers
        self._prefix = prefix
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget)

    def get(self) -> ThreadPoolExecutor:
        """The pool, made now if this process has none yet."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._max_workers, thread_name_prefix=self._prefix)
            return self._pool

    def _forget(self) -> None:
        self._pool, self._lock = None, threading.Lock()  # the parent's threads are not ours


_BATCH_POOL = ForkSafePool(BATCH_THREADS, POOL_PREFIX)


def batch_pool() -> ThreadPoolExecutor:
    """The process-wide pool of storage threads, made on first use (again in a forked child)."""
    return _BATCH_POOL.get()


class Rounds:
    """Request counters and rounds of one storage, and batches sent in one round.

    A request starts with :meth:`_begin` (its round is one past the last
    round that has ended) and ends with :meth:`_end`; :meth:`_request` does
    both around a block. :meth:`this_round` carries the current round to a
    call another thread makes, so a batch's requests share one round however
    late their threads start.
    """

    #: Seconds every request waits before it reaches the store. Tests and
    #: benchmarks set it to model a store's round trip on a fast one;
    #: concurrent requests wait side by side, as on a network.
    latency: float = 0.0

    def __init__(self) -> None:
        self.stats = StorageStats()
        self._stats_lock = threading.Lock()
        self._frontier = 0

    def _begin(self) -> int:
        """Start a request; its round is one past the last round that has ended."""
        depth = self._next_round()
        if self.latency:
            time.sleep(self.latency)
        return depth

    def _next_round(self, *, keep: bool = False) -> int:
        """The round of a request starting now in this thread (``keep``: only look)."""
        pins: dict[int, int] | None = getattr(_pinned, "rounds", None)
        if pins and id(self) in pins:
            return pins[id(self)] if keep else pins.pop(id(self))
        with self._stats_lock:
            return self._frontier + 1

    def this_round(self, call: Callable[[], _T]) -> Callable[[], _T]:
        """``call``, for another thread, its first request counted in the current round.

        A thread may start after the other requests of its round have ended
        (on a busy machine); nothing waited for its request all the same.
        """
        depth = self._next_round(keep=True)
        key = id(self)

        def pinned() -> _T:
            pins = getattr(_pinned, "rounds", None)
            if pins is None:
                pins = _pinned.rounds = {}
            pins[key] = depth
            try:
                return call()
            finally:
                pins.pop(key, None)

        return pinned

    def _end(self, depth: int, kind: str, read: int = 0, written: int = 0) -> None:
        with self._stats_lock:
            self._frontier = max(self._frontier, depth)
            stats = self.stats
            setattr(stats, kind, getattr(stats, kind) + 1)
            stats.bytes_read += read
            stats.bytes_written += written
            stats.rounds = self._frontier

    @contextlib.contextmanager
    def _request(self, kind: str, written: int = 0) -> Iterator[list[int]]:
        """Count one request of ``kind`` (a :class:`StorageStats` field) around its I/O.

        Yields a one-item list the caller sets to the bytes it read.
        """
        depth = self._begin()
        read = [0]
        try:
            yield read
        finally:
            self._end(depth, kind, read[0], written)

    def _hit(self) -> None:
        with self._stats_lock:
            self.stats.cache_hits += 1

    def concurrently(self, calls: Sequence[Callable[[], _T]]) -> list[_T]:
        """Run ``calls`` side by side on the storage pool, their results in order.

        Requests that different callers need at the same moment (a check for
        a newer version and the reads that assume there is none) then share
        one round. Every call settles before the first error is raised.
        """
        if len(calls) <= 1 or threading.current_thread().name.startswith(POOL_PREFIX):
            # One call, or a batch inside a pool thread: waiting there on the
            # same pool could leave no thread to run what it waits for.
            return [call() for call in calls]
        # Every call pinned before the first is submitted: starting threads
        # takes time, and the first request may be done before the last starts.
        pinned = [self.this_round(call) for call in calls]
        futures = [batch_pool().submit(call) for call in pinned]
        wait(futures)  # every request settled before the first error is raised
        return [future.result() for future in futures]


__all__ = ["BATCH_THREADS", "POOL_PREFIX", "ForkSafePool", "Rounds", "StorageStats", "batch_pool"]
