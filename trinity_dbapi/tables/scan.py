"""Scan planning: the one place that decides which files of a table version are read, and how.

Every reader of a managed table asks here: the SQL engine's private DuckDB
(:func:`plan_query_scan`), the DuckDB bridge's views (:func:`plan_view_scan`)
and Spark (:func:`pruned_labels`). A plan names

* the files: every file of the version, or only those that can hold rows
  matching a :data:`Predicate`. That is the one form every reader states its
  filter in, plain values: ``column -> allowed values`` (``column IN (...)``)
  or ``column -> ValueRange`` (``low <= column <= high``), the columns
  AND-ed; :func:`conjoined` ANDs two conditions on one column. The SQL
  engine reads it off a query's WHERE clause, Spark off its pushed filters
  (the DuckDB bridge's views list every file: DuckDB skips files itself);
  :func:`pruned_labels` is the one door that prunes by it: partition values from the file labels
  (:func:`~trinity_dbapi.tables.partitions.prune`), indexed values from the
  index file (:func:`~trinity_dbapi.tables.indices.lookup`), and each file's
  value bounds (:mod:`~trinity_dbapi.tables.value_bounds`). Pruning only
  ever skips files that cannot hold a matching row; the reader still
  evaluates its whole filter;
* the form of the read (:class:`ScanForm`): no files at all, DuckDB's own
  ``read_parquet`` with partition columns decoded from each file's path
  (:mod:`~trinity_dbapi.tables.partition_sql`; :func:`parquet_select` is its
  text matched by Parquet field ID), a lazy Arrow dataset, or the files read
  column by column ID in Python (:func:`~trinity_dbapi.tables.reader.read_table`).

Imports from tables/: managed, metadata, partitions; inside functions: file_facts,
indices, partition_sql, reader, value_bounds, values.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from trinity_dbapi.format.sql_text import quote_identifier, quote_string
from trinity_dbapi.tables import managed
from trinity_dbapi.tables.partitions import ValueRange

if TYPE_CHECKING:
    import pyarrow.dataset as ds

    from trinity_dbapi.format.definitions import Column, TableDefinition
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tables.metadata import DatasetMetadata

__all__ = [
    "Predicate",
    "ScanForm",
    "ScanPlan",
    "conjoined",
    "parquet_select",
    "plan_query_scan",
    "plan_view_scan",
    "pruned_labels",
]

#: Largest column ID a Parquet field ID (int32) holds.
MAX_FIELD_ID = 2**31 - 1

#: What a reader's filter demands of a file's rows, in plain values: each
#: column's allowed values (None: NULL) or range, all columns AND-ed.
Predicate = Mapping[str, Sequence[Any] | ValueRange]


class ScanForm(enum.Enum):
    """How a reader reads the files of a plan."""

    #: No dataset or no file to read: no rows, the table's exact columns.
    EMPTY = "empty"
    #: DuckDB's ``read_parquet`` over the files, partition columns from their paths.
    READ_PARQUET = "read_parquet"
    #: A lazy pyarrow dataset over the files (:meth:`ScanPlan.arrow_dataset`).
    ARROW_DATASET = "arrow_dataset"
    #: The files read in Python, columns matched by column ID (:meth:`ScanPlan.read_table`).
    BY_COLUMN_ID = "by_column_id"


@dataclass(frozen=True)
class ScanPlan:
    """Which files of one table version to read, and how.

    Attributes:
        form: how to read them.
        definition: the table's definition.
        schema: the table's Arrow schema (partition columns included).
        partition_by: the table's partition columns.
        meta: the dataset metadata (None: the table has no dataset).
        labels: the chosen files' labels (None: every file of the dataset).
        files: the chosen files, relative to the lakehouse root.
        local_root: the lakehouse root folder when DuckDB reads the files by
            local path (no trailing ``/``), else None.
        data: the storage the files are in when it is not the lakehouse's
            (a dataset imported with ``mode => 'reference'``); the readers
            then read them through it, never DuckDB by path.
    """

    form: ScanForm
    definition: TableDefinition
    schema: pa.Schema
    partition_by: list[str]
    meta: DatasetMetadata | None = None
    labels: list[str] | None = None
    files: tuple[str, ...] = ()
    local_root: str | None = None
    data: Storage | None = None

    def arrow_dataset(self, storage: Storage) -> ds.FileSystemDataset:
        """The lazy pyarrow dataset over the chosen files (``storage``: the lakehouse's)."""
        from trinity_dbapi.tables.reader import arrow_dataset

        assert self.meta is not None
        return arrow_dataset(
            self.data or storage, self.meta, self.schema, self.partition_by, self.labels
        )

    def row_count(self, storage: Storage) -> int | None:
        """How many rows the chosen files hold, from what is known of them; None if unknown.

        No data file is read: the counts come from the dataset metadata's
        ``trinity.file_facts`` and what this process wrote or read
        (:mod:`~trinity_dbapi.tables.file_facts`). None when any chosen file
        is known to neither (its footer would have to be read).
        """
        from trinity_dbapi.tables import file_facts

        if self.form is ScanForm.EMPTY:
            return 0
        assert self.meta is not None
        chosen = list(self.meta.partitions) if self.labels is None else self.labels
        paths = [self.meta.partitions[label]["table"] for label in chosen]
        known = file_facts.recorded(self.meta)
        unknown = [path for path in paths if path not in known]
        if unknown:
            known.update(file_facts.cached(self.data or storage, unknown))
            if any(path not in known for path in unknown):
                return None
        return sum(known[path][0] for path in paths)

    def read_table(self, storage: Storage) -> pa.Table:
        """The chosen files' rows, columns matched by column ID (``storage``: the lakehouse's)."""
        from trinity_dbapi.tables.reader import read_table

        assert self.meta is not None
        return read_table(
            self.data or storage, self.meta, self.schema, self.partition_by, self.labels
        )


def plan_query_scan(
    storage: Storage, definition: TableDefinition, predicate: Predicate
) -> ScanPlan:
    """The scan of the SQL engine's private DuckDB: the files that can match ``predicate``.

    DuckDB reads local files itself (its fastest path), unless a partition
    column holds raw bytes (no text in the path to decode). Tables whose
    files differ in their columns are read by column ID (a column dropped
    and added again must not bring back its old values); any other store is
    read through a lazy Arrow dataset that DuckDB pushes projections and
    filters into.
    """
    schema = managed.schema(definition)
    partition_by = definition.partition_columns
    if not managed.has_dataset(definition):
        return ScanPlan(ScanForm.EMPTY, definition, schema, partition_by)
    meta = managed.metadata(storage, definition)
    data = managed.data_storage(storage, definition)
    labels = pruned_labels(data, definition, meta, predicate) if predicate else None
    if definition.format_properties.get(managed.MIXED_FILE_SCHEMAS) == "true" or _mixed(meta):
        return ScanPlan(
            ScanForm.BY_COLUMN_ID, definition, schema, partition_by, meta, labels, data=data
        )
    if data is not storage:
        # Another store's files: read through it, so DuckDB's sandbox still
        # admits no file outside the lakehouse root and these are the only
        # files of that store SQL reaches.
        return ScanPlan(
            ScanForm.ARROW_DATASET, definition, schema, partition_by, meta, labels, data=data
        )
    chosen = list(meta.partitions) if labels is None else labels
    files = tuple(meta.partitions[label]["table"] for label in chosen)
    binary_partitions = any(
        column.type.kind in ("binary", "fixed")
        for column in definition.columns
        if column.name in partition_by
    )
    local_root = storage.local_root
    if local_root is not None and chosen and not binary_partitions:
        return ScanPlan(
            ScanForm.READ_PARQUET, definition, schema, partition_by, meta, chosen, files, local_root
        )
    return ScanPlan(ScanForm.ARROW_DATASET, definition, schema, partition_by, meta, labels, files)


def plan_view_scan(storage: Storage, definition: TableDefinition) -> ScanPlan:
    """The scan of a DuckDB bridge view: every file of the version.

    DuckDB's ``read_parquet`` (by local path or a registered file system),
    matching columns by Parquet field ID, unless the table holds what that
    cannot read exactly (see :func:`parquet_scan_reads`): then a lazy Arrow
    dataset. Every partition directory is decoded once here, as the readers
    do, so a corrupt one fails when the view is made.
    """
    schema = managed.schema(definition)
    partition_by = definition.partition_columns
    if not managed.has_dataset(definition):
        return ScanPlan(ScanForm.EMPTY, definition, schema, partition_by)
    meta = managed.metadata(storage, definition)
    data = managed.data_storage(storage, definition)
    if data is not storage or not parquet_scan_reads(definition, partition_by) or _mixed(meta):
        return ScanPlan(ScanForm.ARROW_DATASET, definition, schema, partition_by, meta, data=data)
    labels = list(meta.partitions)
    if not labels:
        return ScanPlan(ScanForm.EMPTY, definition, schema, partition_by, meta, labels)
    _check_labels(schema, partition_by, labels, meta)
    files = tuple(meta.partitions[label]["table"] for label in labels)
    return ScanPlan(
        ScanForm.READ_PARQUET,
        definition,
        schema,
        partition_by,
        meta,
        labels,
        files,
        storage.local_root,
    )


def _mixed(meta: DatasetMetadata) -> bool:
    """Whether files of earlier partitionings remain (their columns differ by file)."""
    from trinity_dbapi.tables.partitions import earlier_specs

    return bool(earlier_specs(meta))


# -- which files ------------------------------------------------------------------------------


def pruned_labels(
    storage: Storage,
    definition: TableDefinition,
    meta: DatasetMetadata,
    predicate: Predicate,
) -> list[str]:
    """Every file (label) that can hold rows matching ``predicate``, in the dataset's order.

    The one place files are pruned: by partition values (of every
    partitioning the dataset's files were written with), by the index of an
    indexed column, and by the value bounds the files record. ``storage``
    holds the files (and the index files).
    """
    from trinity_dbapi.tables.indices import lookup
    from trinity_dbapi.tables.partitions import earlier_specs, prune, recorded_transforms

    labels = list(meta.partitions)
    if not predicate or not labels:
        return labels
    partition_by = definition.partition_columns
    schema = managed.schema(definition)
    predicate = _castable(predicate, schema)
    # Files of earlier partitionings are pruned by their own directories too
    # (as Iceberg prunes each file by the spec it was written with): the
    # dataset records every transform its files use, and a directory name
    # never means two transforms (ALTER ... SET PARTITIONED BY refuses that).
    transforms = {**recorded_transforms(meta), **managed.partition_transforms(definition)}
    sources = {t.source for t in transforms.values()}
    partitioned = {*partition_by, *(name for spec in earlier_specs(meta) for name in spec)}
    if any(column in partitioned or column in sources for column in predicate):
        labels = prune(meta, schema, partition_by, predicate, transforms)
    indexed = set(managed.indexes(definition).values())
    for column, values in predicate.items():
        if isinstance(values, ValueRange):
            continue
        if column in indexed and column not in partition_by:
            found = lookup(storage, meta, column, values)
            if found is not None:
                labels = [label for label in labels if label in found]
    return _within_bounds(meta, schema, predicate, labels)


def conjoined(
    before: Sequence[Any] | ValueRange | None, after: Sequence[Any] | ValueRange
) -> Sequence[Any] | ValueRange:
    """What one column of a :data:`Predicate` demands under ``before`` AND ``after``.

    Two value lists keep the values in both; values win over a range (a file
    holding one of them is read, in the range or not); two ranges narrow each
    other when their bounds are of one comparable kind, else the first is
    kept. ``before`` None: no condition yet. The result may be wider than
    the two conditions, never narrower: pruning then reads a file more,
    never one fewer.
    """
    if before is None:
        return after
    if not isinstance(before, ValueRange):
        return before if isinstance(after, ValueRange) else [v for v in after if v in before]
    if not isinstance(after, ValueRange):
        return after
    low, high, inclusive = before.low, before.high, before.high_inclusive
    try:
        if after.low is not None and (low is None or after.low > low):  # type: ignore[operator]
            low = after.low
        if after.high is not None and (
            high is None
            or after.high < high  # type: ignore[operator]
            or (after.high == high and not after.high_inclusive)
        ):
            high, inclusive = after.high, after.high_inclusive
    except TypeError:
        return before  # bounds of different kinds (text and a number): keep the first
    return ValueRange(low, high, inclusive)


def _within_bounds(
    meta: DatasetMetadata, schema: pa.Schema, predicate: Predicate, labels: list[str]
) -> list[str]:
    """``labels`` less the files whose value bounds rule the predicate out."""
    from trinity_dbapi.tables import file_facts, value_bounds

    points = {c: v for c, v in predicate.items() if not isinstance(v, ValueRange)}
    ids = value_bounds.column_ids(schema)
    if not any(column in ids for column in points):
        return labels
    bounds = file_facts.recorded_bounds(meta)
    if not bounds:
        return labels
    return value_bounds.prune(labels, bounds, ids, points)


def _castable(predicate: Predicate, schema: pa.Schema) -> dict[str, Sequence[Any] | ValueRange]:
    """The predicate without columns compared to text we cannot read as their type.

    DuckDB casts text to a column's type in ways pyarrow does not (formats,
    zone names); text we cannot read must not prune files DuckDB would match.
    A range's bounds are the values checked.
    """
    from trinity_dbapi.tables.values import coerce

    kept: dict[str, Sequence[Any] | ValueRange] = {}
    for column, values in predicate.items():
        index = schema.get_field_index(column)
        if index < 0:
            continue
        type_ = schema.field(index).type
        textual = pa.types.is_string(type_) or pa.types.is_large_string(type_)
        checked = (
            [v for v in (values.low, values.high) if v is not None]
            if isinstance(values, ValueRange)
            else values
        )
        if not textual and any(isinstance(v, str) and coerce(v, type_) is None for v in checked):
            continue
        kept[column] = values
    return kept


def _check_labels(
    schema: pa.Schema, partition_by: Sequence[str], labels: Sequence[str], meta: DatasetMetadata
) -> None:
    """Decode each partition directory once, as the readers do, so a corrupt one fails here."""
    if not partition_by:
        return
    from trinity_dbapi.tables.partitions import check_partition_by, partition_scalars

    check_partition_by(schema, partition_by, meta)
    seen: set[str] = set()
    for label in labels:
        directory = label.rpartition("/")[0]
        if directory not in seen:
            seen.add(directory)
            partition_scalars(label, schema, partition_by)


# -- how: DuckDB's read_parquet ----------------------------------------------------------------


def parquet_scan_reads(definition: TableDefinition, partition_by: Sequence[str]) -> bool:
    """Whether ``read_parquet`` matching by field ID reads this table exactly."""
    for column in definition.columns:
        if column.name in partition_by:
            if column.type.kind in ("binary", "fixed"):
                return False  # raw bytes in the directory name: no text to URL-decode
        elif not 0 < column.id <= MAX_FIELD_ID:
            return False  # no Parquet field ID in the files to match it by
    return True


def read_parquet(files: Sequence[str], options: Sequence[str]) -> str:
    """``read_parquet([files], options...)``: the files as DuckDB reads them."""
    file_list = ", ".join(quote_string(f) for f in files)
    return f"read_parquet({', '.join([f'[{file_list}]', *options])})"


def parquet_select(
    columns: Sequence[Column], partition_by: Sequence[str], files: Sequence[str]
) -> str:
    """A SELECT over ``files`` by Parquet field ID, partition columns from the paths.

    DuckDB's reader matches payload columns by their field ID, as
    :func:`~trinity_dbapi.tables.reader.read_table` does (a column no file
    holds reads as NULL), and casts them to the declared types.
    """
    from trinity_dbapi.format.type_mapping import duckdb_type
    from trinity_dbapi.tables import partition_sql

    file_column = partition_sql.file_column(c.name for c in columns)
    entries = ", ".join(
        f"{c.id}: {{name: {quote_string(c.name)}, type: {quote_string(duckdb_type(c.type))}, "
        "default_value: NULL}"
        for c in columns
        if c.name not in partition_by
    )
    items = []
    for column in columns:
        quoted = quote_identifier(column.name)
        if column.name in partition_by:
            value = partition_sql.partition_value(
                file_column, partition_by, column.name, duckdb_type(column.type)
            )
            items.append(f"{value} AS {quoted}")
        else:
            items.append(quoted)
    options = [
        f"schema = MAP {{{entries}}}",
        partition_sql.SCAN_OPTIONS,
        f"filename = {quote_string(file_column)}",
    ]
    return f"SELECT {', '.join(items)} FROM {read_parquet(files, options)}"
