"""PEP 249 type objects and constructors, and the type codes of ``cursor.description``.

Type codes
    A type code in ``cursor.description`` is a string naming the column's type
    the way DuckDB spells it: ``'INTEGER'``, ``'VARCHAR'``, ``'DECIMAL'``,
    ``'TIMESTAMP WITH TIME ZONE'`` and so on. :func:`type_code` derives it from
    the Arrow type of the result column (one table, :data:`_ARROW_TYPE_CODES`,
    rather than an ``if`` chain), and :func:`describe` builds the seven-item
    column descriptions from an Arrow schema. Parameters such as the precision
    of a decimal are not part of the code: they are the ``precision`` and
    ``scale`` items of the description.

Type objects
    :data:`STRING`, :data:`BINARY`, :data:`NUMBER`, :data:`DATETIME` and
    :data:`ROWID` are :class:`DBAPITypeObject` instances: each compares equal to
    every type code of its group, so ``description[1] == NUMBER`` tells whether
    a column is numeric. Each group also holds DuckDB's own spellings of the
    types it covers (``'FLOAT'``, ``'TIMESTAMPTZ'``, ``'TIMESTAMP_NS'``...), so
    codes taken from DuckDB directly compare as expected too. Decisions where
    PEP 249 is silent:

    - ``BOOLEAN`` is a :data:`NUMBER` (Python's ``bool`` is an ``int``; most
      drivers do the same).
    - ``UUID``, ``JSON`` and ``ENUM`` are :data:`STRING`: their values are text
      or convert to and from text losslessly.
    - ``INTERVAL`` is a :data:`DATETIME` (a duration; psycopg does the same).
    - ``STRUCT``, ``MAP``, ``LIST``, ``ARRAY``, ``UNION`` and ``NULL`` belong to no
      group: PEP 249 has no type object for nested values.
    - :data:`ROWID` is empty and matches nothing: TrinityLake tables have no row
      identifier column (rows live in immutable data files, addressed by no
      stable ID), and DuckDB's ``rowid`` pseudo-column is an ordinary
      ``BIGINT``, reported as a :data:`NUMBER`.

Constructors
    :func:`Date`, :func:`Time` and :func:`Timestamp` are the :mod:`datetime`
    classes. The ``*FromTicks`` constructors read ticks (seconds since the
    epoch) in **local time**, as PEP 249's reference implementation does with
    :func:`time.localtime` and as :mod:`sqlite3` does; unlike that reference
    they keep the fraction of a second. Their results are naive, like the
    values of a ``TIMESTAMP`` (without time zone) column. To build an instant in
    UTC, use ``Timestamp.fromtimestamp(ticks, datetime.timezone.utc)``.

Importing this module is cheap: pyarrow is imported by the functions that use it.

Imports from dbapi/: nothing.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "BINARY",
    "DATETIME",
    "NUMBER",
    "ROWID",
    "STRING",
    "Binary",
    "DBAPITypeObject",
    "Date",
    "DateFromTicks",
    "Time",
    "TimeFromTicks",
    "Timestamp",
    "TimestampFromTicks",
    "describe",
    "type_code",
]

# --- constructors ---------------------------------------------------------------

Date = datetime.date
Time = datetime.time
Timestamp = datetime.datetime


def DateFromTicks(ticks: float) -> datetime.date:
    """The local date at ``ticks`` seconds since the epoch."""
    return datetime.date.fromtimestamp(ticks)


def TimeFromTicks(ticks: float) -> datetime.time:
    """The local wall-clock time (naive, with microseconds) at ``ticks``."""
    return datetime.datetime.fromtimestamp(ticks).time()


def TimestampFromTicks(ticks: float) -> datetime.datetime:
    """The local date and time (naive, with microseconds) at ``ticks``."""
    return datetime.datetime.fromtimestamp(ticks)


def Binary(value: bytes | bytearray | memoryview) -> bytes:
    """A binary (``BLOB``) value: the bytes of any bytes-like object.

    Raises:
        TypeError: ``value`` is a ``str`` (encode it first: the encoding is
            the caller's choice) or not bytes-like.
    """
    if isinstance(value, str):
        raise TypeError("Binary() takes bytes-like objects, not str: encode the text first")
    return bytes(value)


# --- type objects ---------------------------------------------------------------


class DBAPITypeObject:
    """A PEP 249 type object: equal to every type code in its set.

    Comparison ignores case, so ``NUMBER == 'integer'`` holds. As with every
    DB-API driver, an object equal to several strings cannot hash like each of
    them: do not look type objects up in a dict keyed by type codes.

    Args:
        name: the PEP 249 name (``'NUMBER'``), for ``repr``.
        codes: the type codes the object stands for.
    """

    __slots__ = ("codes", "name")

    def __init__(self, name: str, codes: Iterable[str]) -> None:
        self.name = name
        self.codes: frozenset[str] = frozenset(code.upper() for code in codes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return other.upper() in self.codes
        if isinstance(other, DBAPITypeObject):
            return self.codes == other.codes
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.codes)

    def __repr__(self) -> str:
        return f"<DBAPITypeObject {self.name}: {', '.join(sorted(self.codes)) or 'no codes'}>"


STRING = DBAPITypeObject("STRING", ["VARCHAR", "CHAR", "TEXT", "UUID", "JSON", "ENUM"])
BINARY = DBAPITypeObject("BINARY", ["BLOB", "BYTEA", "VARBINARY"])
NUMBER = DBAPITypeObject(
    "NUMBER",
    [
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
        "BIGNUM",
        "VARINT",
        "DECIMAL",
        "REAL",
        "FLOAT",
        "DOUBLE",
    ],
)
DATETIME = DBAPITypeObject(
    "DATETIME",
    [
        "DATE",
        "TIME",
        "TIME WITH TIME ZONE",
        "TIMETZ",
        "TIMESTAMP",
        "TIMESTAMP_S",
        "TIMESTAMP_MS",
        "TIMESTAMP_NS",
        "TIMESTAMP WITH TIME ZONE",
        "TIMESTAMPTZ",
        "INTERVAL",
    ],
)
ROWID = DBAPITypeObject("ROWID", [])


# --- type codes -----------------------------------------------------------------


def _timestamp_code(arrow_type: Any) -> str:
    return "TIMESTAMP WITH TIME ZONE" if arrow_type.tz else "TIMESTAMP"


def _value_type_code(arrow_type: Any) -> str:
    return type_code(arrow_type.value_type)


def _extension_code(arrow_type: Any) -> str:
    name = arrow_type.extension_name
    if name in _EXTENSION_CODES:
        return _EXTENSION_CODES[name]
    if name == "arrow.opaque" and arrow_type.vendor_name == "DuckDB":
        return str(arrow_type.type_name).upper()
    return type_code(arrow_type.storage_type)


#: Canonical Arrow extension type names and the code of their columns.
_EXTENSION_CODES = {"arrow.uuid": "UUID", "arrow.json": "JSON"}

#: ``pyarrow.types`` predicate names and the type code (or a function of the
#: type giving it), first match wins. Predicates missing from an older
#: pyarrow are skipped.
_ARROW_TYPE_CODES: tuple[tuple[str, str | Callable[[Any], str]], ...] = (
    ("is_null", "NULL"),
    ("is_boolean", "BOOLEAN"),
    ("is_int8", "TINYINT"),
    ("is_int16", "SMALLINT"),
    ("is_int32", "INTEGER"),
    ("is_int64", "BIGINT"),
    ("is_uint8", "UTINYINT"),
    ("is_uint16", "USMALLINT"),
    ("is_uint32", "UINTEGER"),
    ("is_uint64", "UBIGINT"),
    ("is_float16", "REAL"),
    ("is_float32", "REAL"),
    ("is_float64", "DOUBLE"),
    ("is_decimal", "DECIMAL"),
    ("is_string", "VARCHAR"),
    ("is_large_string", "VARCHAR"),
    ("is_string_view", "VARCHAR"),
    ("is_binary", "BLOB"),
    ("is_large_binary", "BLOB"),
    ("is_binary_view", "BLOB"),
    ("is_fixed_size_binary", "BLOB"),
    ("is_date", "DATE"),
    ("is_time", "TIME"),
    ("is_timestamp", _timestamp_code),
    ("is_duration", "INTERVAL"),
    ("is_interval", "INTERVAL"),
    ("is_struct", "STRUCT"),
    ("is_map", "MAP"),
    ("is_list", "LIST"),
    ("is_large_list", "LIST"),
    ("is_list_view", "LIST"),
    ("is_large_list_view", "LIST"),
    ("is_fixed_size_list", "ARRAY"),
    ("is_union", "UNION"),
    ("is_dictionary", _value_type_code),
    ("is_run_end_encoded", _value_type_code),
)


@functools.cache
def _predicates() -> tuple[tuple[Callable[[Any], bool], str | Callable[[Any], str]], ...]:
    import pyarrow as pa

    return tuple(
        (getattr(pa.types, name), code)
        for name, code in _ARROW_TYPE_CODES
        if hasattr(pa.types, name)
    )


def type_code(arrow_type: pa.DataType) -> str:
    """The type code of a result column of Arrow type ``arrow_type``.

    Dictionary-encoded and run-end-encoded columns take the code of their
    values (a DuckDB ``ENUM`` reaches Arrow as a dictionary of strings and is a
    ``'VARCHAR'``); extension types take the code of their storage type, except
    UUID, JSON and DuckDB's opaque types (``'BIGNUM'``), which keep their name.

    Args:
        arrow_type: the column's Arrow type.

    Returns:
        The DuckDB name of the type, upper case, without parameters.
    """
    import pyarrow as pa

    if isinstance(arrow_type, pa.BaseExtensionType):
        return _extension_code(arrow_type)
    for predicate, code in _predicates():
        if predicate(arrow_type):
            return code if isinstance(code, str) else code(arrow_type)
    return str(arrow_type).upper()


def _internal_size(arrow_type: pa.DataType) -> int | None:
    """Byte width of a fixed-width type; None for variable width and booleans."""
    import pyarrow as pa

    while pa.types.is_dictionary(arrow_type) or pa.types.is_run_end_encoded(arrow_type):
        arrow_type = arrow_type.value_type  # type: ignore[attr-defined]
    try:
        bits = arrow_type.bit_width
    except ValueError:  # not a fixed-width type
        return None
    return bits // 8 if bits >= 8 else None


def describe(schema: pa.Schema) -> list[tuple[Any, ...]]:
    """PEP 249 column descriptions of a result with Arrow schema ``schema``.

    Each description is ``(name, type_code, display_size, internal_size,
    precision, scale, null_ok)``: ``display_size`` is always None;
    ``internal_size`` is the byte width of fixed-width types (4 for
    ``INTEGER``, 16 for ``DECIMAL`` and ``UUID``) and None for variable-width
    types and booleans (bit-packed in Arrow); ``precision`` and ``scale`` are
    set for decimals only; ``null_ok`` is the field's nullability.

    Args:
        schema: the result's Arrow schema.

    Returns:
        One 7-tuple per column, in schema order.
    """
    import pyarrow as pa

    rows: list[tuple[Any, ...]] = []
    for field in schema:
        arrow_type = field.type
        precision = scale = None
        if pa.types.is_decimal(arrow_type):
            precision, scale = arrow_type.precision, arrow_type.scale
        rows.append(
            (
                field.name,
                type_code(arrow_type),
                None,
                _internal_size(arrow_type),
                precision,
                scale,
                field.nullable,
            )
        )
    return rows
