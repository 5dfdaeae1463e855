"""The DuckDB databases sessions run on: each session a connection of its own on a shared one.

Opening a DuckDB database costs tens of milliseconds (its catalog of
functions, the extensions linked into it, its thread pool), and closing one
several more: measured on two cores, 52 of the 96 ms a short session spends
(connect, create a table, insert a row, query it, close). A new connection on
an open database costs a third of a millisecond. So a session no longer opens
a database of its own: it opens a connection on the database that serves its
root, and closes that connection when it releases DuckDB. A dashboard whose
every tile opens a new connection pays the database once per process.

What one database serves, and why sharing it leaks nothing between sessions:

* **One sandbox.** Everything a database is configured with is the
  sandbox's (:mod:`.sandbox`) and set once, before the configuration is
  locked: the one allowed directory (the link to one local root's real
  path) or none for remote roots, external access off, no spilling, UTC,
  the Parquet caches. A database serves only sessions whose root has that
  real path; every remote root (``memory://``, ``s3://``, ...) shares one
  database that may read no local file at all, since those sessions hand
  DuckDB their rows as Arrow data.
* **Nothing a statement makes outlives its session.** What the engine puts
  into DuckDB (registered relations, MERGE's temporary tables, prepared
  statements, running queries) belongs to the connection that made it:
  DuckDB shows a connection neither another's registered relations nor its
  temporary tables, not even in ``duckdb_tables()``; an interrupt reaches
  one connection's query only; and closing the connection drops them. No
  statement creates anything in the database's own catalog
  (tests/sql/engine/test_duckdb_pool.py checks both after every kind of statement).
* **What is shared is the files' own content.** DuckDB's caches of Parquet
  footers and file blocks hold files of that one root, read through the
  same path by every session it serves, under the same operating-system
  user (one process). Those files are immutable once written (each has a
  fresh UUID name), which is why the caches never revalidate them.

An idle database (no session connected to it) is kept for the next session
on its root; at most :data:`MAX_IDLE` are, the least recently used closed
first, so a process that reads many roots holds a bounded number of them.
The databases are closed at interpreter exit after the sessions (the
session module's exit release), and a forked child forgets its parent's
without closing them, as it does the sessions' (the session module's fork
hook): :mod:`.session` calls :func:`close_all` and :func:`forget_in_child`.

Imports from sql/engine/: duckdb_lifecycle, sandbox.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinity_dbapi.sql.engine import duckdb_lifecycle
from trinity_dbapi.sql.engine.sandbox import SANDBOX_CONFIG, Sandbox

if TYPE_CHECKING:
    import duckdb

#: Connect settings of every database (before the sandbox's own).
DUCKDB_CONFIG: dict[str, str | bool | int | float | list[str]] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}

#: Settings applied to every database before its configuration is locked.
#: Every file of a lakehouse is immutable once written (its name is a fresh
#: UUID), so DuckDB may keep Parquet footers and file blocks without checking
#: them again: repeated scans skip re-reading metadata.
DUCKDB_SETTINGS: dict[str, str | bool] = {
    "parquet_metadata_cache": True,
    "validate_external_file_cache": "NO_VALIDATION",
    # Time zone rules (docs/sql.md) are UTC's whatever the host's TZ is.
    "TimeZone": "UTC",
}

#: How many databases no session is connected to are kept open per process.
MAX_IDLE = 4


@dataclass(eq=False)
class Database:
    """One sandboxed DuckDB database and the sessions connected to it."""

    key: str | None
    duck: duckdb.DuckDBPyConnection
    sandbox: Sandbox
    users: int = 0

    @property
    def visible_root(self) -> str | None:
        """The path this database reads its root's files through (None: remote)."""
        return self.sandbox.visible_root


@dataclass(eq=False)
class Lease:
    """A session's own connection on a shared :class:`Database`."""

    database: Database
    connection: duckdb.DuckDBPyConnection
    returned: bool = False


_lock = threading.Lock()
#: The open databases by key: a local root's real path, or None for remote roots;
#: in the order they last became idle (least recently used first).
_databases: dict[str | None, Database] = {}
#: Databases a forked child inherited: kept, never closed (see :func:`forget_in_child`).
_INHERITED: list[Any] = []


def lease(root: str | None) -> Lease:
    """A new connection on the database that serves ``root`` (opened if none does).

    Args:
        root: the local lakehouse root directory, or None for a remote root.

    Raises:
        OperationalError: the sandbox's private directory cannot be made.
    """
    key = None if root is None else os.path.realpath(root)
    with _lock:
        database = _databases.get(key)
        if database is None:
            # Under the lock: two sessions on a new root make one database.
            database = _databases[key] = _open(key, root)
        database.users += 1
    try:
        connection = database.duck.cursor()
    except BaseException:
        _let_go(database)
        raise
    return Lease(database, connection)


def open_ahead(root: str | None = None) -> None:
    """Open the database that serves ``root`` on a background thread, if none is open.

    A connection to a remote root calls this before its first requests: the
    database (about 12 ms of DuckDB's work) is then ready when the first
    statement leases it, instead of adding its time to that statement. An
    error is left to that statement's :func:`lease`, which opens it again.
    """
    key = None if root is None else os.path.realpath(root)
    if key in _databases:
        return

    def run() -> None:
        with contextlib.suppress(Exception), _lock:
            if key not in _databases:
                _databases[key] = _open(key, root)

    # Not a daemon: joined before the interpreter finalizes (see table_functions).
    threading.Thread(target=run, name="trinity-duckdb-open").start()


def give_back(handed: Lease, closed: bool) -> None:
    """End a lease whose connection the session closed (``closed``) or could not close.

    A connection still busy with an interrupted statement keeps its database
    out of the pool: the database is left to that statement's thread, as
    the connection is, and is never handed to another session.
    """
    if handed.returned:
        return
    handed.returned = True
    if not closed:
        with _lock:
            if _databases.get(handed.database.key) is handed.database:
                del _databases[handed.database.key]
            handed.database.users -= 1
        return
    _let_go(handed.database)


def drop(handed: Lease) -> None:
    """End the lease of a session collected without being closed: close its connection."""
    import duckdb

    try:
        handed.connection.close()
    except duckdb.Error:  # busy in another thread: left to it, never handed on
        give_back(handed, closed=False)
    else:
        give_back(handed, closed=True)


def _let_go(database: Database) -> None:
    surplus: list[Database] = []
    with _lock:
        database.users -= 1
        if database.users == 0:
            if _databases.get(database.key) is database:
                _databases[database.key] = _databases.pop(database.key)  # the most recent
            else:
                surplus.append(database)  # taken out of the pool (a fork, an exit)
            idle = [db for db in _databases.values() if db.users == 0]
            for extra in idle[: max(0, len(idle) - MAX_IDLE)]:
                del _databases[extra.key]
                surplus.append(extra)
    for extra in surplus:
        _close(extra)


def close_all() -> None:
    """Close every database (interpreter exit, after every session let go of its own)."""
    with _lock:
        databases = list(_databases.values())
        _databases.clear()
    for database in databases:
        _close(database)


def close_idle() -> None:
    """Close every database no session is connected to."""
    with _lock:
        idle = [db for db in _databases.values() if db.users == 0]
        for database in idle:
            del _databases[database.key]
    for database in idle:
        _close(database)


def forget_in_child() -> None:
    """In a forked child, let go of the parent's databases without closing them.

    The child has DuckDB's objects but not its threads: closing them there
    crashes the child. A session in the child opens a database of its own.
    """
    global _lock
    _lock = threading.Lock()  # a parent's thread may have held it (open_ahead)
    _INHERITED.extend(_databases.values())
    _databases.clear()


def open_count() -> int:
    """How many databases the pool holds open (for tests and diagnostics)."""
    with _lock:
        return len(_databases)


def _open(key: str | None, root: str | None) -> Database:
    import duckdb

    sandbox = Sandbox(root)
    try:
        duck = duckdb.connect(":memory:", config={**DUCKDB_CONFIG, **SANDBOX_CONFIG})
        try:
            sandbox.confine(duck)
            for name, value in DUCKDB_SETTINGS.items():
                duck.execute(f"SET GLOBAL {name} = ?", [value])
            duck.execute("SET enable_external_access = false")
            duck.execute("SET lock_configuration = true")
        except BaseException:
            duck.close()
            raise
    except BaseException:
        sandbox.close()
        raise
    return Database(key, duck, sandbox)


def _close(database: Database) -> None:
    try:
        database.duck.close()
    finally:
        database.sandbox.close()


# After every session let go of its connection (sessions are closed first).
duckdb_lifecycle.then(close_all, forget_in_child)
