"""Writing datasets: create one, write its schema file, write data files.

:func:`write_data` streams: it takes the input in chunks (a
``RecordBatchReader`` is never read whole), conforms each chunk to the schema,
splits it by partition values and appends each piece to that partition's open
Parquet file. A file is closed and stored once it holds ``target_rows_per_file``
rows, or at the end. Files are written under fresh UUID names, so nothing is
visible to readers until a metadata file listing them is committed; a failed
write leaves only unreferenced files, which garbage collection removes. With
``background=True`` (the SQL engine's writes) they are created with
:meth:`Storage.create_unique_later`: the commit that lists them waits for
them just before its root is created (a failed upload fails that commit).

Parquet files: zstd compression, row groups of :data:`ROW_GROUP_ROWS` rows, and
the Arrow schema stored in the file (``store_schema``), so every type and the
field metadata (``trinity.type``, ``trinity.id``, ``PARQUET:field_id``)
round-trip. Partition columns are left out of the payload: their values are in
the file's directory names.

Imports from tables/: conform, encode_lanes, encoding, file_facts, layout, metadata,
partitions, transforms, value_bounds.
"""

from __future__ import annotations

import io
import itertools
import json
from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.tables import file_facts, layout, value_bounds
from trinity_dbapi.tables.conform import Conformer
from trinity_dbapi.tables.encode_lanes import THREADS, Lane, Lanes
from trinity_dbapi.tables.encoding import DICTIONARY_PAGE_LIMIT, dictionary_columns
from trinity_dbapi.tables.metadata import (
    PARTITION_BY_KEY,
    PARTITION_TRANSFORMS_KEY,
    DatasetMetadata,
)
from trinity_dbapi.tables.partitions import (
    check_partition_by,
    directory_of,
    new_label,
    recorded_transforms,
)
from trinity_dbapi.tables.transforms import Transform, dumps

__all__ = [
    "CHUNK_ROWS",
    "ROW_GROUP_ROWS",
    "new_dataset",
    "pandas_metadata",
    "parquet_bytes",
    "write_common_metadata",
    "write_data",
]

#: Rows per Parquet row group.
ROW_GROUP_ROWS = 128 * 1024
#: Input is processed in chunks of about this many rows (batches are coalesced,
#: tables sliced), which bounds the memory a write needs beyond open files.
CHUNK_ROWS = 256 * 1024

#: Dictionary pages up to 64 KiB: low-cardinality columns stay dictionary
#: encoded, high-cardinality ones (ids, names) fall back to plain encoding
#: early instead of filling a dictionary per 128K-row group (measured on a
#: 1M-row frame: 2.6x faster to write and a third of the size of pyarrow's
#: default 1 MiB limit at this row group size). Data files skip the attempt
#: for columns that would overflow it at once (:mod:`.encoding`).
_PARQUET_OPTIONS = {
    "compression": "zstd",
    "store_schema": True,
    "dictionary_pagesize_limit": DICTIONARY_PAGE_LIMIT,
}


def parquet_bytes(table: pa.Table, *, row_group_rows: int = ROW_GROUP_ROWS) -> bytes:
    """``table`` as a zstd-compressed Parquet file that stores its Arrow schema."""
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=row_group_rows, **_PARQUET_OPTIONS)
    return sink.getvalue()


def _pandas_type(t: pa.DataType) -> str:
    """pandas' logical type name of an Arrow type, as pyarrow's ``from_pandas`` writes it."""
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return str(t.to_pandas_dtype().__name__)
    if pa.types.is_decimal(t):
        return "decimal"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "unicode"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "bytes"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_time(t):
        return "time"
    if pa.types.is_timestamp(t):
        return "datetimetz" if t.tz is not None else "datetime"
    return "object"


def pandas_metadata(schema: pa.Schema) -> bytes:
    """The ``pandas`` schema metadata of ``schema``: no index, every column by name.

    plateau's ``read_table`` builds its empty frame from ``_common_metadata``
    and needs this key (it fails with ``TypeError`` without it); Kartothek
    5.3 reads it too. ``numpy_type`` is ``object`` for every column, so
    pyarrow never turns a column into a pandas extension type on its account:
    the Arrow types alone decide how each column converts.
    """
    columns = []
    for field in schema:
        tz = getattr(field.type, "tz", None)
        columns.append(
            {
                "name": field.name,
                "field_name": field.name,
                "pandas_type": _pandas_type(field.type),
                "numpy_type": "object",
                "metadata": {"timezone": tz} if tz is not None else None,
            }
        )
    document = {
        "index_columns": [],
        "column_indexes": [],
        "columns": columns,
        "creator": {"library": "trinity-dbapi"},
        "pandas_version": "1.3.5",
    }
    return json.dumps(document).encode()


def common_metadata_file(dataset_uuid: str, schema: pa.Schema) -> tuple[str, bytes]:
    """The path and bytes of :func:`write_common_metadata`'s file."""
    metadata = {**(schema.metadata or {}), b"pandas": pandas_metadata(schema)}
    data = parquet_bytes(schema.with_metadata(metadata).empty_table())
    return layout.common_metadata_path(dataset_uuid), data


def write_common_metadata(
    storage: Storage, dataset_uuid: str, schema: pa.Schema, *, create: bool = False
) -> str:
    """Write ``<uuid>/table/_common_metadata``: an empty Parquet file of ``schema``.

    It holds the latest schema of the table, partition columns included, and
    its :func:`pandas_metadata`, for readers outside TrinityLake; TrinityLake itself takes the schema from the
    table definition and never reads it. After a schema change, call this once
    the lakehouse commit succeeded (best effort, like the latest-version hint).

    Args:
        storage: the lakehouse storage.
        dataset_uuid: the dataset.
        schema: the full Arrow schema of the table.
        create: create the file (a new dataset) instead of overwriting it.

    Returns:
        The file's path.
    """
    path, data = common_metadata_file(dataset_uuid, schema)
    if create:
        storage.create_unique(path, data)
    else:
        storage.write(path, data)
    return path


def new_dataset(
    storage: Storage,
    schema: pa.Schema,
    partition_by: Sequence[str],
    transforms: Sequence[Transform] = (),
    *,
    dataset_uuid: str | None = None,
) -> DatasetMetadata:
    """Start a new, empty dataset: write its ``_common_metadata``, return its metadata.

    ``dataset_uuid`` is the new dataset's UUID (a fresh one when None: a
    managed table's is chosen first, to claim it before any file is written).

    The metadata is not written; :func:`~trinity_dbapi.tables.metadata_io.write_metadata`
    does that as part of a commit. It records ``partition_by`` under
    ``trinity.partition_by`` (a JSON list) and the transform partitions
    among them under ``trinity.partition_transforms``.

    Raises:
        ProgrammingError: ``partition_by`` names unknown or repeated columns.
        NotSupportedError: a partition column of a nested type, a transform
            of a column it does not take.
    """
    by_name = {t.name: t for t in transforms}
    check_partition_by(schema, partition_by, transforms=by_name)
    if dataset_uuid is None:
        dataset_uuid = layout.new_dataset_uuid()
    common = schema  # plus each transform's directory, as Kartothek types partition keys
    for t in transforms:
        common = common.append(pa.field(t.name, t.result_type(schema.field(t.source).type)))
    write_common_metadata(storage, dataset_uuid, common, create=True)
    metadata = {PARTITION_BY_KEY: json.dumps(list(partition_by), separators=(",", ":"))}
    if transforms:
        metadata[PARTITION_TRANSFORMS_KEY] = dumps(transforms)
    return DatasetMetadata(dataset_uuid=dataset_uuid, partitions={}, metadata=metadata)


class _OpenFile:
    """One partition's Parquet file being written into memory.

    Its first rows decide which columns are dictionary encoded. Full row
    groups of a big file are encoded on its lane (:mod:`.encode_lanes`),
    so the files of one write encode side by side; a file that never fills
    a row group is encoded on the calling thread when it closes.
    """

    def __init__(self, schema: pa.Schema, first: pa.Table, lanes: Lanes) -> None:
        self.sink = io.BytesIO()
        self.schema = schema
        self.first: pa.Table | None = first
        #: Made by the first encoding step (on the lane, for a big file), which
        #: also samples the first rows for the dictionary choice.
        self.writer: pq.ParquetWriter | None = None
        self.rows = 0
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self._lanes = lanes
        self.lane: Lane | None = None

    def add(self, table: pa.Table) -> int:
        """Buffer ``table``; return how many rows this encoded (a full row group, or 0)."""
        self.pending.append(table)
        self.pending_rows += table.num_rows
        self.rows += table.num_rows
        return self.flush(background=True) if self.pending_rows >= ROW_GROUP_ROWS else 0

    def flush(self, *, background: bool = False) -> int:
        """Encode the buffered rows (on the lane if ``background``); return how many."""
        flushed = self.pending_rows
        if self.pending:
            table = pa.concat_tables(self.pending)
            self.pending, self.pending_rows = [], 0
            if background:
                if self.lane is None:
                    self.lane = self._lanes.lane()
                self.lane.submit(lambda: self._encode(table))
            else:
                self._encode(table)
        return flushed

    def _parquet_writer(self) -> pq.ParquetWriter:
        if self.writer is None:
            assert self.first is not None
            use_dictionary = dictionary_columns(self.first)
            self.writer = pq.ParquetWriter(
                self.sink, self.schema, use_dictionary=use_dictionary, **_PARQUET_OPTIONS
            )
            self.first = None
        return self.writer

    def _encode(self, table: pa.Table) -> None:
        self._parquet_writer().write_table(table, row_group_size=ROW_GROUP_ROWS)

    def close(self) -> tuple[bytes, int]:
        """The file's bytes, and how many rows closing it encoded (run after its lane's steps)."""
        flushed = self.flush()
        self._parquet_writer().close()
        return self.sink.getvalue(), flushed

    def footer(self) -> pq.FileMetaData | None:
        """The closed file's footer, as the writer made it (None: unknown)."""
        return getattr(getattr(self.writer, "writer", None), "metadata", None)


class _Sink:
    """Routes pieces of data to per-partition files and stores full files.

    ``progress`` is told how many rows are written so far: encoded into a
    file, and for a file's last rows, stored. Counting rows as they are only
    routed would reach the total before the work does: a partition's rows
    wait in memory until a row group is full or its file closes.
    """

    def __init__(
        self,
        storage: Storage,
        dataset_uuid: str,
        schema: pa.Schema,
        target: int,
        progress: Callable[[int], None] | None = None,
    ):
        self.storage = storage
        self.dataset_uuid = dataset_uuid
        self.schema = schema
        self.target = target
        self.progress = progress
        self.written = 0
        self.open: dict[str, _OpenFile] = {}
        self.files: dict[str, str] = {}
        self.lanes = Lanes()
        #: Files closing on their lanes, in the order they were closed.
        self.closing: list[tuple[str, _OpenFile]] = []
        #: Leave the stores running for the commit to settle (write_data's ``background``).
        self.background = False

    def add(self, directory: str, table: pa.Table) -> None:
        while table.num_rows:
            part = self.open.get(directory)
            if part is None:
                part = self.open[directory] = _OpenFile(self.schema, table, self.lanes)
            take = min(table.num_rows, self.target - part.rows)
            self._wrote(part.add(table.slice(0, take)))
            table = table.slice(take)
            if part.rows >= self.target:
                self.finish(directory)

    def finish(self, directory: str) -> None:
        part = self.open.pop(directory)
        label = new_label(directory)
        path = layout.data_file_path(self.dataset_uuid, label)
        self.files[label] = path
        if part.lane is None:
            self._store(path, part, part.close())
            return
        # A big file is closed on its lane, after its row groups; it is
        # stored on this thread (the storage's counters are not shared).
        part.lane.submit(part.close)
        self.closing.append((path, part))
        self._store_closed()

    def _store_closed(self, *, every: bool = False) -> None:
        """Store closed files, oldest first (all of them if ``every``).

        Those whose lane is done are stored, and the oldest are waited for
        while more than :data:`~.encode_lanes.THREADS` are closing, so a long
        streamed write holds only a few finished files' bytes in memory.
        """
        while self.closing:
            path, part = self.closing[0]
            assert part.lane is not None
            if not (every or part.lane.idle.is_set() or len(self.closing) > THREADS):
                return
            self.closing.pop(0)
            self._store(path, part, part.lane.wait())

    def _store(self, path: str, part: _OpenFile, closed: tuple[bytes, int]) -> None:
        data, flushed = closed
        if self.background:
            # The commit settles it before its root: the file's upload
            # overlaps the next file's encoding and the metadata's.
            self.storage.create_unique_later(path, data)
        else:
            self.storage.create_unique(path, data)
        footer = part.footer()
        if footer is not None:
            file_facts.remember(
                self.storage,
                {path: (part.rows, len(data), footer.num_row_groups)},
                {path: value_bounds.from_footer(self.schema, footer)},
            )
        self._wrote(flushed)

    def _wrote(self, rows: int) -> None:
        self.written += rows
        if rows and self.progress is not None:
            self.progress(self.written)

    def close(self) -> None:
        """Close every file and wait until all are stored (the first error is raised)."""
        try:
            for directory in list(self.open):
                self.finish(directory)
            self._store_closed(every=True)
        finally:
            self.lanes.close()

    def abandon(self) -> None:
        """After an error: wait for the lanes' threads (the files stay unreferenced)."""
        self.lanes.close()


def _chunks(data: pa.Table | pa.RecordBatch | pa.RecordBatchReader) -> Iterator[pa.Table]:
    """The input as tables of about :data:`CHUNK_ROWS` rows, never reading a reader whole."""
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if isinstance(data, pa.Table):
        for start in range(0, data.num_rows, CHUNK_ROWS):
            yield data.slice(start, CHUNK_ROWS)
        return
    if not isinstance(data, pa.RecordBatchReader):
        raise ProgrammingError(
            f"data must be a pyarrow Table, RecordBatch or RecordBatchReader, not "
            f"{type(data).__name__}"
        )
    batches: list[pa.RecordBatch] = []
    rows = 0
    for batch in data:
        batches.append(batch)
        rows += batch.num_rows
        if rows >= CHUNK_ROWS:
            yield pa.Table.from_batches(batches, schema=data.schema)
            batches, rows = [], 0
    if rows:
        yield pa.Table.from_batches(batches, schema=data.schema)


#: The signed integer type a float's bits are viewed as (its sign is theirs).
_SAME_WIDTH_INT = {16: pa.int16(), 32: pa.int32(), 64: pa.int64()}


def _negative_zero(column: pa.Array) -> pa.Array:
    """Whether each value of a float column is -0.0 (False for NULL).

    Arrow compares and sorts -0.0 as equal to 0.0, but they are two partition
    values (directories ``-0`` and ``0``): the sign bit tells them apart.
    """
    bits = column.view(_SAME_WIDTH_INT[column.type.bit_width])
    return pc.fill_null(pc.and_(pc.equal(column, 0), pc.less(bits, 0)), False)


def _changes(column: pa.Array) -> pa.Array:
    """Whether each value of a sorted column differs from the one before (NULL = NULL, NaN = NaN).

    -0.0 differs from 0.0 (:func:`_negative_zero`).
    """
    after, before = column.slice(1), column.slice(0, len(column) - 1)
    differ = pc.fill_null(pc.not_equal(after, before), True)
    both_null = pc.and_(after.is_null(), before.is_null())
    same = both_null
    if pa.types.is_floating(column.type):
        same = pc.or_(same, pc.fill_null(pc.and_(pc.is_nan(after), pc.is_nan(before)), False))
        negative = _negative_zero(column)
        signs = pc.not_equal(negative.slice(1), negative.slice(0, len(column) - 1))
        differ = pc.or_(differ, signs)
    return pc.and_(differ, pc.invert(same))


def _split(table: pa.Table, partition_by: Sequence[str]) -> Iterator[tuple[str, pa.Table]]:
    """Pieces of ``table`` per partition directory, in partition value order (NULL last).

    Rows keep their order within a piece: a stable sort by the partition
    columns, one ``take``, then a slice per run of equal values.
    """
    if not partition_by or not table.num_rows:
        yield "", table
        return
    keys = table.select(list(partition_by)).combine_chunks()
    # Sort keys by position: Arrow reads a sort key name as a field path, so
    # a column named "." or "a.b" would not be found by its name.
    positions = [f"k{i}" for i in range(keys.num_columns)]
    named = keys.rename_columns(positions)
    sort_keys = []
    for key, column in zip(positions, keys.columns, strict=True):
        sort_keys.append((key, "ascending"))
        if pa.types.is_floating(column.type):
            # -0.0 sorts as 0.0: its flag keeps each zero's rows in one run.
            named = named.append_column(f"{key}z", _negative_zero(column.combine_chunks()))
            sort_keys.append((f"{key}z", "descending"))
    order = pc.sort_indices(named, sort_keys=sort_keys)
    keys = keys.take(order)
    change = None
    for column in keys.columns:
        differs = _changes(column.chunk(0) if column.num_chunks == 1 else column.combine_chunks())
        change = differs if change is None else pc.or_(change, differs)
    assert change is not None
    starts = [0, *(i + 1 for i in pc.indices_nonzero(change).to_pylist()), table.num_rows]
    ordered = table if len(starts) == 2 else table.take(order)
    for start, end in itertools.pairwise(starts):
        directory = directory_of(partition_by, [column[start] for column in keys.columns])
        yield directory, ordered.slice(start, end - start)


def write_data(
    storage: Storage,
    meta: DatasetMetadata,
    schema: pa.Schema,
    partition_by: Sequence[str],
    data: pa.Table | pa.RecordBatch | pa.RecordBatchReader,
    *,
    target_rows_per_file: int = 1_000_000,
    progress: Callable[[int], None] | None = None,
    background: bool = False,
) -> dict[str, str]:
    """Write ``data`` into new data files of the dataset; return ``{label: path}``.

    The metadata is not changed: pass the result to
    :meth:`DatasetMetadata.with_partitions` and commit.

    Args:
        storage: the lakehouse storage.
        meta: the dataset (its UUID names the files).
        schema: the table's full Arrow schema (``type_mapping.arrow_schema``).
        partition_by: the partition columns, outermost directory first.
        data: rows to write; columns matched to ``schema`` by name, missing
            nullable columns filled with NULLs.
        target_rows_per_file: a partition's file is closed at this many rows.
        progress: called with the number of rows written so far, as rows are
            encoded into files; its last call, after the last file is
            stored, gives every row.
        background: leave the files' creates running
            (:meth:`Storage.create_unique_later`) for a commit through this
            same storage to settle before its root; otherwise every file is
            stored when this returns (a Spark task's files, which another
            process commits).

    Returns:
        The new files, label -> path, in the order they were closed.

    Raises:
        ProgrammingError: unknown input columns, bad ``partition_by``.
        IntegrityError: a NULL in a NOT NULL column (named).
        DataError: a value that does not fit its column (named), or a
            partition value that cannot be put in a file name.
    """
    check_partition_by(schema, partition_by, meta)
    if target_rows_per_file < 1:
        raise ProgrammingError(f"target_rows_per_file must be positive, not {target_rows_per_file}")
    transforms = recorded_transforms(meta)
    conform = Conformer(schema)
    payload = pa.schema([field for field in schema if field.name not in partition_by])
    if isinstance(data, (pa.Table, pa.RecordBatch)) and not partition_by:
        # Files of equal size rather than full ones and a runt (1,050,000 rows:
        # two of 525,000, not 1,000,000 and 50,000), which also encode side by side.
        count = -(-data.num_rows // target_rows_per_file)
        if count > 1:
            target_rows_per_file = -(-data.num_rows // count)
    sink = _Sink(storage, meta.dataset_uuid, payload, target_rows_per_file, progress)
    sink.background = background
    try:
        for chunk in _chunks(data):
            table = conform(chunk)
            # A transform's values are a column only while the rows are split.
            for name, transform in transforms.items():
                if name in partition_by:  # not those of earlier partitionings
                    table = table.append_column(
                        name, transform.apply(table.column(transform.source))
                    )
            for directory, piece in _split(table, partition_by):
                sink.add(directory, piece.drop_columns(list(partition_by)))
    except BaseException:
        sink.abandon()
        raise
    sink.close()
    return sink.files
