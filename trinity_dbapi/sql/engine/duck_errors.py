"""DuckDB's errors as errors of our hierarchy, and the damaged file a query's failure is blamed on.

Split out of :mod:`~trinity_dbapi.sql.engine.query`, which runs the queries: a
DuckDB error becomes the PEP 249 class that fits; one that names (or, for
footer damage that names no file, is traced by re-reading to) one of the
query's immutable data files is that file's :class:`CorruptFileError`; the
sandbox's refusals and out-of-memory errors say its rule and what to do.
DuckDB's quote of the SQL it ran is dropped (that SQL is the rewrite: views
expanded, tables as scans), the piece it underlined kept as ``near '...'``,
and its "Candidate bindings" of an unknown column become "did you mean".

A query's scans are known here only as :class:`Rereadable`: something that
can re-read its own files one by one to find a damaged one (the native scan
of :mod:`.native_scan`, the :class:`FetchedScan` of a remote root).

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Protocol

import duckdb
import pyarrow as pa

from trinity_dbapi.errors import (
    CorruptFileError,
    DataError,
    Error,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    QueryInterruptedError,
)

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot
    from trinity_dbapi.storage import Storage


# DuckDB's exception classes and the PEP 249 class each maps to; looked up by
# name so a DuckDB version without one of them still imports.
_DUCKDB_ERRORS: tuple[tuple[str, type[Error]], ...] = (
    ("ParserException", ProgrammingError),
    ("BinderException", ProgrammingError),
    ("CatalogException", ProgrammingError),
    ("SyntaxException", ProgrammingError),
    ("NotImplementedException", NotSupportedError),
    ("PermissionException", NotSupportedError),
    ("ConversionException", DataError),
    ("OutOfRangeException", DataError),
    ("InvalidInputException", DataError),
    ("TypeMismatchException", DataError),
    ("ConstraintException", DataError),
    ("InvalidTypeException", DataError),
    ("InternalException", InternalError),
    ("OutOfMemoryException", OperationalError),
    ("IOException", OperationalError),
)


def arrow_error(exc: pa.ArrowException) -> Error:
    """DuckDB's result could not become Arrow: pyarrow imports types nested 64 levels at most."""
    return NotSupportedError(
        f"the query's result cannot be handed over as Arrow data (pyarrow: {exc}); a column "
        "whose type nests more than 64 levels (lists of lists of ...) is the usual cause: "
        "flatten it, or cast it to VARCHAR"
    )


def stream_error(exc: OSError) -> Error:
    """The error of a DuckDB query that failed while its rows were streamed."""
    message = str(exc)
    if message.startswith("INTERRUPT Error"):
        return QueryInterruptedError("reading the query's rows")
    return OperationalError(
        f"query failed in DuckDB while its rows were read: {_in_user_words(message)}"
    )


_PRIVATE_STREAM = re.compile(r"reading the stream registered as '__trinity_\w+' failed: ")

#: DuckDB errors about the statement or the session, never about a file read.
NOT_FILE_ERRORS = (
    "ParserException",
    "BinderException",
    "CatalogException",
    "SyntaxException",
    "InterruptException",
    "OutOfMemoryException",
)


def translate_duckdb_error(exc: duckdb.Error, files: Collection[str] = ()) -> Error:
    """The error of our hierarchy that corresponds to a DuckDB error.

    Args:
        exc: the DuckDB error.
        files: lakehouse data files (relative paths) the statement reads. DuckDB
            and pyarrow name the file they fail on, as an absolute path or a
            path on the file system that ends in the relative one; an error
            that names one of them (missing, not Parquet, a bad footer or page)
            is that file's :class:`CorruptFileError`, whatever class DuckDB
            gave it. The files are immutable and the lakehouse named them, so
            the user's statement cannot be the cause.
    """
    if isinstance(exc, duckdb.InterruptException):
        return QueryInterruptedError("the query")
    message = str(exc)
    if files and not is_one_of(exc, NOT_FILE_ERRORS):
        named = [path for path in files if path in message]
        if named:
            # The private relation a pyarrow dataset is registered under means
            # nothing to the user.
            message = _PRIVATE_STREAM.sub("", message)
            return CorruptFileError(max(named, key=len), f"reading it failed: {message}")
    cls: type[Error] = OperationalError
    for name, candidate in _DUCKDB_ERRORS:
        if is_one_of(exc, (name,)):
            cls = candidate
            break
    for name, hint in _SANDBOX_HINTS:
        # DuckDB's own advice (enable access, set a temp_directory) cannot
        # apply to the sandboxed DuckDB: say its rule and what to do instead.
        duck_cls = getattr(duckdb, name, None)
        if duck_cls is not None and isinstance(exc, duck_cls):
            message += f"; {hint}"
    # References carry their table name as alias, so DuckDB's messages name
    # the user's tables; the private relation names never reach the user.
    return cls(f"query failed in DuckDB: {_did_you_mean(_in_user_words(message))}")


#: DuckDB's quote of the SQL it ran, ``LINE 1: <text>`` and a line of carets under the
#: culprit: that SQL is ours (views expanded, tables as scans, DML rewritten).
_QUOTE = re.compile(
    r"\s*\n(?P<label>LINE \d+: )(?P<line>[^\n]*)\n(?P<indent>[ ]*)(?P<carets>\^+)[ \t]*(?=\n|$)"
)

#: DuckDB's name for the column list a view's expansion gives its query.
_VALUES_LIST = re.compile(r'Values list (?P<name>"[^"]*") does not have a column named')


def _in_user_words(message: str) -> str:
    """DuckDB's message without the rewritten SQL it quotes: only the culprit, as typed.

    The culprit DuckDB underlines is a piece of the user's own statement
    (an expression, a literal) unless it lies in what the rewrite added.
    """
    match = _QUOTE.search(message)
    if match is not None:
        # The carets are indented under "LINE 1: " too.
        start = max(len(match.group("indent")) - len(match.group("label")), 0)
        culprit = match.group("line")[start : start + len(match.group("carets"))]
        near = f" (near {culprit!r})" if culprit.strip() and "__trinity" not in culprit else ""
        message = message[: match.start()] + near + message[match.end() :]
    return _VALUES_LIST.sub(r"the view or subquery \g<name> has no column named", message)


#: DuckDB's binder error for a column that does not exist, and its candidates.
_UNKNOWN_COLUMN = re.compile(
    r'(?P<head>Referenced column (?P<name>"[^"]*") not found[^\n]*)\n'
    r"Candidate bindings: (?P<candidates>[^\n]*)"
)


def _did_you_mean(message: str) -> str:
    """DuckDB's "Candidate bindings" for an unknown column, as the question a user reads."""
    match = _UNKNOWN_COLUMN.search(message)
    if match is None or not match.group("candidates").strip():
        return message
    question = f"{match.group('head')}; did you mean {match.group('candidates').strip()}?"
    return message[: match.start()] + question + message[match.end() :]


#: What the sandbox (docs/sql.md, "The sandbox") adds to DuckDB's errors it causes.
_SANDBOX_HINTS: tuple[tuple[str, str], ...] = (
    (
        "PermissionException",
        (
            "SQL reads the lakehouse's tables and no other file (docs/sql.md, 'The sandbox'): "
            "query a table instead, or load the file into one first (Cursor.ingest, or "
            ".import in the trinity shell)"
        ),
    ),
    (
        "OutOfMemoryException",
        (
            "a connection's DuckDB never spills to disk (docs/sql.md, 'The sandbox'), so "
            "temp_directory cannot be set: make the query hold less at once (filter or "
            "aggregate earlier, select fewer columns, sort fewer rows)"
        ),
    ),
)


#: DuckDB errors that a statement's own values cause (casts, overflows):
#: worth no file-by-file search for a damaged file.
_VALUE_ERRORS = (
    "ConversionException",
    "OutOfRangeException",
    "TypeMismatchException",
    "ConstraintException",
    "NotImplementedException",
    "PermissionException",
)


def may_be_a_file(exc: duckdb.Error) -> bool:
    """Whether a DuckDB error naming no file may still come from a damaged file."""
    return not is_one_of(exc, NOT_FILE_ERRORS + _VALUE_ERRORS)


class Rereadable(Protocol):
    """A scan whose files can be read again one by one after a failure that named none."""

    def damaged_file(self, duck: duckdb.DuckDBPyConnection) -> CorruptFileError | None:
        """The first of its files that cannot be read alone, or None."""
        ...


class QueryFiles:
    """The lakehouse data files one query reads, to blame a damaged one.

    Attributes:
        paths: every data file the query's scans may read (relative paths).
        scans: the scans DuckDB reads itself, which can be re-read file by file.
    """

    def __init__(self, duck: duckdb.DuckDBPyConnection) -> None:
        self.paths: set[str] = set()
        self.scans: list[Rereadable] = []
        #: Remote scans read from fetched bytes, whose errors name no file.
        self.fetched: list[FetchedScan] = []
        self._duck = duck
        # The versions that read each file: a missing one is no damage when
        # every version reading it was expired and its files collected.
        self._readers: dict[str, list[Snapshot]] = {}

    def add(self, snapshot: Snapshot, paths: Collection[str]) -> None:
        """Record that the scan of a table as of ``snapshot`` may read ``paths``."""
        self.paths.update(paths)
        for path in paths:
            self._readers.setdefault(path, []).append(snapshot)

    def explain(self, error: Error) -> Error:
        """``error``, or :class:`VersionExpiredError` if it is a file of an expired version's.

        A file some retained version reads cannot have been collected, so
        then it stays damage.
        """
        if not isinstance(error, CorruptFileError):
            return error
        expired: Error | None = None
        for snapshot in self._readers.get(error.path, ()):
            explained = snapshot.explain(error)
            if explained is error:
                return error
            expired = expired or explained
        return expired or error

    def translate(self, exc: duckdb.Error) -> Error:
        """Our error for a DuckDB failure of the query: a damaged file's if one is to blame."""
        error = translate_duckdb_error(exc, self.paths)
        if isinstance(error, CorruptFileError) or not may_be_a_file(exc):
            return self.explain(error)
        damaged = self.damaged_file()
        return error if damaged is None else self.explain(damaged)

    def damaged_file(self) -> CorruptFileError | None:
        """The first file of the query's scans that cannot be read alone, or None."""
        scans: list[Rereadable] = [*self.scans, *self.fetched]
        for scan in scans:
            damaged = scan.damaged_file(self._duck)
            if damaged is not None:
                return damaged
        return None

    def translate_stream(self, exc: OSError) -> Error:
        """Our error for a failure met while the query's rows were streamed.

        Arrow's C stream hands DuckDB's error over as ``OSError`` with its
        message; one naming a file of the query is that file's, as in
        :meth:`translate` (a cursor still fetching when its version's files
        were collected gets :class:`VersionExpiredError`).
        """
        error = stream_error(exc)
        if isinstance(error, QueryInterruptedError):
            return error
        message = str(exc)
        named = [path for path in self.paths if path in message]
        if not named:
            damaged = self.damaged_file() if self.fetched else None
            return error if damaged is None else self.explain(damaged)
        message = _PRIVATE_STREAM.sub("", message)
        return self.explain(CorruptFileError(max(named, key=len), f"reading it failed: {message}"))


class FetchedScan:
    """A remote table's scan of fetched files, re-read file by file to blame a damaged one.

    Arrow reads fetched bytes, so its errors say ``<Buffer>``, not a path;
    after a failure each fragment is read alone (the files are immutable).
    """

    def __init__(self, storage: Storage, paths: Collection[str]) -> None:
        self.storage = storage
        self.paths = sorted(paths)

    def damaged_file(self, duck: duckdb.DuckDBPyConnection) -> CorruptFileError | None:
        import pyarrow.parquet as pq

        from trinity_dbapi.errors import StorageFileNotFoundError

        for path in self.paths:
            try:
                pq.read_table(pa.BufferReader(self.storage.read(path)))
            except StorageFileNotFoundError:
                return CorruptFileError(path, "the file is missing")
            except (pa.ArrowException, OSError, ValueError) as exc:
                return CorruptFileError(path, f"not a readable Parquet file ({exc})")
        return None


def is_one_of(exc: duckdb.Error, names: Sequence[str]) -> bool:
    """Whether ``exc`` is one of DuckDB's exception classes named ``names``."""
    for name in names:
        duck_cls = getattr(duckdb, name, None)
        if duck_cls is not None and isinstance(exc, duck_cls):
            return True
    return False
