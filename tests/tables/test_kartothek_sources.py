"""The plateau writer of tests/tables/kartothek_sources.py gives the dataset documented.

Its frame is plateau's own ``read_table``; our reader must read the same rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kartothek import pipeline_frames
from tests.kartothek.rows_json import frame_rows
from tests.tables import kartothek_sources

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.parametrize("metadata_format", ["json", "msgpack"])
def test_plateau_writer(tmp_path: Path, metadata_format: str) -> None:
    pytest.importorskip("plateau", reason="plateau (the test extra) is not installed")
    frame = kartothek_sources.write_plateau_dataset(tmp_path, "ds", metadata_format)
    rows = frame_rows(frame)
    assert list(frame.columns) == pipeline_frames.TZ_COLUMNS
    assert [r["id"] for r in rows] == pipeline_frames.EXPECTED_IDS
    assert rows[0] == {**kartothek_sources.ROW_2, "tsz": "2024-01-01T12:30:00+00:00"}
    assert str(frame["tsz"].dtype) == "datetime64[ns, UTC]"
    suffix = "json" if metadata_format == "json" else "msgpack.zstd"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", f"ds.by-dataset-metadata.{suffix}"]
    assert (tmp_path / "ds" / "table" / "region=s%C3%BCd").is_dir()
    assert kartothek_sources.our_rows(tmp_path, "ds", pipeline_frames.TZ_COLUMNS) == rows


def test_we_read_plateau_per_type(tmp_path: Path) -> None:
    pytest.importorskip("plateau", reason="plateau (the test extra) is not installed")
    outcome = kartothek_sources.write_plateau_type_datasets(tmp_path)
    for name in ("null_string", "null_float"):
        error = outcome.pop(name)
        assert error is not None and error.startswith(kartothek_sources.NULL_PARTITION_ERROR)
    assert set(outcome.values()) == {None}
    got = kartothek_sources.we_read_type_datasets(tmp_path, outcome)
    assert got == kartothek_sources.WE_READ
