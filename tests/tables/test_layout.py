"""File names: partition directories, labels, NULLs, index and metadata paths, pruning."""

from __future__ import annotations

import datetime
import decimal
import hashlib
import re
from urllib.parse import quote, unquote

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinity_dbapi.errors import CorruptFileError, DataError, NotSupportedError, ProgrammingError
from trinity_dbapi.storage import Storage
from trinity_dbapi.storage.uri import check_path
from trinity_dbapi.tables import layout
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.partitions import (
    MAX_SEGMENT_BYTES,
    NULL_VALUE,
    check_partition_by,
    directory_of,
    partition_scalars,
    partition_values,
    prune,
)
from trinity_dbapi.tables.writer import new_dataset, write_data

UUID = "0d6de3c6-b7a4-11e6-8ed1-08002753cf7b"
UTC = datetime.timezone.utc


@pytest.mark.parametrize(
    ("type_", "value", "segment"),
    [
        (pa.bool_(), True, "true"),
        (pa.bool_(), False, "false"),
        (pa.int32(), -42, "-42"),
        (pa.int64(), 2**63 - 1, "9223372036854775807"),
        (pa.float64(), 0.1, "0.1"),
        (pa.float32(), 0.1, "0.1"),
        (pa.decimal128(5, 2), decimal.Decimal("1.5"), "1.50"),
        (pa.decimal128(38, 10), decimal.Decimal("1E-10"), "0.0000000001"),
        (pa.decimal128(38, 0), decimal.Decimal(-(10**37)), "-1" + "0" * 37),
        (pa.string(), "a/b c=d%e", "a%2Fb%20c%3Dd%25e"),
        (pa.string(), "üñí 🚀", "%C3%BC%C3%B1%C3%AD%20%F0%9F%9A%80"),
        (pa.string(), "", ""),
        (pa.string(), ".", "."),
        (pa.string(), NULL_VALUE, "%5F_HIVE_DEFAULT_PARTITION__"),
        (pa.binary(), b"\x00\xff/", "%00%FF%2F"),
        (pa.binary(2), b"ab", "ab"),
        (pa.date32(), datetime.date(2024, 1, 31), "2024-01-31"),
        (pa.date32(), datetime.date(1, 1, 1), "0001-01-01"),
        (pa.time32("s"), datetime.time(12, 0, 1), "12%3A00%3A01"),
        (pa.time64("us"), datetime.time(1, 2, 3, 4), "01%3A02%3A03.000004"),
        (pa.timestamp("s"), datetime.datetime(2024, 1, 1, 12), "2024-01-01T12%3A00%3A00"),
        (
            pa.timestamp("ms"),
            datetime.datetime(1969, 12, 31, 23, 59, 59, 999000),
            "1969-12-31T23%3A59%3A59.999",
        ),
        (
            pa.timestamp("us", "UTC"),
            datetime.datetime(2024, 1, 1, tzinfo=UTC),
            "2024-01-01T00%3A00%3A00.000000Z",
        ),
    ],
)
def test_value_segments_are_canonical_and_decode_back(
    type_: pa.DataType, value: object, segment: str
) -> None:
    scalar = pa.scalar(value, type=type_)
    directory = directory_of(["c"], [scalar])
    assert directory == f"c={segment}"
    schema = pa.schema([pa.field("c", type_), pa.field("x", pa.int8())])
    decoded = partition_scalars(f"{directory}/part", schema, ["c"])["c"]
    assert decoded.equals(scalar)
    assert decoded.type == type_


def test_nanosecond_values_decode_as_scalars() -> None:
    schema = pa.schema([pa.field("ts", pa.timestamp("ns", "UTC")), pa.field("x", pa.int8())])
    scalar = pa.scalar(1_700_000_000_123_456_789, pa.timestamp("ns", "UTC"))
    directory = directory_of(["ts"], [scalar])
    assert directory == "ts=2023-11-14T22%3A13%3A20.123456789Z"
    assert partition_values(f"{directory}/p", schema, ["ts"])["ts"].equals(scalar)


def test_null_and_the_marker_text_never_collide() -> None:
    schema = pa.schema([pa.field("s", pa.string()), pa.field("x", pa.int8())])
    null = directory_of(["s"], [pa.scalar(None, pa.string())])
    text = directory_of(["s"], [pa.scalar(NULL_VALUE)])
    assert null == f"s={NULL_VALUE}"
    assert text != null
    assert unquote(text.split("=", 1)[1]) == NULL_VALUE
    assert partition_values(f"{null}/p", schema, ["s"]) == {"s": None}
    assert partition_values(f"{text}/p", schema, ["s"]) == {"s": NULL_VALUE}


def test_column_names_are_url_encoded_too() -> None:
    directory = directory_of(["a b/c=d"], [pa.scalar(1)])
    assert directory == "a%20b%2Fc%3Dd=1"
    schema = pa.schema([pa.field("a b/c=d", pa.int64()), pa.field("x", pa.int8())])
    assert partition_values(f"{directory}/p", schema, ["a b/c=d"]) == {"a b/c=d": 1}


def test_too_long_directory_names_and_out_of_range_values_are_data_errors() -> None:
    with pytest.raises(DataError, match=f"more than {MAX_SEGMENT_BYTES}"):
        directory_of(["s"], [pa.scalar("ü" * 100)])  # 600 bytes URL-encoded
    with pytest.raises(DataError, match=r"years 1\.\.9999"):
        directory_of(["d"], [pa.scalar(-1_000_000, pa.date32())])


@pytest.mark.parametrize(
    ("label", "rule"),
    [
        ("p", "must have 1 'column=value'"),
        ("a=1/b=2/p", "must have 1 'column=value'"),
        ("x=1/p", "is not 'c=...'"),
        ("c1/p", "is not 'c=...'"),
        ("c=abc/p", "is not a int32"),
        ("c=1.5/p", "is not a int32"),
    ],
)
def test_bad_labels_are_corrupt(label: str, rule: str) -> None:
    schema = pa.schema([pa.field("c", pa.int32()), pa.field("x", pa.int8())])
    with pytest.raises(CorruptFileError, match=rule):
        partition_scalars(label, schema, ["c"])


def test_partition_by_is_checked() -> None:
    schema = pa.schema(
        [pa.field("a", pa.int32()), pa.field("l", pa.list_(pa.int32())), pa.field("x", pa.int8())]
    )
    with pytest.raises(ProgrammingError, match="not a column"):
        check_partition_by(schema, ["nope"])
    with pytest.raises(ProgrammingError, match="repeat"):
        check_partition_by(schema, ["a", "a"])
    with pytest.raises(NotSupportedError, match="cannot be a partition column"):
        check_partition_by(schema, ["l"])
    with pytest.raises(ProgrammingError, match="at least one column"):
        check_partition_by(schema, ["a", "l", "x"])
    meta = DatasetMetadata(UUID, {}, metadata={"trinity.partition_by": '["a"]'})
    with pytest.raises(ProgrammingError, match="is partitioned by"):
        check_partition_by(schema, ["x"], meta)


def test_paths() -> None:
    assert layout.common_metadata_path(UUID) == f"{UUID}/table/_common_metadata"
    assert layout.data_file_path(UUID, "a=1/p") == f"{UUID}/table/a=1/p.parquet"
    assert layout.label_of_path(UUID, f"{UUID}/table/a=1/p.parquet") == "a=1/p"
    assert layout.label_of_path(UUID, f"{UUID}/indices/a/x.parquet") is None
    moment = datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    path = layout.index_path(UUID, "my col", moment)
    assert re.fullmatch(
        rf"{UUID}/indices/my%20col/2024-05-06T07%3A08%3A09\.000000\+[0-9a-f]{{32}}"
        r"\.by-dataset-index\.parquet",
        path,
    )
    assert layout.index_path(UUID, "c", moment) != layout.index_path(UUID, "c", moment)
    path = layout.metadata_path(UUID, 7, "msgpack.zstd")
    assert layout.parse_metadata_path(path) == layout.MetadataName(UUID, 7, "msgpack.zstd")


@pytest.mark.parametrize(
    ("column", "directory"),
    [
        (".", "%2E"),
        ("..", "%2E%2E"),
        ("...", "..."),
        ("a/b", "a%2Fb"),
        (".a", ".a"),
        ("é", "%C3%A9"),
    ],
)
def test_index_directories_are_one_storage_path_segment(column: str, directory: str) -> None:
    # '.' and '..' made '<uuid>/indices/../<file>', which the storage refused
    # with an InvalidURIError quoting that path (issue 29, item 9).
    assert layout.index_directory(column) == directory
    path = layout.index_path(UUID, column)
    check_path(path)
    assert path.split("/")[2] == directory


@given(st.text(min_size=1, max_size=300))
def test_long_index_directories_fit_a_file_name_and_stay_apart(column: str) -> None:
    directory = layout.index_directory(column)
    check_path(layout.index_path(UUID, column))
    assert len(directory.encode()) <= layout.MAX_INDEX_DIRECTORY_BYTES
    if len(quote(column, safe="")) <= layout.MAX_INDEX_DIRECTORY_BYTES:
        assert unquote(directory) == column  # the plain form, as Kartothek writes it
    else:  # cut where no %XX escape is split, then ~ and 16 hex digits of its SHA-256
        prefix, digest = directory[:-17], directory[-16:]
        assert directory[-17] == "~"
        assert digest == hashlib.sha256(column.encode()).hexdigest()[:16]
        assert quote(column, safe="").startswith(prefix)
        assert re.search(r"%[0-9A-F]?$", prefix) is None
        assert layout.index_directory(column + "x") != directory


def test_labels_of_written_files(storage: Storage) -> None:
    schema = pa.schema(
        [pa.field("day", pa.date32()), pa.field("s", pa.string()), pa.field("x", pa.int8())]
    )
    meta = new_dataset(storage, schema, ["day", "s"])
    data = pa.table(
        {
            "day": pa.array([datetime.date(2024, 1, 1), None], pa.date32()),
            "s": ["a/b", "x y"],
            "x": pa.array([1, 2], pa.int8()),
        }
    )
    files = write_data(storage, meta, schema, ["day", "s"], data)
    uuid4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
    directories = []
    for label, path in files.items():
        assert path == f"{meta.dataset_uuid}/table/{label}.parquet"
        directory, _, part = label.rpartition("/")
        assert re.fullmatch(uuid4, part)
        directories.append(directory)
    assert directories == ["day=2024-01-01/s=a%2Fb", f"day={NULL_VALUE}/s=x%20y"]


def _pruning_meta(storage: Storage) -> tuple[DatasetMetadata, pa.Schema]:
    schema = pa.schema(
        [
            pa.field("d", pa.decimal128(5, 2)),
            pa.field("s", pa.string()),
            pa.field("x", pa.int8()),
        ]
    )
    meta = new_dataset(storage, schema, ["d", "s"])
    data = pa.table(
        {
            "d": pa.array(
                [decimal.Decimal(v) if v else None for v in ["1", "1", "2.5", None]],
                schema.field("d").type,
            ),
            "s": ["a", "b", "a", "a"],
            "x": pa.array([1, 2, 3, 4], pa.int8()),
        }
    )
    return meta.with_partitions(write_data(storage, meta, schema, ["d", "s"], data)), schema


def test_prune(storage: Storage) -> None:
    meta, schema = _pruning_meta(storage)
    by = ["d", "s"]

    def values(labels: list[str]) -> list[tuple[object, ...]]:
        return [tuple(partition_values(label, schema, by).values()) for label in labels]

    one = decimal.Decimal("1.00")
    assert values(prune(meta, schema, by, {})) == [
        (one, "a"),
        (one, "b"),
        (decimal.Decimal("2.50"), "a"),
        (None, "a"),
    ]
    assert values(prune(meta, schema, by, {"d": [1]})) == [(one, "a"), (one, "b")]
    assert values(prune(meta, schema, by, {"d": ["1.0", 2.5]})) == [
        (one, "a"),
        (one, "b"),
        (decimal.Decimal("2.50"), "a"),
    ]
    assert values(prune(meta, schema, by, {"d": [1], "s": ["b"]})) == [(one, "b")]
    assert values(prune(meta, schema, by, {"d": [None]})) == [(None, "a")]
    assert prune(meta, schema, by, {"d": ["nonsense", 1.234]}) == []
    assert prune(meta, schema, by, {"s": []}) == []
    assert len(prune(meta, schema, by, {"x": [99]})) == 4  # not a partition column
