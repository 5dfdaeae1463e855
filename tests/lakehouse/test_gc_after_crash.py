"""Garbage collection removes what writers killed mid-commit left behind."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import tests
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.garbage import reachable_files

REPO_ROOT = Path(tests.__file__).resolve().parent.parent


def _kill_writer_midway(uri: str, log: Path, rng: random.Random) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.lakehouse.workers", "crash-writer", uri, str(log)],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (log.exists() and log.read_text().count("\n") >= 3):
        assert proc.poll() is None and time.monotonic() < deadline, "the writer did not start"
        time.sleep(0.005)
    time.sleep(rng.uniform(0, 0.05))
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_gc_after_killed_writers_keeps_exactly_the_reachable_files(tmp_path: Path) -> None:
    uri = f"file://{tmp_path / 'lake'}"
    Lakehouse.create(uri)
    rng = random.Random(7)
    for round_ in range(12):  # writers killed at random points, until orphans exist
        _kill_writer_midway(uri, tmp_path / f"writer{round_}.log", rng)
        lake = Lakehouse.open(uri)
        before = {p for p, _ in lake.storage.list_with_times("")}
        live = reachable_files(lake)
        if before - live and round_ >= 3:
            break
    assert before - live, "no kill left an orphan behind"
    states = {v: dict(lake.snapshot(v).scan()) for v in range(lake.latest_version() + 1)}

    result = lake.maintenance.collect_garbage(grace_period_millis=0)

    after = {p for p, _ in lake.storage.list_with_times("")}
    assert set(result.deleted) == before - live  # every orphan went...
    assert after == before & live  # ...and nothing reachable did
    reopened = Lakehouse.open(uri)
    for version, state in states.items():  # every version reads exactly as before
        assert dict(reopened.snapshot(version).scan()) == state
        txn = reopened.begin(version=version, read_only=True)
        for namespace in txn.list_namespaces():
            assert txn.load_namespace(namespace).name == namespace
