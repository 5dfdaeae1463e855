"""Filter pushdown: ``col = v`` and ``col IN (...)`` prune files by partition, index and value bounds.

Pruning is by file and every filter is still evaluated by Spark, so the rows
are the same with pushdown off; only the number of partitions (files read)
changes. Spark refuses a Python reader that takes filters while
``spark.sql.python.filterPushdown.enabled`` is off: such a session reads with
``.option("pushFilters", "false")``, and ``register(spark)`` turns the setting on.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pyspark")

from pyspark.errors import AnalysisException

import trinity_dbapi
from tests.spark.helpers import Lake

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"

#: The read option for sessions where pushdown is off.
NO_PUSH = {"pushFilters": "false"}

#: Files of s.sales: 3 per day of the first two inserts, 1 of the third.
ALL_FILES = 7

#: (filter, Spark partitions read with pushdown, ids).
CASES = [
    pytest.param("day = DATE'2024-01-02'", 2, [1, 4, 7], id="partition-equal"),
    pytest.param("shop = 'b'", 3, [6, 7, 8], id="index-equal"),
    pytest.param("shop IN ('c', 'zz')", 1, [9, 10], id="index-in"),
    pytest.param(
        "day IN (DATE'2024-01-03', DATE'2024-01-04')", 3, [2, 5, 8, 9, 10], id="partition-in"
    ),
    pytest.param("shop = 'b' AND day = DATE'2024-01-02'", 1, [7], id="partition-and-index"),
    pytest.param("shop IN ('a', 'b') AND shop = 'b'", 3, [6, 7, 8], id="two-on-one-column"),
    # id is neither a partition nor an indexed column: the files' value
    # bounds (their recorded min and max id) rule out the 4 that cannot hold 3.
    pytest.param("id = 3", 3, [3], id="value-bounds"),
    pytest.param("shop = 'c' OR day = DATE'2024-01-01'", ALL_FILES, [0, 3, 6, 9, 10], id="or"),
    pytest.param("shop > 'b'", ALL_FILES, [9, 10], id="range"),
]


@pytest.fixture(scope="module")
def sales(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    """s.sales partitioned by day, indexed on shop, in 7 files; read-only for the tests."""
    root = tmp_path_factory.mktemp("pushdown") / "lake"
    conn = trinity_dbapi.connect(str(root), autocommit=True)
    lake = Lake(spark=spark, uri=str(root), conn=conn, root=root)
    lake.execute("CREATE NAMESPACE s")
    lake.execute(
        "CREATE TABLE s.sales (id INT8 NOT NULL, day DATE, shop VARCHAR(10)) PARTITIONED BY (day)"
    )
    lake.execute("CREATE INDEX by_shop ON s.sales (shop)")
    lake.execute(
        "INSERT INTO s.sales SELECT i, DATE '2024-01-01' + CAST(i % 3 AS INT4), 'a' "
        "FROM range(6) r(i)"
    )
    lake.execute(
        "INSERT INTO s.sales SELECT i, DATE '2024-01-01' + CAST(i % 3 AS INT4), 'b' "
        "FROM range(6, 9) r(i)"
    )
    lake.execute("INSERT INTO s.sales SELECT i, DATE '2024-01-04', 'c' FROM range(9, 11) r(i)")
    assert len(lake.data_files("s.sales")) == ALL_FILES
    try:
        yield lake
    finally:
        conn.close()


@pytest.fixture
def pushdown_off(spark: Any) -> Iterator[None]:
    """Python data source filter pushdown disabled for one test, restored after."""
    from trinity_dbapi.spark import register

    before = spark.conf.get(PUSHDOWN)
    spark.conf.set(PUSHDOWN, "false")
    try:
        yield
    finally:
        spark.conf.set(PUSHDOWN, before)
        # The data source registered follows the setting at registration
        # (register_views registers it too): register again for the next tests.
        register(spark, filter_pushdown=False)


def _ids(frame: Any) -> list[int]:
    return sorted(row.id for row in frame.collect())


@pytest.mark.parametrize(("where", "partitions", "ids"), CASES)
def test_pushed_filters_prune_files(
    sales: Lake, where: str, partitions: int, ids: list[int]
) -> None:
    frame = sales.read("s.sales").where(where)
    assert frame.rdd.getNumPartitions() == partitions
    assert _ids(frame) == ids
    expected = sales.rows(f"SELECT id FROM s.sales WHERE {where} ORDER BY id")
    assert [(i,) for i in ids] == expected


@pytest.mark.usefixtures("pushdown_off")
@pytest.mark.parametrize(("where", "partitions", "ids"), CASES)
def test_without_pushdown_every_file_is_read_and_rows_are_the_same(
    sales: Lake, where: str, partitions: int, ids: list[int]
) -> None:
    frame = sales.read("s.sales", NO_PUSH).where(where)
    assert frame.rdd.getNumPartitions() == ALL_FILES
    assert _ids(frame) == ids


def test_push_filters_false_reads_every_file_with_pushdown_on(sales: Lake) -> None:
    frame = sales.read("s.sales", NO_PUSH).where("shop = 'b'")
    assert frame.rdd.getNumPartitions() == ALL_FILES
    assert _ids(frame) == [6, 7, 8]
    pruned = sales.read("s.sales", {"pushFilters": "true"}).where("shop = 'b'")
    assert pruned.rdd.getNumPartitions() == 3


@pytest.mark.usefixtures("pushdown_off")
def test_without_pushdown_a_pruning_read_fails_naming_the_setting(sales: Lake) -> None:
    # Spark's own refusal: a Python data source cannot see the session's setting.
    with pytest.raises(AnalysisException) as caught:
        sales.read("s.sales").where("shop = 'b'").collect()
    assert "DATA_SOURCE_PUSHDOWN_DISABLED" in str(caught.value)
    assert f"'{PUSHDOWN}' is false" in str(caught.value)


def test_register_turns_pushdown_on_unless_asked_not_to(spark: Any, pushdown_off: None) -> None:
    from trinity_dbapi.spark import register

    register(spark, filter_pushdown=False)
    assert spark.conf.get(PUSHDOWN) == "false"
    register(spark)
    assert spark.conf.get(PUSHDOWN) == "true"


@pytest.mark.usefixtures("pushdown_off")
def test_views_registered_without_pushdown_read_every_file(sales: Lake) -> None:
    from trinity_dbapi.spark import register_views

    register_views(sales.spark, sales.uri, catalog=False)
    frame = sales.spark.sql("SELECT id FROM s_sales WHERE shop = 'b'")
    assert frame.rdd.getNumPartitions() == ALL_FILES
    assert _ids(frame) == [6, 7, 8]


def test_pushdown_prunes_within_a_pinned_version(sales: Lake) -> None:
    # Version 3 is the table without data, 4 holds the first insert: 3 files, one per day.
    frame = sales.read("s.sales", {"versionAsOf": 4}).where("day = DATE'2024-01-02'")
    assert frame.rdd.getNumPartitions() == 1
    assert _ids(frame) == [1, 4]


def test_pushed_values_of_other_types_prune(lake: Lake) -> None:
    lake.execute("CREATE TABLE s.at (id INT8, tz TIMESTAMPTZ) PARTITIONED BY (tz)")
    lake.execute(
        "INSERT INTO s.at VALUES (1, TIMESTAMPTZ '2024-01-01 10:00:00+00'), "
        "(2, TIMESTAMPTZ '2024-01-02 10:00:00+00')"
    )
    lake.execute("CREATE TABLE s.num (id INT8, d DECIMAL(10, 2), n INT4) PARTITIONED BY (d)")
    lake.execute("CREATE INDEX by_n ON s.num (n)")
    lake.execute("INSERT INTO s.num VALUES (1, 1.50, 10), (2, 2.00, 20), (3, 2.00, 30)")
    for table, where, partitions, ids in [
        ("s.at", "tz = TIMESTAMP'2024-01-01 12:00:00+02:00'", 1, [1]),
        (
            "s.at",
            "tz IN (TIMESTAMP'2024-01-02 10:00:00Z', TIMESTAMP'2030-01-01 00:00:00Z')",
            1,
            [2],
        ),
        ("s.num", "d = 1.5", 1, [1]),
        ("s.num", "d = 2", 1, [2, 3]),
        ("s.num", "n IN (10, 30)", 2, [1, 3]),
    ]:
        frame = lake.read(table).where(where)
        assert (frame.rdd.getNumPartitions(), _ids(frame)) == (partitions, ids), where


@pytest.mark.parametrize(
    "where", ["shop = 'nothing'", "day = DATE'1999-01-01'", "shop IN ('x', 'y')"]
)
def test_a_filter_matching_no_file_reads_no_rows(sales: Lake, where: str) -> None:
    assert sales.read("s.sales").where(where).collect() == []


@pytest.mark.usefixtures("pushdown_off")
def test_without_pushdown_a_filter_matching_no_file_reads_no_rows(sales: Lake) -> None:
    frame = sales.read("s.sales", NO_PUSH).where("shop = 'nothing'")
    assert frame.rdd.getNumPartitions() == ALL_FILES
    assert frame.collect() == []


@pytest.mark.usefixtures("pushdown_off")
def test_without_pushdown_a_whole_table_reads(sales: Lake) -> None:
    assert _ids(sales.read("s.sales", NO_PUSH)) == list(range(11))


def test_pushdown_setting_is_restored(spark: Any) -> None:
    assert spark.conf.get(PUSHDOWN) == "true"


@pytest.mark.usefixtures("pushdown_off")
@pytest.mark.parametrize(("where", "partitions", "ids"), CASES)
def test_registered_with_pushdown_off_reads_work_without_any_option(
    spark: Any, sales: Lake, where: str, partitions: int, ids: list[int]
) -> None:
    # A session that keeps the setting off: register() leaves it off when
    # asked and registers the reader Spark accepts there.
    from trinity_dbapi.spark import register

    register(spark, filter_pushdown=False)
    try:
        assert spark.conf.get(PUSHDOWN) == "false"
        frame = sales.read("s.sales").where(where)
        assert frame.rdd.getNumPartitions() == ALL_FILES
        assert _ids(frame) == ids
    finally:
        register(spark)
