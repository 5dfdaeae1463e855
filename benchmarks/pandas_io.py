"""Benchmark: pandas through the SQLAlchemy dialect, next to the dialects users would pick instead.

Everything runs on local disk (a temporary directory), side by side in one run,
on a frame of ``--rows`` rows (default 1,000,000): an int64 ``id``, a string
``name`` (``f"name{i}"``), a float64 ``score`` and a UTC timestamp ``ts``
(``pd.date_range(..., tz="UTC")``):

* the default paths against the peers: ``DataFrame.to_sql(..., if_exists=
  "replace", index=False)`` (SQLAlchemy ``executemany``) and ``pd.read_sql
  ("SELECT * FROM ...", engine)`` through ``create_engine("trinity:///...")``,
  ``create_engine("duckdb:///...")`` (duckdb_engine) and
  ``create_engine("sqlite:///...")`` (the standard library's sqlite3), each on
  its own database file. Target: trinity faster than both peers on both.
  Each peer's result is checked too (sqlite3 gives timestamps back as text);
* writing, against the format's floor: ``to_sql`` with the default method and
  with ``method=trinity_dbapi.sqlalchemy.arrow_insert`` (one Arrow write),
  versus pyarrow writing the same frame to one Parquet file
  (``pa.Table.from_pandas`` + ``pq.write_table(..., compression="zstd")``).
  Every ``to_sql`` run must be exactly one commit (``max(version)`` of
  ``system.versions`` before and after), and the stored table must hold the
  frame (count and sums by SQL). Target: ratio <= 3;
* reading, against the format's floor: ``pd.read_sql``, ``pd.read_sql_table``
  and the driver's columnar fast path through the same engine
  (``exec_driver_sql(...).cursor.fetch_df()``) versus DuckDB's own ``.df()`` of
  ``read_parquet`` on exactly the table's data files. Every read must return
  the frame: same shape and columns, the same sums of ``id``, ``score`` and
  ``ts`` (microseconds) and every ``name`` matching its ``id``
  (``same_result``). Target: ratio <= 1.5.

Writes are best of 2 runs, reads best of 3. Human-readable lines first; the
last line is one JSON object with every figure and a ``checks`` dict of
booleans.

Run: ``python benchmarks/pandas_io.py [--rows N] [--quick]``
(``--quick``: 20,000 rows and 2 runs per read: a smoke run).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import sqlalchemy as sa

import trinity_dbapi
from trinity_dbapi.sqlalchemy import arrow_insert
from trinity_dbapi.tables import managed

NAMESPACE = "bench"
TABLE = "t"
#: Best of this many runs per read on each side (the 2-core machine is noisy).
READ_RUNS = 3
#: Best of this many ``to_sql`` runs per method (each replaces the table).
WRITE_RUNS = 2
READ_TARGET = 1.5
WRITE_TARGET = 3.0

#: The stored table's contents, by SQL: compared with the frame after each method.
CONTENTS_SQL = (
    f"SELECT count(*), sum(id), sum(score), sum(epoch_us(ts)), "
    f"count(*) FILTER (WHERE name = 'name' || id) FROM {NAMESPACE}.{TABLE}"
)


def _version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


def best_of(runs: int, work: Any) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        result = None  # let the previous result go before timing the next
        t0 = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - t0)
    return min(times), result


def make_frame(rows: int) -> pd.DataFrame:
    ids = np.arange(rows, dtype=np.int64)
    return pd.DataFrame(
        {
            "id": ids,
            "name": [f"name{i}" for i in range(rows)],
            "score": ids * 0.5,
            "ts": pd.date_range("2024-01-01", periods=rows, freq="s", tz="UTC"),
        }
    )


def checksum(frame: pd.DataFrame) -> dict[str, Any]:
    """Shape, columns and order-independent sums of a frame (all exact for this data)."""
    figures: dict[str, Any] = {
        "shape": list(frame.shape),
        "columns": list(frame.columns),
        "dtypes": {name: str(dtype) for name, dtype in frame.dtypes.items()},
    }
    try:
        figures["id_sum"] = int(frame["id"].sum())
        figures["score_sum"] = float(frame["score"].sum())
        figures["ts_sum_us"] = micros_sum(pd.to_datetime(frame["ts"]))
        expected = "name" + frame["id"].astype(str)
        figures["names_match"] = bool((frame["name"].astype(str) == expected).all())
    except (KeyError, TypeError, ValueError) as exc:
        figures["error"] = f"{type(exc).__name__}: {exc}"
    return figures


def micros_sum(times: pd.Series) -> int:
    """The exact sum of ``times`` in microseconds since the epoch (int64 sums would wrap)."""
    if getattr(times.dt, "tz", None) is not None:
        times = times.dt.tz_convert(None)
    micros = times.astype("datetime64[us]").astype("int64")
    seconds, fractions = np.divmod(micros.to_numpy(), 1_000_000)
    return int(seconds.sum()) * 1_000_000 + int(fractions.sum())


def same_data(got: dict[str, Any], want: dict[str, Any]) -> bool:
    keys = ("shape", "columns", "id_sum", "score_sum", "ts_sum_us")
    return "error" not in got and all(got[k] == want[k] for k in keys) and got["names_match"]


def latest_version(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return int(conn.exec_driver_sql("SELECT max(version) FROM system.versions").scalar_one())


def stored_contents(engine: sa.Engine) -> list[Any]:
    with engine.connect() as conn:
        row = conn.exec_driver_sql(CONTENTS_SQL).one()
    return [int(row[0]), int(row[1]), float(row[2]), int(row[3]), int(row[4])]


def table_files(location: str) -> list[str]:
    """The table's data files, as benchmarks/query.py finds them."""
    conn = trinity_dbapi.connect(location)
    try:
        definition = conn.lakehouse.begin().load_table(NAMESPACE, TABLE)
        meta = managed.metadata(conn.lakehouse.storage, definition)
        root = conn.lakehouse.storage.root_dir
        return [str(Path(root) / path) for path in meta.files().values()]
    finally:
        conn.close()


# -- writing ----------------------------------------------------------------------


def bench_to_sql(engine: sa.Engine, frame: pd.DataFrame, method: Any, runs: int) -> dict[str, Any]:
    """``runs`` replacing ``to_sql`` calls with ``method``; commits counted per run."""
    times, commits, reported = [], [], []
    for _ in range(runs):
        before = latest_version(engine)
        t0 = time.perf_counter()
        count = frame.to_sql(
            TABLE, engine, schema=NAMESPACE, if_exists="replace", index=False, method=method
        )
        times.append(time.perf_counter() - t0)
        commits.append(latest_version(engine) - before)
        reported.append(count)
    expected = [
        len(frame),
        int(frame["id"].sum()),
        float(frame["score"].sum()),
        micros_sum(frame["ts"]),
        len(frame),
    ]
    stored = stored_contents(engine)
    return {
        "seconds": round(min(times), 3),
        "runs_seconds": [round(t, 3) for t in times],
        "rows_per_second": round(len(frame) / min(times)),
        "commits_per_run": commits,
        "one_commit_each": all(c == 1 for c in commits),
        "to_sql_returned": reported,
        "stored_matches_frame": stored == expected,
        "stored": stored,
    }


def bench_pyarrow_write(frame: pd.DataFrame, path: Path, runs: int) -> dict[str, Any]:
    def write() -> int:
        table = pa.Table.from_pandas(frame, preserve_index=False)
        pq.write_table(table, path, compression="zstd")
        return table.num_rows

    seconds, written = best_of(runs, write)
    return {"seconds": round(seconds, 3), "rows": written, "bytes": path.stat().st_size}


# -- reading ------------------------------------------------------------------------


def bench_reads(engine: sa.Engine, location: str, runs: int) -> dict[str, dict[str, Any]]:
    """Each way of reading the table into pandas, best of ``runs``, and its checksum."""
    files = table_files(location)
    duck = duckdb.connect()
    direct = f"SELECT * FROM read_parquet({files!r})"

    def fast_path() -> pd.DataFrame:
        with engine.connect() as conn:
            return conn.exec_driver_sql(f"SELECT * FROM {NAMESPACE}.{TABLE}").cursor.fetch_df()

    ways = {
        "duckdb_df": lambda: duck.sql(direct).df(),
        "read_sql": lambda: pd.read_sql(f"SELECT * FROM {NAMESPACE}.{TABLE}", engine),
        "read_sql_table": lambda: pd.read_sql_table(TABLE, engine, schema=NAMESPACE),
        "fetch_df": fast_path,
    }
    figures: dict[str, dict[str, Any]] = {}
    for name, work in ways.items():
        seconds, frame = best_of(runs, work)
        figures[name] = {"seconds": round(seconds, 4), "checksum": checksum(frame)}
        del frame
    figures["duckdb_df"]["files"] = len(files)
    duck.close()
    return figures


# -- the peers -----------------------------------------------------------------------


#: The dialects a user would pick instead, each on its own file in the run's folder.
PEERS = {"duckdb_engine": "duckdb:///{root}/peer.duckdb", "sqlite3": "sqlite:///{root}/peer.db"}


def bench_peer(url: str, frame: pd.DataFrame, read_runs: int) -> dict[str, Any]:
    """The default ``to_sql`` and ``read_sql`` through a peer's engine, as for trinity."""
    engine = sa.create_engine(url)
    try:
        times = []
        for run in range(WRITE_RUNS):
            # A new table per run, not if_exists="replace": duckdb_engine 0.17 cannot
            # reflect a table on DuckDB 2 (pg_catalog.pg_collation is gone), and a
            # fresh table spares the peers the drop that trinity's runs pay for.
            t0 = time.perf_counter()
            frame.to_sql(f"{TABLE}{run}", engine, index=False)
            times.append(time.perf_counter() - t0)
        last = f"SELECT * FROM {TABLE}{WRITE_RUNS - 1}"
        seconds, read = best_of(read_runs, lambda: pd.read_sql(last, engine))
        return {
            "to_sql_seconds": round(min(times), 3),
            "to_sql_runs_seconds": [round(t, 3) for t in times],
            "read_sql_seconds": round(seconds, 4),
            "read_sql_checksum": checksum(read),
        }
    finally:
        engine.dispose()


# -- main ------------------------------------------------------------------------------


def ratio(ours: float, theirs: float) -> float:
    return round(ours / theirs, 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="rows in the frame (1,000,000)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 20,000 rows")
    args = parser.parse_args(argv)
    rows = args.rows or (20_000 if args.quick else 1_000_000)
    read_runs = 2 if args.quick else READ_RUNS

    frame = make_frame(rows)
    want = checksum(frame)
    with tempfile.TemporaryDirectory(prefix="trinity-bench-pandas-") as tmp:
        root = Path(tmp)
        location = str(root / "lake")
        engine = sa.create_engine(f"trinity:///{location}")
        with engine.begin() as conn:
            conn.execute(sa.schema.CreateSchema(NAMESPACE))
        default = bench_to_sql(engine, frame, None, WRITE_RUNS)
        fast = bench_to_sql(engine, frame, arrow_insert, WRITE_RUNS)
        baseline = bench_pyarrow_write(frame, root / "baseline.parquet", WRITE_RUNS)
        reads = bench_reads(engine, location, read_runs)
        engine.dispose()
        peers = {
            name: bench_peer(url.format(root=root), frame, read_runs) for name, url in PEERS.items()
        }

    duck = reads["duckdb_df"]["seconds"]
    ratios = {
        "read_sql_vs_duckdb_df": ratio(reads["read_sql"]["seconds"], duck),
        "read_sql_table_vs_duckdb_df": ratio(reads["read_sql_table"]["seconds"], duck),
        "fetch_df_vs_duckdb_df": ratio(reads["fetch_df"]["seconds"], duck),
        "to_sql_default_vs_pyarrow": ratio(default["seconds"], baseline["seconds"]),
        "to_sql_arrow_insert_vs_pyarrow": ratio(fast["seconds"], baseline["seconds"]),
    }
    same = {name: same_data(read["checksum"], want) for name, read in reads.items()}
    timestamps = all(
        read["checksum"].get("ts_sum_us") == want["ts_sum_us"]
        and read["checksum"]["dtypes"].get("ts", "").startswith("datetime64")
        for read in reads.values()
    )

    ours = {"to_sql": default["seconds"], "read_sql": reads["read_sql"]["seconds"]}
    versus = {
        f"{op}_vs_{name}": ratio(ours[op], peer[f"{op}_seconds"])
        for name, peer in peers.items()
        for op in ("to_sql", "read_sql")
    }
    for op, label in (("to_sql", "to_sql, default method"), ("read_sql", "pd.read_sql")):
        print(
            f"{label:24} | {rows:,} rows | trinity {ours[op]} s | "
            + " | ".join(
                f"{name} {peer[f'{op}_seconds']} s (ratio {versus[f'{op}_vs_{name}']})"
                for name, peer in peers.items()
            )
            + " | target: ratio < 1 against each"
        )
    print(
        f"{'peer results':24} | "
        + " | ".join(
            f"{name} read_sql same as the frame: {same_data(peer['read_sql_checksum'], want)}"
            f" (ts {peer['read_sql_checksum']['dtypes'].get('ts')})"
            for name, peer in peers.items()
        )
    )
    for label, figures, key in (
        ("to_sql, default method", default, "to_sql_default_vs_pyarrow"),
        ("to_sql, arrow_insert", fast, "to_sql_arrow_insert_vs_pyarrow"),
    ):
        print(
            f"{label:24} | {rows:,} rows | {figures['seconds']} s"
            f" ({figures['rows_per_second']:,} rows/s), commits per run"
            f" {figures['commits_per_run']}, stored table matches {figures['stored_matches_frame']}"
            f" | pyarrow from_pandas + Parquet {baseline['seconds']} s"
            f" | ratio {ratios[key]} (<= {WRITE_TARGET:g})"
        )
    for label, name, key in (
        ("pd.read_sql", "read_sql", "read_sql_vs_duckdb_df"),
        ("pd.read_sql_table", "read_sql_table", "read_sql_table_vs_duckdb_df"),
        ("cursor.fetch_df (fast)", "fetch_df", "fetch_df_vs_duckdb_df"),
    ):
        print(
            f"{label:24} | {rows:,} rows | {reads[name]['seconds']} s"
            f" | duckdb read_parquet .df() {duck} s ({reads['duckdb_df']['files']} file(s))"
            f" | ratio {ratios[key]} (<= {READ_TARGET:g}) | same result {same[name]}"
        )
    print(
        f"{'same result':24} | every read {want['shape'][0]:,} x {want['shape'][1]}, sums of id,"
        f" score, ts and names as in the frame: {all(same.values())}"
        f" | timestamps round-trip: {timestamps}"
    )

    report = {
        "quick": args.quick,
        "rows": rows,
        "read_runs": read_runs,
        "write_runs": WRITE_RUNS,
        "versions": {
            "pandas": pd.__version__,
            "sqlalchemy": sa.__version__,
            "duckdb": duckdb.__version__,
            "duckdb_engine": _version("duckdb_engine"),
            "pyarrow": pa.__version__,
        },
        "frame": want,
        "write": {"to_sql_default": default, "to_sql_arrow_insert": fast, "pyarrow": baseline},
        "read": reads,
        "ratios": ratios,
        "peers": peers,
        "versus_peers": versus,
        "same_result": all(same.values()),
        "same_result_by_read": same,
        "checks": {
            **{f"{key}_below_1": value < 1 for key, value in versus.items()},
            "read_sql_ratio_at_most_1_5": ratios["read_sql_vs_duckdb_df"] <= READ_TARGET,
            "read_sql_table_ratio_at_most_1_5": ratios["read_sql_table_vs_duckdb_df"]
            <= READ_TARGET,
            "fast_read_ratio_at_most_1_5": ratios["fetch_df_vs_duckdb_df"] <= READ_TARGET,
            "to_sql_ratio_at_most_3": ratios["to_sql_default_vs_pyarrow"] <= WRITE_TARGET,
            "to_sql_arrow_insert_ratio_at_most_3": ratios["to_sql_arrow_insert_vs_pyarrow"]
            <= WRITE_TARGET,
            "to_sql_one_commit": default["one_commit_each"],
            "to_sql_arrow_insert_one_commit": fast["one_commit_each"],
            "to_sql_stored_matches_frame": default["stored_matches_frame"]
            and fast["stored_matches_frame"],
            "timestamps_round_trip": timestamps,
            "same_result": all(same.values()),
        },
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
