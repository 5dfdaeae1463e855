"""Arrow arrays of Python values, built from their buffers: ``pa.array`` without pandas.

``pa.array(list)`` first asks pandas whether the list is one of its arrays,
and so imports pandas (0.2 s on a small machine) the first time it runs in a
process, though it needs nothing of it. The catalog tables and SHOW results
are built from a few Python values each: :func:`array` builds them from
their buffers instead, for the types they use (strings, integers, booleans,
timestamps from ``datetime``, lists and maps of those), and hands any other
type, or a value of the wrong Python type, to ``pa.array``, which gives the
same array or raises as it always does.

Imports from format/: nothing.
"""

from __future__ import annotations

import datetime
import itertools
from array import array as _typed
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

#: Integer types by bit width: the ``array`` type code of their values.
_INT_CODES = {8: "b", 16: "h", 32: "i", 64: "q"}
_UINT_CODES = {8: "B", 16: "H", 32: "I", 64: "Q"}
_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000}
_EPOCH = datetime.datetime(1970, 1, 1)
_UTC_EPOCH = _EPOCH.replace(tzinfo=datetime.timezone.utc)


class _Fallback(Exception):
    """A value this module does not build: ``pa.array`` builds the whole column."""


def array(values: Sequence[Any], kind: pa.DataType) -> pa.Array:
    """``pa.array(values, kind)``, built without importing pandas where the type allows.

    Args:
        values: Python values, None for NULL: ``str`` for strings, ``int``
            for integers, ``bool``, ``datetime`` for timestamps (an aware
            one is converted to UTC, a naive one taken as UTC, as pyarrow
            does), sequences for lists, mappings or ``(key, value)`` pairs
            for maps.
        kind: the array's type.
    """
    try:
        return _build(list(values), kind)
    except _Fallback:
        return pa.array(values, kind)


def table(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """``pa.Table.from_pylist(rows, schema)`` (a missing key is NULL), built by :func:`array`."""
    columns = [array([row.get(field.name) for row in rows], field.type) for field in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def _build(values: list[Any], kind: pa.DataType) -> pa.Array:
    count = len(values)
    validity = _validity(values)
    if pa.types.is_string(kind):
        if not all(isinstance(v, str) for v in values if v is not None):
            raise _Fallback
        data = [b"" if v is None else v.encode() for v in values]
        offsets = _typed("i", [0, *itertools.accumulate(map(len, data))])
        return pa.Array.from_buffers(
            kind, count, [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))]
        )
    if pa.types.is_integer(kind):
        if not all(type(v) is int for v in values if v is not None):
            raise _Fallback  # bool, float, Decimal: pyarrow's rules
        codes = _INT_CODES if pa.types.is_signed_integer(kind) else _UINT_CODES
        try:
            ints = _typed(codes[kind.bit_width], [0 if v is None else v for v in values])
        except OverflowError:
            raise _Fallback from None  # pyarrow's own error
        return pa.Array.from_buffers(kind, count, [validity, pa.py_buffer(ints)])
    if pa.types.is_boolean(kind):
        if not all(type(v) is bool for v in values if v is not None):
            raise _Fallback
        return pa.Array.from_buffers(kind, count, [validity, _bitmap([v is True for v in values])])
    if pa.types.is_timestamp(kind) and kind.unit in _UNITS:
        return pa.Array.from_buffers(kind, count, [validity, _timestamps(values, kind.unit)])
    if pa.types.is_list(kind):
        lists = [[] if v is None else v for v in values]
        if not all(isinstance(v, Sequence) and not isinstance(v, str | bytes) for v in lists):
            raise _Fallback
        items = _build([item for v in lists for item in v], kind.value_type)
        offsets = _typed("i", [0, *itertools.accumulate(map(len, lists))])
        return pa.ListArray.from_buffers(
            kind, count, [validity, pa.py_buffer(offsets)], children=[items]
        )
    if pa.types.is_map(kind):
        pairs = [_pairs(v) for v in values]
        if any(key is None for p in pairs for key, _ in p):
            raise _Fallback  # a map key is never NULL: pyarrow's error
        keys = _build([key for p in pairs for key, _ in p], kind.key_type)
        items = _build([item for p in pairs for _, item in p], kind.item_type)
        entries = pa.StructArray.from_arrays(
            [keys, items], fields=[kind.key_field, kind.item_field]
        )
        offsets = _typed("i", [0, *itertools.accumulate(map(len, pairs))])
        return pa.MapArray.from_buffers(
            kind, count, [validity, pa.py_buffer(offsets)], children=[entries]
        )
    raise _Fallback


def _validity(values: list[Any]) -> pa.Buffer | None:
    """The validity bitmap, or None when no value is NULL (as Arrow allows)."""
    if all(v is not None for v in values):
        return None
    return _bitmap([v is not None for v in values])


def _bitmap(bits: list[bool]) -> pa.Buffer:
    """Booleans as an Arrow bitmap: bit ``i % 8`` of byte ``i // 8``."""
    packed = bytearray((len(bits) + 7) // 8)
    for index, bit in enumerate(bits):
        if bit:
            packed[index >> 3] |= 1 << (index & 7)
    return pa.py_buffer(bytes(packed))


def _timestamps(values: list[Any], unit: str) -> pa.Buffer:
    per_second = _UNITS[unit]
    counts = []
    for value in values:
        if value is None:
            counts.append(0)
            continue
        if type(value) is not datetime.datetime:
            raise _Fallback  # a date, a pandas Timestamp, a number: pyarrow's rules
        since = value - (_EPOCH if value.tzinfo is None else _UTC_EPOCH)
        micros = (since.days * 86_400 + since.seconds) * 1_000_000 + since.microseconds
        if micros % (1_000_000 // per_second):
            raise _Fallback  # finer than the unit: pyarrow's rounding rule
        counts.append(micros * per_second // 1_000_000)
    return pa.py_buffer(_typed("q", counts))


def _pairs(value: Any) -> list[tuple[Any, Any]]:
    if value is None:
        return []
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, Sequence) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return list(value)
    raise _Fallback
