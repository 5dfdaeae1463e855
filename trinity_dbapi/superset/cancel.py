"""Stopping a running query from another thread: the cancel registry.

Superset stops a SQL Lab query in two steps. Before it runs the query it asks
the spec for an identifier of it (``get_cancel_query_id(cursor, query)``) and
stores that with the query; when the user presses *Stop*, another request
opens a new connection and hands the identifier to ``cancel_query``. A
lakehouse has no server to send "kill query 42" to: the statement runs in the
process that executes it. So the identifier names the DB-API connection in a
process-wide registry, and cancelling calls that connection's
``interrupt()``, which is safe from any thread (docs/dbapi.md).

The registry holds weak references: a connection that is closed and dropped
leaves it by itself, and an identifier outliving its connection cancels
nothing. Identifiers start with the process ID: a *Stop* request served by a
different process (several gunicorn workers, or a Celery worker running the
query) cannot reach the connection, and says so by returning False.

Imports from superset/: nothing.
"""

from __future__ import annotations

import os
import threading
import uuid
import weakref
from typing import Any

__all__ = ["cancel", "register"]

_LOCK = threading.Lock()
_CONNECTIONS: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def _dbapi_connection(cursor: Any) -> Any | None:
    """The trinity_dbapi connection behind a cursor, or None for any other cursor."""
    connection = getattr(cursor, "connection", None)
    # A pooled SQLAlchemy connection wraps the DB-API one.
    for attribute in ("driver_connection", "dbapi_connection"):
        connection = getattr(connection, attribute, connection)
    return connection if callable(getattr(connection, "interrupt", None)) else None


def register(cursor: Any) -> str | None:
    """An identifier of the connection ``cursor`` runs on, for :func:`cancel`.

    Args:
        cursor: a trinity_dbapi cursor (or a pooled wrapper of one).

    Returns:
        ``"<pid>:<uuid>"``; None when the cursor has no interruptible connection.
    """
    connection = _dbapi_connection(cursor)
    if connection is None:
        return None
    key = f"{os.getpid()}:{uuid.uuid4().hex}"
    with _LOCK:
        _CONNECTIONS[key] = connection
    return key


def cancel(cancel_query_id: str) -> bool:
    """Interrupt the statement running on the connection ``cancel_query_id`` names.

    The interrupted statement raises ``QueryInterruptedError`` in the thread
    running it; the connection stays usable.

    Args:
        cancel_query_id: what :func:`register` returned.

    Returns:
        True if the connection is in this process and still open (it is
        interrupted even when its statement has just ended: then nothing
        happens); False otherwise.
    """
    pid, _, _ = str(cancel_query_id).partition(":")
    if pid != str(os.getpid()):
        return False
    with _LOCK:
        connection = _CONNECTIONS.get(cancel_query_id)
    if connection is None or getattr(connection, "closed", False):
        return False
    connection.interrupt()
    return True
