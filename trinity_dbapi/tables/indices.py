"""Secondary (inverted) indices: column value -> partitions holding it.

An index file is a Parquet file (Kartothek's ``ExplicitSecondaryIndex``
layout) with two columns:

* the indexed column, named and typed as in the table (Arrow type and field
  metadata), one row per distinct value, sorted ascending, NULL last (a NULL
  row lists the partitions holding NULLs);
* ``partition`` (``list<string>``): the labels of the partitions that hold the
  value, sorted.

Index files are immutable like every other file: a change writes a new file
(:func:`~trinity_dbapi.tables.layout.index_path`) and returns metadata that
points at it. :func:`update_indices` reads only the old index files and the
rows just written, never the data files. Because of the ``partition`` column,
a table column called ``partition`` cannot be indexed (Kartothek refuses it too).

Imports from tables/: layout, metadata, partitions, reader, writer.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from trinity_dbapi.errors import CorruptFileError, NotSupportedError, ProgrammingError
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.tables import layout
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.partitions import (
    check_partition_by,
    coerce,
    earlier_specs,
    partition_scalars,
)
from trinity_dbapi.tables.reader import FileReader, read_each
from trinity_dbapi.tables.writer import parquet_bytes

#: Rows per row group of an index file: small, so a lookup reads little of it.
INDEX_ROW_GROUP_ROWS = 8192

__all__ = [
    "INDEX_PARTITION_COLUMN",
    "build_index",
    "drop_index",
    "lookup",
    "merged_index_file",
    "read_index",
    "update_indices",
]

#: Name of the label list column of index files (Kartothek's ``_PARTITION_COLUMN_NAME``).
INDEX_PARTITION_COLUMN = "partition"
_LABELS = pa.list_(pa.string())


def _value_field(schema: pa.Schema, column: str) -> pa.Field:
    index = schema.get_field_index(column)
    if index < 0:
        raise ProgrammingError(f"cannot index {column!r}: the table has no such column")
    field = schema.field(index)
    if pa.types.is_nested(field.type):
        raise NotSupportedError(f"cannot index column {column!r}: its type {field.type} is nested")
    if column == INDEX_PARTITION_COLUMN:
        raise NotSupportedError(
            f"cannot index a column named {column!r}: index files use that name for the "
            "partition label list (Kartothek's layout)"
        )
    return field.with_nullable(True)


def _index_table(field: pa.Field, values: pa.ChunkedArray, labels: pa.ChunkedArray) -> pa.Table:
    """The index of (value, label) pairs: distinct values sorted, NULL last, labels sorted."""
    pairs = pa.table({"v": values, "l": labels})
    pairs = pairs.group_by(["v", "l"], use_threads=False).aggregate([])
    pairs = pairs.sort_by([("v", "ascending"), ("l", "ascending")])  # NULL last: the default
    grouped = pairs.group_by(["v"], use_threads=False).aggregate([("l", "list")])
    return pa.Table.from_arrays(
        [grouped.column("v").cast(field.type), grouped.column("l_list").cast(_LABELS)],
        schema=pa.schema([field, pa.field(INDEX_PARTITION_COLUMN, _LABELS)]),
    )


def read_index(storage: Storage, path: str, field: pa.Field | None = None) -> pa.Table:
    """Read an index file as its two-column table.

    Args:
        storage: the lakehouse storage.
        path: the index file.
        field: the indexed column's field; its values are cast to its type.

    Raises:
        CorruptFileError: the file is not a two-column index of the expected layout.
    """
    try:
        table = pq.read_table(pa.BufferReader(layout.read_referenced(storage, path, "its dataset")))
    except (pa.ArrowException, OSError) as exc:
        raise CorruptFileError(path, f"not a readable Parquet file ({exc})") from exc
    names = table.column_names
    if len(names) != 2 or names[1] != INDEX_PARTITION_COLUMN:
        raise CorruptFileError(
            path,
            f"an index file has the columns <column>, {INDEX_PARTITION_COLUMN!r}; found {names}",
        )
    if field is not None and names[0] != field.name:
        raise CorruptFileError(path, f"it indexes {names[0]!r}, not {field.name!r}")
    if table.schema.field(1).type != _LABELS:
        raise CorruptFileError(path, f"column {INDEX_PARTITION_COLUMN!r} must be list<string>")
    if field is not None and table.schema.field(0).type != field.type:
        try:
            values = table.column(0).cast(field.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise CorruptFileError(path, f"values are not {field.type}: {exc}") from exc
        table = table.set_column(0, field, values)
    return table


def _pairs(index: pa.Table) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """An index table exploded into parallel (value, label) arrays."""
    lists = index.column(1).combine_chunks()
    values = index.column(0).take(pc.list_parent_indices(lists))
    return values, pa.chunked_array([lists.flatten()], pa.string())


def _column_pairs(
    field: pa.Field, tables: Iterable[tuple[str, pa.Table]]
) -> tuple[list[pa.Array], list[pa.Array]]:
    values: list[pa.Array] = []
    labels: list[pa.Array] = []
    for label, table in tables:
        if table.schema.get_field_index(field.name) < 0:
            raise ProgrammingError(
                f"the rows of partition {label!r} lack the indexed column {field.name!r}"
            )
        unique = pc.unique(table.column(field.name).cast(field.type))
        values.append(unique)
        labels.append(pa.repeat(pa.scalar(label, pa.string()), len(unique)))
    return values, labels


def _store(
    storage: Storage,
    meta: DatasetMetadata,
    field: pa.Field,
    values: list[pa.Array],
    labels: list[pa.Array],
) -> DatasetMetadata:
    table = _index_table(
        field,
        pa.chunked_array(values, field.type),
        pa.chunked_array(labels, pa.string()),
    )
    path = layout.index_path(meta.dataset_uuid, field.name)
    # Small row groups of sorted values: a lookup reads only the groups whose
    # min/max statistics can hold the value, not the whole index.
    storage.create_unique(path, parquet_bytes(table, row_group_rows=INDEX_ROW_GROUP_ROWS))
    return meta.with_index(field.name, path)


def build_index(
    storage: Storage,
    meta: DatasetMetadata,
    schema: pa.Schema,
    partition_by: Sequence[str],
    column: str,
) -> DatasetMetadata:
    """Index ``column`` over every partition; return ``meta`` pointing at the new file.

    A partition column is indexed from the labels alone; any other column is
    read (that column only) from every data file.

    Raises:
        ProgrammingError: an unknown column.
        NotSupportedError: a nested column, or one named ``partition``.
    """
    check_partition_by(schema, partition_by, meta)
    field = _value_field(schema, column)
    labels = list(meta.partitions)
    if column in partition_by and not earlier_specs(meta):
        tables = [
            pa.table({column: pa.repeat(partition_scalars(label, schema, partition_by)[column], 1)})
            for label in labels
        ]
    else:
        tables = read_each(FileReader(storage, meta, schema, partition_by, [column]), labels)
    values, label_arrays = _column_pairs(field, zip(labels, tables, strict=True))
    return _store(storage, meta, field, values, label_arrays)


def update_indices(
    storage: Storage,
    meta: DatasetMetadata,
    schema: pa.Schema,
    partition_by: Sequence[str],
    added: Mapping[str, pa.Table],
    removed: Iterable[str] = (),
) -> DatasetMetadata:
    """Bring every index of ``meta`` up to date with added and removed partitions.

    Args:
        storage: the lakehouse storage.
        meta: the dataset state whose indices to update.
        schema: the table's full Arrow schema.
        partition_by: the partition columns.
        added: new partition label -> the rows written to it (partition columns included).
        removed: labels of partitions that were removed.

    Returns:
        ``meta`` with a new index file per indexed column (unchanged if nothing
        was added or removed, or nothing is indexed).
    """
    check_partition_by(schema, partition_by, meta)
    gone = pa.array(list(removed), pa.string())
    if not meta.indices or (not added and not len(gone)):
        return meta
    for column, path in dict(meta.indices).items():
        field = _value_field(schema, column)
        values, labels = _pairs(read_index(storage, path, field))
        keep = pc.invert(pc.is_in(labels, value_set=gone))
        new_values, new_labels = _column_pairs(field, added.items())
        meta = _store(
            storage,
            meta,
            field,
            [*values.filter(keep).chunks, *new_values],
            [*labels.filter(keep).chunks, *new_labels],
        )
    return meta


def merged_index_file(
    storage: Storage,
    schema: pa.Schema,
    column: str,
    parts: Sequence[tuple[str, Collection[str]]],
    added: Mapping[str, pa.Table],
) -> bytes:
    """The bytes of one index of ``column`` gathered from several index files and new rows.

    For a three-way merge of a dataset: each side's index covers its own
    files, so the merged index takes, of each index file in ``parts``, the
    entries of the labels listed with it, and indexes the ``added`` rows
    (label -> rows holding ``column``) of files no index covered.

    Args:
        storage: the lakehouse storage the index files are read from.
        schema: the table's full Arrow schema (the values are cast to its type).
        column: the indexed column.
        parts: ``(index file path, labels whose entries it gives)`` pairs.
        added: label -> rows of files to index from their values.

    Raises:
        ProgrammingError: an unknown column, or added rows without it.
        NotSupportedError: a column that cannot be indexed.
    """
    field = _value_field(schema, column)
    values: list[pa.Array] = []
    labels: list[pa.Array] = []
    for path, wanted in parts:
        part_values, part_labels = _pairs(read_index(storage, path, field))
        keep = pc.is_in(part_labels, value_set=pa.array(sorted(wanted), pa.string()))
        values.extend(part_values.filter(keep).chunks)
        labels.extend(part_labels.filter(keep).chunks)
    new_values, new_labels = _column_pairs(field, added.items())
    table = _index_table(
        field,
        pa.chunked_array([*values, *new_values], field.type),
        pa.chunked_array([*labels, *new_labels], pa.string()),
    )
    return parquet_bytes(table, row_group_rows=INDEX_ROW_GROUP_ROWS)


def lookup(
    storage: Storage, meta: DatasetMetadata, column: str, values: Sequence[object]
) -> set[str] | None:
    """Labels of the partitions holding any of ``values`` in ``column`` (one file read).

    Values are cast to the index's type; values that cannot be cast match
    nothing, None matches partitions holding NULLs, and a float zero both
    zeros (-0.0 = 0.0). Returns None if ``column``
    is not indexed.
    """
    path = meta.indices.get(column)
    if path is None:
        return None
    data = layout.read_referenced(storage, path, f"dataset {meta.dataset_uuid}")  # the one read
    index = _matching_groups(path, data, values)
    type_ = index.schema.field(0).type
    scalars = [coerce(value, type_) for value in values]
    wanted = [s for s in scalars if s is not None and s.is_valid]
    if pa.types.is_floating(type_) and any(s.as_py() == 0 for s in wanted):
        # is_in tells -0.0 from 0.0 (by their bits); to SQL's = they are one value.
        wanted += [pa.scalar(0.0, type_), pa.scalar(-0.0, type_)]
    mask = pc.is_in(index.column(0), value_set=pa.array(wanted, type_))
    if any(s is not None and not s.is_valid for s in scalars):
        mask = pc.or_(mask, pc.is_null(index.column(0)))
    found = index.column(1).filter(mask).combine_chunks().flatten().to_pylist()
    return {label for label in found if label in meta.partitions}


def _matching_groups(path: str, data: bytes, values: Sequence[object]) -> pa.Table:
    """The index rows of the row groups whose statistics can hold one of ``values``."""
    try:
        parquet = pq.ParquetFile(pa.BufferReader(data))
        metadata = parquet.metadata
        type_ = parquet.schema_arrow.field(0).type
        scalars = [coerce(value, type_) for value in values]
        keep = [
            group
            for group in range(metadata.num_row_groups)
            if _may_hold(metadata.row_group(group).column(0).statistics, scalars, type_)
        ]
        table = parquet.read_row_groups(keep) if keep else parquet.schema_arrow.empty_table()
    except (pa.ArrowException, OSError) as exc:
        raise CorruptFileError(path, f"not a readable Parquet file ({exc})") from exc
    if table.num_columns != 2 or table.column_names[1] != INDEX_PARTITION_COLUMN:
        raise CorruptFileError(
            path,
            f"an index file has the columns <column>, {INDEX_PARTITION_COLUMN!r}; found "
            f"{table.column_names}",
        )
    return table


def _may_hold(statistics: Any, scalars: list[pa.Scalar | None], type_: pa.DataType) -> bool:
    """Whether a row group with these statistics can hold one of the values."""
    if statistics is None or not statistics.has_min_max:
        return True
    if any(s is None or not s.is_valid for s in scalars):
        return True  # NULL lookups: the NULL count decides, keep it simple
    try:
        low = pa.scalar(statistics.min, type_)
        high = pa.scalar(statistics.max, type_)
        return any(
            pc.less_equal(low, s).as_py() and pc.less_equal(s, high).as_py() for s in scalars
        )
    except (pa.ArrowException, TypeError, ValueError):
        return True


def drop_index(meta: DatasetMetadata, column: str) -> DatasetMetadata:
    """``meta`` without the index of ``column`` (its file becomes garbage).

    Raises:
        ProgrammingError: ``column`` is not indexed.
    """
    if column not in meta.indices:
        raise ProgrammingError(f"dataset {meta.dataset_uuid} has no index on {column!r}")
    return meta.with_index(column, None)
