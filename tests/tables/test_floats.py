"""The float4 / float8 rule (trinity_dbapi/tables/floats.py) against an exact oracle.

An exact number (integer, decimal, text) is stored only if its float names
it: the float is the number, or the float's shortest round-trip text is the
number. The oracle computes the correctly rounded float with ``Fraction``
arithmetic (no Arrow, no float parsing it could share a bug with) and the
shortest text with Python (float8) or NumPy (float4).
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trinity_dbapi.errors import DataError
from trinity_dbapi.tables.convert import convert, convert_python

D = decimal.Decimal

#: Per type: (Arrow type, the largest finite value, half its last ulp, mantissa bits).
_TYPES = {
    "float4": (pa.float32(), Fraction(float(np.finfo(np.float32).max)), Fraction(2) ** 103, 24),
    "float8": (pa.float64(), Fraction(float(np.finfo(np.float64).max)), Fraction(2) ** 970, 53),
}


def _nearest(x: Fraction, kind: str) -> float:
    """``x`` correctly rounded to the type (ties to even); an infinity past its range."""
    _, largest, half_ulp, _ = _TYPES[kind]
    if abs(x) >= largest + half_ulp:
        return math.inf if x > 0 else -math.inf
    wide = x.numerator / x.denominator  # int / int is correctly rounded
    if kind == "float8":
        return wide
    with np.errstate(over="ignore"):
        one = np.float32(wide)
        near = [one, np.nextafter(one, np.float32(-np.inf)), np.nextafter(one, np.float32(np.inf))]
    best = min(
        [c for c in near if np.isfinite(c)],  # within the range: the threshold above decided
        key=lambda c: (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint32)) & 1),
    )
    return float(best)


def _shortest(value: float, kind: str) -> str:
    return repr(value) if kind == "float8" else str(np.float32(value))


def expected(number: D, kind: str) -> float | str:
    """What the rule stores for the exact ``number``: its float, or "DataError"."""
    x = Fraction(number)
    value = _nearest(x, kind)
    if math.isinf(value) or (value == 0 and x != 0):
        return "DataError"
    if number != D(value) and number != D(_shortest(value, kind)):
        return "DataError"
    return -0.0 if number.is_zero() and number.is_signed() else value  # text keeps '-0'


def _outcome(values: pa.Array, kind: str) -> float | str:
    try:
        (got,) = convert(values, _TYPES[kind][0], "v").to_pylist()
    except DataError:
        return "DataError"
    return got


def _key(value: float | str) -> object:
    return value if isinstance(value, str) else (value, math.copysign(1, value))


#: Numbers near the edges: float8's 2**53, float4's 2**24, powers of ten, the
#: ends of both ranges, subnormals, and shortest texts with a digit changed.
EDGES = st.sampled_from(
    [
        "9007199254740992",
        "9007199254740993",
        "9007199254740994",
        "16777216",
        "16777217",
        "1e30",
        "1000000000000000000000000000001",
        "1e400",
        "-1e400",
        "1e-400",
        "5e-324",
        "3e-324",
        "2e-324",
        "1e-45",
        "7e-46",
        "1e-46",
        "3.4028235e38",
        "3.4028236e38",
        "3.40282357e38",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "0.1",
        "0.30000000000000004",
        "0.30000000000000005",
        "0.1000000000000000055511151231257827021181583404541015625",
        "123456.7",
        "123456.75",
        "-0",
        "0e5",
    ]
)


@st.composite
def near_floats(draw: st.DrawFn) -> str:
    """A float's shortest text (named), its exact value, or either with one more digit."""
    value = draw(st.floats(allow_nan=False, allow_infinity=False))
    kind = draw(st.sampled_from(["float4", "float8"]))
    if kind == "float4":
        with np.errstate(over="ignore"):
            value = float(np.float32(value))
        if not math.isfinite(value):
            value = 1.5
    text = draw(st.sampled_from([_shortest(value, kind), format(D(value), "f")]))
    if draw(st.booleans()):
        mantissa, _, exponent = text.partition("e")
        digit = draw(st.sampled_from("123456789"))
        mantissa += digit if "." in mantissa else "." + digit
        text = mantissa + (f"e{exponent}" if exponent else "")
    return text


NUMBERS = (
    EDGES
    | near_floats()
    | st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1).map(str)
    | st.integers(min_value=2**52, max_value=2**54).map(str)
    | st.decimals(allow_nan=False, allow_infinity=False).map(str)
)

_SETTINGS = settings(deadline=None, max_examples=300)  # a shared machine: no timing


@pytest.mark.parametrize("kind", ["float4", "float8"])
@_SETTINGS
@given(text=NUMBERS)
@example(text="9007199254740993")
@example(text="1e400")
@example(text="1e-400")
def test_text_is_stored_only_when_its_float_names_it(kind: str, text: str) -> None:
    want = expected(D(text), kind)
    assert _key(_outcome(pa.array([text]), kind)) == _key(want)


@pytest.mark.parametrize("kind", ["float4", "float8"])
@_SETTINGS
@given(text=NUMBERS)
def test_a_decimal_meets_the_rule_of_its_text(kind: str, text: str) -> None:
    number = D(text)
    try:
        values = pa.array([number])  # decimal128 or decimal256 of the number's own digits
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return  # more digits than Arrow's decimals hold: no decimal array to convert
    want = expected(number.copy_abs() if number.is_zero() else number, kind)  # no -0 decimal
    assert _key(_outcome(values, kind)) == _key(want)


@pytest.mark.parametrize("kind", ["float4", "float8"])
@_SETTINGS
@given(
    number=st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.integers(min_value=2**52, max_value=2**54)
    | st.integers(min_value=2**23, max_value=2**25)
    | st.sampled_from([2**63 - 1, -(2**63), 10**18, 2**60, 1152921504606847000])
)
def test_an_integer_is_stored_only_when_its_float_names_it(kind: str, number: int) -> None:
    want = expected(D(number), kind)
    assert _key(_outcome(pa.array([number], pa.int64()), kind)) == _key(want)
    # Python integers (executemany's path) meet the same rule.
    try:
        (got,) = convert_python([number], _TYPES[kind][0], "v").to_pylist()
    except DataError:
        got = "DataError"
    assert _key(got) == _key(want)


@pytest.mark.parametrize(
    ("text", "stored"),
    [("inf", math.inf), ("-Infinity", -math.inf), ("+inf", math.inf), ("nan", math.nan)],
)
@pytest.mark.parametrize("kind", ["float4", "float8"])
def test_non_finite_values_spelled_out_are_themselves(kind: str, text: str, stored: float) -> None:
    got = _outcome(pa.array([text]), kind)
    assert isinstance(got, float)
    assert (math.isnan(got) and math.isnan(stored)) or got == stored


@pytest.mark.parametrize(
    ("values", "kind", "reason"),
    [
        (pa.array([2**53 + 1]), "float8", r"nearest value of the type is 9\.007199254740992e\+15"),
        (pa.array(["1e400"]), "float8", "would become an infinity"),
        (pa.array(["1e-400"]), "float8", "would become zero"),
        (pa.array([D("9007199254740993")]), "float8", "a different number"),
        (pa.array([2**24 + 1]), "float4", r"nearest value of the type is 16777216"),
        (pa.array([1e-50]), "float4", "would become zero"),
        (pa.array([True]), "float8", "is not a number"),
    ],
)
def test_a_refusal_names_the_value_and_why(values: pa.Array, kind: str, reason: str) -> None:
    with pytest.raises(DataError, match=rf"column 'v' cannot hold the value .*: .*{reason}"):
        convert(values, _TYPES[kind][0], "v")


def test_the_first_refused_value_of_many_is_named() -> None:
    values = pa.array(["1.5", "0.1", None, "9007199254740993", "1e400"])
    with pytest.raises(DataError, match=r"'9007199254740993' \(row 4\)"):
        convert(values, pa.float64(), "v", rows=range(1, 6))
    good = pa.array(["1.5", "0.1", None, "-0", "5e-324", "1e+30"])
    assert convert(good, pa.float64(), "v").to_pylist() == [1.5, 0.1, None, -0.0, 5e-324, 1e30]


def test_a_decimal_is_rounded_correctly_where_arrow_s_own_cast_is_not() -> None:
    """Arrow's decimal -> double cast is an ulp off for about one value in ten."""
    texts = ["2.54121E-12", "57.127472528", "0.00080785697153414", "0.000628218542", "1.4"]
    numbers = [D(text) for text in texts] + [D(f"0.{i:017d}") for i in range(1, 3000, 7)]
    for scale in (17, 20, 30):
        values = pa.array(numbers, pa.decimal128(38, scale))
        assert convert(values, pa.float64(), "v").to_pylist() == [float(n) for n in numbers]
