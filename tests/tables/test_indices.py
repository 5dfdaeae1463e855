"""Secondary indices: build, lookup, update after appends and removals, drop, file layout."""

from __future__ import annotations

import datetime
import decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.tables.helpers import simple_schema
from trinity_dbapi.errors import CorruptFileError, NotSupportedError, ProgrammingError
from trinity_dbapi.storage import Storage
from trinity_dbapi.tables.indices import (
    INDEX_PARTITION_COLUMN,
    build_index,
    drop_index,
    lookup,
    read_index,
    update_indices,
)
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.metadata_io import read_metadata, write_metadata
from trinity_dbapi.tables.reader import read_table
from trinity_dbapi.tables.writer import new_dataset, write_data

BY = ["region"]
SCHEMA = simple_schema(region="varchar", customer="int8", note="varchar")


def _append(
    storage: Storage, meta: DatasetMetadata, rows: dict[str, list[object]]
) -> tuple[DatasetMetadata, dict[str, pa.Table]]:
    data = pa.table(rows)
    files = write_data(storage, meta, SCHEMA, BY, data)
    added = {
        label: read_table(storage, meta.with_partitions(files), SCHEMA, BY, [label])
        for label in files
    }
    return meta.with_partitions(files), added


def _by_region(meta: DatasetMetadata) -> dict[str, str]:
    return {label.split("/")[0]: label for label in meta.partitions}


@pytest.fixture
def indexed(storage: Storage) -> DatasetMetadata:
    meta = new_dataset(storage, SCHEMA, BY)
    meta, _ = _append(
        storage,
        meta,
        {
            "region": ["eu", "us", "eu", None],
            "customer": [1, 2, 3, None],
            "note": ["a", "b", "c", "d"],
        },
    )
    return build_index(storage, meta, SCHEMA, BY, "customer")


def test_build_and_lookup(storage: Storage, indexed: DatasetMetadata) -> None:
    regions = _by_region(indexed)
    assert lookup(storage, indexed, "customer", [1]) == {regions["region=eu"]}
    assert lookup(storage, indexed, "customer", [1, 2]) == {
        regions["region=eu"],
        regions["region=us"],
    }
    assert lookup(storage, indexed, "customer", [None]) == {
        regions["region=__HIVE_DEFAULT_PARTITION__"]
    }
    assert lookup(storage, indexed, "customer", [99, "x", 1.5]) == set()
    assert lookup(storage, indexed, "customer", []) == set()
    assert lookup(storage, indexed, "note", ["a"]) is None  # not indexed


def test_index_file_layout(storage: Storage, indexed: DatasetMetadata) -> None:
    path = indexed.indices["customer"]
    assert path.startswith(f"{indexed.dataset_uuid}/indices/customer/")
    assert path.endswith(".by-dataset-index.parquet")
    table = pq.read_table(pa.BufferReader(storage.read(path)))
    assert table.column_names == ["customer", INDEX_PARTITION_COLUMN]
    assert table.schema.field("customer").type == pa.int64()
    assert table.schema.field(INDEX_PARTITION_COLUMN).type == pa.list_(pa.string())
    regions = _by_region(indexed)
    assert table.to_pydict() == {
        "customer": [1, 2, 3, None],  # sorted, NULL last
        "partition": [
            [regions["region=eu"]],
            [regions["region=us"]],
            [regions["region=eu"]],
            [regions["region=__HIVE_DEFAULT_PARTITION__"]],
        ],
    }


def test_update_after_append_and_removal(storage: Storage, indexed: DatasetMetadata) -> None:
    old_path = indexed.indices["customer"]
    meta, added = _append(
        storage, indexed, {"region": ["us", "apac"], "customer": [1, 4], "note": ["e", "f"]}
    )
    meta = update_indices(storage, meta, SCHEMA, BY, added)
    assert meta.indices["customer"] != old_path
    assert storage.exists(old_path)  # immutable: the old version still reads it
    us_new = next(label for label in added if label.startswith("region=us"))
    apac = next(label for label in added if label.startswith("region=apac"))
    eu = _by_region(indexed)["region=eu"]
    assert lookup(storage, meta, "customer", [1]) == {eu, us_new}
    assert lookup(storage, meta, "customer", [4]) == {apac}

    meta = update_indices(storage, meta.with_partitions({}, [eu]), SCHEMA, BY, {}, [eu])
    assert lookup(storage, meta, "customer", [1]) == {us_new}
    assert lookup(storage, meta, "customer", [3]) == set()
    index = read_index(storage, meta.indices["customer"])
    assert 3 not in index.column("customer").to_pylist()  # values without partitions are gone

    # A full rebuild agrees with the incremental updates.
    rebuilt = build_index(storage, meta, SCHEMA, BY, "customer")
    assert read_index(storage, rebuilt.indices["customer"]).equals(index)


def test_indices_survive_a_metadata_round_trip(storage: Storage, indexed: DatasetMetadata) -> None:
    path = write_metadata(storage, indexed)
    again = read_metadata(storage, path)
    assert lookup(storage, again, "customer", [2]) == lookup(storage, indexed, "customer", [2])


def test_nothing_to_update_writes_nothing(storage: Storage, indexed: DatasetMetadata) -> None:
    before = storage.list()
    assert update_indices(storage, indexed, SCHEMA, BY, {}, []) is indexed
    assert storage.list() == before


def test_partition_column_index_comes_from_labels(
    storage: Storage, indexed: DatasetMetadata
) -> None:
    reads = storage.stats.reads + storage.stats.cache_hits
    meta = build_index(storage, indexed, SCHEMA, BY, "region")
    assert storage.stats.reads + storage.stats.cache_hits == reads  # no data file read
    regions = _by_region(meta)
    assert lookup(storage, meta, "region", ["eu", None]) == {
        regions["region=eu"],
        regions["region=__HIVE_DEFAULT_PARTITION__"],
    }


def test_typed_values(storage: Storage) -> None:
    schema = pa.schema(
        [
            pa.field("p", pa.int32()),
            pa.field("at", pa.timestamp("us", "UTC")),
            pa.field("d", pa.decimal128(6, 2)),
            pa.field("b", pa.binary()),
        ]
    )
    meta = new_dataset(storage, schema, ["p"])
    moment = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    data = pa.table(
        {
            "p": pa.array([1, 2], pa.int32()),
            "at": pa.array([moment, None], schema.field("at").type),
            "d": pa.array([decimal.Decimal("1.5"), decimal.Decimal(2)], schema.field("d").type),
            "b": [b"\x00", b"\xff"],
        }
    )
    meta = meta.with_partitions(write_data(storage, meta, schema, ["p"], data))
    first, second = meta.partitions
    for column in ("at", "d", "b"):
        meta = build_index(storage, meta, schema, ["p"], column)
    assert lookup(storage, meta, "at", [moment]) == {first}
    assert lookup(storage, meta, "d", [decimal.Decimal("1.50"), 2]) == {first, second}
    assert lookup(storage, meta, "b", [b"\xff"]) == {second}


def test_drop_index_and_refusals(storage: Storage, indexed: DatasetMetadata) -> None:
    dropped = drop_index(indexed, "customer")
    assert dropped.indices == {}
    assert lookup(storage, dropped, "customer", [1]) is None
    with pytest.raises(ProgrammingError, match="no index"):
        drop_index(dropped, "customer")
    with pytest.raises(ProgrammingError, match="no such column"):
        build_index(storage, indexed, SCHEMA, BY, "nope")
    nested = pa.schema([pa.field("l", pa.list_(pa.int8())), pa.field("partition", pa.int8())])
    empty = new_dataset(storage, nested, [])
    with pytest.raises(NotSupportedError, match="nested"):
        build_index(storage, empty, nested, [], "l")
    with pytest.raises(NotSupportedError, match="named 'partition'"):
        build_index(storage, empty, nested, [], "partition")


def test_corrupt_index_file(storage: Storage, indexed: DatasetMetadata) -> None:
    path = f"{indexed.dataset_uuid}/indices/customer/bad.by-dataset-index.parquet"
    storage.create_unique(path, pq_bytes(pa.table({"customer": [1], "labels": [["x"]]})))
    with pytest.raises(CorruptFileError, match="columns <column>, 'partition'"):
        lookup(storage, indexed.with_index("customer", path), "customer", [1])


def pq_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def test_lookup_reads_only_the_row_groups_that_can_hold_the_value(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.tables import indices

    monkeypatch.setattr(indices, "INDEX_ROW_GROUP_ROWS", 100)
    meta = new_dataset(storage, SCHEMA, BY)
    n = 1000
    meta, _ = _append(
        storage,
        meta,
        {
            "region": [f"r{i % 7}" for i in range(n)],
            "customer": list(range(n)),
            "note": ["x"] * n,
        },
    )
    meta = build_index(storage, meta, SCHEMA, BY, "customer")
    read_groups: list[list[int]] = []
    real = pq.ParquetFile.read_row_groups

    def spy(self: pq.ParquetFile, groups: list[int], *args: object, **kwargs: object) -> pa.Table:
        read_groups.append(list(groups))
        return real(self, groups, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", spy)
    for value in (0, 555, 999):
        found = indices.lookup(storage, meta, "customer", [value])
        assert found is not None
        assert [label.split("/")[0] for label in found] == [f"region=r{value % 7}"]
        assert len(read_groups.pop()) == 1  # 10 groups in the file, one read
    assert indices.lookup(storage, meta, "customer", [5000]) == set()
    assert read_groups == []  # no group can hold it: nothing is read
