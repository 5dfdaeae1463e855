"""Benchmark: trinity next to delta-rs and pyiceberg, same run, same data, local disk.

Each system is driven through its usual Python API: trinity through the PEP 249
driver (``trinity_dbapi.connect``, autocommit), delta-rs through ``deltalake``
(``write_deltalake``, ``DeltaTable``), pyiceberg through ``SqlCatalog`` on a
SQLite file with a ``file://`` warehouse. Every figure is wall-clock seconds
(``perf_counter``) measured in this one process; the data is built once with
NumPy and handed to all three as the same Arrow table. The rows:

1. **appends**: ``--appends`` (default 1,000) single-row commits of ``(id
   INT8, v FLOAT8)``: trinity an autocommit ``INSERT INTO t VALUES (?, ?)``,
   delta-rs ``write_deltalake(path, row, mode="append")``, pyiceberg
   ``table.append(row)``. Figure: commits per second (higher is better).
2. **scan after appends**: the whole table read into Arrow (trinity ``SELECT *``
   + ``fetch_arrow_table``, delta-rs ``DeltaTable(path).to_pyarrow_table()``,
   pyiceberg ``table.scan().to_arrow()``, each opening the table afresh), best
   of 3; count, ``sum(id)`` and ``sum(v)`` must equal the rows appended.
3. **compaction**: trinity ``CALL system.rewrite_data_files('t')``, delta-rs
   ``DeltaTable.optimize.compact()``. pyiceberg 0.12 has no data-file rewrite
   (its ``table.maintenance`` offers only ``expire_snapshots``), so its nearest
   equivalent is timed: ``table.overwrite(table.scan().to_arrow())``, one
   snapshot replacing every small file with one. The data files left are
   counted (trinity ``system.data_files``, delta-rs ``DeltaTable.files()``,
   pyiceberg ``table.inspect.files()``).
4. **scan after compaction**: as 2, on the compacted tables, best of 3.
5. **MERGE**: ``--merge-target`` rows (default 1,000,000; ``v = id / 2``)
   loaded with each system's bulk write (not timed), then ``--merge-target //
   10`` source rows, half of them updates of every 20th target id (``v =
   -id``) and half new ids: trinity ``MERGE INTO t USING s ON t.id = s.id WHEN
   MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *`` (the
   source ingested into a table beforehand, not timed: the peers take it as an
   in-memory Arrow table), delta-rs ``merge(...).when_matched_update_all()
   .when_not_matched_insert_all().execute()``, pyiceberg ``table.upsert(source,
   join_cols=["id"])``. Five rounds per system (``--merge-runs``), each on a
   freshly loaded target, one system's rounds one after another (as a
   pipeline merging batch after batch would run them, and as rows 2 and 4
   repeat their scans); the figure is each system's median, and its first
   round, which also pays for memory the process has not touched yet, is
   reported as ``merge_first``. Every merged table's count, ``sum(id)`` and
   ``sum(v)`` must equal the expected ones.
6. **one-day range query**: ``--range-rows`` rows (default 10,000,000) of
   ``(ts TIMESTAMP, id INT8, v FLOAT8)`` spread evenly over 100 days, loaded
   once (load time reported, not a target) into trinity ``PARTITIONED BY
   (day(ts))``, delta-rs partitioned by a generated column ``day DATE``
   (``delta.generationExpression = 'CAST(ts AS DATE)'``; delta has no
   partition transforms, and delta-rs does not derive a partition filter from
   one on ``ts``, so its query filters on both ``ts`` and ``day``, as a delta
   user would), and pyiceberg with a ``DayTransform`` partition spec. The
   query reads the rows of one day into Arrow: trinity ``SELECT * ... WHERE ts
   >= ? AND ts < ?``, delta-rs ``to_pyarrow_table(filters=...)``, pyiceberg
   ``scan(row_filter=...).to_arrow()``; best of 3; the three results must
   agree with the expected count and sums.

Target (issue 19): trinity ahead of both peers on every row (``checks``
``trinity_faster_*``); the other checks are correctness and must always hold.
Human-readable lines come first; the last line printed is one JSON object with
every figure, the peers' versions and a ``checks`` dict of booleans.

Run: ``pip install -e ".[bench]" && python benchmarks/peers.py [--appends N]
[--merge-target N] [--range-rows N] [--quick]`` (``--quick``: 50 appends, a
20,000-row merge target merged twice and 200,000 range rows: a smoke run).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import deltalake
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyiceberg
from deltalake import DeltaTable, write_deltalake
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform
from pyiceberg.types import DoubleType, LongType, NestedField, TimestampType

import trinity_dbapi

SYSTEMS = ("trinity", "delta_rs", "pyiceberg")
DAYS = 100
START = dt.datetime(2024, 1, 1)
QUERY_DAY = 42
APPEND_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.float64())])
RANGE_SCHEMA = pa.schema([("ts", pa.timestamp("us")), ("id", pa.int64()), ("v", pa.float64())])

Summary = tuple[int, int, float]


def summary(table: pa.Table) -> Summary:
    """Count, ``sum(id)`` and ``sum(v)``: what every result is checked by (exact: v is k/2)."""
    if table.num_rows == 0:
        return (0, 0, 0.0)
    return (
        table.num_rows,
        int(pc.sum(table["id"]).as_py()),
        float(pc.sum(table["v"]).as_py()),
    )


def expected(ids: np.ndarray, values: np.ndarray) -> Summary:
    """The summary the rows ``ids`` / ``values`` must give."""
    return (len(ids), int(ids.sum()), float(values.sum()))


def best(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of ``runs`` calls of ``work`` and the last result."""
    fastest, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest, result


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    """One call of ``work``: its seconds and result."""
    return best(1, work)


# -- the three systems -----------------------------------------------------------------


class Trinity:
    """trinity through the PEP 249 driver, autocommit, on a local lakehouse."""

    def __init__(self, root: Path) -> None:
        self.conn = trinity_dbapi.connect(str(root / "lake"), create=True, autocommit=True)
        self.cur = self.conn.cursor()

    def create(self, name: str, columns: str, partitioned: str = "") -> None:
        suffix = f" PARTITIONED BY ({partitioned})" if partitioned else ""
        self.cur.execute(f"CREATE TABLE {name} ({columns}){suffix}")

    def append_row(self, name: str, i: int, v: float) -> None:
        self.cur.execute(f"INSERT INTO {name} VALUES (?, ?)", [i, v])

    def load(self, name: str, data: pa.Table) -> None:
        self.cur.ingest(name, data)

    def scan(self, name: str) -> pa.Table:
        self.cur.execute(f"SELECT * FROM {name}")
        return self.cur.fetch_arrow_table()

    def compact(self, name: str) -> None:
        self.cur.execute("CALL system.rewrite_data_files(?)", [name])
        self.cur.fetchall()

    def files(self, name: str) -> int:
        self.cur.execute("SELECT count(*) FROM system.data_files WHERE table_name = ?", [name])
        return int(self.cur.fetchone()[0])

    def merge(self, target: str, source: str) -> None:
        self.cur.execute(
            f"MERGE INTO {target} AS t USING {source} AS s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
        )

    def day(self, name: str, low: dt.datetime, high: dt.datetime) -> pa.Table:
        self.cur.execute(f"SELECT * FROM {name} WHERE ts >= ? AND ts < ?", [low, high])
        return self.cur.fetch_arrow_table()


class Delta:
    """delta-rs (``deltalake``): one directory per table."""

    def __init__(self, root: Path) -> None:
        self.root = root / "delta"
        self.root.mkdir()

    def path(self, name: str) -> str:
        return str(self.root / name)

    def append_row(self, name: str, i: int, v: float) -> None:
        row = pa.table({"id": [i], "v": [v]}, schema=APPEND_SCHEMA)
        write_deltalake(self.path(name), row, mode="append")

    def load(self, name: str, data: pa.Table) -> None:
        write_deltalake(self.path(name), data, mode="append")

    def scan(self, name: str) -> pa.Table:
        return DeltaTable(self.path(name)).to_pyarrow_table()

    def compact(self, name: str) -> None:
        DeltaTable(self.path(name)).optimize.compact()

    def files(self, name: str) -> int:
        return len(DeltaTable(self.path(name)).file_uris())

    def merge(self, target: str, source: pa.Table) -> None:
        (
            DeltaTable(self.path(target))
            .merge(source=source, predicate="t.id = s.id", source_alias="s", target_alias="t")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute()
        )

    def create_by_day(self, name: str) -> None:
        """``ts``, ``id``, ``v`` plus the generated partition column ``day``."""
        from deltalake import Field
        from deltalake import Schema as DeltaSchema
        from deltalake.schema import PrimitiveType

        schema = DeltaSchema(
            [
                Field("ts", PrimitiveType("timestamp_ntz"), nullable=True),
                Field("id", PrimitiveType("long"), nullable=True),
                Field("v", PrimitiveType("double"), nullable=True),
                Field(
                    "day",
                    PrimitiveType("date"),
                    nullable=True,
                    metadata={"delta.generationExpression": "CAST(ts AS DATE)"},
                ),
            ]
        )
        DeltaTable.create(self.path(name), schema, partition_by=["day"])

    def day(self, name: str, low: dt.datetime, high: dt.datetime) -> pa.Table:
        filters = [
            ("day", ">=", low.date()),
            ("day", "<", high.date()),
            ("ts", ">=", low),
            ("ts", "<", high),
        ]
        return DeltaTable(self.path(name)).to_pyarrow_table(
            columns=["ts", "id", "v"], filters=filters
        )


class Iceberg:
    """pyiceberg's ``SqlCatalog`` on SQLite with a local ``file://`` warehouse."""

    def __init__(self, root: Path) -> None:
        base = root / "iceberg"
        (base / "warehouse").mkdir(parents=True)
        self.catalog = SqlCatalog(
            "bench", uri=f"sqlite:///{base}/catalog.db", warehouse=f"file://{base}/warehouse"
        )
        self.catalog.create_namespace("bench")

    def table(self, name: str) -> Any:
        return self.catalog.load_table(f"bench.{name}")

    def create(self, name: str, schema: pa.Schema) -> None:
        self.catalog.create_table(f"bench.{name}", schema=schema)

    def append_row(self, name: str, i: int, v: float) -> None:
        row = pa.table({"id": [i], "v": [v]}, schema=APPEND_SCHEMA)
        self.table(name).append(row)

    def load(self, name: str, data: pa.Table) -> None:
        self.table(name).append(data)

    def scan(self, name: str) -> pa.Table:
        return self.table(name).scan().to_arrow()

    def compact(self, name: str) -> None:
        table = self.table(name)
        table.overwrite(table.scan().to_arrow())

    def files(self, name: str) -> int:
        return int(self.table(name).inspect.files().num_rows)

    def merge(self, target: str, source: pa.Table) -> None:
        self.table(target).upsert(source, join_cols=["id"])

    def create_by_day(self, name: str) -> None:
        schema = Schema(
            NestedField(1, "ts", TimestampType(), required=False),
            NestedField(2, "id", LongType(), required=False),
            NestedField(3, "v", DoubleType(), required=False),
        )
        spec = PartitionSpec(
            PartitionField(source_id=1, field_id=1000, transform=DayTransform(), name="ts_day")
        )
        self.catalog.create_table(f"bench.{name}", schema=schema, partition_spec=spec)

    def day(self, name: str, low: dt.datetime, high: dt.datetime) -> pa.Table:
        row_filter = And(
            GreaterThanOrEqual("ts", low.isoformat()), LessThan("ts", high.isoformat())
        )
        return self.table(name).scan(row_filter=row_filter).to_arrow()


# -- the rows --------------------------------------------------------------------------


def run_appends(systems: dict[str, Any], n: int) -> dict[str, Any]:
    """Rows 1 to 4: appends, scan, compaction, scan."""
    ids = np.arange(n, dtype="int64")
    want = expected(ids, ids / 2)
    systems["trinity"].create("appends", "id INT8, v FLOAT8")
    systems["delta_rs"].load("appends", APPEND_SCHEMA.empty_table())
    systems["pyiceberg"].create("appends", APPEND_SCHEMA)
    out: dict[str, Any] = {"appends": {}, "scan": {}, "compaction": {}, "scan_compacted": {}}
    checks: dict[str, bool] = {}
    for name, system in systems.items():
        start = time.perf_counter()
        for i in range(n):
            system.append_row("appends", i, i / 2)
        seconds = time.perf_counter() - start
        out["appends"][name] = {"seconds": round(seconds, 3), "commits_per_second": n / seconds}
        out["scan"][name], got = best(3, lambda s=system: summary(s.scan("appends")))
        checks[f"scan_{name}_right"] = got == want
        files_before = system.files("appends")
        out["compaction"][name], _ = timed(lambda s=system: s.compact("appends"))
        out["compaction"][f"{name}_files"] = [files_before, system.files("appends")]
        out["scan_compacted"][name], got = best(3, lambda s=system: summary(s.scan("appends")))
        checks[f"scan_compacted_{name}_right"] = got == want
        checks[f"compaction_{name}_fewer_files"] = (
            out["compaction"][f"{name}_files"][1] < files_before
        )
    return {"figures": out, "checks": checks}


def run_merge(systems: dict[str, Any], target_rows: int, runs: int = 5) -> dict[str, Any]:
    """Row 5: MERGE of ``target_rows // 10`` source rows, half updates, half inserts.

    ``runs`` rounds per system, each on a freshly loaded target, one
    system's rounds one after another; the figure is each system's median,
    and its first run is reported too (``merge_first``). Interleaving the
    systems instead made each round start in memory another system had just
    churned (pyiceberg's upsert runs for seconds), which on a VM whose host
    backs guest memory lazily measured page faults more than the MERGE.
    """
    ids = np.arange(target_rows, dtype="int64")
    target = pa.table({"id": ids, "v": ids / 2}, schema=APPEND_SCHEMA)
    half = target_rows // 20
    updated = ids[::20][:half]
    new = np.arange(target_rows, target_rows + half, dtype="int64")
    source_ids = np.concatenate([updated, new])
    source_v = np.concatenate([-updated / 2, new / 2])
    source = pa.table({"id": source_ids, "v": source_v}, schema=APPEND_SCHEMA)
    final_v = ids / 2
    final_v[::20][:half] = -updated / 2
    want = expected(np.concatenate([ids, new]), np.concatenate([final_v, new / 2]))
    trinity = systems["trinity"]
    trinity.create("merge_source", "id INT8, v FLOAT8")
    trinity.load("merge_source", source)
    seconds: dict[str, list[float]] = {name: [] for name in systems}
    checks: dict[str, bool] = {}
    for name, system in systems.items():
        for run in range(runs):
            name_of_target = f"merge_target_{run}"
            if name == "trinity":
                trinity.create(name_of_target, "id INT8, v FLOAT8")
            elif name == "pyiceberg":
                system.create(name_of_target, APPEND_SCHEMA)
            system.load(name_of_target, target)
            arg = "merge_source" if name == "trinity" else source
            took, _ = timed(lambda s=system, a=arg, t=name_of_target: s.merge(t, a))
            seconds[name].append(took)
            right = summary(system.scan(name_of_target)) == want
            checks[f"merge_{name}_right"] = checks.get(f"merge_{name}_right", True) and right
    return {
        "figures": {
            "merge": {name: statistics.median(values) for name, values in seconds.items()},
            "merge_first": {name: values[0] for name, values in seconds.items()},
            "merge_runs": seconds,
        },
        "checks": checks,
    }


def run_range(systems: dict[str, Any], rows: int) -> dict[str, Any]:
    """Row 6: one day out of ``DAYS``, on tables partitioned by the day of ``ts``."""
    ids = np.arange(rows, dtype="int64")
    step_us = DAYS * 86_400_000_000 // rows
    start_us = int((START - dt.datetime(1970, 1, 1)).total_seconds()) * 1_000_000
    ts = start_us + ids * step_us
    data = pa.table(
        {"ts": pa.array(ts, pa.timestamp("us")), "id": ids, "v": ids / 2}, schema=RANGE_SCHEMA
    )
    low = START + dt.timedelta(days=QUERY_DAY)
    high = low + dt.timedelta(days=1)
    low_us = start_us + QUERY_DAY * 86_400_000_000
    inside = (ts >= low_us) & (ts < low_us + 86_400_000_000)
    want = expected(ids[inside], ids[inside] / 2)
    systems["trinity"].create("events", "ts TIMESTAMP, id INT8, v FLOAT8", "day(ts)")
    systems["delta_rs"].create_by_day("events")
    systems["pyiceberg"].create_by_day("events")
    load: dict[str, float] = {}
    query: dict[str, float] = {}
    checks: dict[str, bool] = {}
    for name, system in systems.items():
        load[name], _ = timed(lambda s=system: s.load("events", data))
        query[name], got = best(3, lambda s=system: summary(s.day("events", low, high)))
        checks[f"range_{name}_right"] = got == want
    return {
        "figures": {"range_load": load, "range_query": query},
        "checks": checks,
        "rows_in_day": want[0],
    }


# -- main ------------------------------------------------------------------------------


def faster(figures: dict[str, Any], row: str, *, higher_is_better: bool = False) -> dict[str, bool]:
    """``trinity_faster_<row>_than_<peer>`` for both peers."""
    out = {}
    for peer in ("delta_rs", "pyiceberg"):
        mine, theirs = figures[row]["trinity"], figures[row][peer]
        if higher_is_better:
            ahead = mine["commits_per_second"] > theirs["commits_per_second"]
        else:
            ahead = mine < theirs
        out[f"trinity_faster_{row}_than_{peer}"] = ahead
    return out


def line(label: str, figures: dict[str, Any], unit: str = "s") -> str:
    parts = []
    for name in SYSTEMS:
        value = figures[name]
        if isinstance(value, dict):
            parts.append(f"{name} {value['commits_per_second']:9.1f} commits/s")
        else:
            parts.append(f"{name} {value:8.3f} {unit}")
    return f"{label:<28}| " + " | ".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Run the six rows for the three systems, print them, then the JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=None, help="single-row commits (1000)")
    parser.add_argument("--merge-target", type=int, default=None, help="target rows (1000000)")
    parser.add_argument("--merge-runs", type=int, default=None, help="MERGE rounds (5)")
    parser.add_argument("--range-rows", type=int, default=None, help="rows over 100 days (1e7)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small sizes")
    args = parser.parse_args(argv)
    appends = args.appends or (50 if args.quick else 1000)
    merge_target = args.merge_target or (20_000 if args.quick else 1_000_000)
    range_rows = args.range_rows or (200_000 if args.quick else 10_000_000)
    merge_runs = args.merge_runs or (2 if args.quick else 5)

    work = Path(tempfile.mkdtemp(prefix="trinity-bench-peers-"))
    try:
        trinity = Trinity(work)
        systems = {"trinity": trinity, "delta_rs": Delta(work), "pyiceberg": Iceberg(work)}
        print(
            f"trinity | deltalake {deltalake.__version__} | pyiceberg {pyiceberg.__version__} "
            f"| local disk {work}",
            flush=True,
        )
        figures: dict[str, Any] = {}
        checks: dict[str, bool] = {}
        first = run_appends(systems, appends)
        figures.update(first["figures"])
        checks.update(first["checks"])
        print(line(f"1. {appends} single-row appends", figures["appends"]), flush=True)
        print(line("2. scan after appends", figures["scan"]), flush=True)
        print(
            line("3. compaction", figures["compaction"])
            + " | files before/after: "
            + ", ".join(f"{n} {figures['compaction'][f'{n}_files']}" for n in SYSTEMS),
            flush=True,
        )
        print(line("4. scan after compaction", figures["scan_compacted"]), flush=True)
        merged = run_merge(systems, merge_target, merge_runs)
        figures.update(merged["figures"])
        checks.update(merged["checks"])
        print(
            line(f"5. MERGE {merge_target // 10:,} into {merge_target:,}", figures["merge"])
            + " | first run: "
            + ", ".join(f"{n} {figures['merge_first'][n]:.3f} s" for n in SYSTEMS),
            flush=True,
        )
        ranged = run_range(systems, range_rows)
        figures.update(ranged["figures"])
        checks.update(ranged["checks"])
        print(line(f"   load {range_rows:,} rows by day", figures["range_load"]), flush=True)
        print(
            line(f"6. one day ({ranged['rows_in_day']:,} rows)", figures["range_query"]),
            flush=True,
        )
        trinity.conn.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    checks.update(faster(figures, "appends", higher_is_better=True))
    for row in ("scan", "compaction", "scan_compacted", "merge", "range_query"):
        checks.update(faster(figures, row))
    report = {
        "quick": args.quick,
        "sizes": {
            "appends": appends,
            "merge_target": merge_target,
            "merge_runs": merge_runs,
            "range_rows": range_rows,
        },
        "peers": {"deltalake": deltalake.__version__, "pyiceberg": pyiceberg.__version__},
        "figures": rounded(figures),
        "checks": checks,
    }
    print(json.dumps(report))
    return 0


def rounded(value: Any) -> Any:
    """Floats to 4 decimals, all the way down (the JSON line stays readable)."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


if __name__ == "__main__":
    sys.exit(main())
