"""A clone's dataset metadata: files under the cloned dataset's UUID, and nothing looser.

docs/datasets.md, decision 25: a clone's metadata lists the source's files
where they are, ``<source uuid>/table/<label>.parquet`` with the partition's
own label and ``<source uuid>/indices/...``; the strict reader accepts
exactly that, garbage collection keeps and owns those files, and the file
facts are found by the listed path.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from trinity_dbapi.errors import CorruptFileError, ProgrammingError
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.tables import file_facts, file_rules, layout, managed
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.metadata_io import decode_metadata, encode_metadata

CLONE = "5a4f0c1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b"
SOURCE = "0d6de3c6-b7a4-11e6-8ed1-08002753cf7b"
LABEL = "day=2024-01-01/3f1b5d5e-8a44-4c1e-9d43-0e1f7f4c2b1a"
OWN = "day=2024-01-02/9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
INDEX = f"{SOURCE}/indices/v/2024-01-01T00%3A00%3A00.000000+ab.by-dataset-index.parquet"
PATH = f"{CLONE}/metadata/0000000001-6f0c1f0e-1b2a-4c3d-8e9f-0a1b2c3d4e5f.by-dataset-metadata.json"


def _body(shared_path: str = f"{SOURCE}/table/{LABEL}.parquet", index: str = INDEX) -> Any:
    return {
        "dataset_metadata_version": 4,
        "dataset_uuid": CLONE,
        "metadata": {
            "trinity.partition_by": '["day"]',
            file_facts.FACTS_KEY: json.dumps({LABEL: [2, 100, 1], OWN: [1, 50, 1]}),
        },
        "partitions": {
            LABEL: {"files": {"table": shared_path}},
            OWN: {"files": {"table": layout.data_file_path(CLONE, OWN)}},
        },
        "indices": {"v": index},
    }


def test_a_clones_metadata_reads_and_writes_back() -> None:
    meta = decode_metadata(PATH, json.dumps(_body()).encode())
    assert meta.files() == {
        LABEL: f"{SOURCE}/table/{LABEL}.parquet",
        OWN: f"{CLONE}/table/{OWN}.parquet",
    }
    assert meta.indices == {"v": INDEX}
    fmt, data = encode_metadata(meta, "json")
    assert fmt == "json" and decode_metadata(PATH, data) == meta
    # The facts are found by the path the metadata lists, not rebuilt from the UUID.
    assert file_facts.recorded_sizes(meta) == {
        f"{SOURCE}/table/{LABEL}.parquet": 100,
        f"{CLONE}/table/{OWN}.parquet": 50,
    }


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(f"{SOURCE}/table/{OWN}.parquet", id="another-label"),
        pytest.param(f"../{SOURCE}/table/{LABEL}.parquet", id="dot-dot"),
        pytest.param(f"a/b/table/{LABEL}.parquet", id="nested-folder"),
        pytest.param(f"a.b/table/{LABEL}.parquet", id="dot-in-uuid"),
        pytest.param(f"/table/{LABEL}.parquet", id="empty-uuid"),
        pytest.param(f"/{SOURCE}/table/{LABEL}.parquet", id="absolute"),
        pytest.param(f"s3://bucket/{SOURCE}/table/{LABEL}.parquet", id="uri"),
        pytest.param(f"{SOURCE}/indices/{LABEL}.parquet", id="not-table"),
    ],
)
def test_a_shared_data_file_must_keep_its_label_under_a_dataset_uuid(path: str) -> None:
    with pytest.raises(CorruptFileError, match="cloned from"):
        decode_metadata(PATH, json.dumps(_body(shared_path=path)).encode())
    assert layout.shared_data_file(LABEL, path) is None


@pytest.mark.parametrize(
    "index",
    [
        f"../{SOURCE}/indices/v/x.by-dataset-index.parquet",
        f"{SOURCE}/indices/",
        f"{SOURCE}/table/v/x.by-dataset-index.parquet",
        f"{SOURCE}/indices/v/x.parquet",
    ],
)
def test_a_shared_index_file_must_be_under_a_dataset_uuid(index: str) -> None:
    with pytest.raises(CorruptFileError, match="cloned from"):
        decode_metadata(PATH, json.dumps(_body(index=index)).encode())


def test_shared_data_file_names_the_dataset() -> None:
    assert layout.shared_data_file(LABEL, f"{SOURCE}/table/{LABEL}.parquet") == SOURCE


def _definition(**properties: str) -> TableDefinition:
    return TableDefinition(
        "c",
        [Column(1, "a", DataType("int8"))],
        table_format=managed.TABLE_FORMAT,
        format_properties={
            managed.DATASET_UUID: CLONE,
            managed.METADATA_LOCATION: PATH,
            **properties,
        },
    )


def test_a_clone_owns_the_datasets_it_shares_files_with() -> None:
    plain = file_rules.ownership(_definition(), "file:///lake/")
    assert plain.groups == {CLONE}
    clone = _definition(**{managed.SHARED_DATASETS: f"{SOURCE},other-one"})
    assert file_rules.ownership(clone, "file:///lake/").groups == {CLONE, SOURCE, "other-one"}
    # Only dataset UUIDs: a hostile property names no folder above or beside one.
    hostile = _definition(**{managed.SHARED_DATASETS: "../x,a/b,,."})
    assert file_rules.ownership(hostile, "file:///lake/").groups == {CLONE}


def test_garbage_collection_keeps_every_listed_file(tmp_path: Any) -> None:
    from trinity_dbapi.storage import open_storage

    storage = open_storage(str(tmp_path))
    storage.write(PATH, json.dumps(_body()).encode())
    assert file_rules.referenced_files(storage, _definition()) == {
        PATH,
        layout.common_metadata_path(CLONE),
        f"{SOURCE}/table/{LABEL}.parquet",
        f"{CLONE}/table/{OWN}.parquet",
        INDEX,
    }


def test_with_partitions_still_writes_only_under_its_own_uuid() -> None:
    meta = DatasetMetadata(dataset_uuid=CLONE, partitions={})
    with pytest.raises(ProgrammingError, match="must be"):
        meta.with_partitions({LABEL: f"{SOURCE}/table/{LABEL}.parquet"})
