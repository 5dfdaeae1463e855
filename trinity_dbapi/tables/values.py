"""Partition values as text: one canonical text per value of each partitionable type.

Used by :mod:`trinity_dbapi.tables.partitions` to put values in directory
names (then URL-encoded). The text is canonical, so each value has exactly one
directory name and raw directory names can be compared:

==================  ====================================================  ===============
Arrow type          value text                                            example
==================  ====================================================  ===============
bool                ``true`` / ``false``                                  ``true``
int16/32/64         decimal digits                                        ``-42``
float32/64          Arrow's shortest round-trip text (-0.0 is ``-0``)     ``0.1``, ``nan``
decimal128(p, s)    plain notation, exactly ``s`` fraction digits         ``1.50``
string              the UTF-8 text                                        ``a/b`` -> ``a%2Fb``
binary, fixed       the raw bytes                                         ``%00%FF``
date32              ``YYYY-MM-DD``                                        ``2024-01-31``
time32/64           ``HH:MM:SS`` + unit's fraction digits                 ``12:00:00.000``
timestamp           ``YYYY-MM-DDTHH:MM:SS`` + unit's fraction digits,     ``...T12:00:00Z``
                    ``Z`` when the type has a time zone (always UTC)
==================  ====================================================  ===============

Reading also accepts the text Kartothek and plateau write (``str()`` of the
pandas value): ``True`` / ``False`` for booleans, and
``YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM]`` for timestamps (a fraction of 1 to
9 digits that the column's unit holds exactly; an offset exactly when the type
has a time zone, converted to UTC). Neither is ever written.

Binary and fixed values are their raw bytes (the URL encoding escapes them);
every other text is UTF-8. Times and timestamps are formatted from their
integer value, so nanoseconds survive. Dates and timestamps outside years
1..9999 have no text (a ValueError; :func:`~trinity_dbapi.tables.partitions.directory_of`
turns it into a DataError).

Imports from tables/: conform, temporal.
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Callable

import pyarrow as pa

from trinity_dbapi.tables.conform import safe_cast
from trinity_dbapi.tables.temporal import nanosecond_scalar

__all__ = ["Decode", "Encode", "codec", "coerce"]

_EPOCH = datetime.datetime(1970, 1, 1)
_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}
_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME_RE = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?")
_TIMESTAMP_RE = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z?)")
#: ``str(pandas.Timestamp)``: what Kartothek and plateau put in directory names.
_PANDAS_TIMESTAMP_RE = re.compile(
    r"(\d{4}-\d{2}-\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([+-])(\d{2}):(\d{2}))?"
)


def _int_value(scalar: pa.Scalar) -> int:
    """The integer a temporal scalar is stored as (days, or units since midnight/epoch)."""
    width = (
        pa.int32()
        if pa.types.is_date32(scalar.type) or pa.types.is_time32(scalar.type)
        else pa.int64()
    )
    return int(scalar.cast(width).as_py())


def _fraction(value: int, unit: str) -> tuple[int, str]:
    seconds, part = divmod(value, _PER_SECOND[unit])
    return seconds, (f".{part:0{_DIGITS[unit]}d}" if _DIGITS[unit] else "")


def _time_text(scalar: pa.Scalar) -> str:
    seconds, fraction = _fraction(_int_value(scalar), scalar.type.unit)
    hours, rest = divmod(seconds, 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}{fraction}"


def _timestamp_text(scalar: pa.Scalar) -> str:
    seconds, fraction = _fraction(_int_value(scalar), scalar.type.unit)
    try:
        moment = _EPOCH + datetime.timedelta(seconds=seconds)
    except OverflowError as exc:
        raise ValueError("outside years 1..9999") from exc
    zone = "Z" if scalar.type.tz is not None else ""
    return f"{moment.isoformat(timespec='seconds')}{fraction}{zone}"


def _date_text(scalar: pa.Scalar) -> str:
    try:
        return (_EPOCH.date() + datetime.timedelta(days=_int_value(scalar))).isoformat()
    except OverflowError as exc:
        raise ValueError("outside years 1..9999") from exc


def _units(text: str | None, unit: str) -> int:
    """Fraction digits of ``unit`` as an integer; exactly the unit's digit count."""
    digits = _DIGITS[unit]
    if (text or "") == "" and digits == 0:
        return 0
    if text is None or len(text) != digits:
        raise ValueError(f"expected {digits} fraction digits")
    return int(text)


def _parse_time(text: str, type_: pa.DataType) -> pa.Scalar:
    match = _TIME_RE.fullmatch(text)
    if match is None:
        raise ValueError("expected HH:MM:SS[.fraction]")
    hours, minutes, seconds = (int(match[i]) for i in (1, 2, 3))
    if hours > 23 or minutes > 59 or seconds > 59:
        raise ValueError("time out of range")
    total = (hours * 3600 + minutes * 60 + seconds) * _PER_SECOND[type_.unit]
    return pa.scalar(total + _units(match[4], type_.unit), type=type_)


def _parse_pandas_timestamp(text: str, type_: pa.DataType) -> pa.Scalar | None:
    """A Kartothek directory's timestamp text; None if ``text`` is not one."""
    match = _PANDAS_TIMESTAMP_RE.fullmatch(text)
    if match is None or (match[6] is not None) != (type_.tz is not None):
        return None
    day = datetime.date.fromisoformat(match[1])
    hours, minutes, seconds = (int(match[i]) for i in (2, 3, 4))
    moment = datetime.datetime(day.year, day.month, day.day, hours, minutes, seconds)
    if match[6] is not None:
        offset = datetime.timedelta(hours=int(match[7]), minutes=int(match[8]))
        moment -= offset if match[6] == "+" else -offset
    nanos = int((match[5] or "").ljust(9, "0"))
    per_unit = 10**9 // _PER_SECOND[type_.unit]
    if nanos % per_unit:
        raise ValueError(f"fraction .{match[5]} is finer than the column's unit {type_.unit}")
    whole = (moment - _EPOCH) // datetime.timedelta(seconds=1)
    return pa.scalar(whole * _PER_SECOND[type_.unit] + nanos // per_unit, type=type_)


def _parse_timestamp(text: str, type_: pa.DataType) -> pa.Scalar:
    kartothek = _parse_pandas_timestamp(text, type_)
    if kartothek is not None:
        return kartothek
    match = _TIMESTAMP_RE.fullmatch(text)
    if match is None or (match[3] == "Z") != (type_.tz is not None):
        raise ValueError("expected YYYY-MM-DDTHH:MM:SS[.fraction][Z]")
    day = datetime.date.fromisoformat(match[1])
    clock, _, fraction = match[2].partition(".")
    hours, minutes, seconds = (int(part) for part in clock.split(":"))
    moment = datetime.datetime(day.year, day.month, day.day, hours, minutes, seconds)
    whole = (moment - _EPOCH) // datetime.timedelta(seconds=1)
    units = _units(fraction if "." in match[2] else None, type_.unit)
    return pa.scalar(whole * _PER_SECOND[type_.unit] + units, type=type_)


def _parse_date(text: str, type_: pa.DataType) -> pa.Scalar:
    if not _DATE_RE.fullmatch(text):
        raise ValueError("expected YYYY-MM-DD")
    return pa.scalar((datetime.date.fromisoformat(text) - _EPOCH.date()).days, type=type_)


def _parse_bool(text: str, type_: pa.DataType) -> pa.Scalar:
    # "True" / "False": str() of a Python or NumPy bool, as Kartothek writes them.
    if text not in ("true", "false", "True", "False"):
        raise ValueError("expected true or false")
    return pa.scalar(text in ("true", "True"), type=type_)


def _parse_int(text: str, type_: pa.DataType) -> pa.Scalar:
    if not re.fullmatch(r"-?\d+", text):
        raise ValueError("expected decimal digits")
    return pa.scalar(int(text), type=type_)


def _parse_decimal(text: str, type_: pa.DataType) -> pa.Scalar:
    try:
        return pa.scalar(decimal.Decimal(text), type=type_)
    except decimal.InvalidOperation as exc:
        raise ValueError("expected a plain decimal number") from exc


Encode = Callable[[pa.Scalar], bytes]
Decode = Callable[[bytes, pa.DataType], pa.Scalar]


def _text(encode: Callable[[pa.Scalar], str]) -> Encode:
    return lambda scalar: encode(scalar).encode()


def _from_text(decode: Callable[[str, pa.DataType], pa.Scalar]) -> Decode:
    return lambda raw, type_: decode(raw.decode("utf-8"), type_)


#: (type test, value -> bytes, bytes -> value) per partitionable Arrow type, in order.
_CODECS: tuple[tuple[Callable[[pa.DataType], bool], Encode, Decode], ...] = (
    (
        pa.types.is_boolean,
        _text(lambda s: "true" if s.as_py() else "false"),
        _from_text(_parse_bool),
    ),
    (pa.types.is_integer, _text(lambda s: str(s.as_py())), _from_text(_parse_int)),
    (
        pa.types.is_floating,
        _text(lambda s: s.cast(pa.string()).as_py()),
        _from_text(lambda text, t: pa.scalar(text).cast(t)),
    ),
    (
        pa.types.is_decimal,
        _text(lambda s: format(s.as_py(), f".{s.type.scale}f")),
        _from_text(_parse_decimal),
    ),
    (
        lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
        lambda s: s.as_py().encode(),
        _from_text(lambda text, t: pa.scalar(text, type=t)),
    ),
    (
        lambda t: (
            pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
        ),
        lambda s: s.as_py(),
        lambda raw, t: pa.scalar(raw, type=t),
    ),
    (pa.types.is_date32, _text(_date_text), _from_text(_parse_date)),
    (pa.types.is_time, _text(_time_text), _from_text(_parse_time)),
    (pa.types.is_timestamp, _text(_timestamp_text), _from_text(_parse_timestamp)),
)


def codec(type_: pa.DataType) -> tuple[Encode, Decode] | None:
    """The (value -> bytes, bytes -> value) pair of ``type_``; None if it has no text."""
    for test, encode, decode in _CODECS:
        if test(type_):
            return encode, decode
    return None


def coerce(value: object, type_: pa.DataType) -> pa.Scalar | None:
    """``value`` (a Python value or Arrow scalar) as a ``type_`` scalar; None if it cannot be.

    None becomes a NULL scalar. Casts are safe: ``1.5`` is no ``int8`` value and
    ``1.234`` no ``decimal(5,2)`` value.
    """
    if isinstance(value, str) and _is_temporal(type_):
        # SQL compares DATE '2024-01-01' and '2024-01-01 10:00:00' with temporal
        # columns; pyarrow casts such text to zoned timestamps only with an
        # offset, so read it as SQL does (naive text is UTC).
        parsed = _parse_temporal(value, type_)
        if parsed is None:
            return None
        value = parsed
    # pa.scalar would drop a pandas.Timestamp's nanoseconds (and prune wrongly).
    value = nanosecond_scalar(value) or value
    try:
        return safe_cast(value if isinstance(value, pa.Scalar) else pa.scalar(value), type_)
    except pa.ArrowInvalid:
        return None  # the value does not fit the type
    except (pa.ArrowException, TypeError, ValueError, OverflowError, ArithmeticError):
        pass  # no inferred type, or no cast from it: let pyarrow convert directly
    if isinstance(value, (float, pa.Scalar)):
        return None  # direct conversion would truncate floats silently
    try:
        return pa.scalar(value, type=type_)
    except (pa.ArrowException, TypeError, ValueError, OverflowError, ArithmeticError):
        return None


def _is_temporal(type_: pa.DataType) -> bool:
    return bool(pa.types.is_date(type_) or pa.types.is_timestamp(type_) or pa.types.is_time(type_))


def _parse_temporal(text: str, type_: pa.DataType) -> object | None:
    """ISO text as a date, time or datetime (UTC when zoned and naive); None if it is not."""
    text = text.strip()
    try:
        if pa.types.is_date(type_):
            return datetime.date.fromisoformat(text)
        if pa.types.is_time(type_):
            return datetime.time.fromisoformat(text)
        stamp = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if getattr(type_, "tz", None) is not None and stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=datetime.timezone.utc)
    return stamp
