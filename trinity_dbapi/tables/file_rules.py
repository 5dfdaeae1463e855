"""What garbage collection asks of a managed table: the files it uses, and which are ours.

A version of a managed table uses its metadata file, ``_common_metadata``,
its data files and its index files (:func:`referenced_files`): garbage
collection keeps them while the version is retained.

Garbage collection deletes only files the lakehouse wrote
(:mod:`trinity_dbapi.lakehouse.ownership`). For managed tables that means:

* a name the writer gives (:mod:`~trinity_dbapi.tables.layout`): the
  dataset's metadata files, ``_common_metadata``, data files whose part name
  is a canonical UUID4 under ``column=value`` directories, index files, the
  derived main metadata file, and a local writer's temporary files in those
  folders. Kartothek names its data files with 32 hex digits, so a file it
  added to one of our datasets is not taken for ours;
* in a dataset the lakehouse owns: the dataset of a managed table (never one
  imported with ``mode => 'reference'``, whose files are another program's).

A clone (``CREATE TABLE ... CLONE``) lists files under the dataset it was
cloned from: :func:`referenced_files` returns them where they are, so every
file any retained version of any table reaches is kept, whatever dataset
folder it is in; and the clone owns those datasets too
(``shared_datasets``), so once the source is dropped the files neither
reaches any more are still collected.

A referenced dataset whose store lies inside the lakehouse root is protected
as a whole while a retained version's table reads it: its folder and its
main metadata files.

Imports from tables/: layout, managed, metadata_io.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from trinity_dbapi.format.definitions import TableDefinition
from trinity_dbapi.lakehouse.table_formats import Ownership
from trinity_dbapi.tables import layout
from trinity_dbapi.tables.managed import (
    DATASET_ROOT,
    DATASET_UUID,
    EXTERNAL_LOCATION,
    METADATA_LOCATION,
    has_dataset,
    is_reference,
    shared_datasets,
)
from trinity_dbapi.tables.metadata_io import dataset_files

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage

_UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_DATASET = r"(?P<ds>[A-Za-z0-9+_-]+)"
_MAIN_SUFFIXES = tuple(layout.METADATA_SUFFIX + s for s in layout.METADATA_FORMATS.values())
_FORMATS = "|".join(re.escape(s) for s in layout.METADATA_FORMATS.values())

#: Ranks: within a dataset, lower ranks are deleted first. Kartothek finds a
#: dataset by its main metadata file, so that goes first (no reader is sent
#: to deleted files); the metadata files go last.
_MAIN, _FILES, _METADATA = 0, 1, 2

_RULES = (
    (re.compile(rf"{_DATASET}{re.escape(layout.METADATA_SUFFIX)}(?:{_FORMATS})"), _MAIN),
    (re.compile(rf"{_DATASET}/{layout.TABLE}/{layout.COMMON_METADATA}"), _FILES),
    (
        re.compile(
            rf"{_DATASET}/{layout.TABLE}/(?:[^/=]+=[^/]*/)*{_UUID4}{re.escape(layout.DATA_SUFFIX)}"
        ),
        _FILES,
    ),
    (
        re.compile(
            rf"{_DATASET}/indices/[^/]+/[^/]+\+[0-9a-f]{{32}}{re.escape(layout.INDEX_SUFFIX)}"
        ),
        _FILES,
    ),
    (
        re.compile(
            rf"{_DATASET}/metadata/\d{{{layout.SEQUENCE_DIGITS},}}-{_UUID4}"
            rf"{re.escape(layout.METADATA_SUFFIX)}(?:{_FORMATS})"
        ),
        _METADATA,
    ),
    # A local writer's temporary files, in the folders it writes to.
    (
        re.compile(
            rf"{_DATASET}/(?:{layout.TABLE}/(?:[^/=]+=[^/]*/)*|metadata/|indices/[^/]+/)\.tmp-[^/]+"
        ),
        _FILES,
    ),
)


def group_of(path: str) -> tuple[str, int] | None:
    """The dataset and deletion rank of a path with a name the writer gives; else None."""
    for pattern, rank in _RULES:
        match = pattern.fullmatch(path)
        if match is not None:
            return match["ds"], rank
    return None


def ownership(table: TableDefinition, root_uri: str) -> Ownership:
    """What a version of a managed table owns, and protects, under the root ``root_uri``."""
    if not has_dataset(table) or DATASET_ROOT in table.format_properties:
        return Ownership()  # another lakehouse's files, which that one keeps
    properties = table.format_properties
    dataset = properties.get(DATASET_UUID, "")
    store = properties.get(EXTERNAL_LOCATION)
    if store is None:
        # A clone owns, with its own dataset, those whose files it shares:
        # a dropped source's files it no longer reaches are still collected.
        own = frozenset({dataset}) if dataset else frozenset()
        return Ownership(groups=own | shared_datasets(table))
    # A referenced dataset: its frozen metadata file is the lakehouse's own;
    # the store's files are another program's, kept while the table reads them.
    files = frozenset({properties[METADATA_LOCATION]})
    if not store.endswith("/"):
        store += "/"
    if not store.startswith(root_uri) or not dataset:
        return Ownership(files=files)
    inside = store[len(root_uri) :] + dataset
    protected = frozenset({inside + "/", *(inside + suffix for suffix in _MAIN_SUFFIXES)})
    return Ownership(files=files, protected=protected)


def referenced_files(storage: Storage, table: TableDefinition) -> set[str]:
    """Every file this version of a managed table uses (for garbage collection).

    The metadata file, ``_common_metadata``, the data files and the index files;
    of a referenced dataset only its frozen metadata file: the others are
    in another store, which garbage collection never lists.
    """
    if not has_dataset(table) or DATASET_ROOT in table.format_properties:
        return set()  # another lakehouse's files: that one keeps them
    if is_reference(table):
        return {table.format_properties[METADATA_LOCATION]}
    return dataset_files(storage, table.format_properties[METADATA_LOCATION])


__all__ = ["group_of", "ownership", "referenced_files"]
