"""Apache Superset support: :class:`TrinityEngineSpec`, the ``trinity`` database engine spec.

Superset describes each kind of database with an engine spec: a class of SQL
snippets, flags and hooks that it reads while building chart queries. It finds
this one through the package's entry point::

    [options.entry_points]
    superset.db_engine_specs =
        trinity = trinity_dbapi.superset:TrinityEngineSpec

and uses it for every database whose SQLAlchemy URL is a ``trinity://`` URL
(the dialect of :mod:`trinity_dbapi.sqlalchemy`). docs/superset.md is the
manual.

What the spec declares, all of it DuckDB SQL, since the driver runs queries in
DuckDB (Superset's own DuckDB spec is the model):

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
* :meth:`TrinityEngineSpec.convert_dttm`: a filter value as a ``DATE``,
  ``TIMESTAMP`` or ``TIMESTAMPTZ`` literal for a column of that type. A naive
  ``datetime`` is UTC, as everywhere in the driver (docs/sql.md).

Superset is not a dependency of the package, and nothing but this module
imports it; ``import trinity_dbapi`` never imports this module.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar

# Superset pins its own SQLAlchemy (<2), sqlglot, Flask and pandas, so it cannot be
# installed beside the driver's development dependencies, and is not installed where
# the tests run. Inside Superset's environment (the only place the spec is used) the
# class subclasses Superset's BaseEngineSpec, which supplies every hook not declared
# here: get_timestamp_expr, get_time_grains, fetch_data, ... Without Superset it
# subclasses object and defines itself the hooks its tables feed
# (get_time_grain_expressions), so the tests call the same hooks Superset calls.
# mypy checks it as the class without Superset: Superset's types are not installed
# for it to check against.
if TYPE_CHECKING:
    _Base = object
else:
    try:
        from superset.db_engine_specs.base import BaseEngineSpec as _Base
    except ImportError:
        _Base = object

if TYPE_CHECKING:
    from superset.models.core import Database

__all__ = ["SUPERSET_INSTALLED", "TIME_GRAIN_EXPRESSIONS", "TrinityEngineSpec"]

#: Whether Superset could be imported: the spec then subclasses its BaseEngineSpec.
SUPERSET_INSTALLED: bool = _Base is not object

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


class TrinityEngineSpec(_Base):
    """The engine spec of TrinityLake lakehouses (``trinity://`` SQLAlchemy URLs).

    Attributes:
        engine: the SQLAlchemy dialect name of the URLs the spec serves.
        engine_name: the name Superset shows.
        default_driver: the dialect's driver (``trinity+trinity_dbapi://``).
        sqlalchemy_uri_placeholder: the URL shown in the "Connect a database" form.
        supports_file_upload: False: Superset's CSV/Excel upload is not supported.
        supports_dynamic_schema: True: the namespace of unqualified table names
            follows SQL Lab's schema selector (:meth:`adjust_engine_params`).
    """

    engine = "trinity"
    engine_name = "TrinityLake"
    drivers: ClassVar[dict[str, str]] = {"trinity_dbapi": "the trinity_dbapi DB-API driver"}
    default_driver = "trinity_dbapi"
    sqlalchemy_uri_placeholder = "trinity:////absolute/path/to/lakehouse"

    _time_grain_expressions: ClassVar[dict[str | None, str]] = dict(TIME_GRAIN_EXPRESSIONS)

    # Queries are DuckDB's: joins, subqueries, aliases and comments all work.
    allows_joins = True
    allows_subqueries = True
    allows_alias_in_select = True
    allows_alias_in_orderby = True
    allows_sql_comments = True
    # Namespaces are schemas; a lakehouse has no catalogs above them.
    supports_dynamic_schema = True
    supports_catalog = False
    supports_dynamic_catalog = False
    # Uploads write through pandas' to_sql, which the spec has not been tested with.
    supports_file_upload = False
    # A lakehouse is a folder or a bucket, never a host to tunnel to.
    disable_ssh_tunneling = True

    if not SUPERSET_INSTALLED:

        @classmethod
        def get_time_grain_expressions(cls) -> dict[str | None, str]:
            """Time grain -> SQL of the bucket start, with ``{col}`` for the column.

            Superset's own version (used when Superset is installed) also applies
            its ``TIME_GRAIN_ADDON_EXPRESSIONS`` and ``TIME_GRAIN_DENYLIST``.
            """
            return dict(cls._time_grain_expressions)

    @classmethod
    def epoch_to_dttm(cls) -> str:
        """SQL of the UTC ``TIMESTAMP`` of ``{col}`` seconds since the epoch (fractions kept)."""
        return "(TIMESTAMP '1970-01-01 00:00:00' + to_seconds({col}))"

    @classmethod
    def epoch_ms_to_dttm(cls) -> str:
        """SQL of the UTC ``TIMESTAMP`` of ``{col}`` milliseconds since the epoch."""
        return "(TIMESTAMP '1970-01-01 00:00:00' + to_milliseconds({col}))"

    @classmethod
    def convert_dttm(
        cls, target_type: str, dttm: datetime, db_extra: dict[str, Any] | None = None
    ) -> str | None:
        """The SQL literal of ``dttm`` for a column of type ``target_type``, or None.

        Args:
            target_type: the column's type name, any case, with or without a
                precision: ``DATE``, ``TIMESTAMP(3)``, ``TIMESTAMPTZ``,
                ``TIMESTAMP WITH TIME ZONE``, ...
            dttm: the value; naive is UTC. A ``DATE`` takes its date as written.
            db_extra: the database's extra settings (unused).

        Returns:
            ``DATE '2024-05-15'``, ``TIMESTAMP '2024-05-15 13:47:23.654321'`` (UTC)
            or ``TIMESTAMPTZ '2024-05-15 13:47:23.654321+00:00'``; None for any
            other type (Superset then writes the value as a quoted string).
        """
        literal = _LITERALS.get(_type_key(target_type))
        return literal(dttm) if literal is not None else None

    @classmethod
    def adjust_engine_params(
        cls,
        uri: Any,
        connect_args: dict[str, Any],
        catalog: str | None = None,
        schema: str | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Point a connection at namespace ``schema``: the ``namespace`` option of ``connect()``.

        Superset calls this for the schema chosen in SQL Lab; unqualified table
        names then resolve in it. The URL is returned unchanged.
        """
        if schema:
            connect_args = {**connect_args, "namespace": schema}
        return uri, connect_args

    @classmethod
    def get_schema_from_engine_params(
        cls, sqlalchemy_uri: Any, connect_args: dict[str, Any]
    ) -> str | None:
        """The namespace a connection is set to: in ``connect_args``, else the URL's."""
        namespace = connect_args.get("namespace") or sqlalchemy_uri.query.get("namespace")
        if isinstance(namespace, tuple):  # a repeated URL option: the last one counts
            namespace = namespace[-1]
        return str(namespace) if namespace else None

    @classmethod
    def get_function_names(cls, database: Database) -> list[str]:
        """DuckDB's function names, for SQL Lab's autocompletion (:data:`FUNCTION_NAMES_SQL`)."""
        return [str(name) for name in database.get_df(FUNCTION_NAMES_SQL)["function_name"]]
