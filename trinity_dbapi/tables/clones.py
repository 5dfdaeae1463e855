"""Clones: a new managed table that shares another's files (``CREATE TABLE ... CLONE``).

A clone is a new table definition and a new dataset of its own (its UUID,
claim file, ``_common_metadata`` and one metadata file) whose metadata lists
the source version's data and index files where they are, under the UUID of
the dataset they were written to (docs/datasets.md, decision 25). No data
file is copied, read or listed: cloning costs the same few writes whatever
the number of files (the one metadata file grows with the file list, as
every commit's does).

From then on the two tables diverge by copy-on-write: a write to either one
writes new files under its own dataset and a new metadata file of its own,
and never changes or deletes a file. Only garbage collection deletes files,
and only those no retained version of any table reaches
(:mod:`~trinity_dbapi.tables.file_rules`), so dropping either table never
takes a file the other still reads.

Imports from tables/: datasets, managed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trinity_dbapi.errors import NotSupportedError
from trinity_dbapi.tables import datasets, managed

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.storage import Storage

__all__ = ["clone_table"]

#: Properties of the source's definition that name its own dataset, never the clone's.
_OWN_DATASET = (managed.DATASET_UUID, managed.METADATA_LOCATION, managed.SHARED_DATASETS)


def clone_table(
    storage: Storage, source: TableDefinition, name: str, where: str
) -> TableDefinition:
    """The definition of a new table ``name`` reading this version of ``source``'s files.

    Columns (with their IDs, which the shared files carry), keys,
    partitioning, indices and properties are the source's. A table of
    another format (an external table over files elsewhere) is cloned as
    its definition alone: it owns no files.

    Args:
        storage: the lakehouse storage (the clone's dataset is written there).
        source: the version of the table cloned.
        name: the new table's name.
        where: the source as the user named it, for messages.

    Raises:
        NotSupportedError: the source's files are not this lakehouse's (a
            table imported with ``mode => 'reference'``, or one read through
            a minimal or partial snapshot export).
    """
    if source.table_format != managed.TABLE_FORMAT:
        return source.replace(name=name)
    if managed.files_elsewhere(source):
        raise NotSupportedError(
            f"table {where} cannot be cloned: its files are not this lakehouse's (it was "
            "imported with mode => 'reference', or is read through a minimal or partial "
            "snapshot export), and a clone shares its source's files, which garbage "
            "collection must be able to keep; copy it with CREATE TABLE ... AS SELECT * "
            f"FROM {where}"
        )
    properties = {k: v for k, v in source.format_properties.items() if k not in _OWN_DATASET}
    clone = source.replace(name=name, format_properties=properties)
    if not managed.has_dataset(source):
        return datasets.create_dataset(storage, clone, background=True)
    meta = managed.metadata(storage, source)
    created = datasets.create_dataset(storage, clone, background=True, files_of=meta)
    # The datasets whose files the clone lists: the source's own, and those it shared.
    shared = {path.partition("/")[0] for path in meta.files().values()}
    shared.update(path.partition("/")[0] for path in meta.indices.values())
    shared.discard(created.format_properties[managed.DATASET_UUID])
    if not shared:
        return created
    return created.replace(
        format_properties={
            **created.format_properties,
            managed.SHARED_DATASETS: ",".join(sorted(shared)),
        }
    )
