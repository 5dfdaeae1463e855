"""Time: the time grain expressions, epoch conversions and filter literals.

All of it is DuckDB SQL, since the driver runs queries in DuckDB (Superset's
own DuckDB spec is the model):

* :data:`TIME_GRAIN_EXPRESSIONS`: the start of a column value's time bucket,
  for every time grain of ``superset.constants.TimeGrain``. Grains of one
  unit are ``date_trunc``; grains of several units (5 seconds, 6 hours, ...)
  subtract the remainder from the truncation to one unit, as Superset's
  Presto spec does, so every bucket is aligned to the minute, hour or day
  (``time_bucket`` is not used: for ``TIMESTAMPTZ`` it buckets in UTC where
  ``date_trunc`` uses the session's time zone, and the two would disagree).
  Weeks start on Monday (ISO); the Sunday-based grains shift by a day.
* epoch seconds and milliseconds to a ``TIMESTAMP`` (UTC), by adding an
  interval to the epoch: exact for any numeric column, where ``col * 1000000``
  overflows an ``INT4`` and ``epoch_ms()`` refuses a ``DOUBLE``;
* :func:`dttm_literal`: a filter value as a ``DATE``, ``TIMESTAMP`` or
  ``TIMESTAMPTZ`` literal for a column of that type. A naive ``datetime`` is
  UTC, as everywhere in the driver (docs/sql.md).

Imports from superset/: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone

__all__ = [
    "EPOCH_MS_TO_DTTM",
    "EPOCH_TO_DTTM",
    "FUNCTION_NAMES_SQL",
    "TIME_GRAIN_EXPRESSIONS",
    "dttm_literal",
]

#: ``superset.constants.TimeGrain`` value (None: no grain) -> DuckDB SQL of the
#: start of the bucket of ``{col}``, in the order Superset sorts grains in.
TIME_GRAIN_EXPRESSIONS: Mapping[str | None, str] = {
    None: "{col}",
    "PT1S": "date_trunc('second', {col})",
    "PT5S": "date_trunc('second', {col}) - to_seconds(second({col}) % 5)",
    "PT30S": "date_trunc('second', {col}) - to_seconds(second({col}) % 30)",
    "PT1M": "date_trunc('minute', {col})",
    "PT5M": "date_trunc('minute', {col}) - to_minutes(minute({col}) % 5)",
    "PT10M": "date_trunc('minute', {col}) - to_minutes(minute({col}) % 10)",
    "PT15M": "date_trunc('minute', {col}) - to_minutes(minute({col}) % 15)",
    "PT30M": "date_trunc('minute', {col}) - to_minutes(minute({col}) % 30)",
    # HALF_HOUR: the same bucket as PT30M, under the key older Superset versions list.
    "PT0.5H": "date_trunc('minute', {col}) - to_minutes(minute({col}) % 30)",
    "PT1H": "date_trunc('hour', {col})",
    "PT6H": "date_trunc('hour', {col}) - to_hours(hour({col}) % 6)",
    "P1D": "date_trunc('day', {col})",
    "P1W": "date_trunc('week', {col})",
    "P1M": "date_trunc('month', {col})",
    "P3M": "date_trunc('quarter', {col})",
    # QUARTER_YEAR: the same bucket as P3M, under the key older Superset versions list.
    "P0.25Y": "date_trunc('quarter', {col})",
    "P1Y": "date_trunc('year', {col})",
    # Weeks labelled by their first day (Sunday, Monday) or their last (Saturday, Sunday).
    "1969-12-28T00:00:00Z/P1W": "date_trunc('week', {col} + INTERVAL 1 DAY) - INTERVAL 1 DAY",
    "1969-12-29T00:00:00Z/P1W": "date_trunc('week', {col})",
    "P1W/1970-01-03T00:00:00Z": "date_trunc('week', {col} + INTERVAL 1 DAY) + INTERVAL 5 DAY",
    "P1W/1970-01-04T00:00:00Z": "date_trunc('week', {col}) + INTERVAL 6 DAY",
}

#: DuckDB's function names for SQL Lab's autocompletion: functions, aggregates and
#: macros callable by name (not operators such as ``%``, nor internal ``__`` names).
FUNCTION_NAMES_SQL = (
    "SELECT DISTINCT function_name FROM duckdb_functions()"
    " WHERE regexp_matches(function_name, '^[a-z][a-z0-9_]*$') ORDER BY function_name"
)


def _date(value: datetime) -> str:
    return f"DATE '{value.date().isoformat()}'"


def _utc(value: datetime) -> datetime:
    """An aware UTC datetime: naive values are UTC already (the driver's rule)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def _timestamp(value: datetime) -> str:
    text = _utc(value).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    return f"TIMESTAMP '{text}'"


def _timestamptz(value: datetime) -> str:
    return f"TIMESTAMPTZ '{_utc(value).isoformat(sep=' ', timespec='microseconds')}'"


#: Column type name (upper case, without precision) -> the literal of a datetime for it.
#: The names are DuckDB's (cursor descriptions, SQL Lab) and the dialect's
#: (``TIMESTAMPTZ(6)``, reflected dataset columns).
_LITERALS: Mapping[str, Callable[[datetime], str]] = {
    "DATE": _date,
    "TIMESTAMP": _timestamp,
    "TIMESTAMP WITHOUT TIME ZONE": _timestamp,
    "DATETIME": _timestamp,
    "TIMESTAMP_S": _timestamp,
    "TIMESTAMP_MS": _timestamp,
    "TIMESTAMP_US": _timestamp,
    "TIMESTAMP_NS": _timestamp,
    "TIMESTAMPTZ": _timestamptz,
    "TIMESTAMP WITH TIME ZONE": _timestamptz,
    "TIMESTAMPTZ_NS": _timestamptz,
}

_PRECISION = re.compile(r"\(\s*\d*\s*\)")


def _type_key(target_type: str) -> str:
    """``timestamp(6) with time zone`` -> ``TIMESTAMP WITH TIME ZONE``."""
    return " ".join(_PRECISION.sub(" ", target_type).upper().split())


#: SQL of the UTC ``TIMESTAMP`` of ``{col}`` seconds since the epoch (fractions kept).
EPOCH_TO_DTTM = "(TIMESTAMP '1970-01-01 00:00:00' + to_seconds({col}))"

#: SQL of the UTC ``TIMESTAMP`` of ``{col}`` milliseconds since the epoch.
EPOCH_MS_TO_DTTM = "(TIMESTAMP '1970-01-01 00:00:00' + to_milliseconds({col}))"


def dttm_literal(target_type: str, dttm: datetime) -> str | None:
    """The SQL literal of ``dttm`` for a column of type ``target_type``, or None.

    Args:
        target_type: the column's type name, any case, with or without a
            precision: ``DATE``, ``TIMESTAMP(3)``, ``TIMESTAMPTZ``,
            ``TIMESTAMP WITH TIME ZONE``, ...
        dttm: the value; naive is UTC. A ``DATE`` takes its date as written.

    Returns:
        ``DATE '2024-05-15'``, ``TIMESTAMP '2024-05-15 13:47:23.654321'`` (UTC)
        or ``TIMESTAMPTZ '2024-05-15 13:47:23.654321+00:00'``; None for any
        other type (Superset then writes the value as a quoted string).
    """
    literal = _LITERALS.get(_type_key(target_type))
    return literal(dttm) if literal is not None else None
