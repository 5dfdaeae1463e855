"""Writing DataFrames: append and overwrite in one commit, createTable, refusals, indices."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from pyspark.errors import AnalysisException, PythonException
from pyspark.sql import functions as F

import trinity_dbapi
from tests.spark.helpers import Lake, parquet_files
from trinity_dbapi.tables import file_facts, managed

D1, D2, D5 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2), datetime.date(2024, 1, 5)

#: The DataFrame schema matching s.t.
FRAME = "id long, day date, shop string"


@pytest.fixture
def shops(lake: Lake) -> Lake:
    """s.t partitioned by day and indexed on shop, holding one row."""
    lake.execute(
        "CREATE TABLE s.t (id INT8 NOT NULL, day DATE, shop VARCHAR(10)) PARTITIONED BY (day)"
    )
    lake.execute("CREATE INDEX by_shop ON s.t (shop)")
    lake.execute("INSERT INTO s.t VALUES (1, DATE '2024-01-01', 'a')")
    return lake


def test_append_is_one_commit_and_visible_through_the_dbapi(shops: Lake) -> None:
    before = shops.version()
    frame = shops.spark.createDataFrame(
        [(10, D1, "x"), (11, D5, "y"), (12, None, None)], FRAME
    ).repartition(2)
    shops.save(frame, "s.t")
    assert shops.version() == before + 1
    assert shops.rows("SELECT * FROM s.t ORDER BY id") == [
        (1, D1, "a"),
        (10, D1, "x"),
        (11, D5, "y"),
        (12, None, None),
    ]
    (changed,) = shops.rows(
        "SELECT changed_objects FROM system.versions WHERE version = ?", [before + 1]
    )[0]
    assert changed == ["table s.t"]
    labels = sorted(label.rsplit("/", 1)[0] for label in shops.data_files("s.t"))
    assert labels == [
        "day=2024-01-01",
        "day=2024-01-01",
        "day=2024-01-05",
        "day=__HIVE_DEFAULT_PARTITION__",
    ]
    # The tasks' value bounds reach the dataset metadata: a point lookup
    # skips the files that cannot hold its value.
    definition = shops.conn.lakehouse.begin().load_table("s", "t")
    meta = managed.metadata(shops.conn.lakehouse.storage, definition)
    bounds = file_facts.recorded_bounds(meta)
    assert sorted(tuple(b["1"]) for b in bounds.values()) == [(1, 1), (10, 10), (11, 11), (12, 12)]
    assert sorted(tuple(b["3"]) for b in bounds.values() if "3" in b) == [
        ("a", "a"),
        ("x", "x"),
        ("y", "y"),
    ]
    assert shops.rows("SELECT shop FROM s.t WHERE id = 11") == [("y",)]


def test_appended_rows_are_found_through_the_index(shops: Lake) -> None:
    frame = shops.spark.createDataFrame([(20, D2, "new"), (21, D5, "new"), (22, D1, "b")], FRAME)
    shops.save(frame, "s.t")
    assert shops.rows("SELECT id FROM s.t WHERE shop = 'new' ORDER BY id") == [(20,), (21,)]
    assert shops.rows("SELECT id FROM s.t WHERE shop = ?", ["b"]) == [(22,)]
    assert shops.rows("SELECT id FROM s.t WHERE shop = 'a'") == [(1,)]
    # Spark's own pruned read finds them through the index too: one file each.
    pruned = shops.read("s.t").where("shop = 'new'")
    assert pruned.rdd.getNumPartitions() == 2
    assert sorted(pruned.collect()) == [(20, D2, "new"), (21, D5, "new")]


def test_overwrite_replaces_every_row_in_one_commit(shops: Lake) -> None:
    shops.save(shops.spark.createDataFrame([(2, D2, "b")], FRAME), "s.t")
    before = shops.version()
    frame = shops.spark.createDataFrame([(30, D5, "z"), (31, D5, "z")], FRAME)
    shops.save(frame, "s.t", mode="overwrite")
    assert shops.version() == before + 1
    assert shops.rows("SELECT * FROM s.t ORDER BY id") == [(30, D5, "z"), (31, D5, "z")]
    assert shops.rows("SELECT id FROM s.t WHERE shop = 'a'") == []
    assert shops.rows("SELECT id FROM s.t WHERE shop = 'z' ORDER BY id") == [(30,), (31,)]
    assert {label.rsplit("/", 1)[0] for label in shops.data_files("s.t")} == {"day=2024-01-05"}
    # The replaced rows are still there for time travel.
    old = shops.read("s.t", {"versionAsOf": before})
    assert sorted(old.collect()) == [(1, D1, "a"), (2, D2, "b")]


def test_create_table_from_the_dataframe_partitioned(lake: Lake) -> None:
    before = lake.version()
    frame = lake.spark.createDataFrame([(1, D1, "x"), (2, D2, "y"), (3, D1, "z")], FRAME)
    lake.save(frame, "fresh.t", options={"createTable": "true", "partitionBy": "day"})
    assert lake.version() == before + 1  # namespace, table and rows in one commit
    assert lake.rows("SELECT * FROM fresh.t ORDER BY id") == [
        (1, D1, "x"),
        (2, D2, "y"),
        (3, D1, "z"),
    ]
    assert lake.rows(
        "SELECT partition_columns, column_count FROM system.tables "
        "WHERE namespace_name = 'fresh' AND table_name = 't'"
    ) == [(["day"], 3)]
    assert lake.rows(
        "SELECT column_name, data_type, is_nullable, is_partition_key FROM system.columns "
        "WHERE table_name = 't' ORDER BY ordinal_position"
    ) == [
        ("id", "int8", True, False),
        ("day", "date", True, True),
        ("shop", "varchar", True, False),
    ]
    # Each task writes its own files, in the partition directories of the dataset.
    files = lake.data_files("fresh.t")
    assert {label.rsplit("/", 1)[0] for label in files} == {"day=2024-01-01", "day=2024-01-02"}
    assert lake.root is not None
    on_disk = sorted(path for path in parquet_files(lake.root) if "/table/" in path)
    assert on_disk == sorted(files.values())
    assert {path.split("/")[2] for path in on_disk} == {"day=2024-01-01", "day=2024-01-02"}
    # A second save appends to the table it created.
    lake.save(frame.limit(1), "fresh.t", options={"createTable": "true", "partitionBy": "day"})
    assert lake.rows("SELECT count(*) FROM fresh.t") == [(4,)]


def test_partition_by_names_with_commas_as_a_json_list(lake: Lake) -> None:
    frame = lake.spark.createDataFrame([(1, "a/b"), (2, None)], "id long, `a b,c` string")
    options = {"createTable": "true", "partitionBy": '["a b,c"]'}
    lake.save(frame, "fresh.t", options=options)
    assert lake.rows("SELECT partition_columns FROM system.tables WHERE table_name = 't'") == [
        (["a b,c"],)
    ]
    assert lake.rows('SELECT id, "a b,c" FROM fresh.t ORDER BY id') == [(1, "a/b"), (2, None)]
    assert lake.rows("SELECT id FROM fresh.t WHERE \"a b,c\" = 'a/b'") == [(1,)]


def test_partition_by_option_forms() -> None:
    from trinity_dbapi.spark.options import parse_options

    def by(text: str) -> tuple[str, ...]:
        return parse_options({"uri": "lake", "path": "s.t", "partitionBy": text}).partition_by

    assert by("day, shop") == ("day", "shop")
    assert by('["a,b", " c"]') == ("a,b", " c")
    assert by("[x, y") == ("[x", "y")  # not a JSON list: names, comma-separated


def test_create_table_creates_the_lakehouse_too(spark: Any, tmp_path: Path) -> None:
    uri = str(tmp_path / "new-lake")
    frame = spark.createDataFrame([(1, D1, "x"), (2, D2, "y")], FRAME)
    missing = Lake(spark=spark, uri=uri, conn=None)
    with pytest.raises(AnalysisException, match="LakehouseNotFoundError: no Trinity Lakehouse"):
        missing.save(frame, "s.t")
    assert not (tmp_path / "new-lake").exists()  # nothing written
    missing.save(frame, "s.t", options={"createTable": "true"})
    conn = trinity_dbapi.connect(uri, create=False, autocommit=True)
    try:
        lake = Lake(spark=spark, uri=uri, conn=conn)
        # Version 0 is the empty lakehouse; one commit made the namespace, table and rows.
        assert lake.rows("SELECT version, changed_objects FROM system.versions") == [
            (0, []),
            (1, ["namespace s", "table s.t"]),
        ]
        assert lake.rows("SELECT * FROM s.t ORDER BY id") == [(1, D1, "x"), (2, D2, "y")]
    finally:
        conn.close()


def test_create_table_maps_spark_types(lake: Lake) -> None:
    frame = lake.spark.range(2).select(
        "id",
        F.col("id").cast("int").alias("i4"),
        F.col("id").cast("short").alias("i2"),
        F.col("id").cast("decimal(10,2)").alias("d"),
        F.col("id").cast("double").alias("f8"),
        F.col("id").cast("float").alias("f4"),
        F.col("id").cast("string").alias("v"),
        F.lit(True).alias("b"),
        F.to_date(F.lit("2024-01-01")).alias("dt"),
        F.lit(datetime.datetime(2024, 1, 1, 12)).cast("timestamp").alias("tz"),
        F.lit(datetime.datetime(2024, 1, 1, 12)).cast("timestamp_ntz").alias("ts"),
        F.lit(b"ab").alias("bn"),
        F.array(F.col("id")).alias("l"),
        F.create_map(F.lit("k"), F.col("id")).alias("m"),
        F.struct(F.col("id").alias("a")).alias("st"),
    )
    lake.save(frame, "s.typed", options={"createTable": "true"})
    assert lake.rows(
        "SELECT column_name, data_type, is_nullable FROM system.columns "
        "WHERE table_name = 'typed' ORDER BY ordinal_position"
    ) == [
        ("id", "int8", False),  # spark.range: not nullable
        ("i4", "int4", False),
        ("i2", "int2", False),
        ("d", "decimal(10,2)", True),  # a cast to decimal may overflow to NULL
        ("f8", "float8", False),
        ("f4", "float4", False),
        ("v", "varchar", False),
        ("b", "boolean", False),
        ("dt", "date", False),
        ("tz", "timestamptz(6)", False),
        ("ts", "timestamp(6)", False),
        ("bn", "binary", False),
        ("l", "list<int8>", False),
        ("m", "map<varchar, int8>", False),
        ("st", "struct<a: int8>", False),
    ]
    noon = datetime.datetime(2024, 1, 1, 12)
    assert lake.rows("SELECT id, d, tz, ts, l, m, st FROM s.typed ORDER BY id") == [
        (0, 0, noon.replace(tzinfo=datetime.timezone.utc), noon, [0], [("k", 0)], {"a": 0}),
        (1, 1, noon.replace(tzinfo=datetime.timezone.utc), noon, [1], [("k", 1)], {"a": 1}),
    ]


def test_writing_a_missing_table_without_create_table_fails(shops: Lake) -> None:
    before = shops.version()
    frame = shops.spark.createDataFrame([(1, D1, "x")], FRAME)
    with pytest.raises(AnalysisException) as caught:
        shops.save(frame, "s.missing")
    assert "table 's.missing' does not exist" in str(caught.value)
    assert 'add .option("createTable", "true")' in str(caught.value)
    with pytest.raises(AnalysisException, match=r"table 'other\.t' does not exist"):
        shops.save(frame, "other.t")
    assert shops.version() == before


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        pytest.param(
            "id long, shop string, colour string", "colour: not a column of the table", id="unknown"
        ),
        pytest.param(
            "id long, shop int", "shop: the DataFrame has int, the table string", id="type"
        ),
        pytest.param(
            "id int, day date", "id: the DataFrame has int, the table bigint", id="narrower"
        ),
        pytest.param(
            "ID long, Day date", "ID: not a column of the table; Day: not a column", id="case"
        ),
    ],
)
def test_a_dataframe_that_does_not_match_the_table_fails(
    shops: Lake, schema: str, problem: str
) -> None:
    before = shops.version()
    frame = shops.spark.createDataFrame([], schema)
    with pytest.raises(AnalysisException) as caught:
        shops.save(frame, "s.t")
    assert "the DataFrame does not match table s.t: " + problem in str(caught.value)
    assert shops.version() == before


def test_missing_nullable_columns_are_written_as_null(shops: Lake) -> None:
    shops.save(shops.spark.createDataFrame([(5,)], "id long"), "s.t")
    assert shops.rows("SELECT * FROM s.t ORDER BY id") == [(1, D1, "a"), (5, None, None)]


def test_columns_are_matched_by_name_not_position(shops: Lake) -> None:
    frame = shops.spark.createDataFrame([("b", 7, D2)], "shop string, id long, day date")
    shops.save(frame, "s.t")
    assert shops.rows("SELECT * FROM s.t ORDER BY id") == [(1, D1, "a"), (7, D2, "b")]


def test_a_null_in_a_not_null_column_fails_the_job_and_commits_nothing(shops: Lake) -> None:
    before = shops.version()
    frame = shops.spark.createDataFrame([(None, D1, "n")], FRAME)
    with pytest.raises(PythonException, match="column 'id' is NOT NULL but 1 value"):
        shops.save(frame, "s.t")
    assert shops.version() == before
    assert shops.rows("SELECT * FROM s.t") == [(1, D1, "a")]


@pytest.mark.parametrize("table", ["system.tables", "system.versions", "information_schema.tables"])
def test_catalog_tables_are_read_only(lake: Lake, table: str) -> None:
    before = lake.version()
    frame = lake.read("system.tables")
    with pytest.raises(AnalysisException, match=f"{table} is a read-only catalog table"):
        lake.save(frame, table)
    assert lake.version() == before


def test_bad_write_options_fail_naming_the_problem(shops: Lake) -> None:
    frame = shops.spark.createDataFrame([(1, D1, "x")], FRAME)
    with pytest.raises(AnalysisException, match=r"partitionBy names \['nope'\] that the DataFrame"):
        shops.save(frame, "s.new", options={"createTable": "true", "partitionBy": "nope"})
    with pytest.raises(AnalysisException, match="got 'x': load"):
        shops.save(frame, "x")
    with pytest.raises(AnalysisException, match="needs the lakehouse"):
        frame.write.format("trinitylake").mode("append").save("s.t")
    assert shops.rows("SELECT count(*) FROM system.tables WHERE table_name = 'new'") == [(0,)]


def test_every_type_round_trips_through_spark(lake: Lake) -> None:
    from tests.spark.test_read import ALL_TYPES, ALL_TYPES_ROWS

    lake.execute(ALL_TYPES)
    lake.execute(ALL_TYPES_ROWS)
    lake.execute(ALL_TYPES.replace("s.t", "s.copy"))
    lake.save(lake.read("s.t"), "s.copy")
    assert lake.rows("SELECT * FROM s.copy ORDER BY id") == lake.rows(
        "SELECT * FROM s.t ORDER BY id"
    )
    lake.save(lake.read("s.t"), "s.created", options={"createTable": "true"})
    assert lake.rows("SELECT * FROM s.created ORDER BY id") == lake.rows(
        "SELECT * FROM s.t ORDER BY id"
    )


def test_create_table_keeps_the_precision_of_spark_times(lake: Lake) -> None:
    frame = lake.spark.sql("SELECT TIME'12:34:56.123456' AS tm")
    assert frame.schema[0].dataType.simpleString() == "time(6)"
    lake.save(frame, "s.times", options={"createTable": "true"})
    assert lake.rows("SELECT data_type FROM system.columns WHERE table_name = 'times'") == [
        ("time(6)",)
    ]
    assert lake.rows("SELECT tm FROM s.times") == [(datetime.time(12, 34, 56, 123456),)]
