"""Spark on a table partitioned by transforms: day(ts) and bucket(n, id).

Two tests only: Spark is slow on small machines.
"""

from __future__ import annotations

import datetime
from typing import Any

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from tests.spark.helpers import Lake, spark_rows
from trinity_dbapi.tables import managed
from trinity_dbapi.tables.reader import read_table
from trinity_dbapi.tables.transforms import Transform

UTC = datetime.timezone.utc
INSERT = (
    "INSERT INTO s.ev SELECT i, TIMESTAMPTZ '2024-01-01 00:00:00+00' + i * INTERVAL 5 HOUR, "
    "CAST(i % 3 AS INT4) FROM range(?, ?) r(i)"
)


def _events(lake: Lake) -> None:
    lake.execute(
        "CREATE TABLE s.ev (id INT8, ts TIMESTAMPTZ, v INT4) PARTITIONED BY (day(ts), bucket(4, id))"
    )
    lake.execute(INSERT, [0, 12])
    lake.execute(INSERT, [12, 24])  # 5 days, two files in most directories


def _directories(lake: Lake) -> dict[str, list[str]]:
    """Directory path -> the labels of its files."""
    result: dict[str, list[str]] = {}
    for label in lake.data_files("s.ev"):
        result.setdefault(label.rpartition("/")[0], []).append(label)
    return result


def _bucket(value: int) -> int:
    return Transform("id_bucket", "bucket", "id", 4).apply(pa.array([value], pa.int64()))[0].as_py()


def test_spark_reads_a_transform_partitioned_table_pruned_by_day_and_bucket(lake: Lake) -> None:
    _events(lake)
    directories = _directories(lake)
    files = sum(len(labels) for labels in directories.values())

    def files_of(test: Any) -> int:
        return sum(len(labels) for d, labels in directories.items() if test(d.split("/")))

    frame = lake.read("s.ev")
    assert frame.rdd.getNumPartitions() == files
    assert spark_rows(frame, "id") == lake.rows("SELECT * FROM s.ev ORDER BY id")
    one_day = "ts >= '2024-01-02 00:00:00' AND ts < '2024-01-03 00:00:00'"
    for where, expected_files in [
        (one_day, files_of(lambda parts: parts[0] == "ts_day=2024-01-02")),
        ("ts >= '2024-01-04 12:00:00'", files_of(lambda parts: parts[0] >= "ts_day=2024-01-04")),
        ("id = 7", files_of(lambda parts: parts[1] == f"id_bucket={_bucket(7)}")),
        (
            "id IN (7, 8) AND ts < '2024-01-02 00:00:00'",
            files_of(
                lambda parts: (
                    parts[0] == "ts_day=2024-01-01"
                    and parts[1] in {f"id_bucket={_bucket(7)}", f"id_bucket={_bucket(8)}"}
                )
            ),
        ),
        ("ts = '2024-01-01 10:00:00'", files_of(lambda parts: parts[0] == "ts_day=2024-01-01")),
    ]:
        pruned = lake.read("s.ev").where(where)
        read = pruned.rdd.getNumPartitions()
        if where.startswith("id"):
            # The bucket's files, fewer where their value bounds rule id out.
            assert 0 < read <= expected_files < files, where
        else:
            assert 0 < read == expected_files < files, where
        sql_where = where.replace("'2024", "TIMESTAMPTZ '2024").replace(":00'", ":00+00'")
        assert spark_rows(pruned, "id") == lake.rows(
            f"SELECT * FROM s.ev WHERE {sql_where} ORDER BY id"
        ), where


def test_spark_writes_into_the_transform_partitions(lake: Lake) -> None:
    _events(lake)
    before = set(lake.data_files("s.ev"))
    start = datetime.datetime(2024, 3, 1, tzinfo=UTC)
    rows = [(100 + i, start + datetime.timedelta(hours=9 * i), i % 3) for i in range(10)]
    frame = lake.spark.createDataFrame(rows, "id LONG, ts TIMESTAMP, v INT").repartition(2)
    lake.save(frame, "s.ev")
    added = set(lake.data_files("s.ev")) - before
    assert added
    # Each new file lies in the directories of its own rows' day and bucket.
    definition = lake.conn.lakehouse.begin().load_table("s", "ev")
    storage = lake.conn.lakehouse.storage
    meta = managed.metadata(storage, definition)
    written = []
    for label in added:
        data = read_table(
            storage, meta, managed.schema(definition), ["ts_day", "id_bucket"], [label]
        )
        directories = label.split("/")[:2]
        for id_, ts in zip(data["id"].to_pylist(), data["ts"].to_pylist(), strict=True):
            assert directories == [f"ts_day={ts:%Y-%m-%d}", f"id_bucket={_bucket(id_)}"], label
            written.append(id_)
    assert sorted(written) == [r[0] for r in rows]
    expected = sorted((i, ts, v) for i, ts, v in rows)
    assert lake.rows("SELECT * FROM s.ev WHERE id >= 100 ORDER BY id") == expected
    # Read back by Spark, pruned to one new day.
    pruned = lake.read("s.ev").where("ts >= '2024-03-02 00:00:00' AND ts < '2024-03-03 00:00:00'")
    assert spark_rows(pruned, "id") == [r for r in expected if r[1].day == 2]
    march_second = [label for label in added if label.startswith("ts_day=2024-03-02/")]
    assert pruned.rdd.getNumPartitions() == len(march_second)
