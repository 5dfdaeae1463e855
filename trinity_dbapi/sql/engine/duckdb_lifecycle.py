"""DuckDB across a process's sessions: closed at interpreter exit, forgotten in a forked child.

Each session with its private DuckDB open registers here (:func:`opened`,
:func:`released`); what happens to those connections when the interpreter
exits or the process forks is this module's, so the session keeps only its
own state.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

import atexit
import os
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "EXIT_WAIT_SECONDS",
    "Holder",
    "close_handle",
    "opened",
    "release_at_exit",
    "released",
    "then",
]


class Holder(Protocol):
    """A session holding a private DuckDB connection, as this module sees it."""

    def abandon(self, wait: float = 0.0) -> None:
        """Close without touching storage, interrupting running statements."""

    def inherited(self) -> list[Any]:
        """Forget the DuckDB objects a forked child inherited; return them."""


def opened(session: Holder) -> None:
    """``session`` opened its private DuckDB: close it at exit, forget it in a child."""
    _WITH_DUCKDB.add(session)


def released(session: Holder) -> None:
    """``session`` released its private DuckDB."""
    _WITH_DUCKDB.discard(session)


def then(at_exit: Callable[[], None], in_child: Callable[[], None]) -> None:
    """Run ``at_exit`` at interpreter exit and ``in_child`` in a forked child, after the sessions.

    The pool of DuckDB databases (:mod:`.duckdb_pool`, a floor above)
    registers its own teardown here, so it runs once every session let go.
    """
    _AFTER_SESSIONS.append((at_exit, in_child))


#: What runs after the sessions are let go, in order (:func:`then`).
_AFTER_SESSIONS: list[tuple[Callable[[], None], Callable[[], None]]] = []


#: Sessions whose private DuckDB is open.
_WITH_DUCKDB: weakref.WeakSet[Holder] = weakref.WeakSet()

#: How long interpreter exit waits for a statement another thread is running
#: in a session's DuckDB to stop once interrupted.
EXIT_WAIT_SECONDS = 5.0


@atexit.register
def release_at_exit() -> None:
    """Close every session still open when the interpreter exits.

    DuckDB (2.x, built with nanobind) prints a screen of "leaked instances"
    reports if any of its objects outlives the teardown of its module, and
    a session kept alive by an exception's traceback or a reference cycle
    does. atexit handlers run before that teardown. No storage is touched:
    an open transaction is dropped unfinished, as a crash would leave it.
    """
    for session in list(_WITH_DUCKDB):
        session.abandon(wait=EXIT_WAIT_SECONDS)
    for at_exit, _ in _AFTER_SESSIONS:
        at_exit()


#: DuckDB objects a forked child inherited: kept, never closed (see below).
_INHERITED: list[Any] = []


def _forget_in_child() -> None:
    """In a forked child, let go of the parent's DuckDB without closing it.

    The child inherits the parent's DuckDB objects but not DuckDB's threads,
    so closing them there (as the exit release would) crashes the child with
    a segmentation fault. They are kept unclosed instead; a session used in
    the child opens a DuckDB of its own.
    """
    for session in list(_WITH_DUCKDB):
        _INHERITED.extend(session.inherited())
    _WITH_DUCKDB.clear()
    for _, in_child in _AFTER_SESSIONS:
        in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def close_handle(handle: duckdb.DuckDBPyConnection, deadline: float) -> bool:
    """Close a DuckDB connection or cursor, retrying while another thread uses it.

    Returns:
        Whether it closed (False: still busy at the deadline, left to its thread).
    """
    import duckdb

    while True:
        try:
            handle.close()
            return True
        except duckdb.Error:
            # "connection is busy with another call": its interrupted statement
            # has not returned yet. Past the deadline, leave it to the thread.
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
