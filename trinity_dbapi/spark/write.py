"""Writing a DataFrame into a table: tasks write files, ``commit`` makes one lakehouse commit.

* On the driver, :func:`prepare_write` resolves the table (or prepares a new
  one from the DataFrame's schema when ``createTable`` is set: its empty
  dataset is written at once, unreferenced until the commit), and checks the
  DataFrame's columns against the table's.
* Each task streams its Arrow batches into new Parquet files in the dataset
  layout, partitioning them itself (``partitionBy`` is not available to
  Python sources), and returns the files it wrote.
* ``commit`` (in a Python worker) makes ONE transaction: creates the table
  if asked, adds every task's files (an append is a blind merge, rebased
  over concurrent commits like any other writer's), or for ``overwrite``
  replaces the files it saw; ``abort`` deletes the files of the tasks that
  finished. Files of a failed job are never referenced, and garbage
  collection removes any a crash left behind.

Imports from spark/: options; inside functions: read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from trinity_dbapi.errors import NoSuchObjectError, NoSuchTableError, ProgrammingError
from trinity_dbapi.spark.options import Location, SourceOptions
from trinity_dbapi.tables import registration  # noqa: F401 - the table format's hooks


@dataclass
class FilesWritten(WriterCommitMessage):
    """What one task wrote: label -> path of its new data files, their facts, its row count."""

    files: dict[str, str] = field(default_factory=dict)
    rows: int = 0
    #: label -> (rows, bytes, row groups) of each file, for the dataset metadata.
    facts: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    #: label -> value bounds of each file (column id -> (min, max)), for the same.
    bounds: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class WritePlan:
    """Everything tasks and the commit need, decided on the driver."""

    location: Location
    namespace: str
    table: str
    definition: Any  # the table's definition (for a new table: the one to create)
    meta: Any  # its DatasetMetadata (the dataset the files go into)
    schema: pa.Schema  # the table's Arrow schema
    partition_by: tuple[str, ...]
    create: bool  # create the table (and its namespace if needed) in the commit
    overwrite: bool


def prepare_write(options: SourceOptions, spark_schema: Any, overwrite: bool) -> WritePlan:
    """Resolve the target table, or prepare a new one, and check the DataFrame against it."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from trinity_dbapi.format import type_mapping
    from trinity_dbapi.lakehouse.catalog import RESERVED_NAMESPACES
    from trinity_dbapi.tables import managed

    if options.namespace in RESERVED_NAMESPACES:
        raise ProgrammingError(
            f"{options.namespace}.{options.table} is a read-only catalog table; write to a "
            "table of your own namespaces"
        )
    # createTable writes into a new lakehouse too, as connect() creates one.
    lakehouse = options.location.lakehouse(create=options.create_table)
    frame = to_arrow_schema(spark_schema, timezone="UTC", prefers_large_types=False)
    try:
        definition = lakehouse.begin(read_only=True).load_table(options.namespace, options.table)
        create = False
    except NoSuchTableError:
        if not options.create_table:
            raise NoSuchObjectError(
                "table",
                f"{options.namespace}.{options.table}",
                'to create it from the DataFrame, add .option("createTable", "true")',
            ) from None
        definition = _new_definition(options, frame, lakehouse.storage)
        create = True
    managed.require_own_files(
        definition, f"{options.namespace}.{options.table}", "writing from Spark"
    )
    schema = type_mapping.arrow_schema(definition)
    _check_columns(options, frame, schema)
    return WritePlan(
        location=options.location,
        namespace=options.namespace,
        table=options.table,
        definition=definition,
        meta=managed.metadata(lakehouse.storage, definition),
        schema=schema,
        partition_by=tuple(definition.partition_columns),
        create=create,
        overwrite=overwrite,
    )


def _new_definition(options: SourceOptions, frame: pa.Schema, storage: Any) -> Any:
    from trinity_dbapi.format.definitions import TableDefinition, with_partition_columns
    from trinity_dbapi.format.type_mapping import columns_from_schema
    from trinity_dbapi.tables import datasets, managed

    # Spark's Arrow schema carries no field IDs: columns_from_schema numbers
    # them. Spark times are microseconds, though PySpark hands them over as
    # nanoseconds: keep TIME(6).
    columns = columns_from_schema(
        pa.schema([_microsecond_times(f.remove_metadata()) for f in frame])
    )
    names = [column.name for column in columns]
    unknown = [name for name in options.partition_by if name not in names]
    if unknown:
        raise ProgrammingError(
            f"partitionBy names {unknown} that the DataFrame does not have; its columns are {names}"
        )
    definition = TableDefinition(
        options.table,
        columns,
        table_format=managed.TABLE_FORMAT,
        format_properties=with_partition_columns({}, options.partition_by),
    )
    # The commit's create_table checks too; here it fails before any task writes.
    definition.check_new_names(namespace=options.namespace)
    return datasets.create_dataset(storage, definition)


def _microsecond_times(field: pa.Field) -> pa.Field:
    if pa.types.is_time64(field.type) and field.type.unit == "ns":
        return field.with_type(pa.time64("us"))
    return field


def _check_columns(options: SourceOptions, frame: pa.Schema, schema: pa.Schema) -> None:
    """The DataFrame's columns must be the table's, with the same types (missing: NULL)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    from trinity_dbapi.spark.read import spark_compatible

    problems = []
    for frame_field in frame:
        index = schema.get_field_index(frame_field.name)
        if index < 0:
            problems.append(f"{frame_field.name}: not a column of the table")
            continue
        table_field = spark_compatible(pa.schema([schema.field(index)]))
        wanted = from_arrow_schema(table_field, prefer_timestamp_ntz=True)
        given = from_arrow_schema(pa.schema([frame_field]), prefer_timestamp_ntz=True)
        if wanted[0].dataType != given[0].dataType:
            problems.append(
                f"{frame_field.name}: the DataFrame has {given[0].dataType.simpleString()}, "
                f"the table {wanted[0].dataType.simpleString()}"
            )
    if problems:
        raise ProgrammingError(
            f"the DataFrame does not match table {options.namespace}.{options.table}: "
            + "; ".join(problems)
            + "; cast or rename the DataFrame's columns (df.select(col(...).cast(...)))"
        )


class TrinityLakeWriter(DataSourceArrowWriter):
    """Tasks write files; the commit adds them to the table in one lakehouse commit."""

    def __init__(self, plan: WritePlan) -> None:
        self.plan = plan

    def write(self, iterator: Iterator[pa.RecordBatch]) -> FilesWritten:
        from trinity_dbapi.tables.writer import write_data

        first = next(iterator, None)
        if first is None:
            return FilesWritten()
        batches = pa.RecordBatchReader.from_batches(first.schema, _chain(first, iterator))
        counted = [0]

        def progress(rows: int) -> None:
            counted[0] = rows

        from trinity_dbapi.tables import file_facts

        plan = self.plan
        storage = plan.location.storage()
        files = write_data(
            storage, plan.meta, plan.schema, list(plan.partition_by), batches, progress=progress
        )
        facts = file_facts.for_added(storage, files)
        bounds = {
            label: dict(value)
            for label, value in file_facts.bounds_for_added(storage, files).items()
        }
        return FilesWritten(files=files, rows=counted[0], facts=facts, bounds=bounds)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        from trinity_dbapi.tables import datasets, managed

        plan = self.plan
        added: dict[str, str] = {}
        facts: dict[str, tuple[int, int, int]] = {}
        bounds: dict[str, dict[str, tuple[Any, Any]]] = {}
        for message in messages:
            if isinstance(message, FilesWritten):
                added.update(message.files)
                facts.update(message.facts)
                bounds.update(message.bounds)
        lakehouse = plan.location.lakehouse()
        txn = lakehouse.begin()
        if plan.create:
            if not txn.namespace_exists(plan.namespace):
                txn.create_namespace(plan.namespace)
            txn.create_table(plan.namespace, plan.definition)
        removed: list[str] = []
        if plan.overwrite and not plan.create:
            current = txn.load_table(plan.namespace, plan.table)
            removed = list(managed.metadata(lakehouse.storage, current).partitions)
        datasets.change_files(
            txn,
            lakehouse.storage,
            plan.namespace,
            plan.table,
            added=added,
            removed=removed,
            columns=plan.definition.columns,
            facts=facts,
            bounds=bounds,
        )
        txn.commit()

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        storage = self.plan.location.storage()
        for message in messages:
            if isinstance(message, FilesWritten):
                for path in message.files.values():
                    storage.delete(path)


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest
