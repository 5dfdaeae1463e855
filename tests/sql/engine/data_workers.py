"""Workers for the multi-process data tests (importable, so ``spawn`` finds them).

``branch`` (a keyword): the branch a worker's connection is on (None: main).
"""

from __future__ import annotations

import traceback
from typing import Any

import trinity_dbapi
from trinity_dbapi.lakehouse.transaction import RetryPolicy

RETRY = RetryPolicy(max_attempts=200, base_delay=0.002, max_delay=0.05)


def appender(
    uri: str,
    worker: int,
    batches: int,
    rows: int,
    start: Any,
    results: Any,
    *,
    branch: str | None = None,
    retry: RetryPolicy = RETRY,
) -> None:
    """Append ``batches`` batches of ``rows`` rows (k = worker) to ns.t, one commit each.

    ``retry``: the connection's (``max_attempts=1`` makes a lost race an error).
    """
    try:
        conn = trinity_dbapi.connect(uri, autocommit=True, create=False, retry=retry, branch=branch)
        cur = conn.cursor()
        start.wait()
        for batch in range(batches):
            data = [(worker, batch * rows + i) for i in range(rows)]
            cur.executemany("INSERT INTO ns.t (k, v) VALUES (?, ?)", data)
        results.put((worker, "ok", batches * rows))
    except Exception:  # noqa: BLE001 - reported, not raised: the parent checks every outcome
        results.put((worker, "error", traceback.format_exc()))


def deleter(
    uri: str, worker: int, target: int, start: Any, results: Any, *, branch: str | None = None
) -> None:
    """Delete every row of ns.t with k = target, retrying on conflicts."""
    try:
        conn = trinity_dbapi.connect(
            uri,
            autocommit=True,
            create=False,
            retry=RETRY,
            isolation_level="SNAPSHOT",
            branch=branch,
        )
        cur = conn.cursor()
        start.wait()
        for _ in range(100):
            try:
                cur.execute("DELETE FROM ns.t WHERE k = ?", [target])
                break
            except trinity_dbapi.OperationalError:
                continue  # a concurrent rewrite of the same files: run it again
        results.put((worker, "ok", cur.rowcount))
    except Exception:  # noqa: BLE001 - reported to the parent
        results.put((worker, "error", traceback.format_exc()))


def compactor(uri: str, worker: int, rounds: int, isolation: str, start: Any, results: Any) -> None:
    """Compact ns.t ``rounds`` times while others write; report the files it rewrote."""
    try:
        conn = trinity_dbapi.connect(
            uri, autocommit=True, create=False, retry=RETRY, isolation_level=isolation
        )
        cur = conn.cursor()
        start.wait()
        rewritten = 0
        for _ in range(rounds):
            try:
                cur.execute("CALL system.rewrite_data_files('ns.t')")
                rewritten += cur.fetchone()[1]
            except trinity_dbapi.OperationalError:
                continue  # a concurrent rewrite of one of its files: the next round plans anew
        results.put((worker, "ok", rewritten))
    except Exception:  # noqa: BLE001 - reported to the parent
        results.put((worker, "error", traceback.format_exc()))


def merger(uri: str, worker: int, rounds: int, start: Any, results: Any) -> None:
    """``MERGE BRANCH dev`` into main ``rounds`` times while others write; report the merges.

    A merge that loses to a concurrent commit on what it changes is run again
    (as a user would): the next round merges from the new state.
    """
    try:
        conn = trinity_dbapi.connect(uri, autocommit=True, create=False, retry=RETRY)
        cur = conn.cursor()
        start.wait()
        merged = 0
        for _ in range(rounds):
            try:
                cur.execute("MERGE BRANCH dev")
                merged += 1
            except trinity_dbapi.OperationalError:
                continue
        results.put((worker, "ok", merged))
    except Exception:  # noqa: BLE001 - reported to the parent
        results.put((worker, "error", traceback.format_exc()))
