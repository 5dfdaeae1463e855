"""Benchmark: catalog metadata statements on lakehouses of 1k to 1M tables.

For each size (``--sizes``, default 1,000, 10,000 and 100,000 tables; with
``--full`` also 1,000,000) it builds a local lakehouse of ``n`` tables, 400
per namespace (``n0.t0000`` ... ``n0.t0399``, ``n1.t0000`` ...), every table
with eight columns, and measures on ``n1.t0150``:

* ``describe``: ``DESCRIBE TABLE n1.t0150``;
* ``show_tables``: ``SHOW TABLES IN n1``;
* ``columns_point``: ``information_schema.columns WHERE table_schema = 'n1'
  AND table_name = 't0150'``;
* ``versions``: ``SELECT * FROM system.versions ORDER BY version DESC LIMIT 3``
  (the three newest versions are ordinary one-table commits made after the
  build, the same at every size: a row lists its version's changed keys, so
  the build's batches of 5,000 tables would measure their size instead);
* ``reflection``: SQLAlchemy ``inspect(engine).get_columns`` + ``has_table``.

Each is measured cold (a fresh subprocess that opens the lakehouse and runs
the one statement: its wall time from connect to result, and the storage
reads it made, counted in that process by the storage's operation counters,
with how many of them were table or namespace definition files) and warm
(median of the runs in a second fresh process once a first run has warmed
the caches:
at least ``--repeats`` runs and ``WARM_MIN_SECONDS`` of them, fewer when they
pass ``WARM_BUDGET_SECONDS`` with ``MIN_REPEATS`` done; with the storage
reads per run). pyiceberg's warm figures are taken the same way.

The build is fast but realistic: every table has its own definition file and
tree key, written through the Python transaction API in transactions of
``BUILD_BATCH`` tables (not one SQL statement per table). Tables are created
without a dataset (``datasets.create_dataset``, as CREATE TABLE does, writes
an empty dataset's files too): measured on 2 shared cores, the datasets cut
the build rate from 1,360 to 155 tables a second, and no statement here reads a dataset.

Baseline, side by side in the same run: pyiceberg's SqlCatalog on SQLite at
the same sizes (``load_table``, ``list_tables``, ``table_exists``, cold and
warm). Its catalog rows are bulk-inserted into its SQLite tables, each table
pointing at its own copy of a real table metadata file written by
``create_table`` (a per-table ``create_table`` would take hours at 100,000).

Targets (issue 16), reported as booleans in ``checks``: cold DESCRIBE reads
<= depth + 3 at every size; SHOW TABLES reads no table or namespace
definition file; the warm latency of each point statement at the largest
size <= 1.5x its figure at the smallest (1,000 tables by default; only
when more than one size runs); warm
DESCRIBE <= 5 ms and reflection <= 30 ms at 100,000 tables (when measured);
each statement faster (warm) than pyiceberg's equivalent at every size.
Human-readable lines first; the last line is one JSON object with every figure.

Run: ``python benchmarks/catalog.py [--sizes 1000,10000,100000] [--full]
[--repeats 20] [--quick]`` (``--quick``: 600 and 1,200 tables, 3 repeats, no minimum time).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NAMESPACE_SIZE = 400
BUILD_BATCH = 5_000
#: Warm runs stop after this many seconds once ``MIN_REPEATS`` are done.
WARM_BUDGET_SECONDS = 20.0
MIN_REPEATS = 3
#: Warm runs go on until this many seconds have passed (and ``--repeats`` runs).
WARM_MIN_SECONDS = 2.0
TARGET = ("n1", "t0150")
STATEMENTS = {
    "describe": "DESCRIBE TABLE n1.t0150",
    "show_tables": "SHOW TABLES IN n1",
    "columns_point": (
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'n1' AND table_name = 't0150'"
    ),
    "versions": "SELECT * FROM system.versions ORDER BY version DESC LIMIT 3",
}
OPERATIONS = (*STATEMENTS, "reflection")
PYICEBERG_OPERATIONS = ("load_table", "list_tables", "table_exists")
#: Our statement -> pyiceberg's equivalent (system.versions has none).
EQUIVALENT = {
    "describe": ("load_table",),
    "show_tables": ("list_tables",),
    "columns_point": ("load_table",),
    "reflection": ("load_table", "table_exists"),
}


def names(n: int) -> list[tuple[str, str]]:
    return [(f"n{i // NAMESPACE_SIZE}", f"t{i % NAMESPACE_SIZE:04d}") for i in range(n)]


# -- building -----------------------------------------------------------------------


def build_trinity(uri: str, n: int) -> dict[str, Any]:
    from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
    from trinity_dbapi.lakehouse import Lakehouse
    from trinity_dbapi.tables import managed

    lake = Lakehouse.create(uri)
    columns = (
        Column(1, "id", DataType("int8"), nullable=False),
        Column(2, "name", DataType.varchar(64)),
        Column(3, "amount", DataType("float8")),
        Column(4, "qty", DataType("int4")),
        Column(5, "flag", DataType("boolean")),
        Column(6, "note", DataType.varchar(200)),
        Column(7, "code", DataType.varchar(8)),
        Column(8, "score", DataType("int8")),
    )
    all_names = names(n)
    start = time.perf_counter()
    for lo in range(0, n, BUILD_BATCH):
        with lake.begin() as txn:
            for namespace, table in all_names[lo : lo + BUILD_BATCH]:
                if table == "t0000":
                    txn.create_namespace(namespace)
                txn.create_table(
                    namespace, TableDefinition(table, columns, table_format=managed.TABLE_FORMAT)
                )
            txn.commit()
    seconds = time.perf_counter() - start
    # Three ordinary commits of one table each: ``system.versions ... LIMIT 3``
    # then reads the same three small versions at every size. Otherwise it
    # would measure the build's batches (1,000 changed keys per version at
    # 1,000 tables, 5,000 above), which a row per changed key must return.
    for i in range(3):
        with lake.begin() as txn:
            table = txn.load_table("n0", f"t{i:04d}")
            txn.replace_table("n0", table.replace(properties={"comment": f"touched {i}"}))
            txn.commit()
    return {
        "tables": n,
        "depth": lake.snapshot().depth(),
        "build_seconds": round(seconds, 2),
        "tables_per_second": round(n / seconds),
    }


def build_pyiceberg(base: Path, n: int) -> dict[str, Any] | None:
    try:
        import pyiceberg
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.schema import Schema
        from pyiceberg.types import LongType, NestedField, StringType
    except ImportError:
        return None
    (base / "warehouse").mkdir(parents=True)
    catalog = SqlCatalog(
        "bench", uri=f"sqlite:///{base}/catalog.db", warehouse=f"file://{base}/warehouse"
    )
    start = time.perf_counter()
    catalog.create_namespace("template")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        *(NestedField(i, f"c{i}", StringType(), required=False) for i in range(2, 9)),
    )
    template = catalog.create_table(("template", "t"), schema)
    location = template.metadata_location
    data = Path(location.removeprefix("file://")).read_bytes()
    files = base / "metadata"
    files.mkdir()
    rows, namespaces = [], set()
    for namespace, table in names(n):
        path = files / f"{namespace}.{table}.metadata.json"
        path.write_bytes(data)
        rows.append(("bench", namespace, table, f"file://{path}", None))
        namespaces.add(namespace)
    db = sqlite3.connect(base / "catalog.db")
    with db:
        db.executemany(
            "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
            "metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
            "property_value) VALUES (?, ?, 'exists', 'true')",
            [("bench", ns) for ns in sorted(namespaces)],
        )
    db.close()
    seconds = time.perf_counter() - start
    return {"tables": n, "build_seconds": round(seconds, 2), "version": pyiceberg.__version__}


# -- measuring: one operation --------------------------------------------------------


def _is_definition(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "-table-" in name or "-namespace-" in name


class Recorder:
    """Every backend read of this process's local storages (cache hits excluded)."""

    def __init__(self) -> None:
        from trinity_dbapi.storage.local import LocalStorage

        self.paths: list[str] = []
        original = LocalStorage._read

        def recording_read(storage: Any, path: str) -> bytes:
            self.paths.append(path)
            return original(storage, path)

        LocalStorage._read = recording_read  # type: ignore[method-assign]

    def mark(self) -> int:
        return len(self.paths)

    def since(self, mark: int) -> tuple[int, int]:
        """(reads, definition-file reads) since ``mark``."""
        new = self.paths[mark:]
        return len(new), sum(_is_definition(p) for p in new)


def run_trinity(uri: str, op: str, conn: Any, engine: Any) -> int:
    """Run ``op`` once; return the number of rows (or columns) it gave."""
    if op == "reflection":
        import sqlalchemy as sa

        inspector = sa.inspect(engine)
        cols = inspector.get_columns(TARGET[1], schema=TARGET[0])
        assert inspector.has_table(TARGET[1], schema=TARGET[0])
        return len(cols)
    cur = conn.cursor()
    cur.execute(STATEMENTS[op])
    return len(cur.fetchall())


def run_pyiceberg(op: str, catalog: Any) -> int:
    if op == "load_table":
        return len(catalog.load_table(TARGET).schema().fields)
    if op == "list_tables":
        return len(catalog.list_tables(TARGET[0]))
    assert catalog.table_exists(TARGET)
    return 1


def open_trinity(uri: str, op: str) -> tuple[Any, Any, Any]:
    """(connection, engine, storage whose counters the operation moves)."""
    if op == "reflection":
        import sqlalchemy as sa

        engine = sa.create_engine(f"trinity:///{uri}")
        raw = engine.raw_connection()
        storage = raw.driver_connection.lakehouse.storage
        raw.close()
        return None, engine, storage
    import trinity_dbapi

    conn = trinity_dbapi.connect(uri)
    return conn, None, conn.lakehouse.storage


def open_pyiceberg(base: str) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalog(
        "bench", uri=f"sqlite:///{base}/catalog.db", warehouse=f"file://{base}/warehouse"
    )


def child(kind: str, location: str, op: str) -> None:
    """Cold: the one operation in this fresh process; print its figures as JSON."""
    # Imports come before the clock starts: the figure is the catalog's, not Python's.
    if kind == "pyiceberg":
        import pyiceberg.catalog.sql  # noqa: F401

        t0 = time.perf_counter()
        rows = run_pyiceberg(op, open_pyiceberg(location))
        print(json.dumps({"ms": 1000 * (time.perf_counter() - t0), "rows": rows}))
        return
    import trinity_dbapi

    if op == "reflection":
        import sqlalchemy  # noqa: F401

        import trinity_dbapi.sqlalchemy  # noqa: F401

    recorder = Recorder()
    t0 = time.perf_counter()
    conn, engine, storage = open_trinity(location, op)
    rows = run_trinity(location, op, conn, engine)
    ms = 1000 * (time.perf_counter() - t0)
    reads, definitions = recorder.since(0)
    out = {"ms": ms, "rows": rows, "reads": reads, "definition_reads": definitions}
    out["counter_reads"] = storage.stats.reads  # this connection's own storage
    print(json.dumps(out))


def cold(kind: str, location: str, op: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, location, op],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _warm_done(runs: int, repeats: int, elapsed: float) -> bool:
    """Whether warm runs stop: ``repeats`` runs and ``WARM_MIN_SECONDS`` both done.

    A sub-millisecond statement so gets hundreds of runs, whose median no
    single pause of a shared machine moves; a slow one (a whole-catalog scan
    at 100,000 tables) stops after ``WARM_BUDGET_SECONDS`` once
    ``MIN_REPEATS`` are done.
    """
    if runs >= MIN_REPEATS and elapsed > WARM_BUDGET_SECONDS:
        return True
    return runs >= repeats and elapsed >= WARM_MIN_SECONDS


def warm_trinity(uri: str, op: str, repeats: int) -> dict[str, Any]:
    conn, engine, storage = open_trinity(uri, op)
    run_trinity(uri, op, conn, engine)
    times, reads = [], []
    start = time.perf_counter()
    for i in itertools.count():
        if _warm_done(i, repeats, time.perf_counter() - start):
            break
        before = storage.stats.snapshot()
        t0 = time.perf_counter()
        run_trinity(uri, op, conn, engine)
        times.append(time.perf_counter() - t0)
        reads.append(storage.stats.since(before).reads)
    if conn is not None:
        conn.close()
    else:
        engine.dispose()
    return {
        "ms": round(1000 * statistics.median(times), 3),
        "reads": statistics.median_low(reads),
        "runs": len(times),
    }


def warm_pyiceberg(base: str, op: str, repeats: int) -> dict[str, Any]:
    catalog = open_pyiceberg(base)
    run_pyiceberg(op, catalog)
    times = []
    start = time.perf_counter()
    for i in itertools.count():
        if _warm_done(i, repeats, time.perf_counter() - start):
            break
        t0 = time.perf_counter()
        run_pyiceberg(op, catalog)
        times.append(time.perf_counter() - t0)
    return {"ms": round(1000 * statistics.median(times), 3)}


# -- one size, checks, main -----------------------------------------------------------


def warm_child(kind: str, location: str, op: str, repeats: str, min_seconds: str) -> None:
    """Warm: the statement repeated in this fresh process; print its figures as JSON.

    A process of its own, as a user's is: the benchmark's own, which just
    built 100,000 definitions, has a heap whose garbage collection would be
    billed to whichever statement runs next.
    """
    global WARM_MIN_SECONDS
    WARM_MIN_SECONDS = float(min_seconds)
    if kind == "pyiceberg":
        print(json.dumps(warm_pyiceberg(location, op, int(repeats))))
    else:
        print(json.dumps(warm_trinity(location, op, int(repeats))))


def warm(kind: str, location: str, op: str, repeats: int) -> dict[str, Any]:
    args = ["--warm-child", kind, location, op, str(repeats), str(WARM_MIN_SECONDS)]
    done = subprocess.run(
        [sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def bench_size(n: int, root: Path, repeats: int) -> dict[str, Any]:
    uri = str(root / f"lake-{n}")
    built = build_trinity(uri, n)
    ours: dict[str, Any] = {}
    for op in OPERATIONS:
        c = cold("trinity", uri, op)
        w = warm("trinity", uri, op, repeats)
        ours[op] = {
            "cold_ms": round(c["ms"], 2),
            "cold_reads": c["reads"],
            "cold_counter_reads": c["counter_reads"],
            "cold_definition_reads": c["definition_reads"],
            "warm_ms": w["ms"],
            "warm_reads": w["reads"],
            "warm_runs": w["runs"],
            "rows": c["rows"],
        }
    theirs: dict[str, Any] | None = None
    base = root / f"pyiceberg-{n}"
    peer = build_pyiceberg(base, n)
    if peer is not None:
        theirs = {"build": peer}
        for op in PYICEBERG_OPERATIONS:
            c = cold("pyiceberg", str(base), op)
            theirs[op] = {
                "cold_ms": round(c["ms"], 2),
                "warm_ms": warm("pyiceberg", str(base), op, repeats)["ms"],
            }
    shutil.rmtree(base, ignore_errors=True)
    return {"build": built, "trinity": ours, "pyiceberg_sqlcatalog": theirs}


def print_size(n: int, figures: dict[str, Any]) -> None:
    b = figures["build"]
    print(
        f"{n:>9,} tables | depth {b['depth']} | build {b['build_seconds']} s "
        f"({b['tables_per_second']:,} tables/s)",
        flush=True,
    )
    for op, f in figures["trinity"].items():
        print(
            f"    {op:<14} cold {f['cold_ms']:9.1f} ms {f['cold_reads']:>6} reads "
            f"({f['cold_definition_reads']} definitions) | warm {f['warm_ms']:9.2f} ms "
            f"{f['warm_reads']:>6} reads",
            flush=True,
        )
    theirs = figures["pyiceberg_sqlcatalog"]
    for op in PYICEBERG_OPERATIONS if theirs else ():
        f = theirs[op]
        print(f"    pyiceberg {op:<13} cold {f['cold_ms']:9.1f} ms | warm {f['warm_ms']:9.2f} ms")


def checks_for(results: dict[str, dict[str, Any]]) -> dict[str, bool]:
    sizes = sorted(results, key=int)
    ours = {n: results[n]["trinity"] for n in sizes}
    checks = {
        "cold_describe_reads_within_depth_plus_3": all(
            ours[n]["describe"]["cold_reads"] <= results[n]["build"]["depth"] + 3 for n in sizes
        ),
        "show_tables_reads_no_definition_file": all(
            ours[n]["show_tables"]["cold_definition_reads"] == 0 for n in sizes
        ),
    }
    small, large = sizes[0], sizes[-1]
    for op in OPERATIONS if small != large else ():  # one size has nothing to compare
        checks[f"warm_{op}_largest_within_1_5x_smallest"] = (
            ours[large][op]["warm_ms"] <= 1.5 * ours[small][op]["warm_ms"]
        )
    if "100000" in ours:
        checks["warm_describe_at_most_5ms_at_100k"] = ours["100000"]["describe"]["warm_ms"] <= 5
        checks["warm_reflection_at_most_30ms_at_100k"] = (
            ours["100000"]["reflection"]["warm_ms"] <= 30
        )
    if all(results[n]["pyiceberg_sqlcatalog"] for n in sizes):
        for op, peers in EQUIVALENT.items():
            checks[f"{op}_faster_than_pyiceberg"] = all(
                ours[n][op]["warm_ms"]
                < sum(results[n]["pyiceberg_sqlcatalog"][p]["warm_ms"] for p in peers)
                for n in sizes
            )
    return checks


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(*sys.argv[2:])
        return 0
    if argv is None and len(sys.argv) == 7 and sys.argv[1] == "--warm-child":
        warm_child(*sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--full", action="store_true", help="add 1,000,000 tables")
    parser.add_argument("--repeats", type=int, default=20, help="warm runs per statement")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.full and 1_000_000 not in sizes:
        sizes.append(1_000_000)
    repeats = args.repeats
    if args.quick:
        global WARM_MIN_SECONDS
        sizes, repeats, WARM_MIN_SECONDS = [600, 1200], 3, 0.0
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="trinity-catalog-bench-") as tmp:
        for n in sizes:
            results[str(n)] = bench_size(n, Path(tmp), repeats)
            print_size(n, results[str(n)])
            shutil.rmtree(Path(tmp) / f"lake-{n}", ignore_errors=True)
    report = {"sizes": results, "repeats": repeats, "checks": checks_for(results)}
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
