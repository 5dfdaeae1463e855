"""``arrow_values.array`` gives what ``pa.array`` gives, without importing pandas."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pytest

from trinity_dbapi.format import arrow_values

UTC = dt.timezone.utc
PLUS_TWO = dt.timezone(dt.timedelta(hours=2))

CASES: list[tuple[list[Any], pa.DataType]] = [
    (["a", None, "héllo", "", "😀"], pa.string()),
    ([], pa.string()),
    ([None, None], pa.string()),
    ([1, None, -5, 2**62, -(2**63)], pa.int64()),
    ([1, 2, None, -(2**31)], pa.int32()),
    ([0, 255, None], pa.uint8()),
    ([True, False, None, True] * 5, pa.bool_()),
    (
        [
            dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
            None,
            dt.datetime(1960, 5, 1, 0, 0, 0, 1000),  # naive: taken as UTC
            dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=PLUS_TWO),
        ],
        pa.timestamp("ms", tz="UTC"),
    ),
    ([dt.datetime(2024, 1, 2, 3, 4, 5, 123456), None], pa.timestamp("us")),
    ([dt.datetime(1900, 1, 1, tzinfo=UTC)], pa.timestamp("s", tz="UTC")),
    ([["a", "b"], None, [], ["c", None]], pa.list_(pa.string())),
    ([{"a": "1", "b": None}, None, {}, [("x", "y")]], pa.map_(pa.string(), pa.string())),
]


@pytest.mark.parametrize(("values", "kind"), CASES, ids=[str(kind) for _, kind in CASES])
def test_the_array_is_pyarrows(values: list[Any], kind: pa.DataType) -> None:
    got = arrow_values.array(values, kind)
    got.validate(full=True)
    expected = pa.array(values, kind)
    assert got.equals(expected)
    assert got.to_pylist() == expected.to_pylist()
    assert got.slice(1).to_pylist() == expected.slice(1).to_pylist()


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ([True, 2], pa.int64()),  # a bool in an integer column: pyarrow's rule
        ([2**70], pa.int64()),  # too large
        ([dt.datetime(2024, 1, 1, 0, 0, 0, 1)], pa.timestamp("ms")),  # finer than the unit
        ([dt.date(2024, 1, 1)], pa.timestamp("ms")),
        ([1], pa.string()),
        ([{None: "x"}], pa.map_(pa.string(), pa.string())),
        (["1.5"], pa.decimal128(4, 1)),  # a type it does not build
    ],
)
def test_anything_else_is_pyarrows_too(values: list[Any], kind: pa.DataType) -> None:
    try:
        expected = pa.array(values, kind)
    except (pa.ArrowException, OverflowError, TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            arrow_values.array(values, kind)
        return
    assert arrow_values.array(values, kind).equals(expected)


def test_a_table_is_from_pylist() -> None:
    schema = pa.schema(
        [("name", pa.string(), False), ("size", pa.int64()), ("tags", pa.list_(pa.string()))]
    )
    rows: list[dict[str, Any]] = [{"name": "a", "size": 1, "tags": ["x"]}, {"name": "b"}]
    assert arrow_values.table(rows, schema).equals(pa.Table.from_pylist(rows, schema=schema))


def test_building_imports_no_pandas() -> None:
    code = (
        "import sys, pyarrow as pa\n"
        "from trinity_dbapi.format.arrow_values import array\n"
        "array(['a', None], pa.string()); array([1], pa.int64()); array([True], pa.bool_())\n"
        "array([{'k': 'v'}], pa.map_(pa.string(), pa.string()))\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
