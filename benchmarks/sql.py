"""Benchmark: the cost of the SQL layer on top of the transaction API, and shell cold start.

Everything runs on local disk (a temporary directory), side by side in one run:

* SQL: ``--rounds`` rounds (default 250) of four autocommit DDL statements
  through the DB-API (``CREATE NAMESPACE nsI``, ``CREATE TABLE nsI.t (...)``,
  ``ALTER TABLE nsI.t ADD COLUMN c INT``, ``DROP TABLE nsI.t``), on a fresh
  lakehouse; statements per second;
* baseline: the same four operations per round through the Python
  transaction API directly (``lake.begin()`` + ``create_namespace`` /
  ``create_table`` of a managed table with its empty dataset, as CREATE TABLE
  makes one / ``replace_table`` / ``drop_table`` + ``commit``), each its own
  transaction like autocommit, on another fresh lakehouse;
* each side runs twice and keeps its faster run;
* the SQL layer's overhead: ``sql_seconds / api_seconds - 1`` (target < 25%);
* shell cold start: wall time of a new process running
  ``trinity URI -c "SHOW TABLES"`` on the SQL lakehouse (median of
  ``--starts`` runs, default 5; target < 1 s).

Human-readable lines first; the last line is one JSON object with every
figure and a ``checks`` dict of booleans.

Run: ``python benchmarks/sql.py [--rounds 250] [--starts 5] [--quick]``
(``--quick``: 20 rounds, 2 starts: a smoke run).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trinity_dbapi
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.tables import datasets, managed


def bench_sql(rounds: int, root: Path) -> dict[str, Any]:
    conn = trinity_dbapi.connect(str(root), autocommit=True)
    cur = conn.cursor()
    start = time.perf_counter()
    for i in range(rounds):
        cur.execute(f"CREATE NAMESPACE ns{i}")
        cur.execute(f"CREATE TABLE ns{i}.t (a BIGINT NOT NULL, b VARCHAR(10))")
        cur.execute(f"ALTER TABLE ns{i}.t ADD COLUMN c INT")
        cur.execute(f"DROP TABLE ns{i}.t")
    elapsed = time.perf_counter() - start
    version = conn.lakehouse.latest_version()
    conn.close()
    return _figures(rounds, elapsed, version)


def bench_api(rounds: int, root: Path) -> dict[str, Any]:
    lake = Lakehouse.create(str(root))
    columns = (
        Column(1, "a", DataType("int8"), nullable=False),
        Column(2, "b", DataType.varchar(10)),
    )
    start = time.perf_counter()
    for i in range(rounds):
        namespace = f"ns{i}"
        with lake.begin() as txn:
            txn.create_namespace(namespace)
        with lake.begin() as txn:
            # A managed table, as CREATE TABLE makes: with its (empty) dataset.
            table = TableDefinition("t", columns, table_format=managed.TABLE_FORMAT)
            txn.create_table(namespace, datasets.create_dataset(lake.storage, table))
        with lake.begin() as txn:
            table = txn.load_table(namespace, "t")
            added = (*table.columns, Column(3, "c", DataType("int4")))
            txn.replace_table(namespace, table.replace(columns=added))
        with lake.begin() as txn:
            txn.drop_table(namespace, "t")
    elapsed = time.perf_counter() - start
    return _figures(rounds, elapsed, lake.latest_version())


def _figures(rounds: int, elapsed: float, version: int) -> dict[str, Any]:
    statements = 4 * rounds
    return {
        "statements": statements,
        "seconds": round(elapsed, 3),
        "statements_per_second": round(statements / elapsed, 1),
        "ms_per_statement": round(1000 * elapsed / statements, 3),
        "latest_version": version,
    }


def bench_cold_start(uri: str, starts: int) -> dict[str, Any]:
    command = [shutil.which("trinity") or "", uri, "-c", "SHOW TABLES"]
    if not command[0]:
        command = [sys.executable, "-m", "trinity_dbapi.cli", uri, "-c", "SHOW TABLES"]
    times = []
    for _ in range(starts):
        t0 = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return {
        "command": " ".join(command[1:]) if command[0].endswith("trinity") else " ".join(command),
        "runs": starts,
        "seconds_median": round(statistics.median(times), 3),
        "seconds_max": round(max(times), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=250, help="rounds of 4 statements")
    parser.add_argument("--starts", type=int, default=5, help="cold starts of the shell")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args(argv)
    rounds, starts = (20, 2) if args.quick else (args.rounds, args.starts)
    with tempfile.TemporaryDirectory(prefix="trinity-bench-sql-") as tmp:
        root = Path(tmp)
        # Alternate the two and keep each one's faster run, so neither pays
        # alone for a cold disk or a noisy neighbour.
        api_runs, sql_runs = [], []
        for i in range(2):
            api_runs.append(bench_api(rounds, root / f"api{i}"))
            sql_runs.append(bench_sql(rounds, root / f"sql{i}"))
        api = min(api_runs, key=lambda f: f["seconds"])
        sql = min(sql_runs, key=lambda f: f["seconds"])
        overhead = sql["seconds"] / api["seconds"] - 1
        cold = bench_cold_start(str(root / "sql0"), starts)
    print(
        f"DB-API autocommit DDL | {sql['statements']} statements | "
        f"{sql['statements_per_second']:8.1f} stmt/s | {sql['ms_per_statement']} ms each"
    )
    print(
        f"transaction API       | {api['statements']} operations | "
        f"{api['statements_per_second']:8.1f} ops/s  | {api['ms_per_statement']} ms each"
    )
    print(f"SQL layer overhead    | {100 * overhead:+.1f}% (target < 25%)")
    print(
        f"shell cold start      | trinity URI -c 'SHOW TABLES' | median "
        f"{cold['seconds_median']} s, max {cold['seconds_max']} s (target < 1 s)"
    )
    report = {
        "quick": args.quick,
        "sql": sql,
        "transaction_api": api,
        "sql_overhead_ratio": round(overhead, 3),
        "shell_cold_start": cold,
        "checks": {
            "sql_overhead_under_25_percent": overhead < 0.25,
            "cold_start_under_1s": cold["seconds_median"] < 1.0,
            "same_number_of_versions": sql["latest_version"] == api["latest_version"],
        },
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
