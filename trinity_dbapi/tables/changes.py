"""Row changes between two versions of a managed table, from the data files that differ.

Data files are immutable and a version names its exact files (its dataset
metadata), so what a commit changed in a table is what its files changed:
the files the earlier version had and the later one has not (removed), and
the other way round (added). :func:`changed_files` compares the two file
lists, reading no data file; :func:`changed_rows` reads only those files and
returns their rows, each side read with its own version's definition (as a
scan of that version would) and then laid out as the columns of a chosen
definition, matched by column ID: a column that side's version did not have
is NULL, a column the chosen definition does not have is left out, a type
widened since (``ALTER COLUMN ... TYPE``) is cast to the chosen one.

Rows of removed files that reappear in added files did not change (a
compaction, the untouched rows of a rewritten file): the caller cancels
them as multisets (``system.table_changes`` in the SQL engine does, in
DuckDB, which compares every type, nested ones included).

Imports from tables/: conform, managed, reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from trinity_dbapi.tables import managed
from trinity_dbapi.tables.conform import null_column
from trinity_dbapi.tables.reader import read_table

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.storage import Storage

__all__ = ["ChangedFiles", "change_schema", "changed_files", "changed_rows"]


@dataclass(frozen=True)
class ChangedFiles:
    """The data files two versions of a table do not share.

    Attributes:
        removed: labels (in the earlier version's dataset) of the files the
            later version no longer has.
        added: labels (in the later version's dataset) of the files the
            earlier version did not have.
    """

    removed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.removed or self.added)


def changed_files(
    storage: Storage, before: TableDefinition | None, after: TableDefinition | None
) -> ChangedFiles:
    """The files ``before`` has and ``after`` has not, and the other way round.

    ``None`` is a table that does not exist at that version (no files).
    Two definitions pointing at one metadata file in one store share every
    file, and no metadata file is read for them.
    """
    if (
        before is not None
        and after is not None
        and _where(storage, before) == _where(storage, after)
        and before.format_properties.get(managed.METADATA_LOCATION)
        == after.format_properties.get(managed.METADATA_LOCATION)
    ):
        return ChangedFiles()
    old = _files(storage, before)
    new = _files(storage, after)
    return ChangedFiles(
        tuple(label for key, label in old.items() if key not in new),
        tuple(label for key, label in new.items() if key not in old),
    )


def change_schema(definition: TableDefinition) -> pa.Schema:
    """The Arrow schema of :func:`changed_rows` laid out as ``definition``: every field nullable.

    Nullable because a row of a version before a column was added has no
    value for it.
    """
    schema = managed.schema(definition)
    return pa.schema([field.with_nullable(True) for field in schema])


def changed_rows(
    storage: Storage,
    before: TableDefinition | None,
    after: TableDefinition | None,
    files: ChangedFiles,
    columns: TableDefinition,
) -> tuple[pa.Table, pa.Table]:
    """The rows of ``files.removed`` (of ``before``) and of ``files.added`` (of ``after``).

    Only those files are read. Both tables have :func:`change_schema` of
    ``columns``; a file's rows keep the file's order, files the datasets'.

    Raises:
        CorruptFileError: a data file that cannot be read.
    """
    return (
        _read(storage, before, files.removed, columns),
        _read(storage, after, files.added, columns),
    )


def _where(storage: Storage, table: TableDefinition) -> str:
    """The store a table's data files are in (a referenced dataset's is not the lakehouse's)."""
    return managed.data_storage(storage, table).root_uri


def _files(storage: Storage, table: TableDefinition | None) -> dict[tuple[str, str], str]:
    """(store, data file path) -> label of every file of this version of ``table``."""
    if table is None or not managed.has_dataset(table):
        return {}
    where = _where(storage, table)
    meta = managed.metadata(storage, table)
    return {(where, path): label for label, path in meta.files().items()}


def _read(
    storage: Storage,
    table: TableDefinition | None,
    labels: tuple[str, ...],
    columns: TableDefinition,
) -> pa.Table:
    out = change_schema(columns)
    if table is None or not labels:
        return out.empty_table()
    meta = managed.metadata(storage, table)
    data = managed.data_storage(storage, table)
    rows = read_table(data, meta, managed.schema(table), table.partition_columns, labels)
    # Match by column ID (a rename keeps it; a column dropped and added again
    # gets a new one), by name only for columns without an ID.
    by_id = {column.id: column.name for column in table.columns if column.id > 0}
    names = {column.name for column in table.columns}
    arrays = []
    for column, field in zip(columns.columns, out, strict=True):
        source = by_id.get(column.id) if column.id > 0 else None
        if source is None and column.id <= 0 and column.name in names:
            source = column.name
        if source is None:
            arrays.append(null_column(rows.num_rows, field.type))
        else:
            arrays.append(rows.column(source).cast(field.type))
    return pa.Table.from_arrays(arrays, schema=out)
