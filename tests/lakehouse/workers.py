"""Worker functions run in other processes by the concurrency and crash tests.

They are top-level functions of an importable module so the multiprocessing
``spawn`` start method can find them. Each worker opens the lakehouse itself
from ``(uri, storage_options)`` and reports through a queue (or a log file)
instead of raising, so the parent sees every outcome.

Every worker takes ``branch``: the branch it commits on (None: main), so
each suite runs on main and on a branch alike.

Run as a script (``python -m tests.lakehouse.workers crash-writer URI LOG
[OPTIONS [BRANCH]]``) it is the crash test's writer: it commits forever and
logs every commit; ``kill-at SCENARIO URI K before|after`` runs one statement
of :data:`KILL_SCENARIOS` and SIGKILLs itself at its ``K``-th write
(test_branch_crash.py).
"""

from __future__ import annotations

import json
import os
import random
import sys
import traceback
from typing import Any

from trinity_dbapi.errors import CommitConflictError, RetriesExhaustedError
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.transaction import RetryPolicy

#: The shared keys the read-modify-write workers touch besides the counter.
SHARED_KEYS = ("s0", "s1", "s2", "s3")
COUNTER = "counter"


def open_chain(uri: str, options: dict[str, Any], branch: str | None) -> Lakehouse:
    """The lakehouse at ``uri`` as ``branch`` sees it (main when None), freshly opened."""
    lake = Lakehouse.open(uri, storage_options=options)
    return lake if branch is None else lake.on_branch(branch)


def distinct_key_worker(
    uri: str,
    options: dict[str, Any],
    worker: int,
    commits: int,
    branch: str | None,
    max_attempts: int,
    start: Any,
    results: Any,
) -> None:
    """Commit ``commits`` transactions on ``branch``, each writing one key no other worker writes.

    ``max_attempts``: the retry policy's; 1 makes any lost race an error.
    Puts ``{"worker", "commits": [(version, key, value)], "attempts", "error"}``
    on ``results`` (``attempts``: each commit's attempts to create its root).
    """
    report: dict[str, Any] = {"worker": worker, "commits": [], "error": None, "pid": os.getpid()}
    report["attempts"] = []
    try:
        lake = open_chain(uri, options, branch)
        retry = RetryPolicy(max_attempts=max_attempts, base_delay=0.002, max_delay=0.05)
        start.wait(60)
        for i in range(commits):
            key, value = f"w{worker}-{i:03d}", f"{worker}:{i}"
            txn = lake.begin(isolation="SNAPSHOT" if i % 2 else "SERIALIZABLE", retry=retry)
            txn.put(key, value)
            report["commits"].append((txn.commit().version, key, value))
            report["attempts"].append(txn.attempts)
    except BaseException:  # noqa: BLE001 - every failure is reported to the parent
        report["error"] = traceback.format_exc()
    results.put(report)


def shared_key_worker(
    uri: str,
    options: dict[str, Any],
    worker: int,
    transactions: int,
    isolation: str,
    seed: int,
    branch: str | None,
    start: Any,
    results: Any,
) -> None:
    """Run read-modify-write transactions on ``branch``'s shared counter and shared keys.

    Each transaction reads the counter and two shared keys; with probability
    3/4 it increments the counter, and it sets (or sometimes deletes) one of
    the shared keys it read. Outcomes are ``committed`` (with the version, the
    snapshot version, the transaction id, its reads and its writes),
    ``conflict``, ``exhausted``, or ``error`` with a traceback: the parent
    fails on the last.
    """
    rng = random.Random(seed)
    outcomes: list[dict[str, Any]] = []
    report: dict[str, Any] = {"worker": worker, "outcomes": outcomes, "error": None}
    try:
        lake = open_chain(uri, options, branch)
        retry = RetryPolicy(max_attempts=50, base_delay=0.001, max_delay=0.05)
        start.wait(60)
        for i in range(transactions):
            txn = lake.begin(isolation=isolation, retry=retry)
            reads: dict[str, str | None] = {COUNTER: txn.get(COUNTER)}
            for key in rng.sample(SHARED_KEYS, 2):
                reads[key] = txn.get(key)
            writes: dict[str, str | None] = {}
            if rng.random() < 0.75:
                writes[COUNTER] = str(int(reads[COUNTER] or "0") + 1)
            target = rng.choice([k for k in reads if k != COUNTER])
            writes[target] = None if rng.random() < 0.2 else f"w{worker}-{i}"
            for key, value in writes.items():
                if value is None:
                    txn.delete(key)
                else:
                    txn.put(key, value)
            outcome: dict[str, Any] = {"worker": worker, "index": i}
            try:
                snap = txn.commit()
            except CommitConflictError as exc:
                outcome.update(outcome="conflict", key=exc.key, version=exc.version)
            except RetriesExhaustedError as exc:
                outcome.update(outcome="exhausted", attempts=exc.attempts)
            except Exception:  # noqa: BLE001 - anything else is reported as a failure
                outcome.update(outcome="error", traceback=traceback.format_exc())
            else:
                outcome.update(
                    outcome="committed",
                    version=snap.version,
                    base=txn.snapshot.version,
                    txn_id=txn.id,
                    reads=reads,
                    writes=writes,
                )
            outcomes.append(outcome)
    except BaseException:  # noqa: BLE001 - every failure is reported to the parent
        report["error"] = traceback.format_exc()
    results.put(report)


def crash_writer(uri: str, log_path: str, options: str = "{}", branch: str = "") -> None:
    """Commit forever on a lakehouse, logging each commit, until killed.

    Commit ``k`` writes key ``c{k}`` (value ``str(k)``) and creates namespace
    ``n{k}``, so object definition files are written too. The log gets
    ``ready`` once the lakehouse is open, then ``<version> c<k>`` after every
    commit, flushed and fsynced line by line. ``options``: the storage
    options, as JSON; ``branch``: the branch committed on (empty: main).
    """
    lake = open_chain(uri, json.loads(options), branch or None)
    k = lake.latest_version()
    with open(log_path, "a", encoding="utf-8") as log:
        _log_line(log, "ready")
        while True:
            k += 1
            txn = lake.begin()
            txn.put(f"c{k}", str(k))
            txn.create_namespace(f"n{k}")
            version = txn.commit().version
            _log_line(log, f"{version} c{k}")


#: What the chosen-point crash tests run (test_branch_crash.py), one statement each.
KILL_SCENARIOS = {
    "branch-commit": ("dev", "INSERT INTO t VALUES (6, 'dev')"),
    "merge-into-main": (None, "MERGE BRANCH dev"),
    "merge-into-branch": (None, "MERGE BRANCH dev INTO qa"),
}


def run_scenario(uri: str, scenario: str) -> None:
    """Run one of :data:`KILL_SCENARIOS` on the lakehouse at ``uri``."""
    import trinity_dbapi

    branch, sql = KILL_SCENARIOS[scenario]
    with trinity_dbapi.connect(uri, autocommit=True, create=False, branch=branch) as conn:
        conn.execute(sql)


def kill_at(scenario: str, uri: str, kill_at: str, when: str) -> None:
    """Run ``scenario`` on local ``uri``, SIGKILLing this process at a chosen write.

    Every write-type operation of local storage (an exclusive create: a root;
    a unique create: a node, definition, data or metadata file; a write: a
    hint; a delete) is counted from the statement's start; the
    ``kill_at``-th kills the process ``before`` or ``after`` doing it
    (``root:N``: the ``N``-th root, whatever the parallel file creates around
    it did). With ``kill_at`` 0 nothing is killed and the operations are
    printed as JSON lines ``[kind, path]``, in the order they started.
    """
    import signal
    import threading

    import trinity_dbapi
    from trinity_dbapi.storage.local import LocalStorage

    kind_at, _, number = kill_at.rpartition(":")
    target, count, lock = int(number), {"": 0, "root": 0}, threading.Lock()
    started: list[tuple[str, str]] = []

    def counted(kind: str, method: Any) -> Any:
        def wrapper(self: LocalStorage, path: str, *args: Any) -> Any:
            with lock:  # node files of one level are created in parallel threads
                count[""] += 1
                count["root"] += kind == "root"
                started.append((kind, path))  # numbered as counted: in the order they start
                hit = count[kind_at] == target and kind_at in ("", kind)
                if hit and when == "before":
                    os.kill(os.getpid(), signal.SIGKILL)
            result = method(self, path, *args)
            if hit:
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        return wrapper

    branch, _ = KILL_SCENARIOS[scenario]
    with trinity_dbapi.connect(uri, autocommit=True, create=False, branch=branch) as conn:
        conn.execute("SELECT count(*) FROM t").fetchall()  # the engine is loaded: no writes
    for kind, name in (
        ("root", "_publish"),
        ("file", "_create_unique"),
        ("hint", "_write"),
        ("delete", "_delete"),
    ):
        setattr(LocalStorage, name, counted(kind, getattr(LocalStorage, name)))
    run_scenario(uri, scenario)
    if target == 0:
        print("\n".join(json.dumps(op) for op in started))


def _log_line(log: Any, line: str) -> None:
    log.write(line + "\n")
    log.flush()
    os.fsync(log.fileno())


def main(argv: list[str]) -> int:
    """Command line entry: ``crash-writer URI LOG [OPTIONS [BRANCH]]`` or ``kill-at ...``."""
    if len(argv) in (3, 4, 5) and argv[0] == "crash-writer":
        crash_writer(*argv[1:])
        return 0
    if len(argv) == 5 and argv[0] == "kill-at":
        kill_at(*argv[1:])
        return 0
    print(
        "usage: python -m tests.lakehouse.workers crash-writer URI LOG [OPTIONS [BRANCH]]\n"
        "       python -m tests.lakehouse.workers kill-at SCENARIO URI K before|after",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
