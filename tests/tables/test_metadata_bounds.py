"""Bounds of a dataset metadata file (issue 29, items 4 and 5): its decoded size and its nesting.

A metadata file is read by the lakehouse for its own tables and by the
Kartothek import for another program's datasets, with the same decoder. A
small msgpack.zstd file inflating to gigabytes (a decompression bomb) is
refused once the inflated bytes pass ``MAX_METADATA_BYTES``, after at most
that much work, and a file nesting deeper than ``MAX_METADATA_DEPTH`` is
refused the same way inside a statement and outside one (Python's recursion
limit differs), always as ``CorruptFileError`` naming the file, never as a
``RecursionError`` or ``MemoryError``.
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any
from unittest import mock

import hypothesis
import hypothesis.strategies as st
import msgpack
import pyarrow as pa
import pytest

from trinity_dbapi.errors import CorruptFileError, OperationalError
from trinity_dbapi.sql.nesting import recursion_budget
from trinity_dbapi.storage.local import LocalStorage
from trinity_dbapi.tables import layout, metadata, metadata_io
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.metadata_io import (
    MAX_METADATA_BYTES,
    MAX_METADATA_DEPTH,
    decode_metadata,
    encode_metadata,
    write_metadata,
)

UUID = "0d6de3c6-b7a4-11e6-8ed1-08002753cf7b"
JSON_PATH = (
    f"{UUID}/metadata/0000000001-6f0c1f0e-1b2a-4c3d-8e9f-0a1b2c3d4e5f.by-dataset-metadata.json"
)
MSGPACK_PATH = JSON_PATH.replace(".json", ".msgpack.zstd")


def _body(**metadata: Any) -> dict[str, Any]:
    return {
        "dataset_metadata_version": 4,
        "dataset_uuid": UUID,
        "metadata": metadata,
        "partitions": {},
        "indices": {},
    }


def _encoded(body: Any, format: str) -> tuple[str, bytes]:
    """``(path, bytes)`` of a metadata file holding ``body`` in ``format``."""
    if format == "json":
        return JSON_PATH, json.dumps(body).encode()
    packed = msgpack.packb(body, use_bin_type=True)
    return MSGPACK_PATH, pa.Codec("zstd").compress(packed, asbytes=True)


def _zeros_frames(total: int, frame: int = 16 << 20) -> bytes:
    """zstd frames, one after another, inflating to ``total`` zero bytes (a bomb)."""
    one = pa.Codec("zstd").compress(b"\0" * frame, asbytes=True)
    return one * (total // frame)


# -- the decoded size (item 4) ------------------------------------------------------


def _bomb(size: int) -> bytes:
    """A valid metadata file: msgpack whose annotation ``x`` is ``size`` NUL characters."""
    head = {"dataset_metadata_version": 4, "dataset_uuid": UUID, "partitions": {}, "indices": {}}
    # A map of 5 entries: the 4 above, then "metadata": {"x": <str 32 of size bytes>}.
    start = b"\x85" + msgpack.packb(head)[1:] + msgpack.packb("metadata") + b"\x81"
    start += msgpack.packb("x") + b"\xdb" + size.to_bytes(4, "big")
    return pa.Codec("zstd").compress(start, asbytes=True) + _zeros_frames(size)


def test_a_msgpack_bomb_is_refused_at_the_bound() -> None:
    """Valid msgpack, one string just past the bound: was read whole, is refused now."""
    small = _bomb(16 << 20)
    assert decode_metadata(MSGPACK_PATH, small).metadata["x"] == "\0" * (16 << 20)
    data = _bomb(MAX_METADATA_BYTES + (16 << 20))
    assert len(data) < 64 * 1024  # kilobytes inflating past 256 MiB
    with pytest.raises(CorruptFileError, match=r"inflates to more than 268,435,456 bytes") as info:
        decode_metadata(MSGPACK_PATH, data)
    assert info.value.path == MSGPACK_PATH


def test_a_six_gib_bomb_costs_the_bound_not_its_size() -> None:
    """200 KB inflating to 6 GiB: stopped once past 256 MiB (it took 12.5 GB and a minute)."""
    data = _zeros_frames(6 << 30)
    assert len(data) < 256 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(CorruptFileError, match="inflates to more than") as info:
            decode_metadata(MSGPACK_PATH, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.path == MSGPACK_PATH
    assert peak < 2 * MAX_METADATA_BYTES


@hypothesis.settings(max_examples=80, deadline=None)
@hypothesis.given(
    pad=st.integers(0, 3000),
    delta=st.one_of(st.integers(-2, 2), st.integers(-2000, 2000)),
    chunk=st.integers(1, 700),
    format=st.sampled_from(["json", "msgpack"]),
)
def test_accepted_exactly_up_to_the_bound(pad: int, delta: int, chunk: int, format: str) -> None:
    """Decoded size <= bound: read; one byte more: refused, whatever the step of inflating."""
    path, data = _encoded(_body(pad="x" * pad), format)
    decoded = len(data) if format == "json" else len(msgpack.packb(_body(pad="x" * pad)))
    bound = max(1, decoded + delta)
    with (
        mock.patch.object(metadata_io, "MAX_METADATA_BYTES", bound),
        mock.patch.object(metadata_io, "_INFLATE_CHUNK", chunk),
    ):
        if decoded <= bound:
            assert decode_metadata(path, data).metadata == {"pad": "x" * pad}
        else:
            with pytest.raises(CorruptFileError, match=f" {bound:,} bytes") as info:
                decode_metadata(path, data)
            assert info.value.path == path


def test_writing_refuses_what_reading_would(tmp_path: Any) -> None:
    """Never a file no reader reads back: OperationalError naming the dataset, nothing written."""
    storage = LocalStorage(tmp_path.as_uri())
    labels = [f"day=2024-01-01/{i:08d}" for i in range(40)]
    partitions = {label: {"table": layout.data_file_path(UUID, label)} for label in labels}
    meta = DatasetMetadata(UUID, partitions)
    json_size = len(encode_metadata(meta, "json")[1])
    packed_size = len(msgpack.packb(meta.to_dict(), use_bin_type=True))
    assert packed_size < json_size
    written = rf"{UUID} cannot be written.*{json_size:,} bytes for 40 data files"
    with (
        mock.patch.object(metadata_io, "MAX_METADATA_BYTES", json_size - 1),
        pytest.raises(OperationalError, match=written),
    ):
        encode_metadata(meta, "json")
    with (
        mock.patch.object(metadata_io, "MAX_METADATA_BYTES", packed_size - 1),
        pytest.raises(OperationalError, match="rewrite_data_files"),
    ):
        write_metadata(storage, meta, format="msgpack.zstd")
    assert storage.list() == []
    with mock.patch.object(metadata_io, "MAX_METADATA_BYTES", packed_size):
        path = write_metadata(storage, meta, format="msgpack.zstd")
        assert metadata_io.read_metadata(storage, path) == meta


# -- nesting (item 5) --------------------------------------------------------------


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def _nested_json(levels: int) -> bytes:
    """A metadata file whose annotation nests ``levels`` lists (text: no recursion to build)."""
    head = json.dumps(_body())[: -len(', "partitions": {}, "indices": {}}')]
    head = head[: -len("{}")]  # the empty "metadata" map's place
    return (
        head + '{"x": ' + "[" * levels + "1" + "]" * levels + '}, "partitions": {}, "indices": {}}'
    ).encode()


def _nested_msgpack(levels: int) -> bytes:
    head = {"dataset_metadata_version": 4, "dataset_uuid": UUID, "partitions": {}, "indices": {}}
    packed = b"\x85" + msgpack.packb(head)[1:] + msgpack.packb("metadata") + b"\x81"
    packed += msgpack.packb("x") + b"\x91" * levels + b"\x01"
    return pa.Codec("zstd").compress(packed, asbytes=True)


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.example(levels=MAX_METADATA_DEPTH - 2, format="json", in_statement=False)
@hypothesis.example(levels=MAX_METADATA_DEPTH - 1, format="json", in_statement=True)
@hypothesis.example(levels=MAX_METADATA_DEPTH - 2, format="msgpack", in_statement=True)
@hypothesis.example(levels=MAX_METADATA_DEPTH - 1, format="msgpack", in_statement=False)
@hypothesis.example(levels=5000, format="json", in_statement=True)
@hypothesis.given(
    levels=st.one_of(st.integers(0, 200), st.integers(200, 100_000)),
    format=st.sampled_from(["json", "msgpack"]),
    in_statement=st.booleans(),
)
def test_nesting_bound_is_the_same_everywhere(levels: int, format: str, in_statement: bool) -> None:
    """Read iff the file nests at most MAX_METADATA_DEPTH levels, inside a statement or not."""
    path, data = (
        (JSON_PATH, _nested_json(levels))
        if format == "json"
        else (MSGPACK_PATH, _nested_msgpack(levels))
    )
    depth = 2 + levels  # the top map, "metadata" (a map), then the lists x holds
    try:
        if in_statement:  # the raised recursion limit a SQL statement runs with
            with recursion_budget():
                meta = decode_metadata(path, data)
        else:
            meta = decode_metadata(path, data)
    except CorruptFileError as exc:
        assert depth > MAX_METADATA_DEPTH, exc
        assert exc.path == path
        assert f"more than {MAX_METADATA_DEPTH} levels deep" in str(exc)
    else:
        assert depth <= MAX_METADATA_DEPTH
        assert dict(meta.metadata) == {}  # a non-string annotation: accepted, ignored


def test_a_deep_value_where_a_string_belongs_is_named_not_recursed() -> None:
    """The message shows such a value bounded: a 1,020-level list used to overflow repr."""
    deep = _nested(1020)
    packed = msgpack.packb(_body() | {"partitions": {"p": {"files": {"table": deep}}}})
    data = pa.Codec("zstd").compress(packed, asbytes=True)
    with pytest.raises(CorruptFileError, match=r"files of partition 'p'.*\[\[\[") as info:
        decode_metadata(MSGPACK_PATH, data)
    assert len(str(info.value)) < 1000


def test_a_huge_value_in_a_message_is_shortened() -> None:
    label = "x" * 10_000_000
    body = _body() | {"partitions": {label: {"tables": {}}}}
    with pytest.raises(CorruptFileError, match="exactly the key 'files'") as info:
        decode_metadata(JSON_PATH, json.dumps(body).encode())
    assert len(str(info.value)) < 1000


@pytest.mark.parametrize(
    "recorded",
    ["nope", "5", '{"day": 1}', '["day", 1]', "[" * 100_000 + "]" * 100_000],
    ids=["not-json", "number", "object", "not-a-name", "deep"],
)
@pytest.mark.parametrize("with_keys", [False, True], ids=["alone", "with-partition_keys"])
def test_trinity_partition_by_must_be_a_list_of_names(recorded: str, with_keys: bool) -> None:
    """Was a bare JSONDecodeError, TypeError or RecursionError (an InternalError in SQL)."""
    body = _body(**{metadata.PARTITION_BY_KEY: recorded})
    if with_keys:
        body["partition_keys"] = ["day"]
    with pytest.raises(
        CorruptFileError, match=r"trinity\.partition_by must be a JSON list"
    ) as info:
        decode_metadata(JSON_PATH, json.dumps(body).encode())
    assert info.value.path == JSON_PATH
    assert len(str(info.value)) < 1000


# -- the other JSON texts of a dataset and a table definition ----------------------

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("in_statement", [False, True])
def test_deep_json_in_the_other_records_is_corrupt_not_a_recursion(in_statement: bool) -> None:
    """Earlier partitionings, transforms, a definition's partition columns: no RecursionError.

    Inside a statement a RecursionError became NestingTooDeepError, blaming the statement.
    """
    import contextlib

    from trinity_dbapi.format.definitions import PARTITION_COLUMNS, TableDefinition
    from trinity_dbapi.format.type_mapping import columns_from_schema
    from trinity_dbapi.tables import transforms
    from trinity_dbapi.tables.partitions import earlier_specs

    meta = DatasetMetadata(UUID, {}, metadata={metadata.PARTITION_SPECS_KEY: DEEP})
    columns = columns_from_schema(pa.schema([("x", pa.int64())]))
    properties = {PARTITION_COLUMNS: DEEP}
    table = TableDefinition("t", columns, table_format="kartothek", format_properties=properties)
    with recursion_budget() if in_statement else contextlib.nullcontext():
        with pytest.raises(CorruptFileError, match="partition_specs must be a JSON list") as info:
            earlier_specs(meta)
        assert info.value.path == f"dataset {UUID}"
        with pytest.raises(CorruptFileError, match="must be a JSON object of transforms"):
            transforms.loads('{"a": ' * 100_000 + "1" + "}" * 100_000, f"dataset {UUID}")
        with pytest.raises(CorruptFileError, match="must be a JSON list of column names"):
            _ = table.partition_columns
