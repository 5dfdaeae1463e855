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
* anything else, and any value outside ``datetime``'s range (years 1 to
  9999), through ``to_pylist``, so errors are ``to_pylist``'s own.
"""

from __future__ import annotations

import datetime
import itertools
from typing import Any

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


def rows(data: Any) -> list[tuple[Any, ...]]:
    """Rows of an Arrow table or batch as tuples."""
    columns = [pylist(column) for column in data.columns]
    return list(zip(*columns, strict=True)) if columns else []


def pylist(column: Any) -> list[Any]:
    """A column's values as Python objects, exactly as ``to_pylist`` gives them."""
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

    days, rest = np.divmod(micros, _MICROS_PER_DAY)
    shifted = days.astype(np.int32) + 719_468  # days since 0000-03-01
    era = shifted // 146_097
    day_of_era = shifted - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1_460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    month_index = (5 * day_of_year + 2) // 153  # March is 0
    month = month_index + np.where(month_index < 10, 3, -9)
    state = np.empty(len(micros), _state_dtype())
    state["year"] = year_of_era + era * 400 + (month <= 2)
    state["month"] = month
    state["day"] = day_of_year - (153 * month_index + 2) // 5 + 1
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
    # NumPy is a dependency of ours: pyarrow converts to it, but no longer installs it.
    import numpy as np

    return np.asarray(column)
