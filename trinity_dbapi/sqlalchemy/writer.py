"""``DataFrame.to_sql(..., method=arrow_insert)``: a frame as one Arrow write.

pandas' default ``to_sql`` sends rows through SQLAlchemy's ``executemany``,
which the driver already turns into one write and one commit, but SQLAlchemy
first builds a parameter dict per row. ``arrow_insert`` skips the rows: it
hands the frame's columns to :meth:`Cursor.ingest
<trinity_dbapi.dbapi.cursor.Cursor.ingest>` as Arrow arrays, the way
Snowflake's ``pd_writer`` and ADBC's ingestion do.

Imports from sqlalchemy/: compat.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from trinity_dbapi.sqlalchemy.compat import driver_connection


def arrow_insert(table: Any, conn: Any, keys: Sequence[str], data_iter: Iterator[Any]) -> int:
    """A ``method`` for ``DataFrame.to_sql``: insert one chunk as one Arrow write.

    Args:
        table: pandas' ``SQLTable`` (its ``name`` and ``schema`` name the table).
        conn: the SQLAlchemy connection pandas is writing through; the rows
            join its transaction, so ``to_sql`` stays one commit.
        keys: the column names, in order.
        data_iter: the chunk's rows.

    Returns:
        The number of rows inserted.

    Example:
        >>> import pandas as pd, sqlalchemy as sa
        >>> engine = sa.create_engine("trinity:///memory://doc-to-sql")
        >>> frame = pd.DataFrame({"id": [1, 2], "name": ["a", "b"]})
        >>> frame.to_sql("people", engine, index=False, method=arrow_insert)
        2
    """
    columns = _columns(data_iter, len(keys))
    try:
        data = _whole_frame(table, keys, columns)
        if data is None:
            arrays = [pa.array(column, from_pandas=True) for column in columns]
            data = pa.Table.from_arrays(arrays, names=list(keys))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        # A column Arrow cannot type (Python objects of several types, an
        # integer beyond int64): pandas' own row insert, whose executemany
        # converts each value by the same rule an Arrow column would meet.
        rows = [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]
        conn.execute(table.table.insert(), rows)
        return len(rows)
    cursor = driver_connection(conn).cursor()
    try:
        return int(cursor.ingest(table.name, data, namespace=table.schema))
    finally:
        cursor.close()


def _whole_frame(table: Any, keys: Sequence[str], columns: list[Any]) -> pa.Table | None:
    """The frame itself as Arrow when this chunk is all of it (``chunksize=None``).

    pandas has already turned every column into Python objects (datetimes
    included) before calling the method; converting the original frame
    instead keeps the native column types and skips a second conversion.
    """
    frame = getattr(table, "frame", None)
    if frame is None or not columns or any(len(column) != len(frame) for column in columns):
        return None
    if len(frame.columns) + len(table.index or ()) != len(keys):
        return None
    if table.index is not None:
        # As pandas' own insert does: the index becomes the leading columns.
        frame = frame.copy(deep=False)
        frame.index.names = table.index
        frame = frame.reset_index()
    frame = frame.set_axis(list(keys), axis=1)
    return pa.Table.from_pandas(frame, preserve_index=False)


def _columns(data_iter: Iterator[Any], width: int) -> list[Any]:
    """The chunk's columns, without building a tuple per row when possible.

    pandas passes ``zip(*column_arrays)``: the zip's pickle form names the
    iterators it zips, and each array iterator's names its array and position
    (CPython's documented ``__reduce__`` of builtin iterators), so the columns
    come back as the arrays pandas already made. Anything else is read row
    by row.
    """
    try:
        reduced: Any = data_iter.__reduce__()
        function, iterators = reduced[:2]
        if function is zip and len(iterators) == width:
            columns = []
            for iterator in iterators:
                _, (array,), position = iterator.__reduce__()
                if not hasattr(array, "__array__"):
                    raise TypeError("not an array")
                columns.append(array[position:])
            return columns
    except (TypeError, ValueError, AttributeError):
        pass
    rows = list(data_iter)
    return [list(column) for column in zip(*rows, strict=True)] if rows else [[]] * width
