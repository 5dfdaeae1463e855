"""Benchmark: commit throughput, concurrent writers and timestamp time travel.

Everything runs on local disk (a temporary directory), side by side in one run:

* single writer: ``--commits`` transactions (default 1,000), each
  ``begin`` + ``create_namespace(f"ns{i}")`` + ``commit`` on a lakehouse with
  the default definition; throughput (commits/s) and per-commit latency
  (mean, p50, p99), plus storage operations per commit;
* baseline, the peer catalog: pyiceberg's ``SqlCatalog`` on a SQLite file
  doing the same number of ``create_namespace(f"ns{i}")`` calls, timed the
  same way (skipped with a note when pyiceberg is not installed: install it
  with ``pip install -e ".[bench]"``);
* 4 writers on distinct objects: 4 processes (spawn) released together by a
  barrier, each committing ``--writer-commits`` namespaces (default 250) of its
  own to the same lakehouse with ``RetryPolicy(max_attempts=500)``; total
  throughput, retries per commit (the sum of ``txn.attempts - 1`` over all
  commits, divided by the commits) and lost commits (a commit that raised, or
  a version or namespace missing afterwards: the latest version must be
  ``4 * writer_commits`` and every namespace must be listed);
* timestamp time travel at 10, 1,000 and 10,000 versions (``--sizes``):
  lakehouses built with cheap one-key commits (``Lakehouse.commit`` of one
  namespace key), each version's ``created_at_millis`` recorded; then for 50
  lookups (random timestamps between the first and the last version's time,
  plus one exactly equal to a version's time) with empty caches,
  ``snapshot_at(ts)`` is checked against the newest version created at or
  before ``ts`` and its storage reads are counted: all reads (the
  latest-version hint plus root node files) and root node file reads alone.
  ``V`` is the number of versions (root files 0 .. V-1).

Targets (issue): zero lost commits; a timestamp lookup takes at most
``2*log2(V) + 2`` reads (checked on all reads, hint included, so the root
reads are within it too); single-writer throughput at least that of the
pyiceberg baseline. Human-readable lines come first; the last line printed is
one JSON object with every figure and a ``checks`` dict of booleans.

Run: ``python benchmarks/commits.py [--commits 1000] [--writer-commits 250]
[--sizes 10,1000,10000] [--lookups 50] [--quick]``
(``--quick``: 100 commits, 25 per writer, sizes 10 and 1,000: a smoke run).
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import multiprocessing as mp
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trinity_dbapi.errors import CommitConflictError, RetriesExhaustedError
from trinity_dbapi.format.keys import namespace_key
from trinity_dbapi.format.paths import (
    LATEST_HINT_FILE,
    namespace_definition_path,
    root_node_version,
)
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.transaction import RetryPolicy

WRITERS = 4
WRITER_RETRY = RetryPolicy(max_attempts=500)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank, as in benchmarks/tree.py)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timing(latencies: list[float], elapsed: float) -> dict[str, float]:
    """Throughput and latency figures for one series of commits."""
    return {
        "commits": len(latencies),
        "seconds": round(elapsed, 3),
        "commits_per_second": round(len(latencies) / elapsed, 1),
        "commit_ms_mean": round(1000 * statistics.fmean(latencies), 3),
        "commit_ms_p50": round(1000 * percentile(latencies, 0.5), 3),
        "commit_ms_p99": round(1000 * percentile(latencies, 0.99), 3),
    }


# -- single writer ------------------------------------------------------------------


def bench_single_writer(n: int, root: Path) -> dict[str, Any]:
    """``n`` one-namespace transactions on a fresh local lakehouse."""
    lake = Lakehouse.create(str(root / "single"))
    before = lake.storage.stats.snapshot()
    latencies = []
    start = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        with lake.begin() as txn:
            txn.create_namespace(f"ns{i}")
        latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - start
    used = lake.storage.stats.since(before)
    figures = timing(latencies, elapsed)
    figures.update(
        {
            "reads_per_commit": round(used.reads / n, 2),
            "exists_per_commit": round(used.exists / n, 2),
            "files_created_per_commit": round(used.creates / n, 2),
            "files_overwritten_per_commit": round(used.writes / n, 2),
            "bytes_written_per_commit": round(used.bytes_written / n),
            "latest_version": lake.latest_version(),
        }
    )
    return figures


def bench_pyiceberg(n: int, root: Path) -> dict[str, Any] | None:
    """The same ``n`` namespace creations on pyiceberg's SqlCatalog over SQLite.

    Returns None when pyiceberg (with SQLAlchemy) is not installed.
    """
    try:
        import pyiceberg
        from pyiceberg.catalog.sql import SqlCatalog
    except ImportError:
        return None
    base = root / "pyiceberg"
    (base / "warehouse").mkdir(parents=True)
    catalog = SqlCatalog(
        "bench", uri=f"sqlite:///{base}/catalog.db", warehouse=f"file://{base}/warehouse"
    )
    latencies = []
    start = time.perf_counter()
    for i in range(n):
        t0 = time.perf_counter()
        catalog.create_namespace(f"ns{i}")
        latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - start
    figures: dict[str, Any] = timing(latencies, elapsed)
    figures["namespaces_listed"] = len(catalog.list_namespaces())
    figures["pyiceberg_version"] = pyiceberg.__version__
    return figures


# -- concurrent writers ---------------------------------------------------------------


def _writer(uri: str, writer: int, commits: int, barrier: Any, results: Any) -> None:
    """One writer process: ``commits`` namespaces of its own, after the barrier."""
    lake = Lakehouse.open(uri)
    retries = lost = 0
    latencies = []
    errors: list[str] = []
    barrier.wait()
    for i in range(commits):
        t0 = time.perf_counter()
        txn = lake.begin(retry=WRITER_RETRY)
        txn.create_namespace(f"w{writer}_ns{i}")
        try:
            txn.commit()
        except (RetriesExhaustedError, CommitConflictError) as exc:
            lost += 1
            errors.append(f"{type(exc).__name__}: {exc}")
        retries += txn.attempts - 1
        latencies.append(time.perf_counter() - t0)
    results.put(
        {
            "writer": writer,
            "retries": retries,
            "lost": lost,
            "errors": errors[:3],
            "latencies": latencies,
        }
    )


def bench_writers(per_writer: int, root: Path) -> dict[str, Any]:
    """``WRITERS`` processes committing distinct namespaces to one lakehouse."""
    uri = str(root / "writers")
    Lakehouse.create(uri)
    created = Lakehouse.open(uri).latest_version()
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(WRITERS + 1)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(uri, w, per_writer, barrier, results))
        for w in range(WRITERS)
    ]
    for proc in procs:
        proc.start()
    barrier.wait(timeout=120)  # every writer has opened the lakehouse
    start = time.perf_counter()
    outcomes = [results.get(timeout=600) for _ in procs]
    elapsed = time.perf_counter() - start
    for proc in procs:
        proc.join(timeout=60)
    total = WRITERS * per_writer
    lake = Lakehouse.open(uri)
    latest = lake.latest_version()
    with lake.begin(read_only=True) as txn:
        listed = set(txn.list_namespaces())
    expected = {f"w{w}_ns{i}" for w in range(WRITERS) for i in range(per_writer)}
    raised = sum(o["lost"] for o in outcomes)
    missing = len(expected - listed)
    missing_versions = max(0, created + total - latest)
    latencies = [x for o in outcomes for x in o["latencies"]]
    figures: dict[str, Any] = timing(latencies, elapsed)
    figures.update(
        {
            "writers": WRITERS,
            "commits_per_writer": per_writer,
            "retries_total": sum(o["retries"] for o in outcomes),
            "retries_per_commit": round(sum(o["retries"] for o in outcomes) / total, 3),
            "max_attempts": WRITER_RETRY.max_attempts,
            "commits_raised": raised,
            "latest_version": latest,
            "expected_latest_version": created + total,
            "namespaces_missing": missing,
            "lost_commits": max(raised, missing, missing_versions),
            "errors": [e for o in outcomes for e in o["errors"]][:3],
            "exit_codes": [proc.exitcode for proc in procs],
        }
    )
    return figures


# -- timestamp time travel --------------------------------------------------------------


def build_versions(versions: int, uri: str) -> tuple[Lakehouse, list[int]]:
    """A lakehouse with ``versions`` root versions (0 .. versions - 1) and their times."""
    lake = Lakehouse.create(uri)
    limits = lake.definition.key_limits
    snap = lake.snapshot()
    times = [snap.created_at_millis]
    for i in range(1, versions):
        name = f"tt{i % 64}"
        snap = lake.commit(snap, {namespace_key(name, limits): namespace_definition_path(name)})
        times.append(snap.created_at_millis)
    assert snap.version == versions - 1
    return lake, times


def count_reads(lake: Lakehouse) -> list[str]:
    """Record the path of every storage read that reaches the backend (not the cache)."""
    paths: list[str] = []
    storage = lake.storage
    original: Callable[[str], bytes] = storage._read

    def recording_read(path: str) -> bytes:
        paths.append(path)
        return original(path)

    storage._read = recording_read  # type: ignore[method-assign]
    return paths


def bench_time_travel(versions: int, lookups: int, root: Path) -> dict[str, Any]:
    """Reads per cold ``snapshot_at`` lookup on a lakehouse of ``versions`` versions."""
    t0 = time.perf_counter()
    _, times = build_versions(versions, str(root / f"tt-{versions}"))
    build_seconds = time.perf_counter() - t0
    lake = Lakehouse.open(str(root / f"tt-{versions}"))
    paths = count_reads(lake)
    rnd = random.Random(versions)
    targets = [rnd.randint(times[0], times[-1]) for _ in range(lookups - 1)]
    targets.append(times[rnd.randrange(versions)])  # exactly a version's time
    totals, roots, hints = [], [], []
    wrong = 0
    for ts in targets:
        lake.storage.clear_cache()
        lake.nodes.clear_cache()
        before = lake.storage.stats.snapshot()
        del paths[:]
        got = lake.snapshot_at(ts).version
        used = lake.storage.stats.since(before)
        expected = bisect.bisect_right(times, ts) - 1
        wrong += got != expected
        totals.append(used.reads)
        roots.append(sum(root_node_version(p) is not None for p in paths))
        hints.append(sum(p == LATEST_HINT_FILE for p in paths))
    bound = 2 * math.log2(versions) + 2
    return {
        "versions": versions,
        "build_seconds": round(build_seconds, 2),
        "lookups": lookups,
        "wrong_versions": wrong,
        "reads_max": max(totals),
        "reads_mean": round(statistics.fmean(totals), 2),
        "root_reads_max": max(roots),
        "root_reads_mean": round(statistics.fmean(roots), 2),
        "hint_reads_per_lookup": max(hints),
        "bound_2log2v_plus_2": round(bound, 2),
        "within_bound": max(totals) <= bound and wrong == 0,
    }


# -- main ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Run every measurement, print one line each, then the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=None, help="single writer (1000)")
    parser.add_argument("--writer-commits", type=int, default=None, help="per writer (250)")
    parser.add_argument("--sizes", default=None, help="versions (10,1000,10000)")
    parser.add_argument("--lookups", type=int, default=50, help="per size")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small figures")
    args = parser.parse_args(argv)
    commits = args.commits or (100 if args.quick else 1000)
    per_writer = args.writer_commits or (25 if args.quick else 250)
    sizes = [
        int(s) for s in (args.sizes or ("10,1000" if args.quick else "10,1000,10000")).split(",")
    ]

    results: dict[str, Any] = {"quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="trinity-bench-commits-") as tmp:
        root = Path(tmp)
        single = bench_single_writer(commits, root)
        print(
            f"trinity single writer      | {commits} commits | "
            f"{single['commits_per_second']:8.1f} commits/s | p50 {single['commit_ms_p50']} ms, "
            f"p99 {single['commit_ms_p99']} ms | per commit: {single['files_created_per_commit']} "
            f"creates, {single['files_overwritten_per_commit']} overwrites, "
            f"{single['reads_per_commit']} reads, {single['bytes_written_per_commit']:,} B",
            flush=True,
        )
        iceberg = bench_pyiceberg(commits, root)
        if iceberg is None:
            print(
                'pyiceberg SqlCatalog       | not installed: skipped (pip install -e ".[bench]")',
                flush=True,
            )
        else:
            print(
                f"pyiceberg SqlCatalog (SQLite) {iceberg['pyiceberg_version']} | {commits} "
                f"namespaces | {iceberg['commits_per_second']:8.1f} commits/s | "
                f"p50 {iceberg['commit_ms_p50']} ms, p99 {iceberg['commit_ms_p99']} ms",
                flush=True,
            )
        single["vs_pyiceberg_throughput_ratio"] = (
            None
            if iceberg is None
            else round(single["commits_per_second"] / iceberg["commits_per_second"], 3)
        )
        writers = bench_writers(per_writer, root)
        print(
            f"trinity {WRITERS} writers, distinct | {WRITERS}x{per_writer} commits | "
            f"{writers['commits_per_second']:8.1f} commits/s total | "
            f"{writers['retries_per_commit']} retries/commit | p50 {writers['commit_ms_p50']} ms, "
            f"p99 {writers['commit_ms_p99']} ms | lost commits {writers['lost_commits']} "
            f"(latest version {writers['latest_version']}/{writers['expected_latest_version']}, "
            f"{writers['namespaces_missing']} namespaces missing)",
            flush=True,
        )
        travel: dict[str, Any] = {}
        for versions in sizes:
            tt = bench_time_travel(versions, args.lookups, root)
            travel[str(versions)] = tt
            print(
                f"time travel {versions:>6,} versions | build {tt['build_seconds']:6.2f}s | "
                f"snapshot_at reads per lookup: max {tt['reads_max']}, mean {tt['reads_mean']} "
                f"(root files: max {tt['root_reads_max']}, mean {tt['root_reads_mean']}; "
                f"+{tt['hint_reads_per_lookup']} hint) | bound 2*log2(V)+2 = "
                f"{tt['bound_2log2v_plus_2']} | wrong versions {tt['wrong_versions']}",
                flush=True,
            )
    results["trinity"] = {"single_writer": single, "writers": writers}
    results["pyiceberg_sqlcatalog"] = iceberg
    results["time_travel"] = travel
    results["checks"] = {
        "zero_lost_commits": writers["lost_commits"] == 0
        and all(code == 0 for code in writers["exit_codes"]),
        "timestamp_reads_within_bound": all(t["within_bound"] for t in travel.values()),
        "single_writer_at_least_baseline": iceberg is not None
        and single["commits_per_second"] >= iceberg["commits_per_second"],
    }
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
