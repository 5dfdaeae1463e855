"""One conversion rule for every write path (docs/datasets.md, "Converting values").

The same Python value is written into a column through every way rows reach a
table: ``execute`` of ``INSERT ... VALUES (?)``, ``INSERT ... SELECT ?``,
``UPDATE ... SET v = ?``, ``executemany``, ``Cursor.ingest`` (Arrow), and
pandas ``to_sql`` (default and ``arrow_insert``); every path must give the same
outcome: the same stored value, or a ``DataError``. ``CREATE TABLE ... AS``
and ``SELECT ?`` must give back exactly the value bound, or a ``DataError``.
"""

from __future__ import annotations

import datetime
import decimal
import itertools
import math
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as hs

import trinity_dbapi
from trinity_dbapi.dbapi.params import check_params
from trinity_dbapi.errors import DataError
from trinity_dbapi.sqlalchemy.writer import arrow_insert

D = decimal.Decimal

#: Column types under test.
TYPES = [
    "INT2",
    "INT8",
    "FLOAT4",
    "FLOAT8",
    "DECIMAL(5, 2)",
    "DECIMAL(38, 0)",
    "BOOLEAN",
    "VARCHAR",
    "DATE",
    "TIMESTAMP",
]

_ids = itertools.count(1)


class Lake:
    """A memory lakehouse with a table ``t_<type>`` (id INT8, v <type>) per column type."""

    def __init__(self) -> None:
        self.uri = f"memory://conversion-{uuid.uuid4().hex}"
        self.conn = trinity_dbapi.connect(self.uri, autocommit=True)
        self.cur = self.conn.cursor()
        self.tables: dict[str, str] = {}
        for number, sql_type in enumerate(TYPES):
            name = f"t{number}"
            self.cur.execute(f"CREATE TABLE {name} (id INT8, v {sql_type})")
            self.tables[sql_type] = name

        import sqlalchemy as sa

        self.engine = sa.create_engine(f"trinity:///{self.uri}")


@pytest.fixture(scope="module")
def lake() -> Iterator[Lake]:
    made = Lake()
    yield made
    made.conn.close()
    made.engine.dispose()


def _arrow(value: Any) -> pa.Array:
    """The value as a one-element Arrow array of its own type (as DuckDB would bind it).

    An integer beyond int64 is a ``decimal128(38, 0)``, as DuckDB exports its HUGEINT.
    """
    value = _bound(value)
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return pa.array([D(value)], pa.decimal128(38, 0))
    return pa.array([value])


def _execute(lake: Lake, table: str, row: int, value: Any) -> None:
    lake.cur.execute(f"INSERT INTO {table} (id, v) VALUES (?, ?)", [row, value])


def _insert_select(lake: Lake, table: str, row: int, value: Any) -> None:
    lake.cur.execute(f"INSERT INTO {table} SELECT ?, ?", [row, value])


def _update(lake: Lake, table: str, row: int, value: Any) -> None:
    lake.cur.execute(f"INSERT INTO {table} (id) VALUES (?)", [row])
    lake.cur.execute(f"UPDATE {table} SET v = ? WHERE id = ?", [value, row])


def _executemany(lake: Lake, table: str, row: int, value: Any) -> None:
    lake.cur.executemany(f"INSERT INTO {table} (id, v) VALUES (?, ?)", [(row, value)])


def _bound(value: Any) -> Any:
    """The value as a parameter binds it (``check_params``), for the paths of Arrow data.

    An integer or a decimal of more than 38 digits is refused where it is
    bound, before any column is looked at: the engine would not get it
    exactly. As Arrow data such a value is a ``decimal256``, which the column
    rule would take into a floating column; the Arrow paths here are given
    what a parameter binds, so they meet the same refusal (docs/dbapi.md).
    """
    (bound,) = check_params([value])
    return bound


def _ingest(lake: Lake, table: str, row: int, value: Any) -> None:
    data = pa.Table.from_arrays([pa.array([row]), _arrow(value)], names=["id", "v"])
    lake.cur.ingest(table, data)


def _to_sql(method: Any) -> Callable[[Lake, str, int, Any], None]:
    """pandas ``to_sql``: rows through executemany (default) or ``arrow_insert``."""

    def write(lake: Lake, table: str, row: int, value: Any) -> None:
        import pandas as pd
        import sqlalchemy as sa

        if method is not None:
            value = _bound(value)
        frame = pd.DataFrame({"id": [row], "v": pd.Series([value], dtype=object)})
        frame["v"] = frame["v"].infer_objects()  # the column's dtype as pandas infers it
        try:
            frame.to_sql(table, lake.engine, index=False, if_exists="append", method=method)
        except Exception as exc:  # pandas and SQLAlchemy wrap the driver's error
            cause: BaseException | None = exc
            while cause is not None and not isinstance(cause, trinity_dbapi.Error):
                orig = (
                    getattr(cause, "orig", None) if isinstance(cause, sa.exc.DBAPIError) else None
                )
                cause = orig or cause.__cause__
            if cause is None:
                raise
            raise cause from None

    return write


PATHS: dict[str, Callable[[Lake, str, int, Any], None]] = {
    "execute": _execute,
    "insert_select": _insert_select,
    "update": _update,
    "executemany": _executemany,
    "ingest": _ingest,
    "to_sql": _to_sql(None),
    "to_sql_arrow": _to_sql(arrow_insert),
}

#: The pandas paths (see _pandas_refuses for the values they cannot carry).
_PANDAS = ("to_sql", "to_sql_arrow")


def _key(value: Any) -> Any:
    """A comparable form that tells -0.0 from 0.0 and makes NaN equal to itself."""
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value, math.copysign(1.0, value))
    if isinstance(value, D):
        return ("decimal", value)
    return (type(value).__name__, value)


def outcome(lake: Lake, path: str, sql_type: str, value: Any) -> Any:
    """What writing ``value`` into a ``sql_type`` column through ``path`` gives."""
    table = lake.tables[sql_type]
    row = next(_ids)
    try:
        PATHS[path](lake, table, row, value)
    except DataError:
        return "DataError"
    finally:
        stored = lake.cur.execute(f"SELECT v FROM {table} WHERE id = ?", [row]).fetchall()
        lake.cur.execute(f"TRUNCATE TABLE {table}")  # keeps every write and read small
    assert len(stored) == 1, stored
    return _key(stored[0][0])


def _pandas_refuses(value: Any) -> bool:
    """pandas stores a float NaN as NULL, and its to_sql refuses uint64 columns itself."""
    if isinstance(value, float):
        return math.isnan(value)
    return type(value) is int and 2**63 <= value < 2**64


def outcomes(lake: Lake, sql_type: str, value: Any) -> dict[str, Any]:
    skip = _pandas_refuses(value)
    return {
        path: outcome(lake, path, sql_type, value)
        for path in PATHS
        if not (skip and path in _PANDAS)
    }


VALUES = hs.one_of(
    hs.integers(min_value=-(2**130), max_value=2**130),
    hs.sampled_from([2**127, 2**127 - 1, -(2**127), 10**38 - 1, 10**38, 2**63, -(2**63) - 1]),
    hs.floats(allow_nan=True, allow_infinity=True),
    hs.sampled_from([1e300, -1e300, 3.5e38, -0.0, 1.5, 0.1, 2.0**53 + 2]),
    hs.decimals(allow_nan=False, allow_infinity=False, places=4),
    hs.decimals(allow_nan=False, allow_infinity=False),
    hs.sampled_from(
        [
            D("1.2345"),
            D("1.25"),
            D("-0"),
            D("1" * 40),
            D("1.10000000000000000000000000000000000000000"),
        ]
    ),
    hs.sampled_from(
        ["5", "1.5", "1.25", "x", "", "2024-02-29", "2024-02-29 10:11:12", "1e300", "true"]
    ),
    hs.booleans(),
    hs.dates(),
    hs.datetimes(),
)

_SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


@pytest.mark.parametrize("sql_type", TYPES)
@_SETTINGS
@given(value=VALUES)
@example(value=2**127)
@example(value=1e300)
@example(value=1.2345)
@example(value=1.5)
@example(value=D("1.2345"))
@example(value=float("inf"))
@example(value=float("nan"))
@example(value=-0.0)
@example(value="5")
@example(value=True)
@example(value=datetime.datetime(2024, 2, 29, 10, 11, 12))
def test_every_path_gives_the_same_outcome(lake: Lake, sql_type: str, value: Any) -> None:
    results = outcomes(lake, sql_type, value)
    assert len(set(results.values())) == 1, results


#: (column type, value given, what every path stores, or "DataError").
RULE = [
    ("DECIMAL(38, 0)", 2**127, "DataError"),  # 39 digits: never wrapped to a negative number
    ("DECIMAL(38, 0)", 10**38 - 1, ("decimal", D(10**38 - 1))),
    ("INT8", 2**63, "DataError"),
    ("INT8", 1.5, "DataError"),  # no truncation
    ("INT8", 2.0, ("int", 2)),
    ("INT8", D("3.00"), ("int", 3)),
    ("INT8", float("nan"), "DataError"),
    ("INT8", True, "DataError"),  # a bool is not a number
    ("INT8", "5", ("int", 5)),  # text that is exactly a value of the type
    ("INT8", "1.5", "DataError"),
    ("INT2", 100000, "DataError"),
    ("FLOAT4", 1e300, "DataError"),  # no overflow to infinity
    ("FLOAT4", float("inf"), _key(float("inf"))),  # an infinity given stays one
    ("FLOAT4", float("nan"), _key(float("nan"))),
    ("FLOAT4", -0.0, _key(-0.0)),
    ("FLOAT4", 0.5, _key(0.5)),
    ("FLOAT8", 2**53 + 1, "DataError"),  # its float8 reads back as 9007199254740992
    ("FLOAT8", 10**30, _key(1e30)),  # its float8 reads back as 1e+30, the same number
    ("FLOAT8", 10**30 + 1, "DataError"),
    ("FLOAT8", "9007199254740993", "DataError"),
    ("FLOAT8", D("9007199254740993"), "DataError"),
    ("FLOAT8", "1e400", "DataError"),  # not an infinity
    ("FLOAT8", "1e-400", "DataError"),  # not zero
    ("FLOAT8", "-Infinity", _key(float("-inf"))),  # spelled out, it is one
    ("FLOAT8", D("0.1"), _key(0.1)),
    ("FLOAT4", "0.1", _key(0.10000000149011612)),  # the float4 that reads back as 0.1
    ("FLOAT4", 2**24 + 1, "DataError"),
    ("FLOAT4", 1e-50, "DataError"),  # a float is rounded, but not to zero
    ("DECIMAL(5, 2)", 1.2345, "DataError"),  # no rounding
    ("DECIMAL(5, 2)", D("1.2345"), "DataError"),
    ("DECIMAL(5, 2)", 1.25, ("decimal", D("1.25"))),
    ("DECIMAL(5, 2)", 0.1, ("decimal", D("0.10"))),  # a float's shortest text
    ("DECIMAL(5, 2)", 1000, "DataError"),
    ("DECIMAL(5, 2)", float("inf"), "DataError"),
    ("BOOLEAN", 1, "DataError"),
    ("DATE", datetime.datetime(2024, 2, 29, 10, 0), "DataError"),  # the time would be lost
    ("DATE", datetime.datetime(2024, 2, 29), ("date", datetime.date(2024, 2, 29))),
    ("DATE", "2024-02-29", ("date", datetime.date(2024, 2, 29))),
]


@pytest.mark.parametrize(("sql_type", "value", "expected"), RULE)
def test_the_rule(lake: Lake, sql_type: str, value: Any, expected: Any) -> None:
    results = outcomes(lake, sql_type, value)
    assert results == dict.fromkeys(results, expected)
    assert len(results) >= len(PATHS) - len(_PANDAS)


@pytest.mark.parametrize(
    "value",
    [
        2**127,
        2**128 - 1,
        -(2**127),
        10**38,
        D("1" * 40),
        D("1E+40"),
        D("1.10000000000000000000000000000000000000000"),
    ],
)
def test_a_parameter_is_bound_exactly_or_refused(lake: Lake, value: Any) -> None:
    """DuckDB would wrap (UHUGEINT) or round (DOUBLE) these: refused, or the same value."""
    try:
        (got,) = lake.cur.execute("SELECT ?", [value]).fetchone()
    except DataError:
        return
    assert got == value and not isinstance(got, float)


@_SETTINGS
@given(value=VALUES)
@example(value=2**127)
@example(value=-0.0)
@example(value=D("1" * 40))
@example(value=2**63)  # DuckDB's UBIGINT: a DECIMAL(20, 0) column
def test_select_and_ctas_give_back_the_value(lake: Lake, value: Any) -> None:
    name = f"ctas_{next(_ids)}"
    try:
        (selected,) = lake.cur.execute("SELECT ?", [value]).fetchone()
    except DataError:
        selected = "DataError"
    try:
        lake.cur.execute(f"CREATE TABLE {name} AS SELECT ? AS v", [value])
        (stored,) = lake.cur.execute(f"SELECT v FROM {name}").fetchone()
    except DataError:
        stored = "DataError"
    if isinstance(stored, D) and type(selected) is int:  # a UBIGINT is stored as DECIMAL(20, 0)
        assert stored == selected
    else:
        assert _key(stored) == _key(selected)
    if selected != "DataError":
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(selected)
        else:
            assert _key(
                selected if isinstance(value, type(selected)) else type(value)(selected)
            ) == _key(value)
