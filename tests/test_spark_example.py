"""The PySpark pipeline example (docs/spark.md) runs as written and sees what the page says."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
if shutil.which("java") is None:  # pragma: no cover - CI machines have Java
    pytest.skip("PySpark needs Java", allow_module_level=True)

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
        "'system_columns', 'system_data_files', 'system_namespaces', 'system_tables', "
        "'system_versions']"
    ),
    "day_two_rows_from_spark_sql: 4",
]


def test_pipeline_example(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    done = subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.spark.example", str(lake)],
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == EXPECTED
    # The page shows the same lines.
    page = (Path(__file__).resolve().parent.parent / "docs" / "spark.md").read_text()
    assert "\n".join(EXPECTED) in page
