"""Rewriting a managed table's small data files into fewer, larger ones.

The data half of ``CALL system.rewrite_data_files`` (the SQL half, which
names the table, evaluates ``where`` and commits, is
:mod:`trinity_dbapi.sql.engine.rewrite_files`).

Planning (:func:`plan`) works per partition (the label's directories): the
files smaller than the target size are *candidates*; a partition with fewer
than ``min_input_files`` candidates is left alone. The candidates are packed,
in dataset order (the order they were written), into groups by next fit:
a group is closed as soon as its files reach the target size. Each group of
two or more files becomes one new file holding its rows in the same order
(:func:`rewrite`); a group of one file is left as it is. Sizes are the files'
sizes on storage (:mod:`~trinity_dbapi.tables.data_files`), so a new file is
near the target only as far as the encoding of the concatenated rows is as
compact as that of the parts (usually a little more compact).

The change is staged with :func:`~trinity_dbapi.tables.datasets.change_files`:
a merge that removes exactly the files read and adds the new ones, with the
index entries of both, so an append committed meanwhile stays, and a
concurrent DELETE or UPDATE of a file read makes the commit conflict.

Imports from tables/: data_files, datasets, file_facts, managed, metadata, reader,
writer.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.tables import datasets, managed
from trinity_dbapi.tables import file_facts as known_facts
from trinity_dbapi.tables.data_files import file_facts
from trinity_dbapi.tables.reader import read_table
from trinity_dbapi.tables.writer import write_data

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.lakehouse.objects import ObjectOperations
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tables.metadata import DatasetMetadata

__all__ = ["DEFAULT_TARGET_FILE_SIZE", "Compaction", "Group", "plan", "rewrite"]

#: ``target_file_size_bytes`` when none is given: 128 MiB, as Iceberg's default.
DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024


@dataclass(frozen=True)
class Group:
    """Files of one partition to be rewritten into one file.

    Attributes:
        partition: the labels' directories (``day=2024-01-01``; empty if unpartitioned).
        labels: the files' labels, in dataset order.
        rows: their rows in all.
        size: their bytes in all.
    """

    partition: str
    labels: tuple[str, ...]
    rows: int
    size: int


@dataclass(frozen=True)
class Compaction:
    """What a rewrite did: files and bytes before and after."""

    files_rewritten: int
    files_added: int
    rows: int
    bytes_before: int
    bytes_after: int


def _check(target_size: int, min_input_files: int) -> None:
    if target_size < 1:
        raise ProgrammingError(
            f"target_file_size_bytes must be positive, not {target_size}; "
            f"the default is {DEFAULT_TARGET_FILE_SIZE} (128 MiB)"
        )
    if min_input_files < 2:
        raise ProgrammingError(
            f"min_input_files must be 2 or more, not {min_input_files}: one file is "
            "never rewritten into one file"
        )


def plan(
    storage: Storage,
    meta: DatasetMetadata,
    *,
    target_size: int,
    min_input_files: int = 2,
    partitions: Collection[str] | None = None,
) -> list[Group]:
    """The groups of files to rewrite, in dataset order.

    Args:
        storage: where the data files are.
        meta: the dataset state.
        target_size: the size in bytes a new file should come near.
        min_input_files: a partition with fewer small files is left alone.
        partitions: only these partitions (label directories); None: all.
    """
    _check(target_size, min_input_files)
    files = meta.files()
    recorded = known_facts.recorded(meta)
    facts = dict(zip(files, file_facts(storage, list(files.values()), recorded), strict=True))
    small: dict[str, list[str]] = {}
    for label in files:
        directory = label.rpartition("/")[0]
        if partitions is not None and directory not in partitions:
            continue
        if facts[label][1] < target_size:
            small.setdefault(directory, []).append(label)
    groups: list[Group] = []
    for directory, labels in small.items():
        if len(labels) < min_input_files:
            continue
        packed: list[list[str]] = [[]]
        filled = 0  # the bytes in packed[-1]: summing it again per file was quadratic
        for label in labels:
            if filled >= target_size:
                packed.append([])
                filled = 0
            packed[-1].append(label)
            filled += facts[label][1]
        for group in packed:
            if len(group) > 1:
                rows = sum(facts[x][0] for x in group)
                size = sum(facts[x][1] for x in group)
                groups.append(Group(directory, tuple(group), rows, size))
    return groups


def rewrite(
    view: ObjectOperations,
    storage: Storage,
    namespace: str,
    table: TableDefinition,
    groups: Sequence[Group],
    *,
    each_file: Callable[[int], None] | None = None,
    read: Callable[[Sequence[str]], pa.Table | None] | None = None,
) -> Compaction:
    """Write one new file per group and stage the change in ``view`` (not committed).

    Args:
        view: the transaction that stages the change.
        storage: the lakehouse storage.
        namespace: the table's namespace.
        table: the table's definition in the version planned from.
        groups: from :func:`plan` over that version.
        each_file: called with the number of input files done so far.
        read: reads a group's files (by label, in order) into the table's
            exact schema faster than :func:`read_table`, or returns None to
            leave them to it (the SQL layer passes its DuckDB's ``read_parquet``).

    Raises:
        NotSupportedError: a table imported with ``mode => 'reference'``.
    """
    where = f"{namespace}.{table.name}"
    managed.require_own_files(table, where, "rewriting data files")
    meta = managed.metadata(storage, table)
    schema, by = managed.schema(table), table.partition_columns
    added: dict[str, str] = {}
    added_rows: dict[str, pa.Table] = {}
    removed: list[str] = []
    done = rows = before = 0
    for group in groups:
        data = read(group.labels) if read is not None else None
        if data is None:
            data = read_table(storage, meta, schema, by, labels=group.labels)
        # One file per group: the rows stay in the order they were read.
        files = write_data(storage, meta, schema, by, data, target_rows_per_file=data.num_rows + 1)
        for label in files:
            added_rows[label] = data
        added.update(files)
        removed.extend(group.labels)
        rows += data.num_rows
        before += group.size
        done += len(group.labels)
        if each_file is not None:
            each_file(done)
    after = sum(size for _, size, _ in file_facts(storage, list(added.values())))
    if removed:
        datasets.change_files(
            view,
            storage,
            namespace,
            table.name,
            added=added,
            added_rows=added_rows,
            removed=removed,
            columns=table.columns,
        )
    return Compaction(len(removed), len(added), rows, before, after)
