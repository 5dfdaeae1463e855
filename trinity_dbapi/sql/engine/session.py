"""A SQL session: one connection's state and its TrinityLake transactions.

The session owns the current namespace, the isolation level of the next
transaction and the transaction in progress. Outside autocommit the first
statement begins a transaction that lasts until :meth:`Session.commit` or
:meth:`Session.rollback` (or SQL ``COMMIT`` / ``ROLLBACK``); in autocommit mode
each statement is a transaction of its own unless SQL ``BEGIN`` opened one.

Every statement is atomic (:meth:`Session.atomically`): one that fails undoes
its own staged changes (a savepoint of the transaction) and leaves the
transaction usable. Which statement runs, and how, is the front door's
(:mod:`~trinity_dbapi.sql.engine.dispatch`); the session never names a
statement type.

Work that follows a commit registers itself here
(:func:`register_after_commit`): the session calls it and never names it.

The session also holds its own DuckDB connection (:mod:`.duckdb_pool`),
closed with the session, at interpreter exit, and forgotten in a forked child
(:mod:`.duckdb_lifecycle`).

Long work reports its progress to the session's handler (``Connection.progress``):
see :mod:`trinity_dbapi.sql.engine.progress`.

A session may start on a lakehouse that does not exist yet (``connect`` on an
absent or empty folder): it reads an empty stand-in, which writes nothing
where the user pointed, until its first write creates it with the
:class:`~.stand_in.LakehouseToCreate` it was given and goes on with the lakehouse that
made (:meth:`Session.writable`); if that first statement fails, what it
created is deleted again, so a mistyped path and a failed write leave nothing.

Imports from sql/engine/: control, duckdb_lifecycle, duckdb_pool, progress, stand_in.
"""

from __future__ import annotations

import contextlib
import os
import time
import weakref
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from trinity_dbapi.errors import (
    CorruptFileError,
    InterfaceError,
    NotSupportedError,
    ProgrammingError,
    ReadOnlyError,
    ReservedNamespaceError,
)
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.lakehouse.transaction import (
    DEFAULT_ISOLATION,
    IsolationLevel,
    RetryPolicy,
    Transaction,
)
from trinity_dbapi.sql import model
from trinity_dbapi.sql.engine import duckdb_lifecycle, duckdb_pool
from trinity_dbapi.sql.engine import stand_in as stand_in_module
from trinity_dbapi.sql.engine.control import StatementControl
from trinity_dbapi.sql.engine.progress import NodeFileProgress, ProgressHandler, Task

if TYPE_CHECKING:
    import duckdb

    from trinity_dbapi.lakehouse.lakehouse import Lakehouse, Snapshot
    from trinity_dbapi.sql.engine.stand_in import LakehouseToCreate

T = TypeVar("T")

#: The namespace unqualified names resolve in until ``USE`` changes it.
DEFAULT_NAMESPACE = "default"

#: ``hook(session, tables, snapshot)``: work after a commit that changed the
#: data files of ``tables`` (``(namespace, table)`` pairs) and made ``snapshot``.
AfterCommit = Callable[["Session", frozenset[tuple[str, str]], "Snapshot"], None]

#: The hooks :meth:`Session.commit` runs, in the order they were registered.
_AFTER_COMMIT: list[AfterCommit] = []


def register_after_commit(hook: AfterCommit) -> None:
    """Run ``hook`` after every commit that changed tables' data files (registered once).

    Where the session must call work of a higher module (automatic
    compaction), that module registers it here and the session never names
    it. The hook runs in the committing thread once the commit is done,
    outside any transaction; an exception it raises reaches the caller of
    the commit, so a hook that must never fail the write catches its own.
    """
    if hook not in _AFTER_COMMIT:
        _AFTER_COMMIT.append(hook)


class Session:
    """The state of one SQL connection over a lakehouse.

    Args:
        lakehouse: the lakehouse the statements run against.
        autocommit: commit after every statement (outside ``BEGIN``).
        isolation: isolation level of the transactions this session begins.
        read_only: refuse every statement that would change the lakehouse.
        namespace: the namespace unqualified table names resolve in.
        retry: how commits retry after losing a race.
        progress: the progress handler (None: no reports), see :class:`ProgressEvent`.
        statement_timeout: stop statements running longer than this many
            seconds (None: no limit); see :class:`StatementControl`.
        create_on_write: set when ``lakehouse`` is an empty stand-in for one
            that does not exist yet: the first write creates the real one
            with it, and the session uses that from then on.
        location: where the lakehouse is (or will be), for messages; its
            storage's root URI when None.
    """

    def __init__(
        self,
        lakehouse: Lakehouse,
        *,
        autocommit: bool = False,
        isolation: IsolationLevel | str = DEFAULT_ISOLATION,
        read_only: bool = False,
        namespace: str = DEFAULT_NAMESPACE,
        retry: RetryPolicy | None = None,
        progress: ProgressHandler | None = None,
        statement_timeout: float | None = None,
        create_on_write: LakehouseToCreate | None = None,
        location: str | None = None,
    ) -> None:
        self.lakehouse = lakehouse
        #: Creates the lakehouse at the first write; None once it exists.
        self.create_on_write = create_on_write
        #: Whether this session's first write created the lakehouse.
        self.created_lakehouse = False
        #: The stand-in and its creator while the statement that created the lakehouse runs.
        self._creating: tuple[dict[str, Any], LakehouseToCreate] | None = None
        self.location = location or lakehouse.storage.root_uri
        self.autocommit = autocommit
        self.isolation = IsolationLevel.parse(isolation)
        #: Whether the lakehouse was opened at a pinned version (connect(version=N)).
        self.pinned = lakehouse.pinned_version is not None
        #: Whether the user asked for read-only (a pinned session is read-only anyway).
        self.asked_read_only = read_only
        self.read_only = read_only or self.pinned
        self.namespace = namespace
        self.retry = retry
        #: Receives the progress of long work; None: nobody is told.
        self.progress: ProgressHandler | None = progress
        self._txn: Transaction | None = None
        self._explicit = False  # a BEGIN opened the transaction
        #: The session's DuckDB connection, on a shared database (opened on first use).
        self._lease: duckdb_pool.Lease | None = None
        self._drop_lease: weakref.finalize[[duckdb_pool.Lease], Session] | None = None
        #: Streamed results still being read; each holds a DuckDB cursor.
        self._streams: weakref.WeakSet[Generator[Any, None, None]] = weakref.WeakSet()
        #: Interrupts and times out the running statement (``Connection.interrupt``).
        self.control = StatementControl(self._open_duckdb, statement_timeout)
        #: The DuckDB cursors of those streams.
        self._cursors: weakref.WeakSet[duckdb.DuckDBPyConnection] = weakref.WeakSet()
        self.closed = False
        #: Closed at interpreter exit by :func:`_release_at_exit`.
        self.abandoned = False
        #: The lock a thread holds while it runs a statement of this session
        #: (the connection's): exit waits on it for an interrupted statement.
        self.statement_lock: Any = None
        #: Tables whose files the open transaction changed (for the after-commit hooks).
        self.written_tables: set[tuple[str, str]] = set()
        #: What the store had served when the running statement began (EXPLAIN ANALYZE).
        self.statement_stats = lakehouse.storage.stats.snapshot()
        self.file_access: tuple[str, ...] = ()  # the directories COPY may use (real paths)

    # -- transactions -----------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open (begun and not yet committed or rolled back)."""
        return self._txn is not None and self._txn.is_active

    def transaction(self, prefetch: Sequence[tuple[str, str]] = ()) -> Transaction:
        """The open transaction, beginning one when none is.

        Args:
            prefetch: the tables the first statement reads, whose definitions
                are read while the latest version is looked up.
        """
        if self._txn is None or not self._txn.is_active:  # none, or one SAVE TRANSACTION handed off
            self._explicit = self._explicit and self._txn is None  # a saved one's BEGIN is over
            if self.create_on_write is not None:
                self._look_again()
            self._txn = self.lakehouse.begin(
                isolation=self.isolation,
                read_only=self.read_only,
                retry=self.retry,
                prefetch=prefetch,
            )
        return self._txn

    def begin(self, isolation: str | None, txn: Transaction | None = None) -> None:
        """SQL ``BEGIN``: open a transaction explicitly (``txn``: go on with it, LOAD TRANSACTION)."""
        if self.in_transaction and (self._explicit or self.transaction().has_changes):
            raise ProgrammingError(
                "BEGIN inside an open transaction: a transaction is already in progress; "
                "COMMIT or ROLLBACK it first"
            )
        self._txn = txn
        if isolation is not None:
            self.isolation = IsolationLevel.parse(isolation)
        self.transaction()
        self._explicit = True

    def commit(self) -> Snapshot | None:
        """Commit the open transaction, if any (nothing happens otherwise).

        A commit that writes node files reports them as the task ``"commit"``.
        One that changed tables' data files then runs the hooks registered
        with :func:`register_after_commit`.

        Returns:
            The version the commit made (the one read, when nothing changed),
            or None when no transaction was open.
        """
        txn, self._txn, self._explicit = self._txn, None, False
        written, self.written_tables = frozenset(self.written_tables), set()
        if txn is not None and (txn.is_active or txn.is_saved):  # a saved one raises
            snapshot = txn.commit(progress=self.node_file_progress("commit", quiet=True))
            if written:
                for hook in _AFTER_COMMIT:
                    hook(self, written, snapshot)
            return snapshot
        return None

    def rollback(self) -> None:
        """Discard the open transaction, if any."""
        txn, self._txn, self._explicit = self._txn, None, False
        self.written_tables = set()
        if txn is not None and txn.is_active:
            txn.abort()

    def use_branch(self, name: str) -> None:
        """SQL ``USE BRANCH``: the session's statements read and write branch ``name``.

        Raises:
            ProgrammingError: a transaction is open (its changes belong to
                the branch it began on).
            NoSuchRefError: no branch has that name.
        """
        if self.in_transaction and (self._explicit or self.transaction().has_changes):
            raise ProgrammingError(
                f"USE BRANCH {name} inside an open transaction: its changes belong to the "
                "branch it began on; COMMIT or ROLLBACK it first"
            )
        lakehouse = self.lakehouse.on_branch(name)
        self.rollback()
        self.lakehouse = lakehouse
        self._switch_lakehouse()

    def set_isolation(self, isolation: str) -> None:
        """SQL ``SET TRANSACTION``: the isolation level of the next transaction.

        It also applies to an open transaction that has not changed anything yet.
        """
        level = IsolationLevel.parse(isolation)
        if self._txn is not None and self._txn.has_changes:
            raise ProgrammingError(
                "SET TRANSACTION after the transaction changed the lakehouse: the isolation "
                "level is fixed once it has writes; run it before the first change or after "
                "COMMIT / ROLLBACK"
            )
        self.isolation = level
        if self._txn is not None:
            self._txn.isolation = level

    def writable(self) -> Transaction:
        """The transaction to stage a change in; refuses read-only sessions.

        The first write of a session on a lakehouse that does not exist yet
        creates it here (see :meth:`create_lakehouse`).
        """
        if self.read_only:
            if not self.asked_read_only:  # read-only because pinned: say how to get out
                self.lakehouse.require_unpinned("this statement")
            raise ReadOnlyError(
                "this connection is read-only: it cannot change the lakehouse; "
                "connect with read_only=False to write"
            )
        self.create_lakehouse()
        return self.transaction()

    @property
    def lakehouse_exists(self) -> bool:
        """False while the session reads the stand-in of a lakehouse not created yet."""
        return self.create_on_write is None

    def create_lakehouse(self) -> None:
        """Create the lakehouse the session stands in for, if it does not exist yet.

        The stand-in object takes the new lakehouse's state
        (:meth:`~trinity_dbapi.lakehouse.lakehouse.Lakehouse.take_over`), so
        whoever holds it goes on with the lakehouse. Its transaction held
        reads only (every write comes here first), so it is dropped; the next
        :meth:`transaction` begins on the new lakehouse. The private DuckDB
        stays if it was the new root's already (:meth:`local_root`).
        """
        later = self.create_on_write
        if later is None:
            return
        message = self._txn.message if self._txn is not None else None  # SET COMMIT MESSAGE's
        lakehouse, self.created_lakehouse = later.create()
        self._creating = (self.lakehouse.take_over(lakehouse), later)
        self.create_on_write = None
        self._switch_lakehouse()
        if message is not None:
            self.transaction().message = message

    def _look_again(self) -> None:
        """Read the lakehouse another writer created since, rather than the stand-in.

        One request, and only for a session whose lakehouse did not exist,
        as each of its transactions begins.
        """
        assert self.create_on_write is not None
        existing = self.create_on_write.existing()
        if existing is not None:
            stand_in = self.lakehouse.take_over(existing)
            self.create_on_write = None
            self._switch_lakehouse()
            stand_in_module.discard(stand_in["storage"])

    def _switch_lakehouse(self) -> None:
        """Drop what belonged to the lakehouse the session used before :attr:`lakehouse`."""
        if self._txn is not None and self._txn.is_active:
            self._txn.abort()
        self._txn = None
        lease = self._lease
        if lease is not None and lease.database.visible_root is None and self.local_root():
            # The stand-in's DuckDB served remote roots, as the folder did not
            # exist: it cannot read the new one's files (a result still
            # streamed from it is closed).
            self._release_duckdb()
        self.statement_stats = self.lakehouse.storage.stats.snapshot()

    def _settle_creation(self, succeeded: bool) -> None:
        """After the statement that created the lakehouse: keep it, or undo it if it failed."""
        creating, self._creating = self._creating, None
        if creating is None:
            return
        stand_in, later = creating
        if succeeded or not self.created_lakehouse or not later.undo(self.lakehouse):
            stand_in_module.discard(stand_in["storage"])
            return
        self.lakehouse.restore(stand_in)
        self.create_on_write, self.created_lakehouse = later, False
        self._switch_lakehouse()

    def require_outside_transaction(self, what: str, *, writes: bool = True) -> None:
        """Lakehouse-wide operations cannot share a transaction with staged changes.

        Args:
            what: the operation, for messages.
            writes: whether it changes the lakehouse (refused when read-only).
        """
        if self._txn is not None and self._txn.has_changes:
            raise NotSupportedError(
                f"{what} cannot run inside a transaction that has uncommitted changes; "
                "COMMIT or ROLLBACK first"
            )
        if writes and self.read_only:
            if not self.asked_read_only:
                self.lakehouse.require_unpinned(what)
            raise ReadOnlyError(f"{what} changes the lakehouse, and this connection is read-only")
        if writes:
            self.create_lakehouse()
            self._settle_creation(True)
        self._txn = None  # a read-only transaction would pin a version that is now old

    # -- progress ----------------------------------------------------------------

    def task(self, name: str, unit: str, total: int | None = None) -> Task:
        """A :class:`Task` reporting to this session's progress handler."""
        # Every report of progress is a safe point to stop at when interrupted.
        return Task(self.progress, name, unit, total, check=self.control.check)

    def node_file_progress(self, name: str, *, quiet: bool) -> NodeFileProgress | None:
        """The ``progress`` callback of a commit (None without a handler)."""
        return None if self.progress is None else NodeFileProgress(self.progress, name, quiet=quiet)

    # -- reading ---------------------------------------------------------------

    def view_for(self, as_of: model.AsOf | None) -> tuple[Transaction, Snapshot]:
        """The view a table reference reads: the transaction, or a pinned older version."""
        if as_of is None:
            txn = self.transaction()
            return txn, txn.snapshot
        lake = self.lakehouse
        if as_of.kind == "version":
            snapshot = lake.snapshot(int(as_of.value))  # type: ignore[arg-type]
        elif as_of.kind == "export":
            # A tag, an export or a branch's head (docs/branches.md).
            snapshot = lake.snapshot_by_name(str(as_of.value))
        else:
            snapshot = lake.snapshot_at(as_of.value)  # type: ignore[arg-type]
        return Transaction(snapshot.lakehouse, snapshot, read_only=True), snapshot

    def resolve(self, table: model.TableName) -> tuple[str, str]:
        """(namespace, table) of a possibly unqualified table name."""
        return table.namespace or self.namespace, table.name

    def _open_duckdb(self) -> list[duckdb.DuckDBPyConnection]:
        """The private DuckDB connection if it is open (for interrupts: never opens it)."""
        lease = self._lease
        return [] if lease is None else [lease.connection]

    # Before duckdb(): below it, the method hides the module in annotations.
    def duckdb_cursor(self) -> duckdb.DuckDBPyConnection:
        """A new cursor of the private DuckDB, released with it (for a streamed result)."""
        cursor = self.duckdb().cursor()
        self._cursors.add(cursor)
        return cursor

    def duckdb(self) -> duckdb.DuckDBPyConnection:
        """The session's own DuckDB connection (opened on first use).

        A connection of its own on the sandboxed database that serves the
        lakehouse's root, shared with the other sessions on that root
        (:mod:`.duckdb_pool`: what is shared and why nothing leaks). DuckDB
        sees only what the session gives it: the files under a local
        lakehouse root (it reads their Parquet natively), nothing else, no
        extensions, no ATTACH, no spilling, and SQL cannot switch that back
        on (:mod:`.sandbox`: the exact rule and mechanism).
        """
        if self._lease is None:
            lease = duckdb_pool.lease(self.local_root())
            # A session dropped unclosed gives its connection back when collected;
            # at interpreter exit the session's own release does (it interrupts
            # and waits for a running statement first: _release_at_exit).
            self._drop_lease = weakref.finalize(self, duckdb_pool.drop, lease)
            self._drop_lease.atexit = False
            self._lease = lease
            duckdb_lifecycle.opened(self)
        return self._lease.connection

    def duckdb_root(self) -> str | None:
        """The path the session's DuckDB reads the local root's files through (None: remote).

        Not the root's own name, which DuckDB may misread: see :mod:`.sandbox`.
        """
        self.duckdb()
        assert self._lease is not None
        return self._lease.database.visible_root

    def track_stream(self, stream: Generator[Any, None, None]) -> None:
        """Close ``stream`` (and so its DuckDB cursor) when the session releases DuckDB."""
        self._streams.add(stream)

    def inherited(self) -> list[Any]:
        """Forget the DuckDB objects a forked child inherited; return them."""
        lease = self._lease
        objects = [*self._streams, *self._cursors, *([] if lease is None else [lease.connection])]
        self._streams, self._cursors = weakref.WeakSet(), weakref.WeakSet()
        self._lease = None
        if self._drop_lease is not None:
            self._drop_lease.detach()  # the parent's lease: never given back here
        return [obj for obj in objects if obj is not None]

    def _release_duckdb(self, wait: float = 0.0) -> None:
        """Close the streams still being read, then the session's DuckDB connection.

        Closing a stream's generator runs its ``finally`` (which closes its
        DuckDB cursor) and drops its frame, so no DuckDB object stays
        reachable from here even while a cursor still holds the stream.

        Args:
            wait: seconds to wait for statements other threads are running
                in this DuckDB: they are interrupted first (they raise
                ``OperationalError`` in their thread). At interpreter exit a
                thread still inside DuckDB when Python finalizes is unwound
                through DuckDB's C++ frames, which aborts the process
                ("terminate called without an active exception").
        """
        lease = self._lease
        handles = [*list(self._cursors), *([] if lease is None else [lease.connection])]
        if wait > 0:
            for handle in handles:
                with contextlib.suppress(Exception):  # already closed
                    handle.interrupt()
        for stream in list(self._streams):
            with contextlib.suppress(ValueError):  # being read in another thread right now
                stream.close()
        self._streams = weakref.WeakSet()
        self._cursors = weakref.WeakSet()
        self._lease = None
        if self._drop_lease is not None:
            self._drop_lease.detach()
        duckdb_lifecycle.released(self)
        deadline = time.monotonic() + wait
        lock = self.statement_lock
        # The interrupted statement's thread leaves DuckDB and then the lock,
        # having turned the interruption into its error: wait for that, so
        # no thread is inside DuckDB, or holds its objects, as Python finalizes.
        if wait > 0 and lock is not None and lock.acquire(timeout=wait):
            lock.release()
        closed = True
        for handle in handles:  # the cursors first, their connection last
            closed = duckdb_lifecycle.close_handle(handle, deadline) and closed
        if lease is not None:
            duckdb_pool.give_back(lease, closed)

    def local_root(self) -> str | None:
        """The lakehouse root directory when it is on the local file system."""
        later = self.create_on_write
        root = self.lakehouse.storage.local_root
        if later is not None:
            # A stand-in's DuckDB is the one of the folder it stands in for,
            # if that exists (DuckDB's sandbox needs the real path): the
            # same before and after the creation. Else a remote root's.
            root = (
                later.local_root if later.local_root and os.path.isdir(later.local_root) else None
            )
        return None if root is None else root + "/"

    # -- statements -------------------------------------------------------------

    def require_open(self) -> None:
        """Refuse a statement on a closed session."""
        if self.closed:
            raise InterfaceError("the connection is closed: open a new one with connect()")

    def atomically(self, work: Callable[[], T], prefetch: Sequence[tuple[str, str]] = ()) -> T:
        """Run one statement's work: undone on failure, committed in autocommit mode.

        Args:
            work: the statement's work, staged in :meth:`transaction`.
            prefetch: the tables it reads, read ahead if a transaction begins.
        """
        txn = self.transaction(prefetch)
        savepoint = txn.savepoint()
        try:
            result = work()
            if self.statement_scoped():
                self.control.check()  # the last point to stop at: the commit is not interrupted
        except BaseException as exc:
            if self._txn is txn and txn.is_active:
                txn.rollback_to(savepoint)
            elif self._txn is not None and self._txn is not txn:
                # The statement created the lakehouse and began a transaction
                # on it: all of that transaction is this statement's.
                begun, self._txn = self._txn, None
                if begun.is_active:
                    begun.abort()
            self._settle_creation(False)
            if self.statement_scoped():
                self.rollback()
            if isinstance(exc, CorruptFileError):
                # A dataset file the tables layer found missing: damage, or the
                # transaction's version was expired and collected meanwhile.
                txn.snapshot.raise_explained(exc)
            raise
        if self.statement_scoped():
            self.commit()
        self._settle_creation(True)
        return result

    def statement_scoped(self) -> bool:
        """Whether each statement is a transaction of its own (autocommit, outside ``BEGIN``)."""
        return self.autocommit and not self._explicit

    def check_writable_namespace(self, namespace: str) -> None:
        """Refuse changes to the reserved catalog namespaces."""
        if namespace in catalog.RESERVED_NAMESPACES:
            raise ReservedNamespaceError(namespace)

    def close(self) -> None:
        """Roll back any open transaction and release DuckDB."""
        if self.closed:
            return
        try:
            self.rollback()
        finally:
            self._release_duckdb()
            self.closed = True
            if self.create_on_write is not None:
                stand_in_module.discard(self.lakehouse.storage)

    def abandon(self, wait: float = 0.0) -> None:
        """Close without touching storage: the open transaction is dropped, not aborted.

        For interpreter exit, when storage I/O may no longer work; what the
        transaction staged is garbage that ``collect_garbage`` removes.
        Statements running in other threads are interrupted and waited for
        up to ``wait`` seconds. Afterwards ``rollback`` and ``close`` are
        no-ops, as after a close (the transaction is already gone): pools
        and iterators finalized later in the exit roll back without error.
        """
        self._txn, self._explicit = None, False
        self.abandoned = True
        self._release_duckdb(wait)
        self.closed = True
