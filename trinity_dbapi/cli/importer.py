"""``.import FILE TABLE``: load a CSV, TSV, Parquet or NDJSON file into a table.

The file is streamed, never read whole: pyarrow reads it in blocks
(:class:`~trinity_dbapi.sql.engine.file_formats.FileSource`, which ``COPY``
reads with too) and ``Cursor.ingest`` writes the batches as they come: one
write, and in autocommit mode one commit, so a file that fails anywhere
changes nothing.

A table that does not exist is created from the file's columns (as
sqlite3's ``.import`` does), in the same transaction as its rows.

Columns are matched by name: a CSV or TSV file starts with a header line
naming its columns, Parquet files carry their names, NDJSON objects name
their fields. A column the table lacks is an error; a table column the file
lacks is NULL (an error if it is NOT NULL).

Every error is a PEP 249 error whose one-line message starts with
``cannot import FILE into TABLE:`` and says what to fix.

Imports from cli/: nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from trinity_dbapi import errors
from trinity_dbapi.sql.engine.file_formats import FileSource
from trinity_dbapi.sql.model import TableName

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["EXTENSIONS", "FORMATS", "file_format", "import_file", "table_name"]

#: The formats ``.import`` reads.
FORMATS = ("csv", "tsv", "parquet", "json")
#: The format each file extension stands for (``--format`` overrides it).
EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".ndjson": "json",
    ".jsonl": "json",
}


def file_format(path: str, explicit: str | None = None) -> str:
    """The format to read ``path`` as: ``explicit``, else the one its extension names.

    Raises:
        ProgrammingError: an unknown format, or an extension that names none.
    """
    if explicit is not None:
        if explicit.lower() not in FORMATS:
            raise errors.ProgrammingError(
                f"unknown import format {explicit!r}; use one of {', '.join(FORMATS)}"
            )
        return explicit.lower()
    extension = os.path.splitext(path)[1].lower()
    found = EXTENSIONS.get(extension)
    if found is None:
        raise errors.ProgrammingError(
            f"cannot tell the format of {path} from its extension "
            f"{extension or '(none)'}; name it: .import --format {'|'.join(FORMATS)} FILE TABLE"
        )
    return found


def table_name(text: str) -> TableName:
    """``TABLE`` or ``NAMESPACE.TABLE`` as SQL writes it (unquoted names are lower-cased).

    Raises:
        ProgrammingError: ``text`` is not such a name.
    """
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    import trinity_dbapi.sql.dialect  # noqa: F401 - registers the "trinity" dialect
    from trinity_dbapi.sql.types_sql import name_of

    try:
        table: exp.Expr | None = sqlglot.parse_one(text, into=exp.Table, dialect="trinity")
    except (ParseError, TokenError):
        table = None
    if (
        not isinstance(table, exp.Table)
        or table.args.get("catalog")
        or table.alias
        or not isinstance(table.this, exp.Identifier)
    ):
        raise errors.ProgrammingError(
            f"{text!r} is not a table name: write TABLE or NAMESPACE.TABLE (double-quote a "
            'name with other characters: sales."order lines")'
        )
    db = table.args.get("db")
    return TableName(name_of(db) if db else None, name_of(table.this))


def import_file(
    connection: Any,
    path: str,
    table: str,
    *,
    fmt: str | None = None,
    created: Callable[[str], None] | None = None,
) -> int:
    """Append the rows of the file at ``path`` to ``table`` as one write; return their number.

    A table that does not exist is created from the file's columns, as
    sqlite3's ``.import`` does (its namespace must exist): the names and
    types Parquet carries, or those pyarrow infers from the first block of a
    CSV, TSV or NDJSON file; the table and its rows are one transaction.

    Args:
        connection: an open DB-API connection.
        path: the file to read.
        table: ``TABLE`` (in the connection's namespace) or ``NAMESPACE.TABLE``.
        fmt: ``csv``, ``tsv``, ``parquet`` or ``json`` (NDJSON); by default
            the file's extension decides.
        created: called with ``created table NS.T (columns)`` when the
            table was created.

    Raises:
        Error: a PEP 249 error for every failure (unknown namespace, missing
            file, wrong header, a value that does not fit); nothing was written.
    """
    label = f"cannot import {path} into {table}"
    try:
        name = table_name(table)
        namespace = name.namespace or connection.namespace
        label = f"cannot import {path} into {namespace}.{name.name}"
        kind = file_format(path, fmt)
        full = TableName(namespace, name.name)
        try:
            schema = _table_schema(connection, full)
            definition = None
        except errors.NoSuchTableError:
            schema, definition = _file_schema(path, kind, full, label)
        count = _load(connection, path, kind, full, schema, label, definition)
    except errors.Error as exc:
        if str(exc).startswith(label):
            raise
        message = f"{label}: {_one_line(exc)}"
        if isinstance(exc, (errors.DataError, errors.IntegrityError)):  # a value of the file
            message += "; nothing was imported: fix the file, then import it again"
        raise _in_context(exc, message) from exc
    if definition is not None and created is not None:
        created(f"created table {namespace}.{name.name} {definition}")
    return count


def _load(
    connection: Any,
    path: str,
    kind: str,
    table: TableName,
    schema: pa.Schema,
    label: str,
    definition: str | None,
) -> int:
    """Create the table (when ``definition`` is given) and ingest the file, all or nothing."""
    from trinity_dbapi.format.sql_text import quote_identifier

    source = FileSource(lambda: _open(path, label), kind, schema, label)
    cursor = connection.cursor()
    own = definition is not None and not connection.in_transaction
    try:
        if own:
            cursor.execute("BEGIN")
        if definition is not None:
            names = (quote_identifier(table.namespace or ""), quote_identifier(table.name))
            cursor.execute(f"CREATE TABLE {'.'.join(names)} {definition}")
        with source as rows:
            count: int = cursor.ingest(table.name, rows, namespace=table.namespace)
        if own:
            cursor.execute("COMMIT")
    except BaseException:
        if own and connection.in_transaction:
            connection.rollback()
        raise
    finally:
        cursor.close()
    return count


def _open(path: str, label: str) -> BinaryIO:
    if os.path.isdir(path):
        raise errors.ProgrammingError(f"{label}: {path} is a folder, not a file; name a file")
    try:
        return open(path, "rb")  # FileSource closes it
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
        raise errors.ProgrammingError(
            f"{label}: there is no file {path} ({exc.strerror or 'not found'}); check the path"
        ) from exc
    except OSError as exc:
        raise errors.OperationalError(
            f"{label}: cannot read {path}: {exc.strerror or _one_line(exc)}; "
            "check that the file is readable"
        ) from exc


def _table_schema(connection: Any, name: TableName) -> pa.Schema:
    """The Arrow schema of the table's rows: the types the file's values are read as."""
    from trinity_dbapi.dbapi.cursor import guard
    from trinity_dbapi.sql.engine import dispatch

    with connection.lock:
        schema: pa.Schema = guard(lambda: dispatch.arrow_schema(connection.session, name))
    return schema


def _file_schema(path: str, kind: str, table: TableName, label: str) -> tuple[pa.Schema, str]:
    """The columns of a new table for the file, as an Arrow schema and as SQL.

    Parquet's own types; for CSV, TSV and NDJSON the types pyarrow infers
    from the file's first block (a later value that does not fit fails the
    import, and the table is not created).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    file = _open(path, label)
    try:
        if kind == "parquet":
            found = pq.read_schema(file)
        elif kind == "json":
            found = pajson.open_json(file).schema
        else:
            tsv = kind == "tsv"
            parse = pacsv.ParseOptions(
                delimiter="\t" if tsv else ",",
                quote_char=False if tsv else '"',
                newlines_in_values=not tsv,
            )
            convert = pacsv.ConvertOptions(
                null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=False
            )
            found = pacsv.open_csv(file, parse_options=parse, convert_options=convert).schema
    except (pa.ArrowException, UnicodeDecodeError) as exc:
        raise errors.DataError(
            f"{label}: the table does not exist, and its columns cannot be read from the file: "
            f"{_one_line(exc)}; fix the file, or create the table first"
        ) from exc
    finally:
        file.close()
    if not found.names:
        raise errors.DataError(
            f"{label}: the table does not exist, and the file names no columns to create it "
            "with; create the table first"
        )
    fields = [pa.field(f.name, _column_type(f.type)) for f in found]
    columns = ", ".join(f"{_shown_name(f.name)} {_type_sql(f, label)}" for f in fields)
    return pa.schema(fields), f"({columns})"


def _shown_name(name: str) -> str:
    """A column name as SQL reads it back: bare when it is a plain lower-case word."""
    from trinity_dbapi.format.sql_text import quote_identifier
    from trinity_dbapi.sql.dialect import Trinity

    keywords = Trinity.tokenizer_class.KEYWORDS
    bare = re.fullmatch(r"[a-z_][a-z0-9_]*", name) and name.upper() not in keywords
    return name if bare else quote_identifier(name)


def _column_type(kind: pa.DataType) -> pa.DataType:
    """The type a new table's column gets for values of ``kind`` read from a file."""
    import pyarrow as pa

    if pa.types.is_null(kind) or pa.types.is_large_string(kind):
        return pa.string()  # a column empty in the first block: text
    if pa.types.is_timestamp(kind):
        return pa.timestamp("us", tz="UTC" if kind.tz else None)
    if pa.types.is_integer(kind) and (kind.bit_width == 8 or pa.types.is_unsigned_integer(kind)):
        # No unsigned or 1-byte integers in a table: the next signed type that holds them.
        return {8: pa.int16(), 16: pa.int32()}.get(kind.bit_width, pa.int64())
    return kind


def _type_sql(field: pa.Field, label: str) -> str:
    from trinity_dbapi.format.type_mapping import data_type_from_field

    try:
        text = str(data_type_from_field(field).to_sql())
        return text.upper() if re.fullmatch(r"[a-z0-9]+(\(\d+(, \d+)?\))?", text) else text
    except errors.Error as exc:
        raise errors.NotSupportedError(
            f"{label}: the table does not exist, and the file's column {field.name!r} has type "
            f"{field.type}, which no table column type holds ({_one_line(exc)}); create the "
            "table first"
        ) from exc


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


#: PEP 249 classes, most specific first: an error keeps its kind in a new message.
_KINDS: tuple[type[errors.Error], ...] = (
    errors.DataError,
    errors.IntegrityError,
    errors.OperationalError,
    errors.ProgrammingError,
    errors.NotSupportedError,
    errors.InternalError,
    errors.DatabaseError,
    errors.InterfaceError,
)


def _in_context(exc: errors.Error, message: str) -> errors.Error:
    """An error of ``exc``'s PEP 249 class with ``message``."""
    kind = next((k for k in _KINDS if isinstance(exc, k)), errors.Error)
    return kind(message)
