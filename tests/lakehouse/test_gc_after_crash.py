"""Garbage collection removes what writers killed mid-commit left behind.

On main and on a branch (``chain``): what a killed branch writer leaves in
the branch's folder and in the shared folders is collected, and nothing any
version of either chain reaches.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

import tests
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.branches import create_branch
from trinity_dbapi.lakehouse.garbage import reachable_files

REPO_ROOT = Path(tests.__file__).resolve().parent.parent


def _kill_writer_midway(uri: str, log: Path, rng: random.Random, branch: str | None) -> None:
    command = ["crash-writer", uri, str(log), "{}", branch or ""]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.lakehouse.workers", *command],
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


@pytest.mark.parametrize(
    "branch", [None, pytest.param("dev", marks=pytest.mark.processes)], ids=["main", "branch"]
)
def test_gc_after_killed_writers_keeps_exactly_the_reachable_files(
    tmp_path: Path, branch: str | None
) -> None:
    uri = f"file://{tmp_path / 'lake'}"
    created = Lakehouse.create(uri)
    if branch is not None:
        create_branch(created, branch, created.snapshot())
    rng = random.Random(7)
    for round_ in range(12):  # writers killed at random points, until orphans exist
        _kill_writer_midway(uri, tmp_path / f"writer{round_}.log", rng, branch)
        lake = Lakehouse.open(uri)
        before = {p for p, _ in lake.storage.list_with_times("")}
        live = reachable_files(lake)
        if before - live and round_ >= 3:
            break
    assert before - live, "no kill left an orphan behind"
    chains = [lake] if branch is None else [lake, lake.on_branch(branch)]
    states = [
        {v: dict(chain.snapshot(v).scan()) for v in range(chain.latest_version() + 1)}
        for chain in chains
    ]
    if branch is not None:  # the branch's commits, in its own folder, are live
        assert len(states[1]) > 1 and any(p.startswith("_branches/") for p in live)

    result = lake.maintenance.collect_garbage(grace_period_millis=0)

    after = {p for p, _ in lake.storage.list_with_times("")}
    assert set(result.deleted) == before - live  # every orphan went...
    assert after == before & live  # ...and nothing reachable did
    reopened = Lakehouse.open(uri)
    for chain_states, chain in zip(states, [reopened, reopened.on_branch(branch or "main")]):
        for version, state in chain_states.items():  # every version reads exactly as before
            assert dict(chain.snapshot(version).scan()) == state
            txn = chain.begin(version=version, read_only=True)
            for namespace in txn.list_namespaces():
                assert txn.load_namespace(namespace).name == namespace


def test_a_temporary_file_left_in_a_branchs_folder_is_collected(tmp_path: Path) -> None:
    """A writer killed while creating a branch's root leaves ``.tmp-<uuid>`` beside the roots:
    collected like one beside main's; one in a folder that is no branch's is not ours."""
    uri = f"file://{tmp_path / 'lake'}"
    lake = Lakehouse.create(uri)
    create_branch(lake, "dev", lake.snapshot())
    dev = lake.on_branch("dev")
    with dev.begin() as txn:
        txn.put("k", "v")
    left = f"{dev.lineage[0][1]}.tmp-{uuid.uuid4()}"
    foreign = f"_branches/notes/.tmp-{uuid.uuid4()}"
    for path in (left, foreign):
        lake.storage.write(path, b"partial")

    result = Lakehouse.open(uri).maintenance.collect_garbage(grace_period_millis=0)

    assert left in result.deleted and not lake.storage.exists(left)
    assert foreign not in result.deleted and lake.storage.exists(foreign)
    assert Lakehouse.open(uri).on_branch("dev").snapshot().get("k") == "v"
