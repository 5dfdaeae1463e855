"""The PEP 249 connection: :func:`connect` and :class:`Connection`.

A connection holds the engine session its cursors run statements in; it
makes the cursors (:mod:`.cursor`, below it, which knows it only as an
``Owner``).

Imports from dbapi/: cursor, opening.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trinity_dbapi import errors
from trinity_dbapi.dbapi.cursor import Cursor, guard
from trinity_dbapi.dbapi.opening import open_location
from trinity_dbapi.errors import InterfaceError, ProgrammingError
from trinity_dbapi.lakehouse.commit_point import check_author
from trinity_dbapi.lakehouse.definition_cache import (
    DEFAULT_DEFINITION_CACHE_BYTES,
    check_cache_bytes,
)
from trinity_dbapi.lakehouse.transaction import DEFAULT_ISOLATION, IsolationLevel, RetryPolicy
from trinity_dbapi.sql.engine.control import check_timeout

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is Python 3.11+

    from trinity_dbapi.sql.engine.progress import ProgressHandler
    from trinity_dbapi.sql.engine.stand_in import LakehouseToCreate

#: Lakehouse definition fields ``connect`` accepts for a new lakehouse.
DEFINITION_FIELDS = frozenset(
    {
        "name",
        "order",
        "namespace_name_max_size_bytes",
        "table_name_max_size_bytes",
        "file_name_max_size_bytes",
        "node_file_max_size_bytes",
        "properties",
        "maximum_version_age_millis",
        "minimum_versions_to_keep",
    }
)


def connect(
    uri: str,
    *,
    storage_options: Mapping[str, Any] | None = None,
    create: bool | None = None,
    autocommit: bool = False,
    isolation_level: IsolationLevel | str = DEFAULT_ISOLATION,
    read_only: bool = False,
    namespace: str = "default",
    retry: RetryPolicy | None = None,
    progress: ProgressHandler | None = None,
    version: int | None = None,
    statement_timeout: float | None = None,
    definition_cache_bytes: int = DEFAULT_DEFINITION_CACHE_BYTES,
    file_access: Sequence[str | os.PathLike[str]] | None = None,
    author: str | None = None,
    branch: str | None = None,
    **definition: Any,
) -> Connection:
    """Open a connection to the lakehouse at ``uri``.

    Args:
        uri: the lakehouse root: a local path, ``file://``, ``memory://``,
            ``s3://bucket/prefix`` or any fsspec URL.
        storage_options: options of the fsspec file system (credentials,
            endpoint), never shown in error messages.
        create: what to do when no lakehouse exists at ``uri``. None (the
            default): create it with the connection's first write, and only
            where nothing else is: until then the connection reads an empty
            lakehouse and nothing is written at ``uri``, and a local folder
            that holds other files is refused. True: create it now, even in a
            folder that holds other files. False: refuse (it must exist).
            See :attr:`Connection.created_lakehouse` and docs/dbapi.md.
        autocommit: commit after every statement (PEP 249 default: off).
        isolation_level: ``"SERIALIZABLE"`` (default) or ``"SNAPSHOT"``.
        read_only: refuse every statement that would change the lakehouse.
        namespace: the namespace unqualified table names resolve in.
        retry: how commits retry after losing a race with another writer.
        progress: a progress handler, called with a
            :class:`~trinity_dbapi.sql.engine.progress.ProgressEvent` as long statements
            work (see :attr:`Connection.progress`).
        version: read this version and never a later root: the way in when the
            latest root is damaged. The connection is read-only, but for
            ``CALL system.rollback_to_version(N)``, which makes N's content
            the latest again (see docs/recovery.md). Never creates a lakehouse.
        statement_timeout: stop any statement that runs longer than this many
            seconds with ``StatementTimeoutError`` (None or 0, the default: no
            limit; see :attr:`Connection.statement_timeout`).
        definition_cache_bytes: the bound, in bytes of definition files, of the
            connection's cache of parsed namespace and table definitions, which
            every statement and reflection through the connection shares
            (default 32 MiB; 0 disables it).
        file_access: the local directories ``COPY`` may read and write files in
            (default: none, every ``COPY`` is refused; docs/dbapi.md, Files: COPY).
        author: who commits through this connection, recorded in every version
            it makes and shown in ``system.versions.author`` (None, the
            default: no author is recorded, as DuckLake does). One line of
            text, at most 256 bytes of UTF-8.
        branch: the branch the connection reads and writes (default: main,
            the lakehouse's own chain); ``USE BRANCH`` switches later
            (docs/branches.md).
        **definition: lakehouse definition fields for a new lakehouse
            (``name``, ``order``, the name-size maxima, ``node_file_max_size_bytes``,
            ``maximum_version_age_millis``, ``minimum_versions_to_keep``, ``properties``).

    Raises:
        LakehouseNotFoundError: none exists and ``create`` is false (or
            ``version`` or ``read_only`` is given).
        NotALakehouseError: none exists, ``create`` is None, and ``uri`` is a
            local folder that holds other files, or a file.
        DamagedVersionError: the latest root (or ``version``'s), or a file it
            needs, is damaged; the message names the newest version that opens.
        NoSuchVersionError: ``version`` does not exist.
        NoSuchRefError: no branch is named ``branch``.
        ProgrammingError: an unknown option, a ``branch`` that is not a str, or a bad ``definition_cache_bytes``
            or ``author`` (not a str).
        DataError: ``author`` is empty, too long or holds a control character.

    Example:
        >>> import trinity_dbapi
        >>> conn = trinity_dbapi.connect("memory://doc-connect", autocommit=True)
        >>> cur = conn.cursor()
        >>> cur.execute("CREATE NAMESPACE sales").execute("SHOW NAMESPACES").fetchall()[-1]
        ('sales',)
    """
    _check_progress(progress)
    directories: tuple[str, ...] = ()
    if file_access is not None:  # the module only when asked: it costs the start-up time
        from trinity_dbapi.sql.engine.file_access import allowed_directories

        directories = allowed_directories(file_access)
    timeout = check_timeout(statement_timeout)
    cache_bytes = check_cache_bytes(definition_cache_bytes)
    author = check_author(author)
    if branch is not None and not isinstance(branch, str):
        raise ProgrammingError(
            f"branch must be a branch name (str), not {type(branch).__name__}; "
            "SHOW BRANCHES lists them"
        )
    if branch not in (None, "main") and version is not None:
        # version= pins main's chain (a recovery never reads later roots),
        # and the branches are recorded in main's latest definition.
        raise ProgrammingError(
            f"connect() got version={version} and branch={branch!r}: version= opens main pinned "
            f"(for recovery); to read branch {branch!r} at a version, connect with branch= "
            "and query FOR SYSTEM_VERSION AS OF n"
        )
    unknown = sorted(set(definition) - DEFINITION_FIELDS)
    if unknown:
        raise ProgrammingError(
            f"connect() got unknown options {', '.join(unknown)}; the options are "
            "storage_options, create, autocommit, isolation_level, read_only, namespace, "
            f"retry, progress, version, statement_timeout, definition_cache_bytes, file_access, author, branch and the lakehouse definition fields {', '.join(sorted(DEFINITION_FIELDS))}"
        )
    from trinity_dbapi.storage.redact import Redactor, redact_userinfo

    error: errors.Error
    try:
        opened = open_location(
            uri,
            storage_options,
            create=create,
            read_only=read_only,
            fields=definition,
            version=version,
            ahead=_duckdb_ahead if isinstance(uri, str) and _remote(uri) else None,
            cache_bytes=cache_bytes,
        )
    except errors.Error:
        raise
    except Exception as exc:  # noqa: BLE001 - raised below, redacted
        # fsspec and its back ends reject odd URIs and options in their own
        # ways, and repeat the options (credentials) in their messages: the
        # cause is a redacted stand-in, raised outside this except so that
        # the original is not kept as the context either.
        cause = Redactor(storage_options).scrubbed(exc)
        shown = redact_userinfo(uri) if isinstance(uri, str) else type(uri).__name__
        if isinstance(exc, (TypeError, ValueError, AttributeError)):
            error = ProgrammingError(
                f"cannot open a lakehouse at {shown!r}: {cause}; check the URI and the "
                "storage_options of its file system"
            )
        else:
            error = errors.OperationalError(f"cannot open a lakehouse at {shown!r}: {cause}")
    else:
        opened.lakehouse.definition_cache.max_bytes = cache_bytes
        opened.lakehouse.author = author
        connection = Connection(
            opened.lakehouse,
            create_on_write=opened.create_on_write,
            location=opened.location,
            autocommit=autocommit,
            isolation_level=isolation_level,
            read_only=read_only,
            namespace=namespace,
            retry=retry,
            progress=progress,
            statement_timeout=timeout,
        )
        connection.session.created_lakehouse = opened.created
        connection.session.file_access = directories
        if branch is not None and branch != "main":
            try:
                connection.session.use_branch(branch)
            except BaseException:
                connection.close()
                raise
        return connection
    raise error from cause


def _check_progress(handler: object) -> None:
    if handler is not None and not callable(handler):
        raise ProgrammingError(
            f"the progress handler must be a callable taking a ProgressEvent, or None, not a "
            f"{type(handler).__name__}"
        )


def _remote(uri: str) -> bool:
    """Whether ``uri`` names a store reached over the network (not a path or memory)."""
    scheme, found, _ = uri.partition("://")
    return bool(found) and scheme.lower() not in ("file", "memory")


def _duckdb_ahead() -> None:
    """Make what a first statement needs of DuckDB on background threads.

    The names its checks ask for and the database it runs on: made while
    opening a remote root waits on the store's round trips.
    """
    from trinity_dbapi.sql import table_functions
    from trinity_dbapi.sql.engine import duckdb_pool

    table_functions.learn_ahead()
    duckdb_pool.open_ahead()


class Connection:
    """A PEP 249 connection to one lakehouse.

    Outside autocommit, the first statement begins a TrinityLake transaction
    pinned to the latest version; :meth:`commit` commits it and
    :meth:`rollback` discards it. Two connections see each other's changes
    only after commit. Used as a context manager it commits on success, rolls
    back on an exception, and closes.

    Connections may be shared between threads (``threadsafety`` 2): every
    operation takes the connection's lock. Cursors must not be.
    """

    # PEP 249 optional extension: the exception classes as attributes.
    Warning = errors.Warning
    Error = errors.Error
    InterfaceError = errors.InterfaceError
    DatabaseError = errors.DatabaseError
    DataError = errors.DataError
    OperationalError = errors.OperationalError
    IntegrityError = errors.IntegrityError
    InternalError = errors.InternalError
    ProgrammingError = errors.ProgrammingError
    NotSupportedError = errors.NotSupportedError

    def __init__(
        self,
        lakehouse: Any,
        *,
        autocommit: bool = False,
        isolation_level: IsolationLevel | str = DEFAULT_ISOLATION,
        read_only: bool = False,
        namespace: str = "default",
        retry: RetryPolicy | None = None,
        progress: ProgressHandler | None = None,
        statement_timeout: float | None = None,
        create_on_write: LakehouseToCreate | None = None,
        location: str | None = None,
    ) -> None:
        from trinity_dbapi.sql.engine.session import Session

        _check_progress(progress)
        self.lock = threading.RLock()
        self.session = Session(
            lakehouse,
            autocommit=autocommit,
            isolation=isolation_level,
            read_only=read_only,
            namespace=namespace,
            retry=retry,
            progress=progress,
            statement_timeout=check_timeout(statement_timeout),
            create_on_write=create_on_write,
            location=location,
        )
        self.session.statement_lock = self.lock

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"namespace={self.session.namespace!r}"
        return f"<trinity_dbapi.Connection {self.session.location} {state}>"

    @property
    def lakehouse(self) -> Any:
        """The :class:`~trinity_dbapi.lakehouse.Lakehouse` the connection works on.

        Before the first write of a connection to a lakehouse not created
        yet (:attr:`created_lakehouse`), an empty one in process memory that
        stands in for it.
        """
        return self.session.lakehouse

    @property
    def created_lakehouse(self) -> bool:
        """Whether this connection created its lakehouse (at its first write, or at connect with ``create=True``).

        False for a lakehouse that existed, and until the first write of one
        that did not (``connect``'s default). The shell says ``created a new
        lakehouse at ...`` when it becomes true.
        """
        return self.session.created_lakehouse

    @property
    def lakehouse_exists(self) -> bool:
        """False until the first write of a connection to a lakehouse not created yet."""
        return self.session.lakehouse_exists

    @property
    def author(self) -> str | None:
        """Who commits through this connection (``connect(..., author=...)``); None: nobody."""
        return self.session.lakehouse.author

    # -- attributes ---------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self.session.closed

    @property
    def autocommit(self) -> bool:
        """Whether every statement commits on its own (settable)."""
        return self.session.autocommit

    @autocommit.setter
    def autocommit(self, value: bool) -> None:
        with self.lock:
            self._check_open()
            if value and not self.session.autocommit:
                self.session.commit()  # like sqlite3 and psycopg: switching on commits
            self.session.autocommit = bool(value)

    @property
    def isolation_level(self) -> str:
        """The isolation level of the transactions this connection begins."""
        return self.session.isolation.value

    @property
    def namespace(self) -> str:
        """The current namespace (changed by ``USE``)."""
        return self.session.namespace

    @property
    def in_transaction(self) -> bool:
        return self.session.in_transaction

    @property
    def storage_stats(self) -> Any:
        """What this connection's statements cost the store so far, as a copy.

        A :class:`~trinity_dbapi.storage.StorageStats`: requests by kind,
        request rounds (requests that waited on one another), bytes read and
        written, and hits of the process's cache of immutable files. Take one
        before and one after a statement and subtract with ``since``.
        """
        return self.lakehouse.storage.stats.snapshot()

    @property
    def progress(self) -> ProgressHandler | None:
        """The progress handler of long statements (settable; None, the default: none).

        It is called, in the thread running the statement, with a
        :class:`~trinity_dbapi.sql.engine.progress.ProgressEvent` as inserts, CREATE
        TABLE AS, UPDATE and DELETE write rows, as commits write node files
        and as procedures (garbage collection, export, expiration,
        compaction, rollback) work. It must not use this connection. If it
        raises, the statement stops and is undone like any failed statement:
        ``ProgressHandlerError``, with the handler's exception as its cause.
        """
        return self.session.progress

    @progress.setter
    def progress(self, handler: ProgressHandler | None) -> None:
        _check_progress(handler)
        with self.lock:
            self.session.progress = handler

    @property
    def statement_timeout(self) -> float | None:
        """Seconds a statement may run before it is stopped (settable; None: no limit).

        A statement that runs longer raises ``StatementTimeoutError`` (an
        ``OperationalError``) and is undone as :meth:`interrupt` undoes it.
        It bounds ``execute``, ``executemany`` and ``Cursor.ingest``, and each
        fetch that waits for DuckDB to produce a streamed result's rows.
        Setting it applies from the next statement on.
        """
        return self.session.control.timeout

    @statement_timeout.setter
    def statement_timeout(self, seconds: float | None) -> None:
        self.session.control.timeout = check_timeout(seconds)

    def interrupt(self) -> None:
        """Stop the statement running on this connection; safe from any thread.

        The statement raises ``QueryInterruptedError`` (an ``OperationalError``)
        in the thread running it, and its own changes are undone as a failed
        statement's are: the transaction it ran in stays open with its earlier
        changes, and the connection stays usable. DuckDB work stops within
        milliseconds; Python work (writing files, planning) at its next safe
        point (each batch of rows written, each table planned). A commit is
        never cut in half: an interrupt before it starts prevents it, one
        during it lets it finish. With no statement running it does nothing.
        It does not wait for the connection's lock, so it works while another
        thread's statement holds it.

        Example:
            >>> import threading, trinity_dbapi
            >>> conn = trinity_dbapi.connect("memory://doc-interrupt")
            >>> timer = threading.Timer(0.5, conn.interrupt)
            >>> timer.start()
            >>> try:
            ...     conn.execute("SELECT count(*) FROM range(1000000000000000)")
            ... except trinity_dbapi.OperationalError as exc:
            ...     print(type(exc).__name__)
            QueryInterruptedError
            >>> conn.execute("SELECT 42").fetchone()
            (42,)
        """
        self.session.control.interrupt()

    # -- PEP 249 --------------------------------------------------------------------

    def cursor(self) -> Any:
        """A new cursor on this connection."""
        self._check_open()
        return Cursor(self)

    def commit(self) -> None:
        """Commit the open transaction (a no-op when none is open).

        Raises:
            CommitConflictError: a concurrent commit conflicts; the
                transaction is rolled back.
            RetriesExhaustedError: the retry policy ran out of attempts.
        """
        with self.lock:
            self._check_open()
            guard(self.session.commit)

    def rollback(self) -> None:
        """Discard the open transaction's changes."""
        if self.session.abandoned:
            # Closed at interpreter exit, its transaction dropped: nothing is
            # left to discard. Pools and result iterators finalized after that
            # roll back their connections; neither an error nor the lock
            # (which a thread stopped in mid-statement may hold) is wanted then.
            return
        with self.lock:
            self._check_open()
            self.session.rollback()

    def close(self) -> None:
        """Close the connection; uncommitted changes are discarded (PEP 249)."""
        if self.session.abandoned:
            return  # closed at interpreter exit already (see rollback)
        with self.lock:
            self.session.close()

    def execute(self, sql: str, parameters: Any = None) -> Any:
        """Shortcut: a new cursor, executed (as sqlite3 and DuckDB offer)."""
        return self.cursor().execute(sql, parameters)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if self.closed:
            return
        try:
            if exc_type is None:
                self.commit()
            else:
                self.rollback()
        finally:
            self.close()

    def _check_open(self) -> None:
        if self.session.closed:
            raise InterfaceError("the connection is closed: open a new one with connect()")
