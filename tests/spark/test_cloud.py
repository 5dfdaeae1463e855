"""Reading and writing lakehouses on GCS and Azure (their emulators) through the data source.

S3 has its own module (test_s3.py). Here each object store gets one lakehouse
made through SQL: Spark reads its table (files pruned by partition), appends
rows in one commit, and both Spark and SQL read every row back. The storage
options travel as Spark options (``storage.<name>`` for the reads,
``storageOptions`` as JSON for the write and as a dict for the last read),
and each of Spark's Python workers opens the store with them. Then, on
Azure (whose option names Spark's own redaction misses), the credentials
stay out of the plans Spark prints and of its errors.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import io
import json
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

pytest.importorskip("pyspark")

from pyspark.errors import AnalysisException

import trinity_dbapi
from tests.conftest import CLOUD_PARAMS, cloud_root
from tests.spark.helpers import FORMAT, Lake, spark_rows

D1, D2 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)

#: GCS and Azure; S3 is test_s3.py's.
OBJECT_STORES = [param for param in CLOUD_PARAMS if param.id != "s3"]


@contextlib.contextmanager
def cloud_lake(
    spark: Any, request: pytest.FixtureRequest, kind: str
) -> Iterator[tuple[Lake, dict[str, Any]]]:
    """A lakehouse in a new bucket or container with s.t (partitioned by day), and its options.

    s.t holds two rows in two files. The options are not the Lake's: each
    read and write passes them as the test chooses.
    """
    uri, options = cloud_root(request, kind)
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    lake = Lake(spark=spark, uri=uri, conn=conn)
    lake.execute("CREATE NAMESPACE s")
    lake.execute(
        "CREATE TABLE s.t (id INT8 NOT NULL, day DATE, shop VARCHAR(10)) PARTITIONED BY (day)"
    )
    lake.execute("INSERT INTO s.t VALUES (1, DATE '2024-01-01', 'a'), (2, DATE '2024-01-02', 'b')")
    try:
        yield lake, options
    finally:
        conn.close()


def storage_dot_options(options: dict[str, Any]) -> dict[str, str]:
    """Storage options as ``storage.<name>`` Spark options: text, nested values as JSON."""
    return {
        f"storage.{name}": value if isinstance(value, str) else json.dumps(value)
        for name, value in options.items()
    }


@pytest.mark.parametrize("kind", OBJECT_STORES)
def test_spark_reads_and_appends(spark: Any, request: pytest.FixtureRequest, kind: str) -> None:
    with cloud_lake(spark, request, kind) as (lake, options):
        dotted = storage_dot_options(options)
        frame = lake.read("s.t", dotted)
        assert spark_rows(frame, "id") == lake.rows("SELECT * FROM s.t ORDER BY id")
        assert spark_rows(frame, "id") == [(1, D1, "a"), (2, D2, "b")]
        pruned = frame.where(frame.day == D2)
        assert pruned.rdd.getNumPartitions() == 1
        assert pruned.collect() == [(2, D2, "b")]

        before = lake.version()
        rows = lake.spark.createDataFrame(
            [(3, D2, "c"), (4, D1, "a")], "id long, day date, shop string"
        )
        lake.save(rows, "s.t", options={"storageOptions": json.dumps(options)})
        assert lake.version() == before + 1
        everything = [(1, D1, "a"), (2, D2, "b"), (3, D2, "c"), (4, D1, "a")]
        assert lake.rows("SELECT * FROM s.t ORDER BY id") == everything
        assert spark_rows(lake.read("s.t", dotted), "id") == everything
        # A dict given to .option() arrives as its Python repr (PySpark's str()).
        assert spark_rows(lake.read("s.t", {"storageOptions": options}), "id") == everything
        assert lake.rows("SELECT id FROM s.t WHERE shop = 'a' ORDER BY id") == [(1,), (4,)]


# -- credentials in plans and errors ----------------------------------------------------


#: An account key of the right form that is not Azurite's.
WRONG_KEY = base64.b64encode(b"\xfb\xff\xbf" + hashlib.sha512(b"spark").digest()[:61]).decode()
#: Further secrets in options the storage does not use (the connection string wins).
SAS_SIGNATURE = "Zq8sasSignature/+="
TOKEN = "Zq8tokenValue"
CLIENT_SECRET = "Zq8~clientSecret.x"
JSON_KEY = "Zq8jsonAccountKey"


class PlanListener:
    """A Spark query execution listener keeping the text of every query's plans."""

    def __init__(self) -> None:
        self.plans: list[str] = []

    def onSuccess(self, name: str, execution: Any, duration: int) -> None:
        self.plans.append(execution.toString())

    def onFailure(self, name: str, execution: Any, exception: Any) -> None:
        self.plans.append(execution.toString())

    class Java:  # py4j: the Java interface this object implements
        implements: ClassVar[list[str]] = ["org.apache.spark.sql.util.QueryExecutionListener"]


@contextlib.contextmanager
def listening(spark: Any) -> Iterator[PlanListener]:
    from pyspark.java_gateway import ensure_callback_server_started

    ensure_callback_server_started(spark.sparkContext._gateway)
    listener = PlanListener()
    manager = spark._jsparkSession.listenerManager()
    manager.register(listener)
    try:
        yield listener
    finally:
        manager.unregister(listener)


def _wait_for(listener: PlanListener, count: int) -> list[str]:
    """The listener's plans once it has ``count`` (listeners are called asynchronously)."""
    deadline = time.monotonic() + 30
    while len(listener.plans) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(listener.plans) >= count, listener.plans
    return listener.plans


def _assert_hidden(secrets: list[str], *texts: str) -> None:
    """No secret shows in any of ``texts``, percent-encoded or not (as the storage tests check)."""
    from tests.storage.test_redaction import _assert_hidden as hidden

    for secret in secrets:
        hidden(secret, *texts)


@pytest.mark.azure
def test_credentials_stay_out_of_plans_and_errors(
    spark: Any, request: pytest.FixtureRequest
) -> None:
    with cloud_lake(spark, request, "azure") as (lake, storage_options):
        connection_string = storage_options["connection_string"]
        account_key = connection_string.split("AccountKey=")[1].split(";")[0]
        options = {
            "storage.connection_string": connection_string,
            "storage.account_key": WRONG_KEY,
            "storage.sas_token": f"sv=2023-11-03&sp=rl&sig={SAS_SIGNATURE}",
            "storage.token": TOKEN,
            "storage.client_secret": CLIENT_SECRET,
            "storageOptions": json.dumps({"account_key": JSON_KEY}),
        }
        secrets = [account_key, WRONG_KEY, SAS_SIGNATURE, TOKEN, CLIENT_SECRET, JSON_KEY]
        frame = lake.spark.createDataFrame([(5, D1, "e")], "id long, day date, shop string")
        with listening(lake.spark) as listener:
            lake.save(frame, "s.t", options=options)
            read = lake.read("s.t", options)
            assert (5, D1, "e") in read.collect()
            plans = _wait_for(listener, 2)
        assert any("AppendData" in plan and "storage.account_key" in plan for plan in plans)
        explained = io.StringIO()
        with contextlib.redirect_stdout(explained):
            read.explain(mode="extended")
        quoted = ", ".join(f"`{name}` '{value}'" for name, value in options.items())
        view = lake.spark.sql(
            f"EXPLAIN EXTENDED CREATE TEMPORARY VIEW secret_view USING {FORMAT} "
            f"OPTIONS (uri '{lake.uri}', path 's.t', {quoted})"
        ).collect()[0][0]
        _assert_hidden(secrets, *plans, explained.getvalue(), view)
        assert "storage.connection_string -> *********(redacted)" in view

        # A key the store refuses: the error Spark raises names the failure, not the key.
        refused = connection_string.replace(account_key, WRONG_KEY)
        with pytest.raises(AnalysisException) as failed:
            lake.read("s.t", {**options, "storage.connection_string": refused}).collect()
        assert "failed to authenticate" in str(failed.value)
        _assert_hidden(secrets, str(failed.value), repr(failed.value))
