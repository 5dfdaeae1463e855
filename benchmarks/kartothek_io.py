"""Benchmark: taking a Kartothek dataset into the lakehouse, next to what a user would do instead.

One run, local disk. plateau (Kartothek's maintained fork) writes a dataset
of ``--rows`` rows (default 2,000,000) as ``--frames`` frames (default 16)
with ``partition_on=["region"]`` (8 regions, so 8 files per frame) and
``secondary_indices=["customer"]`` (1,000 customers): ``id`` int64,
``region`` and ``customer`` text, ``amount`` float64, ``ts`` datetime64.
Then, side by side:

* **taking it in**: ``CALL system.import_kartothek`` with ``mode => 'copy'``
  and ``mode => 'reference'``, against the way without it: plateau's
  ``read_table`` of the whole dataset, then ``CREATE TABLE ... PARTITIONED BY
  (region)``, ``Cursor.ingest`` of the frame and ``CREATE INDEX`` (three
  commits). Target: the copy import faster than that;
* **reading it afterwards**: a whole-table aggregate and a one-customer
  lookup by SQL on each imported table, against plateau's own ``read_table``
  (whole, and with ``predicates=[[("customer", "==", ...)]]``, which uses
  the index). Target: each SQL read faster than plateau's.

Every result is checked: the imports and the manual load hold the written
rows (count and sums), each import is one commit, and the lookups agree
with plateau's. Best of 2 runs for imports, 3 for reads. Human-readable
lines first; the last line is one JSON object with every figure and a
``checks`` dict of booleans.

Run: ``python benchmarks/kartothek_io.py [--rows N] [--frames N] [--quick]``
(``--quick``: 40,000 rows in 4 frames: a smoke run).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import minimalkv
import numpy as np
import pandas as pd
from plateau.io import eager

import trinity_dbapi

REGIONS = [f"r{i}" for i in range(8)]
CUSTOMERS = 1000
LOOKUP = "c17"


def _frame(start: int, rows: int) -> pd.DataFrame:
    ids = np.arange(start, start + rows, dtype="int64")
    return pd.DataFrame(
        {
            "id": ids,
            "region": np.array(REGIONS, dtype=object)[ids % len(REGIONS)],
            "customer": np.array([f"c{i}" for i in range(CUSTOMERS)], dtype=object)[
                (ids * 7) % CUSTOMERS
            ],
            "amount": (ids % 1000) * 0.25,
            "ts": pd.Timestamp("2024-01-01") + pd.to_timedelta(ids, unit="s"),
        }
    )


def _best(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def _version(cur: Any) -> int:
    cur.execute("SELECT max(version) FROM system.versions")
    return int(cur.fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--frames", type=int, default=16)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows, frames = (40_000, 4) if args.quick else (args.rows, args.frames)
    per_frame = rows // frames
    rows = per_frame * frames

    work = Path(tempfile.mkdtemp(prefix="bench-kartothek-"))
    try:
        store_dir = work / "store"
        store = partial(minimalkv.get_store_from_url, f"hfs://{store_dir}")
        start = time.perf_counter()
        eager.store_dataframes_as_dataset(
            store=store,
            dataset_uuid="orders",
            dfs=[_frame(i * per_frame, per_frame) for i in range(frames)],
            partition_on=["region"],
            secondary_indices=["customer"],
        )
        written = time.perf_counter() - start
        files = len(list((store_dir / "orders" / "table").rglob("*.parquet")))
        print(f"plateau wrote {rows:,} rows in {files} files in {written:.2f} s")
        ids = np.arange(rows, dtype="int64")
        expected = (rows, int(ids.sum()), float(((ids % 1000) * 0.25).sum()))
        lookup_expected = int(((ids * 7) % CUSTOMERS == 17).sum())

        conn = trinity_dbapi.connect(str(work / "lake"), create=True, autocommit=True)
        cur = conn.cursor()
        figures: dict[str, float] = {}
        checks: dict[str, bool] = {}
        counter = iter(range(10**6))

        def contents(table: str) -> tuple[int, int, float]:
            cur.execute(f"SELECT count(*), sum(id), sum(amount) FROM {table}")
            n, s, a = cur.fetchone()
            return int(n), int(s), float(a)

        for mode in ("copy", "reference"):
            names: list[str] = []

            def run_import(mode: str = mode, names: list[str] = names) -> int:
                name = f"{mode}_{next(counter)}"
                before = _version(cur)
                cur.execute(
                    "CALL system.import_kartothek(?, ?, 'orders', mode => ?)",
                    [name, str(store_dir), mode],
                )
                names.append(name)
                return _version(cur) - before

            figures[f"import_{mode}"], commits = _best(2, run_import)
            checks[f"import_{mode}_one_commit"] = commits == 1
            checks[f"import_{mode}_holds_the_rows"] = contents(names[-1]) == expected
            print(f"import_kartothek mode => '{mode}': {figures[f'import_{mode}']:.3f} s")

        def manual() -> str:
            name = f"manual_{next(counter)}"
            frame = eager.read_table("orders", store)
            cur.execute(
                f"CREATE TABLE {name} (id INT8, region VARCHAR, customer VARCHAR, "
                "amount FLOAT8, ts TIMESTAMP) PARTITIONED BY (region)"
            )
            cur.ingest(name, frame)
            cur.execute(f"CREATE INDEX by_customer ON {name} (customer)")
            return name

        figures["read_table_then_ingest"], manual_name = _best(2, manual)
        checks["manual_holds_the_rows"] = contents(manual_name) == expected
        print(
            "plateau read_table + CREATE TABLE + ingest + CREATE INDEX: "
            f"{figures['read_table_then_ingest']:.3f} s"
        )

        copy_name, reference_name = "copy_0", "reference_2"
        for label, name in (("copy", copy_name), ("reference", reference_name)):
            figures[f"sum_{label}"], got = _best(3, partial(contents, name))
            checks[f"sum_{label}_right"] = got == expected

            def lookup(name: str = name) -> int:
                cur.execute(f"SELECT count(*) FROM {name} WHERE customer = ?", [LOOKUP])
                return int(cur.fetchone()[0])

            figures[f"lookup_{label}"], found = _best(3, lookup)
            checks[f"lookup_{label}_right"] = found == lookup_expected

        def plateau_sum() -> tuple[int, int, float]:
            frame = eager.read_table("orders", store, columns=["id", "amount"])
            return len(frame), int(frame["id"].sum()), float(frame["amount"].sum())

        def plateau_lookup() -> int:
            frame = eager.read_table(
                "orders", store, columns=["id"], predicates=[[("customer", "==", LOOKUP)]]
            )
            return len(frame)

        figures["sum_plateau"], got = _best(3, plateau_sum)
        checks["sum_plateau_right"] = got == expected
        figures["lookup_plateau"], found = _best(3, plateau_lookup)
        checks["lookup_plateau_right"] = found == lookup_expected
        for what in ("sum", "lookup"):
            print(
                f"{what}: SQL on the copy {figures[f'{what}_copy']:.3f} s, on the reference "
                f"{figures[f'{what}_reference']:.3f} s, plateau read_table "
                f"{figures[f'{what}_plateau']:.3f} s"
            )
        checks["import_copy_faster_than_manual"] = (
            figures["import_copy"] < figures["read_table_then_ingest"]
        )
        for what in ("sum", "lookup"):
            for label in ("copy", "reference"):
                checks[f"{what}_{label}_faster_than_plateau"] = (
                    figures[f"{what}_{label}"] < figures[f"{what}_plateau"]
                )
        conn.close()
        report = {
            "rows": rows,
            "files": files,
            "seconds": {k: round(v, 4) for k, v in figures.items()},
            "checks": checks,
        }
        print(json.dumps(report))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
