"""Files of one write encoded side by side: lanes keep each file's steps in order."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trinity_dbapi.storage import open_storage
from trinity_dbapi.tables import encode_lanes, writer
from trinity_dbapi.tables.encode_lanes import Lanes
from trinity_dbapi.tables.reader import read_table
from trinity_dbapi.tables.writer import new_dataset, write_data


def test_a_lane_runs_in_order_and_lanes_run_side_by_side() -> None:
    lanes = Lanes()
    first, second = lanes.lane(), lanes.lane()
    seen: list[int] = []
    both = threading.Barrier(2, timeout=10)  # broken unless the lanes overlap
    for i in range(5):
        first.submit(lambda i=i: (time.sleep(0.001 * (5 - i)), seen.append(i)))
    first.submit(both.wait)
    second.submit(both.wait)
    first.wait()
    second.wait()
    lanes.close()
    assert seen == [0, 1, 2, 3, 4]


def test_an_error_is_raised_by_wait_and_skips_the_rest() -> None:
    lanes = Lanes()
    lane = lanes.lane()
    ran: list[str] = []
    lane.submit(lambda: ran.append("a"))
    lane.submit(lambda: 1 / 0)
    lane.submit(lambda: ran.append("c"))
    with pytest.raises(ZeroDivisionError):
        lane.wait()
    lanes.close()
    assert ran == ["a"]


def test_submitting_blocks_beyond_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encode_lanes, "IN_FLIGHT", 2)
    lanes = Lanes()
    lane = lanes.lane()
    release = threading.Event()
    lane.submit(release.wait)
    lane.submit(lambda: None)
    third = threading.Thread(target=lambda: lane.submit(lambda: "third"))
    third.start()
    third.join(0.2)
    assert third.is_alive()  # two steps in flight: the third waits for room
    release.set()
    third.join(10)
    assert lane.wait() == "third"
    lanes.close()


def _dataset(tmp_path: Path) -> tuple[Any, Any, pa.Schema]:
    storage = open_storage(str(tmp_path))
    schema = pa.schema([("id", pa.int64()), ("v", pa.float64())])
    return storage, new_dataset(storage, schema, []), schema


def test_a_big_write_is_files_of_equal_size_with_every_row(tmp_path: Path) -> None:
    storage, meta, schema = _dataset(tmp_path)
    rows = 2 * writer.ROW_GROUP_ROWS * 2 + 17
    data = pa.table({"id": np.arange(rows), "v": np.arange(rows) / 2}, schema=schema)
    seen: list[int] = []
    files = write_data(
        storage, meta, schema, [], data, target_rows_per_file=rows // 2, progress=seen.append
    )
    sizes = [pq.ParquetFile(tmp_path / path).metadata.num_rows for path in files.values()]
    assert sizes == [(rows + 2) // 3, (rows + 2) // 3, rows - 2 * ((rows + 2) // 3)]
    assert seen == sorted(seen) and seen[-1] == rows
    meta = meta.with_partitions(files)
    assert read_table(storage, meta, schema, []).equals(data)


def test_a_failure_in_a_lane_fails_the_write_and_leaves_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, meta, schema = _dataset(tmp_path)
    rows = 4 * writer.ROW_GROUP_ROWS
    data = pa.table({"id": np.arange(rows), "v": np.arange(rows) / 2}, schema=schema)
    real = writer._OpenFile._encode
    calls: list[int] = []

    def failing(self: Any, table: pa.Table) -> None:
        calls.append(table.num_rows)
        if len(calls) == 2:
            raise OSError("disk full")
        real(self, table)

    monkeypatch.setattr(writer._OpenFile, "_encode", failing)
    before = threading.active_count()
    with pytest.raises(OSError, match="disk full"):
        write_data(storage, meta, schema, [], data, target_rows_per_file=rows // 2)
    assert threading.active_count() == before
    # The file that failed is not stored; the other one may be, unreferenced
    # (as after any failed write: garbage collection removes it).
    assert len(list(tmp_path.rglob("*.parquet"))) <= 1


def test_a_long_streamed_write_holds_few_finished_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, meta, schema = _dataset(tmp_path)
    per_file = writer.ROW_GROUP_ROWS  # every file fills a row group: all go through lanes
    rows = 10 * per_file
    data = pa.table({"id": np.arange(rows), "v": np.arange(rows) / 2}, schema=schema)
    reader = pa.RecordBatchReader.from_batches(schema, data.to_batches(max_chunksize=50_000))
    waiting: list[int] = []
    real = writer._Sink._store

    def store(self: Any, *args: Any) -> None:
        waiting.append(len(self.closing))
        real(self, *args)

    monkeypatch.setattr(writer._Sink, "_store", store)
    files = write_data(storage, meta, schema, [], reader, target_rows_per_file=per_file)
    assert len(files) == 10 and len(waiting) == 10
    assert max(waiting) <= encode_lanes.THREADS  # stored as they finish, not all at the end
    meta = meta.with_partitions(files)
    assert read_table(storage, meta, schema, []).equals(data)
