"""Column type names as Superset's SQLAlchemy and generic types.

Superset names a column's type by a string and asks the spec what it is: a
dataset column by the type the dialect reflects, compiled (``INT8``,
``TIMESTAMPTZ(6)``, ``LIST<INT4>``: docs/sqlalchemy.md), a SQL Lab result
column by its ``cursor.description`` type code (DuckDB's spelling:
``BIGINT``, ``TIMESTAMP WITH TIME ZONE``, ``LIST``). Its
``get_column_types`` tries the spec's ``column_type_mappings`` first, then
its defaults, whose ``^int`` would call ``INTERVAL`` numeric and which know
no ``FIXED``, ``STRUCT``, ``HUGEINT`` or ``TIMESTAMP_NS``.
:data:`COLUMN_TYPE_MAPPINGS` therefore names every TrinityLake type and every
type code of the driver, whole names only, so the defaults are never reached
for them. The generic type decides what Superset offers: ``TEMPORAL``
columns (``DATE``, ``TIMESTAMP``, ``TIMESTAMPTZ``) are time columns
(``is_dttm``) for time grains and ranges,
``NUMERIC`` ones are summed, ``STRING`` ones grouped by, ``BOOLEAN`` ones
filtered as true or false.

Times of day (``TIME``, ``TIMETZ``), intervals, nested values (``STRUCT``,
``MAP``, ``LIST``) and binary ones are ``STRING``: Superset shows them as
text and can group by them, but no time grain or range applies to them.

Imports from superset/: host.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import types

from trinity_dbapi.superset.host import GenericDataType

__all__ = ["COLUMN_TYPE_MAPPINGS", "column_type"]

_PRECISION = r"(\(\s*\d+\s*(,\s*\d+\s*)?\))?"


def _names(*names: str, precision: bool = False) -> re.Pattern[str]:
    """A pattern matching exactly one of ``names``, any case, with an optional precision."""
    alternatives = "|".join(re.escape(name).replace(r"\ ", r"\s+") for name in names)
    return re.compile(f"^({alternatives}){_PRECISION if precision else ''}$", re.IGNORECASE)


#: ``(pattern, SQLAlchemy type, generic type)``, the shape of Superset's
#: ``BaseEngineSpec.column_type_mappings``; the first match wins.
COLUMN_TYPE_MAPPINGS: tuple[tuple[re.Pattern[str], Any, Any], ...] = (
    (_names("BOOLEAN", "BOOL"), types.Boolean(), GenericDataType.BOOLEAN),
    (
        _names("INT1", "TINYINT", "UTINYINT", "INT2", "SMALLINT", "USMALLINT"),
        types.SmallInteger(),
        GenericDataType.NUMERIC,
    ),
    (_names("INT4", "INT", "INTEGER", "UINTEGER"), types.Integer(), GenericDataType.NUMERIC),
    (
        _names("INT8", "BIGINT", "UBIGINT", "HUGEINT", "UHUGEINT", "BIGNUM", "VARINT"),
        types.BigInteger(),
        GenericDataType.NUMERIC,
    ),
    (_names("DECIMAL", "NUMERIC", precision=True), types.Numeric(), GenericDataType.NUMERIC),
    (_names("FLOAT4", "REAL", "FLOAT"), types.Float(), GenericDataType.NUMERIC),
    (
        _names("FLOAT8", "DOUBLE", "DOUBLE PRECISION"),
        types.Float(precision=53),
        GenericDataType.NUMERIC,
    ),
    (
        _names("CHAR", "VARCHAR", "STRING", "TEXT", precision=True),
        types.String(),
        GenericDataType.STRING,
    ),
    (_names("UUID", "JSON", "ENUM"), types.String(), GenericDataType.STRING),
    (_names("DATE"), types.Date(), GenericDataType.TEMPORAL),
    (
        _names("TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE", "TIMESTAMPTZ_NS", precision=True),
        types.TIMESTAMP(timezone=True),
        GenericDataType.TEMPORAL,
    ),
    (
        _names(
            "TIMESTAMP",
            "TIMESTAMP WITHOUT TIME ZONE",
            "DATETIME",
            "TIMESTAMP_S",
            "TIMESTAMP_MS",
            "TIMESTAMP_US",
            "TIMESTAMP_NS",
            precision=True,
        ),
        types.TIMESTAMP(),
        GenericDataType.TEMPORAL,
    ),
    # A time of day and a duration are no points in time: DuckDB's date_trunc
    # refuses a TIME (no time grain), neither compares with a time range's
    # bounds, so Superset must not offer them as time columns.
    (
        _names("TIME", "TIMETZ", "TIME WITH TIME ZONE", "TIME_NS", precision=True),
        types.Time(),
        GenericDataType.STRING,
    ),
    (_names("INTERVAL"), types.Interval(), GenericDataType.STRING),
    (
        _names("FIXED", "BINARY", "VARBINARY", "BLOB", "BYTEA", precision=True),
        types.LargeBinary(),
        GenericDataType.STRING,
    ),
    (
        re.compile(r"^(STRUCT|MAP|LIST|ARRAY|UNION)(\s*[<(].*[>)])?$", re.IGNORECASE | re.DOTALL),
        types.String(),
        GenericDataType.STRING,
    ),
    # DuckDB's own spelling of a list type: the element type, then brackets.
    (re.compile(r"^.+\[\d*\]$", re.DOTALL), types.String(), GenericDataType.STRING),
)


def column_type(native_type: str | None) -> tuple[Any, Any] | None:
    """The SQLAlchemy type and Superset generic type of a type name, or None.

    This is what Superset's ``get_column_types`` answers from
    :data:`COLUMN_TYPE_MAPPINGS` before its defaults.

    Args:
        native_type: a type as reflected and compiled (``TIMESTAMPTZ(6)``) or a
            ``cursor.description`` type code (``TIMESTAMP WITH TIME ZONE``).

    Returns:
        ``(sqlalchemy type, GenericDataType)``; None for a name it does not
        know (Superset then tries its defaults).
    """
    if not native_type:
        return None
    text = native_type.strip()
    for pattern, sqla_type, generic in COLUMN_TYPE_MAPPINGS:
        if pattern.match(text):
            return sqla_type, generic
    return None
