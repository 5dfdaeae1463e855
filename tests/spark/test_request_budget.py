"""What a Spark read task costs a remote store, counted without a JVM.

A task is the reader Spark pickles into an executor, reading one data file
(``TrinityLakeReader.read``): it opens the storage itself and reads its file
through it. On a store that is not the local disk that is one request in
one round: a suffix-range GET brings a small file whole, with no HEAD and
no metadata read (the driver pinned the version and sent the dataset
metadata with the task).
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

pytest.importorskip("pyspark")

import trinity_dbapi
from trinity_dbapi.spark.options import Location
from trinity_dbapi.storage import Storage
from trinity_dbapi.storage.cache import shared_cache

LATENCY = 0.02


@pytest.fixture
def lake(round_trip_lake: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    return round_trip_lake


def test_a_read_task_costs_one_request_in_one_round(
    lake: tuple[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyspark.sql.datasource import InputPartition

    from trinity_dbapi.spark.source import TrinityLakeDataSource

    uri, options = lake
    con = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    con.execute("CREATE TABLE t (id INT8, p INT4) PARTITIONED BY (p)")
    con.execute("INSERT INTO t SELECT range, range % 3 FROM range(30)")
    source = TrinityLakeDataSource({"uri": uri, "table": "default.t", **_dotted(options)})
    reader = source.reader(source.schema())
    partitions = list(reader.partitions())
    assert len(partitions) == 3
    task = pickle.loads(pickle.dumps(reader))  # as Spark ships it to an executor

    opened: list[Storage] = []
    original = Location.storage

    def storage(self: Location) -> Any:
        opened.append(original(self))
        return opened[-1]

    monkeypatch.setattr(Location, "storage", storage)
    monkeypatch.setattr(Storage, "latency", LATENCY)
    shared_cache().clear()  # a fresh executor holds nothing
    rows = [
        row for batch in task.read(InputPartition(partitions[1].value)) for row in batch.to_pylist()
    ]
    assert sorted(r["id"] for r in rows) == [i for i in range(30) if i % 3 == 1]
    used = opened[-1].stats
    assert (used.rounds, used.requests, used.reads) == (1, 1, 1), used


def _dotted(options: dict[str, Any]) -> dict[str, str]:
    if not options:
        return {}
    import json

    return {"storageOptions": json.dumps(options)}
