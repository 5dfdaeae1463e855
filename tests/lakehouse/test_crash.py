"""A writer killed with SIGKILL at a random moment leaves a consistent lakehouse.

The writer (``workers.crash_writer``, a separate Python process) commits in a
loop; commit ``k`` writes key ``c{k}`` and creates namespace ``n{k}`` (so
object definition files are written too) and is logged once it returned. It is
killed at a random moment. Afterwards the lakehouse must open, every version
must be readable, version ``v`` must hold exactly ``c1..cv`` and ``n1..nv``,
and the latest version must be at least the last logged one (a commit may
succeed just before the kill without being logged) and at most one more.

Every trial runs on main and on a branch (``chain``): the branch is made from
version 0, so its commit ``k`` is its version ``k`` too, and main must stay
exactly as it was (the one commit that created the branch).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import tests
from tests.conftest import CLOUD_PARAMS, cloud_root
from trinity_dbapi.lakehouse import Lakehouse, Snapshot
from trinity_dbapi.lakehouse.branches import create_branch

REPO_ROOT = Path(tests.__file__).resolve().parent.parent
READY_TIMEOUT = 60.0


# The branch runs (a process killed per trial) go to CI's process leg.
@pytest.fixture(params=["main", pytest.param("branch", marks=pytest.mark.processes)])
def chain(request: pytest.FixtureRequest) -> str | None:
    """The chain the writer commits on: main (None), or branch ``dev``."""
    return None if request.param == "main" else "dev"


def _logged_versions(log: Path) -> list[int]:
    """Versions the writer logged as committed (a torn last line is ignored)."""
    versions = []
    for line in log.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1] == f"c{parts[0]}":
            versions.append(int(parts[0]))
    return versions


def _wait_for(log: Path, proc: subprocess.Popen[bytes], lines: int) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if log.exists() and len(log.read_text(encoding="utf-8").splitlines()) >= lines:
            return
        if proc.poll() is not None:
            stderr = proc.stderr.read() if proc.stderr is not None else b""
            raise AssertionError(f"writer exited early: {stderr!r}")
        time.sleep(0.005)
    raise AssertionError(f"writer did not log {lines} line(s) in {READY_TIMEOUT} s")


def _user_objects(snap: Snapshot) -> tuple[set[str], set[str]]:
    """The ``c*`` keys and the namespace names visible in a snapshot."""
    txn = snap.lakehouse.begin(version=snap.version, read_only=True)
    keys = {k for k, _ in snap.scan() if k.startswith("c")}
    return keys, set(txn.list_namespaces())


def _crash_trial(
    root: Path,
    rng: random.Random,
    lake: tuple[str, dict[str, Any]] | None = None,
    branch: str | None = None,
) -> tuple[int, int]:
    """Run one writer, kill it, check the lakehouse; return (last logged, latest).

    ``lake``: ``(uri, storage_options)`` of an empty root elsewhere (S3, GCS);
    a folder under ``root`` when None. ``branch``: the writer commits on a
    branch of that name made from version 0 (None: on main).
    """
    root.mkdir(parents=True, exist_ok=True)
    uri, options = lake if lake is not None else (f"file://{root / 'lake'}", {})
    created = Lakehouse.create(uri, storage_options=options)
    if branch is not None:
        create_branch(created, branch, created.snapshot())
    log = root / "writer.log"
    command = ["crash-writer", uri, str(log), json.dumps(options), branch or ""]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.lakehouse.workers", *command],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(log, proc, 1)  # "ready": the lakehouse is open
        # half of the trials kill early, in the first commits; half after a few
        if rng.random() < 0.5:
            _wait_for(log, proc, 1 + rng.randint(1, 8))
        time.sleep(rng.uniform(0, 0.3))
        assert proc.poll() is None, "the writer stopped by itself"
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    logged = _logged_versions(log)
    assert logged == list(range(1, len(logged) + 1))  # one writer: commit k is version k
    last_logged = logged[-1] if logged else 0
    lake = Lakehouse.open(uri, storage_options=options)
    if branch is not None:  # main is exactly as the branch's creation left it
        assert lake.latest_version() == 1
        assert _user_objects(lake.snapshot()) == (set(), set())
        lake = lake.on_branch(branch)
    latest = lake.latest_version()
    assert last_logged <= latest <= last_logged + 1
    for version in range(latest + 1):
        snap = lake.snapshot(version)
        keys, namespaces = _user_objects(snap)
        assert keys == {f"c{k}" for k in range(1, version + 1)}, version
        assert namespaces == {f"n{k}" for k in range(1, version + 1)}, version
        assert all(snap.get(f"c{k}") == str(k) for k in range(1, version + 1))
    # the lakehouse takes new commits after the crash
    with lake.begin() as txn:
        txn.put("after", "crash")
        txn.create_namespace("post")
    reopened = Lakehouse.open(uri, storage_options=options)
    if branch is not None:
        assert reopened.snapshot().get("after") is None
        reopened = reopened.on_branch(branch)
    assert reopened.latest_version() == latest + 1
    assert reopened.snapshot().get("after") == "crash"
    return last_logged, latest


def test_killed_writer_leaves_consistent_lakehouse(tmp_path: Path, chain: str | None) -> None:
    """Five writers killed at random moments: each lakehouse is consistent afterwards."""
    rng = random.Random(20240531)
    for trial in range(5):
        _crash_trial(tmp_path / f"trial{trial}", rng, branch=chain)


@pytest.mark.parametrize("kind", CLOUD_PARAMS)
def test_a_killed_writer_on_an_object_store_leaves_a_consistent_lakehouse(
    request: pytest.FixtureRequest, tmp_path: Path, kind: str, chain: str | None
) -> None:
    """Three writers killed at random moments, on S3 (moto), GCS and Azure (their emulators)."""
    rng = random.Random(20261207)
    for trial in range(3):
        _crash_trial(tmp_path / f"trial{trial}", rng, cloud_root(request, kind), chain)


@pytest.mark.slow
def test_killed_writer_campaign(tmp_path: Path, chain: str | None) -> None:
    """200 kill trials; some must hit the window between commit point and log line."""
    rng = random.Random()
    results = [_crash_trial(tmp_path / f"trial{trial}", rng, branch=chain) for trial in range(200)]
    assert any(latest > 0 for _, latest in results)
