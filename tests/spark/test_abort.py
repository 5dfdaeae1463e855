"""A failed Spark job commits nothing, and leaves no data file behind once garbage is collected.

The job's second task raises (a Python UDF fails on its last row, once the
first task's file is on disk and a moment later, so that the first task has
usually finished). ``abort`` deletes the files of the tasks whose results
reached the driver; whatever remains is unreachable, and
``CALL system.collect_garbage`` removes it.
"""

from __future__ import annotations

import datetime
import types
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from pyspark.errors import PythonException
from pyspark.sql import functions as F
from pyspark.sql import types as T

from tests.spark.helpers import Lake, files_on_disk
from trinity_dbapi.spark.write import FilesWritten, TrinityLakeWriter
from trinity_dbapi.storage import open_storage

#: The UDF's message, found in Spark's error.
BOOM = "boom: row 7 refuses to be written"


def _failing_frame(spark: Any, root: Path) -> Any:
    """Rows 0..7 in two partitions, day 2024-01-02; the UDF raises on row 7 (second task)."""
    first_file = str(root / "*" / "table" / "day=2024-01-02" / "*.parquet")

    def fail_on_seven(i):  # no hints: PySpark would try to infer a pandas UDF
        if i == 7:
            import glob
            import time

            deadline = time.monotonic() + 30
            while not glob.glob(first_file) and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.5)  # the first task returns its commit message
            raise ValueError("boom: row 7 refuses to be written")
        return i

    boom = F.udf(fail_on_seven, T.LongType())
    return spark.range(0, 8, 1, 2).select(
        boom("id").alias("id"),
        F.lit(datetime.date(2024, 1, 2)).alias("day"),
        F.lit("z").alias("shop"),
    )


def _collect_garbage(lake: Lake) -> tuple[Any, ...]:
    return lake.rows("CALL system.collect_garbage(grace_period_millis => 0)")[0]


@pytest.fixture
def shops(lake: Lake) -> Lake:
    lake.execute(
        "CREATE TABLE s.t (id INT8 NOT NULL, day DATE, shop VARCHAR(10)) PARTITIONED BY (day)"
    )
    lake.execute("CREATE INDEX by_shop ON s.t (shop)")
    lake.execute("INSERT INTO s.t VALUES (1, DATE '2024-01-01', 'a')")
    return lake


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_a_failed_write_commits_nothing_and_leaves_no_files(shops: Lake, mode: str) -> None:
    assert shops.root is not None
    before_files = files_on_disk(shops.root)
    before = shops.version()
    with pytest.raises(PythonException, match=BOOM):
        shops.save(_failing_frame(shops.spark, shops.root), "s.t", mode=mode)
    assert shops.version() == before
    assert shops.rows("SELECT * FROM s.t") == [(1, datetime.date(2024, 1, 1), "a")]
    assert shops.rows("SELECT count(*) FROM s.t WHERE shop = 'z'") == [(0,)]
    # The first task did write into the new partition's directory...
    (dataset,) = {path.split("/")[0] for path in shops.data_files("s.t").values()}
    assert (shops.root / dataset / "table" / "day=2024-01-02").is_dir()
    # ... and abort deleted its file if its result reached the driver before
    # the job failed (Spark passes abort the results it has: usually, thanks
    # to the UDF's wait, but a loaded machine can be later; the test below
    # proves abort deletes what it is given). Whatever is left is that
    # unreachable file, and garbage collection removes exactly it.
    left = files_on_disk(shops.root) - before_files
    assert all(
        path.startswith(f"{dataset}/table/day=2024-01-02/") and path.endswith(".parquet")
        for path in left
    ), left
    deleted, _, too_young, foreign, dry_run = _collect_garbage(shops)
    assert (deleted, too_young, foreign, dry_run) == (len(left), 0, 0, False)
    assert files_on_disk(shops.root) == before_files
    assert shops.read("s.t").collect() == [(1, datetime.date(2024, 1, 1), "a")]


def test_a_failed_create_table_creates_nothing_and_gc_removes_its_dataset(lake: Lake) -> None:
    assert lake.root is not None
    before_files = files_on_disk(lake.root)
    before = lake.version()
    with pytest.raises(PythonException, match=BOOM):
        lake.save(
            _failing_frame(lake.spark, lake.root),
            "fresh.t",
            options={"createTable": "true", "partitionBy": "day"},
        )
    assert lake.version() == before
    assert lake.rows("SELECT count(*) FROM system.tables") == [(0,)]
    assert lake.rows("SELECT namespace_name FROM system.namespaces") == [("s",)]
    # The new table's empty dataset was written before the job ran; it is
    # unreachable, and garbage collection removes it.
    left = files_on_disk(lake.root) - before_files
    assert left, "the empty dataset of the table to create"
    assert not any(path.endswith(".parquet") and "/table/" in path for path in left)
    deleted, _, too_young, foreign, _ = _collect_garbage(lake)
    assert (deleted, too_young, foreign) == (len(left), 0, 0)
    assert files_on_disk(lake.root) == before_files


def test_abort_deletes_the_files_of_the_results_it_is_given(tmp_path: Path) -> None:
    """Spark passes abort a result per task: a finished task's, or None."""
    storage = open_storage(str(tmp_path))
    for path in ("d/table/a.parquet", "d/table/b.parquet", "d/table/kept.parquet"):
        storage.write(path, b"PAR1")
    plan = types.SimpleNamespace(location=types.SimpleNamespace(storage=lambda: storage))
    writer = TrinityLakeWriter(plan)  # type: ignore[arg-type]
    writer.abort(
        [
            FilesWritten(files={"p=1/a": "d/table/a.parquet", "p=2/b": "d/table/b.parquet"}),
            None,  # a task that had not finished
            FilesWritten(),  # a task that had no rows
        ]
    )
    assert sorted(
        path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*.parquet")
    ) == ["d/table/kept.parquet"]
