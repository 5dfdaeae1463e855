"""Several processes appending to and deleting from the same table at once.

On main and on a branch alike; and writers on main and on a branch at once
never contend (each commits at its first attempt) and never see each other's rows;
merges into main run while both sides take writes.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

import trinity_dbapi
from tests.sql.engine import data_workers
from trinity_dbapi.lakehouse.transaction import RetryPolicy

APPENDERS = 3
BATCHES = 5
ROWS = 40


def _table(uri: str) -> trinity_dbapi.Cursor:
    """Table ns.t, partitioned by k, with 10 rows of k = 99; a cursor on main."""
    cur = trinity_dbapi.connect(uri, autocommit=True).cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (k INT4, v INT8) PARTITIONED BY (k)")
    cur.executemany("INSERT INTO ns.t VALUES (?, ?)", [(99, i) for i in range(10)])
    return cur


@pytest.mark.parametrize(
    "branch", [None, pytest.param("dev", marks=pytest.mark.processes)], ids=["main", "branch"]
)
def test_processes_append_and_delete_concurrently(tmp_path: Path, branch: str | None) -> None:
    uri = str(tmp_path / "lake")
    cur = _table(uri)
    if branch is not None:
        cur.execute(f"CREATE BRANCH {branch}")
        cur.execute(f"USE BRANCH {branch}")
    on = {"branch": branch}
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(APPENDERS + 1)
    results = ctx.Queue()
    workers = [
        ctx.Process(
            target=data_workers.appender, args=(uri, w, BATCHES, ROWS, start, results), kwargs=on
        )
        for w in range(APPENDERS)
    ]
    workers.append(
        ctx.Process(target=data_workers.deleter, args=(uri, 9, 99, start, results), kwargs=on)
    )
    for process in workers:
        process.start()
    outcomes = [results.get(timeout=240) for _ in workers]
    for process in workers:
        process.join(timeout=60)
    errors = [o for o in outcomes if o[1] != "ok"]
    assert not errors, errors
    assert sorted(o[2] for o in outcomes if o[0] != 9) == [BATCHES * ROWS] * APPENDERS
    assert [o[2] for o in outcomes if o[0] == 9] == [10]
    # no append was lost, the deleted rows are gone, nothing else was touched
    counts = cur.execute("SELECT k, count(*), count(DISTINCT v) FROM ns.t GROUP BY k ORDER BY k")
    assert counts.fetchall() == [(w, BATCHES * ROWS, BATCHES * ROWS) for w in range(APPENDERS)]
    if branch is not None:  # main still holds exactly what the branch was made from
        cur.execute("USE BRANCH main")
        assert cur.execute("SELECT k, count(*) FROM ns.t GROUP BY k").fetchall() == [(99, 10)]


def test_appenders_on_main_and_a_branch_never_contend(tmp_path: Path) -> None:
    """One appender on main, one on a branch, at once, one attempt each: every commit lands,
    and each chain holds exactly its own rows plus what it had."""
    uri = str(tmp_path / "lake")
    cur = _table(uri)
    cur.execute("CREATE BRANCH dev")
    once = RetryPolicy(max_attempts=1)
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(2)
    results = ctx.Queue()
    workers = [
        ctx.Process(
            target=data_workers.appender,
            args=(uri, w, BATCHES, ROWS, start, results),
            kwargs={"branch": branch, "retry": once},
        )
        for w, branch in enumerate([None, "dev"])
    ]
    for process in workers:
        process.start()
    outcomes = [results.get(timeout=240) for _ in workers]
    for process in workers:
        process.join(timeout=60)
    assert sorted(outcomes) == [(0, "ok", BATCHES * ROWS), (1, "ok", BATCHES * ROWS)]
    count = "SELECT k, count(*), count(DISTINCT v) FROM ns.t GROUP BY k ORDER BY k"
    for chain, worker in (("main", 0), ("dev", 1)):
        cur.execute(f"USE BRANCH {chain}")
        assert cur.execute(count).fetchall() == [
            (worker, BATCHES * ROWS, BATCHES * ROWS),
            (99, 10, 10),
        ], chain


@pytest.mark.processes
def test_merges_while_main_and_the_branch_take_writes(tmp_path: Path) -> None:
    """MERGE BRANCH dev, six times, while one process appends on main and two work on dev
    (one appends, one deletes what the branch was made with): no commit is lost, no row is
    merged twice, and after a last merge main holds both sides' writes. A merge that loses
    to a concurrent commit on main is run again by the merger."""
    uri = str(tmp_path / "lake")
    cur = _table(uri)
    cur.execute("CREATE BRANCH dev")
    dev = {"branch": "dev"}
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(4)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=data_workers.appender, args=(uri, 0, BATCHES, ROWS, start, results)),
        ctx.Process(
            target=data_workers.appender, args=(uri, 1, BATCHES, ROWS, start, results), kwargs=dev
        ),
        ctx.Process(target=data_workers.deleter, args=(uri, 9, 99, start, results), kwargs=dev),
        ctx.Process(target=data_workers.merger, args=(uri, 2, 6, start, results)),
    ]
    for process in workers:
        process.start()
    outcomes = {o[0]: o for o in (results.get(timeout=240) for _ in workers)}
    for process in workers:
        process.join(timeout=60)
    assert [o for o in outcomes.values() if o[1] != "ok"] == []
    assert (outcomes[0][2], outcomes[1][2], outcomes[9][2]) == (BATCHES * ROWS,) * 2 + (10,)
    cur.execute("MERGE BRANCH dev")
    count = "SELECT k, count(*), count(DISTINCT v) FROM ns.t GROUP BY k ORDER BY k"
    assert cur.execute(count).fetchall() == [(w, BATCHES * ROWS, BATCHES * ROWS) for w in (0, 1)]
    cur.execute("USE BRANCH dev")
    assert cur.execute(count).fetchall() == [(1, BATCHES * ROWS, BATCHES * ROWS)]


@pytest.mark.processes
def test_concurrent_merges_of_one_branch_merge_it_once(tmp_path: Path) -> None:
    """Three processes run MERGE BRANCH dev three times each, all at once: one merge commit
    lands, the others find nothing left to merge (or lose the race and run again), and main
    holds the branch's appends once and its deletes."""
    uri = str(tmp_path / "lake")
    cur = _table(uri)
    cur.execute("CREATE BRANCH dev")
    dev = trinity_dbapi.connect(uri, autocommit=True, branch="dev").cursor()
    dev.executemany("INSERT INTO ns.t VALUES (?, ?)", [(1, i) for i in range(ROWS)])
    dev.execute("DELETE FROM ns.t WHERE k = 99 AND v < 5")
    cur.execute("INSERT INTO ns.t VALUES (0, 0)")  # main moved too: no fast-forward
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(3)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=data_workers.merger, args=(uri, w, 3, start, results)) for w in range(3)
    ]
    for process in workers:
        process.start()
    outcomes = [results.get(timeout=240) for _ in workers]
    for process in workers:
        process.join(timeout=60)
    assert [o for o in outcomes if o[1] != "ok"] == []
    count = "SELECT k, count(*), count(DISTINCT v) FROM ns.t GROUP BY k ORDER BY k"
    assert cur.execute(count).fetchall() == [(0, 1, 1), (1, ROWS, ROWS), (99, 5, 5)]
    merges = "SELECT count(*) FROM system.versions WHERE commit_message = 'merge dev into main'"
    assert cur.execute(merges).fetchone() == (1,)
