"""An independent reader: the files trinity writes, read with json, pyarrow and urllib only.

Trinity code only *writes* the dataset here. Everything below the marked line
finds, parses and checks the files by hand against seed 004 (file name rules,
attributes and types, the partition content encoding, ``_common_metadata``,
index files), so the layout is readable without trinity-dbapi.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import unquote

import fsspec
import msgpack
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.tables.helpers import simple_schema

SCHEMA = simple_schema(id="int8", day="date", shop="varchar", amount="float8")
BY = ["day", "shop"]
SHOPS = ["north/1", "süd 2", "a=b%c", "plain", "__HIVE_DEFAULT_PARTITION__", None]
ROWS = 60


def _data() -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "day": [datetime.date(2024, 1, 1 + i % 3) if i % 7 else None for i in range(ROWS)],
            "shop": [SHOPS[i % len(SHOPS)] for i in range(ROWS)],
            "amount": [i * 1.5 for i in range(ROWS)],
        }
    )


def _write_with_trinity(uri: str) -> str:
    """Write the dataset (two commits, an index) with trinity; return the last metadata path."""
    from trinity_dbapi.storage import open_storage
    from trinity_dbapi.tables import build_index, new_dataset, write_data, write_metadata

    storage = open_storage(uri)
    meta = new_dataset(storage, SCHEMA, BY)
    data = _data()
    for half in (data.slice(0, ROWS // 2), data.slice(ROWS // 2)):
        meta = meta.with_partitions(write_data(storage, meta, SCHEMA, BY, half))
    meta = build_index(storage, meta, SCHEMA, BY, "id")
    json_path = write_metadata(storage, meta, format="json")
    write_metadata(storage, meta, format="msgpack.zstd")
    return json_path


@pytest.fixture(params=["local", "memory"])
def lake(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, Callable[[str], bytes], Callable[[], list[str]]]]:
    """``(uri, read(relative path), list())``: plain access to the lake's files, no trinity."""
    if request.param == "local":
        root = tmp_path / "lake"

        def read(path: str) -> bytes:
            return (root / path).read_bytes()

        def files() -> list[str]:
            return sorted(
                str(Path(d, f).relative_to(root)).replace(os.sep, "/")
                for d, _, names in os.walk(root)
                for f in names
            )

        yield f"file://{root}", read, files
    else:
        fs = fsspec.filesystem("memory")
        base = f"/independent-{uuid.uuid4().hex}/lake"

        def read(path: str) -> bytes:
            return bytes(fs.cat_file(f"{base}/{path}"))

        def files() -> list[str]:
            return sorted(p[len(base) + 1 :] for p in fs.find(base))

        yield f"memory://{base}", read, files
        fs.rm(base, recursive=True)


# ---- everything below reads by hand -----------------------------------------------

SEED_COMPONENT = re.compile(r"[A-Za-z0-9+\-_]+")
URL_ENCODED = re.compile(r"(?:[A-Za-z0-9+\-_.~]|%[0-9A-F]{2})*")
UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def _check_file_name(path: str, uuid_: str) -> None:
    """Seed 004's name rules, with the layout's documented deviations."""
    parts = path.split("/")
    assert parts[0] == uuid_ and SEED_COMPONENT.fullmatch(uuid_)
    if parts[1] == "metadata":
        seq, rest = parts[2].split("-", 1)
        assert re.fullmatch(r"\d{10}", seq)
        ident, *suffix = rest.split(".", 1)
        assert UUID4.fullmatch(ident)
        assert suffix[0] in ("by-dataset-metadata.json", "by-dataset-metadata.msgpack.zstd")
    elif parts[1] == "table":
        if parts[2] == "_common_metadata":
            assert len(parts) == 3
            return
        *directories, file_name = parts[2:]
        for directory in directories:  # deviation: '=' and URL-encoding ('%', '.', '~')
            name, value = directory.split("=")
            assert URL_ENCODED.fullmatch(name) and URL_ENCODED.fullmatch(value)
        stem, suffix = file_name.split(".")
        assert UUID4.fullmatch(stem) and suffix == "parquet"
    else:
        assert parts[1] == "indices" and len(parts) == 4
        assert SEED_COMPONENT.fullmatch(parts[2])  # the column name "id"
        stamp, rest = parts[3].split("+", 1)  # deviation: '+<uuid4 hex>' after the timestamp
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}%3A\d{2}%3A\d{2}\.\d{6}", stamp)
        assert re.fullmatch(r"[0-9a-f]{32}\.by-dataset-index\.parquet", rest)
        assert datetime.datetime.fromisoformat(unquote(stamp))


def _check_attributes(body: dict[str, object]) -> None:
    assert set(body) == {
        "dataset_metadata_version",
        "dataset_uuid",
        "metadata",
        "partitions",
        "indices",
    }
    assert type(body["dataset_metadata_version"]) is int and body["dataset_metadata_version"] == 4
    assert isinstance(body["dataset_uuid"], str)
    metadata = body["metadata"]
    assert isinstance(metadata, dict)
    assert all(type(k) is str and type(v) is str for k, v in metadata.items())
    partitions = body["partitions"]
    assert isinstance(partitions, dict)
    for label, partition in partitions.items():
        assert partition == {"files": {"table": f"{body['dataset_uuid']}/table/{label}.parquet"}}
    indices = body["indices"]
    assert isinstance(indices, dict) and all(type(v) is str for v in indices.values())


def _restore(label: str) -> dict[str, object]:
    """The partition values of a label, typed by hand from the schema's types."""
    values: dict[str, object] = {}
    for directory in label.split("/")[:-1]:
        name, raw = directory.split("=")
        text = None if raw == "__HIVE_DEFAULT_PARTITION__" else unquote(raw)
        values[unquote(name)] = (
            datetime.date.fromisoformat(text) if name == "day" and text else text
        )
    return values


def test_files_read_without_trinity(
    lake: tuple[str, Callable[[str], bytes], Callable[[], list[str]]],
) -> None:
    uri, read, files = lake
    json_path = _write_with_trinity(uri)

    # Find the dataset by its metadata file names, as a foreign reader would.
    all_files = files()
    metadata_files = [f for f in all_files if ".by-dataset-metadata." in f]
    assert json_path in metadata_files and len(metadata_files) == 2
    body = json.loads(read(json_path))
    _check_attributes(body)
    dataset = body["dataset_uuid"]
    assert all(f.startswith(f"{dataset}/") for f in all_files)  # one prefix for everything
    for path in all_files:
        _check_file_name(path, dataset)
    assert json.loads(body["metadata"]["trinity.partition_by"]) == BY

    # The msgpack.zstd twin holds the same attributes in a standard zstd frame.
    zstandard = pytest.importorskip("zstandard")
    (packed_path,) = [f for f in metadata_files if f.endswith(".msgpack.zstd")]
    assert msgpack.unpackb(zstandard.ZstdDecompressor().decompress(read(packed_path))) == body

    # _common_metadata: an empty Parquet file with every column, partition columns included.
    common = pq.read_table(pa.BufferReader(read(f"{dataset}/table/_common_metadata")))
    assert common.num_rows == 0 and common.schema.names == ["id", "day", "shop", "amount"]

    # Data files: payload without partition columns; partition values from the path.
    pieces = []
    for label, partition in body["partitions"].items():
        table = pq.read_table(pa.BufferReader(read(partition["files"]["table"])))
        assert table.column_names == ["id", "amount"]
        for name, value in _restore(label).items():
            column = pa.array([value] * table.num_rows, common.schema.field(name).type)
            table = table.append_column(common.schema.field(name), column)
        pieces.append(table.select(["id", "day", "shop", "amount"]))
    rows = pa.concat_tables(pieces).sort_by("id")
    assert rows.to_pylist() == _data().to_pylist()

    # The index: each id value -> the labels of the partitions holding it.
    index = pq.read_table(pa.BufferReader(read(body["indices"]["id"])))
    assert index.column_names == ["id", "partition"]
    expected: dict[int, list[str]] = {}
    for label, partition in body["partitions"].items():
        ids = pq.read_table(pa.BufferReader(read(partition["files"]["table"])))["id"]
        for value in ids.to_pylist():
            expected.setdefault(value, []).append(label)
    assert index.to_pydict() == {
        "id": sorted(expected),
        "partition": [sorted(expected[value]) for value in sorted(expected)],
    }
