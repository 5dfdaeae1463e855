"""The dates, times and timestamps a table stores: those Python can hand back.

Python's ``datetime`` holds years 1 to 9999, and ``datetime.time`` a time of
day below 24:00:00. DuckDB computes values beyond both (``DATE '9999-12-31' +
1``, ``DATE '0044-03-15 (BC)'``, ``'infinity'``, ``TIME '24:00:00'``) and
another program may write any 32- or 64-bit value into a file. A value
outside what Python holds would make ``fetchall()`` fail for every row of a
result (pyarrow raises a bare ``OverflowError``) or, worse, come back
changed (pyarrow turns ``24:00:00`` into ``00:00:00``, and DuckDB's infinite
nanosecond timestamp into ``pandas.Timestamp.max``). So the rule of every
write (docs/datasets.md, "Converting values"), checked by
:class:`~trinity_dbapi.tables.conform.Conformer` on every column of every
write, is that a table stores:

* a date, or a timestamp of second, millisecond or microsecond precision
  (``TIMESTAMPTZ`` in UTC): years 1 to 9999, ``0001-01-01`` to
  ``9999-12-31 23:59:59.999999``;
* a nanosecond timestamp (``TIMESTAMP(9)``, ``TIMESTAMPTZ(9)``): every 64-bit
  count of nanoseconds but the three that stand for something else, DuckDB's
  ``infinity`` (2**63 - 1) and ``-infinity`` (-(2**63 - 1)) and pandas'
  ``NaT`` (-2**63): ``1677-09-21 00:12:43.145224194`` to
  ``2262-04-11 23:47:16.854775806``, what ``pandas.Timestamp`` holds;
* a time of day: ``00:00:00`` up to, not including, ``24:00:00``.

The fetch side (:mod:`trinity_dbapi.dbapi.pyvalues`) applies the same
ranges to values a query computes or another program wrote.
:func:`nanosecond_scalar` is the other half of the nanosecond rule: a Python
value that carries nanoseconds (``pandas.Timestamp``, ``numpy.datetime64``)
as an exact Arrow scalar, where pyarrow's own conversion would drop them.

Imports from tables/: nothing.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["civil_from_days", "kind_of", "nanosecond_scalar", "outside", "rule", "text"]

#: ``datetime.min`` and ``datetime.max`` in microseconds since 1970-01-01.
_MIN_MICROS = -62_135_596_800_000_000
_MAX_MICROS = 253_402_300_799_999_999
#: ``date.min`` and ``date.max`` in days since 1970-01-01.
_MIN_DAYS, _MAX_DAYS = -719_162, 2_932_896
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_INT64_MAX = 2**63 - 1
_INT32_MAX = 2**31 - 1


def _bounds(kind: pa.DataType) -> tuple[pa.DataType, int, int] | None:
    """The integer type a value of ``kind`` is, and the smallest and largest stored."""
    if pa.types.is_date32(kind):
        return pa.int32(), _MIN_DAYS, _MAX_DAYS
    if pa.types.is_date64(kind):
        return pa.int64(), _MIN_DAYS * 86_400_000, (_MAX_DAYS + 1) * 86_400_000 - 1
    if pa.types.is_timestamp(kind):
        if kind.unit == "ns":
            # Every count but infinity, -infinity and NaT (see the module docstring).
            return pa.int64(), -_INT64_MAX + 1, _INT64_MAX - 1
        per_micro = 1_000_000 // _PER_SECOND[kind.unit]
        return pa.int64(), _MIN_MICROS // per_micro, _MAX_MICROS // per_micro
    if pa.types.is_time(kind):
        whole = pa.int32() if pa.types.is_time32(kind) else pa.int64()
        return whole, 0, 86_400 * _PER_SECOND[kind.unit] - 1
    return None


def kind_of(kind: pa.DataType) -> str | None:
    """``'date'``, ``'time'`` or ``'timestamp'`` for a type the rule covers; None otherwise."""
    if pa.types.is_date(kind):
        return "date"
    if pa.types.is_time(kind):
        return "time"
    if pa.types.is_timestamp(kind):
        return "timestamp"
    return None


def rule(what: str) -> str:
    """What Python holds of ``what`` (a :func:`kind_of` word), as error messages state it."""
    if what == "time":
        return "Python's datetime.time holds times of day below 24:00:00"
    return "Python's datetime holds years 1 to 9999 and no infinity"


def outside(values: pa.Array) -> pa.Array | None:
    """Which of ``values`` a table does not store (a boolean mask); None when all are stored.

    None too for an array of a type the rule does not cover. One pass for
    the smallest and largest value; the mask only when one is outside.
    """
    bounds = _bounds(values.type)
    if bounds is None or len(values) == values.null_count:
        return None
    whole, low, high = bounds
    counts = values.view(whole)
    extremes = pc.min_max(counts)
    if extremes["min"].as_py() >= low and extremes["max"].as_py() <= high:
        return None
    beyond = pc.or_(pc.less(counts, low), pc.greater(counts, high))
    return pc.fill_null(beyond, False)


def text(values: pa.Array, index: int) -> str:
    """The value at ``index`` as DuckDB writes it (``CAST(... AS VARCHAR)``), for messages.

    ``0044-03-15 (BC)``, ``10000-01-01``, ``infinity``, ``24:00:00``,
    ``2262-04-11 23:47:16.854775807``: exact for any stored count, where
    Python's own types stop at year 9999.
    """
    kind = values.type
    bounds = _bounds(kind)
    assert bounds is not None, kind  # callers check kind_of first
    count = values.slice(index, 1).view(bounds[0])[0].as_py()
    if pa.types.is_date(kind):
        days = count if pa.types.is_date32(kind) else count // 86_400_000
        if abs(count) == (_INT32_MAX if pa.types.is_date32(kind) else _INT64_MAX):
            return "infinity" if count > 0 else "-infinity"
        return _date_text(days)
    per = _PER_SECOND[kind.unit]
    if pa.types.is_time(kind):
        return _time_text(count, per)
    if abs(count) == _INT64_MAX:
        return "infinity" if count > 0 else "-infinity"
    days, rest = divmod(count, 86_400 * per)
    zone = "" if kind.tz is None else "+00"
    return f"{_date_text(days)} {_time_text(rest, per)}{zone}"


def civil_from_days(days: Any) -> tuple[Any, Any, Any]:
    """Howard Hinnant's ``civil_from_days``: the proleptic Gregorian (year, month, day).

    ``days`` counts from 1970-01-01; an int gives ints, a NumPy integer array
    gives arrays (the arithmetic is the same), so the fetch path converts a
    whole column with it. Exact for every date; year 0 is 1 BC.
    """
    shifted = days + 719_468  # days since 0000-03-01
    era = shifted // 146_097
    day_of_era = shifted - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1_460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153  # March is 0
    month = month_index + 3 - 12 * (month_index >= 10)
    day = day_of_year - (153 * month_index + 2) // 5 + 1
    return year_of_era + era * 400 + (month <= 2), month, day


def _date_text(days: int) -> str:
    """The date ``days`` after 1970-01-01 as DuckDB writes it (``0044-03-15 (BC)``)."""
    year, month, day = civil_from_days(days)
    if year <= 0:  # there is no year 0: 1 BC is year 0, 2 BC year -1
        return f"{1 - year:04d}-{month:02d}-{day:02d} (BC)"
    return f"{year:04d}-{month:02d}-{day:02d}"


def _time_text(count: int, per: int) -> str:
    seconds, fraction = divmod(count, per)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    shown = f"{hour:02d}:{minute:02d}:{second:02d}"
    if fraction:
        digits = len(str(per)) - 1
        shown += "." + f"{fraction:0{digits}d}".rstrip("0")
    return shown


def nanosecond_scalar(value: Any) -> pa.Scalar | None:
    """An exact ``timestamp[ns]`` scalar of a value with nanoseconds; None for any other value.

    ``pandas.Timestamp`` with a non-zero ``nanosecond`` (UTC when it has a
    zone) and ``numpy.datetime64`` of unit ``ns``. pyarrow would make a
    microsecond timestamp of the first, dropping the nanoseconds; a value
    without them is a plain ``datetime`` to every path.
    """
    nanosecond = getattr(value, "nanosecond", 0)
    if nanosecond and hasattr(value, "value"):  # pandas.Timestamp
        zone = None if value.tzinfo is None else "UTC"
        return pa.scalar(int(value.value), pa.timestamp("ns", zone))
    if type(value).__name__ == "datetime64" and type(value).__module__ == "numpy":
        import numpy as np

        if np.datetime_data(value.dtype)[0] == "ns" and not np.isnat(value):
            return pa.scalar(int(value.astype(np.int64)), pa.timestamp("ns"))
    return None
