"""Benchmark: trinity, delta-rs and pyiceberg on S3 at a round trip's cost per request.

A moto S3 server runs in a process of its own behind a latency layer
(``benchmarks/s3_latency.py``: each request waits ``--latency-ms`` before
moto answers it, as a round trip to S3 in-region does; concurrent requests
wait side by side). The same data is built the same way in the three
systems, each driven through its usual Python API: trinity through the PEP 249
driver on ``s3://`` (autocommit), delta-rs through ``write_deltalake`` and
``DeltaTable`` (``QueryBuilder`` for SQL), pyiceberg through ``SqlCatalog``
on SQLite with its warehouse on S3. The server counts the requests of every
operation by kind.

pyiceberg's catalog is a SQLite file on this disk: the cheapest place for
it, though one only this machine can use. A catalog that several machines
share (a REST catalog, a database) costs pyiceberg at least one round trip
more in a fresh process, so its figures here are a lower bound.

Rows (seconds, lower is better):

* **append_1**: a single-row append (median of ``--appends``), in one process.
* **append_1m**: one append of 1,000,000 rows ``(id INT8, v FLOAT8)``.
* **count_30**, **point_30**, **sum_1m**, **describe**, **scan_100**: each in a
  fresh process (imports not timed, as a Superset tile with a new connection
  or a Spark task pays them once), median of ``--runs``: ``count(*)`` and
  ``sum(v)`` over a table of 30 small files; the row ``id = 7`` of it; ``sum(v)``
  over the 1,000,000-row table; the columns of a table; every row of a table of
  100 files.
* **warm_filtered**: ``count(*), sum(v) WHERE id < 10`` over the 30-file table,
  again in the process that ran it once (median of ``--runs``).
* **merge_10k** (reported): a MERGE of 10,000 rows (half updates) into the
  1,000,000-row table.
* **concurrent_4** (reported): four processes appending 5 rows each at once;
  the wall time until all committed.

Target (issue 31), at 20 and 50 ms: trinity ahead of both peers on every row,
and at least 2x ahead of the best peer on count_30, point_30 and
warm_filtered. The last line printed is one JSON object with every figure,
the request counts and a ``checks`` dict.

Run: ``python benchmarks/object_store.py [--latency-ms 20] [--runs 3]
[--appends 30] [--quick]``; ``--latency-ms`` may be given several times.
``--quick`` (the smoke test): one run, 5 appends, tables of 10 and 20 files
and 200,000 rows, no MERGE and no concurrent appenders.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BUCKET = "bench"
SYSTEMS = ("trinity", "delta", "iceberg")
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")


# -- the systems ------------------------------------------------------------------------


class Trinity:
    def __init__(self, endpoint: str, work: str) -> None:
        import trinity_dbapi

        options = {
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
        }
        self.con = trinity_dbapi.connect(
            f"s3://{BUCKET}/trinity", storage_options=options, autocommit=True
        )
        self.cur = self.con.cursor()

    def create(self, name: str) -> None:
        self.cur.execute(f"CREATE TABLE IF NOT EXISTS {name} (id INT8, v FLOAT8)")

    def append(self, name: str, rows: Any) -> None:
        if rows.num_rows == 1:
            row = rows.to_pylist()[0]
            self.cur.execute(f"INSERT INTO {name} VALUES (?, ?)", [row["id"], row["v"]])
        else:
            self.cur.ingest(name, rows)

    def count_sum(self, name: str, where: str = "") -> tuple[int, float]:
        self.cur.execute(f"SELECT count(*), sum(v) FROM {name} {where}")
        return tuple(self.cur.fetchone())  # type: ignore[return-value]

    def point(self, name: str) -> list[Any]:
        self.cur.execute(f"SELECT id, v FROM {name} WHERE id = 7")
        return [tuple(r) for r in self.cur.fetchall()]

    def scan(self, name: str) -> int:
        self.cur.execute(f"SELECT * FROM {name}")
        return int(self.cur.fetch_arrow_table().num_rows)

    def describe(self, name: str) -> list[str]:
        self.cur.execute(f"DESCRIBE {name}")
        return [str(r[0]) for r in self.cur.fetchall()]

    def merge(self, name: str, source: Any) -> None:
        self.cur.execute("CREATE TABLE IF NOT EXISTS merge_src (id INT8, v FLOAT8)")
        self.cur.execute("DELETE FROM merge_src")
        self.cur.ingest("merge_src", source)
        started = time.perf_counter()
        self.cur.execute(
            f"MERGE INTO {name} t USING merge_src s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
        )
        self.merge_seconds = time.perf_counter() - started


class Delta:
    def __init__(self, endpoint: str, work: str) -> None:
        self.options = {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
            "AWS_CONDITIONAL_PUT": "etag",
        }

    def uri(self, name: str) -> str:
        return f"s3://{BUCKET}/delta/{name}"

    def create(self, name: str) -> None:
        pass

    def append(self, name: str, rows: Any) -> None:
        from deltalake import write_deltalake

        write_deltalake(self.uri(name), rows, mode="append", storage_options=self.options)

    def _query(self, name: str, sql: str) -> Any:
        import pyarrow as pa
        from deltalake import DeltaTable, QueryBuilder

        table = DeltaTable(self.uri(name), storage_options=self.options)
        return pa.table(QueryBuilder().register("t", table).execute(sql).read_all())

    def count_sum(self, name: str, where: str = "") -> tuple[int, float]:
        result = self._query(name, f"SELECT count(*) AS c, sum(v) AS s FROM t {where}")
        return int(result.column(0)[0].as_py()), float(result.column(1)[0].as_py())

    def point(self, name: str) -> list[Any]:
        result = self._query(name, "SELECT id, v FROM t WHERE id = 7")
        return [tuple(r.values()) for r in result.to_pylist()]

    def scan(self, name: str) -> int:
        from deltalake import DeltaTable

        table = DeltaTable(self.uri(name), storage_options=self.options)
        return int(table.to_pyarrow_table().num_rows)

    def describe(self, name: str) -> list[str]:
        from deltalake import DeltaTable

        table = DeltaTable(self.uri(name), storage_options=self.options)
        return [field.name for field in table.schema().fields]

    def merge(self, name: str, source: Any) -> None:
        from deltalake import DeltaTable

        started = time.perf_counter()
        table = DeltaTable(self.uri(name), storage_options=self.options)
        (
            table.merge(source, "t.id = s.id", source_alias="s", target_alias="t")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute()
        )
        self.merge_seconds = time.perf_counter() - started


class Iceberg:
    def __init__(self, endpoint: str, work: str) -> None:
        from pyiceberg.catalog.sql import SqlCatalog

        self.catalog = SqlCatalog(
            "bench",
            uri=f"sqlite:///{work}/iceberg.db",
            warehouse=f"s3://{BUCKET}/iceberg",
            **{
                "s3.endpoint": endpoint,
                "s3.access-key-id": "testing",
                "s3.secret-access-key": "testing",
                "s3.region": "us-east-1",
            },
        )

    def create(self, name: str) -> None:
        import pyarrow as pa

        if ("b",) not in self.catalog.list_namespaces():
            self.catalog.create_namespace("b")
        schema = pa.schema([("id", pa.int64()), ("v", pa.float64())])
        if not self.catalog.table_exists(f"b.{name}"):
            self.catalog.create_table(f"b.{name}", schema=schema)

    def append(self, name: str, rows: Any) -> None:
        self.catalog.load_table(f"b.{name}").append(rows)

    def count_sum(self, name: str, where: str = "") -> tuple[int, float]:
        import pyarrow.compute as pc

        table = self.catalog.load_table(f"b.{name}")
        scan = table.scan(row_filter=where.replace("WHERE", "").strip() or "True")
        data = scan.to_arrow()
        return data.num_rows, float(pc.sum(data.column("v")).as_py() or 0)

    def point(self, name: str) -> list[Any]:
        data = self.catalog.load_table(f"b.{name}").scan(row_filter="id == 7").to_arrow()
        return [tuple(r.values()) for r in data.to_pylist()]

    def scan(self, name: str) -> int:
        return int(self.catalog.load_table(f"b.{name}").scan().to_arrow().num_rows)

    def describe(self, name: str) -> list[str]:
        return [field.name for field in self.catalog.load_table(f"b.{name}").schema().fields]

    def merge(self, name: str, source: Any) -> None:
        started = time.perf_counter()
        self.catalog.load_table(f"b.{name}").upsert(source, join_cols=["id"])
        self.merge_seconds = time.perf_counter() - started


CLASSES: dict[str, type] = {"trinity": Trinity, "delta": Delta, "iceberg": Iceberg}


def rows(start: int, count: int) -> Any:
    import numpy as np
    import pyarrow as pa

    ids = np.arange(start, start + count, dtype=np.int64)
    return pa.table({"id": ids, "v": ids.astype(np.float64) / 2})


# -- the server ---------------------------------------------------------------------------


class Server:
    def __init__(self, latency_ms: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "s3_latency.py"), "--latency-ms", str(latency_ms)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        port = int(self.process.stdout.readline().split()[1])
        self.endpoint = f"http://127.0.0.1:{port}"
        import s3fs

        s3fs.S3FileSystem(
            key="testing",
            secret="testing",
            client_kwargs={"endpoint_url": self.endpoint},
            skip_instance_cache=True,
        ).mkdir(BUCKET)

    def reset(self) -> None:
        request = urllib.request.Request(self.endpoint + "/_stats", method="POST")
        urllib.request.urlopen(request).read()

    def counts(self) -> dict[str, int]:
        with urllib.request.urlopen(self.endpoint + "/_stats") as reply:
            return dict(json.loads(reply.read()))

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


# -- a fresh process per read --------------------------------------------------------------


def child(system: str, operation: str, endpoint: str, work: str) -> None:
    """Run one read in this fresh process; print its seconds and result as JSON."""
    # Imports are not timed: the process a tile or a task runs in has them
    # (pandas too: a BI server's, and pyarrow imports it on first use anyway).
    import pandas  # noqa: F401
    import pyarrow

    if system == "trinity":
        import duckdb  # noqa: F401
        import pyarrow.dataset
        import pyarrow.parquet  # noqa: F401
        import s3fs  # noqa: F401

        # The modules a statement imports on first use, as a server process
        # that ran one statement holds them (the peers import theirs whole).
        import trinity_dbapi.dbapi.connection
        import trinity_dbapi.sql.engine.handlers
        import trinity_dbapi.sql.engine.session  # noqa: F401
        from trinity_dbapi.storage import s3  # noqa: F401
    elif system == "delta":
        import deltalake  # noqa: F401
    else:
        import pyiceberg.catalog.sql  # noqa: F401
    print("READY", flush=True)
    sys.stdin.readline()
    started = time.perf_counter()
    engine = CLASSES[system](endpoint, work)
    result = run_read(engine, operation)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "result": result}), flush=True)


def run_read(engine: Any, operation: str) -> Any:
    if operation == "count_30":
        return engine.count_sum("t30")
    if operation == "point_30":
        return engine.point("t30")
    if operation == "sum_1m":
        return engine.count_sum("t1m")
    if operation == "describe":
        return engine.describe("t30")
    if operation == "scan_100":
        return engine.scan("t100")
    raise ValueError(operation)


def fresh(server: Server, system: str, operation: str, work: str) -> tuple[float, Any, dict]:
    """One read in a new process: its seconds, its answer and the requests it sent.

    A child that dies after printing its answer (delta-rs's process has been
    seen to abort at exit, "terminate called without an active exception")
    is counted in ``exit_failures``: its figure stands, the abort is reported.
    """
    command = [sys.executable, __file__, "--child", system, operation]
    process = subprocess.Popen(
        [*command, server.endpoint, work],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    assert process.stdout.readline().strip() == "READY"
    server.reset()
    process.stdin.write("go\n")
    process.stdin.flush()
    out = json.loads(process.stdout.readline())
    counts = server.counts()
    _, errors = process.communicate()
    if process.returncode:
        counts["exit_failures"] = 1
        print(f"    ({system} {operation}: exit {process.returncode}: {errors.strip()[-200:]})")
    return out["seconds"], out["result"], counts


def appender(system: str, endpoint: str, work: str, start: int) -> None:
    engine = CLASSES[system](endpoint, work)
    for i in range(5):
        for attempt in range(20):
            try:
                engine.append("tconc", rows(start + i, 1))
                break
            except Exception:
                if attempt == 19:
                    raise
                time.sleep(0.05)


# -- one latency ---------------------------------------------------------------------------


def run_latency(latency_ms: float, args: argparse.Namespace) -> dict[str, Any]:
    server = Server(latency_ms)
    work = tempfile.mkdtemp(prefix="object-store-bench-")
    figures: dict[str, dict[str, float]] = {}
    requests: dict[str, dict[str, Any]] = {}
    big = 200_000 if args.quick else 1_000_000
    # --quick checks that everything runs and agrees, on fewer files.
    small_files, scan_files = (10, 20) if args.quick else (30, 100)
    try:
        engines = {name: CLASSES[name](server.endpoint, work) for name in SYSTEMS}
        for name, engine in engines.items():
            print(f"  building {name} ...", flush=True)
            for table in ("t30", "t1m", "t100", "tconc", "tappend"):
                engine.create(table)
            for i in range(small_files):
                engine.append("t30", rows(i * 10, 10))
            engine.append("t1m", rows(0, big))
            for i in range(scan_files):
                engine.append("t100", rows(i, 1))
        results: dict[str, dict[str, Any]] = {}

        def record(op: str, system: str, seconds: float, counts: dict[str, int]) -> None:
            figures.setdefault(op, {})[system] = seconds
            requests.setdefault(op, {})[system] = counts

        for name, engine in engines.items():
            times, counts = [], {}
            for i in range(args.appends):
                server.reset()
                started = time.perf_counter()
                engine.append("tappend", rows(10_000 + i, 1))
                times.append(time.perf_counter() - started)
                counts = server.counts()
            record("append_1", name, statistics.median(times), counts)
            server.reset()
            started = time.perf_counter()
            engine.append("t1m", rows(big, big))
            record("append_1m", name, time.perf_counter() - started, server.counts())
        for name in SYSTEMS:
            engine = CLASSES[name](server.endpoint, work)
            engines[name] = engine
        for op in ("count_30", "point_30", "sum_1m", "describe", "scan_100"):
            for name in SYSTEMS:
                runs = [fresh(server, name, op, work) for _ in range(args.runs)]
                runs.sort(key=lambda run: run[0])
                seconds, result, counts = runs[len(runs) // 2]
                record(op, name, seconds, counts)
                results.setdefault(op, {})[name] = result
        for name, engine in engines.items():
            engine.count_sum("t30", "WHERE id < 10")
            times = []
            for _ in range(args.runs):
                server.reset()
                started = time.perf_counter()
                got = engine.count_sum("t30", "WHERE id < 10")
                times.append(time.perf_counter() - started)
                counts = server.counts()
            record("warm_filtered", name, statistics.median(times), counts)
            results.setdefault("warm_filtered", {})[name] = got
        if not args.quick:
            source = rows(big - 5_000, 10_000)
            for name, engine in engines.items():
                server.reset()
                engine.merge("t1m", source)
                record("merge_10k", name, engine.merge_seconds, server.counts())
        for name in () if args.quick else SYSTEMS:
            started = time.perf_counter()
            procs = [
                subprocess.Popen(
                    [sys.executable, __file__, "--append", name, server.endpoint, work, str(k)]
                )
                for k in range(4)
            ]
            codes = [p.wait() for p in procs]
            figures.setdefault("concurrent_4", {})[name] = (
                time.perf_counter() - started if codes == [0] * 4 else float("nan")
            )
    finally:
        server.stop()
    agree = all(
        len({json.dumps(v, sort_keys=True) for v in by_system.values()}) == 1
        for op, by_system in results.items()
        if op != "describe"
    )
    return {"figures": figures, "requests": requests, "results_agree": agree}


def checks(by_latency: dict[str, Any]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    targets = ("append_1", "append_1m", "count_30", "point_30", "sum_1m", "describe", "scan_100")
    for latency, run in by_latency.items():
        if float(latency) < 20:
            continue
        figures = run["figures"]
        for op in (*targets, "warm_filtered"):
            peers = min(figures[op]["delta"], figures[op]["iceberg"])
            out[f"trinity_ahead_{op}_{latency}ms"] = figures[op]["trinity"] < peers
            if op in ("count_30", "point_30", "warm_filtered"):
                out[f"trinity_2x_{op}_{latency}ms"] = figures[op]["trinity"] * 2 <= peers
        out[f"results_agree_{latency}ms"] = run["results_agree"]
    return out


def compile_trinity() -> None:
    """Compile trinity's modules to bytecode, as installing a wheel does.

    From a source checkout under ``PYTHONDONTWRITEBYTECODE`` (set on CI
    machines) no ``.pyc`` is ever written, and every fresh process would
    compile the modules it imports lazily while it is timed; the peers are
    installed packages, compiled when pip installed them.
    """
    import compileall

    import trinity_dbapi

    compileall.compile_dir(str(Path(trinity_dbapi.__file__).parent), quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, action="append")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--appends", type=int, default=30)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", nargs=4)
    parser.add_argument("--append", nargs=4)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.append:
        system, endpoint, work, start = args.append
        appender(system, endpoint, work, 100_000 + 1_000 * int(start))
        return
    if args.quick:
        args.runs, args.appends = 1, 5
    compile_trinity()
    latencies = args.latency_ms or [20.0]
    by_latency: dict[str, Any] = {}
    for latency in latencies:
        print(f"latency {latency:g} ms per request", flush=True)
        run = run_latency(latency, args)
        by_latency[f"{latency:g}"] = run
        for op, by_system in run["figures"].items():
            line = "  ".join(
                f"{name} {by_system.get(name, float('nan')):6.3f} s" for name in SYSTEMS
            )
            print(f"  {op:14} {line}")
        for op, by_system in run["requests"].items():
            line = "  ".join(
                f"{name} {by_system.get(name, {}).get('requests', 0):5d}" for name in SYSTEMS
            )
            print(f"  requests {op:14} {line}")
    print(json.dumps({"latency": by_latency, "checks": checks(by_latency)}))


if __name__ == "__main__":
    main()
