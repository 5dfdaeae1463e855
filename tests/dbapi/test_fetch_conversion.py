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
from trinity_dbapi.dbapi.cursor import _pylist

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


@pytest.mark.parametrize("name", CASES)
def test_bulk_conversion_matches_to_pylist(name: str) -> None:
    column = CASES[name]
    assert _described(_pylist(column)) == _described(column.to_pylist())


def test_a_timestamp_past_year_9999_fails_the_same_way() -> None:
    column = pa.array([253_402_300_800_000_000], pa.timestamp("us"))
    with pytest.raises((ValueError, OverflowError)) as expected:
        column.to_pylist()
    with pytest.raises(expected.type, match=str(expected.value)):
        _pylist(column)


@given(
    st.lists(st.one_of(st.none(), st.integers(-(2**62), 2**62)), max_size=20),
    st.sampled_from(["s", "ms", "us"]),
    st.sampled_from([None, "UTC", "Etc/UTC", "+00:00", "Europe/Paris"]),
)
def test_timestamps_of_any_unit_and_zone(
    values: list[int | None], unit: str, tz: str | None
) -> None:
    column = pa.array(values, pa.timestamp(unit, tz))
    try:
        expected: Any = _described(column.to_pylist())
    except (ValueError, OverflowError):
        expected = "error"
    try:
        got: Any = _described(_pylist(column))
    except (ValueError, OverflowError):
        got = "error"
    assert got == expected


def test_fetchall_of_dates_and_timestamps_through_the_driver() -> None:
    conn = trinity_dbapi.connect("memory://fetch-conversion", autocommit=True)
    rows = conn.execute(
        "SELECT DATE '2026-01-02' + i::INT AS d, TIMESTAMPTZ '2026-01-02 03:04:05.123456+00' AS t,"
        " i FROM range(3) AS r(i)"
    ).fetchall()
    utc = datetime.timezone.utc
    assert [(d, t.astimezone(utc), i) for d, t, i in rows] == [
        (datetime.date(2026, 1, 2 + i), datetime.datetime(2026, 1, 2, 3, 4, 5, 123456, utc), i)
        for i in range(3)
    ]
    conn.close()
