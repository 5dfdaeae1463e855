"""The ``trinitylake`` Spark data source (PySpark 4's Python data source API).

Imports from spark/: options, read, write.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceWriter

from trinity_dbapi.errors import NotSupportedError, ProgrammingError
from trinity_dbapi.spark.options import SourceOptions, parse_options
from trinity_dbapi.spark.read import (
    PruningReader,
    TableScan,
    TrinityLakeReader,
    pin_version,
    spark_compatible,
)
from trinity_dbapi.spark.write import TrinityLakeWriter, prepare_write


class TrinityLakeDataSource(DataSource):
    """``spark.read.format("trinitylake")`` / ``df.write.format("trinitylake")``.

    Options: ``uri`` (required), ``storage.<option>`` or ``storageOptions``
    (JSON) for the file system, ``branch`` (read and write a branch instead
    of main), ``versionAsOf`` / ``timestampAsOf`` and
    ``pushFilters`` for reads, ``createTable`` and ``partitionBy`` for writes. The path is
    ``"namespace.table"``; ``system.*`` and ``information_schema.*`` read
    the catalog tables, whose rows the ``namespaces`` option (a JSON list or
    comma-separated names) restricts to those namespaces.
    """

    #: Whether reads take Spark's filters unless the pushFilters option says.
    push_filters_default = True

    @classmethod
    def name(cls) -> str:
        return "trinitylake"

    def _options(self) -> SourceOptions:
        return parse_options(self.options, push_filters=self.push_filters_default)

    def schema(self) -> Any:
        return _scan(self._options()).spark_schema_struct

    def reader(self, schema: Any) -> DataSourceReader:
        options = self._options()
        resolved = _scan(options)
        # Spark refuses a reader that takes filters while filter pushdown is
        # off; pushFilters=false reads (unpruned) in such a session.
        kind = PruningReader if options.push_filters else TrinityLakeReader
        return kind(resolved.scan, resolved.view)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return TrinityLakeWriter(prepare_write(self._options(), schema, overwrite))


class _Resolved:
    def __init__(self, scan: TableScan, spark_schema_struct: Any, view: Any) -> None:
        self.scan = scan
        self.spark_schema_struct = spark_schema_struct
        self.view = view  # the read-only transaction on the pinned version


def _scan(options: SourceOptions) -> _Resolved:
    """Pin the version and resolve the table (or catalog table) it reads.

    A catalog table's rows are not built here: the reader builds them once
    Spark has pushed its filters (:meth:`TrinityLakeReader.partitions`).
    """
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    from trinity_dbapi.format import type_mapping
    from trinity_dbapi.lakehouse import catalog
    from trinity_dbapi.tables import managed

    lakehouse = options.location.lakehouse()
    version = pin_version(options, lakehouse)
    txn = lakehouse.begin(read_only=True, version=version)
    partition_by: tuple[str, ...] = ()
    is_catalog = options.namespace in catalog.RESERVED_NAMESPACES
    if options.namespaces is not None and not is_catalog:
        raise ProgrammingError(
            f"option namespaces restricts the rows of catalog tables (system.*, "
            f"information_schema.*), not of table {options.namespace}.{options.table}; "
            "drop the option"
        )
    if is_catalog:
        schema = catalog.catalog_schema(options.namespace, options.table)
        definition, meta = None, None
    else:
        definition = txn.load_table(options.namespace, options.table)
        if managed.files_elsewhere(definition):
            # Spark's executors reopen the lakehouse by its URI to read the
            # files; a referenced dataset's are in another store, and a table
            # read through an export keeps them in its source lakehouse.
            elsewhere = (
                "the Kartothek store it was imported from with mode => 'reference'; read it "
                "through SQL (pandas.read_sql, the DB-API), or import the dataset with "
                "mode => 'copy'"
                if managed.is_reference(definition)
                else "the lakehouse this one was exported from with mode 'minimal' or "
                "'partial'; read it there or through SQL, or export it with mode => 'full'"
            )
            raise NotSupportedError(
                f"reading table {options.namespace}.{options.table} from Spark is not "
                f"supported: its files stay in {elsewhere}"
            )
        schema = type_mapping.arrow_schema(definition)
        meta = managed.metadata(lakehouse.storage, definition)
        partition_by = tuple(definition.partition_columns)
    struct = from_arrow_schema(spark_compatible(schema), prefer_timestamp_ntz=True)
    spark_arrow = to_arrow_schema(struct, timezone="UTC", prefers_large_types=False)
    scan = TableScan(
        location=options.location,
        version=version,
        schema=schema,
        spark_schema=spark_arrow,
        partition_by=partition_by,
        definition=definition,
        meta=meta,
        catalog=(options.namespace, options.table) if is_catalog else None,
        namespaces=options.namespaces,
    )
    return _Resolved(scan, struct, txn)


class TrinityLakeDataSourceWithoutPushdown(TrinityLakeDataSource):
    """``trinitylake`` for a session whose filter pushdown setting is off.

    Spark refuses a reader that takes filters while
    ``spark.sql.python.filterPushdown.enabled`` is false, and a data source
    cannot read the session's settings: :func:`~trinity_dbapi.spark.register`
    picks this class when the setting is off, so reads work without it.
    """

    push_filters_default = False
