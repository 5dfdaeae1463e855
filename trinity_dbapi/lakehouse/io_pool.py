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

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage

__all__ = ["io_pool", "worth_reading_ahead"]

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def io_pool() -> ThreadPoolExecutor:
    """A small shared pool for file I/O that overlaps a caller's work."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="trinity-io")
        return _pool


def _forget_pool_in_child() -> None:
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()  # the parent's threads are not ours


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)


def worth_reading_ahead(storage: Storage) -> bool:
    """Whether reading ahead saves rounds: a store with round trips, and a cache to fill."""
    return storage.local_root is None and storage.caches_reads
