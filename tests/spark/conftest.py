"""Fixtures of the PySpark data source tests: one local SparkSession, fresh lakehouses.

Everything is skipped when PySpark is not installed (each test module starts
with ``pytest.importorskip("pyspark")``; this file imports no PySpark) or when
there is no ``java`` on the PATH (``spark`` skips, and every test needs it).
Spark starts once per session (about ten seconds):
keep the data small and reuse ``spark``. Under xdist each worker that runs a
Spark test starts its own (``-n auto`` on two cores: up to two JVMs).

Fixtures:
    spark: the session-scoped local SparkSession (two cores, UTC, Python
        data source filter pushdown on), with ``trinitylake`` registered.
    lake: a fresh local lakehouse holding an empty namespace ``s``.

Every test drops the temporary views it registered (``register_views``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import trinity_dbapi

if TYPE_CHECKING:
    from tests.spark.helpers import Lake

HERE = Path(__file__).parent

#: The SparkSession's configuration: local, small, loopback only, UTC.
SPARK_CONF = {
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.ui.enabled": "false",
    "spark.driver.memory": "1g",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.python.filterPushdown.enabled": "true",
    # The tests' jobs are small and short: the JVM's optimising compiler and
    # parallel collector would cost more than they save. Measured: the JVM's
    # CPU time for a start and ten small jobs falls from 33 s to 15 s.
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
}


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local SparkSession for the whole session, with ``trinitylake`` registered."""
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("PySpark needs Java: no java on the PATH")
    from pyspark.sql import SparkSession

    from trinity_dbapi.spark import register

    # Spark's Python workers (data source planners included) run this
    # interpreter, not whichever python3 is first on PATH, which may lack
    # pyarrow and this package. The JVM reads it from its environment at launch.
    saved = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder.master("local[2]").appName("trinity-dbapi-tests")
    # Its warehouse folder in the session's temporary folder, not the checkout.
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    for key, value in {**SPARK_CONF, "spark.sql.warehouse.dir": str(warehouse)}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    try:
        yield session
    finally:
        session.stop()
        if saved is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = saved


@pytest.fixture(autouse=True)
def _drop_temporary_views(spark: Any) -> Iterator[None]:
    yield
    for table in spark.catalog.listTables():
        if table.isTemporary:
            spark.catalog.dropTempView(table.name)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # PySpark 4.3 warns at every UDF and Arrow use that pandas 3 is not fully
    # supported: noise from the environment, not from the code under test.
    ignore = pytest.mark.filterwarnings(
        "ignore:PySpark does not yet fully support pandas:FutureWarning"
    )
    for item in items:
        if Path(str(item.path)).is_relative_to(HERE):
            item.add_marker(ignore)


@pytest.fixture
def lake(spark: Any, tmp_path: Path) -> Iterator[Lake]:
    """A fresh local lakehouse with an empty namespace ``s``, and a DB-API connection to it."""
    from tests.spark.helpers import Lake

    root = tmp_path / "lake"
    conn = trinity_dbapi.connect(str(root), autocommit=True)
    conn.cursor().execute("CREATE NAMESPACE s")
    try:
        yield Lake(spark=spark, uri=str(root), conn=conn, root=root)
    finally:
        conn.close()
