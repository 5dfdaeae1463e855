"""The conversion rule on Arrow data (trinity_dbapi/tables/convert.py), value by value."""

from __future__ import annotations

import datetime
import decimal
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trinity_dbapi.errors import DataError
from trinity_dbapi.tables.convert import convert, convert_python

D = decimal.Decimal


def _float4(x: float) -> float:
    """``x`` rounded to the nearest float4 by NumPy (infinite when it overflows)."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


@settings(deadline=None)  # a shared machine: no timing in unit tests
@given(
    st.floats()
    | st.sampled_from([3.4028235e38, 3.4028236e38, 3.40282357e38, 3.5e38])
    | st.sampled_from([1e-45, 7e-46, 7.1e-46, 1e-46, -1e-50, 2.2250738585072014e-308])
)
def test_float4_rounds_but_never_leaves_its_range(x: float) -> None:
    overflows = math.isfinite(x) and not math.isfinite(_float4(x))
    if overflows:
        with pytest.raises(DataError, match="would become an infinity"):
            convert(pa.array([x]), pa.float32(), "v")
        return
    if x != 0 and _float4(x) == 0:  # underflow: a non-zero value is not made zero either
        with pytest.raises(DataError, match="too small for the type and would become zero"):
            convert(pa.array([x]), pa.float32(), "v")
        return
    (got,) = convert(pa.array([x]), pa.float32(), "v").to_pylist()
    if math.isnan(x):
        assert math.isnan(got)
    else:
        assert got == _float4(x) and math.copysign(1, got) == math.copysign(1, x)


@settings(deadline=None)  # a shared machine: no timing in unit tests
@given(
    st.decimals(
        allow_nan=False, allow_infinity=False, places=4, min_value=-(10**6), max_value=10**6
    )
)
def test_a_decimal_is_stored_only_without_rounding(value: D) -> None:
    exact = value == value.quantize(D("0.01")) and abs(value) < 1000
    source = pa.array([value], pa.decimal128(11, 4))
    if not exact:
        with pytest.raises(DataError, match=r"column 'v' cannot hold the value"):
            convert(source, pa.decimal128(5, 2), "v")
        return
    assert convert(source, pa.decimal128(5, 2), "v").to_pylist() == [value]


@settings(deadline=None)  # a shared machine: no timing in unit tests
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e4, max_value=1e4))
@example(1.3247213420481442e-180)  # Arrow parses its text as 0 without an error
@example(1.9)  # Arrow reads 1.90 back as 1.9000000000000001
def test_a_float_into_a_decimal_is_its_shortest_text(x: float) -> None:
    text = D(repr(x))
    if text != text.quantize(D("0.01")) or abs(text) >= 1000:
        with pytest.raises(DataError):
            convert(pa.array([x]), pa.decimal128(5, 2), "v")
    else:
        assert convert(pa.array([x]), pa.decimal128(5, 2), "v").to_pylist() == [text]


@settings(deadline=None)  # a shared machine: no timing in unit tests
@given(st.floats())
def test_a_float_into_an_integer_is_never_truncated(x: float) -> None:
    if math.isfinite(x) and x == int(x) and -(2**63) <= int(x) < 2**63:
        assert convert(pa.array([x]), pa.int64(), "v").to_pylist() == [int(x)]
    else:
        with pytest.raises(DataError):
            convert(pa.array([x]), pa.int64(), "v")


def test_the_first_refused_value_and_its_row_are_named() -> None:
    values = [1.0] * 1000 + [2.5] + [3.5] * 10
    with pytest.raises(DataError, match=r"value 2\.5 \(row 1001\) exactly as its type INT8"):
        convert(pa.array(values), pa.int64(), "v", type_name="INT8", rows=range(1, 1012))


def test_39_digits_in_a_decimal128_38_are_refused() -> None:
    """What DuckDB exports for a HUGEINT of 39 digits: the precision check catches it."""
    import duckdb

    big = duckdb.sql("SELECT 170141183460469231731687303715884105727::HUGEINT AS v")
    column = big.to_arrow_table().column("v")
    assert column.type == pa.decimal128(38, 0)
    with pytest.raises(DataError, match="does not fit in precision 38"):
        convert(column, pa.decimal128(38, 0), "v")


@pytest.mark.parametrize(
    ("values", "target", "expected"),
    [
        ([2**60 + 1, 2.0, None], pa.int64(), [2**60 + 1, 2, None]),  # never unified as floats
        ([1, D("2.50"), 0.25], pa.decimal128(5, 2), [D("1.00"), D("2.50"), D("0.25")]),
        ([2**64, None], pa.decimal128(38, 0), [D(2**64), None]),
        (["5", 6], pa.int64(), [5, 6]),
        (
            [datetime.datetime(2024, 1, 1), datetime.date(2024, 1, 2)],
            pa.date32(),
            [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)],
        ),
    ],
)
def test_python_values_of_several_kinds(
    values: list[object], target: pa.DataType, expected: list[object]
) -> None:
    assert convert_python(values, target, "v").to_pylist() == expected


@pytest.mark.parametrize(
    ("values", "target", "row"),
    [
        ([1, 2, 1.5], pa.int64(), 3),
        ([True, 1], pa.int64(), 1),
        ([1, "x"], pa.int64(), 2),
        ([0.5, 1e300], pa.float32(), 2),
        ([1, datetime.date(2024, 1, 1)], pa.string(), 1),
    ],
)
def test_python_values_refused_name_their_parameter_set(
    values: list[object], target: pa.DataType, row: int
) -> None:
    with pytest.raises(DataError, match=rf"\(row {row}\)"):
        convert_python(values, target, "v")


def test_nested_values_follow_the_rule_inside() -> None:
    """Elements, members, keys and values: inside a list<float4> 1e300 is refused too."""
    lists = pa.array([[0.5, None], None, [1e300], [2.0]], pa.list_(pa.float64()))
    with pytest.raises(DataError, match=r"\[1e\+300\] \(row 3\)"):
        convert(lists, pa.list_(pa.float32()), "v", rows=range(1, 5))
    sliced = lists.slice(3)  # offsets that do not start at 0
    assert convert(sliced, pa.list_(pa.int32()), "v").to_pylist() == [[2]]
    assert convert(lists.slice(0, 2), pa.list_(pa.float32()), "v").to_pylist() == [
        [0.5, None],
        None,
    ]
    structs = pa.array([{"a": 1.0, "b": "x"}, None])
    target = pa.struct([("a", pa.int32()), ("b", pa.string()), ("c", pa.date32())])
    assert convert(structs, target, "v").to_pylist() == [{"a": 1, "b": "x", "c": None}, None]
    with pytest.raises(DataError, match="members \\['b'\\]"):
        convert(structs, pa.struct([("a", pa.int32())]), "v")
    maps = pa.array([[("k", 2.5)]], pa.map_(pa.string(), pa.float64()))
    with pytest.raises(DataError, match=r"Rescaling|truncated"):
        convert(maps, pa.map_(pa.string(), pa.int32()), "v")
    assert convert(maps, pa.map_(pa.string(), pa.float32()), "v").to_pylist() == [[("k", 2.5)]]


def test_text_with_a_large_negative_exponent_is_not_zero() -> None:
    # Newer pyarrow parses the text as 0 and the rule finds the lost digits;
    # pyarrow 18 (Superset 6.1's) refuses the cast itself: refused either way.
    with pytest.raises(
        DataError,
        match=r"cannot hold the value '1\.3247213420481442e-180' exactly as its type "
        r"decimal128\(38, 2\): (its digits beyond the type's scale would be lost|Rescaling)",
    ):
        convert(pa.array(["1.3247213420481442e-180"]), pa.decimal128(38, 2), "v")
    assert convert(pa.array(["123e-2"]), pa.decimal128(5, 2), "v").to_pylist() == [D("1.23")]


def test_python_timestamps_keep_their_nanoseconds_or_are_refused() -> None:
    """pa.array makes microseconds of a pandas.Timestamp: from_python keeps every nanosecond."""
    pd = pytest.importorskip("pandas")
    naive = pd.Timestamp("2020-01-01 00:00:00.123456789")
    values = [naive, None, datetime.datetime(2021, 1, 1), np.datetime64(1, "ns")]
    got = convert_python(values, pa.timestamp("ns"), "v").cast(pa.int64()).to_pylist()
    assert got == [1_577_836_800_123_456_789, None, 1_609_459_200_000_000_000, 1]
    zoned = naive.tz_localize("Europe/Paris")
    (value,) = convert_python([zoned], pa.timestamp("ns", "UTC"), "v").to_pylist()
    assert value == zoned and value.value == zoned.value
    with pytest.raises(DataError, match=r"Timestamp\('2020-01-01 00:00:00.123456789'\) \(row 1\)"):
        convert_python(values, pa.timestamp("us"), "v")
    whole = [pd.Timestamp("2020-01-01 00:00:00.123456"), datetime.datetime(2021, 1, 1)]
    assert convert_python(whole, pa.timestamp("us"), "v").to_pylist() == whole
