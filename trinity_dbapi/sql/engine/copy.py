"""``COPY t FROM 'file'`` and ``COPY (query) TO 'file'``: files in and out, by the driver.

The driver reads and writes the file itself (:mod:`.file_formats`, with
pyarrow) and DuckDB never sees its name, so DuckDB's sandbox
(:mod:`.sandbox`) stays as closed as for any other statement. Before
anything is read or written, :mod:`.file_access` checks the path against
the directories the connection was given (``connect(..., file_access=[...])``).

``COPY t FROM`` appends the file's rows the way ``INSERT`` and
``Cursor.ingest`` do (:func:`.dml.insert_arrow`: one write, one commit in
autocommit mode, nothing on failure); ``COPY ... TO`` streams the query's
Arrow batches into a file that appears whole or not at all. Both return
the number of rows as the row count.

The format is the ``FORMAT`` option's, else the file extension's
(``.csv``, ``.tsv``, ``.parquet``, ``.pq``, ``.json``, ``.ndjson``,
``.jsonl``), else CSV, as in DuckDB. CSV files have a header line unless
``HEADER false``, and ``DELIMITER`` (``,``; tab for ``.tsv``) between fields.

Imports from sql/engine/: dml, file_access, file_formats, query, result, session.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pyarrow as pa

from trinity_dbapi import errors
from trinity_dbapi.sql import model
from trinity_dbapi.sql.engine import dml, file_access
from trinity_dbapi.sql.engine.file_formats import FileSource, one_line, write_file
from trinity_dbapi.sql.engine.query import run_query
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.tables import managed

if TYPE_CHECKING:
    from trinity_dbapi.sql.engine.session import Session

__all__ = ["EXTENSIONS", "copy_from", "copy_to"]

#: The format (and CSV delimiter) each file extension stands for.
EXTENSIONS: dict[str, tuple[str, str | None]] = {
    ".csv": ("csv", None),
    ".tsv": ("csv", "\t"),
    ".tab": ("csv", "\t"),
    ".parquet": ("parquet", None),
    ".pq": ("parquet", None),
    ".json": ("json", None),
    ".ndjson": ("json", None),
    ".jsonl": ("json", None),
}


def _format(path: str, options: model.CopyOptions) -> tuple[str, str]:
    """The file's format and CSV delimiter; HEADER and DELIMITER only for CSV."""
    kind, delimiter = EXTENSIONS.get(os.path.splitext(path)[1].lower(), ("csv", None))
    if options.format is not None:
        kind = options.format
    if kind != "csv":
        for name, value in (("HEADER", options.header), ("DELIMITER", options.delimiter)):
            if value is not None:
                raise errors.ProgrammingError(
                    f"COPY option {name} applies to CSV files, and {path!r} is read and written "
                    f"as {kind}; drop {name}, or write FORMAT csv"
                )
    return kind, options.delimiter or delimiter or ","


def _labelled(exc: errors.Error, label: str) -> errors.Error:
    """``exc`` with its message starting with ``label``, of the same PEP 249 class.

    Only a plain PEP 249 error (a file's, a value's) is relabelled; a more
    specific one (``ReadOnlyError``, ``NoSuchTableError``) keeps its class
    and its own message, which names the object already.
    """
    plain = type(exc) in (errors.FileAccessError, *errors.Error.__subclasses__())
    plain = plain or type(exc) in errors.DatabaseError.__subclasses__()
    if str(exc).startswith(label) or not plain:
        return exc
    message = f"{label}: {one_line(exc)}"
    if isinstance(exc, errors.FileAccessError):
        return errors.FileAccessError(exc.path, message)
    kinds = (
        errors.DataError,
        errors.IntegrityError,
        errors.OperationalError,
        errors.NotSupportedError,
        errors.ProgrammingError,
    )
    kind = next((k for k in kinds if isinstance(exc, k)), errors.DatabaseError)
    return kind(message)


def copy_from(session: Session, stmt: model.CopyFrom) -> Result:
    """Append the rows of the file to the table; the row count is their number.

    Raises:
        FileAccessError: the connection may not read the file.
        Error: a PEP 249 error for every other failure; nothing was written.
    """
    namespace, name = session.resolve(stmt.table)
    real = file_access.resolve(stmt.path, session.file_access, "COPY ... FROM")
    kind, delimiter = _format(stmt.path, stmt.options)
    schema = managed.schema(session.transaction().peek_table(namespace, name))
    source = FileSource(
        lambda: file_access.open_for_read(real, stmt.path),
        kind,
        schema,
        f"cannot copy {stmt.path!r} into {namespace}.{name}",
        header=stmt.options.header is not False,
        delimiter=delimiter,
        again="run the COPY again",
        nothing="nothing was copied",
    )
    try:
        with source as rows:
            result = dml.insert_arrow(session, model.TableName(namespace, name), rows)
    except errors.Error as exc:
        labelled = _labelled(exc, source.label)
        if labelled is exc:
            raise
        raise labelled from exc
    return Result(None, result.rowcount)


def copy_to(session: Session, stmt: model.CopyTo) -> Result:
    """Write the query's rows to the file; the row count is their number.

    The query runs first, so a failing query writes nothing; the file
    appears only once every row is written.

    Raises:
        FileAccessError: the connection may not write the file, or it exists
            and the statement has no ``OVERWRITE``.
        Error: a PEP 249 error for every other failure; no file was written.
    """
    real = file_access.resolve(stmt.path, session.file_access, "COPY ... TO")
    kind, delimiter = _format(stmt.path, stmt.options)
    query = stmt.query
    rows = run_query(session, query.expression, query.tables, query.params, stream=True)
    try:
        with file_access.open_for_write(real, stmt.path, overwrite=stmt.options.overwrite) as file:
            count = write_file(
                rows,
                file,
                kind,
                header=stmt.options.header is not False,
                delimiter=delimiter,
                check=session.control.check,
            )
    except errors.Error as exc:
        labelled = _labelled(exc, f"cannot copy to {stmt.path!r}")
        if labelled is exc:
            raise
        raise labelled from exc
    except pa.ArrowException as exc:
        raise errors.DataError(
            f"cannot copy to {stmt.path!r}: {one_line(exc)}; no file was written"
        ) from exc
    except OSError as exc:
        raise errors.OperationalError(
            f"cannot copy to {stmt.path!r}: {exc.strerror or one_line(exc)}; check that its "
            "folder is writable and has room"
        ) from exc
    finally:
        rows.close()
    return Result(None, count)
