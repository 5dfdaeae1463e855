"""File I/O beside a caller's own work: the shared pool, and when reading ahead pays.

A commit writes its staged files while it updates the tree, and creates its
root while the hint goes out; an open reads the lakehouse definition while
its caller goes on; a statement reads its tables' definitions in the round
of the check for a newer version. Each submits the requests to one small
pool shared by the process (:func:`io_pool`), which a forked child replaces
with its own: the parent's threads are not there.

Imports from lakehouse/: nothing.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from trinity_dbapi.storage.rounds import ForkSafePool

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage

__all__ = ["io_pool", "worth_reading_ahead"]

_IO_POOL = ForkSafePool(16, "trinity-io")


def io_pool() -> ThreadPoolExecutor:
    """A small shared pool for file I/O that overlaps a caller's work."""
    return _IO_POOL.get()


def worth_reading_ahead(storage: Storage) -> bool:
    """Whether reading ahead saves rounds: a store with round trips, and a cache to fill."""
    return storage.local_root is None and storage.caches_reads
