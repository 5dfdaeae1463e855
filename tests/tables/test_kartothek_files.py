"""Our reader accepts real Kartothek / plateau datasets (issue 18, item 2; item 4's reading half).

The plateau cases write datasets as a pipeline would (``store_dataframes_as_dataset``
with ``partition_on`` and ``secondary_indices``, then ``update_dataset_from_dataframes``
adding partitions and deleting a scope) and check that our metadata reader,
index reader and row reader see exactly what plateau's own ``read_table`` sees.
The hand-made cases pin each attribute decision of docs/datasets.md.
"""

from __future__ import annotations

import datetime
import json
import re
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from trinity_dbapi.errors import CorruptFileError, ProgrammingError, StorageFileNotFoundError
from trinity_dbapi.storage.local import LocalStorage
from trinity_dbapi.tables import kartothek
from trinity_dbapi.tables.indices import lookup, read_index
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.metadata_io import decode_metadata
from trinity_dbapi.tables.partitions import partition_values
from trinity_dbapi.tables.reader import arrow_dataset

pd = pytest.importorskip("pandas")

SEED_NAME = "ds.by-dataset-metadata.json"


def _plateau() -> Any:
    return pytest.importorskip(
        "plateau.io.eager", reason="plateau (the test extra) is not installed"
    )


def _store(root: Path) -> Any:
    minimalkv = pytest.importorskip("minimalkv", reason="minimalkv comes with plateau")
    return partial(minimalkv.get_store_from_url, f"hfs://{root}")


def _sorted(frame: Any, columns: list[str]) -> Any:
    return frame[columns].sort_values("id").reset_index(drop=True)


def _ours(root: Path, uuid: str) -> tuple[LocalStorage, DatasetMetadata, Any]:
    storage = LocalStorage(root.as_uri())
    meta = kartothek.open_dataset(storage, uuid)
    return storage, meta, kartothek.read_rows(storage, meta).to_pandas()


def _frame(ids: range, day: str) -> Any:
    n = len(ids)
    return pd.DataFrame(
        {
            "id": pd.array(list(ids), dtype="int64"),
            "p": [("a", "b", "c")[i % 3] for i in ids],
            "flag": [i % 2 == 0 for i in ids],
            "ts": pd.to_datetime([f"{day} 10:30:00"] * n),
            "v": [i * 1.5 for i in ids],
        }
    )


def test_pipeline_written_and_updated_dataset_reads_like_plateau(tmp_path: Path) -> None:
    eager = _plateau()
    store = _store(tmp_path)
    first = [_frame(range(6), "2024-01-01"), _frame(range(6, 9), "2024-01-02")]
    update = _frame(range(9, 12), "2024-02-01")
    written = pd.concat([*first, update])
    written = written[(written["p"] != "b") | (written["id"] >= 9)]  # delete_scope p=b
    eager.store_dataframes_as_dataset(
        store=store,
        dataset_uuid="ds",
        dfs=first,
        partition_on=["p", "flag"],
        secondary_indices=["id"],
    )
    eager.update_dataset_from_dataframes(
        [update],
        store=store,
        dataset_uuid="ds",
        partition_on=["p", "flag"],
        secondary_indices=["id"],
        delete_scope=[{"p": "b"}],
    )
    expected = eager.read_table("ds", store)
    storage, meta, rows = _ours(tmp_path, "ds")

    # The metadata object: partition_keys understood, hex labels, the one index.
    assert meta.partition_keys == ("p", "flag")
    assert meta.partition_columns() == ["p", "flag"]
    hex_names = [label.split("/")[2] for label in meta.partitions]
    assert all(len(name) == 32 and int(name, 16) >= 0 for name in hex_names)
    # delete_scope p=b dropped the first write's p=b files; the update's own p=b file stays.
    assert sum(label.startswith("p=b/") for label in meta.partitions) == 1
    assert set(meta.indices) == {"id"}
    assert "creation_time" in meta.metadata

    # The partitions: Kartothek's "True"/"False" read as booleans.
    schema = kartothek.dataset_schema(storage, meta)
    values = {
        tuple(partition_values(label, schema, ["p", "flag"]).items()) for label in meta.partitions
    }
    everything = {(("p", p), ("flag", f)) for p in "abc" for f in (True, False)}
    assert values == everything - {(("p", "b"), ("flag", False))}  # id 10 is the only p=b

    # The index: plateau's file read by our reader; a lookup finds the right partitions.
    index = read_index(storage, meta.indices["id"], schema.field("id"))
    assert sorted(index.column(0).to_pylist()) == sorted(expected["id"].tolist())
    found = lookup(storage, meta, "id", [9])
    row = written[written["id"] == 9].iloc[0]
    assert found is not None and len(found) == 1
    (label,) = found
    assert partition_values(label, schema, ["p", "flag"]) == {
        "p": row["p"],
        "flag": bool(row["flag"]),
    }

    # The rows: what was written. plateau's read_table agrees on every column
    # but the boolean partition column, which it reads as all True (its
    # np.bool_("False") bug, the one issue 18 reports for Kartothek).
    columns = ["id", "p", "flag", "ts", "v"]
    assert sorted(rows.columns) == sorted(columns)
    got = _sorted(rows, columns)
    assert got["id"].tolist() == [0, 2, 3, 5, 6, 8, 9, 10, 11]
    pd.testing.assert_frame_equal(got, _sorted(written, columns), check_dtype=False)
    others = ["id", "p", "ts", "v"]
    pd.testing.assert_frame_equal(
        _sorted(rows, others), _sorted(expected, others), check_dtype=False
    )
    assert rows["flag"].dtype == bool
    assert got["flag"].tolist() == [i % 2 == 0 for i in got["id"]]

    # The lazy scan form (a pyarrow dataset, as the DuckDB bridge and Spark use)
    # over the same metadata, with partition pruning on the boolean column.
    lazy = arrow_dataset(storage, meta, schema, ["p", "flag"])
    falses = lazy.to_table(filter=pc.field("flag") == False).to_pandas()
    assert sorted(falses["id"].tolist()) == [3, 5, 9, 11]
    assert sorted(lazy.to_table().column("id").to_pylist()) == got["id"].tolist()


def test_timestamp_int_date_float_partitions_and_msgpack(tmp_path: Path) -> None:
    eager = _plateau()
    store = _store(tmp_path)
    frame = pd.DataFrame(
        {
            "id": pd.array([1, 2, 3, 4], dtype="int64"),
            "ts": pd.to_datetime(
                ["2024-01-01 00:00:00", "2024-01-01 10:30:00.250000", "2024-03-01", "2024-03-01"],
                format="ISO8601",
            ),
            "n": pd.array([7, 7, -8, 9], dtype="int32"),
            "d": [datetime.date(2024, 5, i) for i in (1, 1, 2, 2)],
            "f": [0.5, 0.5, -1.25, 0.5],
            "v": ["w", "x", "y", "z"],
        }
    )
    eager.store_dataframes_as_dataset(
        store=store,
        dataset_uuid="ds",
        dfs=[frame],
        partition_on=["ts", "n", "d", "f"],
        metadata_storage_format="msgpack",
    )
    assert (tmp_path / "ds.by-dataset-metadata.msgpack.zstd").exists()
    assert not (tmp_path / SEED_NAME).exists()
    expected = eager.read_table("ds", store)
    _, meta, rows = _ours(tmp_path, "ds")
    assert meta.partition_keys == ("ts", "n", "d", "f")
    columns = ["id", "ts", "n", "d", "f", "v"]
    got, want = _sorted(rows, columns), _sorted(expected, columns)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert got["ts"].tolist() == [
        pd.Timestamp("2024-01-01 00:00:00"),
        pd.Timestamp("2024-01-01 10:30:00.25"),
        pd.Timestamp("2024-03-01"),
        pd.Timestamp("2024-03-01"),
    ]
    assert got["n"].tolist() == [7, 7, -8, 9]
    assert got["d"].tolist() == frame["d"].tolist()
    assert got["f"].tolist() == [0.5, 0.5, -1.25, 0.5]


def test_pandas_index_column_and_schema_metadata_dropped(tmp_path: Path) -> None:
    eager = _plateau()
    store = _store(tmp_path)
    frame = pd.DataFrame({"id": [1, 2, 3], "p": ["x", "y", "x"]}, index=[10, 20, 30])
    eager.store_dataframes_as_dataset(
        store=store, dataset_uuid="ds", dfs=[frame], partition_on=["p"]
    )
    storage, meta, rows = _ours(tmp_path, "ds")
    schema = kartothek.dataset_schema(storage, meta)
    assert schema.metadata is None
    assert not any(name.startswith("__index_level_") for name in schema.names)
    assert sorted(rows.columns) == ["id", "p"]
    assert _sorted(rows, ["id", "p"]).values.tolist() == [[1, "x"], [2, "y"], [3, "x"]]


def test_unpartitioned_and_empty_datasets(tmp_path: Path) -> None:
    eager = _plateau()
    store = _store(tmp_path)
    frame = pd.DataFrame({"id": [1, 2], "v": ["a", "b"]})
    eager.store_dataframes_as_dataset(store=store, dataset_uuid="flat", dfs=[frame])
    _, meta, rows = _ours(tmp_path, "flat")
    assert meta.partition_keys == ()
    assert kartothek.partition_columns(meta) == []
    assert _sorted(rows, ["id", "v"]).values.tolist() == [[1, "a"], [2, "b"]]

    eager.store_dataframes_as_dataset(
        store=store,
        dataset_uuid="empty",
        dfs=[frame.iloc[:0].assign(p=pd.Series([], dtype="object"))],
        partition_on=["p"],
    )
    if not (tmp_path / "empty.by-dataset-metadata.json").exists():
        pytest.skip("this plateau writes no metadata for an empty dataset")
    _, meta, rows = _ours(tmp_path, "empty")
    assert dict(meta.partitions) == {}
    assert meta.partition_keys == ("p",)
    assert len(rows) == 0
    # An all-None object column has Arrow type null in _common_metadata: a
    # partition column of that type is read as text, as Kartothek reads it.
    schema = kartothek.dataset_schema(LocalStorage(tmp_path.as_uri()), meta)
    assert schema.field("p").type == pa.string()


def test_docs_example_runs(tmp_path: Path) -> None:
    eager = _plateau()
    frame = pd.DataFrame({"id": [1, 2, 3], "p": ["x", "y", "x"]})
    eager.store_dataframes_as_dataset(
        store=_store(tmp_path), dataset_uuid="my_dataset", dfs=[frame], partition_on=["p"]
    )
    page = (Path(__file__).resolve().parents[2] / "docs" / "datasets.md").read_text()
    (block,) = [
        b for b in re.findall(r"```py\n(.*?)```", page, re.DOTALL) if "file:///data/store" in b
    ]
    scope: dict[str, Any] = {}
    exec(block.replace("file:///data/store", tmp_path.as_uri()), scope)  # noqa: S102
    assert scope["schema"].names == ["p", "id"]
    assert sorted(scope["rows"].column("id").to_pylist()) == [1, 2, 3]


def test_missing_dataset_names_both_files(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path.as_uri())
    with pytest.raises(
        StorageFileNotFoundError, match=r"ds\.by-dataset-metadata\.json.*msgpack\.zstd"
    ):
        kartothek.open_dataset(storage, "ds")
    with pytest.raises(ProgrammingError, match="dataset UUID 'a/b' is not valid"):
        kartothek.open_dataset(storage, "a/b")


# --- hand-made files: one case per attribute decision ------------------------------


def _body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "dataset_metadata_version": 4,
        "dataset_uuid": "ds",
        "metadata": {"creation_time": "2024-01-01T00:00:00+00:00"},
        "partitions": {
            "p=a/0123456789abcdef0123456789abcdef": {
                "files": {"table": "ds/table/p=a/0123456789abcdef0123456789abcdef.parquet"}
            }
        },
        "indices": {
            "id": "ds/indices/id/2024-01-01T00%3A00%3A00%2B00%3A00.by-dataset-index.parquet"
        },
        "partition_keys": ["p"],
    }
    body.update(changes)
    return {k: v for k, v in body.items() if v is not None}


def _decode(body: dict[str, Any]) -> DatasetMetadata:
    return decode_metadata(SEED_NAME, json.dumps(body).encode())


def test_partition_keys_understood_and_written_back() -> None:
    meta = _decode(_body())
    assert meta.partition_keys == ("p",)
    assert meta.partition_columns() == ["p"]
    assert meta.to_dict()["partition_keys"] == ["p"]
    assert _decode(_body(partition_keys=[])).partition_columns() == []
    assert _decode(_body(partition_keys=None)).partition_columns() is None


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ("p", r"partition_keys must be a LIST<STRING>"),
        ([1], r"partition_keys must be a LIST<STRING>"),
        ([""], r"partition_keys must be a LIST<STRING>"),
        (["p", "p"], r"repeats a column"),
    ],
)
def test_bad_partition_keys_refused(keys: Any, message: str) -> None:
    with pytest.raises(CorruptFileError, match=message):
        _decode(_body(partition_keys=keys))


def test_partition_keys_must_agree_with_trinity_partition_by() -> None:
    body = _body(metadata={"trinity.partition_by": '["q"]'})
    with pytest.raises(CorruptFileError, match=r"partition_keys \['p'\] differ"):
        _decode(body)
    agreeing = _decode(_body(metadata={"trinity.partition_by": '["p"]'}))
    assert agreeing.partition_columns() == ["p"]


def test_non_string_user_metadata_accepted_and_ignored() -> None:
    meta = _decode(_body(metadata={"creation_time": "t", "rows": 3, "tags": {"a": [1]}}))
    assert dict(meta.metadata) == {"creation_time": "t"}


def test_embedded_index_accepted_and_ignored() -> None:
    embedded = {"1": ["p=a/0123456789abcdef0123456789abcdef"]}
    meta = _decode(_body(indices={"id": embedded}))
    assert dict(meta.indices) == {}
    with pytest.raises(CorruptFileError, match="must be a STRING file path"):
        _decode(_body(indices={"id": 5}))


def test_other_table_name_refused() -> None:
    label = "p=a/0123456789abcdef0123456789abcdef"
    body = _body(partitions={label: {"files": {"core": f"ds/core/{label}.parquet"}}})
    with pytest.raises(CorruptFileError, match=r"file of table 'core'.*named 'table'"):
        _decode(body)


def test_implicit_partitions_refused() -> None:
    body = _body()
    del body["partitions"]
    with pytest.raises(CorruptFileError, match=r"'partitions' is missing.*listing the store"):
        _decode(body)


def test_unknown_attribute_still_refused() -> None:
    with pytest.raises(CorruptFileError, match=r"unknown attributes \['tables'\]"):
        _decode(_body(tables=["table"]))


@pytest.mark.parametrize(
    ("text", "type_", "expected"),
    [
        ("True", pa.bool_(), True),
        ("False", pa.bool_(), False),
        ("true", pa.bool_(), True),
        ("2024-01-01 10:30:00", pa.timestamp("us"), datetime.datetime(2024, 1, 1, 10, 30)),
        (
            "2024-01-01 10:30:00.250000",
            pa.timestamp("ms"),
            datetime.datetime(2024, 1, 1, 10, 30, 0, 250000),
        ),
        (
            "2024-01-01 10:30:00+01:00",
            pa.timestamp("us", tz="UTC"),
            datetime.datetime(2024, 1, 1, 9, 30, tzinfo=datetime.timezone.utc),
        ),
        ("2024-01-01T10:30:00.000000", pa.timestamp("us"), datetime.datetime(2024, 1, 1, 10, 30)),
    ],
)
def test_kartothek_partition_value_text(text: str, type_: pa.DataType, expected: Any) -> None:
    schema = pa.schema([("x", type_), ("v", pa.int64())])
    from urllib.parse import quote

    label = f"x={quote(text, safe='')}/0123456789abcdef0123456789abcdef"
    assert partition_values(label, schema, ["x"]) == {"x": expected}


@pytest.mark.parametrize(
    ("text", "type_"),
    [
        ("TRUE", pa.bool_()),
        ("2024-01-01 10:30:00.000001", pa.timestamp("ms")),  # finer than the unit
        ("2024-01-01 10:30:00", pa.timestamp("us", tz="UTC")),  # no offset for a zoned type
        ("2024-01-01 10:30:00+00:00", pa.timestamp("us")),  # an offset for a naive type
    ],
)
def test_bad_kartothek_partition_value_text_refused(text: str, type_: pa.DataType) -> None:
    from urllib.parse import quote

    schema = pa.schema([("x", type_), ("v", pa.int64())])
    label = f"x={quote(text, safe='')}/0123456789abcdef0123456789abcdef"
    with pytest.raises(CorruptFileError, match="partition column 'x'"):
        partition_values(label, schema, ["x"])
