"""Spark writes store values as every other write path does (docs/datasets.md, "Converting values").

A Spark DataFrame must have the table's types (checked on the driver), so
Spark has already typed the values; the write still goes through the one
conversion rule, and must store exactly what ``executemany`` of the same
values stores. A small parametrized set: the JVM is slow.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

import pytest

pytest.importorskip("pyspark")

from tests.spark.helpers import Lake

D = decimal.Decimal

CASES = [
    ("FLOAT8", "double", [math.inf, -math.inf, math.nan, -0.0, 1e300, 5e-324]),
    ("FLOAT4", "float", [math.inf, math.nan, -0.0, 0.5, 3.0e38]),
    ("DECIMAL(38, 0)", "decimal(38,0)", [D(10**38 - 1), D(-(10**38 - 1)), D(0)]),
    ("DECIMAL(5, 2)", "decimal(5,2)", [D("1.25"), D("-0.01"), D("999.99")]),
    ("INT8", "long", [2**63 - 1, -(2**63), 0]),
    ("DATE", "date", [datetime.date(1, 1, 1), datetime.date(9999, 12, 31)]),
]


def _key(value: Any) -> Any:
    if isinstance(value, float):
        return ("float", "nan" if math.isnan(value) else value, math.copysign(1.0, value))
    return (type(value).__name__, value)


@pytest.mark.parametrize(("sql_type", "spark_type", "values"), CASES)
def test_spark_stores_what_executemany_stores(
    lake: Lake, sql_type: str, spark_type: str, values: list[Any]
) -> None:
    lake.execute(f"CREATE TABLE s.by_spark (id INT8, v {sql_type})")
    lake.execute(f"CREATE TABLE s.by_dbapi (id INT8, v {sql_type})")
    rows = list(enumerate(values))
    lake.conn.cursor().executemany("INSERT INTO s.by_dbapi VALUES (?, ?)", rows)
    lake.save(lake.spark.createDataFrame(rows, f"id long, v {spark_type}"), "s.by_spark")
    by_spark = lake.rows("SELECT id, v FROM s.by_spark ORDER BY id")
    by_dbapi = lake.rows("SELECT id, v FROM s.by_dbapi ORDER BY id")
    assert [_key(v) for _, v in by_spark] == [_key(v) for _, v in by_dbapi]
    assert [i for i, _ in by_spark] == list(range(len(values)))
