"""Reading datasets: an eager reference reader and a lazy pyarrow dataset.

:func:`read_table` reads the data files through the storage (so its cache and
counters apply), several at a time, and rebuilds each file's rows in the
table's exact schema: payload columns are matched by column ID (``trinity.id``
field metadata; by name when a field has none), columns a file lacks are NULL,
and partition columns are restored from the label with their declared types.

:func:`arrow_dataset` builds a ``pyarrow.dataset.FileSystemDataset`` over
exactly the listed files, one fragment per file whose partition expression
(``day == 2024-01-01 and region is null``) supplies the partition columns. It
reads lazily with projection and filter pushdown (DuckDB can scan it), and
prunes fragments by their partition expressions. It matches columns by name.

Imports from tables/: conform, layout, metadata, partitions; inside functions:
file_facts, remote_files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from trinity_dbapi.errors import CorruptFileError, NotSupportedError, ProgrammingError
from trinity_dbapi.format.type_mapping import ID_KEY
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.tables.conform import null_column
from trinity_dbapi.tables.layout import read_referenced
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.partitions import check_partition_by, earlier_specs, partition_scalars

if TYPE_CHECKING:
    import pyarrow.dataset as ds

__all__ = ["READ_THREADS", "arrow_dataset", "arrow_filesystem", "read_table"]

#: Data files read at the same time by :func:`read_table`.
READ_THREADS = 8


def _labels(meta: DatasetMetadata, labels: Iterable[str] | None) -> list[str]:
    if labels is None:
        return list(meta.partitions)
    chosen = list(labels)
    unknown = [label for label in chosen if label not in meta.partitions]
    if unknown:
        raise ProgrammingError(
            f"dataset {meta.dataset_uuid} has no partitions {unknown[:5]}"
            f"{' ...' if len(unknown) > 5 else ''}"
        )
    return chosen


def _field_id(field: pa.Field) -> bytes | None:
    return (field.metadata or {}).get(ID_KEY.encode())


#: Files up to this size are decoded on the calling thread (see :class:`FileReader`).
THREADED_READ_BYTES = 1 << 20


#: Called with a data file's path and Arrow schema before its rows are read;
#: raises to refuse the file (:func:`trinity_dbapi.tables.kartothek.check_file_columns`).
FileCheck = Callable[[str, pa.Schema], None]


class FileReader:
    """Reads one data file (by label) into the requested columns of the table schema.

    Not exported: :mod:`trinity_dbapi.tables.indices` uses it to read one column.
    """

    def __init__(
        self,
        storage: Storage,
        meta: DatasetMetadata,
        schema: pa.Schema,
        partition_by: Sequence[str],
        columns: Sequence[str],
        check: FileCheck | None = None,
    ) -> None:
        self.storage = storage
        self.meta = meta
        self.schema = schema
        self.partition_by = partition_by
        self.check = check
        self.out = pa.schema([schema.field(name) for name in columns])
        self._partitions: dict[str, dict[str, pa.Scalar]] = {}
        self._earlier = earlier_specs(meta)
        #: Files fetched up front (:meth:`fetch`), by path.
        self.held: dict[str, bytes] = {}

    def fetch(self, labels: Sequence[str]) -> None:
        """Fetch the files of ``labels`` side by side, up to a bound (a remote store's round)."""
        from trinity_dbapi.errors import Error
        from trinity_dbapi.tables import file_facts
        from trinity_dbapi.tables.remote_files import fetch_whole

        paths = [self.meta.partitions[label]["table"] for label in labels]
        sizes = file_facts.recorded_sizes(self.meta)
        try:
            self.held.update(fetch_whole(self.storage, paths, sizes))
        except Error:
            return  # each file is read again on its own, which names what is wrong

    def _partition(self, label: str) -> dict[str, pa.Scalar]:
        directory = label.rpartition("/")[0]
        found = self._partitions.get(directory)
        if found is None:
            found = partition_scalars(label, self.schema, self.partition_by, self._earlier)
            self._partitions[directory] = found
        return found

    def __call__(self, label: str) -> pa.Table:
        path = self.meta.partitions[label]["table"]
        try:
            raw = self.held.pop(path, None)
            if raw is None:
                raw = read_referenced(self.storage, path, f"dataset {self.meta.dataset_uuid}")
            parquet = pq.ParquetFile(pa.BufferReader(raw))
            if self.check is not None:
                self.check(path, parquet.schema_arrow)
            names = self._file_columns(parquet.schema_arrow)
            wanted = sorted({name for name in names.values() if name is not None})
            # Arrow's thread pool pays off on big files only: on a small one, handing
            # its columns to the pool cost 3x the decoding (1,000 one-row files:
            # 0.2 s against 0.06 s), and compaction reads many small files.
            data = parquet.read(columns=wanted, use_threads=len(raw) > THREADED_READ_BYTES)
        except (pa.ArrowException, OSError) as exc:
            raise CorruptFileError(path, f"not a readable Parquet file ({exc})") from exc
        rows = parquet.metadata.num_rows
        values = self._partition(label) if self.partition_by or self._earlier else {}
        arrays = []
        for field in self.out:
            if field.name in values:
                arrays.append(pa.repeat(values[field.name], rows))
            elif names[field.name] is None:
                arrays.append(null_column(rows, field.type))
            else:
                column = data.column(names[field.name])
                try:
                    arrays.append(column.cast(field.type))
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise CorruptFileError(
                        path, f"column {field.name!r} ({column.type}) is not a {field.type}: {exc}"
                    ) from exc
        return pa.Table.from_arrays(arrays, schema=self.out)

    def _file_columns(self, file_schema: pa.Schema) -> dict[str, str | None]:
        """Requested payload column -> the file's column holding it (None: absent)."""
        by_id = {_field_id(f): f.name for f in file_schema if _field_id(f) is not None}
        found: dict[str, str | None] = {}
        for field in self.out:
            # Partition columns too: a file of another partitioning holds them.
            field_id = _field_id(field)
            if field_id is not None and by_id:
                found[field.name] = by_id.get(field_id)
            else:
                found[field.name] = field.name if field.name in file_schema.names else None
        return found


def read_each(reader: Callable[[str], pa.Table], labels: Sequence[str]) -> list[pa.Table]:
    """``reader(label)`` for every label, :data:`READ_THREADS` at a time, in order."""
    if len(labels) <= 1:
        return [reader(label) for label in labels]
    with ThreadPoolExecutor(max_workers=min(READ_THREADS, len(labels))) as pool:
        return list(pool.map(reader, labels))


def read_table(
    storage: Storage,
    meta: DatasetMetadata,
    schema: pa.Schema,
    partition_by: Sequence[str],
    labels: Iterable[str] | None = None,
    columns: Sequence[str] | None = None,
    check: FileCheck | None = None,
) -> pa.Table:
    """Read partitions of the dataset into one table.

    Args:
        storage: the lakehouse storage.
        meta: the dataset state to read.
        schema: the table's full Arrow schema.
        partition_by: the partition columns.
        labels: the partitions to read, in this order (default: all, in dataset order).
        columns: the columns to return, in this order (default: all, in table order).
        check: called with each file's path and Arrow schema before its rows
            are read, to refuse a file (a Kartothek dataset's file whose columns
            are not the dataset's); None reads every file as it is.

    Returns:
        The rows of the partitions in order, with exactly the schema's fields
        (types, nullability, field metadata) for the requested columns.

    Raises:
        ProgrammingError: an unknown label or column.
        CorruptFileError: a data file that cannot be read as its column types.
    """
    tables = read_tables(storage, meta, schema, partition_by, labels, columns, check)
    if not tables:
        names = list(schema.names if columns is None else columns)
        return pa.schema([schema.field(name) for name in names]).empty_table()
    return pa.concat_tables(tables)


def read_tables(
    storage: Storage,
    meta: DatasetMetadata,
    schema: pa.Schema,
    partition_by: Sequence[str],
    labels: Iterable[str] | None = None,
    columns: Sequence[str] | None = None,
    check: FileCheck | None = None,
) -> list[pa.Table]:
    """:func:`read_table`, one table per partition (file) in the labels' order.

    A remote store's files are fetched together first, in one round where
    their sizes allow, as :func:`read_table` does.
    """
    check_partition_by(schema, partition_by, meta)
    chosen = _labels(meta, labels)
    names = list(schema.names if columns is None else columns)
    unknown = [name for name in names if schema.get_field_index(name) < 0]
    if unknown or len(set(names)) != len(names):
        raise ProgrammingError(
            f"columns {names} must be distinct columns of the table {schema.names}"
        )
    reader = FileReader(storage, meta, schema, partition_by, names, check)
    if storage.local_root is not None:
        # The threads overlap a remote store's latency. On local disk a read is
        # CPU work that holds the GIL between Arrow calls, and Arrow decodes a big
        # file on its own pool: 8 threads made 1,000 small files 3x slower.
        tables = [reader(label) for label in chosen]
    else:
        reader.fetch(chosen)
        tables = read_each(reader, chosen)
    return tables


def _filesystem(storage: Storage) -> tuple[Any, str]:
    """An Arrow file system reaching the storage's files, and the root's path on it.

    A local root is read by Arrow itself. Any other store is read through
    the storage (:mod:`trinity_dbapi.tables.remote_files`).
    """
    from trinity_dbapi.tables.remote_files import filesystem

    local_root = storage.local_root
    if local_root is not None:
        return pafs.LocalFileSystem(), local_root + "/"
    return filesystem(storage), ""


def arrow_filesystem(storage: Storage) -> tuple[Any, str] | None:
    """:func:`_filesystem`, or None for a storage without an Arrow file system."""
    try:
        return _filesystem(storage)
    except NotSupportedError:
        return None


def _partition_expression(scalars: dict[str, pa.Scalar]) -> ds.Expression:
    import pyarrow.dataset as ds

    expression = ds.scalar(True)
    for name, value in scalars.items():
        term = ds.field(name) == value if value.is_valid else ds.field(name).is_null()
        expression = expression & term
    return expression


def arrow_dataset(
    storage: Storage,
    meta: DatasetMetadata,
    schema: pa.Schema,
    partition_by: Sequence[str],
    labels: Iterable[str] | None = None,
) -> ds.FileSystemDataset:
    """A lazy pyarrow dataset over exactly the given partitions' files.

    Args:
        storage: a storage with a local root or an fsspec file system (memory, S3, ...).
        meta: the dataset state to read.
        schema: the table's full Arrow schema (the dataset's schema).
        partition_by: the partition columns.
        labels: the partitions (default: all).

    Raises:
        ProgrammingError: an unknown label.
        NotSupportedError: a storage without an Arrow file system.
    """
    import pyarrow.dataset as ds

    check_partition_by(schema, partition_by, meta)
    chosen = _labels(meta, labels)
    earlier = earlier_specs(meta)
    paths = [meta.partitions[label]["table"] for label in chosen]
    filesystem, base = _filesystem(storage)
    expressions: dict[str, ds.Expression] = {}
    partitions = []
    for label in chosen:
        directory = label.rpartition("/")[0]
        if directory not in expressions:
            scalars = (
                partition_scalars(label, schema, partition_by, earlier)
                if partition_by or earlier
                else {}
            )
            expressions[directory] = _partition_expression(scalars)
        partitions.append(expressions[directory])
    parquet = ds.ParquetFileFormat()
    if storage.local_root is not None:
        return ds.FileSystemDataset.from_paths(
            [base + path for path in paths],
            schema=schema,
            format=parquet,
            filesystem=filesystem,
            partitions=partitions,
        )
    # A remote store's files are fetched first, in as few rounds as their sizes
    # allow, and scanned from memory: no Arrow thread calls back into Python,
    # which a scanner DuckDB drives while holding the interpreter lock would
    # wait for forever (pyarrow 26 with DuckDB: a hang, not an error).
    from trinity_dbapi.tables import file_facts
    from trinity_dbapi.tables.remote_files import fetch_whole

    # The sizes the facts record let a big file be read in one round of ranges.
    sizes = file_facts.recorded_sizes(meta)
    held = fetch_whole(storage, paths, sizes)
    fragments = [
        parquet.make_fragment(pa.py_buffer(held[path]), partition_expression=expression)
        if path in held
        else parquet.make_fragment(base + path, filesystem, partition_expression=expression)
        for path, expression in zip(paths, partitions, strict=True)
    ]
    return ds.FileSystemDataset(fragments, schema=schema, format=parquet, filesystem=filesystem)
