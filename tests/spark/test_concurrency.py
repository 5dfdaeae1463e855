"""A Spark append and a DB-API insert on the same table, concurrently: both commit.

An append is a blind merge: its commit is rebased over whatever committed
since the driver resolved the table, like any other writer's.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from pyspark.sql import functions as F
from pyspark.sql import types as T

import trinity_dbapi
from tests.spark.helpers import Lake


@pytest.fixture
def events(lake: Lake) -> Lake:
    lake.execute("CREATE TABLE s.t (id INT8 NOT NULL, source VARCHAR(5))")
    lake.execute("CREATE INDEX by_source ON s.t (source)")
    lake.execute("INSERT INTO s.t VALUES (0, 'seed')")
    return lake


def _gated_frame(spark: Any, started: Path, go: Path) -> Any:
    """Rows 1..4 from Spark; its tasks announce ``started`` and wait for ``go`` (files)."""
    started_path, go_path = str(started), str(go)

    def gate(i):  # no hints: PySpark would try to infer a pandas UDF
        import os
        import time

        open(started_path, "a").close()
        deadline = time.monotonic() + 60
        while not os.path.exists(go_path) and time.monotonic() < deadline:
            time.sleep(0.01)
        return i

    gated = F.udf(gate, T.LongType())
    return spark.range(1, 5, 1, 2).select(gated("id").alias("id"), F.lit("spark").alias("source"))


def test_dbapi_insert_commits_while_the_spark_job_runs(events: Lake, tmp_path: Path) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    before = events.version()

    def dbapi_insert() -> int:
        # Runs while the Spark job is in its tasks: the driver resolved the
        # table before this commit, and the job commits after it.
        try:
            deadline = time.monotonic() + 60
            while not started.exists():
                if time.monotonic() > deadline:
                    raise TimeoutError("the Spark tasks did not start")
                time.sleep(0.01)
            conn = trinity_dbapi.connect(events.uri, autocommit=True)
            try:
                conn.cursor().execute("INSERT INTO s.t VALUES (100, 'dbapi'), (101, 'dbapi')")
                return int(conn.lakehouse.latest_version())
            finally:
                conn.close()
        finally:
            go.touch()  # never leave the tasks waiting

    with ThreadPoolExecutor(1) as pool:
        inserted = pool.submit(dbapi_insert)
        try:
            events.save(_gated_frame(events.spark, started, go), "s.t")
        finally:
            go.touch()
        inserted_version = inserted.result(60)
    assert inserted_version == before + 1  # the DB-API insert committed first
    assert events.version() == before + 2
    assert events.rows("SELECT id, source FROM s.t ORDER BY id") == [
        (0, "seed"),
        (1, "spark"),
        (2, "spark"),
        (3, "spark"),
        (4, "spark"),
        (100, "dbapi"),
        (101, "dbapi"),
    ]
    assert events.rows("SELECT count(*) FROM s.t WHERE source = 'spark'") == [(4,)]
    assert events.rows("SELECT count(*) FROM s.t WHERE source = 'dbapi'") == [(2,)]
    assert events.rows(
        "SELECT changed_objects FROM system.versions WHERE version > ? ORDER BY version", [before]
    ) == [(["table s.t"],), (["table s.t"],)]


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "SNAPSHOT"])
def test_a_dbapi_transaction_open_across_a_spark_append_commits(
    events: Lake, isolation: str
) -> None:
    before = events.version()
    txn = trinity_dbapi.connect(events.uri, isolation_level=isolation)
    try:
        txn.cursor().execute("INSERT INTO s.t VALUES (100, 'dbapi')")
        frame = events.spark.createDataFrame([(1, "spark"), (2, "spark")], "id long, source string")
        events.save(frame, "s.t")
        assert events.version() == before + 1
        txn.commit()
    finally:
        txn.close()
    assert events.version() == before + 2
    assert events.rows("SELECT id, source FROM s.t ORDER BY id") == [
        (0, "seed"),
        (1, "spark"),
        (2, "spark"),
        (100, "dbapi"),
    ]
    assert sorted(events.read("s.t").collect()) == [
        (0, "seed"),
        (1, "spark"),
        (2, "spark"),
        (100, "dbapi"),
    ]


def test_spark_reads_and_writes_from_other_python_threads(events: Lake) -> None:
    # Spark looks data sources up in the thread's active session: register()
    # in each thread makes it active there.
    from trinity_dbapi.spark import register

    spark = events.spark

    def append(first: int) -> int:
        register(spark)
        frame = spark.range(first, first + 3).select(F.col("id"), F.lit("thrd").alias("source"))
        events.save(frame, "s.t")
        return int(events.read("s.t").count())

    with ThreadPoolExecutor(max_workers=2) as pool:
        counts = list(pool.map(append, [10, 20]))
    assert max(counts) == 7  # the seed row and both appends
    assert events.rows("SELECT id FROM s.t WHERE source = 'thrd' ORDER BY id") == [
        (i,) for i in (10, 11, 12, 20, 21, 22)
    ]
