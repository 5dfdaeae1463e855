"""Dates and timestamps round-trip exactly, on every path (docs/dbapi.md, "Dates, times and timestamps").

A table stores only the dates and timestamps Python's ``datetime`` can hand
back (years 1 to 9999, times below 24:00:00): every write path refuses the
others with a DataError naming the table, the column and the value. A value
a query computes or another program wrote is refused by the fetch that
reaches it, which takes no rows. Nanoseconds are kept where the column
holds them (``TIMESTAMP(9)``) and refused where it does not.
"""

from __future__ import annotations

import datetime
import itertools
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.dbapi.params import check_params
from trinity_dbapi.errors import DataError
from trinity_dbapi.tables import temporal

pd = pytest.importorskip("pandas")

#: date.min and date.max in days since 1970-01-01; datetime's in microseconds.
MIN_DAYS, MAX_DAYS = -719_162, 2_932_896
MIN_MICROS, MAX_MICROS = -62_135_596_800_000_000, 253_402_300_799_999_999
EPOCH = datetime.date(1970, 1, 1)
_tables = itertools.count()

SETTINGS = settings(
    deadline=None,  # a shared machine: no timing in these tests
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def cur() -> Iterator[Any]:
    conn = trinity_dbapi.connect(f"memory://temporal-{uuid.uuid4().hex}", autocommit=True)
    try:
        yield conn.cursor()
    finally:
        conn.close()


def _table(cur: Any, columns: str) -> str:
    name = f"t{next(_tables)}"
    cur.execute(f"CREATE TABLE {name} ({columns})")
    return name


def _rows(cur: Any, sql: str) -> list[tuple[Any, ...]]:
    return cur.execute(sql).fetchall()


# -- writes refuse what Python cannot hold -------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("DATE '10000-01-01'", "10000-01-01"),
        ("DATE '9999-12-31' + 1", "10000-01-01"),
        ("DATE '0001-01-01' - 1", r"0001-12-31 \(BC\)"),
        ("DATE '0044-03-15 (BC)'", r"0044-03-15 \(BC\)"),
        ("'infinity'::DATE", "infinity"),
        ("'-infinity'::DATE", "-infinity"),
    ],
)
def test_an_insert_refuses_a_date_python_cannot_hold(cur: Any, value: str, shown: str) -> None:
    t = _table(cur, "id INT4, d DATE")
    with pytest.raises(
        DataError,
        match=rf"default\.{t}: column 'd' cannot hold the date {shown}: .*years 1 to 9999",
    ):
        cur.execute(f"INSERT INTO {t} VALUES (1, {value})")
    assert _rows(cur, f"SELECT count(*) FROM {t}") == [(0,)]


@pytest.mark.parametrize(
    ("column", "value", "shown"),
    [
        ("TIMESTAMP", "TIMESTAMP '9999-12-31 23:59:59.999999' + INTERVAL 1 MICROSECOND", "10000"),
        ("TIMESTAMP", "TIMESTAMP '0001-01-01' - INTERVAL 1 SECOND", r"0001-12-31 \(BC\) 23:59:59"),
        ("TIMESTAMP(3)", "'infinity'::TIMESTAMP_MS", "infinity"),
        ("TIMESTAMP(0)", "TIMESTAMP_S '10000-01-01 00:00:00'", "10000-01-01 00:00:00"),
        # In UTC, where a TIMESTAMPTZ is stored, this is year 10000.
        ("TIMESTAMPTZ", "TIMESTAMPTZ '9999-12-31 23:00:00-02'", r"10000-01-01 01:00:00\+00"),
        ("TIMESTAMP(9)", "'infinity'::TIMESTAMP_NS", "infinity"),
        ("TIMESTAMP(9)", "'-infinity'::TIMESTAMP_NS", "-infinity"),
        ("TIME", "TIME '24:00:00'", "24:00:00"),
    ],
)
def test_an_insert_refuses_a_timestamp_or_time_python_cannot_hold(
    cur: Any, column: str, value: str, shown: str
) -> None:
    t = _table(cur, f"v {column}")
    with pytest.raises(DataError, match=rf"column 'v' cannot hold the (timestamp|time) {shown}"):
        cur.execute(f"INSERT INTO {t} VALUES ({value})")


def test_the_edges_are_stored_and_fetched(cur: Any) -> None:
    t = _table(cur, "d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, tm TIME, n TIMESTAMP(9)")
    cur.execute(
        f"INSERT INTO {t} VALUES (DATE '0001-01-01', TIMESTAMP '0001-01-01 00:00:00', "
        "TIMESTAMPTZ '0001-01-01 00:00:00+00', TIME '00:00:00', "
        "TIMESTAMP_NS '1677-09-21 00:12:43.145224194'), (DATE '9999-12-31', "
        "TIMESTAMP '9999-12-31 23:59:59.999999', TIMESTAMPTZ '9999-12-31 23:59:59.999999+00', "
        "TIME '23:59:59.999999', TIMESTAMP_NS '2262-04-11 23:47:16.854775806')"
    )
    utc = datetime.timezone.utc
    rows = _rows(cur, f"SELECT * FROM {t} ORDER BY d")
    assert rows[0][:4] == (
        datetime.date.min,
        datetime.datetime.min,
        datetime.datetime.min.replace(tzinfo=utc),
        datetime.time.min,
    )
    assert rows[1][:4] == (
        datetime.date.max,
        datetime.datetime.max,
        datetime.datetime.max.replace(tzinfo=utc),
        datetime.time(23, 59, 59, 999_999),
    )
    assert [row[4].value for row in rows] == [-(2**63) + 2, 2**63 - 2]


def test_update_merge_ctas_and_insert_select_refuse_too(cur: Any) -> None:
    t = _table(cur, "id INT4, d DATE")
    cur.execute(f"INSERT INTO {t} VALUES (1, DATE '9999-12-31')")
    statements = [
        f"UPDATE {t} SET d = d + 1",
        f"INSERT INTO {t} SELECT id + 1, d + 1 FROM {t}",
        (
            f"MERGE INTO {t} AS t USING (VALUES (1), (2)) AS s(id) ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET d = t.d + 1"
        ),
        (
            f"MERGE INTO {t} AS t USING (VALUES (2)) AS s(id) ON t.id = s.id "
            "WHEN NOT MATCHED THEN INSERT VALUES (s.id, DATE '10000-01-01')"
        ),
        "CREATE TABLE c AS SELECT DATE '10000-01-01' AS d",
    ]
    for sql in statements:
        with pytest.raises(DataError, match="column 'd' cannot hold the date 10000-01-01"):
            cur.execute(sql)
    assert _rows(cur, f"SELECT * FROM {t}") == [(1, datetime.date(9999, 12, 31))]
    assert _rows(cur, "SHOW TABLES") == [(t,)]


def test_parameters_executemany_and_ingest_refuse_too(cur: Any) -> None:
    t = _table(cur, "d DATE, ts TIMESTAMP")
    beyond = np.datetime64("10000-01-01")
    with pytest.raises(
        DataError, match=r"parameter 1 is the numpy\.datetime64 10000-01-01, outside"
    ):
        cur.execute(f"INSERT INTO {t} (d) VALUES (?)", [beyond])
    with pytest.raises(DataError, match=r"parameter set 2: parameter 1 is the numpy\.datetime64"):
        cur.executemany(
            f"INSERT INTO {t} (ts) VALUES (?)", [[None], [np.datetime64(-(2**62), "us")]]
        )
    with pytest.raises(DataError, match="column 'd' cannot hold"):
        cur.execute(f"INSERT INTO {t} (d) VALUES (?::DATE + 1)", [datetime.date.max])
    arrow = pa.table({"d": pa.array([0, MAX_DAYS + 1], pa.date32())})
    with pytest.raises(
        DataError, match=rf"default\.{t}: column 'd' cannot hold the date 10000-01-01"
    ):
        cur.ingest(t, arrow)
    # Text DuckDB reads as such a date is no date of a stored column either.
    for text in ["10000-01-01", "0044-03-15 (BC)"]:
        with pytest.raises(DataError, match="column 'd' cannot hold"):
            cur.execute(f"INSERT INTO {t} (d) VALUES (?)", [text])
    assert _rows(cur, f"SELECT count(*) FROM {t}") == [(0,)]


# -- every write path agrees -----------------------------------------------------------------


def _outcomes(
    cur: Any, t: str, column: str, writes: dict[str, Callable[[], Any]], *refusals: str
) -> dict[str, Any]:
    """Each write path's outcome: the value fetched back, or "refused" (a DataError saying why)."""
    results: dict[str, Any] = {}
    for path, write in writes.items():
        try:
            write()
        except DataError as exc:
            assert any(reason in str(exc) for reason in refusals), str(exc)
            results[path] = "refused"
            continue
        (got,) = _rows(cur, f"SELECT {column} FROM {t} WHERE path = '{path}'")
        results[path] = got[0]
    return results


def _date_paths(cur: Any, t: str, days: int) -> dict[str, Any]:
    """What each write path makes of the date ``days`` after 1970-01-01: fetched, or refused."""
    text = temporal.text(pa.array([days], pa.date32()), 0)
    writes: dict[str, Callable[[], Any]] = {
        "literal": lambda: cur.execute(f"INSERT INTO {t} VALUES ('literal', DATE '{text}')"),
        "expression": lambda: cur.execute(
            f"INSERT INTO {t} VALUES ('expression', DATE '1970-01-01' + {days})"
        ),
        "datetime64": lambda: cur.execute(
            f"INSERT INTO {t} VALUES ('datetime64', ?)", [np.datetime64(days, "D")]
        ),
        "executemany": lambda: cur.executemany(
            f"INSERT INTO {t} VALUES (?, ?)", [["executemany", np.datetime64(days, "D")]]
        ),
        "ingest": lambda: cur.ingest(
            t, pa.table({"path": ["ingest"], "d": pa.array([days], pa.date32())})
        ),
    }
    if MIN_DAYS <= days <= MAX_DAYS:
        date = EPOCH + datetime.timedelta(days=days)
        writes["date"] = lambda: cur.execute(f"INSERT INTO {t} VALUES ('date', ?)", [date])
        writes["text"] = lambda: cur.execute(f"INSERT INTO {t} VALUES ('text', ?)", [str(date)])
    return _outcomes(cur, t, "d", writes, "cannot hold the date", "outside years 1 to 9999")


@SETTINGS
@given(
    st.integers(MIN_DAYS - 800, MIN_DAYS + 800)
    | st.integers(MAX_DAYS - 800, MAX_DAYS + 800)
    | st.integers(-(2**31) + 2, 2**31 - 2)
)
@example(MIN_DAYS - 1)
@example(MIN_DAYS)
@example(MAX_DAYS)
@example(MAX_DAYS + 1)
@example(-735_160)  # 0044-03-15 (BC)
def test_every_write_path_stores_or_refuses_a_date_alike(cur: Any, days: int) -> None:
    t = _table(cur, "path VARCHAR, d DATE")
    results = _date_paths(cur, t, days)
    if MIN_DAYS <= days <= MAX_DAYS:
        expected: Any = EPOCH + datetime.timedelta(days=days)
    else:
        expected = "refused"
    assert results == dict.fromkeys(results, expected)


def _timestamp_paths(cur: Any, t: str, micros: int) -> dict[str, Any]:
    text = temporal.text(pa.array([micros], pa.timestamp("us")), 0)
    value = np.datetime64(micros, "us")
    writes: dict[str, Callable[[], Any]] = {
        "literal": lambda: cur.execute(f"INSERT INTO {t} VALUES ('literal', TIMESTAMP '{text}')"),
        "expression": lambda: cur.execute(
            f"INSERT INTO {t} VALUES ('expression', make_timestamp({micros}::BIGINT))"
        ),
        "datetime64": lambda: cur.execute(f"INSERT INTO {t} VALUES ('datetime64', ?)", [value]),
        "executemany": lambda: cur.executemany(
            f"INSERT INTO {t} VALUES (?, ?)", [["executemany", value]]
        ),
        "ingest": lambda: cur.ingest(
            t, pa.table({"path": ["ingest"], "ts": pa.array([micros], pa.timestamp("us"))})
        ),
    }
    if MIN_MICROS <= micros <= MAX_MICROS:
        moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=micros)
        writes["datetime"] = lambda: cur.execute(
            f"INSERT INTO {t} VALUES ('datetime', ?)", [moment]
        )
    return _outcomes(cur, t, "ts", writes, "cannot hold the timestamp", "outside years 1")


@SETTINGS
@given(
    st.integers(MIN_MICROS - 10**11, MIN_MICROS + 10**11)
    | st.integers(MAX_MICROS - 10**11, MAX_MICROS + 10**11)
    | st.integers(-(2**62), 2**62)
)
@example(MIN_MICROS - 1)
@example(MIN_MICROS)
@example(MAX_MICROS)
@example(MAX_MICROS + 1)
def test_every_write_path_stores_or_refuses_a_timestamp_alike(cur: Any, micros: int) -> None:
    t = _table(cur, "path VARCHAR, ts TIMESTAMP")
    results = _timestamp_paths(cur, t, micros)
    if MIN_MICROS <= micros <= MAX_MICROS:
        expected: Any = datetime.datetime(1970, 1, 1) + datetime.timedelta(microseconds=micros)
    else:
        expected = "refused"
    assert results == dict.fromkeys(results, expected)


# -- nanoseconds -----------------------------------------------------------------------------


def _ns_paths(cur: Any, t: str, nanos: int, zoned: bool) -> dict[str, Any]:
    zone = "UTC" if zoned else None
    stamp = pd.Timestamp(nanos, unit="ns", tz=zone)
    text = temporal.text(pa.array([nanos], pa.timestamp("ns", zone)), 0)
    literal = "TIMESTAMPTZ_NS" if zoned else "TIMESTAMP_NS"
    writes: dict[str, Callable[[], Any]] = {
        "literal": lambda: cur.execute(f"INSERT INTO {t} VALUES ('literal', '{text}'::{literal})"),
        "Timestamp": lambda: cur.execute(f"INSERT INTO {t} VALUES ('Timestamp', ?)", [stamp]),
        "Timestamp many": lambda: cur.executemany(
            f"INSERT INTO {t} VALUES (?, ?)", [["Timestamp many", stamp]]
        ),
        "zoned": lambda: cur.execute(
            f"INSERT INTO {t} VALUES ('zoned', ?)",
            # A zone on the side that keeps the wall time inside pandas' range.
            [
                stamp.tz_convert("America/New_York" if nanos > 0 else "Asia/Tokyo")
                if zoned
                else stamp
            ],
        ),
        "ingest": lambda: cur.ingest(
            t, pa.table({"path": ["ingest"], "v": pa.array([nanos], pa.timestamp("ns", zone))})
        ),
        "UPDATE": lambda: (
            cur.execute(f"INSERT INTO {t} VALUES ('UPDATE', NULL)"),
            cur.execute(f"UPDATE {t} SET v = ? WHERE path = 'UPDATE'", [stamp]),
        ),
    }
    if not zoned:
        value = np.datetime64(nanos, "ns")
        writes["datetime64"] = lambda: cur.execute(
            f"INSERT INTO {t} VALUES ('datetime64', ?)", [value]
        )
        writes["datetime64 many"] = lambda: cur.executemany(
            f"INSERT INTO {t} VALUES (?, ?)", [["datetime64 many", value]]
        )
    return _outcomes(cur, t, "v", writes, "would lose data")


@SETTINGS
@given(
    st.integers(-(2**63) + 2, 2**63 - 2),
    st.sampled_from(["TIMESTAMP(9)", "TIMESTAMPTZ(9)", "TIMESTAMP(6)", "TIMESTAMPTZ(6)"]),
)
@example(1_577_836_800_123_456_789, "TIMESTAMP(9)")
@example(1_577_836_800_123_456_789, "TIMESTAMP(6)")
@example(1_577_836_800_123_456_000, "TIMESTAMP(6)")
@example(-1, "TIMESTAMPTZ(9)")
def test_nanoseconds_are_kept_where_the_column_holds_them_and_refused_elsewhere(
    cur: Any, nanos: int, column: str
) -> None:
    zoned = column.startswith("TIMESTAMPTZ")
    t = _table(cur, f"path VARCHAR, v {column}")
    results = _ns_paths(cur, t, nanos, zoned)
    if column.endswith("(9)"):
        expected: Any = pd.Timestamp(nanos, unit="ns", tz="UTC" if zoned else None)
    elif nanos % 1_000:
        expected = "refused"
    else:
        utc = datetime.timezone.utc
        expected = datetime.datetime(1970, 1, 1, tzinfo=utc if zoned else None) + (
            datetime.timedelta(microseconds=nanos // 1_000)
        )
    assert results == dict.fromkeys(results, expected)
    if column.endswith("(9)"):
        assert {type(value) for value in results.values()} == {pd.Timestamp}


def test_a_nanosecond_parameter_finds_its_partition(cur: Any) -> None:
    t = _table(cur, "n TIMESTAMP(9), i INT4) PARTITIONED BY (n")
    stamp = pd.Timestamp("2020-01-01 00:00:00.123456789")
    cur.execute(f"INSERT INTO {t} VALUES (?, 1), (? + INTERVAL 1 DAY, 2)", [stamp, stamp])
    # Pruning compared the partition with the value cut to microseconds: no rows.
    assert cur.execute(f"SELECT i FROM {t} WHERE n = ?", [stamp]).fetchall() == [(1,)]
    value = np.datetime64("2020-01-02T00:00:00.123456789")
    assert cur.execute(f"SELECT i FROM {t} WHERE n = ?", [value]).fetchall() == [(2,)]
    assert cur.execute(f"SELECT i FROM {t} WHERE n < ?", [stamp]).fetchall() == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.datetime64("2024-02-29"), datetime.date(2024, 2, 29)),
        (np.datetime64("2024-02"), datetime.date(2024, 2, 1)),
        (np.datetime64("2024-02-29T10:11:12"), datetime.datetime(2024, 2, 29, 10, 11, 12)),
        (
            np.datetime64("2024-02-29T10:11:12.123456789"),
            np.datetime64("2024-02-29T10:11:12.123456789"),
        ),
        (
            np.datetime64("2024-02-29T10:11:12.123456000", "ns"),
            datetime.datetime(2024, 2, 29, 10, 11, 12, 123456),
        ),
        (np.datetime64("NaT"), None),
        (np.datetime64("NaT", "ns"), None),
    ],
)
def test_numpy_datetime64_parameters(value: Any, expected: Any) -> None:
    (got,) = check_params([value])
    assert (got, type(got)) == (expected, type(expected))


def test_numpy_datetime64_digits_below_a_nanosecond_are_refused() -> None:
    with pytest.raises(DataError, match="digits below a nanosecond"):
        check_params([np.datetime64(1, "ps")])
    assert check_params([np.datetime64(1_000, "ps")]) == (np.datetime64(1, "ns"),)


def test_pandas_nat_is_null_on_every_path(cur: Any) -> None:
    t = _table(cur, "i INT4, ts TIMESTAMP")
    cur.execute(f"INSERT INTO {t} VALUES (1, ?)", [pd.NaT])
    # executemany made it an InternalError (NaTType does not support utcoffset).
    cur.executemany(
        f"INSERT INTO {t} VALUES (?, ?)", [[2, pd.NaT], [3, datetime.datetime(2020, 1, 1)]]
    )
    assert _rows(cur, f"SELECT i, ts FROM {t} ORDER BY i") == [
        (1, None),
        (2, None),
        (3, datetime.datetime(2020, 1, 1)),
    ]


# -- fetching what Python cannot hold ----------------------------------------------------------


def test_a_computed_date_past_9999_is_a_data_error_that_takes_no_rows(cur: Any) -> None:
    cur.execute("SELECT i, DATE '9999-12-30' + i::INT AS d FROM range(4) AS r(i) ORDER BY i")
    with pytest.raises(
        DataError,
        match=r"column 'd' holds the date 10000-01-01 \(row 3 of the result\).*years 1 to 9999"
        r".*CAST\(\"d\" AS VARCHAR\)",
    ):
        cur.fetchall()
    # Nothing was taken: the rows before it, one at a time, then all of them as Arrow.
    assert cur.rownumber == 0
    assert cur.fetchone() == (0, datetime.date(9999, 12, 30))
    assert cur.fetchmany(1) == [(1, datetime.date(9999, 12, 31))]
    with pytest.raises(DataError, match=r"row 3 of the result"):
        cur.fetchmany(5)
    with pytest.raises(DataError, match=r"row 3 of the result"):
        cur.fetchone()
    assert cur.rownumber == 2
    rest = cur.fetch_arrow_table()
    assert rest.column("i").to_pylist() == [2, 3]
    assert rest.column("d").cast(pa.string()).to_pylist() == ["10000-01-01", "10000-01-02"]
    assert cur.fetchall() == []


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT DATE '0044-03-15 (BC)' AS v", r"the date 0044-03-15 \(BC\)"),
        ("SELECT 'infinity'::DATE AS v", "the date infinity"),
        ("SELECT 'infinity'::TIMESTAMP AS v", "the timestamp infinity"),
        ("SELECT '-infinity'::TIMESTAMP_NS AS v", "the timestamp -infinity"),
        (
            "SELECT TIMESTAMPTZ '10000-01-01 00:00:00+00' AS v",
            r"the timestamp 10000-01-01 00:00:00\+00",
        ),
        ("SELECT TIME '24:00:00' AS v", "the time 24:00:00.*below 24:00:00"),
        (
            "SELECT TIME_NS '12:00:00.000000001' AS v",
            "the time 12:00:00.000000001.*not nanoseconds",
        ),
        ("SELECT [DATE '2000-01-01', DATE '10000-01-01'] AS v", "the date 10000-01-01"),
        ("SELECT {'a': {'b': DATE '10000-01-01'}} AS v", "the date 10000-01-01"),
        ("SELECT MAP {'k': TIMESTAMP 'infinity'} AS v", "the timestamp infinity"),
    ],
)
def test_values_python_cannot_hold_are_data_errors_never_bare_or_changed(
    cur: Any, sql: str, message: str
) -> None:
    # pyarrow alone: OverflowError, or TIME '24:00:00' as 00:00:00 and the
    # nanosecond dropped, or -infinity as pandas.Timestamp.min.
    with pytest.raises(DataError, match=rf"column 'v' holds {message}"):
        cur.execute(sql).fetchall()
    assert cur.execute(f"SELECT CAST(v AS VARCHAR) FROM ({sql})").fetchall()[0][0] is not None


def test_nanosecond_timestamps_are_fetched_as_pandas_timestamps(cur: Any) -> None:
    t = _table(cur, "n TIMESTAMP(9), z TIMESTAMPTZ(9)")
    cur.execute(
        f"INSERT INTO {t} VALUES ('2020-01-01 00:00:00.123456789'::TIMESTAMP_NS, "
        "'2020-01-01 00:00:00.123456789+00'::TIMESTAMPTZ_NS)"
    )
    ((n, z),) = _rows(cur, f"SELECT * FROM {t}")
    assert (type(n), n.value, n.tzinfo) == (pd.Timestamp, 1_577_836_800_123_456_789, None)
    assert (type(z), z.value, z.utcoffset()) == (
        pd.Timestamp,
        1_577_836_800_123_456_789,
        datetime.timedelta(0),
    )


def test_without_pandas_a_nanosecond_is_a_data_error(
    cur: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.dbapi import pyvalues

    monkeypatch.setattr(pyvalues, "_have_pandas", lambda: False)
    with pytest.raises(
        DataError,
        match=r"with pandas installed, nanosecond timestamps are fetched as pandas\.Timestamp",
    ):
        cur.execute("SELECT TIMESTAMP_NS '2020-01-01 00:00:00.123456789' AS n").fetchall()
    (row,) = cur.execute("SELECT TIMESTAMP_NS '2020-01-01 00:00:00.123456' AS n").fetchall()
    assert row[0] == datetime.datetime(2020, 1, 1, 0, 0, 0, 123456)


@pytest.fixture
def foreign(cur: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """A table one of whose files another program wrote with a date past year 9999."""
    t = _table(cur, "id INT4, d DATE")
    with monkeypatch.context() as patched:
        patched.setattr(temporal, "outside", lambda values: None)
        cur.execute(
            f"INSERT INTO {t} VALUES (1, DATE '2024-01-01'), (2, DATE '10000-01-01'), "
            "(3, DATE '2024-01-03')"
        )
    return t


def test_a_table_holding_a_foreign_value_stays_readable(cur: Any, foreign: str) -> None:
    t = foreign
    with pytest.raises(DataError, match=r"column 'd' holds the date 10000-01-01 \(row 2"):
        _rows(cur, f"SELECT * FROM {t} ORDER BY id")
    assert _rows(cur, f"SELECT id FROM {t} ORDER BY id") == [(1,), (2,), (3,)]
    assert _rows(cur, f"SELECT id, d FROM {t} WHERE id <> 2 ORDER BY id") == [
        (1, datetime.date(2024, 1, 1)),
        (3, datetime.date(2024, 1, 3)),
    ]
    assert _rows(cur, f"SELECT CAST(d AS VARCHAR) FROM {t} WHERE id = 2") == [("10000-01-01",)]
    table = cur.execute(f"SELECT * FROM {t} ORDER BY id").fetch_arrow_table()
    assert table.column("id").to_pylist() == [1, 2, 3]


def test_a_rewrite_never_stores_a_foreign_value_again(cur: Any, foreign: str) -> None:
    t = foreign
    # Rewriting the file would store the date again: refused, named.
    with pytest.raises(DataError, match=rf"default\.{t}: column 'd' cannot hold the date 10000"):
        cur.execute(f"DELETE FROM {t} WHERE id = 1")
    # A statement that changes or removes it is the way out.
    cur.execute(f"UPDATE {t} SET d = NULL WHERE d > DATE '9999-12-31'")
    cur.execute(f"DELETE FROM {t} WHERE id = 1")
    assert _rows(cur, f"SELECT * FROM {t} ORDER BY id") == [
        (2, None),
        (3, datetime.date(2024, 1, 3)),
    ]
