"""Smoke run of ``benchmarks/commits.py --quick``: it runs and reports its targets.

Timings are not asserted (they depend on the machine); only that the last line
is the JSON report with its sections, that no commit was lost and that
timestamp lookups stayed within their read bound.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "commits.py"


def test_commits_benchmark_quick(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 5, done.stdout
    report = json.loads(lines[-1])
    assert {"trinity", "pyiceberg_sqlcatalog", "time_travel", "checks"} <= report.keys()
    assert {"single_writer", "writers"} <= report["trinity"].keys()
    assert set(report["time_travel"]) == {"10", "1000"}
    checks = report["checks"]
    assert set(checks) == {
        "zero_lost_commits",
        "timestamp_reads_within_bound",
        "single_writer_at_least_baseline",
    }
    assert checks["zero_lost_commits"] is True
    assert checks["timestamp_reads_within_bound"] is True
    assert report["trinity"]["writers"]["lost_commits"] == 0
    for figures in report["time_travel"].values():
        assert figures["wrong_versions"] == 0
    if importlib.util.find_spec("pyiceberg") is None:
        assert report["pyiceberg_sqlcatalog"] is None
    else:
        baseline = report["pyiceberg_sqlcatalog"]
        assert baseline["commits"] == report["trinity"]["single_writer"]["commits"]
        assert baseline["namespaces_listed"] == baseline["commits"]


def test_sql_benchmark_quick(tmp_path: Path) -> None:
    script = SCRIPT.parent / "sql.py"
    done = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"sql", "transaction_api", "sql_overhead_ratio", "shell_cold_start"} <= report.keys()
    assert report["sql"]["statements"] == report["transaction_api"]["statements"] == 80
    assert report["checks"]["same_number_of_versions"] is True
    assert set(report["checks"]) == {
        "sql_overhead_under_25_percent",
        "cold_start_under_1s",
        "same_number_of_versions",
    }
