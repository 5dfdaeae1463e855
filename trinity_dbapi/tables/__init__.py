"""Table data: Kartothek-layout Parquet datasets under the lakehouse root (docs/datasets.md).

Each managed table stores its rows in one dataset (seed 004). The package is
split along the layout:

* ``layout.py`` -- file names: :data:`TABLE`, metadata, data, index and schema paths.
* ``metadata.py`` -- :class:`DatasetMetadata`, its JSON / msgpack.zstd encodings,
  strict reading (:func:`read_metadata`), :func:`write_metadata`, :func:`dataset_files`.
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
* ``scan.py`` -- scan planning, the one place that decides which files of a
  version a reader reads and how (the SQL engine, the DuckDB bridge and Spark).
* ``pruning.py`` -- the point predicates of a query's WHERE clause that scan
  planning prunes files with; ``partition_sql.py`` -- partition columns of a
  DuckDB ``read_parquet`` decoded from each file's path.

Names are re-exported here and loaded on first use, so importing this package
does not import pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> submodule defining it.
_EXPORTS = {
    "TABLE": "layout",
    "COMPRESS_ABOVE_BYTES": "metadata",
    "DATASET_METADATA_VERSION": "metadata",
    "DatasetMetadata": "metadata",
    "UnsupportedDatasetVersionError": "metadata",
    "dataset_files": "metadata",
    "read_metadata": "metadata",
    "write_metadata": "metadata",
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
    from trinity_dbapi.tables.metadata import (
        COMPRESS_ABOVE_BYTES,
        DATASET_METADATA_VERSION,
        DatasetMetadata,
        UnsupportedDatasetVersionError,
        dataset_files,
        read_metadata,
        write_metadata,
    )
    from trinity_dbapi.tables.partitions import NULL_VALUE, partition_values, prune
    from trinity_dbapi.tables.reader import arrow_dataset, read_table
    from trinity_dbapi.tables.writer import new_dataset, write_common_metadata, write_data
