"""Number literals reach DuckDB as the number written, as parameters do, or DataError.

trinity_dbapi/sql/literals.py: DuckDB reads a number with an exponent as a
DOUBLE, a number with a point and more than 38 digits as a (rounded) DOUBLE,
and an integer of more than 38 digits as a BIGNUM. A statement holding one
that would not be the number written is refused when it is parsed; a number
with more than 38 digits that is the same number in fewer (trailing zeros) is
read as that exact DECIMAL, as a ``Decimal`` parameter is bound.
"""

from __future__ import annotations

import decimal
import math
import re
import struct
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.dbapi.params import check_params
from trinity_dbapi.errors import DataError

D = decimal.Decimal


@pytest.fixture(scope="module")
def cur() -> Iterator[Any]:
    conn = trinity_dbapi.connect(f"memory://literals-{uuid.uuid4().hex}", autocommit=True)
    yield conn.cursor()
    conn.close()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1e400", "would become an infinity"),
        ("-1E+400", "would become an infinity"),
        ("1e-400", "would become zero"),
        ("9007199254740993e0", r"nearest value of the type is 9\.007199254740992e\+15"),
        ("1" * 39, "has more than 38 digits"),
        ("1234567890123456789012345678901234567890", "has more than 38 digits"),
        ("1.23456789012345678901234567890123456789", "needs more than 38 digits"),
    ],
)
def test_a_literal_duckdb_would_change_is_refused(cur: Any, text: str, reason: str) -> None:
    with pytest.raises(
        DataError, match=rf"the (number|integer) {re.escape(text.lstrip('-'))} .*{reason}"
    ):
        cur.execute(f"SELECT {text}")


def test_nothing_is_written_for_a_refused_literal(cur: Any) -> None:
    cur.execute("CREATE TABLE f8 (v FLOAT8)")
    with pytest.raises(DataError, match="the number 1e400"):
        cur.execute("INSERT INTO f8 VALUES (1.5), (1e400)")
    assert cur.execute("SELECT count(*) FROM f8").fetchone() == (0,)


def _bits(value: float) -> bytes:
    return struct.pack(">d", value)


def test_doubles_a_literal_names_are_read_exactly(cur: Any) -> None:
    row = cur.execute(
        "SELECT 1e300, 5e-324, 0e0, -0e0, 1.5e3, 0.30000000000000004e0, 1.7976931348623157e308"
    ).fetchone()
    want = (1e300, 5e-324, 0.0, -0.0, 1500.0, 0.30000000000000004, 1.7976931348623157e308)
    assert [_bits(v) for v in row] == [_bits(v) for v in want]


@pytest.mark.parametrize(
    ("text", "value", "sql_type"),
    [
        ("1." + "0" * 40, D("1"), "DECIMAL"),
        ("0." + "0" * 37 + "1000", D("1E-38"), "DECIMAL"),
        ("100." + "0" * 40, D("100"), "DECIMAL"),
        ("0." + "0" * 45, D("0"), "DECIMAL"),
    ],
)
def test_trailing_zeros_past_38_digits_keep_a_decimal_exact(
    cur: Any, text: str, value: D, sql_type: str
) -> None:
    (got,) = cur.execute(f"SELECT {text}").fetchone()
    assert isinstance(got, D) and got == value
    assert cur.description[0][1] == sql_type


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.decimals(allow_nan=False, allow_infinity=False) | st.integers(-(10**40), 10**40))
@example(D("1." + "0" * 40))
@example(D("1E+38"))
@example(10**38)
@example(D("8.6736173803599518777E-19"))  # 38 places: the literal reads it, no parameter can
def test_a_literal_is_read_as_its_parameter_twin_is_bound(cur: Any, value: D | int) -> None:
    """``SELECT <literal>`` gives the value a parameter binds, or the value written.

    A literal can say more than a parameter: 38 places below 0.1 are DuckDB's
    DECIMAL(38, 38) written as a literal without its leading zero, while a
    ``Decimal`` parameter of that value binds as a DOUBLE (DuckDB counts the
    zero), so the parameter is refused. Never a changed value either way.
    """
    try:
        (bound,) = check_params([value])
    except DataError:
        bound = "DataError"
    text = format(value, "f") if isinstance(value, D) else str(value)
    try:
        (got,) = cur.execute(f"SELECT {text}").fetchone()
    except DataError:
        got = "DataError"
    if bound == "DataError":
        assert got == "DataError" or (isinstance(got, D) and got == value)
    elif got == "DataError":
        pytest.fail(f"{text} binds as {bound!r} but the literal is refused")
    else:
        assert got == bound and not isinstance(got, float)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_s_shortest_text_with_an_exponent_is_that_float(cur: Any, value: float) -> None:
    text = repr(value)
    text = text if "e" in text else text + "e0"
    (got,) = cur.execute(f"SELECT {text}").fetchone()
    assert isinstance(got, float) and _bits(got) == _bits(value)
    assert not math.isnan(got)
