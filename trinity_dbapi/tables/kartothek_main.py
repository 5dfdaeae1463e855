"""Kartothek's main metadata file of a managed table: derived, for Kartothek itself.

Kartothek (and plateau) find a dataset only by its main metadata file at the
top of the storage location its files are relative to (seed 004):
``<dataset uuid>.by-dataset-metadata.json``, trying ``.json`` before
``.msgpack.zstd``. Our dataset state lives in versioned, immutable files
under ``<uuid>/metadata/`` that the lakehouse tree points at, so after each
commit the newest state is also written to that one overwritable file
(:func:`publish`), always as JSON: Kartothek tries it first, so a JSON file
always wins over any ``.msgpack.zstd`` file of the same dataset.

The file is derived data (see :mod:`trinity_dbapi.lakehouse.derived`):
nothing of ours reads it, a later commit rewrites it, garbage collection keeps
it for the tables of the newest version. Unlike our versioned files it holds
``partition_keys`` (Kartothek's attribute naming the partition columns), so
Kartothek sees an empty partitioned table as partitioned.

Imports from tables/: layout, managed, metadata_io, writer.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pyarrow as pa

from trinity_dbapi.tables import layout
from trinity_dbapi.tables.managed import (
    DATASET_UUID,
    METADATA_LOCATION,
    files_elsewhere,
    has_dataset,
    partition_transforms,
    schema,
)
from trinity_dbapi.tables.metadata_io import read_metadata
from trinity_dbapi.tables.writer import common_metadata_file

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.storage import Storage

__all__ = [
    "common_schema",
    "main_metadata_body",
    "main_metadata_path",
    "publish",
    "published_files",
]


def main_metadata_path(dataset_uuid: str) -> str:
    """``<uuid>.by-dataset-metadata.json``: where Kartothek looks first for the dataset."""
    return f"{dataset_uuid}{layout.METADATA_SUFFIX}{layout.METADATA_FORMATS['json']}"


def main_metadata_body(storage: Storage, table: TableDefinition) -> dict[str, object]:
    """The attributes of this version of ``table``'s dataset, with ``partition_keys``."""
    # Read afresh rather than through managed.metadata's process-wide cache:
    # a reader of this process must still find a damaged file damaged.
    location = table.format_properties[METADATA_LOCATION]
    body: dict[str, object] = read_metadata(storage, location).to_dict()
    body["partition_keys"] = list(table.partition_columns)
    return body


def common_schema(table: TableDefinition) -> pa.Schema:
    """The schema of ``_common_metadata``: the table's columns, then one per transform partition.

    Kartothek types every partition key from this schema (a key it lacks is
    a ``KeyError``), so a transform's directory (``ts_day``) is a column here
    too, of its value's type (text for year .. hour, int32 for bucket, the
    source's type for truncate): Kartothek and plateau return it as an
    extra column.
    """
    result = schema(table)
    for name, transform in partition_transforms(table).items():
        source = result.field(transform.source).type
        result = result.append(pa.field(name, transform.result_type(source)))
    return result


def publish(
    storage: Storage, table: TableDefinition, previous: TableDefinition | None = None
) -> list[str]:
    """(Re)write ``_common_metadata`` and the main metadata file of ``table``'s dataset.

    Returns the paths written (none for a table without a dataset). With
    ``previous``, the table's definition in the version before, whose
    ``_common_metadata`` is in place, that file is written only when the
    schema it holds changed; both writes share one round.

    A plain overwrite: a reader sees the old or the new file whole on every
    store whose single-object writes are atomic (object stores, and local
    files through the storage's write-then-rename).
    """
    if not has_dataset(table) or files_elsewhere(table):
        # A referenced dataset's files are not under this root: Kartothek
        # reads it where it is, from its own main metadata file (and another
        # lakehouse's table from that lakehouse's).
        return []
    dataset_uuid = table.format_properties[DATASET_UUID]
    path = main_metadata_path(dataset_uuid)
    body = main_metadata_body(storage, table)
    files = [(path, json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())]
    # Kartothek takes the table's columns from _common_metadata: it follows
    # ALTER TABLE here (nothing of ours reads it; see writer.write_common_metadata).
    schema_now = common_schema(table)
    if not _same_schema_file(previous, dataset_uuid, schema_now):
        files.insert(0, common_metadata_file(dataset_uuid, schema_now))
    storage.write_many(files)
    return [written for written, _ in files]


def _same_schema_file(
    previous: TableDefinition | None, dataset_uuid: str, schema_now: pa.Schema
) -> bool:
    """Whether the version before wrote the ``_common_metadata`` ``schema_now`` would write."""
    if previous is None or not has_dataset(previous) or files_elsewhere(previous):
        return False
    if previous.format_properties.get(DATASET_UUID) != dataset_uuid:
        return False
    return common_schema(previous).equals(schema_now, check_metadata=True)


def published_files(storage: Storage, table: TableDefinition) -> list[str]:
    """The path :func:`publish` writes for ``table``, without writing it."""
    if not has_dataset(table) or files_elsewhere(table):
        return []
    return [main_metadata_path(table.format_properties[DATASET_UUID])]
