"""``system.data_files``: one row per live data file of every table in scope.

The catalog layer does not know how a table format lays out its files; a
format that keeps data files describes them through
:func:`~trinity_dbapi.lakehouse.table_formats.register_data_files` (managed
tables: :mod:`trinity_dbapi.tables.data_files`). Tables of a format that
registered nothing (external tables) have no rows. The rows come from the
version's own table definitions, so time travel shows the files of the
version read, and a scope (``WHERE namespace_name = ... AND table_name =
...``) reads only the named tables' dataset metadata.

Imports from lakehouse/: chain, table_formats.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa

from trinity_dbapi.lakehouse.table_formats import data_files_of

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.lakehouse.chain import Snapshot
    from trinity_dbapi.storage import Storage


class _Catalog(Protocol):
    """What the rows need of :class:`trinity_dbapi.lakehouse.catalog._Catalog`."""

    snapshot: Snapshot

    @property
    def tables(self) -> list[tuple[str, TableDefinition]]: ...


__all__ = ["DATA_FILES", "DATA_FILES_SCHEMA", "data_files_rows"]

_STRING = pa.string()

#: The columns of ``system.data_files`` (documented in docs/dbapi.md).
DATA_FILES_SCHEMA = pa.schema(
    [
        pa.field("namespace_name", _STRING, False),
        pa.field("table_name", _STRING, False),
        pa.field("file", _STRING, False),
        pa.field("file_format", _STRING, False),
        pa.field("label", _STRING, False),
        pa.field("partition", _STRING, False),
        pa.field("partition_values", pa.map_(_STRING, _STRING)),
        pa.field("record_count", pa.int64(), False),
        pa.field("file_size_in_bytes", pa.int64(), False),
        pa.field("row_group_count", pa.int32(), False),
    ]
)


def data_files_rows(
    storage: Storage, tables: Iterable[tuple[str, TableDefinition]]
) -> Iterator[Mapping[str, Any]]:
    """The rows of ``system.data_files`` for ``tables`` (namespace, definition) pairs."""
    for namespace, table in tables:
        describe = data_files_of(table.table_format)
        if describe is None:
            continue
        for row in describe(storage, table):
            yield {"namespace_name": namespace, "table_name": table.name, **row}


def _catalog_rows(catalog: _Catalog) -> Iterator[Mapping[str, Any]]:
    return data_files_rows(catalog.snapshot.lakehouse.storage, catalog.tables)


#: ``(comment, schema, rows)`` of the catalog table.
DATA_FILES = ("One row per live data file of every table", DATA_FILES_SCHEMA, _catalog_rows)
