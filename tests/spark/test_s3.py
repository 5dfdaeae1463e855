"""Reading and writing a lakehouse on S3 (the session's moto server) through the data source."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark")


import trinity_dbapi
from tests.conftest import s3_options
from tests.spark.helpers import Lake, spark_rows

pytestmark = pytest.mark.s3

D1, D2 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)


@pytest.fixture
def s3_lake(spark: Any, moto_server: str, s3_bucket: str) -> Iterator[Lake]:
    """A lakehouse in a new bucket with s.t (partitioned by day) holding two rows in two files."""
    uri = f"s3://{s3_bucket}/lake"
    conn = trinity_dbapi.connect(uri, storage_options=s3_options(moto_server), autocommit=True)
    lake = Lake(spark=spark, uri=uri, conn=conn)
    lake.execute("CREATE NAMESPACE s")
    lake.execute(
        "CREATE TABLE s.t (id INT8 NOT NULL, day DATE, shop VARCHAR(10)) PARTITIONED BY (day)"
    )
    lake.execute("CREATE INDEX by_shop ON s.t (shop)")
    lake.execute("INSERT INTO s.t VALUES (1, DATE '2024-01-01', 'a'), (2, DATE '2024-01-02', 'b')")
    try:
        yield lake
    finally:
        conn.close()


def _storage_dot_options(endpoint: str) -> dict[str, str]:
    """The credentials and endpoint as ``storage.<option>`` data source options."""
    return {"storage.key": "testing", "storage.secret": "testing", "storage.endpoint_url": endpoint}


def test_read_with_storage_dot_options(s3_lake: Lake, moto_server: str) -> None:
    frame = s3_lake.read("s.t", _storage_dot_options(moto_server))
    assert frame.rdd.getNumPartitions() == 2
    assert spark_rows(frame, "id") == s3_lake.rows("SELECT * FROM s.t ORDER BY id")
    assert spark_rows(frame, "id") == [(1, D1, "a"), (2, D2, "b")]
    pruned = frame.where("shop = 'b'")
    assert pruned.rdd.getNumPartitions() == 1
    assert pruned.collect() == [(2, D2, "b")]


def test_read_and_write_with_storage_options_json(s3_lake: Lake, moto_server: str) -> None:
    as_json = {"storageOptions": json.dumps(s3_options(moto_server))}
    before = s3_lake.version()
    frame = s3_lake.spark.createDataFrame(
        [(3, D2, "c"), (4, D1, "a")], "id long, day date, shop string"
    )
    s3_lake.save(frame, "s.t", options=as_json)
    assert s3_lake.version() == before + 1
    assert s3_lake.rows("SELECT id FROM s.t WHERE shop = 'a' ORDER BY id") == [(1,), (4,)]
    assert sorted(s3_lake.read("s.t", as_json).collect()) == [
        (1, D1, "a"),
        (2, D2, "b"),
        (3, D2, "c"),
        (4, D1, "a"),
    ]
    old = s3_lake.read("s.t", {**as_json, "versionAsOf": before})
    assert sorted(old.collect()) == [(1, D1, "a"), (2, D2, "b")]


def test_create_table_and_overwrite_with_storage_dot_options(
    s3_lake: Lake, moto_server: str
) -> None:
    options = {
        "storage.key": "testing",
        "storage.secret": "testing",
        # A JSON value is parsed: nested options pass through.
        "storage.client_kwargs": json.dumps(
            {"endpoint_url": moto_server, "region_name": "us-east-1"}
        ),
    }
    frame = s3_lake.spark.createDataFrame([(1, D1), (2, D2)], "id long, day date")
    s3_lake.save(
        frame, "other.copy", options={**options, "createTable": "true", "partitionBy": "day"}
    )
    assert s3_lake.rows("SELECT * FROM other.copy ORDER BY id") == [(1, D1), (2, D2)]
    assert s3_lake.rows(
        "SELECT partition_columns FROM system.tables WHERE table_name = 'copy'"
    ) == [(["day"],)]
    s3_lake.save(frame.where("id = 1"), "other.copy", mode="overwrite", options=options)
    assert s3_lake.rows("SELECT * FROM other.copy") == [(1, D1)]


def test_storage_dot_options_override_storage_options_json(s3_lake: Lake, moto_server: str) -> None:
    unreachable = {**s3_options(moto_server), "client_kwargs": {"region_name": "us-east-1"}}
    unreachable["endpoint_url"] = "http://127.0.0.1:9"  # nothing listens there
    options = {
        "storageOptions": json.dumps(unreachable),
        "storage.endpoint_url": moto_server,
    }
    assert sorted(s3_lake.read("s.t", options).collect()) == [(1, D1, "a"), (2, D2, "b")]
