"""The live data files of a managed table, for ``system.data_files``.

The dataset metadata (seed 004) records each file's label and path and
nothing else, so the counts come from the files themselves: the Parquet
footer of each file (``num_rows``, the row groups) and its size, read with
ranged reads through the storage's Arrow file system (a footer and a size,
not the file), :data:`FOOTER_THREADS` files at a time. Data files are never
rewritten in place (a new file has a new UUID label), so what a footer says
is cached for the life of the process by ``(store root, path)``
(:data:`CACHE_ENTRIES` at most): a second query over the same version, or a
later one sharing most files, reads only the new files' footers. The
writer tells the cache what it wrote (:func:`remember`), so a process that
wrote a file never reads its footer back: compaction right after a thousand
small appends plans from memory.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.lakehouse.table_formats import register_data_files
from trinity_dbapi.tables import managed
from trinity_dbapi.tables.partitions import directory_texts, earlier_specs, partition_scalars

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.storage import Storage

__all__ = [
    "CACHE_ENTRIES",
    "FOOTER_THREADS",
    "FileFacts",
    "describe_files",
    "file_facts",
    "remember",
]

#: Footers read at the same time.
FOOTER_THREADS = 8
#: Files whose facts the process remembers (about 100 bytes each).
CACHE_ENTRIES = 200_000

#: ``(record_count, file_size_in_bytes, row_group_count)`` of one data file.
FileFacts = tuple[int, int, int]

_cache: dict[tuple[str, str], FileFacts] = {}
_lock = threading.Lock()


def _read_facts(storage: Storage, path: str) -> FileFacts:
    from trinity_dbapi.tables.reader import arrow_filesystem

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


def remember(storage: Storage, path: str, facts: FileFacts) -> None:
    """Record the facts of a data file this process just wrote (what its footer says)."""
    with _lock:
        if len(_cache) >= CACHE_ENTRIES:
            _cache.clear()
        _cache[(storage.root_uri, path)] = facts


def file_facts(storage: Storage, paths: Sequence[str]) -> list[FileFacts]:
    """The facts of each data file of ``paths`` (relative to ``storage``'s root), in order."""
    root = storage.root_uri
    with _lock:
        found = [_cache.get((root, path)) for path in paths]
    missing = [path for path, facts in zip(paths, found, strict=True) if facts is None]
    if missing:
        threads = min(FOOTER_THREADS, len(missing))
        with ThreadPoolExecutor(threads, thread_name_prefix="trinity-footer") as pool:
            read = dict(zip(missing, pool.map(lambda p: _read_facts(storage, p), missing)))
        with _lock:
            if len(_cache) + len(read) > CACHE_ENTRIES:
                _cache.clear()
            _cache.update({(root, path): facts for path, facts in read.items()})
        found = [facts if facts is not None else read[p] for p, facts in zip(paths, found)]
    return [facts for facts in found if facts is not None]


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
    facts = file_facts(store, list(files.values()))
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


register_data_files(managed.TABLE_FORMAT, describe_files)
