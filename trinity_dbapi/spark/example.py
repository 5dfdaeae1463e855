"""A PySpark pipeline into a lakehouse, then the same data through the DB-API and DuckDB.

Run it: ``python -m trinity_dbapi.spark.example [LAKE_DIR]`` (default: a
temporary folder). It

1. writes a day of orders as CSV (the pipeline's source) and ingests it with
   Spark into ``sales.orders``, created from the DataFrame, partitioned by
   day;
2. indexes the table by customer (through the DB-API);
3. ingests a second day from Parquet (an append: one more commit);
4. queries the table through the DB-API, with time travel to the first load,
   and through DuckDB (``trinity_dbapi.duckdb.attach``);
5. reads the catalog from Spark (``system.tables``) and the tables as Spark
   SQL views.

``docs/spark.md`` walks through it.

Imports from spark/: nothing.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import tempfile
from pathlib import Path
from typing import Any

import trinity_dbapi


def write_sources(folder: Path) -> tuple[Path, Path]:
    """Two days of orders: day one as CSV, day two as Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    csv_path = folder / "orders-2026-03-01.csv"
    with csv_path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["order_id", "day", "customer", "amount"])
        for i in range(1, 7):
            writer.writerow([i, "2026-03-01", f"c{i % 3}", f"{i * 10}.50"])
    parquet_path = folder / "orders-2026-03-02.parquet"
    second = pa.table(
        {
            "order_id": pa.array(range(7, 11), pa.int64()),
            "day": pa.array([datetime.date(2026, 3, 2)] * 4),
            "customer": ["c0", "c1", "c1", "c2"],
            "amount": pa.array([5.25, 6.25, 7.25, 8.25]),
        }
    )
    pq.write_table(second, parquet_path)
    return csv_path, parquet_path


def run_pipeline(spark: Any, lake: str, sources: Path) -> dict[str, Any]:
    """The whole pipeline; returns what each step saw (the tests check it)."""
    from pyspark.sql import functions as F

    from trinity_dbapi.spark import register, register_views

    register(spark)
    csv_path, parquet_path = write_sources(sources)
    schema = "order_id BIGINT, day DATE, customer STRING, amount DECIMAL(10,2)"

    # 1. Day one from CSV: the table is created from the DataFrame, partitioned by day.
    day_one = spark.read.schema(schema).option("header", "true").csv(str(csv_path))
    (
        day_one.write.format("trinitylake")
        .option("uri", lake)
        .option("createTable", "true")
        .option("partitionBy", "day")
        .mode("append")
        .save("sales.orders")
    )
    conn = trinity_dbapi.connect(lake, autocommit=True)
    first_load = conn.execute("SELECT max(version) FROM system.versions").fetchone()[0]

    # 2. An index on customer, for point queries (maintained by every later write).
    conn.execute("CREATE INDEX by_customer ON sales.orders (customer)")

    # 3. Day two from Parquet: an append, one more commit.
    day_two = spark.read.parquet(str(parquet_path)).select(
        "order_id", "day", "customer", F.col("amount").cast("decimal(10,2)").alias("amount")
    )
    day_two.write.format("trinitylake").option("uri", lake).mode("append").save("sales.orders")

    # 4. The same table through the DB-API (now and at the first load) and DuckDB.
    per_day = conn.execute(
        "SELECT day, count(*), sum(amount) FROM sales.orders GROUP BY day ORDER BY day"
    ).fetchall()
    then = conn.execute(
        f"SELECT count(*) FROM sales.orders FOR SYSTEM_VERSION AS OF {first_load}"
    ).fetchone()[0]
    c1 = conn.execute(
        "SELECT order_id FROM sales.orders WHERE customer = ? ORDER BY order_id", ["c1"]
    ).fetchall()
    conn.close()

    import duckdb

    from trinity_dbapi.duckdb import attach

    duck = duckdb.connect()
    attached = attach(duck, lake)
    (biggest,) = duck.execute(
        "SELECT customer, sum(amount) AS total FROM sales.orders GROUP BY customer "
        "ORDER BY total DESC LIMIT 1"
    ).fetchall()
    attached.detach()

    # 5. The catalog from Spark, and every table as a Spark SQL view.
    tables = (
        spark.read.format("trinitylake")
        .option("uri", lake)
        .load("system.tables")
        .select("namespace_name", "table_name", "partition_columns")
        .collect()
    )
    views = register_views(spark, lake)
    from_spark = spark.sql(
        "SELECT count(*) AS n FROM sales_orders WHERE day = DATE'2026-03-02'"
    ).collect()[0]["n"]
    return {
        "first_load_version": first_load,
        "rows_per_day": [(str(day), count, str(total)) for day, count, total in per_day],
        "rows_at_first_load": then,
        "customer_c1_orders": [row[0] for row in c1],
        "biggest_customer": (biggest[0], str(biggest[1])),
        "catalog": [tuple(row) for row in tables],
        "views": sorted(views),
        "day_two_rows_from_spark_sql": from_spark,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the example pipeline on a local Spark and print what each step saw."""
    from pyspark.sql import SparkSession

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lake", nargs="?", help="lakehouse folder (default: a temporary one)")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="trinity-spark-example-"))
    lake = args.lake or str(work / "lake")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("trinitylake-example")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        seen = run_pipeline(spark, lake, work / "sources")
    finally:
        spark.stop()
    for key, value in seen.items():
        print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
