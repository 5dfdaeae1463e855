"""Rows of Python values from Arrow results, built in bulk.

``fetchall()`` and friends must give exactly the values ``to_pylist`` gives
(the oracle in tests/dbapi/test_fetch_conversion.py), with one decision of
ours: a timestamp in UTC (``TIMESTAMPTZ``, whose results are always in UTC)
carries ``datetime.timezone.utc``, the standard library's own UTC, where
``to_pylist`` attaches ``zoneinfo.ZoneInfo("UTC")``. The two are the same
instant, wall time, offset and ``tzname()``; the fixed one needs no time
zone database and pandas converts it twice as fast (``pd.read_sql``). But
``to_pylist``
makes dates and datetimes one Python call per value: a million UTC
timestamps take three seconds, more than reading them. Here NumPy does the
arithmetic a column at a time, and CPython's C code makes the objects:

* plain numbers without NULLs: ``ndarray.tolist``;
* dates and naive timestamps: NumPy's own conversion to ``object``;
* UTC timestamps: the 10-byte state ``datetime`` unpickles from (year, month,
  day, hour, minute, second, microsecond), computed with integer arithmetic
  for the whole column, then ``datetime(state, zone)`` per value through
  ``map``, which is C code end to end;
* anything else through ``to_pylist``.

A value Python cannot hold is a :class:`~trinity_dbapi.errors.DataError`
naming the column, the value (as ``CAST(... AS VARCHAR)`` writes it), its
row and the ways to read it, raised before any row of the batch is made:
``to_pylist`` would raise a bare ``OverflowError`` for a date past year 9999
or before year 1 and for an infinite one, and would change a value without a
word: ``TIME '24:00:00'`` into ``00:00:00``, a time's nanoseconds dropped,
DuckDB's infinite nanosecond timestamp into ``pandas.Timestamp.max``. The
ranges are those a table stores (:mod:`trinity_dbapi.tables.temporal`), so
only values a query computes or another program wrote can be refused; and
a nanosecond timestamp is a ``pandas.Timestamp``, as ``to_pylist`` makes it,
but without pandas installed one with nanoseconds is refused too
(``datetime`` holds microseconds).

Imports from dbapi/: nothing.
"""

from __future__ import annotations

import datetime
import functools
import itertools
from typing import Any

from trinity_dbapi.errors import DataError

#: Time zones whose local time is UTC: their values take the bulk path.
UTC_ZONES = frozenset({"UTC", "Etc/UTC", "+00:00"})
#: Microseconds per unit of an Arrow timestamp ``datetime`` can hold exactly.
_MICROS_PER_UNIT = {"s": 1_000_000, "ms": 1_000, "us": 1}
#: ``datetime.min`` and ``datetime.max`` in microseconds since the epoch.
_MIN_MICROS = -62_135_596_800_000_000
_MAX_MICROS = 253_402_300_799_999_999
_MICROS_PER_DAY = 86_400_000_000


def _state_dtype() -> Any:
    import numpy as np

    # datetime's pickled state: year (big-endian), month, day, hour, minute,
    # second, microsecond (3 bytes, big-endian), 10 bytes without padding.
    return np.dtype(
        [
            ("year", ">u2"),
            ("month", "u1"),
            ("day", "u1"),
            ("hour", "u1"),
            ("minute", "u1"),
            ("second", "u1"),
            ("micro_high", "u1"),
            ("micro_low", ">u2"),
        ]
    )


def rows(data: Any, first_row: int = 0) -> list[tuple[Any, ...]]:
    """Rows of an Arrow table or batch as tuples.

    Args:
        data: the rows.
        first_row: how many rows of the result came before ``data``, for messages.

    Raises:
        DataError: a value Python cannot hold (see the module docstring), the
            first by row; no row is made.
    """
    found = [
        (hit, name)
        for name, column in zip(data.schema.names, data.columns, strict=True)
        if _has_temporal(column.type) and (hit := _first_in_column(column)) is not None
    ]
    if found:
        (row, *rest), name = min(found, key=lambda item: item[0][0])
        _refuse(name, first_row + row, *rest)
    columns = [
        _pylist(column, name, first_row)
        for name, column in zip(data.schema.names, data.columns, strict=True)
    ]
    return list(zip(*columns, strict=True)) if columns else []


def pylist(column: Any, *, name: str = "?", first_row: int = 0) -> list[Any]:
    """A column's values as Python objects, exactly as ``to_pylist`` gives them.

    Raises:
        DataError: a value Python cannot hold; ``name`` and ``first_row`` say
            where it is.
    """
    if _has_temporal(column.type):
        found = _first_in_column(column)
        if found is not None:
            row, *rest = found
            _refuse(name, first_row + row, *rest)
    return _pylist(column, name, first_row)


def _pylist(column: Any, name: str, first_row: int) -> list[Any]:
    try:
        return _convert(column)
    except (OverflowError, ValueError) as exc:
        # What the checks above do not foresee (a zone that moves a value past
        # year 9999, a type pyarrow cannot convert) is still no bare exception.
        from trinity_dbapi.format.sql_text import quote_identifier

        raise DataError(
            f"column {name!r} has a value Python cannot hold (rows {first_row + 1} to "
            f"{first_row + len(column)} of the result): {exc}; select "
            f"CAST({quote_identifier(name)} AS VARCHAR) for its text, or fetch the result as "
            "Arrow (fetch_arrow_table()), which holds it; this fetch took no rows"
        ) from exc


def _convert(column: Any) -> list[Any]:
    import pyarrow as pa

    kind = column.type
    if pa.types.is_timestamp(kind) and kind.unit != "ns" and kind.tz in UTC_ZONES:
        values = _utc_datetimes(column, kind)
        if values is not None:
            return values
    elif pa.types.is_date32(kind) or (pa.types.is_timestamp(kind) and kind.unit != "ns"):
        if getattr(kind, "tz", None) is None:
            values = _numpy(column).astype(object).tolist()
            if not any(type(value) is int for value in values):  # outside datetime's range
                return values  # type: ignore[no-any-return]
    elif (pa.types.is_integer(kind) or pa.types.is_floating(kind)) and column.null_count == 0:
        return _numpy(column).tolist()  # type: ignore[no-any-return]
    return column.to_pylist()  # type: ignore[no-any-return]


def _utc_datetimes(column: Any, kind: Any) -> list[Any] | None:
    """Aware datetimes of a UTC timestamp column; None if a value is out of range."""
    import numpy as np

    factor = _MICROS_PER_UNIT[kind.unit]
    nulls = column.null_count
    units = _numpy(column.fill_null(0) if nulls else column).view(np.int64)
    if len(units) and (units.min() < _MIN_MICROS // factor or units.max() > _MAX_MICROS // factor):
        return None
    states = _datetime_states(units * factor)
    # datetime(state, tzinfo) is the unpickling constructor (typeshed omits it).
    construct: Any = datetime.datetime
    values: list[Any] = list(map(construct, states, itertools.repeat(datetime.timezone.utc)))
    if nulls:
        for index in np.flatnonzero(_numpy(column.is_null())).tolist():
            values[index] = None
    return values


def _datetime_states(micros: Any) -> list[bytes]:
    """The pickled ``datetime`` state of each microsecond count since the epoch.

    Days become civil dates by Howard Hinnant's ``civil_from_days``
    (proleptic Gregorian, exact for every ``datetime``); days and seconds of
    the day fit int32, which halves the memory NumPy walks.
    """
    import numpy as np

    from trinity_dbapi.tables.temporal import civil_from_days

    days, rest = np.divmod(micros, _MICROS_PER_DAY)
    state = np.empty(len(micros), _state_dtype())
    state["year"], state["month"], state["day"] = civil_from_days(days.astype(np.int32))
    seconds, micro = np.divmod(rest, 1_000_000)
    seconds = seconds.astype(np.int32)
    state["hour"] = seconds // 3_600
    state["minute"] = seconds // 60 % 60
    state["second"] = seconds % 60
    micro = micro.astype(np.int32)
    state["micro_high"] = micro >> 16
    state["micro_low"] = micro & 0xFFFF
    # A void view keeps trailing zero bytes, which a bytes ("S") view would strip.
    return state.view("V10").tolist()  # type: ignore[no-any-return]


def _numpy(column: Any) -> Any:
    """A column of fixed-width values or booleans (an array or a chunked array) as NumPy's.

    What ``np.asarray(column)`` gives (datetimes ``NaT`` where NULL), but read
    from the Arrow buffers: pyarrow's own conversion goes through its pandas
    code, which imports pandas (0.2 s) on first use, and a ``SELECT count(*)``
    in a new process paid that to print one number. The values of other
    types and the NULL slots of numbers are not used here, and go through
    pyarrow.
    """
    # NumPy is a dependency of ours: pyarrow converts to it, but no longer installs it.
    import numpy as np

    chunks = getattr(column, "chunks", None)
    parts = [_chunk_numpy(chunk) for chunk in ([column] if chunks is None else chunks)]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.empty(0, _dtype(column.type) or object)
    return np.concatenate(parts)


def _chunk_numpy(array: Any) -> Any:
    import numpy as np

    kind = array.type
    length = len(array)
    dtype = _dtype(kind)
    if dtype is None or (array.null_count and dtype.kind not in "mM"):
        return np.asarray(array)
    buffers = array.buffers()
    if length == 0 or buffers[1] is None:
        return np.empty(0, dtype)
    if dtype.kind == "b":
        values = _bits(buffers[1], array.offset, length)
    else:
        width = kind.bit_width // 8
        raw = np.frombuffer(buffers[1], f"<i{width}", count=length, offset=array.offset * width)
        # date32 counts days in 4 bytes: widened to NumPy's 8-byte datetime64[D].
        values = raw.astype(dtype) if width != dtype.itemsize else raw.view(dtype)
    if array.null_count:  # datetimes and durations only (above): NaT where NULL
        values = values.copy()
        values[~_bits(buffers[0], array.offset, length)] = np.array("NaT", dtype)
    return values


def _bits(buffer: Any, offset: int, length: int) -> Any:
    """An Arrow bitmap (a validity or a boolean buffer) as a NumPy bool array."""
    import numpy as np

    first = offset // 8
    packed = np.frombuffer(buffer, np.uint8, count=(offset + length + 7) // 8 - first, offset=first)
    bits = np.unpackbits(packed, bitorder="little")
    return bits[offset % 8 : offset % 8 + length].view(bool)


@functools.lru_cache(maxsize=64)
def _dtype(kind: Any) -> Any:
    """The NumPy dtype :func:`_numpy` reads values of Arrow type ``kind`` as; None if it does not."""
    import numpy as np
    import pyarrow as pa

    if pa.types.is_boolean(kind):
        return np.dtype(bool)
    if pa.types.is_integer(kind):
        return np.dtype(f"<{'i' if pa.types.is_signed_integer(kind) else 'u'}{kind.bit_width // 8}")
    if pa.types.is_floating(kind):
        return np.dtype(f"<f{kind.bit_width // 8}")
    if pa.types.is_date32(kind):
        return np.dtype("datetime64[D]")
    if pa.types.is_date64(kind):
        return np.dtype("datetime64[ms]")
    if pa.types.is_timestamp(kind):
        return np.dtype(f"datetime64[{kind.unit}]")
    if pa.types.is_duration(kind):
        return np.dtype(f"timedelta64[{kind.unit}]")
    return None


# -- values Python cannot hold ------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _has_temporal(kind: Any) -> bool:
    """Whether values of ``kind`` hold dates, times or timestamps, at any depth."""
    import pyarrow as pa

    if pa.types.is_date(kind) or pa.types.is_time(kind) or pa.types.is_timestamp(kind):
        return True
    if pa.types.is_dictionary(kind):
        return _has_temporal(kind.value_type)
    return any(_has_temporal(kind.field(i).type) for i in range(kind.num_fields))


@functools.lru_cache(maxsize=1)
def _have_pandas() -> bool:
    """Whether pyarrow makes ``pandas.Timestamp`` of nanosecond values (else ``datetime``)."""
    import importlib.util

    return importlib.util.find_spec("pandas") is not None


def _first_in_column(column: Any) -> tuple[int, Any, int, str] | None:
    """:func:`_first_unfetchable` of an array or a chunked array (rows counted across chunks)."""
    chunks = getattr(column, "chunks", None)
    offset = 0
    for chunk in [column] if chunks is None else chunks:
        found = _first_unfetchable(chunk)
        if found is not None:
            return (offset + found[0], *found[1:])
        offset += len(chunk)
    return None


def _first_unfetchable(array: Any) -> tuple[int, Any, int, str] | None:
    """``(row, leaf array, index in it, why)`` of the first value Python cannot hold."""
    import pyarrow as pa

    from trinity_dbapi.tables import temporal

    kind = array.type
    if not _has_temporal(kind):
        return None
    if pa.types.is_dictionary(kind):
        return _first_unfetchable(array.dictionary_decode())
    what = temporal.kind_of(kind)
    if what is not None:
        return _first_leaf(array, what)
    if pa.types.is_struct(kind):
        found = [_first_unfetchable(member) for member in array.flatten()]
        return min((f for f in found if f is not None), default=None, key=lambda f: f[0])
    elements, parents = _elements(array)
    inner = _first_unfetchable(elements)
    if inner is None:
        return None
    return (int(parents[inner[0]]), *inner[1:])


def _first_leaf(array: Any, what: str) -> tuple[int, Any, int, str] | None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from trinity_dbapi.tables import temporal

    beyond = temporal.outside(array)
    first = None if beyond is None else pc.index(beyond, True).as_py()
    why = temporal.rule(what)
    kind = array.type
    # datetime.time holds microseconds, and so does datetime without pandas.
    if getattr(kind, "unit", None) == "ns" and (pa.types.is_time(kind) or not _have_pandas()):
        nanos = _numpy(array.view(pa.int64()).fill_null(0)) % 1_000 != 0
        hits = np.flatnonzero(nanos[: first if first is not None else len(nanos)])
        if len(hits):
            first = int(hits[0])
            why = (
                "Python's datetime.time holds microseconds, not nanoseconds"
                if pa.types.is_time(kind)
                else "Python's datetime holds microseconds; with pandas installed, "
                "nanosecond timestamps are fetched as pandas.Timestamp"
            )
    if first is None:
        return None
    return first, array, first, why


def _elements(array: Any) -> tuple[Any, Any]:
    """The elements of a list or map array (this slice's) and the row each belongs to."""
    import numpy as np
    import pyarrow as pa

    kind = array.type
    if pa.types.is_fixed_size_list(kind):
        size = kind.list_size
        start = array.offset * size
        elements = array.values.slice(start, len(array) * size)
        return elements, np.arange(len(array) * size) // size
    offsets = _numpy(array.offsets)
    start, end = int(offsets[0]), int(offsets[-1])
    if pa.types.is_map(kind):
        # MapArray.keys and items ignore the slice: cut them to its offsets.
        keys = array.keys.slice(start, end - start)
        items = array.items.slice(start, end - start)
        elements = pa.StructArray.from_arrays([keys, items], ["key", "value"])
    else:
        elements = array.values.slice(start, end - start)
    return elements, np.repeat(np.arange(len(array)), np.diff(offsets))


def _refuse(name: str, row: int, leaf: Any, index: int, why: str) -> None:
    from trinity_dbapi.format.sql_text import quote_identifier
    from trinity_dbapi.tables import temporal

    what = temporal.kind_of(leaf.type)
    raise DataError(
        f"column {name!r} holds the {what} {temporal.text(leaf, index)} (row {row + 1} of the "
        f"result), which Python cannot hold: {why}; select CAST({quote_identifier(name)} AS "
        "VARCHAR) for its text, filter the row out, or fetch the result as Arrow "
        "(fetch_arrow_table()), which holds it; this fetch took no rows, so the rows before "
        "it can still be fetched one at a time"
    )
