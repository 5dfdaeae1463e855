"""Rows come out of Arrow exactly as ``to_pylist`` makes them, through the bulk paths too."""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.dbapi.pyvalues import UTC_ZONES
from trinity_dbapi.dbapi.pyvalues import pylist as _pylist

_SECONDS = np.arange(1_000).astype("datetime64[s]").astype("datetime64[us]")

CASES = {
    "int64": pa.array(np.arange(1_000)),
    "int with null": pa.array([1, None, 3]),
    "uint64 big": pa.array([2**63], pa.uint64()),
    "float": pa.array(np.arange(1_000) * 0.5),
    "float with null": pa.array([1.5, None]),
    "timestamp utc": pa.array(_SECONDS, pa.timestamp("us", "UTC")),
    "timestamp etc/utc": pa.array(_SECONDS, pa.timestamp("us", "Etc/UTC")),
    "timestamp ms naive": pa.array([0, None, 5], pa.timestamp("ms")),
    "timestamp new york": pa.array([0, None], pa.timestamp("us", "America/New_York")),
    "timestamp ns": pa.array([1, 2], pa.timestamp("ns")),
    "date32": pa.array([0, None, 19_000], pa.date32()),
    "date64": pa.array([0, None], pa.date64()),
    "bool": pa.array([True, None]),
    "chunked ints": pa.chunked_array([pa.array([1, 2]), pa.array([3])]),
    "chunked dates": pa.chunked_array([pa.array([0], pa.date32()), pa.array([None], pa.date32())]),
}


def _described(values: list[Any]) -> list[tuple[Any, type, Any]]:
    return [(value, type(value), getattr(value, "tzinfo", None)) for value in values]


def _expected(column: Any) -> list[tuple[Any, type, Any]]:
    """``to_pylist``'s values, with UTC as ``datetime.timezone.utc`` (docs/dbapi.md)."""
    values = column.to_pylist()
    if pa.types.is_timestamp(column.type) and column.type.tz in UTC_ZONES:
        values = [None if v is None else v.replace(tzinfo=datetime.timezone.utc) for v in values]
    return _described(values)


@pytest.mark.parametrize("name", CASES)
def test_bulk_conversion_matches_to_pylist(name: str) -> None:
    column = CASES[name]
    assert _described(_pylist(column)) == _expected(column)


def test_a_timestamp_past_year_9999_is_a_data_error_naming_it() -> None:
    column = pa.array([0, 253_402_300_800_000_000], pa.timestamp("us"))
    with pytest.raises((ValueError, OverflowError)):
        column.to_pylist()  # what pyarrow alone does
    with pytest.raises(
        trinity_dbapi.DataError,
        match=r"column 'at' holds the timestamp 10000-01-01 00:00:00 \(row 12 of the result\)"
        r".*years 1 to 9999.*CAST\(\"at\" AS VARCHAR\)",
    ):
        _pylist(column, name="at", first_row=10)


def test_a_zone_that_moves_a_value_past_year_9999_is_a_data_error() -> None:
    # In UTC the value is in range; in Paris it is in year 10000.
    column = pa.array([253_402_300_000_000_000], pa.timestamp("us", "Europe/Paris"))
    with pytest.raises((ValueError, OverflowError)):
        column.to_pylist()
    with pytest.raises(trinity_dbapi.DataError, match="column 'at' has a value Python cannot"):
        _pylist(column, name="at")


@given(
    st.lists(st.one_of(st.none(), st.integers(-(2**62), 2**62)), max_size=20),
    st.sampled_from(["s", "ms", "us"]),
    st.sampled_from([None, "UTC", "Etc/UTC", "+00:00", "Europe/Paris"]),
)
def test_timestamps_of_any_unit_and_zone(
    values: list[int | None], unit: str, tz: str | None
) -> None:
    # Where pyarrow raises a bare error, the driver raises its DataError; else the same values.
    column = pa.array(values, pa.timestamp(unit, tz))
    try:
        expected: Any = _expected(column)
    except (ValueError, OverflowError):
        expected = "error"
    try:
        got: Any = _described(_pylist(column))
    except trinity_dbapi.DataError:
        got = "error"
    assert got == expected


def test_fetchall_of_dates_and_timestamps_through_the_driver() -> None:
    conn = trinity_dbapi.connect("memory://fetch-conversion", autocommit=True)
    rows = conn.execute(
        "SELECT DATE '2026-01-02' + i::INT AS d, TIMESTAMPTZ '2026-01-02 03:04:05.123456+00' AS t,"
        " i FROM range(3) AS r(i)"
    ).fetchall()
    utc = datetime.timezone.utc
    assert all(t.tzinfo is utc for _, t, _ in rows)
    assert [(d, t, i) for d, t, i in rows] == [
        (datetime.date(2026, 1, 2 + i), datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, utc), i)
        for i in range(3)
    ]
    conn.close()


_MICROS_RANGE = (-62_135_596_800_000_000, 253_402_300_799_999_999)  # datetime.min, max


@given(
    st.lists(st.one_of(st.none(), st.integers(*_MICROS_RANGE)), max_size=50),
    st.sampled_from(["s", "ms", "us"]),
    st.sampled_from(["UTC", "Etc/UTC", "+00:00", None]),
)
def test_in_range_timestamps_take_the_bulk_path_exactly(
    values: list[int | None], unit: str, tz: str | None
) -> None:
    # Values are microseconds scaled down to the unit: every one is a valid datetime.
    per_unit = {"s": 1_000_000, "ms": 1_000, "us": 1}[unit]
    scaled = [None if v is None else v // per_unit for v in values]
    column = pa.array(scaled, pa.timestamp(unit, tz))
    assert _described(_pylist(column)) == _expected(column)


def test_calendar_edges_of_the_bulk_utc_path() -> None:
    utc_values = [
        datetime.datetime(1, 1, 1),
        datetime.datetime(1, 12, 31, 23, 59, 59, 999_999),
        datetime.datetime(1600, 2, 29, 12),
        datetime.datetime(1900, 2, 28, 23, 59, 59),
        datetime.datetime(1900, 3, 1),
        datetime.datetime(1969, 12, 31, 23, 59, 59, 999_999),
        datetime.datetime(1970, 1, 1),
        datetime.datetime(2000, 2, 29, 0, 0, 0, 1),
        datetime.datetime(2024, 12, 31, 23, 59, 59, 65_536),
        datetime.datetime(9999, 12, 31, 23, 59, 59, 999_999),
    ]
    column = pa.array(utc_values, pa.timestamp("us", "UTC"))
    got = _pylist(column)
    assert [value.replace(tzinfo=None) for value in got] == utc_values
    assert _described(got) == _expected(column)
    # Chunked, with NULLs at both ends of a chunk.
    chunked = pa.chunked_array([pa.array([None, 0, None], column.type), column])
    assert _described(_pylist(chunked)) == _expected(chunked)
