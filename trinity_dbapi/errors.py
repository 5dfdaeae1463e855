"""The one exception hierarchy of trinity-dbapi.

Every error a user can see derives from :class:`Error`, the PEP 249 root, and
from the PEP 249 class that fits it best. Domain errors carry structured fields
(the path, the name, the version) so callers never have to parse messages, and
their messages say which object is wrong, which rule it broke and how to fix it.

PEP 249 layout::

    Warning
    Error
        InterfaceError
        DatabaseError
            DataError
            OperationalError
            IntegrityError
            InternalError
            ProgrammingError
            NotSupportedError
"""

from __future__ import annotations


class Warning(Exception):
    """Important warnings, such as data truncation (PEP 249)."""


class Error(Exception):
    """Root of every error raised by trinity-dbapi (PEP 249 ``Error``)."""


TrinityError = Error


class InterfaceError(Error):
    """Misuse of the driver interface rather than of the lakehouse."""


class DatabaseError(Error):
    """Errors related to the lakehouse itself."""


class DataError(DatabaseError):
    """A value does not fit its column or type."""


class OperationalError(DatabaseError):
    """The lakehouse could not carry out an operation (storage, conflicts)."""


class IntegrityError(DatabaseError):
    """A constraint of the lakehouse would be broken."""


class InternalError(DatabaseError):
    """The lakehouse found itself in an inconsistent state (corrupt files)."""


class ProgrammingError(DatabaseError):
    """Bad input: SQL, names, URIs, definitions, missing objects."""


class NotSupportedError(DatabaseError):
    """A feature that this lakehouse or its storage does not support."""


# --- storage -----------------------------------------------------------------


class InvalidURIError(ProgrammingError):
    """A root URI or path that TrinityLake may not use."""

    def __init__(self, uri: str, message: str) -> None:
        super().__init__(message)
        self.uri = uri


class FileAccessError(ProgrammingError):
    """``COPY`` named a file the connection may not use (``connect(..., file_access=[...])``).

    Nothing was read or written; ``path`` is the file name as written.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class StorageError(OperationalError):
    """A storage operation failed."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class StorageFileNotFoundError(StorageError):
    """A file that was expected in storage is not there."""


class FileAlreadyExistsError(StorageError):
    """An exclusive create lost: another writer created the file first."""


class ExclusiveCreateNotSupportedError(NotSupportedError):
    """The storage cannot guarantee that exactly one creator of a file wins."""

    def __init__(self, message: str, *, uri: str) -> None:
        super().__init__(message)
        self.uri = uri


# --- format ------------------------------------------------------------------


class CorruptFileError(InternalError):
    """A file in the lakehouse does not follow the TrinityLake format."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(
            f"corrupt TrinityLake file {path!r}: {problem}. The file was not changed; "
            "restore it from a full snapshot export (which copies every file of its "
            "version) or a backup, or roll the lakehouse back to a version that does not "
            "reach it (see docs/recovery.md)."
        )
        self.path = path
        self.problem = problem


class DamagedVersionError(CorruptFileError):
    """A version's root (or a file it needs to open) is damaged; names the way back.

    Attributes:
        version: the version that cannot be opened.
        intact: the newest older version that opens, or None when none does.
    """

    def __init__(self, path: str, problem: str, *, version: int, intact: int | None) -> None:
        if intact is None:
            fix = (
                "no older version opens either; restore the lakehouse from a full snapshot "
                "export or a backup (see docs/recovery.md)"
            )
        else:
            fix = (
                f"version {intact} is intact: read it with connect(uri, version={intact}) "
                f"(shell: trinity DIR --at-version {intact}) and run "
                f"CALL system.rollback_to_version({intact}) there to make its content the "
                "latest again (see docs/recovery.md)"
            )
        DatabaseError.__init__(
            self,
            f"corrupt TrinityLake file {path!r}: {problem}. Version {version} cannot be opened; "
            f"the file was not changed. {fix[0].upper()}{fix[1:]}.",
        )
        self.path = path
        self.problem = problem
        self.version = version
        self.intact = intact


class InvalidNameError(ProgrammingError):
    """An object name breaks the key-encoding rules."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(message)
        self.name = name


class InvalidDefinitionError(ProgrammingError):
    """A lakehouse, namespace or table definition has an invalid field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class UnsupportedFormatVersionError(NotSupportedError):
    """The lakehouse was written with a format major version we cannot read."""

    def __init__(self, found: int, supported: int) -> None:
        super().__init__(
            f"lakehouse format major version {found} is not supported: this "
            f"trinity-dbapi reads major version {supported}; upgrade trinity-dbapi "
            "to open it"
        )
        self.found = found
        self.supported = supported


class UnsupportedFeatureError(NotSupportedError):
    """The lakehouse requires a feature this release does not know.

    A newer release records in the lakehouse definition the features that
    change what is reachable or how the lakehouse is written (docs/format.md,
    "Required features"); a release that does not know one refuses what
    could damage the newer release's files.

    Attributes:
        feature: the feature this release does not know.
        release: the first release that knows it, as the lakehouse records it
            ("" when it records none).
        operation: what was refused (``"a commit"``, ``"expire_versions"``, ...).
        reading: whether reading needs the feature too (else only changes do).
    """

    def __init__(
        self, feature: str, release: str, *, operation: str, this_release: str, reading: bool
    ) -> None:
        knower = release or f"a newer release ({feature})"
        upgrade = (
            f"Upgrade to {release} or later" if release else "Upgrade to a release that knows it"
        )
        if reading:
            message = (
                f"{operation} is refused: this lakehouse requires the feature {feature!r} to be "
                f"read at all, which {this_release} does not know (it takes {knower}); reading "
                f"it without the feature could return wrong data. {upgrade} to open it"
            )
        else:
            message = (
                f"{operation} is refused: this lakehouse requires the feature {feature!r}, "
                f"which {this_release} does not know (it takes {knower}); changing the "
                "lakehouse without knowing the feature could damage what that release wrote "
                "(a commit could drop what the feature records, garbage collection delete its "
                f"files as unreachable). {upgrade} to do this; reading the lakehouse with this "
                "release still works"
            )
        super().__init__(message)
        self.feature = feature
        self.release = release
        self.operation = operation
        self.reading = reading


class VersionOutOfRangeError(ProgrammingError):
    """A root node version that cannot be stored in a root node file name."""

    def __init__(self, version: int) -> None:
        super().__init__(
            f"root node version {version} is outside 0..4294967295: TrinityLake root "
            "node file names hold a 32-bit version; expire old versions and export a "
            "snapshot into a new lakehouse to continue"
        )
        self.version = version


# --- lakehouse ---------------------------------------------------------------


class LakehouseNotFoundError(OperationalError):
    """No lakehouse (no root node version 0) exists at the root URI."""

    def __init__(self, uri: str) -> None:
        super().__init__(
            f"no Trinity Lakehouse at {uri!r}: it has no root node file for version 0; "
            "create one first (Lakehouse.create, or connect with create=True)"
        )
        self.uri = uri


class NotALakehouseError(LakehouseNotFoundError):
    """No lakehouse at a local path that holds something else: none is created there unasked.

    ``connect`` creates a new lakehouse (at its first write) only in an
    absent or empty folder; a folder holding other files, or a file, is
    refused with this error, whose message says how to create one there on
    purpose.
    """

    def __init__(self, uri: str, message: str) -> None:
        OperationalError.__init__(self, message)
        self.uri = uri


class LakehouseExistsError(ProgrammingError):
    """A lakehouse already exists where a new one was to be created."""

    def __init__(self, uri: str) -> None:
        super().__init__(
            f"a Trinity Lakehouse already exists at {uri!r}; open it instead of "
            "creating it, or choose an empty root URI"
        )
        self.uri = uri


class NestedLakehouseError(ProgrammingError):
    """A lakehouse or export would be written inside another lakehouse (or around one)."""

    def __init__(
        self, uri: str, other: str, what: str = "a lakehouse", *, around: bool = False
    ) -> None:
        where = (
            f"the lakehouse at {other!r} lies inside it"
            if around
            else f"it lies inside the lakehouse at {other!r}"
        )
        super().__init__(
            f"cannot create {what} at {uri!r}: {where}, and one lakehouse's root must not "
            "hold another's files (garbage collection keeps only its own, and a lakehouse "
            "inside another is neither's to maintain); choose a location outside it, such as "
            "a sibling folder or another bucket prefix"
        )
        self.uri = uri
        self.other = other


class NoSuchVersionError(ProgrammingError):
    """A root node version that does not exist (never written or expired)."""

    def __init__(self, version: int, latest: int, message: str | None = None) -> None:
        super().__init__(
            message
            or f"lakehouse version {version} does not exist (latest is {latest}); "
            "choose a version between the oldest retained one and the latest"
        )
        self.version = version
        self.latest = latest


class CommitConflictError(OperationalError):
    """Another transaction committed a conflicting change first."""

    def __init__(self, message: str, *, key: str | None = None, version: int | None = None):
        super().__init__(message)
        self.key = key
        self.version = version


class VersionExpiredError(OperationalError):
    """The version a reader was pinned to was expired and its files collected.

    Not damage: expiration deleted the version's root, garbage collection then
    deleted the files only it reached, and the reader still pinned to it found
    one of them gone. The lakehouse itself is healthy.

    Attributes:
        version: the expired version the reader was pinned to.
        path: the file of that version the read found missing.
        retention: what expired it: ``"maximum_version_age_millis"`` (the
            lakehouse's maximum age, beyond the newest ``minimum_versions_to_keep``
            versions), ``"maximum_version_age_millis_overrides"`` (the version's
            own maximum age) or ``"expire_versions"`` (an explicit call with
            ``older_than`` or ``retain_last``, before the maximum age).
        latest: the newest version, which a new reader pins.
    """

    def __init__(self, version: int, path: str, *, retention: str, why: str, latest: int) -> None:
        super().__init__(
            f"version {version} was expired {why}; garbage collection has since deleted its "
            f"files ({path!r} is gone), so this reader, pinned to version {version}, cannot "
            "read it any more. The lakehouse is healthy: nothing is damaged, so do not restore "
            f"or roll back. Begin again on the latest version ({latest}): a new transaction, or "
            "connect without version=; to keep versions readable longer, raise the lakehouse's "
            "maximum_version_age_millis or minimum_versions_to_keep (or give the version a "
            "maximum_version_age_millis_overrides entry) before they expire (docs/recovery.md)"
        )
        self.version = version
        self.path = path
        self.retention = retention
        self.latest = latest


class ReadOnlyError(ProgrammingError):
    """A write was attempted through a read-only snapshot or connection."""


class RetriesExhaustedError(OperationalError):
    """A commit kept losing the race for the next version and gave up."""

    def __init__(self, attempts: int, version: int) -> None:
        super().__init__(
            f"the commit lost the race for the next version {attempts} times in a row "
            f"(last tried version {version + 1}) without a conflicting change: the "
            "lakehouse is very busy; retry later or raise RetryPolicy.max_attempts"
        )
        self.attempts = attempts
        self.version = version


class ProgressHandlerError(OperationalError):
    """The connection's progress handler raised, which stops the statement.

    Like sqlite3's progress handler asking to interrupt: the statement is
    abandoned as if it had failed (nothing it staged is committed) and the
    handler's exception is the ``__cause__``.
    """

    def __init__(self, task: str, done: int, unit: str, error: Exception) -> None:
        super().__init__(
            f"the progress handler raised {type(error).__name__} ({error}) when told "
            f"{task!r} was at {done} {unit}; the statement was stopped there and committed "
            "nothing (only garbage collection and version expiration keep what they already "
            "deleted, which no version needed); fix the handler or set connection.progress = None"
        )
        self.task = task
        self.done = done
        self.error = error


class TransactionClosedError(InterfaceError):
    """The transaction was already committed or aborted."""


class SavedTransactionError(ProgrammingError):
    """A saved transaction that cannot be loaded, or a session that saved its own away.

    Attributes:
        txn_id: the transaction id as given.
        state: why: ``"unknown"``, ``"expired"``, ``"committed"``, ``"loaded"``
            (another session loaded it first) or ``"saved"`` (this session
            saved it; only a loader can commit it).
    """

    def __init__(self, txn_id: str, state: str, message: str) -> None:
        super().__init__(message)
        self.txn_id = txn_id
        self.state = state


# --- objects -------------------------------------------------------------------


class NoSuchObjectError(ProgrammingError):
    """A namespace or table that does not exist."""

    def __init__(self, kind: str, name: str, fix: str) -> None:
        super().__init__(f"{kind} {name!r} does not exist; {fix}")
        self.kind = kind
        self.name = name


class NoSuchNamespaceError(NoSuchObjectError):
    """The namespace does not exist."""

    def __init__(self, namespace: str) -> None:
        super().__init__("namespace", namespace, "create it first or check the spelling")


class NoSuchTableError(NoSuchObjectError):
    """The table does not exist."""

    def __init__(self, namespace: str, table: str) -> None:
        super().__init__(
            "table", f"{namespace}.{table}", "create it first or check the namespace and name"
        )
        self.namespace = namespace
        self.table = table


class ObjectExistsError(ProgrammingError):
    """A namespace or table that already exists."""

    def __init__(self, kind: str, name: str) -> None:
        super().__init__(
            f"{kind} {name!r} already exists; choose another name, drop it first, or "
            "use IF NOT EXISTS"
        )
        self.kind = kind
        self.name = name


class NoSuchRefError(NoSuchObjectError):
    """A branch, tag or ref name that does not exist."""

    def __init__(self, kind: str, name: str) -> None:
        listing = "SHOW TAGS" if kind == "tag" else "SHOW BRANCHES"
        super().__init__(kind, name, f"{listing} lists them (or SELECT * FROM system.refs)")


class BranchDroppedError(OperationalError):
    """A commit on a branch that was dropped meanwhile: nothing was committed."""

    def __init__(self, branch: str) -> None:
        super().__init__(
            f"branch {branch!r} was dropped (DROP BRANCH) while this transaction ran on it; "
            "nothing was committed. Run it again on another branch (USE BRANCH main, or "
            "CREATE BRANCH to start a new one)"
        )
        self.branch = branch


class MergeConflictError(OperationalError):
    """A MERGE BRANCH whose two sides changed the same thing; nothing was merged.

    Attributes:
        conflicts: ``(object, why)`` pairs, every conflicting object.
    """

    def __init__(self, source: str, target: str, conflicts: list[tuple[str, str]]) -> None:
        listed = "; ".join(f"{what}: {why}" for what, why in conflicts[:50])
        more = f" (and {len(conflicts) - 50} more)" if len(conflicts) > 50 else ""
        super().__init__(
            f"MERGE BRANCH {source} INTO {target} found {len(conflicts)} conflict(s) and changed "
            f"nothing: {listed}{more}. Resolve them on one side (undo or redo the change there), "
            "then merge again"
        )
        self.source = source
        self.target = target
        self.conflicts = conflicts


class NamespaceNotEmptyError(ProgrammingError):
    """A namespace that still holds tables cannot be dropped without CASCADE."""

    def __init__(self, namespace: str, tables: int) -> None:
        super().__init__(
            f"namespace {namespace!r} still holds {tables} table(s) or view(s); drop them first or "
            "drop the namespace with cascade=True (DROP NAMESPACE ... CASCADE)"
        )
        self.namespace = namespace
        self.tables = tables


# -- SQL ---------------------------------------------------------------------------


class SQLSyntaxError(ProgrammingError):
    """SQL text that does not parse.

    Attributes:
        line: 1-based line of the offending token (0 when unknown).
        column: 1-based column of the offending token (0 when unknown).
        text: the offending token's text ("" when unknown).
    """

    def __init__(self, message: str, *, line: int = 0, column: int = 0, text: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.text = text


class UnsupportedStatementError(NotSupportedError):
    """A statement that parses but that trinity-dbapi does not execute."""


class ReservedNamespaceError(ProgrammingError):
    """A write to a reserved namespace (``system``, ``information_schema``)."""

    def __init__(self, namespace: str) -> None:
        super().__init__(
            f"namespace {namespace!r} is reserved for read-only catalog metadata: it cannot be "
            "created, altered, dropped or written to; choose another namespace name"
        )
        self.namespace = namespace


class NestingTooDeepError(ProgrammingError):
    """A statement nests brackets, function calls, subqueries or CASE too deeply.

    Attributes:
        depth: the statement's nesting depth (None when a chain of operators,
            rather than brackets, ran out of recursion).
        limit: the deepest nesting a statement may have.
    """

    def __init__(self, depth: int | None, limit: int) -> None:
        found = f"{depth} levels deep" if depth is not None else "too deeply"
        super().__init__(
            f"the statement nests expressions {found}; a statement may nest parentheses, "
            f"function calls, subqueries and CASE expressions at most {limit} levels deep "
            "(docs/sql.md); split it with common table expressions (WITH) or flatten the "
            "expression (CASE WHEN a THEN x WHEN b THEN y ... END instead of nested CASEs)"
        )
        self.depth = depth
        self.limit = limit


# -- control ------------------------------------------------------------------------


class QueryInterruptedError(OperationalError):
    """A running statement was stopped by ``Connection.interrupt()`` (or Ctrl-C in the shell).

    The statement's own changes are undone; the connection stays usable and
    the transaction it ran in stays open.

    Attributes:
        statement: what was stopped (``"the SELECT statement"``, ``"the ingest into
            shop.orders"``, ``"reading the query's rows"``).
    """

    def __init__(self, statement: str, message: str | None = None) -> None:
        super().__init__(
            message
            or f"{statement} was interrupted (Connection.interrupt(), or Ctrl-C in the shell) "
            "and its changes were undone; the connection is still usable: run it again, or "
            "narrow it (a LIMIT, a WHERE clause) if it takes too long"
        )
        self.statement = statement


class StatementTimeoutError(QueryInterruptedError):
    """A statement ran longer than the connection's ``statement_timeout`` and was stopped.

    Attributes:
        statement: what was stopped.
        timeout: the timeout in seconds.
    """

    def __init__(self, statement: str, timeout: float) -> None:
        super().__init__(
            statement,
            f"{statement} ran longer than the connection's statement_timeout "
            f"of {timeout:g} seconds and was stopped, and its changes were undone; the "
            "connection is still usable: narrow the statement, or raise the timeout "
            "(connection.statement_timeout = seconds, or None for no limit; the "
            "statement_timeout option of connect() or of a SQLAlchemy URL)",
        )
        self.timeout = timeout
