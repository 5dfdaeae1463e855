"""register(): the Arrow batch byte limit it lifts for the session, and writes under any limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark")

from tests.spark.helpers import Lake
from trinity_dbapi.spark import ARROW_BYTES_CONF, NO_BYTE_LIMIT, register


@pytest.fixture
def byte_limit(spark: Any) -> Iterator[None]:
    """Restores the session's Arrow byte limit (and registration) after the test."""
    before = spark.conf.get(ARROW_BYTES_CONF, None)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(ARROW_BYTES_CONF)
        else:
            spark.conf.set(ARROW_BYTES_CONF, before)
        register(spark, filter_pushdown=False)


def test_the_registered_session_has_no_arrow_byte_limit(spark: Any) -> None:
    # Spark skips its per-row batch measurement only for exactly Int.MaxValue.
    assert int(NO_BYTE_LIMIT) == 2**31 - 1
    assert spark.conf.get(ARROW_BYTES_CONF) == NO_BYTE_LIMIT


@pytest.mark.usefixtures("byte_limit")
def test_register_lifts_the_limit_only_when_the_session_does_not_set_one(spark: Any) -> None:
    spark.conf.unset(ARROW_BYTES_CONF)
    register(spark, lift_arrow_byte_limit=False)
    assert spark.conf.get(ARROW_BYTES_CONF, None) is None
    register(spark)
    assert spark.conf.get(ARROW_BYTES_CONF) == NO_BYTE_LIMIT
    spark.conf.set(ARROW_BYTES_CONF, "16m")
    register(spark)
    assert spark.conf.get(ARROW_BYTES_CONF) == "16m"  # the user's choice stays


@pytest.mark.usefixtures("byte_limit")
@pytest.mark.parametrize("limit", ["1k", None])
def test_writes_are_whole_under_a_byte_limit_and_spark_default(
    lake: Lake, limit: str | None
) -> None:
    # Tiny batches (1 KiB: a few dozen rows each) and Spark's own default both
    # deliver every row, in one commit.
    spark = lake.spark
    if limit is None:
        spark.conf.unset(ARROW_BYTES_CONF)
    else:
        spark.conf.set(ARROW_BYTES_CONF, limit)
    frame = spark.range(0, 5000, 1, 2).selectExpr("id", "concat('name', id) AS name")
    before = lake.version()
    lake.save(frame, "s.bytes", options={"createTable": "true"})
    assert lake.version() == before + 1
    assert lake.rows("SELECT count(*), sum(id), count(DISTINCT name) FROM s.bytes") == [
        (5000, sum(range(5000)), 5000)
    ]
