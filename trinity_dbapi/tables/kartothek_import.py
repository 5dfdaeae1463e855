"""Importing a Kartothek (or plateau) dataset as a managed table: the data half.

``CALL system.import_kartothek(...)`` (docs/datasets.md, "Importing a
Kartothek dataset") makes a table from a dataset another program wrote. This
module does what needs no lakehouse transaction:

* :func:`inspect_dataset` reads the dataset's current metadata (JSON first,
  as Kartothek does), its schema from ``_common_metadata`` and turns that into
  TrinityLake columns, the partition columns (Kartothek's ``partition_keys``)
  and the indexed columns;
* :func:`copy_rows` rewrites every data file of the dataset into the new
  table's dataset under the lakehouse root, one source file at a time, so the
  copies carry column IDs and the table's exact types (a byte copy would
  not: Kartothek's files have neither), with the partition directories
  written in our text;
* :func:`check_footers` checks, for ``mode => 'reference'``, that every data
  file holds the dataset's columns, reading each file's Parquet footer only
  (:func:`copy_rows` checks the same of each file it reads);
* :func:`build_indices` builds the table's secondary index on each column
  the source indexed, from the copied files.

The SQL layer creates the table definition and commits once.

Imports from tables/: kartothek, metadata; inside functions: indices, reader, writer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import pyarrow as pa

from trinity_dbapi.errors import CorruptFileError, NotSupportedError
from trinity_dbapi.format.definitions import Column
from trinity_dbapi.format.type_mapping import ID_KEY, columns_from_schema
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.tables import kartothek
from trinity_dbapi.tables.metadata import DatasetMetadata

__all__ = [
    "COPY_THREADS",
    "FOOTER_THREADS",
    "KartothekSource",
    "build_indices",
    "check_footers",
    "copy_rows",
    "inspect_dataset",
]

#: Source files copied at the same time by :func:`copy_rows`.
COPY_THREADS = min(4, os.cpu_count() or 1) + 1
#: The same when either store has round trips: each copy then mostly waits
#: on a read and a write, and more of them overlap their round trips.
REMOTE_COPY_THREADS = 16
#: Footers read at the same time by :func:`check_footers` (waiting on the
#: store, not the CPU: a footer is a ranged read or two).
FOOTER_THREADS = 8


@dataclass(frozen=True)
class KartothekSource:
    """A Kartothek dataset ready to import.

    Attributes:
        storage: the store it lives in.
        meta: its current metadata (the main metadata file).
        schema: its columns as the files hold them (``_common_metadata``,
            pandas index columns dropped, untyped all-NULL columns as text).
        columns: the TrinityLake columns of the new table, in the same order.
        partition_by: the partition columns, outermost first.
        index_columns: the columns the dataset has a secondary index file on.
    """

    storage: Storage
    meta: DatasetMetadata
    schema: pa.Schema
    columns: tuple[Column, ...]
    partition_by: list[str]
    index_columns: list[str]

    @property
    def files(self) -> int:
        """How many data files the dataset has."""
        return len(self.meta.partitions)


def inspect_dataset(storage: Storage, dataset_uuid: str) -> KartothekSource:
    """The dataset ``dataset_uuid`` of the Kartothek store ``storage``, as a table to make.

    Raises:
        StorageFileNotFoundError: there is no such dataset (the message names
            both metadata files tried).
        CorruptFileError: a metadata or schema file breaks a rule (named).
        NotSupportedError: a column whose Arrow type has no TrinityLake type.
    """
    meta = kartothek.open_dataset(storage, dataset_uuid)
    schema = kartothek.dataset_schema(storage, meta)
    # pandas writes a column that was all None in the first frame as type
    # null; Kartothek reads it as object (text), and so does the import.
    schema = pa.schema(
        [f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in schema]
    )
    try:
        columns = columns_from_schema(schema)
    except NotSupportedError as exc:
        raise NotSupportedError(f"Kartothek dataset {dataset_uuid!r}: {exc}") from None
    return KartothekSource(
        storage=storage,
        meta=meta,
        schema=schema,
        columns=columns,
        partition_by=kartothek.partition_columns(meta),
        index_columns=list(meta.indices),
    )


def copy_rows(
    source: KartothekSource,
    storage: Storage,
    meta: DatasetMetadata,
    schema: pa.Schema,
    *,
    each_file: Callable[[int], None] | None = None,
) -> tuple[dict[str, str], int]:
    """Write every row of ``source`` as new data files of the dataset ``meta``.

    Args:
        source: the dataset to copy.
        storage: the lakehouse storage.
        meta: the new table's (empty) dataset.
        schema: the new table's Arrow schema (``managed.schema``).
        each_file: called with the number of source files copied so far.

    Returns:
        The new files (label -> path) and the number of rows written. The
        metadata is not changed: pass the files to ``with_partitions``.

    Raises:
        CorruptFileError: a source file is missing, unreadable as its column
            types, or holds other columns than the dataset's
            (:func:`~trinity_dbapi.tables.kartothek.check_file_columns`).
        DataError: a value the table's type cannot hold exactly (named).
    """
    from trinity_dbapi.tables.reader import read_table
    from trinity_dbapi.tables.writer import write_data

    check = partial(
        kartothek.check_file_columns, schema=source.schema, partition_by=source.partition_by
    )

    def copy(label: str) -> tuple[dict[str, str], int]:
        table = read_table(
            source.storage,
            source.meta,
            source.schema,
            source.partition_by,
            labels=[label],
            check=check,
        )
        if not table.num_rows:
            return {}, 0
        return write_data(storage, meta, schema, source.partition_by, table), table.num_rows

    added: dict[str, str] = {}
    rows = 0
    # One source file per task: memory stays that of a few files, every copy
    # is one file in the same partition as its source, and Parquet decoding
    # and encoding (which release the GIL) use every core. Results are taken
    # in the dataset's order, so the new files keep it.
    remote = source.storage.local_root is None or storage.local_root is None
    pool = ThreadPoolExecutor(max_workers=REMOTE_COPY_THREADS if remote else COPY_THREADS)
    try:
        for done, (files, count) in enumerate(pool.map(copy, source.meta.partitions), start=1):
            added.update(files)
            rows += count
            if each_file is not None:
                each_file(done)  # may raise: an interrupted statement stops here
    finally:
        # On an error or an interrupt, files not yet started are not copied.
        pool.shutdown(wait=True, cancel_futures=True)
    return added, rows


def check_footers(
    source: KartothekSource, *, each_file: Callable[[int], None] | None = None
) -> bool:
    """Check that every data file of ``source`` holds the dataset's columns, by its footer.

    ``mode => 'reference'`` reads no rows at import, yet must refuse what
    :func:`copy_rows` refuses: a file whose columns are not the dataset's
    (:func:`~trinity_dbapi.tables.kartothek.check_file_columns`). Only the
    Parquet footer of each file is read (ranged reads through the store's
    Arrow file system), :data:`FOOTER_THREADS` files at a time.

    Args:
        source: the dataset to check.
        each_file: called with the number of files checked so far (may raise
            to stop: an interrupted statement).

    Returns:
        Whether some file is a lakehouse's whose columns differ from the
        schema's (a column added or dropped since it was written): its table
        must then read the files by column ID, not name.

    Raises:
        CorruptFileError: a file is unreadable or holds other columns (named).
    """
    from trinity_dbapi.tables.reader import arrow_filesystem

    reached = arrow_filesystem(source.storage)

    def footer(path: str) -> pa.Schema:
        import pyarrow.parquet as pq

        try:
            if reached is None:  # a store without ranged reads: the whole file
                return pq.read_schema(pa.BufferReader(source.storage.read(path)))
            filesystem, base = reached
            with filesystem.open_input_file(base + path) as handle:
                return pq.read_schema(handle)
        except (OSError, pa.ArrowException) as exc:
            raise CorruptFileError(path, f"cannot read its Parquet footer ({exc})") from exc

    def check(path: str) -> bool:
        schema = footer(path)
        kartothek.check_file_columns(path, schema, source.schema, source.partition_by)
        return _differs_by_id(schema, source.schema, source.partition_by)

    paths = list(source.meta.files().values())
    mixed = False
    pool = ThreadPoolExecutor(max_workers=max(1, min(FOOTER_THREADS, len(paths))))
    try:
        for done, differs in enumerate(pool.map(check, paths), start=1):
            mixed = mixed or differs
            if each_file is not None:
                each_file(done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return mixed


def _differs_by_id(file_schema: pa.Schema, schema: pa.Schema, partition_by: list[str]) -> bool:
    """Whether a lakehouse's file holds other columns (by name and ID) than ``schema``."""
    if not kartothek.matched_by_id(file_schema, schema):
        return False  # checked by name: the same columns
    key = ID_KEY.encode()

    def columns(of: pa.Schema) -> set[tuple[str, bytes | None]]:
        return {(f.name, (f.metadata or {}).get(key)) for f in of if f.name not in partition_by}

    return columns(file_schema) != columns(schema)


def build_indices(
    source: KartothekSource, storage: Storage, meta: DatasetMetadata, schema: pa.Schema
) -> DatasetMetadata:
    """``meta`` with a secondary index file on each column ``source`` indexed."""
    from trinity_dbapi.tables.indices import build_index

    for column in source.index_columns:
        meta = build_index(storage, meta, schema, source.partition_by, column)
    return meta
