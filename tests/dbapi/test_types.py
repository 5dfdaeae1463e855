"""PEP 249 type objects, constructors, type codes and column descriptions."""

from __future__ import annotations

import datetime
import subprocess
import sys
import time

import pyarrow as pa
import pytest

from trinity_dbapi.dbapi import types
from trinity_dbapi.dbapi.types import (
    BINARY,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Binary,
    Date,
    DateFromTicks,
    DBAPITypeObject,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
    describe,
    type_code,
)

# --- constructors -----------------------------------------------------------------


def test_constructors_are_the_datetime_classes() -> None:
    assert Date(2024, 2, 29) == datetime.date(2024, 2, 29)
    assert Time(12, 30, 1) == datetime.time(12, 30, 1)
    assert Timestamp(2024, 2, 29, 12, 30, 1, 5) == datetime.datetime(2024, 2, 29, 12, 30, 1, 5)


def test_from_ticks_use_local_time_and_keep_fractions() -> None:
    ticks = 1_700_000_000.25
    local = time.localtime(ticks)
    assert DateFromTicks(ticks) == Date(*local[:3])
    assert TimeFromTicks(ticks) == Time(*local[3:6], 250_000)
    assert TimestampFromTicks(ticks) == Timestamp(*local[:6], 250_000)
    assert TimestampFromTicks(ticks).tzinfo is None


def test_from_ticks_in_another_time_zone() -> None:
    code = (
        "import os, time; os.environ['TZ'] = 'Asia/Tokyo'; time.tzset(); "
        "from trinity_dbapi.dbapi.types import TimestampFromTicks as T; print(T(0))"
    )
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset is POSIX only")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1970-01-01 09:00:00"


@pytest.mark.parametrize("value", [b"ab\x00", bytearray(b"ab\x00"), memoryview(b"ab\x00")])
def test_binary_returns_bytes(value: bytes | bytearray | memoryview) -> None:
    result = Binary(value)
    assert type(result) is bytes
    assert result == b"ab\x00"


def test_binary_refuses_str() -> None:
    with pytest.raises(TypeError, match="encode"):
        Binary("abc")  # type: ignore[arg-type]


# --- type objects -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_object", "code"),
    [
        (NUMBER, "INTEGER"),
        (NUMBER, "BIGINT"),
        (NUMBER, "DECIMAL"),
        (NUMBER, "DOUBLE"),
        (NUMBER, "REAL"),
        (NUMBER, "BOOLEAN"),
        (NUMBER, "integer"),
        (STRING, "VARCHAR"),
        (STRING, "UUID"),
        (BINARY, "BLOB"),
        (DATETIME, "DATE"),
        (DATETIME, "TIME"),
        (DATETIME, "TIMESTAMP"),
        (DATETIME, "TIMESTAMP WITH TIME ZONE"),
        (DATETIME, "INTERVAL"),
    ],
)
def test_type_object_equals_its_codes(type_object: DBAPITypeObject, code: str) -> None:
    assert type_object == code
    assert code == type_object
    assert (type_object != code) is False
    others = [t for t in (STRING, BINARY, NUMBER, DATETIME, ROWID) if t is not type_object]
    assert all(other != code for other in others)


@pytest.mark.parametrize("code", ["STRUCT", "MAP", "LIST", "ARRAY", "UNION", "NULL"])
def test_nested_codes_match_no_type_object(code: str) -> None:
    assert all(t != code for t in (STRING, BINARY, NUMBER, DATETIME, ROWID))


def test_rowid_matches_every_code_we_emit_never() -> None:
    emitted = {type_code(t) for t in _ALL_ARROW_TYPES}
    assert not any(code == ROWID for code in emitted)
    assert ROWID.codes == frozenset()


def test_type_object_comparisons_with_other_objects() -> None:
    assert DBAPITypeObject("copy", NUMBER.codes) == NUMBER
    assert NUMBER != STRING
    assert NUMBER != 4
    assert NUMBER.__eq__(None) is NotImplemented
    assert hash(NUMBER) == hash(DBAPITypeObject("other name", NUMBER.codes))
    assert len({NUMBER, STRING, NUMBER}) == 2
    assert "NUMBER" in repr(NUMBER)
    assert "no codes" in repr(ROWID)


# --- type codes -------------------------------------------------------------------

_CODES: list[tuple[pa.DataType, str, int | None]] = [
    (pa.null(), "NULL", None),
    (pa.bool_(), "BOOLEAN", None),
    (pa.int8(), "TINYINT", 1),
    (pa.int16(), "SMALLINT", 2),
    (pa.int32(), "INTEGER", 4),
    (pa.int64(), "BIGINT", 8),
    (pa.uint8(), "UTINYINT", 1),
    (pa.uint16(), "USMALLINT", 2),
    (pa.uint32(), "UINTEGER", 4),
    (pa.uint64(), "UBIGINT", 8),
    (pa.float16(), "REAL", 2),
    (pa.float32(), "REAL", 4),
    (pa.float64(), "DOUBLE", 8),
    (pa.decimal128(38, 0), "DECIMAL", 16),
    (pa.decimal256(50, 3), "DECIMAL", 32),
    (pa.string(), "VARCHAR", None),
    (pa.large_string(), "VARCHAR", None),
    (pa.binary(), "BLOB", None),
    (pa.large_binary(), "BLOB", None),
    (pa.binary(7), "BLOB", 7),
    (pa.date32(), "DATE", 4),
    (pa.date64(), "DATE", 8),
    (pa.time32("s"), "TIME", 4),
    (pa.time64("us"), "TIME", 8),
    (pa.timestamp("us"), "TIMESTAMP", 8),
    (pa.timestamp("ns"), "TIMESTAMP", 8),
    (pa.timestamp("us", tz="UTC"), "TIMESTAMP WITH TIME ZONE", 8),
    (pa.duration("us"), "INTERVAL", 8),
    (pa.month_day_nano_interval(), "INTERVAL", 16),
    (pa.struct([("a", pa.int32())]), "STRUCT", None),
    (pa.map_(pa.string(), pa.int32()), "MAP", None),
    (pa.list_(pa.int32()), "LIST", None),
    (pa.large_list(pa.int32()), "LIST", None),
    (pa.list_(pa.int32(), 2), "ARRAY", None),
    (pa.dictionary(pa.int8(), pa.string()), "VARCHAR", None),
    (pa.dictionary(pa.int8(), pa.int32()), "INTEGER", 4),
    (pa.run_end_encoded(pa.int32(), pa.float64()), "DOUBLE", 8),
    (pa.sparse_union([pa.field("k", pa.int32())]), "UNION", None),
]
if hasattr(pa, "string_view"):
    _CODES += [(pa.string_view(), "VARCHAR", None), (pa.binary_view(), "BLOB", None)]
if hasattr(pa, "uuid"):
    _CODES.append((pa.uuid(), "UUID", 16))
if hasattr(pa, "json_"):
    _CODES.append((pa.json_(), "JSON", None))
if hasattr(pa, "opaque"):
    _CODES += [
        (pa.opaque(pa.binary(), "bignum", "DuckDB"), "BIGNUM", None),
        (pa.opaque(pa.int64(), "thing", "elsewhere"), "BIGINT", 8),
    ]

_ALL_ARROW_TYPES = [arrow_type for arrow_type, _, _ in _CODES]


@pytest.mark.parametrize(("arrow_type", "code", "size"), _CODES, ids=lambda v: str(v))
def test_type_code(arrow_type: pa.DataType, code: str, size: int | None) -> None:
    assert type_code(arrow_type) == code
    ((_, described_code, display, internal, *_),) = describe(pa.schema([("c", arrow_type)]))
    assert (described_code, display, internal) == (code, None, size)


def test_type_codes_of_a_duckdb_result() -> None:
    duckdb = pytest.importorskip("duckdb")
    table = duckdb.connect().sql(
        "SELECT 1::INTEGER i, 2.5::DOUBLE d, 'x' s, 'x'::BLOB b, TRUE t, DATE '2024-01-01' dt, "
        "TIMESTAMPTZ '2024-01-01 00:00:00+00' tz, 1.25::DECIMAL(5, 2) dec"
    )
    table = table.to_arrow_table() if hasattr(table, "to_arrow_table") else table.arrow()
    codes = [code for _, code, *_ in describe(table.schema)]
    assert codes == [
        "INTEGER",
        "DOUBLE",
        "VARCHAR",
        "BLOB",
        "BOOLEAN",
        "DATE",
        "TIMESTAMP WITH TIME ZONE",
        "DECIMAL",
    ]
    assert codes == [NUMBER, NUMBER, STRING, BINARY, NUMBER, DATETIME, DATETIME, NUMBER]


def test_describe() -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("price", pa.decimal128(10, 2)),
            pa.field("name", pa.string()),
        ]
    )
    assert describe(schema) == [
        ("id", "BIGINT", None, 8, None, None, False),
        ("price", "DECIMAL", None, 16, 10, 2, True),
        ("name", "VARCHAR", None, None, None, None, True),
    ]
    assert describe(pa.schema([])) == []


def test_importing_types_does_not_import_pyarrow() -> None:
    code = "import sys; import trinity_dbapi.dbapi.types; print('pyarrow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert types.__all__
