"""Reading tables into Spark: the schema, the rows, one partition per file, time travel, errors."""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest

pytest.importorskip("pyspark")

from pyspark.errors import AnalysisException
from pyspark.sql import types as T

from tests.spark.helpers import Lake, spark_rows

#: A table with a column of every type Spark can hold.
ALL_TYPES = """CREATE TABLE s.t (
    id INT8 NOT NULL, b BOOLEAN, i2 INT2, i4 INT4, d DECIMAL(10, 2), f4 FLOAT4, f8 FLOAT8,
    c CHAR(3) NOT NULL, v VARCHAR(10), dt DATE, tm TIME, ts TIMESTAMP, tz TIMESTAMPTZ,
    fx FIXED(4), bn BINARY, l LIST<INT4>, m MAP<VARCHAR, INT4>, st STRUCT<a: INT4, b: VARCHAR>
)"""

ALL_TYPES_ROWS = """INSERT INTO s.t VALUES
    (1, TRUE, 2, 3, 1.25, 1.5, 2.5, 'abc', 'hi', DATE '2024-01-02', TIME '12:34:56.123456',
     TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMPTZ '2024-01-02 03:04:05+02',
     '\\x01\\x02\\x03\\x04'::BLOB, 'xy'::BLOB, [1, NULL, 2], MAP {'k': 1, 'j': NULL},
     {'a': 1, 'b': 'z'}),
    (2, NULL, NULL, NULL, NULL, NULL, NULL, 'de', NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL),
    (3, FALSE, -32768, -7, -99999999.99, -0.25, 1e300, 'ééé', '日本', DATE '1969-12-31',
     TIME '00:00:00', TIMESTAMP '1900-01-01 00:00:00', TIMESTAMPTZ '2038-01-19 03:14:08+00',
     '\\x00\\x00\\x00\\x00'::BLOB, ''::BLOB, [], MAP {}, {'a': NULL, 'b': NULL})"""

ALL_TYPES_SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType(), False),
        T.StructField("b", T.BooleanType(), True),
        T.StructField("i2", T.ShortType(), True),
        T.StructField("i4", T.IntegerType(), True),
        T.StructField("d", T.DecimalType(10, 2), True),
        T.StructField("f4", T.FloatType(), True),
        T.StructField("f8", T.DoubleType(), True),
        T.StructField("c", T.StringType(), False),
        T.StructField("v", T.StringType(), True),
        T.StructField("dt", T.DateType(), True),
        T.StructField("tm", T.TimeType(6), True),
        T.StructField("ts", T.TimestampNTZType(), True),
        T.StructField("tz", T.TimestampType(), True),
        T.StructField("fx", T.BinaryType(), True),
        T.StructField("bn", T.BinaryType(), True),
        T.StructField("l", T.ArrayType(T.IntegerType(), True), True),
        T.StructField("m", T.MapType(T.StringType(), T.IntegerType(), True), True),
        T.StructField(
            "st",
            T.StructType(
                [
                    T.StructField("a", T.IntegerType(), True),
                    T.StructField("b", T.StringType(), True),
                ]
            ),
            True,
        ),
    ]
)


@pytest.fixture
def all_types(lake: Lake) -> Lake:
    lake.execute(ALL_TYPES)
    lake.execute(ALL_TYPES_ROWS)
    return lake


def test_schema_is_the_tables_with_types_and_nullability(all_types: Lake) -> None:
    assert all_types.read("s.t").schema == ALL_TYPES_SCHEMA


def test_rows_are_the_dbapi_rows(all_types: Lake) -> None:
    expected = [
        (*row[:16], None if row[16] is None else dict(row[16]), row[17])
        for row in all_types.rows("SELECT * FROM s.t ORDER BY id")
    ]
    assert spark_rows(all_types.read("s.t"), "id") == expected
    # Spot checks, so that a conversion wrong on both sides cannot pass unseen.
    first = expected[0]
    assert first[4] == decimal.Decimal("1.25")
    assert first[10] == datetime.time(12, 34, 56, 123456)
    assert first[11] == datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)
    assert first[12] == datetime.datetime(2024, 1, 2, 1, 4, 5, tzinfo=datetime.timezone.utc)
    assert first[13:] == (
        b"\x01\x02\x03\x04",
        b"xy",
        [1, None, 2],
        {"k": 1, "j": None},
        {"a": 1, "b": "z"},
    )


def test_spark_sql_over_the_source(all_types: Lake) -> None:
    all_types.read("s.t").createOrReplaceTempView("all_types")
    result = all_types.spark.sql(
        "SELECT c, d * 2 AS twice, size(l) AS n, st.a FROM all_types WHERE id <> 2 ORDER BY id"
    ).collect()
    assert [tuple(row) for row in result] == [
        ("abc", decimal.Decimal("2.50"), 3, 1),
        ("ééé", decimal.Decimal("-199999999.98"), 0, None),
    ]


def test_one_spark_partition_per_data_file(lake: Lake) -> None:
    lake.execute("CREATE TABLE s.t (id INT8 NOT NULL, day DATE) PARTITIONED BY (day)")
    lake.execute(
        "INSERT INTO s.t SELECT i, DATE '2024-01-01' + CAST(i % 3 AS INT4) FROM range(9) r(i)"
    )
    lake.execute("INSERT INTO s.t SELECT i, DATE '2024-01-01' FROM range(9, 12) r(i)")
    assert len(lake.data_files("s.t")) == 4  # three days, then one more file for the first
    frame = lake.read("s.t")
    assert frame.rdd.getNumPartitions() == 4
    assert sorted(row.id for row in frame.collect()) == list(range(12))
    lake.execute("CREATE TABLE s.plain (id INT8)")
    lake.execute("INSERT INTO s.plain VALUES (1)")
    assert lake.read("s.plain").rdd.getNumPartitions() == 1


def test_partition_columns_with_odd_names_and_values(lake: Lake) -> None:
    # Names and values the layout URL-encodes; a pushed-down filter on one.
    lake.execute(
        'CREATE TABLE s.t ("a b,c" VARCHAR, "x=/é" INT4, id INT8) PARTITIONED BY ("a b,c", "x=/é")'
    )
    lake.execute("INSERT INTO s.t VALUES ('a/b', 1, 1), (NULL, NULL, 2), ('%41 =', 1, 3)")
    frame = lake.read("s.t")
    assert frame.columns == ["a b,c", "x=/é", "id"]
    assert spark_rows(frame, "id") == [("a/b", 1, 1), (None, None, 2), ("%41 =", 1, 3)]
    pruned = frame.where(frame["a b,c"] == "%41 =")
    assert pruned.rdd.getNumPartitions() == 1
    assert spark_rows(pruned) == [("%41 =", 1, 3)]


def test_a_table_without_data_files_reads_no_rows(lake: Lake) -> None:
    lake.execute("CREATE TABLE s.t (id INT8 NOT NULL)")
    frame = lake.read("s.t")
    assert frame.schema == T.StructType([T.StructField("id", T.LongType(), False)])
    assert frame.collect() == []


def test_version_as_of_reads_each_old_version(lake: Lake) -> None:
    lake.execute("CREATE TABLE s.t (id INT8 NOT NULL, name VARCHAR(5))")
    versions = {}
    for step, sql in enumerate(
        [
            "INSERT INTO s.t VALUES (1, 'a'), (2, 'b')",
            "UPDATE s.t SET name = 'B' WHERE id = 2",
            "DELETE FROM s.t WHERE id = 1",
        ]
    ):
        lake.execute(sql)
        versions[step] = lake.version()
    assert sorted(lake.read("s.t", {"versionAsOf": versions[0]}).collect()) == [(1, "a"), (2, "b")]
    assert sorted(lake.read("s.t", {"versionAsOf": versions[1]}).collect()) == [(1, "a"), (2, "B")]
    assert lake.read("s.t", {"versionAsOf": str(versions[2])}).collect() == [(2, "B")]
    assert lake.read("s.t").collect() == [(2, "B")]
    # The schema is the pinned version's too.
    lake.execute("ALTER TABLE s.t ADD COLUMN extra INT4")
    assert lake.read("s.t", {"versionAsOf": versions[2]}).columns == ["id", "name"]
    assert lake.read("s.t").collect() == [(2, "B", None)]


def test_timestamp_as_of_reads_the_version_current_then(lake: Lake) -> None:
    lake.execute("CREATE TABLE s.t (id INT8 NOT NULL)")
    lake.execute("INSERT INTO s.t VALUES (1)")
    first = lake.version()
    lake.execute("INSERT INTO s.t VALUES (2)")
    (at,) = lake.rows("SELECT created_at FROM system.versions WHERE version = ?", [first])[0]
    assert at.tzinfo is not None
    for text in (
        at.isoformat(),  # '2026-...T...+00:00'
        at.strftime("%Y-%m-%d %H:%M:%S.%f"),  # naive: UTC
        (at + datetime.timedelta(milliseconds=0.5))
        .astimezone(datetime.timezone(datetime.timedelta(hours=2)))
        .isoformat(),
    ):
        assert lake.read("s.t", {"timestampAsOf": text}).collect() == [(1,)], text
    assert sorted(lake.read("s.t").collect()) == [(1,), (2,)]


def _error(lake: Lake, table: str, options: dict[str, Any], *, uri: bool = True) -> str:
    reader = lake.reader(options) if uri else lake.spark.read.format("trinitylake")
    with pytest.raises(AnalysisException) as caught:
        reader.load(table).collect()
    return str(caught.value)


@pytest.mark.parametrize(
    ("table", "options", "message"),
    [
        pytest.param(
            "s.nope", {}, "NoSuchTableError: table 's.nope' does not exist", id="missing-table"
        ),
        pytest.param(
            "nope.t", {}, "NoSuchTableError: table 'nope.t' does not exist", id="missing-namespace"
        ),
        pytest.param(
            "x", {}, "trinitylake reads and writes 'namespace.table', got 'x'", id="bad-path"
        ),
        pytest.param("a.b.c", {}, "'namespace.table', got 'a.b.c'", id="three-part-path"),
        pytest.param(
            "s.t",
            {"versionAsOf": 1, "timestampAsOf": "2024-01-01"},
            "give versionAsOf or timestampAsOf, not both",
            id="both-versions",
        ),
        pytest.param(
            "s.t",
            {"versionAsOf": 99},
            "lakehouse version 99 does not exist (latest is 3)",
            id="future-version",
        ),
        pytest.param(
            "s.t",
            {"versionAsOf": "three"},
            "option versionAsOf must be a version number, not 'three'",
            id="bad-version",
        ),
        pytest.param(
            "s.t",
            {"timestampAsOf": "yesterday"},
            "option timestampAsOf must be an ISO timestamp",
            id="bad-timestamp",
        ),
        pytest.param(
            "s.t",
            {"timestampAsOf": "2000-01-01 00:00:00"},
            "no retained version was created at or before",
            id="timestamp-before-history",
        ),
        pytest.param(
            "s.t",
            {"createTable": "maybe"},
            "option createTable must be true or false, not 'maybe'",
            id="bad-boolean",
        ),
        pytest.param(
            "s.t",
            {"storageOptions": "[1]"},
            "option storageOptions must be a JSON object",
            id="bad-storage-options",
        ),
    ],
)
def test_bad_reads_fail_naming_the_problem(
    lake: Lake, table: str, options: dict[str, Any], message: str
) -> None:
    lake.execute("CREATE TABLE s.t (id INT8)")  # version 2
    lake.execute("INSERT INTO s.t VALUES (1)")  # version 3
    assert message in _error(lake, table, options)


def test_reads_without_uri_or_with_no_lakehouse_fail(lake: Lake, tmp_path: Any) -> None:
    message = _error(lake, "s.t", {}, uri=False)
    assert 'the trinitylake data source needs the lakehouse: .option("uri"' in message
    with pytest.raises(AnalysisException, match="LakehouseNotFoundError: no Trinity Lakehouse"):
        lake.spark.read.format("trinitylake").option("uri", str(tmp_path / "none")).load("s.t")


def test_millisecond_times_read_as_spark_times(lake: Lake) -> None:
    lake.execute("CREATE TABLE s.t (id INT8, t0 TIME(0), t3 TIME(3))")
    lake.execute("INSERT INTO s.t VALUES (1, TIME '01:02:03', TIME '01:02:03.456')")
    frame = lake.read("s.t")
    assert [f.dataType for f in frame.schema.fields[1:]] == [T.TimeType(6), T.TimeType(6)]
    assert frame.collect() == [(1, datetime.time(1, 2, 3), datetime.time(1, 2, 3, 456000))]


def test_nanosecond_timestamps_read_truncated_to_microseconds(lake: Lake) -> None:
    lake.execute("CREATE TABLE s.t (ts TIMESTAMP(9))")
    lake.execute("INSERT INTO s.t VALUES (CAST('2024-01-01 00:00:00.123456789' AS TIMESTAMP_NS))")
    assert lake.read("s.t").collect() == [(datetime.datetime(2024, 1, 1, 0, 0, 0, 123456),)]
