"""Benchmark: the persisted B-epsilon tree at 1k, 10k, 100k and 1M keys.

For each size it builds a local lakehouse (order 128, default node size,
batched commits of real table keys and definition paths) and prints:

* tree depth and build time;
* storage reads for a cold point lookup (open from storage with empty caches,
  then one lookup: hint + lakehouse definition + one node per level) and for a
  warm one (average over random lookups once the cache is warm);
* files and bytes written per single-key commit, averaged over 1,000 commits,
  with commit latency (mean, p50, p99).

Baseline, run side by side: the flat layout of the upstream drafts, a single
root node holding every key in one Arrow IPC file rewritten on each commit.

Targets (issue 2): cold lookup reads <= depth + 2; warm lookup reads <= 1;
bytes per single-key commit at 1M keys <= 2x the figure at 1k keys; the
1M-key build under 2 minutes on 2 cores. The last line printed is a JSON
object with every figure.

Run: ``python benchmarks/tree.py [--sizes 1000,10000,100000,1000000] [--commits 1000]``
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow as pa

from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.keys import table_key
from trinity_dbapi.format.paths import table_definition_path
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.storage import open_storage

BATCH = 10_000


def keys_for(n: int, limits) -> list[tuple[str, str]]:
    """``n`` table keys spread over namespaces of 1,000 tables, with definition paths."""
    out = []
    for i in range(n):
        ns, table = f"ns{i // 1000:04d}", f"table{i % 1000:04d}"
        out.append((table_key(ns, table, limits), table_definition_path(ns, table)))
    random.Random(n).shuffle(out)  # commits arrive in no particular key order
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_tree(n: int, commits: int, root: Path) -> dict[str, float]:
    uri = str(root / f"tree-{n}")
    definition = LakehouseDefinition(name="bench")
    lake = Lakehouse.create(uri, definition)
    items = keys_for(n, definition.key_limits)

    start = time.perf_counter()
    snap = lake.snapshot()
    for i in range(0, n, BATCH):
        snap = lake.commit(snap, dict(items[i : i + BATCH]))
    build_seconds = time.perf_counter() - start

    # Single-key commits, each a new table (the first one also flushes the
    # last batch of the build, as it would in real use).
    before = lake.storage.stats.snapshot()
    latencies = []
    for i in range(commits):
        k = table_key(f"zz{i % 7}", f"new{i:05d}", definition.key_limits)
        t0 = time.perf_counter()
        snap = lake.commit(snap, {k: table_definition_path("zz", f"new{i:05d}")})
        latencies.append(time.perf_counter() - t0)
    used = lake.storage.stats.since(before)
    depth = snap.depth()

    # Cold: what a new process pays to open the lakehouse and look one key up
    # (hint, root, lakehouse definition, then one node per level below the root).
    rnd = random.Random(7)
    key, value = items[rnd.randrange(n)]
    cold = open_storage(uri)
    reader = Lakehouse.open(cold)
    assert reader.snapshot(reader.opened_version).get(key) == value
    cold_reads, cold_exists = cold.stats.reads, cold.stats.exists

    # Warm: random lookups on one snapshot once the caches are warm.
    warm_snap = reader.snapshot(reader.opened_version)
    for _ in range(2000):
        warm_snap.get(items[rnd.randrange(n)][0])
    before_warm = cold.stats.snapshot()
    probes = 1000
    for _ in range(probes):
        k, v = items[rnd.randrange(n)]
        assert warm_snap.get(k) == v
    warm_reads = cold.stats.since(before_warm).reads / probes
    return {
        "keys": n,
        "depth": depth,
        "build_seconds": round(build_seconds, 2),
        "cold_lookup_reads": cold_reads,
        "cold_lookup_exists_probes": cold_exists,
        "warm_lookup_reads": round(warm_reads, 3),
        "files_per_commit": round((used.creates + used.writes) / commits, 2),
        "bytes_per_commit": round(used.bytes_written / commits),
        "commit_ms_mean": round(1000 * statistics.fmean(latencies), 2),
        "commit_ms_p50": round(1000 * percentile(latencies, 0.5), 2),
        "commit_ms_p99": round(1000 * percentile(latencies, 0.99), 2),
    }


def bench_flat(n: int, commits: int, root: Path) -> dict[str, float]:
    """The upstream drafts' layout: every commit rewrites one file with every key."""
    definition = LakehouseDefinition(name="bench")
    storage = open_storage(str(root / f"flat-{n}"))
    state = dict(keys_for(n, definition.key_limits))
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    latencies = []
    before = storage.stats.snapshot()
    for i in range(commits):
        t0 = time.perf_counter()
        state[table_key(f"zz{i % 7}", f"new{i:05d}", definition.key_limits)] = "x"
        keys = sorted(state)
        table = pa.table({"key": keys, "value": [state[k] for k in keys]})
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema, options=options) as writer:
            writer.write_table(table)
        storage.create_exclusive(f"_flat_{i}_{uuid.uuid4()}.arrow", sink.getvalue().to_pybytes())
        latencies.append(time.perf_counter() - t0)
    used = storage.stats.since(before)
    return {
        "keys": n,
        "bytes_per_commit": round(used.bytes_written / commits),
        "commit_ms_mean": round(1000 * statistics.fmean(latencies), 2),
        "commits_measured": commits,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--commits", type=int, default=1000)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[str, dict] = {"trinity_tree": {}, "baseline_flat_root": {}}
    with tempfile.TemporaryDirectory(prefix="trinity-bench-") as tmp:
        root = Path(tmp)
        for n in sizes:
            tree = bench_tree(n, args.commits, root)
            flat_commits = max(5, min(args.commits, 10_000_000 // n))
            flat = bench_flat(n, flat_commits, root)
            results["trinity_tree"][str(n)] = tree
            results["baseline_flat_root"][str(n)] = flat
            print(
                f"{n:>9,} keys | depth {tree['depth']} | build {tree['build_seconds']:7.2f}s | "
                f"cold reads {tree['cold_lookup_reads']} | warm reads {tree['warm_lookup_reads']} | "
                f"per commit: {tree['files_per_commit']} files, {tree['bytes_per_commit']:>9,} B, "
                f"p50 {tree['commit_ms_p50']} ms, p99 {tree['commit_ms_p99']} ms | "
                f"flat baseline: {flat['bytes_per_commit']:>11,} B, {flat['commit_ms_mean']} ms",
                flush=True,
            )
    tree_figs = results["trinity_tree"]
    checks = {
        "cold_reads_within_depth_plus_2": all(
            f["cold_lookup_reads"] <= f["depth"] + 2 for f in tree_figs.values()
        ),
        "warm_reads_at_most_1": all(f["warm_lookup_reads"] <= 1 for f in tree_figs.values()),
    }
    if "1000" in tree_figs and "1000000" in tree_figs:
        ratio = tree_figs["1000000"]["bytes_per_commit"] / tree_figs["1000"]["bytes_per_commit"]
        checks["bytes_ratio_1m_vs_1k"] = round(ratio, 2)
        checks["bytes_ratio_within_2x"] = ratio <= 2
        checks["build_1m_under_120s"] = tree_figs["1000000"]["build_seconds"] < 120
    results["checks"] = checks
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
