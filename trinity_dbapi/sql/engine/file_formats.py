"""CSV, Parquet and NDJSON files as Arrow batches, and Arrow batches as those files.

``COPY`` and the shell's ``.import`` read files through :class:`FileSource`,
and ``COPY ... TO`` writes them with :func:`write_file`; pyarrow does the
work, DuckDB never touches the file (its sandbox stays closed). Whoever
calls them has opened the file: :mod:`.file_access` decides which files a
connection may open.

Reading streams the file, never whole: ``pyarrow.csv.open_csv`` with the
table's column types (values parse straight to the declared types),
``ParquetFile.iter_batches``, ``pyarrow.json.open_json`` with the table's
schema. Columns are matched by name: a CSV file's header line names its
columns (or, without a header, it has the table's columns in order),
Parquet files carry their names, NDJSON objects name their fields. A column
the table lacks is an error; a table column the file lacks is NULL.

In CSV an empty field is NULL and a quoted empty field (``""``) the empty
string, both ways, so NULL and ``''`` survive a round trip.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Iterator
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, BinaryIO

from trinity_dbapi import errors

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["PARQUET_BATCH_ROWS", "FileSource", "write_file"]

#: Rows per batch read from a Parquet file.
PARQUET_BATCH_ROWS = 64 * 1024


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (its type when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__


class FileSource:
    """A file's rows as a ``RecordBatchReader``, open in a ``with`` block.

    A read error while the batches are pulled becomes a PEP 249 error naming
    the file (pyarrow's own exceptions would otherwise surface as internal
    errors of the driver).

    Args:
        opener: opens the file for binary reading (called once, on entering).
        kind: ``csv``, ``tsv`` (no quoting), ``parquet`` or ``json`` (NDJSON).
        schema: the table's Arrow schema: the names and types values are read as.
        label: how messages start, e.g. ``cannot import f.csv into sales.t``.
        header: whether a CSV file starts with a header line naming its columns.
        delimiter: a CSV file's field separator (``,``; tab for ``tsv``).
        again: what to do once the file is fixed, for messages.
        nothing: what happened to the table, for messages.
    """

    def __init__(
        self,
        opener: Callable[[], BinaryIO],
        kind: str,
        schema: pa.Schema,
        label: str,
        *,
        header: bool = True,
        delimiter: str | None = None,
        again: str = "import it again",
        nothing: str = "nothing was imported",
    ) -> None:
        self.opener = opener
        self.kind = kind
        self.schema = schema
        self.label = label
        self.header = header
        self.delimiter = delimiter or ("\t" if kind == "tsv" else ",")
        self.again = again
        self.nothing = nothing
        self.columns: list[str] = []  # the file's columns, in order (CSV, TSV)
        self._file: BinaryIO | None = None
        self._close: Callable[[], None] = lambda: None

    def __enter__(self) -> pa.RecordBatchReader:
        import pyarrow as pa

        try:
            self._file = self.opener()
            if self.kind == "parquet":
                reader = self._parquet()
            elif self.kind == "json":
                reader = self._json()
            else:
                reader = self._csv()
        except (pa.ArrowException, UnicodeDecodeError, csv.Error) as exc:
            self.__exit__()
            raise self._unreadable(exc) from exc
        except BaseException:
            self.__exit__()
            raise
        schema = reader.schema
        if self.kind == "json":  # times come as text and leave as the table's times
            for i, name in enumerate(schema.names):
                if pa.types.is_time(self.schema.field(name).type):
                    schema = schema.set(i, self.schema.field(name))
        return pa.RecordBatchReader.from_batches(schema, self._batches(reader))

    def __exit__(self, *exc: object) -> None:
        self._close()
        if self._file is not None:
            self._file.close()

    def _batches(self, reader: pa.RecordBatchReader) -> Iterator[pa.RecordBatch]:
        import pyarrow as pa

        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return
            except (pa.ArrowException, OSError) as exc:
                raise self._unreadable(exc) from exc
            if self.kind == "json":
                batch = self._json_times(batch)
            yield batch

    def _json_times(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """An NDJSON file's times, read as text, as the table's time values (no Arrow cast does it)."""
        import pyarrow as pa

        columns = list(batch.columns)
        for i, name in enumerate(batch.schema.names):
            kind = self.schema.field(name).type
            if not pa.types.is_time(kind):
                continue
            try:
                values = [
                    None if v is None else time.fromisoformat(v) for v in columns[i].to_pylist()
                ]
            except ValueError as exc:
                raise self._unreadable(ValueError(f"column {name!r}: {exc}")) from exc
            columns[i] = pa.array(values, kind)
        return pa.RecordBatch.from_arrays(columns, names=batch.schema.names)

    def _unreadable(self, exc: BaseException) -> errors.Error:
        message = one_line(exc)
        for i, column in enumerate(self.columns):  # pyarrow numbers CSV columns from 0
            message = message.replace(f"In CSV column #{i}:", f"column {column!r}:")
        if self.kind == "json" and "unexpected field" in message:
            message += (
                " (an object has a field the table has no column for; the columns are "
                f"{', '.join(self.schema.names)})"
            )
        return errors.DataError(
            f"{self.label}: {message}; {self.nothing}: fix the file (or the table's "
            f"column types), then {self.again}"
        )

    # -- the formats

    def _csv(self) -> pa.RecordBatchReader:
        import pyarrow.csv as pacsv

        tsv = self.kind == "tsv"
        self.columns = self._header(tsv) if self.header else list(self.schema.names)
        self._check_nested()
        types = {field.name: field.type for field in self.schema}
        read = pacsv.ReadOptions(
            use_threads=True, column_names=None if self.header else self.columns
        )
        parse = pacsv.ParseOptions(
            delimiter=self.delimiter,
            # TSV has no quoting; CSV quotes fields that hold line breaks (ours does).
            quote_char=False if tsv else '"',
            newlines_in_values=not tsv,
        )
        convert = pacsv.ConvertOptions(
            column_types={name: types[name] for name in self.columns},
            # An empty field is NULL, a quoted empty field ("") an empty string:
            # what the shell's csv output and COPY TO write.
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        )
        reader = pacsv.open_csv(
            self._file, read_options=read, parse_options=parse, convert_options=convert
        )
        self._close = reader.close
        return reader

    def _header(self, tsv: bool) -> list[str]:
        """The names of the header line, checked against the table's columns."""
        assert self._file is not None
        text = io.TextIOWrapper(self._file, encoding="utf-8-sig", newline="")
        try:
            dialect: dict[str, Any] = {"delimiter": self.delimiter}
            if tsv:
                dialect["quoting"] = csv.QUOTE_NONE
            header = next(csv.reader(text, **dialect), None)
        finally:
            text.detach()
        self._file.seek(0)
        if not header:
            raise errors.DataError(
                f"{self.label}: the file is empty; its first line must be a header naming "
                f"the columns ({', '.join(self.schema.names)})"
            )
        self._check_names(header, "header line")
        return header

    def _check_nested(self) -> None:
        import pyarrow as pa

        from trinity_dbapi.format.type_mapping import data_type_from_field

        for name in self.columns:
            field = self.schema.field(name)
            if pa.types.is_nested(field.type):
                kind = data_type_from_field(field).to_sql()
                raise errors.NotSupportedError(
                    f"{self.label}: column {name!r} is {kind}, which a "
                    f"{'TSV' if self.kind == 'tsv' else 'CSV'} file cannot hold; leave it out "
                    "of the file, or use Parquet or NDJSON"
                )

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

        parquet = pq.ParquetFile(self._file)
        self._close = parquet.close
        self._check_names(parquet.schema_arrow.names, "file's schema")
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS)
        return pa.RecordBatchReader.from_batches(parquet.schema_arrow, batches)

    def _json(self) -> pa.RecordBatchReader:
        import pyarrow as pa
        import pyarrow.json as pajson

        # JSON has no date or time type: those come as strings
        # (as write_file writes them), which the write casts.
        fields = [pa.field(f.name, _json_type(f.type)) for f in self.schema]
        parse = pajson.ParseOptions(
            explicit_schema=pa.schema(fields), unexpected_field_behavior="error"
        )
        reader = pajson.open_json(self._file, parse_options=parse)
        self._close = reader.close
        return reader


def _has_map(kind: pa.DataType) -> bool:
    import pyarrow as pa

    if pa.types.is_map(kind):
        return True
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _has_map(kind.value_type)
    return pa.types.is_struct(kind) and any(_has_map(field.type) for field in kind)


def _json_type(kind: pa.DataType) -> pa.DataType:
    import pyarrow as pa

    textual = (pa.types.is_date, pa.types.is_time)
    if any(test(kind) for test in textual):
        return pa.string()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return pa.list_(_json_type(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _json_type(f.type)) for f in kind])
    return kind


# -- writing ---------------------------------------------------------------------------


def write_file(
    rows: pa.RecordBatchReader,
    file: BinaryIO,
    kind: str,
    *,
    header: bool = True,
    delimiter: str = ",",
    check: Callable[[], None] = lambda: None,
) -> int:
    """Write ``rows`` to ``file`` as ``kind`` (``csv``, ``parquet``, ``json``); return their number.

    ``check`` runs before each batch (the statement's interrupt check).

    Raises:
        NotSupportedError: a binary or map column in CSV or NDJSON, a nested one in CSV.
    """
    import pyarrow as pa

    count = 0
    if kind != "parquet":
        for field in rows.schema:
            binary = pa.types.is_binary(field.type) or pa.types.is_fixed_size_binary(field.type)
            binary = binary or _has_map(field.type)  # NDJSON has no map pyarrow reads back
            if binary or (kind == "csv" and pa.types.is_nested(field.type)):
                other = "parquet" if binary else "parquet or json"
                raise errors.NotSupportedError(
                    f"column {field.name!r} is {field.type}, which COPY does not write to "
                    f"{kind.upper()}; leave it out of the query, or write FORMAT {other}"
                )
    if kind == "csv":
        import pyarrow.csv as pacsv

        options = pacsv.WriteOptions(include_header=header, delimiter=delimiter)
        with pacsv.CSVWriter(file, rows.schema, write_options=options) as writer:
            for batch in rows:
                check()
                writer.write_batch(batch)
                count += batch.num_rows
    elif kind == "parquet":
        import pyarrow.parquet as pq

        with pq.ParquetWriter(file, rows.schema) as writer:
            for batch in rows:
                check()
                writer.write_batch(batch)
                count += batch.num_rows
    else:
        keys = [json.dumps(name, ensure_ascii=False) + ":" for name in rows.schema.names]
        for batch in rows:
            check()
            # Column by column (Arrow casts where they give JSON), then row by row.
            columns = [
                [key + text for text in _json_column(c)] for key, c in zip(keys, batch.columns)
            ]
            lines = ["{" + ",".join(fields) + "}\n" for fields in zip(*columns)]
            file.write("".join(lines).encode())
            count += batch.num_rows
    return count


def _json_column(column: pa.Array) -> list[str]:
    """Each value of ``column`` as JSON text (``null`` for NULL)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_floating(kind) and pc.all(pc.is_finite(column)).as_py() is not False:
        texts = pc.cast(column, pa.string())  # finite (or NULL): Arrow's text is JSON's
    elif pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        texts = pc.cast(column, pa.string())
    elif pa.types.is_decimal(kind) or pa.types.is_date(kind) or pa.types.is_timestamp(kind):
        # Exact decimals, ISO dates and timestamps: text without characters to escape.
        texts = pc.binary_join_element_wise('"', pc.cast(column, pa.string()), '"', "")
    else:
        return [_json(value) for value in column.to_pylist()]
    return pc.fill_null(texts, "null").to_pylist()


def _json(value: Any) -> str:
    """One value as JSON text: numbers as numbers, dates, times and decimals as strings."""
    if value is None or isinstance(value, (bool, int, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return json.dumps(value) if math.isfinite(value) else json.dumps(str(value))
    if isinstance(value, (Decimal, date, datetime, time)):
        return json.dumps(str(value) if isinstance(value, Decimal) else value.isoformat())
    if isinstance(value, timedelta):
        return json.dumps(str(value))
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):  # a list, or a map's (key, value) pairs
        return "[" + ",".join(_json(item) for item in value) + "]"
    return json.dumps(str(value))
