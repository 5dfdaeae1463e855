"""Benchmark: PySpark through the ``trinitylake`` data source, next to Spark's own Parquet.

One local Spark session (``local[2]``, 2 GB driver, UI off, session time zone
UTC), in one run on the same data: ``--rows`` rows (default 5,000,000) from
``spark.range`` in :data:`PARTITIONS` Spark partitions, with an ``id``
bigint, a ``name`` string (``concat('name', id)``), a ``score`` double, a
``day`` date and a ``ts`` timestamp, cached and counted before anything is
timed, so both sides time only their own write or read:

* writing: ``df.write.format("trinitylake").option("createTable", "true")
  .mode("overwrite").save("bench.t")`` (tasks in Python workers write the
  files, one lakehouse commit) versus ``df.write.mode("overwrite").parquet(path)``
  with the same zstd compression; after one untimed warm-up run each, runs
  alternate between the two sides, best of 5 each. Every save must be
  exactly one lakehouse commit (``max(version)`` of ``system.versions``
  between saves, outside the timing) and both outputs must hold the same
  number of rows. Target: ratio <= 1.3. A third side times the floor of
  every Python data source: a writer that only takes the Arrow batches Spark
  hands its tasks (``handoff_floor``), so the figures show what writing the
  files adds on top (``write_over_handoff``);
* reading: a full read that brings every row of every column through
  (``count``, sums of ``id``, ``score``, days and microseconds, total
  ``name`` length and how many names match their ``id``) of
  ``spark.read.format("trinitylake").load("bench.t")`` versus
  ``spark.read.parquet(path)``, the DataFrame made inside the timing on both
  sides (planning is part of a read); a warm-up, then alternating, best of
  5 each. Both must give the checksums of the cached source
  (``same_rows``) and its column types (``same_types``). Target: ratio <= 2.

Human-readable lines first; the last line is one JSON object with every
figure and a ``checks`` dict of booleans.

Run: ``python benchmarks/spark_io.py [--rows N] [--quick]``
(``--quick``: 200,000 rows and best of 2: a smoke run). Needs PySpark 4.1+ and Java.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceWriter,
    WriterCommitMessage,
)

import trinity_dbapi
from trinity_dbapi.spark import ARROW_BYTES_CONF, register
from trinity_dbapi.tables import managed

NAMESPACE = "bench"
TABLE = "t"
#: Spark partitions of the source, the same for both writers (one per core).
PARTITIONS = 2
#: Best of this many runs per side (the 2-core machine is noisy), after one
#: untimed warm-up run per side: the first run of each side starts Python
#: workers and compiles the JVM's hot paths, and took 2-3x as long.
RUNS = 5
WRITE_TARGET = 1.3
READ_TARGET = 2.0

#: Every row of every column goes through these aggregates (all exact for this
#: data: halves sum exactly in a double; the microseconds sum as a decimal
#: because a bigint sum would overflow).
CHECKSUM = {
    "rows": "count(*)",
    "id_sum": "sum(id)",
    "name_chars": "sum(length(name))",
    "names_match": "count_if(name = concat('name', id))",
    "score_sum": "sum(score)",
    "day_sum": "sum(unix_date(day))",
    "ts_sum_us": "sum(cast(unix_micros(ts) AS decimal(38, 0)))",
}


def spark_session() -> SparkSession:
    # Python workers must run this interpreter (the one with trinity_dbapi).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master(f"local[{PARTITIONS}]")
        .appName("trinity-bench-spark")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(PARTITIONS))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.parquet.compression.codec", "zstd")
        # TrinityLakeReader implements pushFilters(): Spark refuses to read
        # through it unless Python filter pushdown is on (off by default).
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    spark.dataSource.register(HandoffSink)
    return spark


def source(spark: SparkSession, rows: int) -> DataFrame:
    """The benchmark rows, cached and materialised (the timings never include making them)."""
    frame = spark.range(0, rows, 1, PARTITIONS).selectExpr(
        "id",
        "concat('name', id) AS name",
        "id * 0.5D AS score",
        "date_add(DATE '2024-01-01', CAST(id % 366 AS int)) AS day",
        "timestamp_micros(1704067200000000 + id * 1000001) AS ts",
    )
    frame = frame.cache()
    frame.count()
    return frame


def checksum(frame: DataFrame) -> dict[str, Any]:
    """The :data:`CHECKSUM` figures of ``frame`` (one Spark job reading every row)."""
    row = frame.selectExpr(*(f"{sql} AS {name}" for name, sql in CHECKSUM.items())).collect()[0]
    return {name: row[name] if name == "score_sum" else int(row[name]) for name in CHECKSUM}


def types(frame: DataFrame) -> dict[str, str]:
    return {field.name: field.dataType.simpleString() for field in frame.schema.fields}


def latest_version(lake: str) -> int:
    conn = trinity_dbapi.connect(lake)
    try:
        return int(conn.execute("SELECT max(version) FROM system.versions").fetchone()[0])
    finally:
        conn.close()


def stored_rows(lake: str) -> int:
    conn = trinity_dbapi.connect(lake)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {NAMESPACE}.{TABLE}").fetchone()[0])
    finally:
        conn.close()


def alternate(
    runs: int,
    sides: dict[str, Callable[[], Any]],
    after: dict[str, Callable[[], None]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run each side ``runs`` times, alternating (drift hits both); times and last results.

    ``after[name]``, if given, runs after each of that side's runs (the
    warm-up too), outside the timing.
    """
    times: dict[str, list[float]] = {name: [] for name in sides}
    results: dict[str, Any] = {}
    for name, work in sides.items():  # warm-up, untimed
        work()
        if after and name in after:
            after[name]()
    for _ in range(runs):
        for name, work in sides.items():
            results[name] = None  # let the previous result go before timing the next
            t0 = time.perf_counter()
            results[name] = work()
            times[name].append(time.perf_counter() - t0)
            if after and name in after:
                after[name]()
    return {
        name: {
            "seconds": round(min(times[name]), 3),
            "runs_seconds": [round(t, 3) for t in times[name]],
            "result": results[name],
        }
        for name in sides
    }


def directory_size(path: Path) -> int:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


def table_files(lake: str) -> list[Path]:
    """The data files of the table's latest version, as benchmarks/query.py finds them."""
    conn = trinity_dbapi.connect(lake)
    try:
        definition = conn.lakehouse.begin().load_table(NAMESPACE, TABLE)
        meta = managed.metadata(conn.lakehouse.storage, definition)
        root = conn.lakehouse.storage.root_dir
        return [Path(root) / path for path in meta.files().values()]
    finally:
        conn.close()


# -- writing ----------------------------------------------------------------------


class RowsReceived(WriterCommitMessage):
    def __init__(self, rows: int) -> None:
        self.rows = rows


class HandoffWriter(DataSourceArrowWriter):
    """Takes every Arrow batch a task receives and does nothing with it."""

    def write(self, iterator: Iterator[pa.RecordBatch]) -> RowsReceived:
        return RowsReceived(sum(batch.num_rows for batch in iterator))

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        pass


class HandoffSink(DataSource):
    """The floor of any Python data source: Spark hands the rows over as Arrow, nothing more."""

    @classmethod
    def name(cls) -> str:
        return "bench_handoff"

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return HandoffWriter()


def bench_writes(
    spark: SparkSession, frame: DataFrame, lake: str, parquet: str, runs: int
) -> dict[str, Any]:
    versions = [latest_version(lake)]

    def trinitylake() -> None:
        (
            frame.write.format("trinitylake")
            .option("uri", lake)
            .option("createTable", "true")
            .mode("overwrite")
            .save(f"{NAMESPACE}.{TABLE}")
        )

    def spark_parquet() -> None:
        frame.write.mode("overwrite").parquet(parquet)

    def handoff() -> None:
        frame.write.format(HandoffSink.name()).mode("append").save()

    # Commits are counted between runs, outside the timing (Spark's side has no such check).
    figures: dict[str, Any] = alternate(
        runs,
        {"trinitylake": trinitylake, "parquet": spark_parquet, "handoff": handoff},
        after={"trinitylake": lambda: versions.append(latest_version(lake))},
    )
    commits = [after - before for before, after in itertools.pairwise(versions)]
    for name in ("trinitylake", "parquet", "handoff"):
        del figures[name]["result"]
    rows = frame.count()
    lake_rows = stored_rows(lake)
    files = table_files(lake)
    parquet_rows = spark.read.parquet(parquet).count()
    figures["trinitylake"].update(
        commits_per_save=commits,
        one_commit_each=len(commits) == runs + 1 and all(c == 1 for c in commits),
        rows=lake_rows,
        files=len(files),
        bytes=sum(path.stat().st_size for path in files),
    )
    figures["parquet"].update(
        rows=parquet_rows,
        files=len(list(Path(parquet).glob("*.parquet"))),
        bytes=directory_size(Path(parquet)),
    )
    figures["same_row_count"] = lake_rows == parquet_rows == rows
    return figures


# -- reading ------------------------------------------------------------------------


def _checksum_of(read: Callable[[], DataFrame]) -> dict[str, Any]:
    return checksum(read())


def bench_reads(spark: SparkSession, lake: str, parquet: str, runs: int) -> dict[str, Any]:
    def trinitylake() -> DataFrame:
        return spark.read.format("trinitylake").option("uri", lake).load(f"{NAMESPACE}.{TABLE}")

    def spark_parquet() -> DataFrame:
        return spark.read.parquet(parquet)

    readers = {"trinitylake": trinitylake, "parquet": spark_parquet}
    figures = alternate(
        runs, {name: functools.partial(_checksum_of, read) for name, read in readers.items()}
    )
    for name, read in readers.items():
        frame = read()
        figures[name]["checksum"] = figures[name].pop("result")
        figures[name]["types"] = types(frame)
        figures[name]["spark_partitions"] = frame.rdd.getNumPartitions()
    return figures


# -- main ------------------------------------------------------------------------------


def ratio(ours: float, theirs: float) -> float:
    return round(ours / theirs, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="rows written and read (5,000,000)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200,000 rows")
    args = parser.parse_args(argv)
    rows = args.rows or (200_000 if args.quick else 5_000_000)
    runs = 2 if args.quick else RUNS

    spark = spark_session()
    arrow_bytes = spark.conf.get(ARROW_BYTES_CONF, None)
    try:
        frame = source(spark, rows)
        want = checksum(frame)
        want_types = types(frame)
        with tempfile.TemporaryDirectory(prefix="trinity-bench-spark-") as tmp:
            lake = str(Path(tmp) / "lake")
            parquet = str(Path(tmp) / "parquet")
            trinity_dbapi.connect(lake).close()  # create the lakehouse
            writes = bench_writes(spark, frame, lake, parquet, runs)
            reads = bench_reads(spark, lake, parquet, runs)
        frame.unpersist()
    finally:
        spark.stop()

    ratios = {
        "write": ratio(writes["trinitylake"]["seconds"], writes["parquet"]["seconds"]),
        "read": ratio(reads["trinitylake"]["seconds"], reads["parquet"]["seconds"]),
        # What any Python data source pays before writing a byte, and ours on top of it.
        "handoff_floor": ratio(writes["handoff"]["seconds"], writes["parquet"]["seconds"]),
        "write_over_handoff": ratio(writes["trinitylake"]["seconds"], writes["handoff"]["seconds"]),
    }
    same_rows = writes["same_row_count"] and all(
        reads[name]["checksum"] == want for name in ("trinitylake", "parquet")
    )
    same_types = all(reads[name]["types"] == want_types for name in ("trinitylake", "parquet"))
    one_commit = writes["trinitylake"]["one_commit_each"]

    lake_w, spark_w = writes["trinitylake"], writes["parquet"]
    print(
        f"{'write':6} | {rows:,} rows, {PARTITIONS} Spark partitions"
        f" | trinitylake {lake_w['seconds']} s ({round(rows / lake_w['seconds']):,} rows/s),"
        f" commits per save {lake_w['commits_per_save']}"
        f" | Spark Parquet (zstd) {spark_w['seconds']} s ({spark_w['files']} file(s))"
        f" | ratio {ratios['write']} (<= {WRITE_TARGET:g})"
    )
    print(
        f"{'floor':6} | a Python data source that only receives the rows (Arrow from the JVM)"
        f" {writes['handoff']['seconds']} s: {ratios['handoff_floor']} x Spark Parquet;"
        f" trinitylake is {ratios['write_over_handoff']} x that floor"
    )
    lake_r, spark_r = reads["trinitylake"], reads["parquet"]
    print(
        f"{'read':6} | {rows:,} rows, every column aggregated"
        f" | trinitylake {lake_r['seconds']} s ({lake_r['spark_partitions']} Spark partitions)"
        f" | Spark Parquet {spark_r['seconds']} s ({spark_r['spark_partitions']} Spark partitions)"
        f" | ratio {ratios['read']} (<= {READ_TARGET:g})"
    )
    print(
        f"{'same':6} | row counts written {lake_w['rows']:,} / {spark_w['rows']:,}, checksums of"
        f" both reads as the source's: {same_rows} | column types: {same_types}"
        f" | bytes written: trinitylake {lake_w['bytes']:,} in {lake_w['files']} file(s),"
        f" Parquet {spark_w['bytes']:,} in {spark_w['files']} file(s)"
    )

    report = {
        "quick": args.quick,
        "rows": rows,
        "runs": runs,
        "spark_partitions": PARTITIONS,
        # Set by register() unless the session sets it (see docs/spark.md).
        "spark_conf": {ARROW_BYTES_CONF: arrow_bytes},
        "versions": {
            "pyspark": pyspark.__version__,
            "pyarrow": pa.__version__,
            "python": sys.version.split()[0],
        },
        "source": {"checksum": want, "types": want_types},
        "write": writes,
        "read": reads,
        "ratios": ratios,
        "checks": {
            "write_ratio_at_most_1_3": ratios["write"] <= WRITE_TARGET,
            "read_ratio_at_most_2": ratios["read"] <= READ_TARGET,
            "same_rows": same_rows,
            "same_types": same_types,
            "one_commit_per_save": one_commit,
        },
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
