"""Checking and normalizing query parameters (paramstyle qmark)."""

from __future__ import annotations

import collections
import datetime
import decimal
import enum
import math
import re
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from trinity_dbapi.dbapi.params import (
    ACCEPTED,
    MAX_INT,
    MIN_INT,
    check_params,
    check_seq_of_params,
)
from trinity_dbapi.errors import DataError, Error, ProgrammingError


class Color(str, enum.Enum):
    RED = "red"


class Size(enum.IntEnum):
    BIG = 3


def test_none_means_no_parameters() -> None:
    assert check_params(None) == ()
    assert check_params([]) == ()
    assert check_params(()) == ()


def test_every_accepted_scalar() -> None:
    values = [
        None,
        True,
        False,
        0,
        -(2**63),
        2**63 - 1,
        1.5,
        decimal.Decimal("1.25"),
        "text",
        "",
        b"\x00\xff",
        datetime.date(2024, 2, 29),
        datetime.time(12, 30, 1, 5),
        datetime.datetime(2024, 2, 29, 12, 30, 1, 5),
        datetime.datetime(2024, 2, 29, tzinfo=datetime.timezone.utc),
    ]
    result = check_params(values)
    assert result == tuple(values)
    assert [type(v) for v in result] == [type(v) for v in values]


def test_tuple_and_other_sequences_are_accepted() -> None:
    assert check_params((1, "a")) == (1, "a")
    assert check_params(collections.UserList([1, 2])) == (1, 2)


def test_bytes_like_become_bytes() -> None:
    result = check_params([bytearray(b"ab"), memoryview(b"cd"), [bytearray(b"ef")]])
    assert result == (b"ab", b"cd", [b"ef"])
    assert type(result[0]) is bytes
    assert type(result[1]) is bytes
    assert type(result[2][0]) is bytes  # type: ignore[index]


def test_subclasses_become_their_base_type() -> None:
    result = check_params([Color.RED, Size.BIG, True])
    assert result == ("red", 3, True)
    assert [type(v) for v in result] == [str, int, bool]


def test_nested_lists_keep_their_shape() -> None:
    value = [1, [2, (3, None)], ()]
    result = check_params([value, (1, 2)])
    assert result == (value, (1, 2))
    assert isinstance(result[0], list)
    assert isinstance(result[0][1][1], tuple)  # type: ignore[index]


def test_special_floats_are_accepted() -> None:
    nan, inf, ninf = check_params([math.nan, math.inf, -math.inf])
    assert math.isnan(nan)  # type: ignore[arg-type]
    assert (inf, ninf) == (math.inf, -math.inf)


def test_integer_range() -> None:
    """Up to 38 digits: beyond, DuckDB's HUGEINT reaches Arrow wrapped (2**127 as -2**127)."""
    assert check_params([MIN_INT, MAX_INT]) == (-(10**38 - 1), 10**38 - 1)
    with pytest.raises(DataError, match=r"parameter 2 is the integer 1000.*more than 38 digits"):
        check_params([1, MAX_INT + 1])
    with pytest.raises(DataError, match=r"integer 170141183460469231731687303715884105728"):
        check_params([2**127])
    with pytest.raises(DataError, match="parameter 1 at \\[0\\]"):
        check_params([[MIN_INT - 1]])
    with pytest.raises(DataError, match="integer of 16610 bits"):
        check_params([10**5000])


def test_decimals_are_bound_exactly_or_refused() -> None:
    """DuckDB binds a decimal of more than 38 digits as a DOUBLE: rounded, so refused."""
    assert check_params(
        [decimal.Decimal("1.5"), decimal.Decimal("1E+5"), decimal.Decimal("0E-50")]
    ) == (decimal.Decimal("1.5"), decimal.Decimal("1E+5"), decimal.Decimal(0))
    (same,) = check_params([decimal.Decimal("1.1" + "0" * 40)])  # the same value, in fewer digits
    assert same == decimal.Decimal("1.1") and str(same) == "1.1"
    assert check_params([decimal.Decimal("1" * 38)]) == (decimal.Decimal("1" * 38),)
    for value in (
        decimal.Decimal("1" * 39),
        decimal.Decimal("1E+40"),
        decimal.Decimal("1." + "1" * 38),
        decimal.Decimal("sNaN"),
    ):
        with pytest.raises(DataError, match="more than 38 digits"):
            check_params([value])
    nan, inf = check_params([decimal.Decimal("NaN"), decimal.Decimal("-Infinity")])
    assert isinstance(nan, float) and math.isnan(nan) and inf == -math.inf


@given(
    st.decimals(allow_nan=False, allow_infinity=False)
    | st.sampled_from(
        [decimal.Decimal("1E+400"), decimal.Decimal("-9.9E+999999"), decimal.Decimal("1E+78")]
    )
)
def test_a_decimal_is_bound_as_itself_or_refused_with_a_data_error(value: decimal.Decimal) -> None:
    """Any exponent: 1E+400 was a bare decimal.InvalidOperation from quantize."""
    try:
        (bound,) = check_params([value])
    except DataError as exc:
        assert "more than 38 digits" in str(exc)
        return
    assert bound == value


@pytest.mark.parametrize(
    "text",
    [
        "9.9999999999999583900E-19",  # 38 decimal places: DuckDB would make it a DOUBLE
        "0." + "0" * 36 + "10",
        "1E-37",  # DECIMAL(38, 37): DuckDB counts the leading zero
        "0." + "1" * 38,  # DECIMAL(38, 38)
        "-0." + "0" * 17 + "5" * 20,
    ],
)
def test_a_small_decimal_reaches_duckdb_as_a_decimal(text: str) -> None:
    """Every bound decimal is one DuckDB binds as a DECIMAL, never silently a DOUBLE."""
    duckdb = pytest.importorskip("duckdb")
    (bound,) = check_params([decimal.Decimal(text)])
    assert bound == decimal.Decimal(text)
    ((kind, back),) = duckdb.execute("SELECT typeof($1), $1", [bound]).fetchall()
    assert kind.startswith("DECIMAL") and back == bound


def test_a_decimal_duckdb_cannot_hold_below_one_is_refused() -> None:
    # 1E-38 has 38 decimal places and one digit: DuckDB binds it as a DOUBLE.
    with pytest.raises(DataError, match="more than 38 digits"):
        check_params([decimal.Decimal("1E-38")])


def test_dict_is_refused_with_paramstyle() -> None:
    with pytest.raises(ProgrammingError, match="paramstyle is qmark") as info:
        check_params({"a": 1})
    assert "dict" in str(info.value)


@pytest.mark.parametrize("params", ["abc", b"abc", bytearray(b"x"), 5, 1.5, {1, 2}, object()])
def test_non_sequences_are_refused(params: object) -> None:
    with pytest.raises(ProgrammingError, match="list or tuple"):
        check_params(params)


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        ({1}, "set"),
        ({"a": 1}, "dict"),
        (1j, "complex"),
        (object(), "object"),
        (frozenset(), "frozenset"),
        (datetime.timedelta(1), "datetime.timedelta"),
        (Color, f"enum.{type(Color).__name__}"),
    ],
)
def test_unsupported_values_name_position_and_type(value: object, type_name: str) -> None:
    with pytest.raises(ProgrammingError, match="parameter 2") as info:
        check_params([1, value])
    message = str(info.value)
    assert f"parameter 2 has unsupported type {type_name};" in message
    assert message.endswith(f"accepted types are {ACCEPTED}")


def test_unsupported_nested_value_names_its_path() -> None:
    with pytest.raises(
        ProgrammingError, match=r"parameter 3 at \[1\]\[0\] has unsupported type set"
    ):
        check_params([1, 2, [0, [{1}]]])


def test_self_containing_list_is_refused() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    with pytest.raises(ProgrammingError, match=r"parameter 1 at \[1\] contains itself"):
        check_params([loop])


def test_shared_sublists_are_fine() -> None:
    shared = [1, 2]
    assert check_params([[shared, shared]]) == ([[1, 2], [1, 2]],)


# --- executemany ------------------------------------------------------------------


def test_seq_of_params() -> None:
    assert check_seq_of_params([]) == []
    assert check_seq_of_params(iter([])) == []
    assert check_seq_of_params([(1, "a"), [2, bytearray(b"b")], ()]) == [
        (1, "a"),
        (2, b"b"),
        (),
    ]
    assert check_seq_of_params((row,) for row in range(3)) == [(0,), (1,), (2,)]


def test_seq_of_params_names_the_set() -> None:
    with pytest.raises(ProgrammingError, match="parameter set 2: parameter 1 has unsupported"):
        check_seq_of_params([(1,), (set(),)])
    with pytest.raises(ProgrammingError, match=r"parameter set 1: .*paramstyle is qmark"):
        check_seq_of_params([{"a": 1}])
    with pytest.raises(ProgrammingError, match=r"parameter set 3: .*not NoneType"):
        check_seq_of_params([(), (), None])


@pytest.mark.parametrize("seq", ["abc", b"abc", 5, None, {"a": (1,)}])
def test_seq_of_params_must_be_iterable(seq: object) -> None:
    with pytest.raises(ProgrammingError, match="executemany takes"):
        check_seq_of_params(seq)


# --- properties -------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=MIN_INT, max_value=MAX_INT),
    st.floats(allow_nan=False),
    st.decimals(
        allow_nan=False, allow_infinity=False, places=4, min_value=-(10**30), max_value=10**30
    ),
    st.text(),
    st.binary(),
    st.dates(),
    st.times(),
    st.datetimes(),
)
_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4) | st.tuples(children, children),
    max_leaves=12,
)
_foreign = st.one_of(
    st.sets(st.integers(), max_size=3),
    st.frozensets(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
    st.complex_numbers(),
    st.builds(object),
    st.timedeltas(),
    st.builds(bytearray).map(iter),
)


@given(st.lists(_values, max_size=6))
def test_accepted_values_pass_unchanged(params: list[object]) -> None:
    assert check_params(params) == tuple(params)


@given(
    st.lists(_values, max_size=4),
    _foreign,
    st.lists(_values, max_size=4),
    st.integers(min_value=0, max_value=3),
)
def test_foreign_values_are_refused(
    before: list[object], foreign: object, after: list[object], depth: int
) -> None:
    value = foreign
    for _ in range(depth):
        value = [value]
    position = len(before) + 1
    with pytest.raises(ProgrammingError, match=f"parameter {position}\\b.*unsupported type"):
        check_params([*before, value, *after])


_BATCH_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**130), max_value=2**130),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.dates(),
    st.datetimes(),
    st.times(),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.builds(bytearray, st.binary(max_size=3)),
    st.lists(st.integers(min_value=0, max_value=9), max_size=2),
)


@given(st.lists(st.lists(_BATCH_VALUES, min_size=2, max_size=2), max_size=6))
# Fewer digits than its 38 places: DuckDB would bind it as a DOUBLE (hypothesis found it).
@example([[None, decimal.Decimal("9.7377065628943748222E-19")]])
def test_bulk_check_agrees_with_checking_each_set(sets: list[list[Any]]) -> None:
    # The fast path for plain batches must accept, normalize and refuse
    # exactly as checking the sets one by one does.
    try:
        expected: Any = [check_params(params) for params in sets]
    except Error as exc:
        expected = (type(exc), str(exc))
    try:
        got: Any = [tuple(params) for params in check_seq_of_params(sets)]
    except Error as exc:
        got = (type(exc), re.sub(r"^parameter set \d+: ", "", str(exc)))
    assert got == expected


def test_a_bad_value_deep_in_a_big_batch_is_named() -> None:
    sets: list[Any] = [(i, "x") for i in range(10_000)]
    sets[7_000] = (7_000, {"a": 1})
    with pytest.raises(ProgrammingError, match=r"parameter set 7001: parameter 2 has unsupported"):
        check_seq_of_params(sets)
    sets[7_000] = (2**200, "x")
    with pytest.raises(DataError, match="parameter set 7001: parameter 1"):
        check_seq_of_params(sets)
