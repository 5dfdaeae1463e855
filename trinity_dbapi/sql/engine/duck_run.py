"""SQL text run in the session's DuckDB: results as Arrow, whole or streamed.

Every DuckDB error becomes ours (:mod:`.duck_errors`); a query over
lakehouse files passes its own translation, which blames a damaged file.
The relations and temporary tables a statement makes are dropped even
while ``Connection.interrupt`` keeps interrupting DuckDB. A result's Arrow
schema becomes TrinityLake columns by :func:`result_columns` (CREATE TABLE
AS, CREATE VIEW).

Imports from sql/engine/: duck_errors.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from trinity_dbapi.errors import Error
from trinity_dbapi.format.definitions import Column
from trinity_dbapi.format.sql_text import quote_identifier
from trinity_dbapi.format.type_mapping import columns_from_schema
from trinity_dbapi.sql.engine.duck_errors import arrow_error, stream_error, translate_duckdb_error

__all__ = [
    "STREAM_BATCH_ROWS",
    "drop_temporary",
    "execute_duckdb",
    "result_columns",
    "stream_duckdb",
    "unregister",
]


def unregister(duck: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop a registered relation, even while ``Connection.interrupt`` keeps interrupting DuckDB.

    The interrupt is repeated until the statement ends, and dropping the
    relation runs a (tiny) DuckDB query it may hit.
    """
    for _ in range(1000):
        try:
            duck.unregister(name)
            return
        except duckdb.InterruptException:
            continue


def drop_temporary(duck: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop the temporary table ``name``, even while ``Connection.interrupt`` keeps interrupting."""
    for _ in range(1000):
        try:
            duck.execute(f"DROP TABLE IF EXISTS {quote_identifier(name)}")
            return
        except duckdb.InterruptException:
            continue


def execute_duckdb(
    duck: duckdb.DuckDBPyConnection,
    sql: str,
    params: Sequence[Any],
    *,
    translate: Callable[[duckdb.Error], Error] | None = None,
) -> pa.Table:
    """Run ``sql`` in DuckDB with positional ``params``; DuckDB errors become ours.

    ``translate`` turns a DuckDB error into ours (:meth:`QueryFiles.translate`
    for a query over lakehouse files).
    """
    try:
        # A relation converts to Arrow without the extra copy a DB-API result makes.
        relation = duck.sql(sql, params=list(params) or None)
        if relation is None:  # not a query: no rows
            return pa.table({})
        # DuckDB 1.4 renamed arrow() to to_arrow_table().
        to_arrow = getattr(relation, "to_arrow_table", None) or relation.arrow
        table: pa.Table = to_arrow()
        return table
    except duckdb.Error as exc:
        raise (translate or translate_duckdb_error)(exc) from exc
    except pa.ArrowException as exc:
        raise arrow_error(exc) from exc


#: Rows per batch of a streamed result.
STREAM_BATCH_ROWS = 100_000


def stream_duckdb(
    duck: duckdb.DuckDBPyConnection,
    sql: str,
    params: Sequence[Any],
    *,
    track: Callable[[Generator[pa.RecordBatch, None, None]], None] | None = None,
    on_close: Callable[[], None] | None = None,
    translate: Callable[[duckdb.Error], Error] | None = None,
    translate_stream: Callable[[OSError], Error] | None = None,
) -> pa.RecordBatchReader:
    """Run ``sql`` on ``duck`` (a cursor of its own) and stream its rows.

    The reader owns the cursor: it is closed when the last batch is read or
    the reader is dropped, or by whoever ``track`` hands the generator of
    batches to (the session closes it when the connection closes); then
    ``on_close`` is called. DuckDB errors surface here or while reading;
    ``translate_stream`` turns one met while reading (which Arrow's C stream
    hands over as ``OSError``) into ours (:meth:`QueryFiles.translate_stream`).
    """
    translate = translate or translate_duckdb_error
    translate_stream = translate_stream or stream_error

    def close() -> None:
        if on_close is not None:
            on_close()
        duck.close()

    try:
        relation = duck.sql(sql, params=list(params) or None)
        if relation is None:
            close()
            return pa.table({}).to_reader()
        to_reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
        reader: pa.RecordBatchReader = to_reader(STREAM_BATCH_ROWS)
    except duckdb.Error as exc:
        error = translate(exc)
        close()
        raise error from exc
    except pa.ArrowException as exc:
        close()
        raise arrow_error(exc) from exc

    def batches() -> Generator[pa.RecordBatch, None, None]:
        try:
            yield from reader
        except duckdb.Error as exc:
            raise translate(exc) from exc
        except OSError as exc:
            # Arrow's C stream reports DuckDB's errors while reading as OSError
            # carrying DuckDB's message ("INTERRUPT Error: Interrupted!").
            raise translate_stream(exc) from exc
        finally:
            close()

    stream = batches()
    if track is not None:
        track(stream)
    return pa.RecordBatchReader.from_batches(reader.schema, stream)


#: DuckDB's unsigned results (a parameter from 2**63 binds as UBIGINT) as the
#: narrowest TrinityLake type that holds every value: the rows then convert exactly.
_UNSIGNED = {
    pa.uint8(): pa.int16(),
    pa.uint16(): pa.int32(),
    pa.uint32(): pa.int64(),
    pa.uint64(): pa.decimal128(20, 0),
}


def result_columns(schema: pa.Schema) -> tuple[Column, ...]:
    """The columns of a table (or view) holding a DuckDB result of ``schema``.

    DuckDB results carry no field IDs: ``columns_from_schema`` numbers them.
    """
    plain = pa.schema(
        [
            field.remove_metadata().with_type(_UNSIGNED.get(field.type, field.type))
            for field in schema
        ]
    )
    return columns_from_schema(plain)
