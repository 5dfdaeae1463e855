"""Dataset metadata files: both encodings, the auto switch, strict reading, file names."""

from __future__ import annotations

import json
import re
from typing import Any

import msgpack
import pyarrow as pa
import pytest

from trinity_dbapi.errors import CorruptFileError, ProgrammingError, StorageFileNotFoundError
from trinity_dbapi.storage import Storage
from trinity_dbapi.tables import layout, managed, metadata, metadata_io
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.metadata_io import (
    COMPRESS_ABOVE_BYTES,
    UnsupportedDatasetVersionError,
    dataset_files,
    decode_metadata,
    read_metadata,
    write_metadata,
)

UUID = "0d6de3c6-b7a4-11e6-8ed1-08002753cf7b"
LABEL = "day=2024-01-01/3f1b5d5e-8a44-4c1e-9d43-0e1f7f4c2b1a"
DATA = f"{UUID}/table/{LABEL}.parquet"
INDEX = f"{UUID}/indices/v/2024-01-01T00%3A00%3A00.000000+ab.by-dataset-index.parquet"
PATH = f"{UUID}/metadata/0000000001-6f0c1f0e-1b2a-4c3d-8e9f-0a1b2c3d4e5f.by-dataset-metadata.json"


def _meta(partitions: int = 1) -> DatasetMetadata:
    files = {f"{LABEL}{i}" if i else LABEL: "" for i in range(partitions)}
    return DatasetMetadata(
        dataset_uuid=UUID,
        partitions={label: {"table": f"{UUID}/table/{label}.parquet"} for label in files},
        indices={"v": INDEX},
        metadata={"trinity.partition_by": '["day"]'},
    )


def _body(**changes: Any) -> dict[str, Any]:
    body = _meta().to_dict()
    body.update(changes)
    return {key: value for key, value in body.items() if value is not _DROP}


_DROP = object()


def _json(body: Any) -> bytes:
    return json.dumps(body).encode()


# -- round trips ---------------------------------------------------------------------


def test_json_round_trip(storage: Storage) -> None:
    meta = _meta()
    path = write_metadata(storage, meta, format="json")
    assert path.endswith(".by-dataset-metadata.json")
    assert json.loads(storage.read(path)) == {
        "dataset_metadata_version": 4,
        "dataset_uuid": UUID,
        "metadata": {"trinity.partition_by": '["day"]'},
        "partitions": {LABEL: {"files": {"table": DATA}}},
        "indices": {"v": INDEX},
    }
    back = read_metadata(storage, path)
    assert back == meta
    assert back.sequence == 1
    assert list(back.partitions) == list(meta.partitions)


def test_msgpack_zstd_round_trip_is_a_standard_zstd_frame(storage: Storage) -> None:
    zstandard = pytest.importorskip("zstandard")
    meta = _meta(5)
    path = write_metadata(storage, meta, format="msgpack.zstd")
    assert path.endswith(".by-dataset-metadata.msgpack.zstd")
    data = storage.read(path)
    assert data[:4] == b"\x28\xb5\x2f\xfd"  # the zstd frame magic number
    assert zstandard.get_frame_parameters(data).content_size > 0  # the size is recorded
    assert msgpack.unpackb(zstandard.ZstdDecompressor().decompress(data)) == meta.to_dict()
    assert read_metadata(storage, path) == meta


def test_a_streamed_zstd_frame_without_content_size_is_read(storage: Storage) -> None:
    zstandard = pytest.importorskip("zstandard")
    packed = msgpack.packb(_meta().to_dict())
    stream = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    data = stream.compress(packed) + stream.flush()
    path = PATH.replace(".json", ".msgpack.zstd")
    storage.create_unique(path, data)
    assert read_metadata(storage, path) == _meta()


def _json_size(meta: DatasetMetadata) -> int:
    return len(json.dumps(meta.to_dict(), separators=(",", ":")).encode())


def test_auto_switches_to_msgpack_zstd_past_the_threshold(storage: Storage) -> None:
    assert write_metadata(storage, _meta()).endswith(".json")
    per_partition = _json_size(_meta(2)) - _json_size(_meta(1))
    big = _meta(COMPRESS_ABOVE_BYTES // per_partition + 2)
    assert _json_size(big) > COMPRESS_ABOVE_BYTES
    path = write_metadata(storage, big)
    assert path.endswith(".msgpack.zstd")
    assert len(storage.read(path)) < _json_size(big) / 5
    assert read_metadata(storage, path) == big
    assert write_metadata(storage, big, format="json").endswith(".json")  # forced


def test_auto_threshold_is_inclusive(storage: Storage, monkeypatch: pytest.MonkeyPatch) -> None:
    meta = _meta(3)
    monkeypatch.setattr(metadata_io, "COMPRESS_ABOVE_BYTES", _json_size(meta))
    assert write_metadata(storage, meta).endswith(".json")
    monkeypatch.setattr(metadata_io, "COMPRESS_ABOVE_BYTES", _json_size(meta) - 1)
    assert write_metadata(storage, meta).endswith(".msgpack.zstd")


def test_sequence_orders_file_names_and_files_are_never_overwritten(storage: Storage) -> None:
    meta = _meta()
    first = write_metadata(storage, meta)
    again = write_metadata(storage, meta)  # same state, same sequence: still a new file
    assert first != again
    second = write_metadata(storage, read_metadata(storage, first).with_index("v", None))
    assert sorted([second, first]) == [first, second]
    assert re.fullmatch(
        rf"{UUID}/metadata/0000000002-[0-9a-f-]{{36}}\.by-dataset-metadata\.json", second
    )


def test_seed_style_file_name_is_read_as_sequence_zero(storage: Storage) -> None:
    path = f"{UUID}.by-dataset-metadata.json"
    storage.create_unique(path, _json(_meta().to_dict()))
    meta = read_metadata(storage, path)
    assert meta == _meta()
    assert meta.sequence == 0


def test_dataset_files_lists_everything_a_version_reaches(storage: Storage) -> None:
    path = write_metadata(storage, _meta())
    assert dataset_files(storage, path) == {
        path,
        f"{UUID}/table/_common_metadata",
        DATA,
        INDEX,
    }


def test_missing_file() -> None:
    from trinity_dbapi.storage import open_storage

    with pytest.raises(StorageFileNotFoundError):
        read_metadata(open_storage("memory://tables-missing/lake"), PATH)


# -- the model -----------------------------------------------------------------------


def test_with_partitions_adds_and_removes_in_order() -> None:
    meta = _meta()
    label = "day=2024-01-02/00000000-0000-4000-8000-000000000000"
    added = meta.with_partitions({label: f"{UUID}/table/{label}.parquet"}, [LABEL])
    assert added.files() == {label: f"{UUID}/table/{label}.parquet"}
    assert meta.files() == {LABEL: DATA}  # unchanged: immutable
    with pytest.raises(ProgrammingError, match="no partition"):
        meta.with_partitions({}, ["nope"])
    with pytest.raises(ProgrammingError, match="already has"):
        meta.with_partitions({LABEL: DATA})
    with pytest.raises(ProgrammingError, match="must be"):
        meta.with_partitions({label: "elsewhere.parquet"})
    with pytest.raises(TypeError):
        meta.partitions["x"] = {}  # type: ignore[index]


def test_write_refuses_invalid_metadata(storage: Storage) -> None:
    bad = DatasetMetadata(dataset_uuid="no/slashes", partitions={})
    with pytest.raises(ProgrammingError, match="dataset_uuid"):
        write_metadata(storage, bad)
    with pytest.raises(ProgrammingError, match="unknown metadata format"):
        write_metadata(storage, _meta(), format="xml")


# -- strict reading ------------------------------------------------------------------

BAD_BODIES = [
    pytest.param([1, 2], "top level must be a map", id="not-a-map"),
    pytest.param(
        _body(dataset_metadata_version="4"), "must be present and an INT", id="version-str"
    ),
    pytest.param(
        _body(dataset_metadata_version=4.0), "must be present and an INT", id="version-float"
    ),
    pytest.param(
        _body(dataset_metadata_version=True), "must be present and an INT", id="version-bool"
    ),
    pytest.param(_body(dataset_metadata_version=_DROP), "must be present", id="no-version"),
    pytest.param(_body(partitions=_DROP), r"'partitions' is missing", id="no-partitions"),
    pytest.param(_body(dataset_uuid=_DROP), "missing", id="no-uuid"),
    pytest.param(_body(dataset_uuid=1), "dataset_uuid must be a STRING", id="uuid-int"),
    pytest.param(_body(dataset_uuid="other"), "differs from the UUID", id="uuid-mismatch"),
    pytest.param(_body(extra=1), "unknown attributes", id="unknown-key"),
    # metadata {"a": 1}: accepted and ignored (Kartothek user metadata), see
    # tests/tables/test_kartothek_files.py.
    pytest.param(_body(metadata=[]), "metadata must be a MAP", id="meta-list"),
    pytest.param(_body(indices={"v": 1}), "must be a STRING file path", id="index-int"),
    pytest.param(_body(indices={"v": "x.parquet"}), "must be a file", id="index-elsewhere"),
    pytest.param(_body(partitions=[]), "partitions must be a MAP", id="partitions-list"),
    pytest.param(
        _body(partitions={LABEL: {"table": DATA}}), "exactly the key 'files'", id="no-files"
    ),
    pytest.param(
        _body(partitions={LABEL: {"files": {"table": 1}}}), "MAP<STRING, STRING>", id="file-int"
    ),
    pytest.param(
        _body(partitions={LABEL: {"files": {"core": DATA}}}), "table 'core'", id="other-table"
    ),
    pytest.param(
        _body(partitions={LABEL: {"files": {"table": f"{UUID}/table/x.parquet"}}}),
        "exactly one file",
        id="label-path-mismatch",
    ),
    pytest.param(
        _body(partitions={"../x": {"files": {"table": f"{UUID}/table/../x.parquet"}}}),
        "'..' component",
        id="dot-dot-label",
    ),
]


@pytest.mark.parametrize(("body", "rule"), BAD_BODIES)
def test_strict_reading_names_file_and_rule(body: Any, rule: str) -> None:
    with pytest.raises(CorruptFileError, match=rule) as info:
        decode_metadata(PATH, _json(body))
    assert info.value.path == PATH


def test_unknown_version_is_unsupported() -> None:
    with pytest.raises(UnsupportedDatasetVersionError, match="version 5") as info:
        decode_metadata(PATH, _json(_body(dataset_metadata_version=5)))
    assert (info.value.found, info.value.supported, info.value.path) == (5, 4, PATH)


@pytest.mark.parametrize(
    ("data", "rule"),
    [
        (b"\xff\xfe", "not valid UTF-8 JSON"),
        (b'{"a": NaN}', "not valid UTF-8 JSON"),
        (b'{"dataset_uuid": "a", "dataset_uuid": "b"}', "duplicate key"),
        (b"{", "not valid UTF-8 JSON"),
    ],
)
def test_malformed_json(data: bytes, rule: str) -> None:
    with pytest.raises(CorruptFileError, match=rule):
        decode_metadata(PATH, data)


def test_malformed_msgpack_zstd() -> None:
    path = PATH.replace(".json", ".msgpack.zstd")
    with pytest.raises(CorruptFileError, match="not a zstd frame"):
        decode_metadata(path, b"garbage")
    truncated = pa.Codec("zstd").compress(msgpack.packb(_meta().to_dict()), asbytes=True)[:-3]
    with pytest.raises(CorruptFileError, match="not a zstd frame"):
        decode_metadata(path, truncated)
    not_msgpack = pa.Codec("zstd").compress(b"\xc1", asbytes=True)
    with pytest.raises(CorruptFileError, match="not valid msgpack"):
        decode_metadata(path, not_msgpack)
    binary_uuid = _body()
    binary_uuid["dataset_uuid"] = UUID.encode()
    packed = pa.Codec("zstd").compress(msgpack.packb(binary_uuid, use_bin_type=True), asbytes=True)
    with pytest.raises(CorruptFileError, match="dataset_uuid must be a STRING"):
        decode_metadata(path, packed)


@pytest.mark.parametrize(
    "path",
    [
        f"{UUID}/metadata/1-x.by-dataset-metadata.json",
        f"{UUID}/metadata/0000000001-6f0c1f0e-1b2a-4c3d-8e9f-0a1b2c3d4e5f.json",
        f"{UUID}.by-dataset-metadata.xml",
        f"{UUID}/x.by-dataset-metadata.json",
    ],
)
def test_metadata_file_names_are_checked(path: str) -> None:
    with pytest.raises(CorruptFileError, match="must be named"):
        decode_metadata(path, _json(_body()))


def test_layout_constants_follow_kartothek() -> None:
    assert layout.TABLE == "table"
    assert layout.INDEX_SUFFIX == ".by-dataset-index.parquet"
    assert metadata.DATASET_METADATA_VERSION == 4


def test_metadata_pickles() -> None:
    import pickle

    meta = dataclasses_replace_sequence(_meta(2), 7)
    again = pickle.loads(pickle.dumps(meta))
    assert again == meta
    assert again.sequence == 7


def dataclasses_replace_sequence(meta: DatasetMetadata, sequence: int) -> DatasetMetadata:
    import dataclasses

    return dataclasses.replace(meta, sequence=sequence)


@pytest.mark.parametrize("format", ["json", "msgpack.zstd"])
@pytest.mark.parametrize("keys", [None, ("day",)])
def test_as_written_is_what_reading_the_written_file_gives(
    storage: Storage, format: str, keys: Any
) -> None:
    # managed.py keeps as_written(meta) for the file it wrote instead of reading it back.
    meta = DatasetMetadata(
        dataset_uuid=UUID,
        partitions=_meta(3).partitions,
        indices={"v": INDEX},
        metadata={"trinity.partition_by": '["day"]', "other": "x"},
        sequence=4,
        partition_keys=keys,
    )
    back = read_metadata(storage, write_metadata(storage, meta, format=format))
    kept = managed.as_written(meta)
    assert kept == back and kept.sequence == back.sequence == 5
    assert kept.partition_keys == back.partition_keys
    assert list(kept.partitions) == list(back.partitions)
    assert kept.to_dict() == back.to_dict()


def test_a_partition_of_another_form_is_still_refused_by_name() -> None:
    wrong = f"{UUID}/table/other.parquet"
    body = _body(partitions={LABEL: {"files": {"table": wrong}}})
    with pytest.raises(CorruptFileError, match=re.escape(f"found {{'table': '{wrong}'}}")):
        decode_metadata(PATH, _json(body))
