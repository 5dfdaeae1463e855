"""The PySpark pipeline example (docs/spark.md) runs as written and prints what the page says.

``main`` runs in this process on the session's Spark: its ``getOrCreate``
returns the running session (as the README's Spark example does), and its
closing ``spark.stop()`` is held back so the session stays for the other
tests. A Spark of its own in a subprocess cost a JVM start, 25 s a run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

EXPECTED = [
    "first_load_version: 1",
    "rows_per_day: [('2026-03-01', 6, '213.00'), ('2026-03-02', 4, '27.00')]",
    "rows_at_first_load: 6",
    "customer_c1_orders: [1, 4, 8, 9]",
    "biggest_customer: ('c0', '96.25')",
    "catalog: [('sales', 'orders', ['day'])]",
    (
        "views: ['information_schema_columns', 'information_schema_schemata', "
        "'information_schema_tables', 'information_schema_views', 'sales_orders', "
        "'system_columns', 'system_data_files', 'system_namespaces', 'system_refs', 'system_tables', "
        "'system_versions']"
    ),
    "day_two_rows_from_spark_sql: 4",
]


def test_pipeline_example(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pyspark.sql import SparkSession

    from trinity_dbapi.spark import example

    stopped = []
    monkeypatch.setattr(SparkSession, "stop", lambda session: stopped.append(session))
    assert example.main([str(tmp_path / "lake")]) == 0
    assert stopped == [spark]  # main ran on the session, and would have stopped it
    assert capsys.readouterr().out.splitlines() == EXPECTED
    # The page shows the same lines.
    page = (Path(__file__).resolve().parents[2] / "docs" / "spark.md").read_text()
    assert "\n".join(EXPECTED) in page
