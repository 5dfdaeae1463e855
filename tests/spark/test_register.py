"""register(): the Arrow batch byte limit it lifts for the session, and writes under any limit;
the secret option names it adds to the session's options redaction regex."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark")

from tests.spark.helpers import Lake
from trinity_dbapi.spark import ARROW_BYTES_CONF, NO_BYTE_LIMIT, register
from trinity_dbapi.spark.options import OPTIONS_REDACTION_CONF, secret_options_pattern


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


def test_register_adds_the_secret_option_names_to_the_redaction_regex_once(spark: Any) -> None:
    ours = secret_options_pattern()
    before = spark.conf.get(OPTIONS_REDACTION_CONF)
    try:
        # The session fixture registered: Spark's default ("(?i)url") stays, ours follows once.
        assert before == f"(?i)url|{ours}"
        register(spark)
        assert spark.conf.get(OPTIONS_REDACTION_CONF) == before
        spark.conf.set(OPTIONS_REDACTION_CONF, "(?i)mine")
        register(spark)
        assert spark.conf.get(OPTIONS_REDACTION_CONF) == f"(?i)mine|{ours}"
    finally:
        spark.conf.set(OPTIONS_REDACTION_CONF, before)
    # Spark reads it as a Java regex, which finds it in an option's name.
    pattern = spark._jvm.java.util.regex.Pattern.compile(ours)
    hidden = [
        "storageOptions",
        "storage.key",
        "storage.secret",
        "storage.token",
        "storage.account_key",
        "storage.connection_string",
        "storage.sas_token",
        "storage.client_secret",
        "storage.credential",
    ]
    shown = ["uri", "path", "storage.account_name", "storage.project", "storage.client_id"]
    assert [name for name in hidden + shown if pattern.matcher(name).find()] == hidden
