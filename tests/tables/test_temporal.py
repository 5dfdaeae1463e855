"""The dates, times and timestamps a table stores (trinity_dbapi/tables/temporal.py)."""

from __future__ import annotations

import datetime
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.tables.helpers import table_schema
from trinity_dbapi.errors import DataError
from trinity_dbapi.format.definitions import Column, DataType
from trinity_dbapi.tables import temporal
from trinity_dbapi.tables.conform import Conformer

#: The smallest and largest count a table stores, per type.
EDGES = [
    (pa.date32(), -719_162, 2_932_896),
    (pa.timestamp("s"), -62_135_596_800, 253_402_300_799),
    (pa.timestamp("ms", "UTC"), -62_135_596_800_000, 253_402_300_799_999),
    (pa.timestamp("us"), -62_135_596_800_000_000, 253_402_300_799_999_999),
    (pa.timestamp("ns", "UTC"), -(2**63) + 2, 2**63 - 2),
    (pa.time32("s"), 0, 86_399),
    (pa.time32("ms"), 0, 86_399_999),
    (pa.time64("us"), 0, 86_399_999_999),
    (pa.time64("ns"), 0, 86_399_999_999_999),
]


def _array(kind: pa.DataType, counts: list[int | None]) -> pa.Array:
    whole = pa.int32() if pa.types.is_date32(kind) or pa.types.is_time32(kind) else pa.int64()
    return pa.array(counts, whole).view(kind)


@pytest.mark.parametrize(("kind", "low", "high"), EDGES, ids=[str(e[0]) for e in EDGES])
def test_the_stored_range_ends_exactly_where_python_stops(
    kind: pa.DataType, low: int, high: int
) -> None:
    assert temporal.outside(_array(kind, [low, high, None])) is None
    beyond = temporal.outside(_array(kind, [None, low, high, high + 1, low - 1]))
    assert beyond is not None
    assert beyond.to_pylist() == [False, False, False, True, True]
    if getattr(kind, "unit", None) != "ns":
        # Python makes the edges themselves of the edges, and fails one step beyond.
        values = _array(kind, [low, high]).to_pylist()
        kinds = {datetime.date, datetime.datetime, datetime.time}
        assert {type(value) for value in values} <= kinds
        for outside in (low - 1, high + 1):
            try:
                got = _array(kind, [outside]).to_pylist()
            except (OverflowError, ValueError):
                continue
            # pyarrow wraps a time around the day (24:00:00 is 00:00:00): changed, not held.
            assert pa.types.is_time(kind)
            assert got[0] in (datetime.time(0, 0), _array(kind, [high]).to_pylist()[0])


def test_a_sliced_array_is_checked_on_its_own_values() -> None:
    array = _array(pa.date32(), [2_932_897, 0, 1, -800_000]).slice(1, 2)
    assert temporal.outside(array) is None
    assert temporal.outside(array.slice(1)) is None
    assert temporal.outside(_array(pa.date32(), [0, 2_932_897]).slice(1)).to_pylist() == [True]


def test_types_outside_the_rule_are_not_checked() -> None:
    assert temporal.outside(pa.array([2**62])) is None
    assert temporal.kind_of(pa.int64()) is None
    assert temporal.outside(pa.nulls(3, pa.date32())) is None


_DUCK = duckdb.connect()

#: Types whose values DuckDB writes as text, and the counts to try (what DuckDB reads).
_COUNTS = {
    pa.date32(): st.integers(-(2**31) + 1, 2**31 - 1),
    pa.timestamp("s"): st.integers(-(2**63) // 10**6, (2**63 - 1) // 10**6),
    pa.timestamp("ms"): st.integers(-(2**63) // 10**3, (2**63 - 1) // 10**3),
    pa.timestamp("us"): st.integers(-(2**63) + 1, 2**63 - 1),
    pa.timestamp("us", "UTC"): st.integers(-(2**63) + 1, 2**63 - 1),
    pa.timestamp("ns"): st.integers(-(2**63) + 1, 2**63 - 1),
    pa.time64("us"): st.integers(0, 86_400_000_000),
    pa.time64("ns"): st.integers(0, 86_400_000_000_000),
}


@settings(deadline=None)
@given(st.sampled_from(list(_COUNTS)).flatmap(lambda k: st.tuples(st.just(k), _COUNTS[k])))
@example((pa.date32(), -735_160))  # 0044-03-15 (BC)
@example((pa.date32(), 2**31 - 1))  # infinity
@example((pa.timestamp("us"), -(2**63) + 1))  # -infinity
@example((pa.timestamp("us"), -62_135_596_800_000_001))  # the last microsecond of 1 BC
@example((pa.time64("us"), 86_400_000_000))  # 24:00:00
@example((pa.timestamp("ns"), 2**63 - 1))  # infinity
@example((pa.timestamp("ms"), 1_500))
def test_a_value_is_shown_as_duckdb_writes_it(case: tuple[pa.DataType, int]) -> None:
    """The text of a refused value is what CAST(... AS VARCHAR) gives, BC dates and all."""
    kind, count = case
    table = pa.table({"v": _array(kind, [count])})
    try:
        expected = _DUCK.execute("SELECT CAST(v AS VARCHAR) FROM 'table'").fetchone()
    except duckdb.Error:
        return  # beyond what DuckDB itself reads
    assert expected is not None
    assert temporal.text(table.column("v").chunk(0), 0) == expected[0]


def test_the_conformer_names_the_column_member_and_value() -> None:
    schema = table_schema(
        Column(1, "d", DataType("date")),
        Column(2, "s", DataType.struct_of(Column(3, "when", DataType.timestamptz()))),
        Column(4, "l", DataType.list_of(Column(5, "element", DataType.time()))),
    )
    conform = Conformer(schema)
    ok = pa.table(
        {
            "d": _array(pa.date32(), [2_932_896]),
            "s": pa.array(
                [{"when": datetime.datetime(9999, 12, 31, 23, 59, tzinfo=datetime.timezone.utc)}]
            ),
            "l": pa.array([[datetime.time(23, 59, 59, 999_999)]]),
        }
    )
    assert conform(ok).num_rows == 1
    cases: list[tuple[str, Any, str]] = [
        ("d", _array(pa.date32(), [0, 2_932_897]), "column 'd' cannot hold the date 10000-01-01"),
        (
            "s",
            pa.array([{"when": 253_402_300_800_000_000}], pa.struct([("when", pa.int64())])).cast(
                pa.struct([("when", pa.timestamp("us", "UTC"))])
            ),
            r"column 's\.when' cannot hold the timestamp 10000-01-01 00:00:00\+00",
        ),
        (
            "l",
            pa.array([[0, 86_400_000_000]], pa.list_(pa.int64())).cast(
                pa.list_(pa.time64("us")), safe=False
            ),
            r"column 'l\.element' cannot hold the time 24:00:00",
        ),
    ]
    for name, values, message in cases:
        with pytest.raises(DataError, match=rf"{message}: a table stores only .* Python"):
            conform(pa.table({name: values}))


def test_a_nanosecond_value_becomes_an_exact_scalar() -> None:
    pd = pytest.importorskip("pandas")
    naive = pd.Timestamp("2020-01-01 00:00:00.123456789")
    assert temporal.nanosecond_scalar(naive) == pa.scalar(
        1_577_836_800_123_456_789, pa.timestamp("ns")
    )
    paris = pd.Timestamp("2020-01-01 01:00:00.123456789", tz="Europe/Paris")
    assert temporal.nanosecond_scalar(paris) == pa.scalar(
        1_577_836_800_123_456_789, pa.timestamp("ns", "UTC")
    )
    numpy = np.datetime64("2020-01-01T00:00:00.123456789")
    assert temporal.nanosecond_scalar(numpy).value == 1_577_836_800_123_456_789  # type: ignore[union-attr]
    # Values without nanoseconds are plain datetimes to every path.
    for value in [
        pd.Timestamp("2020-01-01"),
        datetime.datetime(2020, 1, 1),
        np.datetime64("NaT"),
        5,
    ]:
        assert temporal.nanosecond_scalar(value) is None
