"""The Kartothek writer of tests/tables/kartothek_sources.py gives the dataset documented.

Its rows are Kartothek's own ``read_table``; our reader
(``trinity_dbapi.tables.kartothek``) must read the same rows from its files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tables import kartothek_sources

from . import pipeline_frames, venv

pytestmark = pytest.mark.kartothek


@pytest.mark.parametrize("metadata_format", ["json", "msgpack"])
def test_kartothek_writer(tmp_path: Path, metadata_format: str) -> None:
    try:
        rows = kartothek_sources.write_kartothek_dataset(tmp_path, "ds", metadata_format)
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))
    assert [r["id"] for r in rows] == pipeline_frames.EXPECTED_IDS
    assert all(list(r) == pipeline_frames.COLUMNS for r in rows)
    assert rows[0] == kartothek_sources.ROW_2
    assert [r["region"] for r in rows if r["id"] in (10, 12)] == ["b", "a"]
    assert [r["f"] for r in rows if r["id"] in (8, 12)] == [None, None]
    assert [r["s"] for r in rows if r["id"] in (3, 6, 9, 12)] == [None] * 4
    suffix = "json" if metadata_format == "json" else "msgpack.zstd"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", f"ds.by-dataset-metadata.{suffix}"]
    assert (tmp_path / "ds" / "table" / "region=s%C3%BCd").is_dir()
    # The write's index file and the update's; the metadata names the update's.
    assert len(list((tmp_path / "ds" / "indices" / "customer").iterdir())) == 2
    assert kartothek_sources.our_rows(tmp_path, "ds", pipeline_frames.COLUMNS) == rows


def test_we_read_kartothek_per_type(tmp_path: Path) -> None:
    try:
        outcome = kartothek_sources.write_kartothek_type_datasets(tmp_path)
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))
    for name in ("null_string", "null_float"):
        error = outcome.pop(name)
        assert error is not None and error.startswith(kartothek_sources.NULL_PARTITION_ERROR)
    assert set(outcome.values()) == {None}
    got = kartothek_sources.we_read_type_datasets(tmp_path, outcome)
    assert got == kartothek_sources.WE_READ
