"""Table data: Kartothek-layout Parquet datasets under the lakehouse root (docs/datasets.md).

Each managed table stores its rows in one dataset (seed 004). The package is
split along the layout:

* ``layout.py`` -- file names: :data:`TABLE`, metadata, data, index and schema paths.
* ``metadata.py`` -- :class:`DatasetMetadata`, the model of a dataset's state;
  ``metadata_io.py`` -- its file: the JSON / msgpack.zstd encodings, strict
  reading (:func:`read_metadata`), :func:`write_metadata`, :func:`dataset_files`.
* ``file_facts.py`` -- each data file's rows, bytes and value bounds, an
  attribute of the dataset metadata.
* ``values.py`` -- the canonical text of a partition value, per type.
* ``partitions.py`` -- partition values in directory names, :func:`partition_values`,
  :func:`prune`.
* ``conform.py`` -- casting and checking incoming data against the schema.
* ``writer.py`` -- :func:`new_dataset`, :func:`write_data`, :func:`write_common_metadata`.
* ``reader.py`` -- :func:`read_table` (eager reference reader), :func:`arrow_dataset` (lazy).
* ``promotion.py`` -- the column type changes every reader follows without a
  rewrite of the data files (``ALTER COLUMN ... TYPE``).
* ``indices.py`` -- :func:`build_index`, :func:`update_indices`, :func:`lookup`,
  :func:`drop_index`.
* ``managed.py`` -- what a table definition says about its dataset (its
  properties, schema, metadata, the store its files are in): the vocabulary
  of the modules above it and of the layers above.
* ``datasets.py`` -- changing a managed table's dataset: creating it, adding
  and removing files as a merge, repartitioning.
* ``clones.py`` -- ``CREATE TABLE ... CLONE``: a new dataset listing another
  table's files where they are.
* ``scan.py`` -- scan planning, the one place that decides which files of a
  version a reader reads and how (the SQL engine, the DuckDB bridge and Spark),
  pruning them by one plain-value predicate (``scan.pruned_labels``).
* ``changes.py`` -- the data files two versions of a table do not share, and
  only their rows (``system.table_changes``).
* ``partition_sql.py`` -- partition columns of a
  DuckDB ``read_parquet`` decoded from each file's path.
* ``file_rules.py``, ``kartothek_main.py``, ``data_files.py`` -- what the
  lakehouse layer asks of a managed table (the files garbage collection
  keeps and may delete, Kartothek's derived main metadata file, the rows of
  ``system.data_files``), registered with it by ``registration.py``.
* ``merging.py`` -- the three-way, file-by-file merge of a table both sides
  of ``MERGE BRANCH`` changed (a lakehouse hook too).

Floors, bottom to top: a module imports only modules on floors below its
own, in any form (at the top, inside a function, for type checking); each
module's docstring ends with the ones it imports, and
``tests/test_folders.py`` holds both to the imports.

1. ``layout``, ``transforms``, ``temporal``, ``floats``, ``encoding``,
   ``encode_lanes``, ``remote_files``, ``partition_sql``, ``promotion``
2. ``metadata`` (the model), ``convert``
3. ``file_facts``, ``conform``
4. ``metadata_io`` (the file), ``value_bounds``, ``values``
5. ``managed`` (the vocabulary), ``partitions``
6. ``reader``, ``writer``, ``file_rules``
7. ``indices``, ``kartothek``, ``data_files``, ``kartothek_main``, ``changes``
8. ``datasets`` (the changes), ``scan``, ``kartothek_import``, ``integrity``
9. ``compaction``, ``clones``, ``merging`` (a table's three-way merge)
10. ``registration`` (the hooks; no module of tables/ imports it)

Names are re-exported here and loaded on first use, so importing this package
does not import pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> submodule defining it.
_EXPORTS = {
    "TABLE": "layout",
    "COMPRESS_ABOVE_BYTES": "metadata_io",
    "DATASET_METADATA_VERSION": "metadata",
    "DatasetMetadata": "metadata",
    "UnsupportedDatasetVersionError": "metadata_io",
    "dataset_files": "metadata_io",
    "read_metadata": "metadata_io",
    "write_metadata": "metadata_io",
    "NULL_VALUE": "partitions",
    "partition_values": "partitions",
    "prune": "partitions",
    "new_dataset": "writer",
    "write_common_metadata": "writer",
    "write_data": "writer",
    "arrow_dataset": "reader",
    "read_table": "reader",
    "build_index": "indices",
    "drop_index": "indices",
    "lookup": "indices",
    "update_indices": "indices",
}

__all__ = [
    "COMPRESS_ABOVE_BYTES",
    "DATASET_METADATA_VERSION",
    "NULL_VALUE",
    "TABLE",
    "DatasetMetadata",
    "UnsupportedDatasetVersionError",
    "arrow_dataset",
    "build_index",
    "dataset_files",
    "drop_index",
    "lookup",
    "new_dataset",
    "partition_values",
    "prune",
    "read_metadata",
    "read_table",
    "update_indices",
    "write_common_metadata",
    "write_data",
    "write_metadata",
]
assert sorted(__all__) == sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


if TYPE_CHECKING:
    from trinity_dbapi.tables.indices import build_index, drop_index, lookup, update_indices
    from trinity_dbapi.tables.layout import TABLE
    from trinity_dbapi.tables.metadata import DATASET_METADATA_VERSION, DatasetMetadata
    from trinity_dbapi.tables.metadata_io import (
        COMPRESS_ABOVE_BYTES,
        UnsupportedDatasetVersionError,
        dataset_files,
        read_metadata,
        write_metadata,
    )
    from trinity_dbapi.tables.partitions import NULL_VALUE, partition_values, prune
    from trinity_dbapi.tables.reader import arrow_dataset, read_table
    from trinity_dbapi.tables.writer import new_dataset, write_common_metadata, write_data
