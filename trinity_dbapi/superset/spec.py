"""The engine spec class, :class:`TrinityEngineSpec`; the package docstring is the overview.

Imports from superset/: cancel, column_types, grains, host, partitions.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from trinity_dbapi import errors
from trinity_dbapi.superset import cancel, partitions
from trinity_dbapi.superset.column_types import COLUMN_TYPE_MAPPINGS
from trinity_dbapi.superset.grains import (
    EPOCH_MS_TO_DTTM,
    EPOCH_TO_DTTM,
    FUNCTION_NAMES_SQL,
    TIME_GRAIN_EXPRESSIONS,
    dttm_literal,
)
from trinity_dbapi.superset.host import SUPERSET_INSTALLED, superset_exception

if TYPE_CHECKING:
    # mypy checks the class without Superset (host.py says why).
    _Base = object
    from sqlalchemy.engine.reflection import Inspector
    from sqlalchemy.sql import Select
    from superset.models.core import Database
    from superset.models.sql_lab import Query
    from superset.sql.parse import Table
else:
    from trinity_dbapi.superset.host import BaseEngineSpec as _Base

__all__ = [
    "HIDDEN_SCHEMAS",
    "SUPERSET_EXCEPTIONS",
    "TrinityEngineSpec",
    "exception_names",
    "refuse_file_access",
]

#: Namespaces not listed as schemas: ``information_schema`` repeats ``system``'s
#: facts in the SQL standard's shape. It can still be queried by name.
HIDDEN_SCHEMAS = frozenset({"information_schema"})

#: The driver's PEP 249 classes and the exception of
#: ``superset.db_engine_specs.exceptions`` each becomes, the most specific first.
SUPERSET_EXCEPTIONS: tuple[tuple[type[errors.Error], str], ...] = (
    (errors.InterfaceError, "SupersetDBAPIConnectionError"),
    (errors.ProgrammingError, "SupersetDBAPIProgrammingError"),
    (errors.DataError, "SupersetDBAPIDataError"),
    (errors.OperationalError, "SupersetDBAPIOperationalError"),
    (errors.DatabaseError, "SupersetDBAPIDatabaseError"),
    (errors.Error, "SupersetDBAPIError"),
)


def _subclasses(cls: type[errors.Error]) -> Iterator[type[errors.Error]]:
    yield cls
    for sub in cls.__subclasses__():
        yield from _subclasses(sub)


def exception_names() -> dict[type[errors.Error], str]:
    """Every error class of the driver -> the name of the Superset exception it becomes.

    Superset looks an exception's exact class up (``type(exception)``), so
    every subclass (``NoSuchTableError``, ``QueryInterruptedError``, ...) is
    listed under the Superset exception of its nearest PEP 249 class.
    """
    return {
        cls: next(name for base, name in SUPERSET_EXCEPTIONS if issubclass(cls, base))
        for cls in _subclasses(errors.Error)
    }


def refuse_file_access(connect_args: dict[str, Any]) -> None:
    """Refuse ``connect_args`` that would let SQL read or write files (``COPY``).

    A Superset database's engine parameters are edited in Superset and its
    users send SQL; ``connect(..., file_access=[...])`` would let them read
    and write the server's files. The option is removed and the connection
    refused, so that it is fixed, not silently ignored.

    Raises:
        ProgrammingError: ``connect_args`` holds ``file_access``.
    """
    if "file_access" in connect_args:
        connect_args.pop("file_access")
        raise errors.ProgrammingError(
            "a Superset database never gets file access: its users' SQL would read and write "
            "the server's files with COPY; remove file_access from the database's engine "
            "parameters (connect_args)"
        )


class TrinityEngineSpec(_Base):
    """The engine spec of TrinityLake lakehouses (``trinity://`` SQLAlchemy URLs).

    Every hook has Superset 6.1's signature; docs/superset.md lists what each
    answers.

    Attributes:
        engine: the SQLAlchemy dialect name of the URLs the spec serves.
        engine_name: the name Superset shows.
        default_driver: the dialect's driver (``trinity+trinity_dbapi://``).
        sqlalchemy_uri_placeholder: the URL shown in the "Connect a database" form.
        supports_file_upload: False: Superset's CSV/Excel upload is not supported.
        supports_dynamic_schema: True: the namespace of unqualified table names
            follows SQL Lab's schema selector (:meth:`adjust_engine_params`).
        column_type_mappings: type names -> SQLAlchemy and generic types
            (:mod:`trinity_dbapi.superset.column_types`).
    """

    engine = "trinity"
    engine_name = "TrinityLake"
    drivers: ClassVar[dict[str, str]] = {"trinity_dbapi": "the trinity_dbapi DB-API driver"}
    default_driver = "trinity_dbapi"
    sqlalchemy_uri_placeholder = "trinity:////absolute/path/to/lakehouse"

    _time_grain_expressions: ClassVar[dict[str | None, str]] = dict(TIME_GRAIN_EXPRESSIONS)
    column_type_mappings: ClassVar[tuple[Any, ...]] = COLUMN_TYPE_MAPPINGS

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
    # The cancel identifier exists before the query runs (it names the connection).
    has_query_id_before_execute = True

    if not SUPERSET_INSTALLED:

        @classmethod
        def get_time_grain_expressions(cls) -> dict[str | None, str]:
            """Time grain -> SQL of the bucket start, with ``{col}`` for the column.

            Superset's own version (used when Superset is installed) also applies
            its ``TIME_GRAIN_ADDON_EXPRESSIONS`` and ``TIME_GRAIN_DENYLIST``.
            """
            return dict(cls._time_grain_expressions)

        @classmethod
        def get_dbapi_mapped_exception(cls, exception: Exception) -> Exception:
            """Superset's mapping of a driver exception (its own version when installed)."""
            mapped = cls.get_dbapi_exception_mapping().get(type(exception))
            return mapped(str(exception)) if mapped else exception

    # -- time ---------------------------------------------------------------------------

    @classmethod
    def epoch_to_dttm(cls) -> str:
        """SQL of the UTC ``TIMESTAMP`` of ``{col}`` seconds since the epoch (fractions kept)."""
        return EPOCH_TO_DTTM

    @classmethod
    def epoch_ms_to_dttm(cls) -> str:
        """SQL of the UTC ``TIMESTAMP`` of ``{col}`` milliseconds since the epoch."""
        return EPOCH_MS_TO_DTTM

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
        return dttm_literal(target_type, dttm)

    # -- connections --------------------------------------------------------------------

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
        names then resolve in it. The URL is returned unchanged, and a
        ``namespace`` in ``connect_args`` overrides one in the URL.

        ``connect_args`` is changed in place: Superset 6.1 ignores the returned
        dict and creates the engine with the one it passed in
        (``Database._get_sqla_engine``), as its own specs expect.
        """
        refuse_file_access(connect_args)
        if schema:
            connect_args["namespace"] = schema
        return uri, connect_args

    @classmethod
    def update_params_from_encrypted_extra(cls, database: Database, params: dict[str, Any]) -> None:
        """Superset's merge of the database's encrypted extra, which never grants file access.

        Raises:
            ProgrammingError: the merged ``connect_args`` hold ``file_access``.
        """
        if SUPERSET_INSTALLED:
            super().update_params_from_encrypted_extra(database, params)  # type: ignore[misc]
        refuse_file_access(params.get("connect_args") or {})

    @classmethod
    def get_schema_from_engine_params(
        cls, sqlalchemy_uri: Any, connect_args: dict[str, Any]
    ) -> str | None:
        """The namespace a connection is set to: in ``connect_args``, else the URL's."""
        namespace = connect_args.get("namespace") or sqlalchemy_uri.query.get("namespace")
        if isinstance(namespace, tuple):  # a repeated URL option: the last one counts
            namespace = namespace[-1]
        return str(namespace) if namespace else None

    # -- listing and reflection (the dialect's point lookups and key scans) --------------

    @classmethod
    def get_schema_names(cls, inspector: Inspector) -> set[str]:
        """Every namespace and the ``system`` catalog namespace (not :data:`HIDDEN_SCHEMAS`)."""
        return set(inspector.get_schema_names()) - HIDDEN_SCHEMAS

    @classmethod
    def get_table_names(
        cls, database: Database, inspector: Inspector, schema: str | None
    ) -> set[str]:
        """The tables of namespace ``schema`` (of the connection's namespace if None)."""
        return set(inspector.get_table_names(schema))

    @classmethod
    def get_view_names(
        cls, database: Database, inspector: Inspector, schema: str | None
    ) -> set[str]:
        """The views of namespace ``schema`` (``CREATE VIEW``), listed apart from its tables."""
        return set(inspector.get_view_names(schema))

    @classmethod
    def get_table_comment(cls, inspector: Inspector, table: Table) -> str | None:
        """The table's comment, or None; a table that cannot be read raises."""
        comment = inspector.get_table_comment(table.table, table.schema)
        text = comment.get("text") if isinstance(comment, dict) else None
        return str(text) if text is not None else None

    @classmethod
    def get_columns(
        cls, inspector: Inspector, table: Table, options: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """The reflected columns, each with Superset's ``column_name`` key added."""
        return [
            {"column_name": column["name"], **column}
            for column in inspector.get_columns(table.table, table.schema)
        ]

    @classmethod
    def get_indexes(
        cls, database: Database, inspector: Inspector, table: Table
    ) -> list[dict[str, Any]]:
        """The partition columns as the index ``partition`` (first), then the secondary indices."""
        columns = partitions.partition_columns(inspector, table)
        found = [dict(index) for index in inspector.get_indexes(table.table, table.schema)]
        return ([partitions.partition_index(columns)] if columns else []) + found

    @classmethod
    def get_datatype(cls, type_code: Any) -> str | None:
        """The type name of a ``cursor.description`` type code: the code itself, upper case."""
        return type_code.upper() if isinstance(type_code, str) and type_code else None

    # -- partitions ---------------------------------------------------------------------

    @classmethod
    def latest_partition(
        cls,
        database: Database,
        table: Table,
        show_first: bool = False,
        indexes: list[dict[str, Any]] | None = None,
    ) -> tuple[list[str], list[Any] | None]:
        """The partition columns and the values of the latest partition.

        Args:
            database: the Superset database.
            table: the table.
            show_first: accepted for Presto's signature; every column's value
                is always returned.
            indexes: what :meth:`get_indexes` returned, to save reading them again.

        Returns:
            ``(columns, values)``; ``([], None)`` for an unpartitioned table,
            ``(columns, None)`` for an empty one.
        """
        if indexes is not None:
            columns = next(
                (
                    list(index["column_names"])
                    for index in indexes
                    if index.get("name") == partitions.PARTITION_INDEX
                ),
                [],
            )
        else:
            with database.get_inspector(catalog=table.catalog, schema=table.schema) as inspector:
                columns = partitions.partition_columns(inspector, table)
        if not columns:
            return [], None
        return columns, partitions.latest_values(database, table, columns)

    @classmethod
    def where_latest_partition(
        cls,
        database: Database,
        table: Table,
        query: Select,
        columns: list[dict[str, Any]] | None = None,
    ) -> Select | None:
        """``query`` limited to the latest partition, or None (no partitions, no rows)."""
        from sqlalchemy import column, literal

        names, values = cls.latest_partition(database, table)
        if values is None:
            return None
        for name, value in zip(names, values, strict=True):
            target: Any = column(name)
            query = query.where(target.is_(None) if value is None else target == literal(value))
        return query

    @classmethod
    def get_extra_table_metadata(cls, database: Database, table: Table) -> dict[str, Any]:
        """``{"partitions": {"cols", "latest", "partitionQuery"}}`` for a partitioned table.

        ``latest`` maps each partition column to its value in the latest
        partition (None for an empty table), in JSON form: dates and times as
        ISO text. An unpartitioned table gives ``{}``.
        """
        columns, values = cls.latest_partition(database, table)
        if not columns:
            return {}
        latest = values if values is not None else [None] * len(columns)
        return {
            "partitions": {
                "cols": columns,
                "latest": {
                    name: partitions.json_value(value)
                    for name, value in zip(columns, latest, strict=True)
                },
                "partitionQuery": partitions.partition_query(table, columns),
            }
        }

    # -- running queries ----------------------------------------------------------------

    @classmethod
    def fetch_data(cls, cursor: Any, limit: int | None = None) -> list[tuple[Any, ...]]:
        """At most ``limit`` rows (all if None), read through the cursor's Arrow batches.

        The driver converts each Arrow batch to tuples column by column;
        ``fetchmany(limit)`` pulls only the batches it needs from DuckDB, so a
        statement the SQL limit does not reach (``SHOW``, ``DESCRIBE``) is
        still cut at SQL Lab's limit. Superset 6.1 has no hook that takes Arrow
        data: its result set rebuilds Arrow arrays from these tuples.
        """
        if cursor.description is None and not getattr(cursor, "closed", False):
            # A statement without a result set (DDL, INSERT: SQL Lab with Allow
            # DML): no rows, rather than the driver's "no result set" error,
            # which would fail the query and leave its change uncommitted.
            return []
        try:
            return list(cursor.fetchmany(limit) if limit else cursor.fetchall())
        except Exception as ex:
            raise cls.get_dbapi_mapped_exception(ex) from ex

    @classmethod
    def get_dbapi_exception_mapping(cls) -> dict[type[Exception], type[Exception]]:
        """Every driver error class -> its Superset exception (:func:`exception_names`).

        Empty without Superset: its exception classes are not there to map to.
        """
        mapping: dict[type[Exception], type[Exception]] = {}
        for cls_, name in exception_names().items():
            target = superset_exception(name)
            if target is not None:
                mapping[cls_] = target
        return mapping

    @classmethod
    def has_implicit_cancel(cls) -> bool:
        """False: stopping a query takes :meth:`cancel_query`."""
        return False

    @classmethod
    def get_cancel_query_id(cls, cursor: Any, query: Query) -> str | None:
        """An identifier of the connection ``cursor`` runs on (:mod:`~trinity_dbapi.superset.cancel`)."""
        return cancel.register(cursor)

    @classmethod
    def cancel_query(cls, cursor: Any, query: Query, cancel_query_id: str) -> bool:
        """Interrupt the statement on the connection ``cancel_query_id`` names.

        ``cursor`` (on a new connection Superset opens for the purpose) is not
        needed. Returns False when the connection is not in this process or
        is gone.
        """
        return cancel.cancel(cancel_query_id)

    # -- SQL Lab ------------------------------------------------------------------------

    @classmethod
    def get_function_names(cls, database: Database) -> list[str]:
        """DuckDB's function names, for SQL Lab's autocompletion (:data:`FUNCTION_NAMES_SQL`)."""
        return [str(name) for name in database.get_df(FUNCTION_NAMES_SQL)["function_name"]]
