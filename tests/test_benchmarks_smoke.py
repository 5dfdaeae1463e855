"""Smoke runs of ``benchmarks/*.py --quick``: each runs and reports its targets.

Timings are not asserted (they depend on the machine); only that the last line
is the JSON report with its sections and that the correctness checks hold: no
commit was lost, timestamp lookups stayed within their read bound, pandas
writes were one commit each and every pandas read returned the same rows, and
each Spark save through ``trinitylake`` was one commit and both Spark reads
returned the source's rows, every catalog statement found its table and
counted the same storage reads both ways, and every branch merge landed its
rows, CREATE BRANCH and CREATE TAG cost as many requests at 200 tables as at
10, and table_changes agreed with the naive diff and delta-rs' feed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: Not in the default run: .ci/run's "benchmark smoke" leg runs them (-m bench).
pytestmark = pytest.mark.bench

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "commits.py"


def _quick(script: Path, cwd: Path, *, timeout: int) -> subprocess.CompletedProcess[str]:
    """Run ``script --quick`` in ``cwd``; fails the test if it exits non-zero."""
    return subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )


def _pyiceberg_sqlcatalog() -> bool:
    """Whether the benchmarks' baseline runs: pyiceberg's SqlCatalog imports.

    pyiceberg may be installed while its SQL catalog does not import (it needs
    SQLAlchemy 2): the benchmarks then report no baseline.
    """
    if importlib.util.find_spec("pyiceberg") is None:
        return False
    try:
        import pyiceberg.catalog.sql  # noqa: F401
    except ImportError:
        return False
    return True


def test_commits_benchmark_quick(tmp_path: Path) -> None:
    done = _quick(SCRIPT, tmp_path, timeout=300)
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
    if not _pyiceberg_sqlcatalog():
        assert report["pyiceberg_sqlcatalog"] is None
    else:
        baseline = report["pyiceberg_sqlcatalog"]
        assert baseline["commits"] == report["trinity"]["single_writer"]["commits"]
        assert baseline["namespaces_listed"] == baseline["commits"]


def test_sql_benchmark_quick(tmp_path: Path) -> None:
    script = SCRIPT.parent / "sql.py"
    done = _quick(script, tmp_path, timeout=300)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"sql", "transaction_api", "sql_overhead_ratio", "shell_cold_start"} <= report.keys()
    assert report["sql"]["statements"] == report["transaction_api"]["statements"] == 80
    assert report["checks"]["same_number_of_versions"] is True
    assert set(report["checks"]) == {
        "sql_overhead_under_25_percent",
        "cold_start_under_1s",
        "same_number_of_versions",
    }


def test_pandas_io_benchmark_quick(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("sqlalchemy")
    script = SCRIPT.parent / "pandas_io.py"
    done = _quick(script, tmp_path, timeout=300)
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 6, done.stdout
    report = json.loads(lines[-1])
    assert {"write", "read", "ratios", "same_result", "checks"} <= report.keys()
    assert report["rows"] == 20_000
    assert set(report["read"]) == {"duckdb_df", "read_sql", "read_sql_table", "fetch_df"}
    checks = report["checks"]
    assert {
        "read_sql_ratio_at_most_1_5",
        "fast_read_ratio_at_most_1_5",
        "to_sql_ratio_at_most_3",
        "to_sql_arrow_insert_ratio_at_most_3",
        "to_sql_one_commit",
        "to_sql_arrow_insert_one_commit",
        "same_result",
    } <= set(checks)
    assert checks["to_sql_one_commit"] is True
    assert checks["to_sql_arrow_insert_one_commit"] is True
    assert checks["to_sql_stored_matches_frame"] is True
    assert checks["same_result"] is True
    assert report["same_result"] is True
    for method in ("to_sql_default", "to_sql_arrow_insert"):
        assert report["write"][method]["commits_per_run"] == [1] * report["write_runs"]
    # The peers ran on the same frame; their reads hold the frame's numbers too.
    assert set(report["peers"]) == {"duckdb_engine", "sqlite3"}
    for peer in report["peers"].values():
        assert peer["to_sql_seconds"] > 0
        assert peer["read_sql_checksum"]["id_sum"] == report["frame"]["id_sum"]
        assert peer["read_sql_checksum"]["names_match"] is True
    assert set(report["versus_peers"]) == {
        f"{op}_vs_{peer}" for op in ("to_sql", "read_sql") for peer in report["peers"]
    }
    assert {f"{key}_below_1" for key in report["versus_peers"]} <= set(checks)


def test_spark_io_benchmark_quick(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("PySpark needs Java")
    script = SCRIPT.parent / "spark_io.py"
    done = _quick(script, tmp_path, timeout=900)
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 4, done.stdout
    report = json.loads(lines[-1])
    assert {"source", "write", "read", "ratios", "checks"} <= report.keys()
    assert report["rows"] == 200_000
    assert report["source"]["checksum"]["rows"] == 200_000
    checks = report["checks"]
    assert set(checks) == {
        "write_ratio_at_most_1_3",
        "read_ratio_at_most_2",
        "same_rows",
        "same_types",
        "one_commit_per_save",
    }
    assert checks["same_rows"] is True
    assert checks["same_types"] is True
    assert checks["one_commit_per_save"] is True
    assert {"write", "read", "handoff_floor", "write_over_handoff"} <= report["ratios"].keys()
    # register() lifted Spark's per-row Arrow byte check for the session.
    assert report["spark_conf"] == {"spark.sql.execution.arrow.maxBytesPerBatch": "2147483647"}
    # One commit per save, the untimed warm-up save included.
    assert report["write"]["trinitylake"]["commits_per_save"] == [1] * (report["runs"] + 1)
    assert report["write"]["trinitylake"]["rows"] == report["write"]["parquet"]["rows"] == 200_000
    for side in ("trinitylake", "parquet"):
        assert report["read"][side]["checksum"] == report["source"]["checksum"]


def test_catalog_benchmark_quick(tmp_path: Path) -> None:
    pytest.importorskip("sqlalchemy")
    script = SCRIPT.parent / "catalog.py"
    done = _quick(script, tmp_path, timeout=600)
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 13, done.stdout
    report = json.loads(lines[-1])
    assert set(report["sizes"]) == {"600", "1200"}
    statements = {"describe", "show_tables", "columns_point", "versions", "reflection"}
    for size, figures in report["sizes"].items():
        assert figures["build"]["tables"] == int(size)
        ours = figures["trinity"]
        assert set(ours) == statements
        # Every statement found n1.t0150: its 8 columns, namespace n1's tables.
        assert ours["describe"]["rows"] == ours["columns_point"]["rows"] == 8
        assert ours["reflection"]["rows"] == 8
        assert ours["show_tables"]["rows"] == min(400, int(size) - 400)
        assert 1 <= ours["versions"]["rows"] <= 3
        for op in statements:
            # The cold child's two counts of backend reads agree.
            assert ours[op]["cold_reads"] == ours[op]["cold_counter_reads"] > 0
        if not _pyiceberg_sqlcatalog():
            assert figures["pyiceberg_sqlcatalog"] is None
        else:
            assert set(figures["pyiceberg_sqlcatalog"]) == {
                "build",
                "load_table",
                "list_tables",
                "table_exists",
            }
    checks = report["checks"]
    assert {
        "cold_describe_reads_within_depth_plus_3",
        "show_tables_reads_no_definition_file",
        "warm_describe_largest_within_1_5x_smallest",
        "warm_reflection_largest_within_1_5x_smallest",
    } <= set(checks)
    assert all(isinstance(value, bool) for value in checks.values())


def test_kartothek_io_benchmark_quick(tmp_path: Path) -> None:
    pytest.importorskip("plateau")
    script = SCRIPT.parent / "kartothek_io.py"
    done = _quick(script, tmp_path, timeout=300)
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 5, done.stdout
    report = json.loads(lines[-1])
    assert report["rows"] == 40_000 and report["files"] == 32
    assert {
        "import_copy",
        "import_reference",
        "read_table_then_ingest",
        "sum_copy",
        "sum_reference",
        "sum_plateau",
        "lookup_copy",
        "lookup_reference",
        "lookup_plateau",
    } == set(report["seconds"])
    checks = report["checks"]
    # Correctness, not speed: every result right, every import one commit.
    for name, value in checks.items():
        if "faster" not in name:
            assert value is True, name


def test_peers_benchmark_quick(tmp_path: Path) -> None:
    pytest.importorskip("deltalake")
    if not _pyiceberg_sqlcatalog():
        pytest.skip("pyiceberg's SqlCatalog does not import")
    pytest.importorskip("pyiceberg_core")  # pyiceberg writes DayTransform partitions with it
    script = SCRIPT.parent / "peers.py"
    done = _quick(script, tmp_path, timeout=300)
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 8, done.stdout
    report = json.loads(lines[-1])
    assert report["quick"] is True
    assert set(report["peers"]) == {"deltalake", "pyiceberg"}
    rows = ["appends", "scan", "compaction", "scan_compacted", "merge", "range_query"]
    figures = report["figures"]
    for row in rows:
        # Each system ran each row: a measured, positive figure for all three.
        for system in ("trinity", "delta_rs", "pyiceberg"):
            value = figures[row][system]
            seconds = value["seconds"] if row == "appends" else value
            assert isinstance(seconds, float) and seconds > 0, (row, system, value)
    for system in ("trinity", "delta_rs", "pyiceberg"):
        # MERGE: the median of the rounds, each on a freshly loaded target.
        runs = figures["merge_runs"][system]
        assert len(runs) == report["sizes"]["merge_runs"] == 2
        assert figures["merge_first"][system] == runs[0]
        assert min(runs) <= figures["merge"][system] <= max(runs)
        before, after = figures["compaction"][f"{system}_files"]
        assert before == report["sizes"]["appends"] and after == 1, (system, before, after)
    checks = report["checks"]
    correctness = {name for name in checks if not name.startswith("trinity_faster_")}
    for system in ("trinity", "delta_rs", "pyiceberg"):
        for what in ("scan", "scan_compacted", "merge", "range"):
            assert f"{what}_{system}_right" in correctness
    # Correctness, not speed: every system's every result equal to the expected one.
    for name in correctness:
        assert checks[name] is True, name
    assert {
        f"trinity_faster_{row}_than_{peer}" for row in rows for peer in ("delta_rs", "pyiceberg")
    } <= set(checks)
    assert all(isinstance(value, bool) for value in checks.values())


def test_object_store_benchmark_quick(tmp_path: Path) -> None:
    """Every store runs its systems behind the latency layer, or says why it was skipped.

    S3 runs the three systems; GCS (fake-gcs-server) and Azure (Azurite) run
    trinity (and delta-rs on Azure) behind a proxy with the same wait. A
    missing emulator is a skip with its reason in the report, not a crash,
    unless CI requires the emulators (``TRINITY_REQUIRE_EMULATORS=1``).
    """
    pytest.importorskip("moto.server")
    pytest.importorskip("deltalake")
    if not _pyiceberg_sqlcatalog():
        pytest.skip("pyiceberg's SqlCatalog does not import here (it needs SQLAlchemy 2)")
    script = SCRIPT.parent / "object_store.py"
    done = _quick(script, tmp_path, timeout=900)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    stores = ("s3", "gcs", "azure")
    assert report["stores"] == list(stores)
    assert set(report["latency"]) == {"20"}
    run = report["latency"]["20"]
    assert set(run["stores"]) == set(stores)
    assert run["results_agree_across_stores"] is True
    operations = ("append_1", "append_1m", "count_30", "point_30", "sum_1m", "describe")
    operations += ("scan_100", "warm_filtered")
    ran = []
    for name in stores:
        store = run["stores"][name]
        if "skipped" in store:
            # Skipped only for a reason the report gives (an emulator not installed).
            assert name != "s3" and isinstance(store["skipped"], str) and store["skipped"]
            assert report["skipped"][name] == store["skipped"]
            assert store["skipped"] in done.stdout
            continue
        ran.append(name)
        systems = set(store["systems"])
        assert "trinity" in systems
        assert systems == {"s3": {"trinity", "delta", "iceberg"}, "gcs": {"trinity"}}.get(
            name, {"trinity", "delta"}
        )
        assert store["results_agree"] is True
        assert report["checks"][f"results_agree_{name}_20ms"] is True
        for operation in operations:
            assert set(store["figures"][operation]) == systems, (name, operation)
            for system in systems:
                assert store["figures"][operation][system] > 0, (name, operation, system)
                assert store["requests"][operation][system]["requests"] > 0, (name, operation)
            # trinity's own count of requests is the layer's, and its rounds are counted.
            ours = store["trinity_storage"][operation]
            assert ours["requests"] == store["requests"][operation]["trinity"]["requests"]
            assert 1 <= ours["rounds"] <= ours["requests"], (name, operation, ours)
        # Warm, nothing changed: learning the latest version is all trinity asks, in one round.
        assert store["requests"]["warm_filtered"]["trinity"]["requests"] == 2
        assert store["trinity_storage"]["warm_filtered"]["rounds"] == 1
    assert "s3" in ran
    if os.environ.get("TRINITY_REQUIRE_EMULATORS") == "1":
        assert ran == list(stores), report["skipped"]
    assert report["checks"]["results_agree_20ms"] is True


def test_branches_benchmark_quick(tmp_path: Path) -> None:
    """Refs, merges and table_changes at a tiny size; pyiceberg and delta-rs beside them."""
    script = SCRIPT.parent / "branches.py"
    done = _quick(script, tmp_path, timeout=600)
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 16, done.stdout
    report = json.loads(lines[-1])
    assert report["quick"] is True
    assert report["sizes"] == {
        "tables": [10, 200],
        "merge_tables": 200,
        "changed": [1, 5],
        "rows": 100_000,
    }
    labels = {"local", "latency_20ms"}
    for size in ("10", "200"):
        refs = report["refs"][size]
        assert refs["tables"] == int(size)
        # One branch and one tag per run and label, listed in system.refs with main.
        assert refs["refs_listed"] == 2 * len(labels) * report["runs"] + 1
        for label in labels:
            for op in ("create_branch", "create_tag"):
                figures = refs[label][op]
                assert figures["seconds"] > 0 and figures["creates"] >= 1
                assert 1 <= figures["rounds"] <= figures["requests"]
    merges = {f"{mode}_{k}" for mode in ("three_way", "fast_forward") for k in (1, 5)}
    commits = {"commit_1", "commit_5"}  # the same INSERTs committed on main: the yardstick
    for label in labels:
        assert set(report["refs"]["200"][label]) == {
            "create_branch",
            "create_tag",
            "create_namespace",
        }
        assert set(report["merge"][label]) == merges | commits
        for name in merges:
            figures = report["merge"][label][name]
            assert figures["landed"] is True and figures["seconds"] > 0
            assert 1 <= figures["rounds"] <= figures["requests"]
    changes = report["table_changes"]
    assert changes["right"] is True
    for change in ("insert_1", "update_1"):
        assert set(changes[change]) == {"table_changes", "naive_except_all"}
    # Correctness and the O(1) request counts are deterministic: all must hold.
    checks = report["checks"]
    assert {
        f"{op}_{what}_o1_{label}"
        for op in ("create_branch", "create_tag")
        for what in ("requests", "rounds")
        for label in labels
    } | {"merges_landed", "table_changes_right"} <= set(checks)
    for name, value in checks.items():
        assert value is True, name
    if importlib.util.find_spec("deltalake") is None:
        assert report["delta_cdf"] is None
    else:
        assert report["delta_cdf"]["right"] is True
    if not _pyiceberg_sqlcatalog():
        assert report["pyiceberg"] is None
    else:
        iceberg = report["pyiceberg"]
        assert iceberg["create_branch_every_table"]["files_written"] == iceberg["tables"] == 10
        assert iceberg["fast_forward_one_table"]["rows_after"] == 2
