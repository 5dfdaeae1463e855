"""Datasets written by Kartothek or plateau: their metadata, schema and rows.

A Kartothek store holds ``<uuid>.by-dataset-metadata.<json|msgpack.zstd>`` at
its top and the dataset's files under ``<uuid>/``, the same layout a
lakehouse root has (docs/datasets.md, "Reading Kartothek's datasets"). Given
a :class:`~trinity_dbapi.storage.Storage` rooted at the store, this module
finds the metadata file the way Kartothek does (JSON first), reads the
table's schema from ``_common_metadata`` and reads rows with the same reader
as our own datasets (:func:`trinity_dbapi.tables.reader.read_table`).

This is what ``CALL system.import_kartothek`` builds on: :func:`open_dataset`
gives the partitions and indices to copy or reference, :func:`dataset_schema`
the typed columns, :func:`read_rows` the rows to compare.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from trinity_dbapi.errors import CorruptFileError, ProgrammingError, StorageFileNotFoundError
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.tables import layout
from trinity_dbapi.tables.metadata import DatasetMetadata, decode_metadata
from trinity_dbapi.tables.reader import read_table

__all__ = ["dataset_schema", "metadata_file", "open_dataset", "partition_columns", "read_rows"]

#: Columns pandas adds for a non-default index; not table columns.
_INDEX_COLUMN_PREFIX = "__index_level_"


def metadata_file(storage: Storage, dataset_uuid: str) -> str:
    """The path of the dataset's metadata file, in the order Kartothek tries them.

    Raises:
        ProgrammingError: ``dataset_uuid`` is not a valid dataset UUID.
        StorageFileNotFoundError: neither ``<uuid>.by-dataset-metadata.json``
            nor ``.msgpack.zstd`` exists (the message names both).
    """
    if not layout.valid_dataset_uuid(dataset_uuid):
        raise ProgrammingError(
            f"dataset UUID {dataset_uuid!r} is not valid: a dataset UUID is non-empty and "
            "uses only A-Z, a-z, 0-9, '+', '-' and '_'"
        )
    tried = [
        f"{dataset_uuid}{layout.METADATA_SUFFIX}{suffix}"
        for suffix in layout.METADATA_FORMATS.values()
    ]
    for path in tried:
        if storage.exists(path):
            return path
    raise StorageFileNotFoundError(
        f"Kartothek dataset {dataset_uuid!r} does not exist in this store: tried "
        f"{tried[0]!r} and {tried[1]!r}; check the store location and the dataset UUID",
        path=tried[0],
    )


def open_dataset(storage: Storage, dataset_uuid: str) -> DatasetMetadata:
    """The current metadata of the Kartothek dataset ``dataset_uuid`` (strictly validated).

    Raises:
        StorageFileNotFoundError: there is no such dataset.
        CorruptFileError: the metadata file breaks a rule (named in the message).
        UnsupportedDatasetVersionError: ``dataset_metadata_version`` is not 4.
    """
    path = metadata_file(storage, dataset_uuid)
    return decode_metadata(path, storage.read(path))


def partition_columns(meta: DatasetMetadata) -> list[str]:
    """The partition columns, outermost first (``[]`` when the file records none)."""
    return meta.partition_columns() or []


def dataset_schema(storage: Storage, meta: DatasetMetadata) -> pa.Schema:
    """The table's columns from ``<uuid>/table/_common_metadata``.

    The pandas schema metadata and pandas index columns (``__index_level_0__``)
    are dropped: they describe a DataFrame, not the table. A partition column
    of Arrow type null (an all-None pandas object column) becomes a string column.

    Raises:
        CorruptFileError: the file is missing, not Parquet, or lacks a partition column.
    """
    path = layout.common_metadata_path(meta.dataset_uuid)
    data = layout.read_referenced(storage, path, f"dataset {meta.dataset_uuid}")
    try:
        schema = pq.read_schema(pa.BufferReader(data))
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise CorruptFileError(path, f"not a Parquet schema file ({exc})") from exc
    keys = set(partition_columns(meta))
    fields = [
        # pandas writes an all-None object column as type null; Kartothek reads
        # such a partition column's values as text, and so do we.
        f.with_type(pa.string()) if f.name in keys and pa.types.is_null(f.type) else f
        for f in schema
        if not f.name.startswith(_INDEX_COLUMN_PREFIX)
    ]
    result = pa.schema(fields)
    missing = [name for name in partition_columns(meta) if result.get_field_index(name) < 0]
    if missing:
        raise CorruptFileError(
            path, f"the schema lacks the partition columns {missing} that the metadata names"
        )
    return result


def read_rows(
    storage: Storage, meta: DatasetMetadata, columns: Sequence[str] | None = None
) -> pa.Table:
    """Every row of the dataset, columns in ``_common_metadata`` order (or ``columns``).

    Raises:
        CorruptFileError: a file is missing or a partition value is not of its column's type.
        ProgrammingError: an unknown column.
    """
    schema = dataset_schema(storage, meta)
    return read_table(storage, meta, schema, partition_columns(meta), columns=columns)
