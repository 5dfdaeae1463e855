"""Datasets written by Kartothek or plateau: their metadata, schema and rows.

A Kartothek store holds ``<uuid>.by-dataset-metadata.<json|msgpack.zstd>`` at
its top and the dataset's files under ``<uuid>/``, the same layout a
lakehouse root has (docs/datasets.md, "Reading Kartothek's datasets"). Given
a :class:`~trinity_dbapi.storage.Storage` rooted at the store, this module
finds the metadata file the way Kartothek does (JSON first), reads the
table's schema from ``_common_metadata`` and reads rows with the same reader
as our own datasets (:func:`trinity_dbapi.tables.reader.read_table`), each
data file checked to hold the dataset's columns (:func:`check_file_columns`).

This is what ``CALL system.import_kartothek`` builds on: :func:`open_dataset`
gives the partitions and indices to copy or reference, :func:`dataset_schema`
the typed columns, :func:`check_file_columns` the rule every data file's
columns follow, :func:`read_rows` the rows to compare.

Imports from tables/: layout, metadata, metadata_io, reader.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import partial

import pyarrow as pa
import pyarrow.parquet as pq

from trinity_dbapi.errors import CorruptFileError, ProgrammingError, StorageFileNotFoundError
from trinity_dbapi.format.type_mapping import ID_KEY
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.tables import layout
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.metadata_io import decode_metadata
from trinity_dbapi.tables.reader import read_table

__all__ = [
    "check_file_columns",
    "dataset_schema",
    "matched_by_id",
    "metadata_file",
    "open_dataset",
    "partition_columns",
    "read_rows",
]

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


def matched_by_id(file_schema: pa.Schema, schema: pa.Schema) -> bool:
    """Whether the reader matches ``file_schema``'s columns to ``schema``'s by column ID.

    True when both carry TrinityLake column IDs, as a lakehouse root read as
    a Kartothek store does. Kartothek and plateau write no IDs: their files
    are matched by name.
    """
    key = ID_KEY.encode()
    return any(key in (f.metadata or {}) for f in file_schema) and any(
        key in (f.metadata or {}) for f in schema
    )


def check_file_columns(
    path: str, file_schema: pa.Schema, schema: pa.Schema, partition_by: Sequence[str]
) -> None:
    """Refuse a data file whose columns are not the dataset's, naming the file and the column.

    Kartothek and plateau write every file of a dataset with the columns of
    its ``_common_metadata`` except the partition columns (they are in the
    directory names), and refuse to add a frame whose columns differ. Read
    by name, a file lacking a column, or holding it under another name (``V``
    for ``v``), would give NULLs for it without a word, so such a file is
    refused. pandas index columns (``__index_level_0__``) may be there, and
    so may partition columns (their values come from the directory names).
    A lakehouse's own file (:func:`matched_by_id`) is exempt: its table adds
    and drops columns without rewriting files, and its columns are matched
    by column ID, a column added after the file was written being NULL in it.

    Args:
        path: the data file, for the message.
        file_schema: its Arrow schema (the Parquet footer's).
        schema: the dataset's columns (:func:`dataset_schema`).
        partition_by: the partition columns.

    Raises:
        CorruptFileError: a column missing, one the schema lacks, or one twice.
    """
    if matched_by_id(file_schema, schema):
        return
    names = [name for name in file_schema.names if not name.startswith(_INDEX_COLUMN_PREFIX)]
    declared = set(schema.names)
    twice = sorted(name for name, count in Counter(names).items() if count > 1)
    present = set(names)
    missing = [name for name in schema.names if name not in partition_by and name not in present]
    extra = list(dict.fromkeys(name for name in names if name not in declared))
    if not (twice or missing or extra):
        return
    problems = []
    if missing:
        problems.append(f"lacks {_columns(missing)}")
    if extra:
        problems.append(f"holds {_columns(extra)}, which the dataset's schema lacks")
    if twice:
        problems.append(f"holds {_columns(twice)} twice")
    raise CorruptFileError(
        path,
        f"the data file {' and '.join(problems)}: every data file of a Kartothek dataset "
        f"holds the columns of its _common_metadata ({_listed(schema.names)}), partition "
        f"columns aside; this one holds ({_listed(file_schema.names)}), and reading it "
        "would give NULLs for a column it lacks",
    )


def _columns(names: Sequence[str]) -> str:
    return f"column {names[0]!r}" if len(names) == 1 else f"columns {_listed(names)}"


def _listed(names: Sequence[str], most: int = 20) -> str:
    shown = ", ".join(repr(name) for name in names[:most])
    return shown + (f", ... ({len(names)} in all)" if len(names) > most else "")


def read_rows(
    storage: Storage, meta: DatasetMetadata, columns: Sequence[str] | None = None
) -> pa.Table:
    """Every row of the dataset, columns in ``_common_metadata`` order (or ``columns``).

    Raises:
        CorruptFileError: a file is missing, holds other columns than the
            dataset's (:func:`check_file_columns`), or a partition value is not
            of its column's type.
        ProgrammingError: an unknown column.
    """
    schema = dataset_schema(storage, meta)
    keys = partition_columns(meta)
    check = partial(check_file_columns, schema=schema, partition_by=keys)
    return read_table(storage, meta, schema, keys, columns=columns, check=check)
