"""The one rule by which a value written into a column takes the column's type.

Every write path ends here: ``INSERT`` (``VALUES`` and ``SELECT``),
``UPDATE``, ``CREATE TABLE ... AS``, ``executemany``, ``Cursor.ingest``,
pandas ``to_sql`` and Spark writes all hand Arrow data of the values' own
types to :func:`convert` (through :class:`~trinity_dbapi.tables.conform.Conformer`,
or directly for ``executemany``), and :func:`from_python` makes that Arrow
data from Python values for the paths that start from Python objects. So a
value is stored the same way, or refused the same way, whichever path it
takes. The rule (docs/datasets.md, "Converting values") is: **a value is
stored only if the column's type holds it exactly**:

* integer columns: integers in range, floats and decimals with no fractional
  part (``2.0``, ``3.00``) in range; never truncated or rounded; NaN and
  infinities are refused;
* decimal columns: integers, decimals and floats whose digits fit the
  precision and scale without rounding; a float counts as its shortest
  decimal text (``0.1`` is ``0.1``, as ``repr`` shows it); NaN and infinities
  are refused;
* floating columns (:mod:`~trinity_dbapi.tables.floats`): a float is rounded
  into a narrower floating type, never out of its range (no finite value
  becomes an infinity, no non-zero value zero); an integer, a decimal or
  text is stored only if the float names it (is it exactly, or reads back
  as it: ``'0.1'`` and ``10**30`` are taken, ``2**53 + 1`` is not); NaN,
  infinities and ``-0.0`` stay what they are;
* boolean columns take booleans; numbers are not booleans, nor booleans numbers;
* text that is exactly a value of a non-text column's type (``'5'`` for an
  integer, ``'1.25'`` for a decimal, ``'2024-02-29'`` for a date) is that
  value; other values for a text column are refused (a number is not text);
* date, time and timestamp columns take dates, times and timestamps (a
  number is not a date); a date column takes a timestamp only at midnight
  (a time of day would be lost), a timestamp column nanoseconds only if its
  precision holds them (``TIMESTAMP(9)``; a ``pandas.Timestamp`` keeps them
  on the way: :func:`from_python`); and only dates and timestamps of years 1
  to 9999 and times below 24:00:00 are stored, what Python's ``datetime``
  holds (:mod:`~trinity_dbapi.tables.temporal`, checked for every write by
  :class:`~trinity_dbapi.tables.conform.Conformer`, even of values already
  of the column's type);
* list, struct and map values: their elements, members, keys and values
  by the same rule (a struct may leave out members, which are NULL);
* everything else follows Arrow's safe cast: no overflow, no lost
  precision (binary lengths, for instance).

A refused value is a :class:`~trinity_dbapi.errors.DataError` naming the
column, the first value refused (and its row when known) and the fix.

Imports from tables/: floats.
"""

from __future__ import annotations

import datetime
import decimal
import operator
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from trinity_dbapi.errors import DataError
from trinity_dbapi.tables import floats

__all__ = ["convert", "from_python"]

#: The widest decimal: integers and decimals go through it so values that fit succeed.
_WIDE_PRECISION = 76

#: Longest text of a refused value quoted in an error message.
_SHOWN = 80


class _Refused(Exception):
    """A value of the array does not convert exactly; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def convert(
    values: pa.Array | pa.ChunkedArray,
    target: pa.DataType,
    column: str,
    *,
    type_name: str | None = None,
    rows: Sequence[int] | None = None,
) -> Any:
    """``values`` as ``target`` by the conversion rule, or a DataError naming the first refusal.

    Args:
        values: an Arrow array or chunked array of the values' own type.
        target: the column's Arrow type.
        column: the column's name, for messages.
        type_name: the column's SQL type, for messages (the Arrow type if None).
        rows: the 1-based row (parameter set) of each value, for messages.

    Returns:
        An array (chunked if ``values`` is) of type ``target``.

    Raises:
        DataError: a value the type cannot hold exactly.
    """
    if isinstance(values, pa.ChunkedArray):
        offset = 0
        chunks = []
        for chunk in values.chunks:
            part = None if rows is None else rows[offset : offset + len(chunk)]
            chunks.append(convert(chunk, target, column, type_name=type_name, rows=part))
            offset += len(chunk)
        return pa.chunked_array(chunks, target)
    try:
        return _convert(values, target)
    except (_Refused, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        index, reason = _first_refused(values, target, exc)
    value = values[index].as_py()
    shown = repr(value)
    if len(shown) > _SHOWN:
        shown = shown[: _SHOWN - 3] + "..."
    where = "" if rows is None else f" (row {rows[index]})"
    raise DataError(
        f"column {column!r} cannot hold the value {shown}{where} exactly as its type "
        f"{type_name or target}: {reason}; give a value of the type (round, truncate or CAST "
        "it explicitly if that is what you mean), or change the column's type"
    )


def _reason(exc: BaseException) -> str:
    if isinstance(exc, _Refused):
        return exc.reason
    return str(exc).split("\n", 1)[0]


def _first_refused(values: pa.Array, target: pa.DataType, exc: BaseException) -> tuple[int, str]:
    """The index of the first value that does not convert, found by halving, and why."""
    start, length, reason = 0, len(values), _reason(exc)
    while length > 1:
        half = length // 2
        try:
            _convert(values.slice(start, half), target)
        except (_Refused, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            length, reason = half, _reason(e)
            continue
        start, length = start + half, length - half
    return start, reason


def _any(mask: pa.Array) -> bool:
    return bool(pc.any(mask).as_py())


def _convert(values: pa.Array, target: pa.DataType) -> pa.Array:
    """The rule itself, on one array; raises _Refused or Arrow's error."""
    source = values.type
    if pa.types.is_dictionary(source):
        return _convert(values.dictionary_decode(), target)
    if pa.types.is_null(source):
        return values.cast(target)
    for test, rule in _RULES:
        if test(target):
            return rule(values, target)
    return values.cast(target, safe=True)


def _textual(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def _not_a(values: pa.Array, what: str) -> _Refused:
    return _Refused(f"a {values.type} value is not {what}")


def _to_floating(values: pa.Array, target: pa.DataType) -> pa.Array:
    # The float rule has its own module: a binary float is rounded into a
    # narrower type, an exact number must be named by its float.
    try:
        return floats.to_floating(values, target)
    except floats.Refused as exc:
        raise _Refused(exc.reason) from None


def _to_integer(values: pa.Array, target: pa.DataType) -> pa.Array:
    source = values.type
    if not (_numeric(source) or _textual(source)):
        raise _not_a(values, "an integer")
    # Arrow's safe cast refuses overflow, fractional parts, NaN and infinities.
    return values.cast(target, safe=True)


def _to_decimal(values: pa.Array, target: pa.DataType) -> pa.Array:
    source = values.type
    if pa.types.is_floating(source):
        if _any(pc.invert(pc.is_finite(values))):
            raise _Refused("a decimal holds no NaN or infinity")
        # A float stands for its shortest decimal text (what repr() shows).
        values = values.cast(pa.string())
        source = values.type
    if not (_numeric(source) or _textual(source)):
        raise _not_a(values, "a number")
    # Through the widest decimal: values that fit succeed, and the final safe
    # cast refuses lost digits and values beyond the precision (including
    # 39-digit values DuckDB exports in a decimal128(38, 0)).
    scale = max(target.scale, getattr(source, "scale", 0))
    wide = values.cast(pa.decimal256(_WIDE_PRECISION, scale), safe=True)
    result = wide.cast(target, safe=True)
    if _textual(source):
        # Arrow parses text with a large negative exponent ('1.32e-180') as 0
        # without an error: the number must survive, as near as a float tells
        # (a few ulps: Arrow's decimal -> float is not always correctly rounded).
        parsed = values.cast(pa.float64(), safe=True)
        back = result.cast(pa.float64(), safe=False)
        error = pc.abs(pc.subtract(back, parsed))
        if _any(pc.greater(error, pc.multiply(pc.abs(parsed), _ULPS))):
            raise _Refused("its digits beyond the type's scale would be lost")
    return result


#: How far (relatively) a decimal read back as a float may be from the number it came from.
_ULPS = 1e-15


def _to_boolean(values: pa.Array, target: pa.DataType) -> pa.Array:
    if not (pa.types.is_boolean(values.type) or _textual(values.type)):
        raise _not_a(values, "a boolean")
    return values.cast(target, safe=True)


def _to_text(values: pa.Array, target: pa.DataType) -> pa.Array:
    if not _textual(values.type):
        raise _not_a(values, "text")
    return values.cast(target, safe=True)


def _temporal(t: pa.DataType) -> bool:
    return pa.types.is_temporal(t) and not pa.types.is_duration(t) and not pa.types.is_interval(t)


def _to_temporal(values: pa.Array, target: pa.DataType) -> pa.Array:
    if not (_temporal(values.type) or _textual(values.type)):
        # Arrow would read a number as days or units since 1970: not a date.
        raise _not_a(values, "a date or time")
    return values.cast(target, safe=True)


def _to_date(values: pa.Array, target: pa.DataType) -> pa.Array:
    result = _to_temporal(values, target)
    if pa.types.is_timestamp(values.type):
        # Arrow drops the time of day: refuse rather than lose it.
        back = result.cast(pa.timestamp(values.type.unit, values.type.tz))
        if _any(pc.not_equal(back, values)):
            raise _Refused("its time of day would be lost")
    return result


def _to_list(values: pa.Array, target: pa.DataType) -> pa.Array:
    source = values.type
    if not (pa.types.is_list(source) or pa.types.is_large_list(source)):
        return values.cast(target, safe=True)  # fixed-size lists, or Arrow's refusal
    # The elements take the element type by the same rule, then the lists are
    # rebuilt on this slice's offsets.
    start, end = values.offsets[0].as_py(), values.offsets[-1].as_py()
    elements = _convert(values.values.slice(start, end - start), target.value_type)
    offset_type = pa.int64() if pa.types.is_large_list(target) else pa.int32()
    offsets = pc.subtract(values.offsets, pa.scalar(start, values.offsets.type)).cast(offset_type)
    array_class = pa.LargeListArray if pa.types.is_large_list(target) else pa.ListArray
    return array_class.from_arrays(offsets, elements, type=target, mask=_nulls(values))


def _to_struct(values: pa.Array, target: pa.DataType) -> pa.Array:
    source = values.type
    if not pa.types.is_struct(source):
        raise _not_a(values, "a struct")
    given = {source.field(i).name: i for i in range(source.num_fields)}
    extra = set(given) - {field.name for field in target}
    if extra:
        raise _Refused(f"the struct has members {sorted(extra)} that the column's type lacks")
    children = [
        _convert(values.field(given[field.name]), field.type)
        if field.name in given
        else pa.nulls(len(values), field.type)
        for field in target
    ]
    return pa.StructArray.from_arrays(children, fields=list(target), mask=_nulls(values))


def _to_map(values: pa.Array, target: pa.DataType) -> pa.Array:
    if not pa.types.is_map(values.type):
        return values.cast(target, safe=True)
    # MapArray.keys/items ignore slicing: cut them to this slice's offsets.
    start, end = values.offsets[0].as_py(), values.offsets[-1].as_py()
    keys = _convert(values.keys.slice(start, end - start), target.key_type)
    items = _convert(values.items.slice(start, end - start), target.item_type)
    offsets = pc.subtract(values.offsets, pa.scalar(start, values.offsets.type))
    return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=_nulls(values))


def _nulls(values: pa.Array) -> pa.Array | None:
    return values.is_null() if values.null_count else None


_RULES: tuple[
    tuple[Callable[[pa.DataType], bool], Callable[[pa.Array, pa.DataType], pa.Array]], ...
] = (
    (pa.types.is_floating, _to_floating),
    (pa.types.is_integer, _to_integer),
    (pa.types.is_decimal, _to_decimal),
    (pa.types.is_boolean, _to_boolean),
    (_textual, _to_text),
    (pa.types.is_date, _to_date),
    (_temporal, _to_temporal),
    (lambda t: pa.types.is_list(t) or pa.types.is_large_list(t), _to_list),
    (pa.types.is_struct, _to_struct),
    (pa.types.is_map, _to_map),
)


# -- Python values to Arrow ---------------------------------------------------------


def _kind(value: Any) -> str:
    """Values of one kind make one Arrow array of their own type."""
    if isinstance(value, datetime.datetime):
        kind = "datetime" if value.tzinfo is None else "datetime_tz"
        # A pandas.Timestamp with nanoseconds is a kind of its own: kept to the nanosecond.
        return kind + "_ns" if getattr(value, "nanosecond", 0) else kind
    return type(value).__name__


#: Zone names (``ZoneInfo.key``, pytz's ``zone``) that are UTC itself.
_UTC_NAMES = frozenset({"UTC", "Etc/UTC", "Etc/Universal", "Universal", "Zulu", "Etc/Zulu"})


_TZINFO = operator.attrgetter("tzinfo")


def _is_utc(zone: Any) -> bool:
    """Whether ``zone`` is UTC at every instant (not merely at some)."""
    if type(zone) is datetime.timezone:
        return zone.utcoffset(None) == datetime.timedelta(0)
    return (getattr(zone, "key", None) or getattr(zone, "zone", None)) in _UTC_NAMES


def _kind_array(kind: str, values: list[Any]) -> pa.Array:
    """An Arrow array of the values' own type, as DuckDB would bind them."""
    if kind == "int" and not all(-(2**63) <= v < 2**63 for v in values if v is not None):
        # DuckDB binds these as HUGEINT, exported as decimal128(38, 0).
        exact = [None if v is None else decimal.Decimal(v) for v in values]
        fits = all(v is None or len(v.as_tuple().digits) <= 38 for v in exact)
        return pa.array(exact, pa.decimal128(38, 0) if fits else pa.decimal256(76, 0))
    if kind == "datetime_tz":
        # As DuckDB binds an aware datetime: a TIMESTAMPTZ in UTC. Values already
        # in UTC (pandas' and most clients' case) need no per-value astimezone.
        try:
            zones = set(map(_TZINFO, values))
        except AttributeError:  # a None among them
            zones = {v.tzinfo for v in values if v is not None}
        if not all(_is_utc(zone) for zone in zones):
            values = [None if v is None else v.astimezone(datetime.timezone.utc) for v in values]
        return pa.array(values, pa.timestamp("us", tz="UTC"))
    if kind.endswith("_ns"):
        # pandas.Timestamps with nanoseconds, which pa.array would drop: their
        # count of nanoseconds (since 1970 in UTC for a zoned one), exactly.
        zone = "UTC" if kind == "datetime_tz_ns" else None
        return pa.array([None if v is None else v.value for v in values], pa.timestamp("ns", zone))
    return pa.array(values)


def _has_nanoseconds(value: Any) -> bool:
    return bool(getattr(value, "nanosecond", 0))


def from_python(values: Sequence[Any]) -> tuple[list[pa.Array], list[list[int]]]:
    """Python values as Arrow arrays of their own types, one per kind of value.

    ``[1, 2.5, None]`` gives an int64 array and a double array: values are
    never unified into one type first (an integer beyond 2**53 would be
    rounded to a float). Returns the arrays and, for each, the 0-based
    positions of its values in ``values``; ``None`` goes with the first kind.
    """
    kinds = set(map(type, values))
    kinds.discard(type(None))
    if len(kinds) == 1:
        # One kind (the common case): no grouping loop over the values.
        (only,) = kinds
        name = only.__name__
        if issubclass(only, datetime.datetime):
            zoned = {v.tzinfo is not None for v in values if v is not None}
            name = "datetime_tz" if zoned == {True} else "datetime" if zoned == {False} else ""
            if only is not datetime.datetime and any(map(_has_nanoseconds, values)):
                name = ""  # pandas.Timestamps with nanoseconds: grouped by kind below
        if name:
            return [_kind_array(name, list(values))], [list(range(len(values)))]
    groups: dict[str, list[int]] = {}
    nulls: list[int] = []
    for position, value in enumerate(values):
        if value is None:
            nulls.append(position)
        else:
            groups.setdefault(_kind(value), []).append(position)
    if not groups:
        return [pa.nulls(len(values))], [list(range(len(values)))]
    arrays, positions = [], []
    for number, (kind, where) in enumerate(groups.items()):
        if number == 0 and nulls:
            where = sorted(where + nulls)
        arrays.append(_kind_array(kind, [values[i] for i in where]))
        positions.append(where)
    return arrays, positions


#: Python types that pyarrow converts straight into a column type, refusing
#: what does not fit (overflow, lost decimal digits) rather than changing it.
_NATIVE: dict[type, Callable[[pa.DataType], bool]] = {
    int: pa.types.is_integer,
    float: lambda t: t == pa.float64(),
    str: lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
    decimal.Decimal: pa.types.is_decimal,
    bool: pa.types.is_boolean,
    datetime.date: pa.types.is_date32,
    bytes: lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t),
}


def _native(values: Sequence[Any], target: pa.DataType) -> pa.Array | None:
    """The fast path of a bulk insert: values of one type that is the column's own.

    None when the values are of several types, or one pyarrow would refuse
    (the general path then names the value refused).
    """
    kinds = set(map(type, values))
    kinds.discard(type(None))
    if len(kinds) != 1:
        return None
    fits = _NATIVE.get(kinds.pop())
    if fits is None or not fits(target):
        return None
    try:
        return pa.array(values, type=target)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return None


def convert_python(
    values: Sequence[Any], target: pa.DataType, column: str, *, type_name: str | None = None
) -> pa.Array:
    """Python values as an array of ``target``, by the conversion rule (``executemany``).

    Messages give the 1-based position of a refused value (its parameter set).

    Raises:
        DataError: a value the type cannot hold exactly, or an Arrow cannot represent.
    """
    native = _native(values, target)
    if native is not None:
        return native
    try:
        arrays, positions = from_python(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise DataError(
            f"the values for column {column!r} cannot be made Arrow data: {exc}; give values "
            f"of its type {type_name or target}"
        ) from exc
    converted = [
        convert(array, target, column, type_name=type_name, rows=[i + 1 for i in where])
        for array, where in zip(arrays, positions, strict=True)
    ]
    if len(converted) == 1:
        return converted[0]
    # Put the values back in their places.
    order = [0] * len(values)
    for index, position in enumerate(p for where in positions for p in where):
        order[position] = index
    return pa.concat_arrays(converted).take(pa.array(order, pa.int64()))
