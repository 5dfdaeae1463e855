"""Merging a managed table three-way: what ``MERGE BRANCH`` asks of a table both sides changed.

The lakehouse-level merge finds the tables whose definition changed on both
sides since the merge base and calls :func:`merge_tables` (registered for
the ``kartothek`` format by :mod:`~trinity_dbapi.tables.registration`) with
the three definitions. The conflict unit is the data file, by its partition
label (a label holds a UUID4, so it names one file for good):

* a file in all three is kept; removed (deleted or rewritten) on one side
  only, it is removed; added on one side, it is added; added on both, it is
  listed once; removed on **both** sides, it is a conflict naming the file
  (two rewrites of the same rows cannot both be kept). Appends on both sides
  keep both: the target's files in its order, then the source's new ones in
  theirs, so the result is deterministic.
* Columns are matched by ID (IDs are written into the Parquet files, so they
  are never renumbered): a column added on one side is taken; the same
  column added or changed identically on both is fine; each attribute
  (name, type, nullability, comment, each property) changed on one side is
  taken, and changed differently on both is a conflict; one ID added with
  different names or types on the two sides, or one name given to two IDs,
  is a conflict. A column dropped on one side is dropped even if the other
  side wrote rows holding it (as a DROP COLUMN after those writes would; a
  reader matches files by column ID), but a column dropped on one side and
  *altered* on the other is a conflict.
* Table properties, format properties and the key lists merge key by key
  the same way; ``last_column_id`` is the highest of the three sides (an ID
  once given is never given again).
* The partitioning changed on one side is taken when every file the other
  side added can still be read by its directories (it was written in a
  partitioning the new dataset state lists); changed differently on both
  sides, or leaving such a file unreadable, is a conflict.
* Row counts and value bounds (``trinity.file_facts``) are each side's for
  its files. Each secondary index keeps the entries of the surviving files
  from one side's index file and takes the other side's added files from
  its index, or, where that side had no such index, from the files' values.
* A table whose files stay in another store (a reference import, a table
  read through an export) never has its dataset changed by a branch; both
  sides changing it anyway is a conflict.

Nothing is written unless the merge commits: the merged dataset metadata
file and any index file are staged in the merge transaction.

Imports from tables/: datasets, file_facts, indices, layout, managed, metadata,
partitions, reader, transforms.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from trinity_dbapi.errors import Error
from trinity_dbapi.format.definitions import (
    PARTITION_COLUMNS,
    PARTITION_TRANSFORMS,
    PARTITIONED_BY,
    Column,
    TableDefinition,
)
from trinity_dbapi.lakehouse.table_formats import MergedTable, MergeTransaction
from trinity_dbapi.tables import file_facts, managed
from trinity_dbapi.tables.datasets import without_unused_partitionings
from trinity_dbapi.tables.indices import merged_index_file
from trinity_dbapi.tables.layout import index_path
from trinity_dbapi.tables.metadata import (
    PARTITION_BY_KEY,
    PARTITION_SPECS_KEY,
    PARTITION_TRANSFORMS_KEY,
    DatasetMetadata,
)
from trinity_dbapi.tables.partitions import check_partition_by, earlier_specs, label_directories
from trinity_dbapi.tables.reader import FileReader, read_each

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tables.transforms import Transform

__all__ = ["LAST_COLUMN_ID", "merge_tables"]

#: The highest column ID a table ever had (written by ALTER TABLE in the SQL
#: engine, which this layer cannot import; the name is the same).
LAST_COLUMN_ID = "last_column_id"

#: Format properties the merge computes rather than merges key by key.
_COMPUTED = frozenset(
    {
        managed.METADATA_LOCATION,
        managed.DATASET_UUID,
        managed.MIXED_FILE_SCHEMAS,
        LAST_COLUMN_ID,
        PARTITION_COLUMNS,
        PARTITIONED_BY,
        PARTITION_TRANSFORMS,
    }
)
#: Dataset annotations the merge computes: the files' facts and the partitioning.
_COMPUTED_ANNOTATIONS = frozenset(
    {file_facts.FACTS_KEY, PARTITION_BY_KEY, PARTITION_SPECS_KEY, PARTITION_TRANSFORMS_KEY}
)
_KEY_FIELDS = ("distribution_keys", "sort_keys", "primary_key", "unique_columns")

V = TypeVar("V")
#: The base of an attribute added on both sides: equal to neither side's value.
_ADDED: Any = object()


def _shown(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, Column):
        return f"{value.name!r} {value.type.to_sql()}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return repr(value)


def _three_way(base: V, source: V, target: V) -> tuple[V, bool]:
    """The merged value and False, or the target's and True: both sides changed it differently."""
    if source in (target, base):
        return target, False
    if target == base:
        return source, False
    return target, True


def _merge_maps(
    base: Mapping[str, str],
    source: Mapping[str, str],
    target: Mapping[str, str],
    what: str,
    conflicts: list[str],
    skip: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """Merge string maps key by key (target's order, then the source's new keys)."""
    merged: dict[str, str] = {}
    for key in [*target, *(k for k in source if k not in target), *base]:
        if key in skip or key in merged:
            continue
        value, clash = _three_way(base.get(key), source.get(key), target.get(key))
        if clash:
            conflicts.append(
                f"{what} {key!r} was changed on both sides (to {_shown(source.get(key))} on "
                f"the source, {_shown(target.get(key))} on the target)"
            )
        if value is not None:
            merged[key] = value
    return merged


# -- columns -------------------------------------------------------------------------


def _merge_column(
    base: Column | None, source: Column, target: Column, conflicts: list[str]
) -> Column:
    """One column both sides have, added on both (``base`` None) or kept by both."""
    if source == target:
        return target
    if base is None and (source.name != target.name or source.type != target.type):
        conflicts.append(
            f"column ID {source.id} was added as {_shown(source)} on the source and as "
            f"{_shown(target)} on the target: the Parquet files of each side hold "
            "different columns under that ID"
        )
        return target
    changes: dict[str, Any] = {}
    for attribute in ("name", "type", "nullable", "comment"):
        # Added on both sides: every attribute must agree.
        old = _ADDED if base is None else getattr(base, attribute)
        new_source, new_target = getattr(source, attribute), getattr(target, attribute)
        value, clash = _three_way(old, new_source, new_target)
        if clash:
            shown = (new_source.to_sql(), new_target.to_sql()) if attribute == "type" else None
            left, right = shown or (_shown(new_source), _shown(new_target))
            conflicts.append(
                f"column {target.name!r} (ID {target.id}): its {attribute} was changed on both "
                f"sides (to {left} on the source, {right} on the target)"
            )
        changes[attribute] = value
    changes["properties"] = _merge_maps(
        {} if base is None else base.properties,
        source.properties,
        target.properties,
        f"property of column {target.name!r}",
        conflicts,
    )
    return dataclasses.replace(target, **changes)


def _merge_columns(
    base: TableDefinition, source: TableDefinition, target: TableDefinition, conflicts: list[str]
) -> tuple[Column, ...]:
    """The merged top-level columns: the target's order, then the source's new ones."""
    in_base = {c.id: c for c in base.columns}
    in_source = {c.id: c for c in source.columns}
    in_target = {c.id: c for c in target.columns}
    merged: list[Column] = []
    for column in target.columns:
        old = in_base.get(column.id)
        if column.id in in_source:
            merged.append(_merge_column(old, in_source[column.id], column, conflicts))
        elif old is None:
            merged.append(column)  # added on the target
        elif column != old:
            conflicts.append(
                f"column {old.name!r} (ID {old.id}) was dropped on the source and altered on "
                "the target"
            )
    for column in source.columns:
        if column.id in in_target:
            continue
        old = in_base.get(column.id)
        if old is None:
            merged.append(column)  # added on the source
        elif column != old:
            conflicts.append(
                f"column {old.name!r} (ID {old.id}) was dropped on the target and altered on "
                "the source"
            )
    by_name: dict[str, list[int]] = {}
    for column in merged:
        by_name.setdefault(column.name, []).append(column.id)
    for name, ids in by_name.items():
        if len(ids) > 1:
            conflicts.append(
                f"column {name!r} was added (or renamed) on both sides with different column "
                f"IDs ({', '.join(map(str, ids))}): each side's Parquet files name it by its own ID"
            )
    seen: dict[int, str] = {}
    for column in merged:
        for nested in column.walk():
            if nested.id in seen:
                conflicts.append(
                    f"column ID {nested.id} is used by both {seen[nested.id]!r} and "
                    f"{nested.name!r} after the merge (added on different sides)"
                )
            seen.setdefault(nested.id, nested.name)
    return tuple(merged)


def _last_column_id(*tables: TableDefinition) -> int:
    return max(
        max((c.id for t in tables for c in t.all_columns()), default=0),
        max(int(t.format_properties.get(LAST_COLUMN_ID, "0")) for t in tables),
    )


# -- partitioning --------------------------------------------------------------------


def _partitioning(table: TableDefinition) -> tuple[tuple[str, ...], dict[str, Transform]]:
    """What a table writes new files by: its partition columns and their transforms."""
    columns = tuple(table.partition_columns)
    transforms = managed.partition_transforms(table)
    return columns, {name: t for name, t in transforms.items() if name in columns}


_PARTITION_PROPERTIES = (PARTITION_COLUMNS, PARTITIONED_BY, PARTITION_TRANSFORMS)


def _partition_properties(table: TableDefinition) -> dict[str, str]:
    return {k: v for k, v in table.format_properties.items() if k in _PARTITION_PROPERTIES}


# -- data files ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Side:
    """One side's dataset state and the labels it added and removed since the base."""

    name: str
    table: TableDefinition
    meta: DatasetMetadata
    added: tuple[str, ...]
    removed: frozenset[str]


def _side(name: str, table: TableDefinition, meta: DatasetMetadata, base: DatasetMetadata) -> _Side:
    added = tuple(label for label in meta.partitions if label not in base.partitions)
    removed = frozenset(label for label in base.partitions if label not in meta.partitions)
    return _Side(name, table, meta, added, removed)


def _data_conflicts(
    base: TableDefinition, source: TableDefinition, target: TableDefinition
) -> list[str]:
    """Why the datasets of both sides cannot be merged file by file at all (empty: they can)."""
    sides = (("source", source), ("target", target))
    if any(managed.files_elsewhere(table) for table in (base, source, target)):
        return [
            (
                "its files stay in another store (a reference import, or a table read through an "
                "export), yet its dataset changed on both sides: merge it by hand"
            )
        ]
    uuid = base.format_properties.get(managed.DATASET_UUID) if managed.has_dataset(base) else None
    replaced = [
        side
        for side, table in sides
        if uuid is None or table.format_properties.get(managed.DATASET_UUID) != uuid
    ]
    if replaced:
        return [
            (
                f"it was replaced by a new table (a new dataset) on the {' and the '.join(replaced)}, "
                "while both sides changed it: their files cannot be matched"
            )
        ]
    return []


def _merged_partitions(
    base: DatasetMetadata, source: _Side, target: _Side, conflicts: list[str]
) -> dict[str, Mapping[str, str]]:
    for label in sorted(source.removed & target.removed):
        path = base.partitions[label]["table"]
        conflicts.append(f"file {path!r} was rewritten or deleted on both sides")
    partitions = {
        label: files
        for label, files in target.meta.partitions.items()
        if label not in source.removed
    }
    for label in source.added:
        partitions.setdefault(label, source.meta.partitions[label])
    return partitions


def _check_readable(moved: _Side, other: _Side, by: Sequence[str], conflicts: list[str]) -> None:
    """Conflicts for files ``other`` added in a partitioning ``moved``'s state no longer lists."""
    known = [list(by), *earlier_specs(moved.meta)]
    for label in other.added:
        if label_directories(label) not in known:
            conflicts.append(
                f"file {other.meta.partitions[label]['table']!r} was written on the {other.name} "
                f"partitioned by {label_directories(label)}, while the {moved.name} changed the "
                f"table's partitioning to {list(by)}"
            )


def _annotations(
    base: DatasetMetadata,
    source: _Side,
    target: _Side,
    shape: DatasetMetadata,
    conflicts: list[str],
) -> dict[str, str]:
    """The merged free annotations: each key three-way, the partitioning from ``shape``."""
    merged = _merge_maps(
        base.metadata,
        source.meta.metadata,
        target.meta.metadata,
        "dataset annotation",
        conflicts,
        _COMPUTED_ANNOTATIONS,
    )
    for key in (PARTITION_BY_KEY, PARTITION_TRANSFORMS_KEY, PARTITION_SPECS_KEY):
        if key in shape.metadata:
            merged[key] = shape.metadata[key]
    return merged


def _recorded_facts(
    meta: DatasetMetadata, source: _Side, target: _Side
) -> tuple[dict[str, file_facts.FileFacts], dict[str, file_facts.Bounds]]:
    """Each live file's facts and bounds as the side that has it recorded them."""
    facts: dict[str, file_facts.FileFacts] = {}
    bounds: dict[str, file_facts.Bounds] = {}
    for side in (source, target):  # the target's win where both know a file
        by_path = file_facts.recorded(side.meta)
        side_bounds = file_facts.recorded_bounds(side.meta)
        for label, files in side.meta.partitions.items():
            if label in meta.partitions and files["table"] in by_path:
                facts[label] = by_path[files["table"]]
                if label in side_bounds:
                    bounds[label] = side_bounds[label]
    return facts, bounds


def _merged_indices(
    storage: Storage,
    txn: MergeTransaction,
    table: TableDefinition,
    meta: DatasetMetadata,
    base: DatasetMetadata,
    source: _Side,
    target: _Side,
) -> dict[str, str]:
    """The merged index files by column, new ones staged in ``txn``."""
    columns = [
        *target.meta.indices,
        *(c for c in source.meta.indices if c not in target.meta.indices),
    ]
    live = set(meta.partitions)
    merged: dict[str, str] = {}
    for column in columns:
        if column in base.indices and not (
            column in source.meta.indices and column in target.meta.indices
        ):
            continue  # dropped on one side
        home, other = (target, source) if column in target.meta.indices else (source, target)
        home_path = home.meta.indices[column]
        if set(home.meta.partitions) == live:
            merged[column] = home_path  # it covers exactly the merged files
            continue
        parts: list[tuple[str, set[str]]] = [(home_path, live & set(home.meta.partitions))]
        missing = [label for label in meta.partitions if label not in home.meta.partitions]
        rows: dict[str, Any] = {}
        if column in other.meta.indices:
            parts.append((other.meta.indices[column], set(missing)))
        elif missing:
            schema, by = managed.schema(table), table.partition_columns
            reader = FileReader(storage, meta, schema, by, [column])
            rows = dict(zip(missing, read_each(reader, missing), strict=True))
        data = merged_index_file(storage, managed.schema(table), column, parts, rows)
        path = index_path(meta.dataset_uuid, column)
        txn.stage_file(path, data)
        merged[column] = path
    return merged


# -- the merge -----------------------------------------------------------------------


def merge_tables(
    txn: MergeTransaction,
    base: TableDefinition,
    source: TableDefinition,
    target: TableDefinition,
) -> MergedTable:
    """Merge ``source`` into ``target``, both changed since ``base`` (see the module docstring).

    Args:
        txn: the merge transaction on the target: the merged dataset
            metadata file and index files are staged in it.
        base: the table's definition at the merge base.
        source: its definition on the side merged in.
        target: its definition on the side merged into.

    Returns:
        The merged definition, or None and every conflict found (each naming
        the file, column or property and why), in a deterministic order.
    """
    changed = [
        f"it became a {table.table_format!r} table on the {side}: only a managed table of "
        f"the same dataset merges file by file"
        for side, table in (("source", source), ("target", target))
        if table.table_format != base.table_format
    ]
    if changed:
        return MergedTable(None, tuple(changed))
    conflicts: list[str] = []
    merged_fields: dict[str, Any] = {}
    for field in ("table_type", *_KEY_FIELDS):
        value, clash = _three_way(*(getattr(t, field) for t in (base, source, target)))
        if clash:
            conflicts.append(
                f"its {field} was changed on both sides (to {_shown(getattr(source, field))} on "
                f"the source, {_shown(getattr(target, field))} on the target)"
            )
        merged_fields[field] = value
    columns = _merge_columns(base, source, target, conflicts)
    properties = _merge_maps(
        base.properties, source.properties, target.properties, "table property", conflicts
    )
    format_properties = _merge_maps(
        base.format_properties,
        source.format_properties,
        target.format_properties,
        "format property",
        conflicts,
        _COMPUTED,
    )
    # The partitioning: a change on one side only is taken.
    shape_side = base
    layouts = [_partitioning(t) for t in (base, source, target)]
    if layouts[1] != layouts[0] and layouts[2] != layouts[0] and layouts[1] != layouts[2]:
        conflicts.append(
            f"its partitioning was changed on both sides (to {list(layouts[1][0])} on the "
            f"source, {list(layouts[2][0])} on the target)"
        )
    elif layouts[1] != layouts[0]:
        shape_side = source
    elif layouts[2] != layouts[0]:
        shape_side = target
    format_properties.update(_partition_properties(shape_side))
    last = _last_column_id(base, source, target)
    if last > max((c.id for col in columns for c in col.walk()), default=0) or any(
        LAST_COLUMN_ID in t.format_properties for t in (base, source, target)
    ):
        format_properties[LAST_COLUMN_ID] = str(last)
    if any(managed.MIXED_FILE_SCHEMAS in t.format_properties for t in (base, source, target)):
        format_properties[managed.MIXED_FILE_SCHEMAS] = "true"
    locations = [t.format_properties.get(managed.METADATA_LOCATION) for t in (base, source, target)]
    data_side: TableDefinition | None = None
    if locations[1] == locations[2] or locations[1] == locations[0]:
        data_side = target
    elif locations[2] == locations[0]:
        data_side = source
    if data_side is not None:
        # That side's dataset as it is, with the partitioning its definition
        # records for it (a partitioning change writes a new metadata file, so
        # a side that changed it is the data side; the other may only have
        # forgotten an earlier partitioning's transforms after a DELETE).
        for key in (managed.DATASET_UUID, managed.METADATA_LOCATION):
            if key in data_side.format_properties:
                format_properties[key] = data_side.format_properties[key]
        for key in _PARTITION_PROPERTIES:
            format_properties.pop(key, None)
        format_properties.update(_partition_properties(data_side))
    else:
        conflicts.extend(_data_conflicts(base, source, target))
    try:
        merged = target.replace(
            columns=columns,
            properties=properties,
            format_properties=format_properties,
            **merged_fields,
        )
    except Error as exc:
        if not conflicts:
            conflicts.append(f"the merged definition is not valid: {exc}")
        return MergedTable(None, tuple(conflicts))
    if conflicts:
        return MergedTable(None, tuple(conflicts))
    if data_side is None:
        storage = txn.lakehouse.storage
        return _merge_data(txn, storage, merged, base, source, target, shape_side)
    return MergedTable(_mixed(merged, (source, target)))


def _mixed(merged: TableDefinition, sides: Sequence[TableDefinition]) -> TableDefinition:
    """``merged`` reading files by column ID when some file may lack a merged column."""
    if managed.MIXED_FILE_SCHEMAS in merged.format_properties:
        return merged
    if all(tuple(side.columns) == tuple(merged.columns) for side in sides):
        return merged
    properties = {**merged.format_properties, managed.MIXED_FILE_SCHEMAS: "true"}
    return merged.replace(format_properties=properties)


def _merge_data(
    txn: MergeTransaction,
    storage: Storage,
    merged: TableDefinition,
    base: TableDefinition,
    source: TableDefinition,
    target: TableDefinition,
    shape_side: TableDefinition,
) -> MergedTable:
    """The merge of two changed datasets, file by file, staged in ``txn``."""
    conflicts: list[str] = []
    base_meta = managed.metadata(storage, base)
    theirs = _side("source", source, managed.metadata(storage, source), base_meta)
    ours = _side("target", target, managed.metadata(storage, target), base_meta)
    partitions = _merged_partitions(base_meta, theirs, ours, conflicts)
    shape = {id(source): theirs.meta, id(target): ours.meta}.get(id(shape_side), base_meta)
    by = merged.partition_columns
    if shape_side is source:
        _check_readable(theirs, ours, by, conflicts)
    elif shape_side is target:
        _check_readable(ours, theirs, by, conflicts)
    annotations = _annotations(base_meta, theirs, ours, shape, conflicts)
    if conflicts:
        return MergedTable(None, tuple(conflicts))
    uuid = {managed.DATASET_UUID: target.format_properties[managed.DATASET_UUID]}
    merged = merged.replace(format_properties={**merged.format_properties, **uuid})
    meta = DatasetMetadata(
        dataset_uuid=ours.meta.dataset_uuid,
        partitions=partitions,
        indices={},
        metadata=annotations,
        partition_keys=shape.partition_keys,
        sequence=max(theirs.meta.sequence, ours.meta.sequence),
    )
    meta, merged = without_unused_partitionings(meta, merged)
    facts, bounds = _recorded_facts(meta, theirs, ours)
    meta = file_facts.with_recorded(meta, facts, (), bounds)
    try:
        check_partition_by(managed.schema(merged), by, meta)
        indices = _merged_indices(storage, txn, merged, meta, base_meta, theirs, ours)
    except Error as exc:
        return MergedTable(None, (f"its merged dataset is not valid: {exc}",))
    meta = dataclasses.replace(meta, indices=indices)
    merged = _mixed(merged, (source, target))
    merged, location, data = managed.staged_metadata(storage, merged, meta)
    txn.stage_file(location, data)
    return MergedTable(merged)
