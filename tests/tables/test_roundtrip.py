"""write_data -> read_table / arrow_dataset: every type, partition types, errors, streaming."""

from __future__ import annotations

import datetime
import decimal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from tests.tables.helpers import (
    D,
    Ids,
    every_type_columns,
    reader_of,
    sample_table,
    simple_schema,
    table_schema,
)
from trinity_dbapi.errors import CorruptFileError, DataError, IntegrityError, ProgrammingError
from trinity_dbapi.format.definitions.types import UNBOUNDED_LENGTH
from trinity_dbapi.format.type_mapping import columns_from_schema
from trinity_dbapi.storage import Storage
from trinity_dbapi.tables import writer
from trinity_dbapi.tables.layout import common_metadata_path
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.reader import arrow_dataset, read_table
from trinity_dbapi.tables.writer import new_dataset, write_common_metadata, write_data

UTC = datetime.timezone.utc


def _write(
    storage: Storage, schema: pa.Schema, by: list[str], data: object, **kw: object
) -> DatasetMetadata:
    meta = new_dataset(storage, schema, by)
    return meta.with_partitions(write_data(storage, meta, schema, by, data, **kw))  # type: ignore[arg-type]


def _sorted(table: pa.Table, key: str = "n") -> pa.Table:
    return table.take(pc.sort_indices(table, [(key, "ascending")]))


def test_every_type_round_trips_exactly(storage: Storage) -> None:
    schema = table_schema(*every_type_columns())
    data = sample_table(schema)
    meta = _write(storage, schema, [], data)
    back = read_table(storage, meta, schema, [])
    assert back.schema.equals(schema, check_metadata=True)
    assert back.equals(data, check_metadata=True)
    assert arrow_dataset(storage, meta, schema, []).to_table().equals(data)


def test_every_type_round_trips_through_sliced_chunks(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "CHUNK_ROWS", 3)
    schema = table_schema(*every_type_columns())
    data = pa.concat_tables([sample_table(schema)] * 3)
    reader, _ = reader_of(data, batch_rows=2)
    meta = _write(storage, schema, [], reader, target_rows_per_file=5)
    assert len(meta.partitions) == 3
    back = read_table(storage, meta, schema, [])
    assert back.equals(data, check_metadata=True)


def test_common_metadata_is_an_empty_parquet_file_of_the_full_schema(storage: Storage) -> None:
    schema = table_schema(*every_type_columns())
    meta = new_dataset(storage, schema, ["int4"])
    path = common_metadata_path(meta.dataset_uuid)
    stored = pq.read_table(pa.BufferReader(storage.read(path)))
    assert stored.num_rows == 0
    # Parquet has no seconds unit (precision-0 times come back as milliseconds)
    # and reorders metadata keys; the TrinityLake columns are exactly the same.
    assert stored.schema.names == schema.names
    assert columns_from_schema(stored.schema) == columns_from_schema(schema)
    smaller = pa.schema(list(schema)[:3])
    write_common_metadata(storage, meta.dataset_uuid, smaller)  # a schema change overwrites
    assert pq.read_schema(pa.BufferReader(storage.read(path))).equals(smaller)


PARTITION_KINDS = [
    ("int4", D("int4"), [1, -2, None, 2**31 - 1]),
    ("int8", D("int8"), [-(2**63), 0, None, 7]),
    ("varchar", D.varchar(UNBOUNDED_LENGTH), ["a/b", "x y=z%", None, "ünï🚀", "", ".", ".."]),
    ("date", D("date"), [datetime.date(2024, 1, 1), None, datetime.date(1, 1, 1)]),
    ("boolean", D("boolean"), [True, False, None]),
    ("decimal", D.decimal(12, 3), [decimal.Decimal("1.5"), decimal.Decimal("-0.001"), None]),
    (
        "timestamp",
        D.timestamp(6),
        [datetime.datetime(2024, 1, 1, 12, 30, 0, 123456), None, datetime.datetime(1960, 1, 1)],
    ),
    (
        "timestamptz",
        D.timestamptz(3),
        [datetime.datetime(2024, 1, 1, 23, 59, tzinfo=UTC), None],
    ),
    ("binary", D.binary(4), [b"\x00/", b"", None, b"%=\xff"]),
    ("fixed", D.fixed(2), [b"ab", b"\x00\x01", None]),
    ("float8", D("float8"), [0.1, float("nan"), None, -2.5, float("inf")]),
    ("time", D.time(6), [0, 86_399_999_999, None]),
]


@pytest.mark.parametrize(
    ("name", "kind", "values"), PARTITION_KINDS, ids=[k[0] for k in PARTITION_KINDS]
)
def test_partition_columns_keep_their_types(
    storage: Storage, name: str, kind: D, values: list[object]
) -> None:
    ids = Ids()
    schema = table_schema(ids.col("n", D("int8")), ids.col(name, kind), ids.col("x", D.varchar(10)))
    rows = len(values) * 3
    data = pa.table(
        {
            "n": pa.array(range(rows), pa.int64()),
            name: pa.array(values * 3, schema.field(name).type),
            "x": [f"r{i}" for i in range(rows)],
        },
        schema=schema,
    )
    meta = _write(storage, schema, [name], data)
    assert len(meta.partitions) == len(values)
    back = read_table(storage, meta, schema, [name])
    assert back.schema.equals(schema, check_metadata=True)
    # repr, so that NaN equals NaN.
    assert repr(_sorted(back).to_pylist()) == repr(data.to_pylist())
    lazy = arrow_dataset(storage, meta, schema, [name]).to_table()
    assert repr(_sorted(lazy).to_pylist()) == repr(data.to_pylist())


def test_partitions_keep_row_order_and_split_at_the_target(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "ROW_GROUP_ROWS", 7)
    schema = simple_schema(k="int4", n="int8")
    data = pa.table({"k": pa.array([i % 3 for i in range(100)], pa.int32()), "n": list(range(100))})
    meta = _write(storage, schema, ["k"], data, target_rows_per_file=10)
    sizes = {}
    for label, path in meta.files().items():
        sizes[label] = pq.read_metadata(pa.BufferReader(storage.read(path))).num_rows
    assert sorted(sizes.values()) == [3, 3, 4] + [10] * 9
    back = read_table(storage, meta, schema, ["k"])
    for k in range(3):
        rows = back.filter(pc.equal(back["k"], k))["n"].to_pylist()
        assert rows == [n for n in range(100) if n % 3 == k]  # written order kept


def test_streaming_write_does_not_read_the_input_whole(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer, "CHUNK_ROWS", 1000)
    schema = simple_schema(k="int4", n="int8", s="varchar")
    data = pa.table(
        {
            "k": pa.array([i % 5 for i in range(10_000)], pa.int32()),
            "n": list(range(10_000)),
            "s": [str(i) for i in range(10_000)],
        }
    )
    reader, pulled = reader_of(data, batch_rows=100)
    seen: list[tuple[int, int]] = []
    meta = new_dataset(storage, schema, ["k"])
    files = write_data(
        storage,
        meta,
        schema,
        ["k"],
        reader,
        target_rows_per_file=600,
        progress=lambda rows: seen.append((rows, len(pulled))),
    )
    # Rows are reported as they are written into files (a file holds 600 rows
    # here), while the reader is still being read, and never backwards.
    assert seen[0] == (600, 30)  # the first file: 200 rows a partition per chunk of 1,000
    assert all(pulled < 100 for _, pulled in seen[:-5])
    assert [rows for rows, _ in seen] == sorted({rows for rows, _ in seen})
    assert seen[-1] == (10_000, 100)
    meta = meta.with_partitions(files)
    assert len(files) == 5 * 4  # 2000 rows per partition: 600, 600, 600, 200
    assert _sorted(read_table(storage, meta, schema, ["k"])).equals(data)


def test_many_partitions_in_one_write(storage: Storage) -> None:
    schema = simple_schema(p="int4", n="int8")
    data = pa.table(
        {"p": pa.array([i % 200 for i in range(2000)], pa.int32()), "n": list(range(2000))}
    )
    meta = _write(storage, schema, ["p"], data)
    assert len(meta.partitions) == 200
    assert _sorted(read_table(storage, meta, schema, ["p"])).equals(data)


def test_empty_input_writes_nothing(storage: Storage) -> None:
    schema = simple_schema(p="int4", n="int8")
    meta = new_dataset(storage, schema, ["p"])
    assert write_data(storage, meta, schema, ["p"], schema.empty_table()) == {}
    assert read_table(storage, meta, schema, ["p"]).equals(schema.empty_table())


def test_read_table_labels_and_columns(storage: Storage) -> None:
    schema = simple_schema(p="int4", n="int8", s="varchar")
    data = pa.table({"p": pa.array([1, 2, 1], pa.int32()), "n": [1, 2, 3], "s": ["a", "b", "c"]})
    meta = _write(storage, schema, ["p"], data)
    _, second = meta.partitions
    part = read_table(storage, meta, schema, ["p"], labels=[second], columns=["s", "p"])
    assert part.to_pydict() == {"s": ["b"], "p": [2]}
    assert part.schema.field("p").equals(schema.field("p"), check_metadata=True)
    assert read_table(storage, meta, schema, ["p"], columns=["p"]).to_pydict() == {"p": [1, 1, 2]}
    with pytest.raises(ProgrammingError, match="no partitions"):
        read_table(storage, meta, schema, ["p"], labels=["p=1/x"])
    with pytest.raises(ProgrammingError, match="distinct columns"):
        read_table(storage, meta, schema, ["p"], columns=["nope"])


def test_columns_are_matched_by_id_and_missing_ones_read_as_null(storage: Storage) -> None:
    ids = Ids()
    n, s = ids.col("n", D("int8")), ids.col("s", D.varchar(10))
    old = table_schema(n, s)
    meta = _write(storage, old, [], pa.table({"n": [1, 2], "s": ["a", "b"]}))
    renamed = table_schema(n, s.__class__(s.id, "label", s.type), ids.col("added", D("date")))
    back = read_table(storage, meta, renamed, [])
    assert back.to_pydict() == {"n": [1, 2], "label": ["a", "b"], "added": [None, None]}


def test_duckdb_scans_the_lazy_dataset_with_pushdown(storage: Storage) -> None:
    schema = simple_schema(day="date", region="varchar", v="float8")
    days = [datetime.date(2024, 1, 1 + i % 2) for i in range(30)]
    data = pa.table(
        {"day": days, "region": ["eu", "us/west", None] * 10, "v": [float(i) for i in range(30)]}
    )
    meta = _write(storage, schema, ["day", "region"], data)
    dataset = arrow_dataset(storage, meta, schema, ["day", "region"])
    assert dataset.schema.equals(schema)
    fragments = list(dataset.get_fragments(filter=pc.field("region") == "us/west"))
    assert len(fragments) == 2  # pruned by the partition expressions
    con = duckdb.connect()
    con.register("t", dataset)
    rows = con.execute(
        "SELECT day, count(*), sum(v) FROM t WHERE region = 'us/west' GROUP BY day ORDER BY day"
    ).fetchall()
    expected = (
        data.filter(pc.equal(data["region"], "us/west"))
        .group_by("day")
        .aggregate([("v", "count"), ("v", "sum")])
        .sort_by("day")
    )
    assert rows == list(zip(*expected.select(["day", "v_count", "v_sum"]).to_pydict().values()))
    nulls = con.execute("SELECT count(*) FROM t WHERE region IS NULL").fetchone()
    assert nulls == (10,)
    labels = list(meta.partitions)[:2]
    assert arrow_dataset(storage, meta, schema, ["day", "region"], labels).count_rows() == sum(
        read_table(storage, meta, schema, ["day", "region"], labels=[label]).num_rows
        for label in labels
    )


def test_corrupt_data_file(storage: Storage) -> None:
    schema = simple_schema(n="int8")
    meta = _write(storage, schema, [], pa.table({"n": [1]}))
    label = "00000000-0000-4000-8000-000000000000"
    path = f"{meta.dataset_uuid}/table/{label}.parquet"
    storage.create_unique(path, b"not parquet")
    meta = meta.with_partitions({label: path})
    with pytest.raises(CorruptFileError, match="not a readable Parquet file") as info:
        read_table(storage, meta, schema, [])
    assert info.value.path == path


# -- conforming the input ------------------------------------------------------------


def _conform_schema() -> pa.Schema:
    ids = Ids()
    return table_schema(
        ids.col("id", D("int4"), nullable=False),
        ids.col("name", D.varchar(5)),
        ids.col("code", D.char(2)),
        ids.col("blob", D.binary(3)),
        ids.col("price", D.decimal(5, 2)),
        ids.col("at", D.timestamp(3)),
        ids.col("s", D.struct_of(ids.col("m", D("int4"), nullable=False))),
        ids.col("tags", D.list_of(ids.col("tag", D.varchar(3), nullable=False))),
    )


def test_input_is_cast_by_name_and_missing_nullable_columns_are_null(storage: Storage) -> None:
    schema = _conform_schema()
    data = pa.table(
        {
            "price": pa.array([1, 2], pa.int64()),
            "id": pa.array([1, 2], pa.int64()),
            "name": ["abc", None],
            "at": pa.array([0, 1_000_000], pa.timestamp("us")),
        }
    )
    meta = _write(storage, schema, [], data)
    back = read_table(storage, meta, schema, [])
    assert back.schema.equals(schema, check_metadata=True)
    assert back.column("price").to_pylist() == [decimal.Decimal("1.00"), decimal.Decimal("2.00")]
    assert back.column("blob").null_count == 2


@pytest.mark.parametrize(
    ("columns", "error", "match"),
    [
        ({"name": ["a"]}, IntegrityError, "'id' is NOT NULL but the data does not provide it"),
        ({"id": pa.array([1, None], pa.int32())}, IntegrityError, "'id' is NOT NULL but 1 value"),
        ({"id": [2**40]}, DataError, "column 'id'"),
        ({"id": [1], "name": ["toolong"]}, DataError, "'name' is 7 characters long"),
        ({"id": [1], "code": ["abc"]}, DataError, "'code' is 3 characters"),
        ({"id": [1], "blob": [b"1234"]}, DataError, "'blob' is 4 bytes"),
        ({"id": [1], "price": [decimal.Decimal("1.234")]}, DataError, "column 'price'"),
        ({"id": [1], "price": [decimal.Decimal(1234)]}, DataError, "column 'price'"),
        ({"id": [1], "at": pa.array([1], pa.timestamp("ns"))}, DataError, "column 'at'"),
        (
            {"id": [1], "s": pa.array([{"m": None}], pa.struct([("m", pa.int32())]))},
            IntegrityError,
            r"member s\.m is NOT NULL",
        ),
        ({"id": [1], "s": [{"m": None}]}, IntegrityError, r"member s\.m is NOT NULL"),
        ({"id": [1], "tags": [["a", None]]}, IntegrityError, r"'tags\.tag' is NOT NULL"),
        ({"id": [1], "tags": [["abcd"]]}, DataError, r"'tags\.tag' is 4 characters"),
        ({"id": [1], "other": [1]}, ProgrammingError, r"columns \['other'\] that the table"),
    ],
)
def test_bad_input_names_the_column(
    storage: Storage, columns: dict[str, object], error: type[Exception], match: str
) -> None:
    schema = _conform_schema()
    meta = new_dataset(storage, schema, [])
    with pytest.raises(error, match=match):
        write_data(storage, meta, schema, [], pa.table(columns))


def test_null_struct_with_not_null_member_is_fine(storage: Storage) -> None:
    schema = _conform_schema()
    data = pa.table({"id": [1, 2], "s": pa.array([None, {"m": 1}], schema.field("s").type)})
    meta = _write(storage, schema, [], data)
    assert read_table(storage, meta, schema, [], columns=["s"]).column(0).to_pylist() == [
        None,
        {"m": 1},
    ]


def test_bad_arguments(storage: Storage) -> None:
    schema = simple_schema(n="int8")
    meta = new_dataset(storage, schema, [])
    with pytest.raises(ProgrammingError, match="target_rows_per_file"):
        write_data(storage, meta, schema, [], pa.table({"n": [1]}), target_rows_per_file=0)
    with pytest.raises(ProgrammingError, match="must be a pyarrow Table"):
        write_data(storage, meta, schema, [], [{"n": 1}])  # type: ignore[arg-type]


def test_many_small_files_read_in_order_threads_only_for_remote_stores(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On local disk the files are read on the calling thread (a pool contending
    # for the GIL made 1,000 small files 3x slower); a remote store keeps the
    # pool, which overlaps its latency. Either way: every row, in label order.
    from trinity_dbapi.tables import reader

    schema = simple_schema(n="int8", s="varchar")
    meta = new_dataset(storage, schema, [])
    expected = []
    for start in range(0, 60, 3):
        ids = list(range(start, start + 3))
        part = pa.table({"n": ids, "s": [str(i) for i in ids]}, schema=schema)
        meta = meta.with_partitions(write_data(storage, meta, schema, [], part))
        expected.append(part)
    pooled: list[int] = []
    original = reader.read_each

    def recording(read: object, labels: list[str]) -> list[pa.Table]:
        pooled.append(len(labels))
        return original(read, labels)  # type: ignore[arg-type]

    monkeypatch.setattr(reader, "read_each", recording)
    back = read_table(storage, meta, schema, [])
    assert back.equals(pa.concat_tables(expected))
    assert pooled == ([] if storage.local_root is not None else [20])
