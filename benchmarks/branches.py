"""Benchmark: branches, tags, merges and ``system.table_changes``, next to pyiceberg and delta-rs.

Everything runs on local disk (a temporary directory), side by side in one
run, trinity through the PEP 249 driver (autocommit) and its SQL:

* **refs** (issue 35, rule 3: O(1)): ``CREATE BRANCH`` and ``CREATE TAG`` on
  lakehouses of ``--tables`` tables (default 10 and 10,000), flat: every
  table in one namespace. The tables are made through the lakehouse API in
  one transaction (definitions only, no datasets: a branch never looks at
  them), then one ordinary SQL commit settles the build (the first commit
  after a 10,000-key batch writes out the root's buffered keys, as any
  commit would: that is the tree's cost, not the branch's). Figures: seconds
  (best of ``--runs``), storage requests and rounds (``storage_stats``);
  ``CREATE NAMESPACE``, an ordinary one-object commit, is the yardstick.
* **merge** (rule 5: cost proportional to what changed): on a lakehouse of
  ``--merge-tables`` tables (default 10,000), a branch that inserted one row
  into each of ``--changed`` tables (default 1 and 100; one transaction on
  the branch), then ``MERGE BRANCH b INTO main``: three-way (main committed
  an unrelated INSERT into another table after the branch was made) and
  fast-forward (main did not move). Setup is not timed; best of ``--runs``,
  each on a fresh branch; the merged tables must then hold the branch's rows.
  The yardstick (``commit_<k>``): the same INSERTs in one transaction on
  main, its ``COMMIT`` timed.
* **object storage**: the refs and merge rows again with every storage
  request waiting ``--latency-ms`` (default 20 ms, about one round trip to an
  object store in-region; requests sent together wait side by side), through
  the storage's own request-delay layer (``Storage.latency``, as
  tests/sql/engine/test_request_budget.py uses it); the rounds are what the
  round trip multiplies.
* **table_changes** (rule 6): a table of ``--rows`` rows (default
  10,000,000; ``(id INT8, v FLOAT8)``, built with four ``Cursor.ingest`` of
  Arrow data), then an INSERT of one row and an UPDATE of one row; for each,
  ``SELECT * FROM system.table_changes('ns.big', a, b)`` next to the naive
  diff of the two versions (``EXCEPT ALL`` both ways, ``FOR SYSTEM_VERSION
  AS OF``), best of ``--runs``; both must return the same rows.

Peers, in the same run, where they have the operation:

* **pyiceberg** (``SqlCatalog`` on SQLite): branches and tags are per table
  (``table.manage_snapshots().create_branch / create_tag``); timed on one
  table, and for every table of a ``--tables`` minimum-size catalog
  (default 10) one after another, with the files each writes; what a
  lakehouse-wide branch of 10,000 tables costs is that per-table figure
  times 10,000 (reported as an estimate, not run, and not atomic: there is no
  multi-table commit). Its only way to bring a branch into main is a
  fast-forward of one table (``set_current_snapshot`` to the branch head),
  timed; it has no three-way merge and no change feed (no changelog scan in
  pyiceberg 0.12).
* **delta-rs** (``deltalake``): no branches or tags; its change data feed is
  timed on the same small changes: the same rows written with
  ``delta.enableChangeDataFeed = true`` (four appends), one row appended, one
  row updated (``DeltaTable.update``), then ``load_cdf`` of each version
  read into Arrow.

Checks (booleans in ``checks``): requests and rounds of CREATE BRANCH and
CREATE TAG at the largest size within two of the smallest (O(1)); every
merge left the branch's rows on main; every table_changes result equals the
naive diff and delta-rs' feed. Timings are not targets: the machine's two
cores are shared, so figures are noisy (hence best of ``--runs``). Human-
readable lines come first; the last line printed is one JSON object.

Run: ``python benchmarks/branches.py [--tables 10,10000] [--merge-tables
10000] [--changed 1,100] [--rows 10000000] [--runs 3] [--latency-ms 20]
[--quick]`` (``--quick``: 10 and 200 tables, merges of 1 and 5 of 200,
100,000 rows, one run: a smoke run).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

import trinity_dbapi
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.tables import managed

NAMESPACE = "ns"
MAIN_TABLE = "main_only"


# -- measuring ----------------------------------------------------------------------


def measure(con: Any, sql: str, latency_ms: float = 0.0) -> tuple[dict[str, Any], Any]:
    """Run ``sql`` once on ``con``: its seconds and storage requests (and its rows)."""
    storage = con.lakehouse.storage
    storage.latency = latency_ms / 1000
    cur = con.cursor()
    try:
        before = con.storage_stats
        t0 = time.perf_counter()
        cur.execute(sql)
        rows = cur.fetchall() if cur.description else None
        seconds = time.perf_counter() - t0
        used = con.storage_stats.since(before)
    finally:
        storage.latency = 0.0
    return {
        "seconds": seconds,
        "requests": used.requests,
        "rounds": used.rounds,
        "reads": used.reads,
        "creates": used.creates,
        "writes": used.writes,
        "exists": used.exists,
        "lists": used.lists,
        "bytes_written": used.bytes_written,
    }, rows


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest run's figures, with every run's seconds and the request range."""
    fastest = min(runs, key=lambda r: r["seconds"])
    out = {k: v for k, v in fastest.items() if k != "seconds"}
    out["seconds"] = round(fastest["seconds"], 4)
    out["seconds_runs"] = [round(r["seconds"], 4) for r in runs]
    out["requests_max"] = max(r["requests"] for r in runs)
    out["rounds_max"] = max(r["rounds"] for r in runs)
    return out


def ms(figures: dict[str, Any]) -> str:
    return f"{1000 * figures['seconds']:8.1f} ms"


def cost(figures: dict[str, Any]) -> str:
    return (
        f"{figures['requests']:3} requests ({figures['creates']} creates, "
        f"{figures['writes']} writes, {figures['reads']} reads), {figures['rounds']:2} rounds"
    )


# -- building ----------------------------------------------------------------------


def build_lakehouse(uri: str, tables: int, hot: int) -> Any:
    """A connection to a new lakehouse of ``tables`` tables in one namespace.

    ``hot`` of them (``h000`` ...) and ``main_only`` are made with CREATE TABLE
    (they hold rows later); the rest (``t00000`` ...) through the lakehouse API
    in one transaction, definitions only.
    """
    con = trinity_dbapi.connect(uri, autocommit=True, create=True)
    cur = con.cursor()
    cur.execute(f"CREATE NAMESPACE {NAMESPACE}")
    columns = (Column(1, "id", DataType("int8")), Column(2, "v", DataType("float8")))
    cold = tables - hot - 1
    with con.lakehouse.begin() as txn:
        for i in range(cold):
            txn.create_table(
                NAMESPACE,
                TableDefinition(f"t{i:05d}", columns, table_format=managed.TABLE_FORMAT),
            )
        txn.commit()
    # The first SQL commit settles the build (see the module docstring).
    cur.execute(f"CREATE TABLE {NAMESPACE}.{MAIN_TABLE} (id INT8, v FLOAT8)")
    for i in range(hot):
        cur.execute(f"CREATE TABLE {NAMESPACE}.h{i:03d} (id INT8, v FLOAT8)")
    cur.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ?", [NAMESPACE]
    )
    assert cur.fetchone()[0] == tables
    return con


# -- refs --------------------------------------------------------------------------


def bench_refs(root: Path, tables: int, runs: int, latency_ms: float) -> dict[str, Any]:
    """CREATE BRANCH and CREATE TAG on a flat lakehouse of ``tables`` tables."""
    t0 = time.perf_counter()
    con = build_lakehouse(str(root / f"refs-{tables}"), tables, hot=0)
    build_seconds = time.perf_counter() - t0
    out: dict[str, Any] = {"tables": tables, "build_seconds": round(build_seconds, 2)}
    for label, delay in (("local", 0.0), (f"latency_{latency_ms:g}ms", latency_ms)):
        branch, tag, plain = [], [], []
        for run in range(runs):
            branch.append(measure(con, f"CREATE BRANCH b_{label}_{run}", delay)[0])
            tag.append(measure(con, f"CREATE TAG g_{label}_{run}", delay)[0])
            # The yardstick: an ordinary one-object commit on main, same lakehouse.
            plain.append(measure(con, f"CREATE NAMESPACE n_{label}_{run}", delay)[0])
        out[label] = {
            "create_branch": best(branch),
            "create_tag": best(tag),
            "create_namespace": best(plain),
        }
    cur = con.cursor()
    cur.execute("SELECT count(*) FROM system.refs")
    out["refs_listed"] = cur.fetchone()[0]
    con.close()
    return out


# -- merge -------------------------------------------------------------------------


def one_merge(con: Any, name: str, changed: int, three_way: bool, delay: float) -> dict[str, Any]:
    """Branch ``name``, an INSERT into ``changed`` tables on it, then the timed MERGE."""
    cur = con.cursor()
    cur.execute(f"CREATE BRANCH {name}")
    cur.execute(f"USE BRANCH {name}")
    cur.execute("BEGIN")
    marker = abs(hash(name)) % 1_000_000_000
    for i in range(changed):
        cur.execute(f"INSERT INTO {NAMESPACE}.h{i:03d} VALUES (?, ?)", [marker, float(i)])
    cur.execute("COMMIT")
    cur.execute("USE BRANCH main")
    if three_way:
        cur.execute(f"INSERT INTO {NAMESPACE}.{MAIN_TABLE} VALUES (?, 0.0)", [marker])
    figures, _ = measure(con, f"MERGE BRANCH {name} INTO main", delay)
    # The branch's rows are on main now: the first and the last changed table.
    landed = True
    for i in {0, changed - 1}:
        cur.execute(f"SELECT count(*) FROM {NAMESPACE}.h{i:03d} WHERE id = ?", [marker])
        landed = landed and cur.fetchone()[0] == 1
    figures["landed"] = landed
    cur.execute(f"DROP BRANCH {name}")
    return figures


def one_commit(con: Any, changed: int, run: int, delay: float) -> dict[str, Any]:
    """The yardstick: the same INSERTs on main in one transaction, its COMMIT timed."""
    cur = con.cursor()
    cur.execute("BEGIN")
    for i in range(changed):
        cur.execute(f"INSERT INTO {NAMESPACE}.h{i:03d} VALUES (?, ?)", [-1 - run, float(i)])
    return measure(con, "COMMIT", delay)[0]


def bench_merge(
    root: Path, tables: int, changed: list[int], runs: int, latency_ms: float
) -> dict[str, Any]:
    """MERGE BRANCH of branches that changed ``changed`` of ``tables`` tables."""
    t0 = time.perf_counter()
    con = build_lakehouse(str(root / f"merge-{tables}"), tables, hot=max(changed))
    out: dict[str, Any] = {"tables": tables, "build_seconds": round(time.perf_counter() - t0, 2)}
    for label, delay in (("local", 0.0), (f"latency_{latency_ms:g}ms", latency_ms)):
        out[label] = {}
        for k in changed:
            for mode in ("three_way", "fast_forward"):
                results = [
                    one_merge(con, f"m_{label}_{k}_{mode}_{run}", k, mode == "three_way", delay)
                    for run in range(runs)
                ]
                figures = best(results)
                figures["landed"] = all(r["landed"] for r in results)
                out[label][f"{mode}_{k}"] = figures
            out[label][f"commit_{k}"] = best(
                [one_commit(con, k, run, delay) for run in range(runs)]
            )
    con.close()
    return out


# -- table_changes -----------------------------------------------------------------


def big_chunks(rows: int, parts: int = 4) -> list[pa.Table]:
    """``rows`` rows of ``(id, v = id / 2)`` in ``parts`` Arrow tables."""
    bounds = np.linspace(0, rows, parts + 1, dtype=np.int64)
    out = []
    for lo, hi in itertools.pairwise(bounds):
        ids = np.arange(lo, hi, dtype=np.int64)
        out.append(pa.table({"id": ids, "v": ids / 2}))
    return out


def change_set(rows: list[tuple[Any, ...]]) -> list[tuple[str, int, float]]:
    """``(change_type, id, v)`` sorted: the same shape from every system."""
    return sorted(rows)


def bench_table_changes(root: Path, rows: int, runs: int) -> dict[str, Any]:
    """table_changes over one INSERT and one UPDATE of one row, and the naive diff."""
    con = trinity_dbapi.connect(str(root / "changes"), autocommit=True, create=True)
    cur = con.cursor()
    cur.execute(f"CREATE NAMESPACE {NAMESPACE}")
    cur.execute(f"CREATE TABLE {NAMESPACE}.big (id INT8, v FLOAT8)")
    t0 = time.perf_counter()
    for chunk in big_chunks(rows):
        cur.ingest("big", chunk, namespace=NAMESPACE)
    build_seconds = time.perf_counter() - t0
    target = rows // 2 + 7
    v0 = con.lakehouse.latest_version()
    cur.execute(f"INSERT INTO {NAMESPACE}.big VALUES (?, ?)", [rows, -1.0])
    v1 = con.lakehouse.latest_version()
    cur.execute(f"UPDATE {NAMESPACE}.big SET v = -2.0 WHERE id = ?", [target])
    v2 = con.lakehouse.latest_version()
    expected = {
        "insert_1": [("insert", rows, -1.0)],
        "update_1": [("delete", target, target / 2), ("insert", target, -2.0)],
    }
    table = f"{NAMESPACE}.big"
    out: dict[str, Any] = {"rows": rows, "build_seconds": round(build_seconds, 2)}
    right = True
    for change, (a, b) in (("insert_1", (v0, v1)), ("update_1", (v1, v2))):
        tc_sql = f"SELECT change_type, id, v FROM system.table_changes('{table}', {a}, {b})"
        naive_sql = (
            f"SELECT 'insert' AS change_type, * FROM (SELECT id, v FROM {table} "
            f"FOR SYSTEM_VERSION AS OF {b} EXCEPT ALL SELECT id, v FROM {table} "
            f"FOR SYSTEM_VERSION AS OF {a}) "
            f"UNION ALL SELECT 'delete' AS change_type, * FROM (SELECT id, v FROM {table} "
            f"FOR SYSTEM_VERSION AS OF {a} EXCEPT ALL SELECT id, v FROM {table} "
            f"FOR SYSTEM_VERSION AS OF {b})"
        )
        figures = {}
        for name, sql in (("table_changes", tc_sql), ("naive_except_all", naive_sql)):
            results = []
            for _ in range(runs):
                result, got = measure(con, sql)
                results.append(result)
                same = change_set(got) == expected[change]
                right = right and same
                if not same:
                    print(f"  {change} {name}: got {change_set(got)}", flush=True)
            figures[name] = best(results)
        out[change] = figures
    out["versions"] = [v0, v1, v2]
    out["right"] = right
    con.close()
    return out


def bench_delta_cdf(root: Path, rows: int, runs: int) -> dict[str, Any] | None:
    """delta-rs' change data feed over the same two changes; None when not installed."""
    try:
        import deltalake
        from deltalake import DeltaTable, write_deltalake
    except ImportError:
        return None
    path = str(root / "delta-cdf")
    t0 = time.perf_counter()
    for i, chunk in enumerate(big_chunks(rows)):
        write_deltalake(
            path,
            chunk,
            mode="append",
            configuration={"delta.enableChangeDataFeed": "true"} if i == 0 else None,
        )
    build_seconds = time.perf_counter() - t0
    target = rows // 2 + 7
    write_deltalake(path, pa.table({"id": [rows], "v": [-1.0]}), mode="append")
    DeltaTable(path).update(predicate=f"id = {target}", updates={"v": "-2.0"})
    v2 = DeltaTable(path).version()
    expected = {
        "insert_1": [("insert", rows, -1.0)],
        "update_1": [("delete", target, target / 2), ("insert", target, -2.0)],
    }
    kinds = {"insert": "insert", "update_preimage": "delete", "update_postimage": "insert"}
    out: dict[str, Any] = {
        "rows": rows,
        "build_seconds": round(build_seconds, 2),
        "version": deltalake.__version__,
    }
    right = True
    for change, version in (("insert_1", v2 - 1), ("update_1", v2)):
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            got = (
                DeltaTable(path)
                .load_cdf(starting_version=version, ending_version=version)
                .read_all()
            )
            times.append(time.perf_counter() - t0)
            pairs = pa.table(got).select(["_change_type", "id", "v"]).to_pylist()
            rows_got = sorted((kinds[p["_change_type"]], p["id"], p["v"]) for p in pairs)
            right = right and rows_got == expected[change]
        out[change] = {
            "seconds": round(min(times), 4),
            "seconds_runs": [round(t, 4) for t in times],
        }
    out["right"] = right
    return out


# -- pyiceberg ---------------------------------------------------------------------


def files_under(path: Path) -> int:
    return sum(1 for p in path.rglob("*") if p.is_file())


def head(table: Any, ref: str | None = None) -> int:
    """The snapshot ID of a pyiceberg table's main (or ``ref``) head."""
    snapshot = table.current_snapshot() if ref is None else table.snapshot_by_name(ref)
    assert snapshot is not None, ref
    return int(snapshot.snapshot_id)


def bench_pyiceberg(root: Path, tables: int, runs: int) -> dict[str, Any] | None:
    """Per-table branches and tags on pyiceberg's SqlCatalog; None when not installed."""
    try:
        import pyiceberg
        from pyiceberg.catalog.sql import SqlCatalog
    except ImportError:
        return None
    base = root / "pyiceberg"
    warehouse = base / "warehouse"
    warehouse.mkdir(parents=True)
    catalog = SqlCatalog(
        "bench", uri=f"sqlite:///{base}/catalog.db", warehouse=f"file://{warehouse}"
    )
    catalog.create_namespace(NAMESPACE)
    row = pa.table({"id": pa.array([1], pa.int64()), "v": pa.array([0.5], pa.float64())})
    for i in range(tables):
        # A branch needs a snapshot to point at: one row each.
        catalog.create_table((NAMESPACE, f"t{i:05d}"), row.schema).append(row)

    def timed(call: Any) -> tuple[float, int]:
        files = files_under(warehouse)
        t0 = time.perf_counter()
        call()
        return time.perf_counter() - t0, files_under(warehouse) - files

    out: dict[str, Any] = {"version": pyiceberg.__version__, "tables": tables}
    for what in ("create_branch", "create_tag"):
        runs_seen = []
        for run in range(runs):

            def op(run: int = run, what: str = what) -> None:
                table = catalog.load_table((NAMESPACE, "t00000"))
                snapshot = head(table)
                getattr(table.manage_snapshots(), what)(snapshot, f"{what}_{run}").commit()

            runs_seen.append(timed(op))
        seconds, files = min(runs_seen)
        out[f"{what}_one_table"] = {
            "seconds": round(seconds, 4),
            "seconds_runs": [round(s, 4) for s, _ in runs_seen],
            "files_written": files,
        }

    def every_table() -> None:
        for i in range(tables):
            table = catalog.load_table((NAMESPACE, f"t{i:05d}"))
            snapshot = head(table)
            table.manage_snapshots().create_branch(snapshot, "all").commit()

    seconds, files = timed(every_table)
    out["create_branch_every_table"] = {
        "seconds": round(seconds, 4),
        "files_written": files,
        "per_table_seconds": round(seconds / tables, 5),
    }
    # Fast-forward of one table: append on a branch, then point main at its head.
    ff = []
    for run in range(runs):
        one = catalog.load_table((NAMESPACE, "t00000"))
        one.manage_snapshots().create_branch(head(one), f"ff{run}").commit()
        one = catalog.load_table((NAMESPACE, "t00000"))
        one.append(row, branch=f"ff{run}")

        def forward(run: int = run) -> None:
            table = catalog.load_table((NAMESPACE, "t00000"))
            target = head(table, f"ff{run}")
            table.manage_snapshots().set_current_snapshot(target).commit()

        ff.append(timed(forward))
    seconds, files = min(ff)
    out["fast_forward_one_table"] = {
        "seconds": round(seconds, 4),
        "seconds_runs": [round(s, 4) for s, _ in ff],
        "files_written": files,
        "rows_after": catalog.load_table((NAMESPACE, "t00000")).scan().to_arrow().num_rows,
    }
    return out


# -- main --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run every measurement, print one line each, then the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=None, help="lakehouse sizes for refs (10,10000)")
    parser.add_argument("--merge-tables", type=int, default=None, help="tables (10000)")
    parser.add_argument("--changed", default=None, help="tables a branch changed (1,100)")
    parser.add_argument("--rows", type=int, default=None, help="table_changes rows (10000000)")
    parser.add_argument("--runs", type=int, default=None, help="best of (3)")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="per request (20)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small figures")
    args = parser.parse_args(argv)
    quick = args.quick
    sizes = [int(s) for s in (args.tables or ("10,200" if quick else "10,10000")).split(",")]
    merge_tables = args.merge_tables or (200 if quick else 10_000)
    changed = [int(s) for s in (args.changed or ("1,5" if quick else "1,100")).split(",")]
    rows = args.rows or (100_000 if quick else 10_000_000)
    runs = args.runs or (1 if quick else 3)
    latency = args.latency_ms
    lat = f"latency_{latency:g}ms"

    results: dict[str, Any] = {
        "quick": quick,
        "runs": runs,
        "latency_ms": latency,
        "sizes": {"tables": sizes, "merge_tables": merge_tables, "changed": changed, "rows": rows},
    }
    with tempfile.TemporaryDirectory(prefix="trinity-bench-branches-") as tmp:
        root = Path(tmp)
        refs = {}
        for n in sizes:
            refs[str(n)] = r = bench_refs(root, n, runs, latency)
            for label in ("local", lat):
                for op in ("create_branch", "create_tag", "create_namespace"):
                    f = r[label][op]
                    print(
                        f"trinity {op.upper().replace('_', ' '):16} | {n:>6,} tables | "
                        f"{label:14} | {ms(f)} | {cost(f)}",
                        flush=True,
                    )
        iceberg = bench_pyiceberg(root, min(sizes), runs)
        if iceberg is None:
            print('pyiceberg | not installed: skipped (pip install -e ".[bench]")', flush=True)
        else:
            for op in ("create_branch_one_table", "create_tag_one_table", "fast_forward_one_table"):
                f = iceberg[op]
                print(
                    f"pyiceberg {iceberg['version']} {op:26} | {1000 * f['seconds']:8.1f} ms | "
                    f"{f['files_written']} files written",
                    flush=True,
                )
            every = iceberg["create_branch_every_table"]
            estimate = every["per_table_seconds"] * max(sizes)
            iceberg["create_branch_every_table"][f"estimate_{max(sizes)}_tables_seconds"] = round(
                estimate, 2
            )
            print(
                f"pyiceberg branch of every table | {iceberg['tables']} tables | "
                f"{1000 * every['seconds']:8.1f} ms, {every['files_written']} files | "
                f"{max(sizes):,} tables: ~{estimate:.1f} s (estimate, not atomic)",
                flush=True,
            )
        merge = bench_merge(root, merge_tables, changed, runs, latency)
        for label in ("local", lat):
            for key, f in merge[label].items():
                print(
                    f"trinity {'COMMIT on main' if key.startswith('commit') else 'MERGE BRANCH'} {key:16} of {merge_tables:,} tables | {label:14} | "
                    f"{ms(f)} | {cost(f)}"
                    + (f" | rows landed: {f['landed']}" if "landed" in f else ""),
                    flush=True,
                )
        changes = bench_table_changes(root, rows, runs)
        delta = bench_delta_cdf(root, rows, runs)
        for change in ("insert_1", "update_1"):
            f = changes[change]
            line = (
                f"{change} on {rows:,} rows | trinity table_changes {ms(f['table_changes'])} "
                f"| naive EXCEPT ALL {ms(f['naive_except_all'])}"
            )
            if delta is not None:
                line += f" | delta-rs {delta['version']} load_cdf {ms(delta[change])}"
            print(line, flush=True)
    largest, smallest = str(max(sizes)), str(min(sizes))
    checks: dict[str, bool] = {}
    for label in ("local", lat):
        for op in ("create_branch", "create_tag"):
            big, small = refs[largest][label][op], refs[smallest][label][op]
            checks[f"{op}_requests_o1_{label}"] = big["requests_max"] <= small["requests"] + 2
            checks[f"{op}_rounds_o1_{label}"] = big["rounds_max"] <= small["rounds"] + 2
    checks["merges_landed"] = all(
        f["landed"] for label in ("local", lat) for f in merge[label].values() if "landed" in f
    )
    checks["table_changes_right"] = changes["right"]
    if delta is not None:
        checks["delta_cdf_right"] = delta["right"]
    ratio = {
        change: round(
            changes[change]["naive_except_all"]["seconds"]
            / changes[change]["table_changes"]["seconds"],
            1,
        )
        for change in ("insert_1", "update_1")
    }
    results.update(
        {
            "refs": refs,
            "merge": merge,
            "table_changes": changes,
            "naive_over_table_changes": ratio,
            "pyiceberg": iceberg,
            "delta_cdf": delta,
            "checks": checks,
        }
    )
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
