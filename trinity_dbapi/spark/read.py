"""Reading a table (or a catalog table) into Spark: one Spark partition per data file.

The driver pins one version, resolves the table and prunes its files with
the pushed-down filters (partition values and secondary indices, as a SQL
query does); each task then opens the storage itself and reads its file by
column ID, yielding Arrow record batches with exactly the Spark schema.

A catalog table is one partition whose value is the table itself, built
when Spark asks for the partitions (after it pushed its filters): only the
rows of the objects the filters can match are built
(:mod:`~trinity_dbapi.spark.catalog_filters`), and Spark still applies every filter.

Imports from spark/: options; inside functions: catalog_filters.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSourceReader,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    LessThan,
    LessThanOrEqual,
)

from trinity_dbapi.spark.options import Location, SourceOptions

#: Rows per record batch handed to Spark.
BATCH_ROWS = 64 * 1024


@dataclass(frozen=True)
class TableScan:
    """What every task needs to read the pinned version of one table."""

    location: Location
    version: int
    schema: pa.Schema  # the table's Arrow schema (field IDs in field metadata)
    spark_schema: pa.Schema  # the Arrow form of the Spark schema: what read() yields
    partition_by: tuple[str, ...]
    definition: Any  # TableDefinition of the pinned version (None for catalog tables)
    meta: Any  # DatasetMetadata, immutable
    catalog: tuple[str, str] | None = None  # (namespace, name) of a catalog table
    namespaces: frozenset[str] | None = None  # a catalog table's rows: these namespaces only


def pin_version(options: SourceOptions, lakehouse: Any) -> int:
    """The version a read sees: ``versionAsOf``, ``timestampAsOf`` or the latest."""
    if options.version is not None:
        lakehouse.snapshot(options.version)  # NoSuchVersionError names the range
        return options.version
    if options.timestamp is not None:
        return int(lakehouse.snapshot_at(options.timestamp).version)
    return int(lakehouse.latest_version())


class TrinityLakeReader(DataSourceReader):
    """Reads one pinned version of a table, one Spark partition per data file.

    It does not take filters: Spark refuses a reader that does when
    ``spark.sql.python.filterPushdown.enabled`` is off. :class:`PruningReader`
    is the one that does.
    """

    def __init__(self, scan: TableScan, view: Any = None) -> None:
        self.scan = scan
        self.predicate: dict[str, Any] = {}  # a tables.scan.Predicate
        self.pushed: list[Any] = []  # every filter Spark pushed (a catalog table's scope)
        self._view = view  # the driver's read-only transaction; never pickled

    def __getstate__(self) -> dict[str, Any]:
        # Spark pickles the reader into its tasks: the transaction stays behind.
        return {**self.__dict__, "_view": None}

    def partitions(self) -> Sequence[InputPartition]:
        scan = self.scan
        if scan.catalog is not None:
            return [InputPartition(self._catalog_rows())]
        labels = _pruned_labels(scan, self.predicate)
        return [InputPartition(label) for label in labels]

    def _catalog_rows(self) -> pa.Table:
        """The catalog table's rows of the objects the pushed filters can match."""
        from trinity_dbapi.lakehouse import catalog
        from trinity_dbapi.spark.catalog_filters import catalog_scope

        scan = self.scan
        assert scan.catalog is not None
        view = self._view
        if view is None:
            view = scan.location.lakehouse().begin(read_only=True, version=scan.version)
        namespace, name = scan.catalog
        scope = catalog_scope(namespace, name, self.pushed, scan.namespaces)
        return catalog.catalog_table(view, view.snapshot, namespace, name, scope)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        scan = self.scan
        if scan.catalog is not None:
            rows = partition.value
        elif partition.value is None:
            # No file to read (an empty table, or filters pruned every file):
            # Spark then asks for one partition with no value.
            return
        else:
            from trinity_dbapi.tables.reader import read_table

            storage = scan.location.storage()
            rows = read_table(
                storage, scan.meta, scan.schema, list(scan.partition_by), [partition.value]
            )
        yield from conform_batches(rows, scan.spark_schema)


class PruningReader(TrinityLakeReader):
    """A reader that also takes Spark's pushed-down filters to prune files."""

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        """Use ``col = v``, ``col IN (...)`` and ranges on top-level columns to prune files.

        Each becomes a condition of the plain-value predicate scan planning
        prunes by (:data:`~trinity_dbapi.tables.scan.Predicate`, as a SQL
        query's WHERE clause does), conditions on one column ANDed by
        :func:`~trinity_dbapi.tables.scan.conjoined`. Ranges (``>``, ``>=``,
        ``<``, ``<=``) prune by the directories of the column's ``year`` ..
        ``hour`` transforms and numeric ``truncate``. Pruning is by file, so
        every filter is also returned for Spark to evaluate on the rows. A
        catalog table keeps them all to narrow the objects whose rows it
        builds (and returns them all too).
        """
        from trinity_dbapi.tables.scan import conjoined

        for pushed in filters:
            self.pushed.append(pushed)
            if len(getattr(pushed, "attribute", ())) == 1:
                demanded = _demanded(pushed)
                if demanded is not None:
                    column = pushed.attribute[0]
                    self.predicate[column] = conjoined(self.predicate.get(column), demanded)
            yield pushed


def _demanded(pushed: Any) -> Any:
    """What filter ``pushed`` demands of its column: allowed values, a ValueRange, or None.

    ``>`` keeps its bound's value (a range's lower bound is inclusive): pruning
    then keeps a file or two more, never one fewer.
    """
    from trinity_dbapi.tables.partitions import ValueRange

    if isinstance(pushed, EqualTo):
        return [pushed.value]
    if isinstance(pushed, In):
        return list(pushed.value)
    if not isinstance(pushed, _RANGES) or pushed.value is None:
        return None  # Spark does not push a NULL bound; nothing to narrow by
    if isinstance(pushed, (GreaterThan, GreaterThanOrEqual)):
        return ValueRange(low=pushed.value)
    return ValueRange(high=pushed.value, high_inclusive=isinstance(pushed, LessThanOrEqual))


_RANGES = (GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual)


def conform_batches(rows: pa.Table, spark_schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """``rows`` as batches of exactly ``spark_schema`` (Spark checks types and nullability).

    Spark's timestamps and times hold microseconds: nanoseconds are truncated
    (the only lossy step, and the one Spark itself takes).
    """
    rows = rows.select(spark_schema.names).cast(spark_schema, safe=False)
    yield from rows.to_batches(max_chunksize=BATCH_ROWS)


def spark_compatible(schema: pa.Schema) -> pa.Schema:
    """``schema`` with the Arrow types PySpark cannot convert replaced by the ones it can.

    PySpark converts ``time64`` only; ``time32`` (TIME(0) to TIME(3)) becomes
    ``time64[us]``, which holds the same values.
    """
    return pa.schema([field.with_type(_compatible(field.type)) for field in schema])


def _compatible(type_: pa.DataType) -> pa.DataType:
    if pa.types.is_time32(type_):
        return pa.time64("us")
    if pa.types.is_struct(type_):
        return pa.struct([f.with_type(_compatible(f.type)) for f in type_])
    if pa.types.is_map(type_):
        return pa.map_(
            type_.key_field.with_type(_compatible(type_.key_type)),
            type_.item_field.with_type(_compatible(type_.item_type)),
        )
    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        return pa.list_(type_.value_field.with_type(_compatible(type_.value_type)))
    return type_


def _pruned_labels(scan: TableScan, predicate: Mapping[str, Any]) -> list[str]:
    from trinity_dbapi.tables.scan import pruned_labels

    if not predicate or not scan.meta.partitions:
        return list(scan.meta.partitions)  # no storage opened when nothing is pruned
    return pruned_labels(scan.location.storage(), scan.definition, scan.meta, predicate)
