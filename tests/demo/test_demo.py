"""The Quickstart's demo, run as a user runs it, its printed numbers checked against SQL.

Each result the demo prints is recomputed three ways: by the driver at the
version the demo ran it on (time travel), by pyarrow over the generated data
(an oracle that shares no code with the SQL path), and, for the DuckDB
bridge and pandas, by the driver at the end.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import trinity_dbapi
from tests.terminal import run_on_terminal
from trinity_dbapi import demo
from trinity_dbapi.cli import format_table
from trinity_dbapi.demo import data


def _run(cwd: Path, *prelude: str) -> list[str]:
    """Run the demo in ``cwd`` as ``trinity-demo`` does; its stdout lines (stderr must be empty)."""
    code = "\n".join(
        [*prelude, "import sys", "from trinity_dbapi.demo import main", "sys.exit(main())"]
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no warnings, no leak reports at exit
    return done.stdout.splitlines()


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("demo")
    return folder, _run(folder)


def _lake(folder: Path) -> Any:
    return trinity_dbapi.connect(str(folder / "demo-lakehouse"), create=False, read_only=True)


def _as_of(sql: str, version: int) -> str:
    """``sql`` with every demo table read at ``version``."""
    return re.sub(
        r"\bshop\.(orders|customers)\b", rf"shop.\1 FOR SYSTEM_VERSION AS OF {version}", sql
    )


def _table(conn: Any, sql: str, params: Sequence[Any] = ()) -> str:
    """What the demo prints for ``sql``: its echo-less aligned table."""
    cur = conn.cursor()
    cur.execute(sql, params)
    return format_table([d[0] for d in cur.description], cur.fetchall())


def _block(lines: list[str], text: str) -> bool:
    """Whether ``text``'s lines appear in ``lines``, in a row."""
    want = text.splitlines()
    return any(lines[i : i + len(want)] == want for i in range(len(lines) - len(want) + 1))


def _versions(lines: list[str]) -> dict[str, int]:
    """The versions the demo printed: the load's, and the parameters of its time travel."""
    (load,) = [
        int(m.group(1)) for line in lines if (m := re.search(r"one new version \((\d+)\)", line))
    ]
    params = [line for line in lines if "-- parameters:" in line]
    before = int(params[2].split(":")[1].split(",")[0])  # BEFORE_AND_AFTER's
    rollback_to = int(params[4].split(":")[1])  # CALL system.rollback_to_version's
    return {"load": load, "before_changes": before, "rollback_to": rollback_to}


def test_first_run_prints_the_main_job(first_run: tuple[Path, list[str]]) -> None:
    _, lines = first_run
    assert re.fullmatch(r"created a lakehouse in file://.*/demo-lakehouse/ \(version 0\)", lines[0])
    for heading in (
        "== Load 300,000 orders into a partitioned, indexed table, in one transaction ==",
        "== A second table: 20,000 customers, by executemany ==",
        "== Queries: an aggregate, a join, a point query served by the index ==",
        "== Changes, time travel and a rollback ==",
        "== The catalog ==",
        "== pandas, through the SQLAlchemy dialect ==",
        "== DuckDB, through the bridge ==",
    ):
        assert heading in lines
    assert '>>> cur.ingest("orders", orders, namespace="shop")  # 300,000 generated rows' in lines
    assert "300000" in lines
    assert "OK, 20000 rows affected" in lines
    assert lines[-2].startswith("demo finished in ")
    assert lines[-1] == "explore it: trinity demo-lakehouse    (then SHOW TABLES IN shop; or .help)"


def test_the_load_is_one_transaction(first_run: tuple[Path, list[str]]) -> None:
    folder, lines = first_run
    load = _versions(lines)["load"]
    with _lake(folder) as conn:
        changed = conn.execute(
            "SELECT changed_objects FROM system.versions WHERE version = ?", [load]
        ).fetchone()[0]
        assert changed == ["namespace shop", "table shop.orders"]
        count = f"SELECT count(*) FROM shop.orders FOR SYSTEM_VERSION AS OF {load}"
        assert conn.execute(count).fetchone() == (demo.ORDERS,)
        with pytest.raises(trinity_dbapi.ProgrammingError, match=r"shop"):
            conn.execute(count.replace(str(load), str(load - 1))).fetchall()
        partitions = conn.execute(
            "SELECT partition_columns, properties FROM system.tables WHERE table_name = 'orders'"
        ).fetchone()
        assert partitions[0] == ["order_month"]


def test_query_results_match_sql_and_the_generated_data(first_run: tuple[Path, list[str]]) -> None:
    folder, lines = first_run
    versions = _versions(lines)
    orders = data.orders(demo.ORDERS, demo.CUSTOMERS)
    with _lake(folder) as conn:
        at = versions["before_changes"]
        by_month = _table(conn, _as_of(demo.BY_MONTH, at))
        assert _block(lines, by_month)
        assert _block(lines, _table(conn, _as_of(demo.BY_COUNTRY, at)))
        assert _block(lines, _table(conn, _as_of(demo.POINT, at), [demo.POINT_ORDER]))
    # The oracle: pyarrow over the generated rows.
    grouped = orders.group_by("order_month").aggregate([("order_id", "count"), ("amount", "sum")])
    oracle = sorted(zip(*(grouped[c].to_pylist() for c in grouped.column_names), strict=True))
    printed = [
        (dt.date.fromisoformat(cells[0].strip()), int(cells[1]), Decimal(cells[2]))
        for cells in (line.split("|") for line in lines)
        if len(cells) == 4 and re.fullmatch(r" \d{4}-\d\d-01 +", cells[0])
    ]
    assert [(m, n, s) for m, n, s in printed] == [(m, n, s) for m, n, s in oracle]
    row = orders.filter(pc.equal(orders["order_id"], demo.POINT_ORDER)).to_pylist()[0]
    point = next(line for line in lines if line.startswith(f"   {demo.POINT_ORDER} |"))
    assert [cell.strip() for cell in point.split("|")] == [
        str(row["order_id"]),
        row["order_month"].isoformat(),
        str(row["ordered_at"]),
        str(row["customer_id"]),
        row["status"],
        str(row["amount"]),
    ]


def test_the_index_reads_one_file_of_twelve(first_run: tuple[Path, list[str]]) -> None:
    _, lines = first_run
    assert (
        "-- EXPLAIN ANALYZE: the point query read 1 data file of 12 "
        "(the index on order_id picked it);" in lines
    )
    assert "-- the same lookup by customer_id, which has no index, read all 12" in lines


def test_changes_time_travel_and_rollback(first_run: tuple[Path, list[str]]) -> None:
    folder, lines = first_run
    versions = _versions(lines)
    orders = data.orders(demo.ORDERS, demo.CUSTOMERS)
    cancelled = pc.sum(pc.equal(orders["status"], "cancelled")).as_py()
    assert "OK, 1 row affected" in lines
    assert f"OK, {cancelled} rows affected" in lines
    with _lake(folder) as conn:
        after_delete = versions["rollback_to"] + 1
        sql = demo.BEFORE_AND_AFTER.replace(
            "FROM shop.orders GROUP BY",
            f"FROM shop.orders FOR SYSTEM_VERSION AS OF {after_delete} GROUP BY",
        )
        travelled = _table(conn, sql, [versions["before_changes"]])
        assert _block(lines, travelled)
        assert f" cancelled | {cancelled:>6} |      0 |" in travelled
        point = _table(
            conn,
            demo.POINT_BEFORE_AND_AFTER.replace(
                "FROM shop.orders WHERE",
                f"FROM shop.orders FOR SYSTEM_VERSION AS OF {after_delete} WHERE",
            ),
            [versions["before_changes"], demo.POINT_ORDER, demo.POINT_ORDER],
        )
        assert _block(lines, point)
        assert " after   | returned  |   0.00" in point
        # The rollback: a new version equal to the one after the UPDATE.
        rolled = conn.execute(
            "SELECT max(version), min_by(rollback_from_root, -version) FROM system.versions"
        ).fetchone()
        assert rolled[1] is not None
        rollback_row = f" {versions['rollback_to']:>14} | {rolled[0]:>11}"
        assert rollback_row in lines
        assert _block(lines, _table(conn, demo.AFTER_ROLLBACK))
        assert conn.execute(demo.AFTER_ROLLBACK).fetchone() == (demo.ORDERS, cancelled)
        for sql in demo.CATALOG:
            assert _block(lines, _table(conn, sql))


def test_pandas_and_duckdb_print_what_the_driver_computes(
    first_run: tuple[Path, list[str]],
) -> None:
    folder, lines = first_run
    with _lake(folder) as conn:
        segments = conn.execute(demo.READ_SQL).fetchall()
        statuses = conn.execute(demo.DUCKDB_SQL).fetchall()
    frame = lines.index('... GROUP BY c.segment ORDER BY revenue DESC""", engine)') + 1
    for index, (segment, orders, revenue) in enumerate(segments):
        line = lines[frame + 1 + index].strip()
        assert re.fullmatch(rf"{index} +{segment} +{orders} +{revenue}", line)
    box = [line for line in lines if line.startswith("│ ") and "varchar" not in line]
    rows = [[cell.strip() for cell in line.strip("│").split("│")] for line in box[1:]]
    assert rows == [[s, str(n), str(r)] for s, n, r in statuses]
    attached = r"Attached\('file://.*/demo-lakehouse/', version=\d+, prefix=''\)"
    assert any(re.fullmatch(attached, line) for line in lines)


def test_a_second_run_starts_over_and_prints_the_same(first_run: tuple[Path, list[str]]) -> None:
    folder, first = first_run
    second = _run(folder)
    assert re.fullmatch(
        r"opened the lakehouse in file://.*/demo-lakehouse/ \(version \d+\)", second[0]
    )

    def results(lines: list[str]) -> list[str]:
        # Everything but timings, with numbers (versions among them) and the
        # padding their widths decide made alike.
        # The load's entry in system.versions also names the table it drops on a rerun.
        skipped = ("demo finished", "-- 300,000", " N | namespace shop")
        kept = (line for line in lines if not re.sub(r" *\d+", " N", line).startswith(skipped))
        return [re.sub(r" +", " ", re.sub(r"-+", "-", re.sub(r"\d+", "N", x))) for x in kept]

    assert results(first)[1:] == results(second)[1:]
    # Each run makes the same versions on top of the last: 6 on an empty lakehouse.
    assert _final_version(first) == 6
    assert _final_version(second) == 2 * _final_version(first)
    with _lake(folder) as conn:
        assert conn.execute("SELECT max(version) FROM system.versions").fetchone() == (12,)


def _final_version(lines: list[str]) -> int:
    (version,) = [int(m.group(1)) for line in lines if (m := re.search(r"version=(\d+)", line))]
    return version


#: Makes ``import pandas`` fail as it does where pandas is not installed.
NO_PANDAS = (
    "import sys",
    textwrap.dedent(
        """
        class _NoPandas:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "pandas":
                    raise ModuleNotFoundError(f"No module named {name!r}")
        """
    ),
    "sys.meta_path.insert(0, _NoPandas())",
)


def test_without_pandas_the_step_is_one_line(tmp_path: Path) -> None:
    lines = _run(tmp_path, *NO_PANDAS)
    at = lines.index("== pandas, through the SQLAlchemy dialect ==")
    assert lines[at + 2] == (
        'skipped: pandas and SQLAlchemy are not installed (pip install ".[pandas]")'
    )
    assert lines[at + 4] == "== DuckDB, through the bridge =="
    assert "== The catalog ==" in lines  # everything else ran


def test_sample_data_is_deterministic_and_shaped_like_a_shop() -> None:
    first, again = data.orders(1_000, 100), data.orders(1_000, 100)
    assert first.equals(again)
    assert first.schema.field("amount").type == pa.decimal128(12, 2)
    assert first["order_id"].to_pylist() == list(range(1, 1_001))
    assert pc.all(pc.greater_equal(first["amount"], Decimal("0.99"))).as_py()
    months = pc.unique(first["order_month"]).to_pylist()
    assert months == [dt.date(data.YEAR, m, 1) for m in range(1, 13)]
    customers = data.customers(100)
    assert customers["customer_id"].to_pylist() == list(range(1, 101))
    assert set(customers["country"].to_pylist()) <= set(data.COUNTRIES)
    assert pc.max(first["customer_id"]).as_py() <= 100


def test_the_bulk_load_draws_a_bar_when_stdout_is_a_terminal(tmp_path: Path) -> None:
    code, stderr, screen = run_on_terminal(
        [sys.executable, "-m", "trinity_dbapi.demo", str(tmp_path / "lake")], stream="stdout"
    )
    assert (code, stderr) == (0, "")
    # tqdm's last frame of the load's bar, and the demo's output around it.
    assert re.search(r"insert into shop\.orders: 100%\|[^\r\n]*\| 300000/300000 \[", screen)
    assert "rows/s]" in screen
    assert "== Queries: an aggregate, a join, a point query served by the index ==" in screen
    assert "demo finished in " in screen
