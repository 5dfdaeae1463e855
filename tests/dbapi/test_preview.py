"""duckdb's short forms (``arrow()``, ``df()``, ``pl()``) and a cursor that prints a preview.

A preview (``repr``, ``_repr_html_``) peeks at the next rows: every fetch
afterwards still returns every row, in order, whether the result streams
from DuckDB or was whole from the start.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import date

import pyarrow as pa
import pytest

import trinity_dbapi
from trinity_dbapi.dbapi.connection import Connection
from trinity_dbapi.dbapi.preview import PREVIEW_ROWS
from trinity_dbapi.errors import InterfaceError, ProgrammingError

#: 25 rows of DuckDB's: a streamed result, its count unknown until read.
QUERY = (
    "SELECT i, 'n' || i AS name, CASE WHEN i % 2 = 0 THEN i * 1.5 END AS f FROM range(25) AS t(i)"
)
ALL_ROWS = [(i, f"n{i}", i * 1.5 if i % 2 == 0 else None) for i in range(25)]


@pytest.fixture
def con() -> Iterator[Connection]:
    connection = trinity_dbapi.connect("memory://preview", create=True, autocommit=True)
    yield connection
    connection.close()


# -- the short forms --------------------------------------------------------------------


def test_arrow_is_fetch_arrow_table(con: Connection) -> None:
    expected = con.cursor().execute(QUERY).fetch_arrow_table()
    cur = con.cursor().execute(QUERY)
    assert cur.fetchone() == ALL_ROWS[0]
    rest = cur.arrow()
    assert isinstance(rest, pa.Table)
    assert rest.equals(expected.slice(1))
    assert cur.fetchone() is None


def test_df_is_fetch_df(con: Connection) -> None:
    pytest.importorskip("pandas")
    expected = con.cursor().execute(QUERY).fetch_df()
    frame = con.cursor().execute(QUERY).df()
    assert frame.equals(expected)
    assert frame["name"].tolist() == [row[1] for row in ALL_ROWS]


def test_pl_is_a_polars_data_frame_of_the_rows(con: Connection) -> None:
    pl = pytest.importorskip("polars")
    frame = con.cursor().execute(QUERY).pl()
    assert isinstance(frame, pl.DataFrame)
    assert frame.rows() == ALL_ROWS
    assert frame.equals(pl.from_arrow(con.cursor().execute(QUERY).arrow()))


@pytest.mark.parametrize(("method", "package"), [("pl", "polars"), ("df", "pandas")])
def test_a_missing_package_is_an_interface_error_that_takes_no_row(
    con: Connection, monkeypatch: pytest.MonkeyPatch, method: str, package: str
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # "import polars" raises ImportError
    cur = con.cursor().execute(QUERY)
    with pytest.raises(
        InterfaceError, match=f"needs {package}, which is not installed: pip install"
    ):
        getattr(cur, method)()
    assert cur.fetchall() == ALL_ROWS  # nothing was taken


def test_short_forms_without_a_result_set(con: Connection) -> None:
    cur = con.cursor()
    for method in ("arrow", "df", "pl"):
        with pytest.raises(ProgrammingError, match="no result set"):
            getattr(cur, method)()
    cur.close()
    with pytest.raises(InterfaceError, match="cursor is closed"):
        cur.arrow()


# -- the preview ------------------------------------------------------------------------


def test_repr_shows_the_first_rows_and_takes_none(con: Connection) -> None:
    cur = con.cursor().execute(QUERY)
    text = repr(cur)
    lines = text.splitlines()
    assert lines[0] == (
        "<trinity_dbapi Cursor: 3 columns, rows 1 to 10 shown, more follow "
        "(counted as they are fetched)>"
    )
    assert lines[1:6] == [
        "i | name | f",
        "--+------+-----",
        "0 | n0   |  0.0",  # numbers right-aligned
        "1 | n1   | NULL",
        "2 | n2   |  3.0",
    ]
    assert [line.split(" | ")[1].strip() for line in lines[3:13]] == [f"n{i}" for i in range(10)]
    assert lines[-1] == "…"
    assert repr(cur) == text  # a second look reads nothing new
    assert cur.rownumber == 0
    assert cur.fetchall() == ALL_ROWS


def test_a_preview_between_fetches_shows_the_next_rows(con: Connection) -> None:
    cur = con.cursor().execute(QUERY)
    assert cur.fetchmany(3) == ALL_ROWS[:3]
    assert repr(cur).splitlines()[0].startswith("<trinity_dbapi Cursor: 3 columns, rows 4 to 13")
    assert cur.fetchone() == ALL_ROWS[3]
    assert cur.fetchmany(20) == ALL_ROWS[4:24]
    # The last row: the result was read to its end, so its size is known.
    assert repr(cur).splitlines()[0] == "<trinity_dbapi Cursor: 3 columns, row 25 of 25>"
    assert cur.fetchall() == [ALL_ROWS[24]]
    assert repr(cur) == "<trinity_dbapi Cursor: 3 columns, no rows left to fetch>"


def test_the_count_is_shown_when_known(con: Connection) -> None:
    cur = con.cursor().execute("SELECT i FROM range(3) AS t(i)")
    assert repr(cur).splitlines()[0] == "<trinity_dbapi Cursor: 1 column, 3 rows>"
    assert cur.fetchall() == [(0,), (1,), (2,)]
    # A result whole from the start (SHOW) has its count before any read.
    cur.execute("CREATE NAMESPACE ns")
    for i in range(12):
        cur.execute(f"CREATE TABLE ns.t{i:02} (v INT4)")
    cur.execute("SHOW TABLES IN ns")
    assert repr(cur).splitlines()[0] == "<trinity_dbapi Cursor: 1 column, rows 1 to 10 of 12>"
    assert [row[0] for row in cur.fetchall()] == [f"t{i:02}" for i in range(12)]


def test_repr_html_is_a_table_of_the_first_rows(con: Connection) -> None:
    cur = con.cursor().execute(
        "SELECT i, CASE WHEN i = 1 THEN NULL ELSE '<b>' || i END AS s FROM range(40) AS t(i)"
    )
    page = cur._repr_html_()
    assert page is not None
    assert page.startswith("<table><caption>trinity_dbapi Cursor: 2 columns, rows 1 to 10 shown")
    assert "<thead><tr><th>i</th><th>s</th></tr></thead>" in page
    assert "<tr><td>0</td><td>&lt;b&gt;0</td></tr>" in page  # escaped
    assert "<tr><td>1</td><td><em>NULL</em></td></tr>" in page
    assert page.count("<tr><td>") == PREVIEW_ROWS  # and a last row saying more follow:
    assert '<td colspan="2">…</td>' in page
    assert cur.fetchall() == [(i, None if i == 1 else f"<b>{i}") for i in range(40)]


def test_a_preview_of_a_large_streamed_result_keeps_every_row(con: Connection) -> None:
    cur = con.cursor().execute("SELECT i FROM range(300000) AS t(i)")
    assert "rows 1 to 10 shown" in repr(cur)
    assert cur._repr_html_() is not None
    table = cur.fetch_arrow_table()
    assert table.num_rows == 300_000
    assert table.column("i").to_pylist() == list(range(300_000))


def test_a_value_python_cannot_hold_is_shown_as_its_text(con: Connection) -> None:
    cur = con.cursor().execute("SELECT i, DATE '294247-01-10' AS far FROM range(2) AS t(i)")
    text = repr(cur)
    assert "294247-01-10" in text
    assert text.splitlines()[0] == "<trinity_dbapi Cursor: 2 columns, 2 rows>"
    table = cur.arrow()  # still there, as Arrow (fetchall would refuse it)
    assert table.column("i").to_pylist() == [0, 1]


def test_repr_without_rows(con: Connection) -> None:
    cur = con.cursor()
    assert repr(cur) == "<trinity_dbapi Cursor: no result set>"
    assert cur._repr_html_() is None  # the notebook shows repr instead
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (d DATE)")
    cur.execute("INSERT INTO ns.t VALUES (?), (?)", [date(2024, 1, 1), date(2024, 1, 2)])
    assert repr(cur) == "<trinity_dbapi Cursor: no result set (rowcount 2)>"
    cur.execute("SELECT * FROM ns.t WHERE false")
    assert repr(cur) == "<trinity_dbapi Cursor: 1 column, no rows>"
    assert cur.fetchall() == []
    cur.close()
    assert repr(cur) == "<trinity_dbapi Cursor: closed>"
    assert cur._repr_html_() is None
    other = con.cursor().execute(QUERY)
    con.close()
    assert repr(other) == "<trinity_dbapi Cursor: its connection is closed>"
