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
* ``dataset_root``: only on a table whose definition another lakehouse
  holds (the source of a minimal or partial snapshot export): the root URI of
  that lakehouse, where its metadata, data and index files are. Set when the
  definition is read (:func:`read_from`), never written by a statement of
  this lakehouse, which reads such a table's files there and writes none.

Data changes are merges of the table's key (see
:meth:`~trinity_dbapi.lakehouse.transaction.Transaction.merge`): appends add files to
whatever the newest metadata holds, so concurrent appends both commit;
rewrites (DELETE, UPDATE, TRUNCATE) also check that every file they replace
is still there, and conflict otherwise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import CommitConflictError, ProgrammingError
from trinity_dbapi.format.definitions import Column, TableDefinition
from trinity_dbapi.lakehouse.table_formats import register_table_format

if TYPE_CHECKING:
    import pyarrow as pa

    from trinity_dbapi.lakehouse.objects import ObjectOperations
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
        return _open_external(storage, uri)
    # Keyed by who reads: the other lakehouse is opened with these credentials.
    key = (storage.cache_identity, uri)
    found = _EXTERNAL.get(key)
    if found is None:
        found = _open_external(storage, uri)
        _EXTERNAL[key] = found
    return found


def _open_external(storage: Storage, uri: str) -> Storage:
    from trinity_dbapi.storage import open_beside

    return open_beside(storage, uri)


def require_own_files(table: TableDefinition, where: str, what: str) -> None:
    """Refuse ``what`` (a change of rows or indices) on a referenced dataset.

    Raises:
        NotSupportedError: the table was imported with ``mode => 'reference'``.
    """
    home = table.format_properties.get(DATASET_ROOT)
    if home is not None:
        from trinity_dbapi.errors import NotSupportedError

        raise NotSupportedError(
            f"{what} on table {where} is not supported: the table is read through a minimal "
            f"or partial snapshot export, and its files stay in the lakehouse at {home!r} it "
            "was exported from, which this lakehouse never writes to; make a table of its "
            f"own with CREATE TABLE ... AS SELECT * FROM {where}, or export the source again "
            "with mode => 'full'"
        )
    if is_reference(table):
        from trinity_dbapi.errors import NotSupportedError

        raise NotSupportedError(
            f"{what} on table {where} is not supported: its files stay in the Kartothek store "
            "it was imported from with mode => 'reference', which the lakehouse never "
            f"writes to; make a table of its own with CREATE TABLE ... AS SELECT * FROM {where}, "
            "or import the dataset again with mode => 'copy'"
        )


def schema(table: TableDefinition) -> pa.Schema:
    """The table's Arrow schema (every column, partition columns included)."""
    from trinity_dbapi.format.type_mapping import arrow_schema

    return arrow_schema(table)


def partition_transforms(table: TableDefinition) -> dict[str, Transform]:
    """The table's transform partitions by directory name (``day(ts)`` is ``ts_day``).

    Raises:
        CorruptFileError: the ``partition_transforms`` property is not a JSON
            object of transforms.
    """
    from trinity_dbapi.format.definitions import PARTITION_TRANSFORMS
    from trinity_dbapi.tables.transforms import loads

    return loads(
        table.format_properties.get(PARTITION_TRANSFORMS), f"<definition of table {table.name}>"
    )


def create_dataset(
    storage: Storage, table: TableDefinition, *, background: bool = False
) -> TableDefinition:
    """Write a new, empty dataset for ``table``; return the definition that points at it.

    ``background``: the metadata file's create is left for a commit through
    this same storage to settle (:func:`~trinity_dbapi.tables.metadata.write_metadata`).

    The files are written at once under fresh names: until a commit points
    at them nobody sees them, and garbage collection removes them if none
    ever does. The dataset is claimed first (its claim file, see
    :mod:`trinity_dbapi.lakehouse.ownership`), so garbage collection knows
    its files are the lakehouse's even if no commit ever names them.

    Raises:
        ProgrammingError: a partition column whose name leaves no room for
            values in a directory name (see
            :func:`~trinity_dbapi.tables.partitions.check_partition_name`).
    """
    from concurrent.futures import ThreadPoolExecutor
    from functools import partial

    from trinity_dbapi.lakehouse.ownership import write_claim
    from trinity_dbapi.tables.layout import new_dataset_uuid
    from trinity_dbapi.tables.partitions import check_partition_name
    from trinity_dbapi.tables.writer import new_dataset

    partition_by = table.partition_columns
    for name in partition_by:
        check_partition_name(name)
    transforms = list(partition_transforms(table).values())
    dataset_uuid = new_dataset_uuid()
    if storage.local_root is not None:
        write_claim(storage, TABLE_FORMAT, dataset_uuid)
        meta = new_dataset(
            storage, schema(table), partition_by, transforms, dataset_uuid=dataset_uuid
        )
    else:
        # On object storage the claim and the schema file are written side by
        # side (one round trip, not two): at worst a crash leaves the small
        # schema file unclaimed, and no data file is written before both.
        with ThreadPoolExecutor(max_workers=1) as pool:
            claim = partial(write_claim, storage, TABLE_FORMAT, dataset_uuid)
            claimed = pool.submit(storage.this_round(claim))
            meta = new_dataset(
                storage, schema(table), partition_by, transforms, dataset_uuid=dataset_uuid
            )
            claimed.result()
    location = _write(storage, meta, background=background)
    properties = {
        **table.format_properties,
        DATASET_UUID: meta.dataset_uuid,
        METADATA_LOCATION: location,
    }
    return table.replace(table_format=TABLE_FORMAT, format_properties=properties)


#: Decoded metadata files by (who reads them, path): immutable, so kept for the
#: process; a file this process wrote is kept as written, not read back.
_METADATA_CACHE: dict[tuple[str, str], DatasetMetadata] = {}


def metadata(storage: Storage, table: TableDefinition) -> DatasetMetadata:
    """The dataset metadata of this version of ``table`` (cached: the files are immutable)."""
    from trinity_dbapi.tables.layout import read_referenced
    from trinity_dbapi.tables.metadata import decode_metadata

    location = table.format_properties[METADATA_LOCATION]
    storage = metadata_storage(storage, table)
    key = (storage.cache_identity, location)
    meta = _METADATA_CACHE.get(key)
    if meta is None:
        data = read_referenced(storage, location, f"the definition of table {table.name!r}")
        meta = _keep(key, decode_metadata(location, data))
    return meta


def _keep(key: tuple[str, str], meta: DatasetMetadata) -> DatasetMetadata:
    if len(_METADATA_CACHE) > 4096:
        _METADATA_CACHE.clear()
    _METADATA_CACHE[key] = meta
    return meta


def _write(storage: Storage, meta: DatasetMetadata, *, background: bool) -> str:
    """Write ``meta`` as a new metadata file; the next reader here finds it decoded."""
    from trinity_dbapi.tables.metadata import write_metadata

    location = write_metadata(storage, meta, background=background)
    _keep((storage.cache_identity, location), as_written(meta))
    return location


def as_written(meta: DatasetMetadata) -> DatasetMetadata:
    """What reading back the file ``write_metadata`` made of ``meta`` gives: the next sequence."""
    return dataclasses.replace(meta, sequence=meta.sequence + 1)


def change_files(
    view: ObjectOperations,
    storage: Storage,
    namespace: str,
    name: str,
    *,
    added: Mapping[str, str],
    added_rows: Mapping[str, pa.Table] | None = None,
    removed: Iterable[str] = (),
    columns: Sequence[Column] | None = None,
    facts: Mapping[str, tuple[int, int, int]] | None = None,
    bounds: Mapping[str, Mapping[str, tuple[Any, Any]]] | None = None,
) -> TableDefinition:
    """Stage adding and removing data files of a table, as a merge.

    Args:
        view: the transaction.
        storage: the lakehouse storage (new metadata and index files go there).
        namespace: the table's namespace.
        name: the table's name.
        added: label -> path of data files already written.
        added_rows: label -> the rows of each added file (partition columns
            included), to maintain the indices; read back when omitted.
        removed: labels of files this change replaces or deletes; each must
            still be in the newest version, or the commit conflicts.
        columns: the columns the new files were written with; if a
            concurrent commit changed them, the commit conflicts.
        facts: label -> ``(rows, bytes, row_groups)`` of added files, recorded
            in the dataset metadata (:mod:`~trinity_dbapi.tables.file_facts`);
            by default what this process knows of the files it wrote.
        bounds: label -> value bounds of added files
            (:mod:`~trinity_dbapi.tables.value_bounds`), recorded beside their
            facts; by default what this process knows of the files it wrote.
    """
    from trinity_dbapi.tables import file_facts
    from trinity_dbapi.tables.indices import update_indices
    from trinity_dbapi.tables.reader import read_table

    gone = frozenset(removed)
    known = dict(file_facts.for_added(storage, added) if facts is None else facts)
    limits = dict(file_facts.bounds_for_added(storage, added) if bounds is None else bounds)

    def change(table: TableDefinition) -> TableDefinition:
        if columns is not None and tuple(table.columns) != tuple(columns):
            raise CommitConflictError(
                f"commit conflict on table {namespace}.{name}: a concurrent commit changed its "
                "columns while this transaction wrote rows for the old ones; run it again"
            )
        meta = metadata(storage, table)
        missing = sorted(gone - meta.files().keys())
        if missing:
            raise CommitConflictError(
                f"commit conflict on table {namespace}.{name}: a concurrent commit already "
                f"rewrote or deleted {len(missing)} of the files this transaction changes "
                f"(such as {missing[0]!r}); run the statement again on the new version"
            )
        table_schema, by = schema(table), table.partition_columns
        _check_partitioning(meta, by, added, f"{namespace}.{name}")
        meta = file_facts.with_recorded(
            meta.with_partitions(added, gone), known, sorted(gone), limits
        )
        if gone:
            meta, table = _without_unused_partitionings(meta, table)
        if meta.indices:
            rows = dict(added_rows or {})
            for label in added:
                if label not in rows:
                    rows[label] = read_table(storage, meta, table_schema, by, labels=[label])
            meta = update_indices(storage, meta, table_schema, by, rows, gone)
        location = _write(storage, meta, background=True)
        properties = {**table.format_properties, METADATA_LOCATION: location}
        return table.replace(format_properties=properties)

    return view.merge_table(namespace, name, change)


def _check_partitioning(
    meta: DatasetMetadata, partition_by: Sequence[str], added: Iterable[str], where: str
) -> None:
    """Refuse new files in a partitioning the newest version no longer has.

    A transaction that wrote its files before a concurrent ``SET PARTITIONED
    BY`` (and perhaps a change that removed the last file of the old
    partitioning) would add files nobody could read by their directories.
    """
    from trinity_dbapi.tables.partitions import earlier_specs, label_directories

    known = [list(partition_by), *earlier_specs(meta)]
    for label in added:
        if label_directories(label) not in known:
            raise CommitConflictError(
                f"commit conflict on table {where}: a concurrent commit changed its "
                "partitioning while this transaction wrote files partitioned the old way "
                f"(such as {label!r}); run the statement again on the new version"
            )


def _without_unused_partitionings(
    meta: DatasetMetadata, table: TableDefinition
) -> tuple[DatasetMetadata, TableDefinition]:
    """``meta`` and ``table`` forgetting the earlier partitionings no file has any more.

    An earlier partitioning (``trinity.partition_specs``) is kept exactly as
    long as some file of this version has its directories; the transforms
    only it used are forgotten with it, so their names are free again. The
    current partitioning and its transforms always stay.
    """
    import json

    from trinity_dbapi.format.definitions import PARTITION_TRANSFORMS
    from trinity_dbapi.tables.metadata import PARTITION_SPECS_KEY, PARTITION_TRANSFORMS_KEY
    from trinity_dbapi.tables.partitions import earlier_specs, recorded_transforms, specs_in_use
    from trinity_dbapi.tables.transforms import dumps

    earlier = earlier_specs(meta)
    if not earlier:
        return meta, table
    current = table.partition_columns
    kept = [spec for spec in specs_in_use(meta, current) if spec != list(current)]
    if kept == earlier:
        return meta, table
    names = {name for spec in (current, *kept) for name in spec}
    transforms = [t for n, t in recorded_transforms(meta).items() if n in names]
    recorded = {
        key: value
        for key, value in meta.metadata.items()
        if key not in (PARTITION_SPECS_KEY, PARTITION_TRANSFORMS_KEY)
    }
    text = dumps(transforms) if transforms else None
    if text is not None:
        recorded[PARTITION_TRANSFORMS_KEY] = text
    if kept:
        recorded[PARTITION_SPECS_KEY] = json.dumps(kept, separators=(",", ":"))
    properties = dict(table.format_properties)
    if PARTITION_TRANSFORMS in properties:
        # The definition's record: the transforms of the current partitioning
        # and of those some file still has (as ``repartitioned`` writes it).
        if text is None:
            del properties[PARTITION_TRANSFORMS]
        else:
            properties[PARTITION_TRANSFORMS] = text
    return (
        dataclasses.replace(meta, metadata=recorded),
        table.replace(format_properties=properties),
    )


def with_metadata(
    storage: Storage, table: TableDefinition, meta: DatasetMetadata
) -> TableDefinition:
    """``table`` pointing at a new metadata file holding ``meta``."""
    location = _write(storage, meta, background=True)
    return table.replace(format_properties={**table.format_properties, METADATA_LOCATION: location})


def repartitioned(
    storage: Storage,
    table: TableDefinition,
    partition_by: Sequence[str],
    transforms: Sequence[Transform],
) -> TableDefinition:
    """``table`` writing new data partitioned by ``partition_by``; its files stay as they are.

    The dataset metadata records the new partitioning, every transform any
    partitioning used (by directory name), and the earlier partitionings its
    files still have (``trinity.partition_specs``), so each file keeps being
    read and pruned by its own directories.

    Raises:
        ProgrammingError: unknown or repeated columns, a transform named like
            an earlier, different one.
        NotSupportedError: a column or transform that cannot partition.
    """
    import json

    from trinity_dbapi.format.definitions import with_partition_columns
    from trinity_dbapi.tables.metadata import (
        PARTITION_BY_KEY,
        PARTITION_SPECS_KEY,
        PARTITION_TRANSFORMS_KEY,
    )
    from trinity_dbapi.tables.partitions import (
        check_partition_by,
        check_partition_name,
        specs_in_use,
    )
    from trinity_dbapi.tables.transforms import dumps

    meta = metadata(storage, table)
    in_use = specs_in_use(meta, table.partition_columns)
    # Transforms no file has a directory of any more are forgotten.
    names = {name for spec in in_use for name in spec}
    known = {n: t for n, t in partition_transforms(table).items() if n in names}
    for transform in transforms:
        old = known.get(transform.name)
        if old is not None and old != transform:
            raise ProgrammingError(
                f"partition {transform.sql()} of table {table.name} would have the directory "
                f"name {transform.name!r} of the earlier partition {old.sql()}, whose files the "
                "table still has; partition by the same width, or rewrite the table first"
            )
        known[transform.name] = transform
    earlier = [
        spec for spec in specs_in_use(meta, table.partition_columns) if spec != list(partition_by)
    ]
    recorded = {
        key: value
        for key, value in meta.metadata.items()
        if key not in (PARTITION_BY_KEY, PARTITION_SPECS_KEY, PARTITION_TRANSFORMS_KEY)
    }
    recorded[PARTITION_BY_KEY] = json.dumps(list(partition_by), separators=(",", ":"))
    text = dumps(list(known.values())) if known else None
    if text is not None:
        recorded[PARTITION_TRANSFORMS_KEY] = text
    if earlier:
        recorded[PARTITION_SPECS_KEY] = json.dumps(earlier, separators=(",", ":"))
    keys = None if meta.partition_keys is None else tuple(partition_by)
    new_meta = dataclasses.replace(meta, metadata=recorded, partition_keys=keys)
    check_partition_by(schema(table), partition_by, new_meta)
    for name in partition_by:
        check_partition_name(name)
    properties = with_partition_columns(table.format_properties, partition_by, text)
    return with_metadata(storage, table.replace(format_properties=properties), new_meta)


def describe(table: TableDefinition) -> dict[str, Any]:
    """The dataset facts of a table, for messages and catalog tables."""
    return {
        "dataset_uuid": table.format_properties.get(DATASET_UUID),
        "partitioned_by": table.partition_columns,
        "indexes": indexes(table),
    }


def referenced_files(storage: Storage, table: TableDefinition) -> set[str]:
    """Every file this version of a managed table uses (for garbage collection).

    The metadata file, ``_common_metadata``, the data files and the index files;
    of a referenced dataset only its frozen metadata file: the others are
    in another store, which garbage collection never lists.
    """
    from trinity_dbapi.tables.metadata import dataset_files

    if not has_dataset(table) or DATASET_ROOT in table.format_properties:
        return set()  # another lakehouse's files: that one keeps them
    if is_reference(table):
        return {table.format_properties[METADATA_LOCATION]}
    return dataset_files(storage, table.format_properties[METADATA_LOCATION])


# Garbage collection (lakehouse layer) follows managed tables to their files.
register_table_format(TABLE_FORMAT, referenced_files)

# Kartothek's main metadata file, derived after each commit, the rows of
# system.data_files, and which files under the root are a managed table's
# (each registers itself).
from trinity_dbapi.tables import data_files, file_rules, kartothek_main  # noqa: F401
