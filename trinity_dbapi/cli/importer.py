"""``.import FILE TABLE``: load a CSV, TSV, Parquet or NDJSON file into a table.

The file is streamed, never read whole: pyarrow reads it in blocks
(``pyarrow.csv.open_csv`` with the table's column types, so values parse
straight to the declared types; ``ParquetFile.iter_batches``;
``pyarrow.json.open_json`` with the table's schema) and ``Cursor.ingest``
writes the batches as they come: one write, and in autocommit mode one
commit, so a file that fails anywhere changes nothing.

Columns are matched by name: a CSV or TSV file starts with a header line
naming its columns, Parquet files carry their names, NDJSON objects name
their fields. A column the table lacks is an error; a table column the file
lacks is NULL (an error if it is NOT NULL).

Every error is a PEP 249 error whose one-line message starts with
``cannot import FILE into TABLE:`` and says what to fix.

Imports from cli/: nothing.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from trinity_dbapi import errors

if TYPE_CHECKING:
    import pyarrow as pa

    from trinity_dbapi.sql.model import TableName

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
#: Rows per batch read from a Parquet file.
PARQUET_BATCH_ROWS = 64 * 1024


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
    from trinity_dbapi.sql.model import TableName
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


def import_file(connection: Any, path: str, table: str, *, fmt: str | None = None) -> int:
    """Append the rows of the file at ``path`` to ``table`` as one write; return their number.

    Args:
        connection: an open DB-API connection.
        path: the file to read.
        table: ``TABLE`` (in the connection's namespace) or ``NAMESPACE.TABLE``.
        fmt: ``csv``, ``tsv``, ``parquet`` or ``json`` (NDJSON); by default
            the file's extension decides.

    Raises:
        Error: a PEP 249 error for every failure (unknown table, missing file,
            wrong header, a value that does not fit); nothing was written.
    """
    label = f"cannot import {path} into {table}"
    try:
        name = table_name(table)
        namespace = name.namespace or connection.namespace
        label = f"cannot import {path} into {namespace}.{name.name}"
        kind = file_format(path, fmt)
        schema = _table_schema(connection, name)
        with _Source(path, kind, schema, label) as rows:
            cursor = connection.cursor()
            try:
                count: int = cursor.ingest(name.name, rows, namespace=namespace)
            finally:
                cursor.close()
    except errors.Error as exc:
        if str(exc).startswith(label):
            raise
        message = f"{label}: {_one_line(exc)}"
        if isinstance(exc, (errors.DataError, errors.IntegrityError)):  # a value of the file
            message += "; nothing was imported: fix the file, then import it again"
        raise _in_context(exc, message) from exc
    return count


def _table_schema(connection: Any, name: TableName) -> pa.Schema:
    """The Arrow schema of the table's rows: the types the file's values are read as."""
    from trinity_dbapi.dbapi.cursor import guard
    from trinity_dbapi.sql.engine import dispatch

    with connection.lock:
        schema: pa.Schema = guard(lambda: dispatch.arrow_schema(connection.session, name))
    return schema


class _Source:
    """The file's rows as a ``RecordBatchReader``, open in a ``with`` block.

    A read error while the batches are pulled becomes a PEP 249 error naming
    the file (pyarrow's own exceptions would otherwise surface as internal
    errors of the driver).
    """

    def __init__(self, path: str, kind: str, schema: pa.Schema, label: str) -> None:
        self.path = path
        self.kind = kind
        self.schema = schema
        self.label = label
        self.columns: list[str] = []  # the file's columns, in order (CSV, TSV)
        self._close: Callable[[], None] = lambda: None

    def __enter__(self) -> pa.RecordBatchReader:
        import pyarrow as pa

        if os.path.isdir(self.path):
            raise errors.ProgrammingError(
                f"{self.label}: {self.path} is a folder, not a file; name a file"
            )
        try:
            if self.kind == "parquet":
                reader = self._parquet()
            elif self.kind == "json":
                reader = self._json()
            else:
                reader = self._csv()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            raise errors.ProgrammingError(
                f"{self.label}: there is no file {self.path} ({exc.strerror or 'not found'}); "
                "check the path"
            ) from exc
        except OSError as exc:
            raise errors.OperationalError(
                f"{self.label}: cannot read {self.path}: {exc.strerror or _one_line(exc)}; "
                "check that the file is readable"
            ) from exc
        except (pa.ArrowException, UnicodeDecodeError, csv.Error) as exc:
            raise self._unreadable(exc) from exc
        return pa.RecordBatchReader.from_batches(reader.schema, self._batches(reader))

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _batches(self, reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except (pa.ArrowException, OSError) as exc:
                raise self._unreadable(exc) from exc
            yield batch

    def _unreadable(self, exc: BaseException) -> errors.Error:
        message = _one_line(exc)
        for i, column in enumerate(self.columns):  # pyarrow numbers CSV columns from 0
            message = message.replace(f"In CSV column #{i}:", f"column {column!r}:")
        if self.kind == "json" and "unexpected field" in message:
            message += (
                " (an object has a field the table has no column for; the columns are "
                f"{', '.join(self.schema.names)})"
            )
        return errors.DataError(
            f"{self.label}: {message}; nothing was imported: fix the file (or the table's "
            "column types), then import it again"
        )

    # -- the formats

    def _csv(self) -> pa.RecordBatchReader:
        import pyarrow.csv as pacsv

        tsv = self.kind == "tsv"
        self.columns = self._header(tsv)
        types = {field.name: field.type for field in self.schema}
        read = pacsv.ReadOptions(use_threads=True)
        parse = pacsv.ParseOptions(
            delimiter="\t" if tsv else ",",
            # TSV has no quoting; CSV quotes fields that hold line breaks (ours does).
            quote_char=False if tsv else '"',
            newlines_in_values=not tsv,
        )
        convert = pacsv.ConvertOptions(
            column_types={name: types[name] for name in self.columns},
            # An empty field is NULL, a quoted empty field ("") an empty string:
            # what the shell's csv output writes.
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        )
        reader = pacsv.open_csv(
            self.path, read_options=read, parse_options=parse, convert_options=convert
        )
        self._close = reader.close
        return reader

    def _header(self, tsv: bool) -> list[str]:
        """The names of the header line, checked against the table's columns."""
        import pyarrow as pa

        from trinity_dbapi.format.type_mapping import data_type_from_field

        with open(self.path, encoding="utf-8-sig", newline="") as file:
            dialect = {"delimiter": "\t", "quoting": csv.QUOTE_NONE} if tsv else {}
            header = next(csv.reader(file, **dialect), None)  # type: ignore[arg-type]
        if not header:
            raise errors.DataError(
                f"{self.label}: the file is empty; its first line must be a header naming "
                f"the columns ({', '.join(self.schema.names)})"
            )
        self._check_names(header, "header line")
        for name in header:
            field = self.schema.field(name)
            if pa.types.is_nested(field.type):
                kind = data_type_from_field(field).to_sql()
                raise errors.NotSupportedError(
                    f"{self.label}: column {name!r} is {kind}, which a "
                    f"{self.kind.upper()} file cannot hold; leave it out of the file, or "
                    "import Parquet or NDJSON"
                )
        return header

    def _check_names(self, names: list[str], where: str) -> None:
        known = set(self.schema.names)
        unknown = [name for name in names if name not in known]
        twice = sorted({name for name in names if names.count(name) > 1})
        if unknown or twice:
            problem = (
                f"names {', '.join(map(repr, unknown))}, which the table has no column for"
                if unknown
                else f"names {', '.join(map(repr, twice))} twice"
            )
            raise errors.ProgrammingError(
                f"{self.label}: the {where} {problem}; the table's columns are "
                f"{', '.join(self.schema.names)}: fix the {where}"
            )

    def _parquet(self) -> pa.RecordBatchReader:
        import pyarrow as pa
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(self.path)
        self._close = parquet.close
        self._check_names(parquet.schema_arrow.names, "file's schema")
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS)
        return pa.RecordBatchReader.from_batches(parquet.schema_arrow, batches)

    def _json(self) -> pa.RecordBatchReader:
        import pyarrow as pa
        import pyarrow.json as pajson

        # JSON has no date type: dates come as strings, which the write casts.
        fields = [
            pa.field(f.name, pa.string() if pa.types.is_date(f.type) else f.type)
            for f in self.schema
        ]
        parse = pajson.ParseOptions(
            explicit_schema=pa.schema(fields), unexpected_field_behavior="error"
        )
        reader = pajson.open_json(self.path, parse_options=parse)
        self._close = reader.close
        return reader


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
