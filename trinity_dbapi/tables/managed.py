"""Managed tables: a table definition and the dataset that holds its rows.

A managed table's definition names its dataset in ``format_properties``:

* ``dataset_uuid``: the Kartothek dataset under the lakehouse root;
* ``metadata_location``: the immutable dataset metadata file of this
  version of the table (a new one per commit that changes the data), so a
  lakehouse version pins the table's exact files;
* ``partition_columns``: the partition columns (read and written by
  :attr:`TableDefinition.partition_columns
  <trinity_dbapi.format.definitions.TableDefinition.partition_columns>`,
  the one representation of partitioning);
* ``index.<name>``: the column of the secondary index ``<name>``;
* ``mixed_file_schemas``: ``true`` once a column was added or dropped while
  the table held rows (its files then differ in their columns);
* ``external_location``: only on a table imported with ``mode => 'reference'``
  (``CALL system.import_kartothek``): the root URI of the Kartothek store
  its data and index files stay in. Its metadata file (a frozen copy of the
  store's) is under the lakehouse root like any other; its files are read
  from the store (:func:`data_storage`), and no statement writes them
  (:func:`require_own_files`).
* ``shared_datasets``: only on a clone (``CREATE TABLE ... CLONE``): the
  comma-joined UUIDs of the datasets whose data and index files its metadata
  lists where they are (the dataset it was cloned from, and those that one
  shared). Garbage collection counts those datasets as the lakehouse's
  through the clone too (:mod:`~trinity_dbapi.tables.file_rules`), so their
  files the clone no longer reaches are collected even once the source is
  dropped; every file the clone reaches is kept, whatever dataset it is under.
* ``dataset_root``: only on a table whose definition another lakehouse
  holds (the source of a minimal or partial snapshot export): the root URI of
  that lakehouse, where its metadata, data and index files are. Set when the
  definition is read (:func:`read_from`), never written by a statement of
  this lakehouse, which reads such a table's files there and writes none.

This module is the vocabulary every other module of tables/ and the layers
above use: those properties, what they say (:func:`has_dataset`,
:func:`is_reference`, :func:`data_storage`, :func:`schema`, ...), and the
dataset metadata a definition points at, read once per process
(:func:`metadata`) and written as a new file (:func:`with_metadata`). What
changes a dataset (creating it, adding and removing files as a merge,
repartitioning) is :mod:`~trinity_dbapi.tables.datasets`; what garbage
collection asks of a table, :mod:`~trinity_dbapi.tables.file_rules`; the
hooks the lakehouse layer calls are registered by
:mod:`~trinity_dbapi.tables.registration`.

Imports from tables/: layout, metadata, metadata_io, transforms.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from trinity_dbapi.errors import NotSupportedError
from trinity_dbapi.format.definitions import PARTITION_TRANSFORMS, TableDefinition
from trinity_dbapi.format.type_mapping import arrow_schema
from trinity_dbapi.storage import open_beside
from trinity_dbapi.tables.layout import metadata_path, read_referenced, valid_dataset_uuid
from trinity_dbapi.tables.metadata_io import decode_metadata, encode_metadata, write_metadata
from trinity_dbapi.tables.transforms import loads

if TYPE_CHECKING:
    import pyarrow as pa

    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tables.metadata import DatasetMetadata
    from trinity_dbapi.tables.transforms import Transform

#: ``table_format`` of managed tables: a Kartothek dataset of Parquet files.
TABLE_FORMAT = "kartothek"
DATASET_UUID = "dataset_uuid"
METADATA_LOCATION = "metadata_location"
INDEX_PREFIX = "index."
#: Set once a column was added or dropped while the table held rows: its
#: data files then differ in their columns.
MIXED_FILE_SCHEMAS = "mixed_file_schemas"
#: The root URI of the store a referenced (not copied) dataset's files are in.
EXTERNAL_LOCATION = "external_location"
#: On a clone: the comma-joined UUIDs of the other datasets its files are under.
SHARED_DATASETS = "shared_datasets"
#: The root URI of the lakehouse holding the definition and every file of a
#: table read through a minimal or partial export.
DATASET_ROOT = "dataset_root"


def indexes(table: TableDefinition) -> dict[str, str]:
    """Index name -> indexed column."""
    return {
        key[len(INDEX_PREFIX) :]: column
        for key, column in table.format_properties.items()
        if key.startswith(INDEX_PREFIX)
    }


def has_dataset(table: TableDefinition) -> bool:
    """Whether the table keeps its rows in a dataset (tables made before data did not)."""
    return METADATA_LOCATION in table.format_properties


def is_reference(table: TableDefinition) -> bool:
    """Whether the table's files stay in another store (imported with ``mode => 'reference'``)."""
    return EXTERNAL_LOCATION in table.format_properties


def files_elsewhere(table: TableDefinition) -> bool:
    """Whether the table's files are not this lakehouse's (a reference, or another lakehouse's)."""
    return EXTERNAL_LOCATION in table.format_properties or DATASET_ROOT in table.format_properties


def shared_datasets(table: TableDefinition) -> frozenset[str]:
    """The other datasets a clone's files are under (none for any other table)."""
    text = table.format_properties.get(SHARED_DATASETS, "")
    return frozenset(uuid for uuid in text.split(",") if valid_dataset_uuid(uuid))


def read_from(table: TableDefinition, root_uri: str) -> TableDefinition:
    """A definition held by the lakehouse at ``root_uri``, reaching its files there.

    A referenced dataset's data files stay in their store; its frozen
    metadata file, like every managed table's files, is in that lakehouse.
    """
    if not has_dataset(table) or DATASET_ROOT in table.format_properties:
        return table
    return table.replace(format_properties={**table.format_properties, DATASET_ROOT: root_uri})


_EXTERNAL: dict[tuple[str, str], Storage] = {}


def data_storage(storage: Storage, table: TableDefinition, *, cached: bool = True) -> Storage:
    """The storage the table's data and index files are read from.

    The lakehouse storage, except for a referenced dataset: then the store
    named by ``external_location``, opened once per process. A store of the
    lakehouse's own kind (another S3 bucket) is reached through the
    lakehouse's file system object, so with its credentials; any other with
    the environment's. ``cached=False`` opens a new object every call.
    """
    uri = table.format_properties.get(EXTERNAL_LOCATION)
    if uri is None:
        return metadata_storage(storage, table, cached=cached)
    return _beside(storage, uri, cached)


def metadata_storage(storage: Storage, table: TableDefinition, *, cached: bool = True) -> Storage:
    """The storage the table's metadata file is read from.

    The lakehouse storage, except for a table another lakehouse holds (read
    through a minimal or partial export): that lakehouse's.
    """
    uri = table.format_properties.get(DATASET_ROOT)
    return storage if uri is None else _beside(storage, uri, cached)


def _beside(storage: Storage, uri: str, cached: bool) -> Storage:
    if not cached:  # a fresh object: its cache holds nothing read before
        return open_beside(storage, uri)
    # Keyed by who reads: the other lakehouse is opened with these credentials.
    key = (storage.cache_identity, uri)
    found = _EXTERNAL.get(key)
    if found is None:
        found = open_beside(storage, uri)
        _EXTERNAL[key] = found
    return found


def forget_stores() -> None:
    """Forget the other stores this process opened: the next read opens each again."""
    _EXTERNAL.clear()


def require_own_files(table: TableDefinition, where: str, what: str) -> None:
    """Refuse ``what`` (a change of rows or indices) on a referenced dataset.

    Raises:
        NotSupportedError: the table was imported with ``mode => 'reference'``.
    """
    home = table.format_properties.get(DATASET_ROOT)
    if home is not None:
        raise NotSupportedError(
            f"{what} on table {where} is not supported: the table is read through a minimal "
            f"or partial snapshot export, and its files stay in the lakehouse at {home!r} it "
            "was exported from, which this lakehouse never writes to; make a table of its "
            f"own with CREATE TABLE ... AS SELECT * FROM {where}, or export the source again "
            "with mode => 'full'"
        )
    if is_reference(table):
        raise NotSupportedError(
            f"{what} on table {where} is not supported: its files stay in the Kartothek store "
            "it was imported from with mode => 'reference', which the lakehouse never "
            f"writes to; make a table of its own with CREATE TABLE ... AS SELECT * FROM {where}, "
            "or import the dataset again with mode => 'copy'"
        )


def schema(table: TableDefinition) -> pa.Schema:
    """The table's Arrow schema (every column, partition columns included)."""
    return arrow_schema(table)


def partition_transforms(table: TableDefinition) -> dict[str, Transform]:
    """The table's transform partitions by directory name (``day(ts)`` is ``ts_day``).

    Raises:
        CorruptFileError: the ``partition_transforms`` property is not a JSON
            object of transforms.
    """
    return loads(
        table.format_properties.get(PARTITION_TRANSFORMS), f"<definition of table {table.name}>"
    )


#: Decoded metadata files by (who reads them, path): immutable, so kept for the
#: process; a file this process wrote is kept as written, not read back.
_decoded: dict[tuple[str, str], DatasetMetadata] = {}


def metadata(storage: Storage, table: TableDefinition) -> DatasetMetadata:
    """The dataset metadata of this version of ``table`` (cached: the files are immutable)."""
    location = table.format_properties[METADATA_LOCATION]
    storage = metadata_storage(storage, table)
    key = (storage.cache_identity, location)
    meta = _decoded.get(key)
    if meta is None:
        data = read_referenced(storage, location, f"the definition of table {table.name!r}")
        meta = _keep(key, decode_metadata(location, data))
    return meta


def forget_metadata() -> None:
    """Forget the decoded metadata files this process keeps: :func:`metadata` reads each again.

    For a reader that must see the files as a new process would (a file
    damaged on purpose, a cold start measured).
    """
    _decoded.clear()


def _keep(key: tuple[str, str], meta: DatasetMetadata) -> DatasetMetadata:
    if len(_decoded) > 4096:
        _decoded.clear()
    _decoded[key] = meta
    return meta


def with_metadata(
    storage: Storage, table: TableDefinition, meta: DatasetMetadata, *, background: bool = True
) -> TableDefinition:
    """``table`` pointing at a new metadata file holding ``meta``.

    The next :func:`metadata` of this process finds the file as written,
    without reading it back. ``background``: the file's create is left for
    a commit through this same storage to settle
    (:func:`~trinity_dbapi.tables.metadata_io.write_metadata`).
    """
    location = write_metadata(storage, meta, background=background)
    _keep((storage.cache_identity, location), as_written(meta))
    return table.replace(format_properties={**table.format_properties, METADATA_LOCATION: location})


def staged_metadata(
    storage: Storage, table: TableDefinition, meta: DatasetMetadata
) -> tuple[TableDefinition, str, bytes]:
    """``table`` pointing at a new metadata file holding ``meta``, not written yet.

    Returns the definition, the file's path and its bytes, for a transaction
    to stage (write at commit, or never if it does not commit), as
    :func:`with_metadata` names and encodes it; the next :func:`metadata`
    of this process finds the state without reading the file.
    """
    used, data = encode_metadata(meta)
    location = metadata_path(meta.dataset_uuid, meta.sequence + 1, used)
    _keep((storage.cache_identity, location), as_written(meta))
    properties = {**table.format_properties, METADATA_LOCATION: location}
    return table.replace(format_properties=properties), location, data


def as_written(meta: DatasetMetadata) -> DatasetMetadata:
    """What reading back the file ``write_metadata`` made of ``meta`` gives: the next sequence."""
    return dataclasses.replace(meta, sequence=meta.sequence + 1)
