"""Several processes appending to and deleting from the same table at once."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import trinity_dbapi
from tests.sql.engine import data_workers

APPENDERS = 3
BATCHES = 5
ROWS = 40


def test_processes_append_and_delete_concurrently(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    setup = trinity_dbapi.connect(uri, autocommit=True)
    cur = setup.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (k INT4, v INT8) PARTITIONED BY (k)")
    cur.executemany("INSERT INTO ns.t VALUES (?, ?)", [(99, i) for i in range(10)])
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(APPENDERS + 1)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=data_workers.appender, args=(uri, w, BATCHES, ROWS, start, results))
        for w in range(APPENDERS)
    ]
    workers.append(ctx.Process(target=data_workers.deleter, args=(uri, 9, 99, start, results)))
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
