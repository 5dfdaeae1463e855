"""FLOAT4 and FLOAT8 columns: every write path stores a number as the rule says, or refuses it.

The rule (docs/datasets.md, "Converting values"; trinity_dbapi/tables/floats.py):
an integer, a decimal or text is stored only if its float names it (is it, or
reads back as it by its shortest text); a float is kept in a FLOAT8 and
rounded into a FLOAT4, but never to an infinity or to zero. Each generated
value is written through every path of tests/sql/engine/test_conversion.py
(``execute``, ``INSERT ... SELECT``, ``UPDATE``, ``executemany``, ``ingest``,
pandas ``to_sql`` both ways) and as a literal in the statement text, and each
outcome is compared with an exact oracle (tests/tables/test_floats.py's):
the value the rule stores, bit for bit, or ``DataError``; never another value.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as hs

from tests.sql.engine.test_conversion import PATHS, Lake, _key, _pandas_refuses
from tests.tables.test_floats import NUMBERS, expected
from trinity_dbapi.dbapi.params import check_params
from trinity_dbapi.errors import DataError

D = decimal.Decimal
KINDS = {"FLOAT4": "float4", "FLOAT8": "float8"}


@pytest.fixture(scope="module")
def lake() -> Iterator[Lake]:
    made = Lake()
    yield made
    made.conn.close()
    made.engine.dispose()


def literal(value: Any) -> str:
    """``value`` written in the statement text as the literal of its own kind.

    An integer is digits, a decimal its plain digits (a DECIMAL), a float its
    shortest text with an exponent (a DOUBLE: docs/sql.md), text a string.
    """
    if isinstance(value, float):
        if not math.isfinite(value):
            return f"'{value}'::DOUBLE"
        text = repr(value)
        return text if "e" in text else text + "e0"
    if isinstance(value, D):
        return format(value, "f")
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def _literal(lake: Lake, table: str, row: int, value: Any) -> None:
    lake.cur.execute(f"INSERT INTO {table} (id, v) VALUES (?, {literal(value)})", [row])


ALL_PATHS = {**PATHS, "literal": _literal}


def outcome(lake: Lake, path: str, sql_type: str, value: Any) -> Any:
    table = lake.tables[sql_type]
    row = 1
    try:
        ALL_PATHS[path](lake, table, row, value)
    except DataError:
        return "DataError"
    finally:
        stored = lake.cur.execute(f"SELECT v FROM {table}").fetchall()
        lake.cur.execute(f"TRUNCATE TABLE {table}")
    assert len(stored) == 1, stored
    return _key(stored[0][0])


def rule(sql_type: str, value: Any) -> Any:
    """The oracle: what the rule stores for ``value`` (as ``_key``), or "DataError"."""
    kind = KINDS[sql_type]
    if isinstance(value, float):
        if kind == "float8" or not math.isfinite(value):
            return _key(value)
        with np.errstate(over="ignore", under="ignore"):
            narrowed = float(np.float32(value))
        if math.isinf(narrowed) or (narrowed == 0 and value != 0):
            return "DataError"  # out of the type's range, either way
        return _key(narrowed)
    if isinstance(value, str):
        if value.lower().lstrip("+-") in ("inf", "infinity", "nan"):
            return _key(float(value))
        number = D(value)
    else:
        try:
            (bound,) = check_params([value])  # more than 38 digits: refused where bound
        except DataError:
            return "DataError"
        number = D(bound).copy_abs() if D(bound).is_zero() else D(bound)  # a decimal has no -0
    stored = expected(number, kind)
    return stored if stored == "DataError" else _key(stored)


def _sign_blind_nan(key: Any) -> Any:
    """A NaN's sign bit is no value (the literal 'nan'::DOUBLE has none to give)."""
    return ("float", "nan") if isinstance(key, tuple) and key[1] == "nan" else key


def check_every_path(lake: Lake, sql_type: str, value: Any) -> None:
    want = _sign_blind_nan(rule(sql_type, value))
    skip = _pandas_refuses(value) or (isinstance(value, float) and not math.isfinite(value))
    got = {
        path: _sign_blind_nan(outcome(lake, path, sql_type, value))
        for path in ALL_PATHS
        if not (skip and path.startswith("to_sql"))
    }
    assert got == dict.fromkeys(got, want), (value, want)


_SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None
)

INTEGERS = (
    hs.integers(min_value=-(2**64), max_value=2**64)
    | hs.integers(min_value=2**52, max_value=2**54)
    | hs.integers(min_value=2**23, max_value=2**25)
    | hs.sampled_from([10**30, 10**30 + 1, 1152921504606847000, 10**38 - 1, 10**38, 2**63])
)
SPELLED = hs.sampled_from(["inf", "-inf", "Infinity", "-Infinity", "nan"])
FLOATS = hs.floats() | hs.sampled_from([1e-50, -1e-46, 7e-46, 3.4028236e38, 1e300, -0.0])


@pytest.mark.parametrize("sql_type", ["FLOAT4", "FLOAT8"])
@_SETTINGS
@given(value=INTEGERS)
@example(value=2**53 + 1)
@example(value=10**30)
@example(value=10**30 + 1)
@example(value=2**24 + 1)
def test_integers_on_every_path(lake: Lake, sql_type: str, value: int) -> None:
    check_every_path(lake, sql_type, value)


@pytest.mark.parametrize("sql_type", ["FLOAT4", "FLOAT8"])
@_SETTINGS
@given(value=NUMBERS | SPELLED)
@example(value="1e400")
@example(value="1e-400")
@example(value="9007199254740993")
@example(value="0.1")
@example(value="-0")
@example(value="-Infinity")
def test_text_on_every_path(lake: Lake, sql_type: str, value: str) -> None:
    check_every_path(lake, sql_type, value)


@pytest.mark.parametrize("sql_type", ["FLOAT4", "FLOAT8"])
@_SETTINGS
@given(value=NUMBERS.map(D))
@example(value=D("9007199254740993"))
@example(value=D("0.1"))
@example(value=D("1E+30"))
@example(value=D("-0"))
def test_decimals_on_every_path(lake: Lake, sql_type: str, value: D) -> None:
    check_every_path(lake, sql_type, value)


@pytest.mark.parametrize("sql_type", ["FLOAT4", "FLOAT8"])
@_SETTINGS
@given(value=FLOATS)
@example(value=0.30000000000000004)
@example(value=1e-50)
@example(value=-0.0)
@example(value=float("nan"))
@example(value=-float("nan"))
def test_floats_on_every_path(lake: Lake, sql_type: str, value: float) -> None:
    check_every_path(lake, sql_type, value)
