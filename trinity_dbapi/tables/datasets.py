"""Changing a managed table's dataset: creating it, adding and removing files, repartitioning.

What a definition says about its dataset (its properties, its metadata,
its schema) is :mod:`~trinity_dbapi.tables.managed`; this module writes the
files a change needs and returns the definition that points at them, for
the transaction to commit.

Data changes are merges of the table's key (see
:meth:`~trinity_dbapi.lakehouse.transaction.Transaction.merge`): appends add files to
whatever the newest metadata holds, so concurrent appends both commit;
rewrites (DELETE, UPDATE, TRUNCATE) also check that every file they replace
is still there, and conflict otherwise.

Imports from tables/: file_facts, indices, layout, managed, metadata, partitions,
reader, transforms, writer.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import CommitConflictError, ProgrammingError
from trinity_dbapi.format.definitions import (
    PARTITION_TRANSFORMS,
    Column,
    TableDefinition,
    with_partition_columns,
)
from trinity_dbapi.lakehouse.ownership import write_claim
from trinity_dbapi.tables import file_facts, managed
from trinity_dbapi.tables.indices import update_indices
from trinity_dbapi.tables.layout import new_dataset_uuid
from trinity_dbapi.tables.metadata import (
    PARTITION_BY_KEY,
    PARTITION_SPECS_KEY,
    PARTITION_TRANSFORMS_KEY,
    DatasetMetadata,
)
from trinity_dbapi.tables.partitions import (
    check_partition_by,
    check_partition_name,
    earlier_specs,
    label_directories,
    recorded_transforms,
    specs_in_use,
)
from trinity_dbapi.tables.reader import read_table
from trinity_dbapi.tables.transforms import dumps
from trinity_dbapi.tables.writer import new_dataset

if TYPE_CHECKING:
    import pyarrow as pa

    from trinity_dbapi.lakehouse.objects import ObjectOperations
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tables.transforms import Transform

__all__ = ["change_files", "create_dataset", "repartitioned", "without_unused_partitionings"]


def create_dataset(
    storage: Storage,
    table: TableDefinition,
    *,
    background: bool = False,
    files_of: DatasetMetadata | None = None,
) -> TableDefinition:
    """Write a new, empty dataset for ``table``; return the definition that points at it.

    ``background``: the metadata file's create is left for a commit through
    this same storage to settle (:func:`~trinity_dbapi.tables.metadata_io.write_metadata`).
    ``files_of``: a clone's source state; the new dataset lists its files,
    indices and annotations where they are (:mod:`~trinity_dbapi.tables.clones`).

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
    partition_by = table.partition_columns
    for name in partition_by:
        check_partition_name(name)
    transforms = list(managed.partition_transforms(table).values())
    dataset_uuid = new_dataset_uuid()
    if storage.local_root is not None:
        write_claim(storage, managed.TABLE_FORMAT, dataset_uuid)
        meta = new_dataset(
            storage, managed.schema(table), partition_by, transforms, dataset_uuid=dataset_uuid
        )
    else:
        # On object storage the claim and the schema file are written side by
        # side (one round trip, not two): at worst a crash leaves the small
        # schema file unclaimed, and no data file is written before both.
        with ThreadPoolExecutor(max_workers=1) as pool:
            claim = partial(write_claim, storage, managed.TABLE_FORMAT, dataset_uuid)
            claimed = pool.submit(storage.this_round(claim))
            meta = new_dataset(
                storage, managed.schema(table), partition_by, transforms, dataset_uuid=dataset_uuid
            )
            claimed.result()
    if files_of is not None:
        meta = dataclasses.replace(files_of, dataset_uuid=meta.dataset_uuid, sequence=0)
    properties = {**table.format_properties, managed.DATASET_UUID: meta.dataset_uuid}
    created = table.replace(table_format=managed.TABLE_FORMAT, format_properties=properties)
    return managed.with_metadata(storage, created, meta, background=background)


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
    gone = frozenset(removed)
    known = dict(file_facts.for_added(storage, added) if facts is None else facts)
    limits = dict(file_facts.bounds_for_added(storage, added) if bounds is None else bounds)

    def change(table: TableDefinition) -> TableDefinition:
        if columns is not None and tuple(table.columns) != tuple(columns):
            raise CommitConflictError(
                f"commit conflict on table {namespace}.{name}: a concurrent commit changed its "
                "columns while this transaction wrote rows for the old ones; run it again"
            )
        meta = managed.metadata(storage, table)
        missing = sorted(gone - meta.files().keys())
        if missing:
            raise CommitConflictError(
                f"commit conflict on table {namespace}.{name}: a concurrent commit already "
                f"rewrote or deleted {len(missing)} of the files this transaction changes "
                f"(such as {missing[0]!r}); run the statement again on the new version"
            )
        table_schema, by = managed.schema(table), table.partition_columns
        _check_partitioning(meta, by, added, f"{namespace}.{name}")
        meta = file_facts.with_recorded(
            meta.with_partitions(added, gone), known, sorted(gone), limits
        )
        if gone:
            meta, table = without_unused_partitionings(meta, table)
        if meta.indices:
            rows = dict(added_rows or {})
            for label in added:
                if label not in rows:
                    rows[label] = read_table(storage, meta, table_schema, by, labels=[label])
            meta = update_indices(storage, meta, table_schema, by, rows, gone)
        return managed.with_metadata(storage, table, meta)

    return view.merge_table(namespace, name, change)


def _check_partitioning(
    meta: DatasetMetadata, partition_by: Sequence[str], added: Iterable[str], where: str
) -> None:
    """Refuse new files in a partitioning the newest version no longer has.

    A transaction that wrote its files before a concurrent ``SET PARTITIONED
    BY`` (and perhaps a change that removed the last file of the old
    partitioning) would add files nobody could read by their directories.
    """
    known = [list(partition_by), *earlier_specs(meta)]
    for label in added:
        if label_directories(label) not in known:
            raise CommitConflictError(
                f"commit conflict on table {where}: a concurrent commit changed its "
                "partitioning while this transaction wrote files partitioned the old way "
                f"(such as {label!r}); run the statement again on the new version"
            )


def without_unused_partitionings(
    meta: DatasetMetadata, table: TableDefinition
) -> tuple[DatasetMetadata, TableDefinition]:
    """``meta`` and ``table`` forgetting the earlier partitionings no file has any more.

    An earlier partitioning (``trinity.partition_specs``) is kept exactly as
    long as some file of this version has its directories; the transforms
    only it used are forgotten with it, so their names are free again. The
    current partitioning and its transforms always stay.
    """
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
    meta = managed.metadata(storage, table)
    in_use = specs_in_use(meta, table.partition_columns)
    # Transforms no file has a directory of any more are forgotten.
    names = {name for spec in in_use for name in spec}
    known = {n: t for n, t in managed.partition_transforms(table).items() if n in names}
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
    check_partition_by(managed.schema(table), partition_by, new_meta)
    for name in partition_by:
        check_partition_name(name)
    properties = with_partition_columns(table.format_properties, partition_by, text)
    return managed.with_metadata(storage, table.replace(format_properties=properties), new_meta)
