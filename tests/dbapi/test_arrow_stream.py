"""The cursor is an Arrow C stream (``__arrow_c_stream__``): consumers take results without Python objects."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from decimal import Decimal

import duckdb
import pyarrow as pa
import pytest

import trinity_dbapi
from trinity_dbapi.dbapi.connection import Connection
from trinity_dbapi.errors import InterfaceError, ProgrammingError

QUERY = (
    "SELECT i, 'v' || i AS s, i * 1.5 AS f, CAST(i AS DECIMAL(9, 2)) AS d, "
    "TIMESTAMPTZ '2024-01-01 00:00:00+00' + i * INTERVAL 1 HOUR AS ts "
    "FROM range(250000) AS t(i)"
)


@pytest.fixture
def con() -> Iterator[Connection]:
    connection = trinity_dbapi.connect("memory://stream", create=True, autocommit=True)
    yield connection
    connection.close()


def test_pyarrow_reads_the_stream_as_fetch_arrow_table_does(con: Connection) -> None:
    expected = con.cursor().execute(QUERY).fetch_arrow_table()
    cur = con.cursor().execute(QUERY)
    table = pa.table(cur)
    assert table.equals(expected)
    assert table.num_rows == 250_000
    assert table.column("d")[3].as_py() == Decimal("3.00")
    assert table.column("ts")[1].as_py() == datetime(2024, 1, 1, 1, tzinfo=timezone.utc)
    assert cur.fetchone() is None  # the stream consumed the result


def test_the_stream_holds_the_rows_not_yet_fetched(con: Connection) -> None:
    cur = con.cursor().execute("SELECT i FROM range(5) AS t(i)")
    assert cur.fetchone() == (0,)
    assert pa.table(cur).column("i").to_pylist() == [1, 2, 3, 4]


def test_duckdb_takes_the_cursor(con: Connection) -> None:
    cur = con.cursor().execute("SELECT i, i * 2 AS twice FROM range(1000) AS t(i)")
    rel = duckdb.connect().from_arrow(cur)
    assert rel.aggregate("sum(twice), count(*)").fetchall() == [(999_000, 1000)]


def test_pandas_from_arrow(con: Connection) -> None:
    pd = pytest.importorskip("pandas")
    if not hasattr(pd.DataFrame, "from_arrow"):
        pytest.skip("DataFrame.from_arrow is pandas 3's")
    frame = pd.DataFrame.from_arrow(con.cursor().execute("SELECT i FROM range(4) AS t(i)"))
    assert frame["i"].tolist() == [0, 1, 2, 3]


def test_polars_takes_the_cursor(con: Connection) -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame(con.cursor().execute("SELECT i FROM range(4) AS t(i)"))
    assert frame["i"].to_list() == [0, 1, 2, 3]


def test_no_result_set_and_closed_cursors_are_named(con: Connection) -> None:
    cur = con.cursor()
    with pytest.raises(ProgrammingError, match="no result set"):
        pa.table(cur)
    cur.execute("CREATE NAMESPACE n")
    with pytest.raises(ProgrammingError, match="no result set"):
        pa.table(cur)
    cur.close()
    with pytest.raises(InterfaceError):
        pa.table(cur)


def test_requested_schema_is_passed_on(con: Connection) -> None:
    cur = con.cursor().execute("SELECT i FROM range(3) AS t(i)")
    reader = pa.RecordBatchReader.from_stream(cur, schema=pa.schema([("i", pa.int64())]))
    assert reader.read_all().column("i").to_pylist() == [0, 1, 2]
