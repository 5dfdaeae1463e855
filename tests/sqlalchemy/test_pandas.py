"""pandas through the dialect: read_sql, read_sql_table and to_sql (default and Arrow)."""

from __future__ import annotations

import datetime
import itertools
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from tests.sqlalchemy.helpers import latest_version, rows, statements
from trinity_dbapi.sqlalchemy import arrow_insert

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")

METHODS = [pytest.param(None, id="default"), pytest.param(arrow_insert, id="arrow_insert")]


@pytest.fixture
def people(engine: sa.Engine) -> sa.Engine:
    """``engine`` with ``ns.people (id, name, score)`` holding three rows."""
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE ns.people (id INT8, name VARCHAR, score FLOAT8)")
        conn.exec_driver_sql(
            "INSERT INTO ns.people VALUES (1, 'ana', 1.5), (2, 'bob', NULL), (3, 'cy', 3.0)"
        )
    return engine


def frame(**columns: Any) -> Any:
    return pd.DataFrame(columns)


def assert_same_rows(left: Any, right: Any, by: str | list[str]) -> None:
    """The frames hold the same rows (any order) with the same column types."""
    pd.testing.assert_frame_equal(
        left.sort_values(by).reset_index(drop=True),
        right.sort_values(by).reset_index(drop=True),
    )


# -- reading ----------------------------------------------------------------------------------


def test_read_sql_with_a_string(people: sa.Engine) -> None:
    result = pd.read_sql("SELECT id, name, score FROM ns.people ORDER BY id", people)
    pd.testing.assert_frame_equal(
        result,
        frame(id=[1, 2, 3], name=["ana", "bob", "cy"], score=[1.5, np.nan, 3.0]),
    )


def test_read_sql_with_text_and_params(people: sa.Engine) -> None:
    result = pd.read_sql(
        sa.text("SELECT id, name FROM ns.people WHERE id >= :low AND name <> :name ORDER BY id"),
        people,
        params={"low": 2, "name": "cy"},
    )
    pd.testing.assert_frame_equal(result, frame(id=[2], name=["bob"]))


def test_read_sql_with_a_select(people: sa.Engine) -> None:
    table = sa.Table("people", sa.MetaData(), schema="ns", autoload_with=people)
    query = (
        sa.select(table.c.name, (table.c.score * 2).label("double"))
        .where(table.c.score.is_not(None))
        .order_by(table.c.name.desc())
    )
    result = pd.read_sql(query, people)
    pd.testing.assert_frame_equal(result, frame(name=["cy", "ana"], double=[6.0, 3.0]))


def test_read_sql_table(people: sa.Engine) -> None:
    result = pd.read_sql_table("people", people, schema="ns")
    pd.testing.assert_frame_equal(
        result.sort_values("id").reset_index(drop=True),
        frame(id=[1, 2, 3], name=["ana", "bob", "cy"], score=[1.5, np.nan, 3.0]),
    )
    some = pd.read_sql_table("people", people, schema="ns", columns=["name"], index_col="id")
    assert some.sort_index().to_dict() == {"name": {1: "ana", 2: "bob", 3: "cy"}}


def test_read_sql_table_of_a_missing_table(people: sa.Engine) -> None:
    with pytest.raises(ValueError, match="Table nothing not found"):
        pd.read_sql_table("nothing", people, schema="ns")


def test_read_sql_in_chunks(people: sa.Engine) -> None:
    chunks = list(pd.read_sql("SELECT id FROM ns.people ORDER BY id", people, chunksize=2))
    assert [chunk["id"].tolist() for chunk in chunks] == [[1, 2], [3]]


# -- writing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_to_sql_if_exists(engine: sa.Engine, method: Any) -> None:
    first = frame(id=[1, 2], name=["a", "b"])
    assert first.to_sql("t", engine, schema="ns", index=False, method=method) == 2
    with pytest.raises(ValueError, match="Table 't' already exists"):
        first.to_sql("t", engine, schema="ns", if_exists="fail", index=False, method=method)
    more = frame(id=[3], name=["c"])
    assert (
        more.to_sql("t", engine, schema="ns", if_exists="append", index=False, method=method) == 1
    )
    assert rows(engine, "SELECT id, name FROM ns.t ORDER BY id") == [(1, "a"), (2, "b"), (3, "c")]
    other = frame(key=["x"], value=[1.5])
    assert (
        other.to_sql("t", engine, schema="ns", if_exists="replace", index=False, method=method) == 1
    )
    assert rows(engine, "SELECT * FROM ns.t") == [("x", 1.5)]
    assert [c["name"] for c in sa.inspect(engine).get_columns("t", "ns")] == ["key", "value"]


@pytest.mark.parametrize("method", METHODS)
def test_to_sql_with_the_index(engine: sa.Engine, method: Any) -> None:
    data = frame(name=["a", "b"], value=[1.5, 2.5])
    data.index = pd.Index([10, 20], name="key")
    assert data.to_sql("t", engine, schema="ns", index=True, method=method) == 2
    assert rows(engine, "SELECT key, name, value FROM ns.t ORDER BY key") == [
        (10, "a", 1.5),
        (20, "b", 2.5),
    ]
    assert sa.inspect(engine).get_indexes("t", "ns") == [
        {"name": "ix_ns_t_key", "column_names": ["key"], "unique": False, "dialect_options": {}}
    ]
    back = pd.read_sql_table("t", engine, schema="ns", index_col="key").sort_index()
    pd.testing.assert_frame_equal(back, data)


def test_to_sql_with_an_unnamed_index(engine: sa.Engine) -> None:
    data = frame(name=["a", "b"])
    assert data.to_sql("t", engine, schema="ns") == 2
    assert rows(engine, "SELECT index, name FROM ns.t ORDER BY index") == [(0, "a"), (1, "b")]


def test_to_sql_in_the_default_namespace(engine: sa.Engine) -> None:
    assert frame(id=[1]).to_sql("t", engine, index=False) == 1
    assert rows(engine, 'SELECT id FROM "default".t') == [(1,)]
    pd.testing.assert_frame_equal(pd.read_sql_table("t", engine), frame(id=[1]))


def test_to_sql_column_types(engine: sa.Engine) -> None:
    data = frame(
        i=np.array([1], dtype="int64"),
        i32=np.array([1], dtype="int32"),
        f=[1.5],
        b=[True],
        s=["x"],
        t=pd.to_datetime(["2024-01-02 03:04:05"]),
        tz=pd.to_datetime(["2024-01-02 03:04:05"]).tz_localize("UTC"),
    )
    data.to_sql("t", engine, schema="ns", index=False)
    columns = sa.inspect(engine).get_columns("t", "ns")
    assert [(c["name"], repr(c["type"])) for c in columns] == [
        ("i", "BIGINT()"),
        ("i32", "INTEGER()"),
        ("f", "DOUBLE()"),
        ("b", "BOOLEAN()"),
        ("s", "VARCHAR()"),
        ("t", "TIMESTAMP()"),
        ("tz", "TIMESTAMP(timezone=True)"),
    ]


@pytest.mark.parametrize("method", METHODS)
def test_nan_none_and_nat_become_null(engine: sa.Engine, method: Any) -> None:
    data = frame(
        id=[1, 2, 3],
        x=[1.5, np.nan, None],
        s=["a", None, np.nan],
        t=pd.to_datetime(["2024-01-01 10:00", None, "NaT"]),
        n=pd.array([1, None, 3], dtype="Int64"),
    )
    data.to_sql("t", engine, schema="ns", index=False, method=method)
    assert rows(
        engine,
        "SELECT id, x IS NULL, s IS NULL, t IS NULL, n IS NULL FROM ns.t ORDER BY id",
    ) == [
        (1, False, False, False, False),
        (2, True, True, True, True),
        (3, True, True, True, False),
    ]
    assert rows(engine, "SELECT count(*) FROM ns.t WHERE isnan(x)") == [(0,)]


@pytest.mark.parametrize("method", METHODS)
def test_timestamps_round_trip(engine: sa.Engine, method: Any) -> None:
    naive = pd.to_datetime(
        ["2024-01-01 10:00:00.123456", "2024-07-01 23:59:59", None], format="ISO8601"
    )
    paris = naive.tz_localize("Europe/Paris")
    data = frame(id=[1, 2, 3], naive=naive, paris=paris)
    data.to_sql("t", engine, schema="ns", index=False, method=method)
    back = pd.read_sql("SELECT id, naive, paris FROM ns.t ORDER BY id", engine)
    # Instants are kept; a zone is not: TIMESTAMPTZ values come back in UTC.
    expected = frame(id=[1, 2, 3], naive=naive, paris=paris.tz_convert("UTC"))
    pd.testing.assert_frame_equal(back, expected)
    assert rows(engine, "SELECT CAST(paris AS VARCHAR) FROM ns.t WHERE id = 2") == [
        ("2024-07-01 21:59:59+00",)
    ]


@pytest.mark.parametrize("method", METHODS)
def test_a_large_frame_is_one_commit(engine: sa.Engine, method: Any) -> None:
    size = 50_000
    generator = np.random.default_rng(7)
    data = frame(
        id=np.arange(size, dtype="int64"),
        value=generator.random(size),
        label=[f"row {i}" for i in range(size)],
        flag=np.arange(size) % 3 == 0,
    )
    before = latest_version(engine)
    # Creating the table and writing the rows: one commit.
    assert data.to_sql("big", engine, schema="ns", index=False, method=method) == size
    assert latest_version(engine) == before + 1
    assert_same_rows(pd.read_sql("SELECT * FROM ns.big", engine), data, by=["id", "value"])
    # Appending to it: one commit.
    written = data.to_sql(
        "big", engine, schema="ns", index=False, method=method, if_exists="append"
    )
    assert written == size
    assert latest_version(engine) == before + 2
    stored = pd.read_sql("SELECT * FROM ns.big", engine)
    assert_same_rows(stored, pd.concat([data, data]), by=["id", "value"])


@pytest.mark.parametrize("method", METHODS)
def test_a_large_frame_replacing_a_table_is_one_commit(engine: sa.Engine, method: Any) -> None:
    size = 50_000
    frame(old=[1]).to_sql("big", engine, schema="ns", index=False)
    data = frame(id=np.arange(size, dtype="int64"), label=[f"r{i}" for i in range(size)])
    before = latest_version(engine)
    written = data.to_sql(
        "big", engine, schema="ns", index=False, method=method, if_exists="replace"
    )
    assert written == size
    assert latest_version(engine) == before + 1  # DROP, CREATE and the rows together
    assert_same_rows(pd.read_sql("SELECT * FROM ns.big", engine), data, by="id")


def test_arrow_insert_in_chunks_stores_every_row_once(engine: sa.Engine) -> None:
    size = 10_500
    data = frame(id=np.arange(size, dtype="int64"), half=np.arange(size) / 2)
    before = latest_version(engine)
    written = data.to_sql(
        "t", engine, schema="ns", index=False, method=arrow_insert, chunksize=1000
    )
    assert written == size
    assert latest_version(engine) == before + 1
    assert rows(engine, "SELECT count(*), count(DISTINCT id), min(id), max(id) FROM ns.t") == [
        (size, size, 0, size - 1)
    ]
    assert_same_rows(pd.read_sql("SELECT * FROM ns.t", engine), data, by="id")


def test_arrow_insert_sends_no_insert_statements(engine: sa.Engine) -> None:
    data = frame(id=np.arange(5000, dtype="int64"))
    data.head(0).to_sql("t", engine, schema="ns", index=False)
    sent = statements(engine)
    data.to_sql("t", engine, schema="ns", index=False, method=arrow_insert, if_exists="append")
    assert [s for s in sent if s.lstrip().upper().startswith("INSERT")] == []
    assert rows(engine, "SELECT count(*) FROM ns.t") == [(5000,)]


def test_arrow_insert_of_sliced_and_reordered_frames(engine: sa.Engine) -> None:
    # Columns are matched by name; a frame's slice writes only its rows.
    frame(a=[0], b=["x"]).head(0).to_sql("t", engine, schema="ns", index=False)
    data = frame(b=["p", "q", "r", "s"], a=[1, 2, 3, 4]).iloc[1:3]
    assert (
        data.to_sql("t", engine, schema="ns", index=False, method=arrow_insert, if_exists="append")
        == 2
    )
    assert rows(engine, "SELECT a, b FROM ns.t ORDER BY a") == [(2, "q"), (3, "r")]


def test_arrow_insert_rolls_back_with_the_transaction(engine: sa.Engine) -> None:
    frame(id=[0]).head(0).to_sql("t", engine, schema="ns", index=False)
    before = latest_version(engine)
    with engine.connect() as conn:
        transaction = conn.begin()
        frame(id=[1, 2]).to_sql(
            "t", conn, schema="ns", index=False, method=arrow_insert, if_exists="append"
        )
        assert conn.exec_driver_sql("SELECT count(*) FROM ns.t").scalar() == 2
        transaction.rollback()
    assert latest_version(engine) == before
    assert rows(engine, "SELECT count(*) FROM ns.t") == [(0,)]


# -- dates and timestamps at the edges, nanoseconds (docs/dbapi.md) ---------------------------


def test_read_sql_of_a_date_past_9999_is_a_data_error_naming_it(engine: sa.Engine) -> None:
    # It was a bare OverflowError, out of every row of the result.
    with pytest.raises(sa.exc.DataError) as info:
        pd.read_sql("SELECT 1 AS id, DATE '9999-12-31' + 1 AS d", engine)
    assert isinstance(info.value.orig, trinity_dbapi.DataError)
    assert "column 'd' holds the date 10000-01-01 (row 1 of the result)" in str(info.value)
    back = pd.read_sql("SELECT CAST(DATE '9999-12-31' + 1 AS VARCHAR) AS d", engine)
    assert back["d"].tolist() == ["10000-01-01"]


#: datetime.min and datetime.max in seconds since 1970.
_MIN_S, _MAX_S = -62_135_596_800, 253_402_300_799
_to_sql_tables = itertools.count()


@settings(
    deadline=None, max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.integers(_MIN_S, _MIN_S + 10**9)
    | st.integers(_MAX_S - 10**9, _MAX_S)
    | st.integers(_MIN_S, _MAX_S)
)
@example(_MIN_S)
@example(_MAX_S)
def test_to_sql_stores_the_edges_as_every_other_path(engine: sa.Engine, seconds: int) -> None:
    """Years 1 and 9999 through both to_sql methods: the value executemany stores."""
    moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    data = frame(ts=np.array([seconds], "datetime64[s]"), d=np.array([seconds], "datetime64[s]"))
    table = f"edges{next(_to_sql_tables)}"
    with engine.begin() as conn:
        conn.exec_driver_sql(f"CREATE TABLE ns.{table} (path VARCHAR, ts TIMESTAMP, d TIMESTAMP)")
        conn.exec_driver_sql(
            f"INSERT INTO ns.{table} VALUES ('executemany', ?, ?)", (moment, moment)
        )
    for name, method in (("default", None), ("arrow_insert", arrow_insert)):
        data.assign(path=name).to_sql(
            table, engine, schema="ns", index=False, method=method, if_exists="append"
        )
    got = rows(engine, f"SELECT path, ts, d FROM ns.{table} ORDER BY path")
    assert got == [(path, moment, moment) for path in ("arrow_insert", "default", "executemany")]


def test_arrow_insert_keeps_nanoseconds_or_refuses_them(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE ns.t (n TIMESTAMP(9), u TIMESTAMP(6))")
    stamps = pd.to_datetime(["2020-01-01 00:00:00.123456789", "2021-01-01"], format="ISO8601")
    frame(n=stamps).to_sql(
        "t", engine, schema="ns", index=False, method=arrow_insert, if_exists="append"
    )
    back = pd.read_sql("SELECT n FROM ns.t ORDER BY n", engine)
    assert back["n"].dtype == "datetime64[ns]"
    assert back["n"].tolist() == list(stamps)
    # arrow_insert writes through the driver's cursor: the driver's DataError.
    with pytest.raises(
        trinity_dbapi.DataError, match=r"column 'u' cannot hold the value Timestamp"
    ):
        frame(u=stamps).to_sql(
            "t", engine, schema="ns", index=False, method=arrow_insert, if_exists="append"
        )
    assert rows(engine, "SELECT count(*) FROM ns.t") == [(2,)]


def test_pandas_own_insert_drops_nanoseconds_before_the_driver(engine: sa.Engine) -> None:
    """docs/dbapi.md: pandas' default to_sql hands datetimes over; arrow_insert keeps them."""
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE ns.t (n TIMESTAMP(9))")
    stamps = pd.to_datetime(["2020-01-01 00:00:00.123456789"])
    frame(n=stamps).to_sql("t", engine, schema="ns", index=False, if_exists="append")
    assert rows(engine, "SELECT CAST(n AS VARCHAR) FROM ns.t") == [("2020-01-01 00:00:00.123456",)]
