"""The live data files of a managed table, for ``system.data_files``.

Each file's counts (``num_rows``, its size, its row groups) come from what
is known of it (:mod:`~trinity_dbapi.tables.file_facts`: the dataset
metadata's ``trinity.file_facts``, then what this process wrote or read),
and for the files nothing is known of, from the Parquet footer of each,
read with ranged reads through the storage's Arrow file system (a footer
and a size, not the file), :data:`FOOTER_THREADS` files at a time; what a
footer says is remembered for the life of the process. Compaction plans
from the same facts: right after a thousand small appends it reads none.

Imports from tables/: file_facts, managed, partitions, reader.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.tables import file_facts as known_facts
from trinity_dbapi.tables import managed
from trinity_dbapi.tables.file_facts import FileFacts
from trinity_dbapi.tables.partitions import directory_texts, earlier_specs, partition_scalars
from trinity_dbapi.tables.reader import arrow_filesystem

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.storage import Storage

__all__ = [
    "FOOTER_THREADS",
    "FileFacts",
    "describe_files",
    "file_facts",
]

#: Footers read at the same time.
FOOTER_THREADS = 8


def _read_facts(storage: Storage, path: str) -> FileFacts:
    try:
        reached = arrow_filesystem(storage)
        if reached is None:  # a storage without ranged reads: the whole file
            data = storage.read(path)
            footer = pq.read_metadata(pa.BufferReader(data))
            return footer.num_rows, len(data), footer.num_row_groups
        filesystem, base = reached
        with filesystem.open_input_file(base + path) as handle:
            size = handle.size()
            footer = pq.read_metadata(handle)
        return footer.num_rows, size, footer.num_row_groups
    except (OSError, pa.ArrowInvalid) as exc:
        raise CorruptFileError(path, f"cannot read the Parquet footer of data file: {exc}") from exc


def file_facts(
    storage: Storage, paths: Sequence[str], recorded: dict[str, FileFacts] | None = None
) -> list[FileFacts]:
    """The facts of each data file of ``paths`` (relative to ``storage``'s root), in order.

    Args:
        storage: the store the files are in.
        paths: the files.
        recorded: what the dataset metadata records (path -> facts), if read.
    """
    found = dict(recorded or {})
    found.update(known_facts.cached(storage, (p for p in paths if p not in found)))
    missing = [path for path in dict.fromkeys(paths) if path not in found]
    if missing:
        threads = min(FOOTER_THREADS, len(missing))
        with ThreadPoolExecutor(threads, thread_name_prefix="trinity-footer") as pool:
            read = dict(zip(missing, pool.map(lambda p: _read_facts(storage, p), missing)))
        known_facts.remember(storage, read)
        found.update(read)
    return [found[path] for path in paths]


def _value_text(scalar: pa.Scalar) -> str | None:
    if not scalar.is_valid:
        return None
    if pa.types.is_binary(scalar.type) or pa.types.is_fixed_size_binary(scalar.type):
        return bytes(scalar.as_py()).hex()
    return str(pc.cast(scalar, pa.string()).as_py())


def describe_files(storage: Storage, table: TableDefinition) -> Iterator[dict[str, Any]]:
    """One row per live data file of this version of a managed table.

    ``file`` is the path under the lakehouse root; for a table imported with
    ``mode => 'reference'`` it is the file's URI in the store it stays in.
    """
    if not managed.has_dataset(table):
        return
    meta = managed.metadata(storage, table)
    files = meta.files()
    store = managed.data_storage(storage, table)
    facts = file_facts(store, list(files.values()), known_facts.recorded(meta))
    schema, by = managed.schema(table), table.partition_columns
    external = table.format_properties.get(managed.EXTERNAL_LOCATION)
    # Files written before ALTER TABLE ... SET PARTITIONED BY keep their own layout.
    earlier = earlier_specs(meta)
    for (label, path), (rows, size, groups) in zip(files.items(), facts, strict=True):
        values: dict[str, str | None] = {}
        if by or earlier:
            # Typed columns as their canonical text; transform directories as written.
            typed = partition_scalars(label, schema, by, earlier)
            values = {
                name: _value_text(typed[name]) if name in typed else text
                for name, text in directory_texts(label, by, earlier).items()
            }
        yield {
            "file": path if external is None else f"{external.rstrip('/')}/{path}",
            "file_format": "parquet",
            "label": label,
            "partition": label.rpartition("/")[0],
            "partition_values": list(values.items()),
            "record_count": rows,
            "file_size_in_bytes": size,
            "row_group_count": groups,
        }
