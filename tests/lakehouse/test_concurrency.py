"""Several processes committing to one lakehouse on local disk, S3 (moto) and GCS (its emulator).

Every worker process opens the lakehouse itself (multiprocessing ``spawn``)
and reports its outcomes through a queue. Distinct-key writers must all
succeed with an exact version count; read-modify-write transactions on shared
keys may conflict, but the final state must equal a serial replay of the
committed transactions in version order, with no lost update of the counter.
Both campaigns run on main and on a branch (``chain``): two writers on one
branch behave as two writers on main do (exclusive create, rebase, the
isolation levels, no lost commit). Writers on main and on two branches at
once never contend: each commits every time at its first attempt.

Sizes: 8 processes x 50 distinct-key commits on both local disk and S3, and
8 processes x 25 shared-key transactions per isolation level on both. These
campaigns (several CPU-minutes) run in CI's ``processes`` leg, and wherever
``-m processes`` is given; the default run leaves them out.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CLOUD_PARAMS, cloud_root
from tests.lakehouse import workers
from tests.lakehouse.helpers import Backend, apply_writes, full_state
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.branches import create_branch

pytestmark = pytest.mark.processes

PROCESSES = 8
DISTINCT_COMMITS = 50
SHARED_TRANSACTIONS = 25
REPORT_TIMEOUT = 90.0
#: The branches that take commits beside main's in the contention test.
BRANCHES = ("dev", "qa")


@pytest.fixture(params=["local", *CLOUD_PARAMS])
def shared_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    """``(uri, storage_options)`` other processes can reach: local disk, S3, GCS, Azure."""
    if request.param == "local":
        yield f"file://{tmp_path / 'lake'}", {}
    else:
        yield cloud_root(request, request.param)


@pytest.fixture(params=["main", "branch"])
def chain(request: pytest.FixtureRequest) -> str | None:
    """The chain the workers commit on: main (None), or branch ``dev``."""
    return None if request.param == "main" else "dev"


def _on_chain(lake: Lakehouse, branch: str | None) -> Lakehouse:
    """``lake`` as ``branch`` sees it: the branch is created from main's latest version
    first, so its own versions continue that version's numbers."""
    if branch is None:
        return lake
    create_branch(lake, branch, lake.snapshot())
    return lake.on_branch(branch)


def _run_workers(target: Callable[..., None], args: Sequence[tuple[Any, ...]]) -> list[Any]:
    """Start one spawned process per ``args``; return every report they queue.

    Each worker gets a barrier (so all start committing together) and the
    queue as its last two arguments.
    """
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(args))
    results = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*a, barrier, results)) for a in args]
    try:
        for proc in procs:
            proc.start()
        reports = [results.get(timeout=REPORT_TIMEOUT) for _ in procs]
        for proc in procs:
            proc.join(timeout=30)
        assert [proc.exitcode for proc in procs] == [0] * len(procs)
        return reports
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
                proc.join()


def test_distinct_keys_all_commit(shared_backend: Backend, chain: str | None) -> None:
    """8 processes x 50 commits of distinct keys all succeed; versions 1..400, all keys there."""
    uri, options = shared_backend
    _on_chain(Lakehouse.create(uri, storage_options=options), chain)
    reports = _run_workers(
        workers.distinct_key_worker,
        [(uri, options, w, DISTINCT_COMMITS, chain, 200) for w in range(PROCESSES)],
    )
    errors = [r["error"] for r in reports if r["error"]]
    assert errors == []
    commits = [c for r in reports for c in r["commits"]]
    total = PROCESSES * DISTINCT_COMMITS
    assert len(commits) == total
    # every commit got its own version, and they are exactly 1..total
    assert sorted(version for version, _, _ in commits) == list(range(1, total + 1))
    lake = workers.open_chain(uri, options, chain)
    assert lake.latest_version() == total
    assert full_state(lake.snapshot()) == {key: value for _, key, value in commits}
    # each version holds exactly the one key its commit wrote
    by_version = {version: key for version, key, _ in commits}
    for version in range(1, total + 1, 7):
        assert lake.snapshot(version).changed_keys() == {by_version[version]}


def test_writers_on_main_and_branches_never_contend(shared_backend: Backend) -> None:
    """One process on main, one on each of two branches, 50 commits each, all at once: every
    commit succeeds at its first attempt (a lost race would fail it: one attempt allowed),
    each chain's versions are consecutive, and each holds exactly its own writes on top of
    what it had."""
    uri, options = shared_backend
    lake = Lakehouse.create(uri, storage_options=options)
    with lake.begin() as txn:
        txn.put("before", "branching")
    for name in BRANCHES:
        create_branch(lake, name, lake.snapshot(1))
    main_head = lake.latest_version()  # 1 + one definition-only commit per branch
    chains: list[str | None] = [None, *BRANCHES]
    reports = _run_workers(
        workers.distinct_key_worker,
        [(uri, options, w, DISTINCT_COMMITS, branch, 1) for w, branch in enumerate(chains)],
    )
    assert [r["error"] for r in reports if r["error"]] == []
    by_worker = {r["worker"]: r for r in reports}
    for w, branch in enumerate(chains):
        commits = by_worker[w]["commits"]
        assert by_worker[w]["attempts"] == [1] * DISTINCT_COMMITS
        first = main_head + 1 if branch is None else 2  # a branch continues from version 1
        assert [version for version, _, _ in commits] == list(
            range(first, first + DISTINCT_COMMITS)
        )
        reopened = workers.open_chain(uri, options, branch)
        assert reopened.latest_version() == first + DISTINCT_COMMITS - 1
        expected = {"before": "branching"} | {key: value for _, key, value in commits}
        assert full_state(reopened.snapshot()) == expected, branch
        assert full_state(reopened.snapshot(1)) == {"before": "branching"}
    # main's own history is untouched by the branches' commits
    main = workers.open_chain(uri, options, None)
    assert [main.snapshot(v).changed_keys() for v in range(2, main_head + 1)] == [set()] * len(
        BRANCHES
    )


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "SNAPSHOT"])
def test_shared_keys_equal_serial_replay(
    shared_backend: Backend, isolation: str, chain: str | None
) -> None:
    """Read-modify-write on shared keys: outcomes are commits or clean conflicts only,
    the final state is the serial replay of the commits in version order, and no
    increment of the counter is lost."""
    uri, options = shared_backend
    lake = Lakehouse.create(uri, storage_options=options)
    with lake.begin() as txn:
        txn.put(workers.COUNTER, "0")
        for key in workers.SHARED_KEYS:
            txn.put(key, "init")
    _on_chain(lake, chain)  # from version 1: the workers' versions are 2.. on either chain
    reports = _run_workers(
        workers.shared_key_worker,
        [
            (uri, options, w, SHARED_TRANSACTIONS, isolation, 1000 * w + len(isolation), chain)
            for w in range(PROCESSES)
        ],
    )
    assert [r["error"] for r in reports if r["error"]] == []
    outcomes = [o for r in reports for o in r["outcomes"]]
    assert len(outcomes) == PROCESSES * SHARED_TRANSACTIONS
    unexpected = [o for o in outcomes if o["outcome"] not in ("committed", "conflict", "exhausted")]
    assert unexpected == []
    committed = sorted(
        (o for o in outcomes if o["outcome"] == "committed"), key=lambda o: o["version"]
    )
    assert committed, "no transaction committed at all"

    lake = workers.open_chain(uri, options, chain)
    latest = lake.latest_version()
    # the workers made every version after 1, each exactly one
    assert [o["version"] for o in committed] == list(range(2, latest + 1))

    states = _replayed_states(full_state(lake.snapshot(1)), committed)
    assert full_state(lake.snapshot()) == states[latest]
    for o in committed:
        version = o["version"]
        assert lake.snapshot(version).latest_txn == o["txn_id"]
        assert full_state(lake.snapshot(version)) == states[version]
        # snapshot reads: every value read is the value at the pinned version
        assert o["reads"] == {k: states[o["base"]].get(k) for k in o["reads"]}
        before = states[version - 1]
        if isolation == "SERIALIZABLE":
            # serializable: the reads are also those of its serial position
            assert o["reads"] == {k: before.get(k) for k in o["reads"]}, o
        else:
            # write-write rule: what it overwrote had not changed since it read it
            assert {k: o["reads"][k] for k in o["writes"]} == {
                k: before.get(k) for k in o["writes"]
            }, o
    increments = sum(workers.COUNTER in o["writes"] for o in committed)
    assert lake.snapshot().get(workers.COUNTER) == str(increments)
    conflicts = [o for o in outcomes if o["outcome"] == "conflict"]
    assert all(o["key"] is not None and 2 <= o["version"] <= latest for o in conflicts)


def _replayed_states(
    initial: dict[str, str], committed: Sequence[dict[str, Any]]
) -> dict[int, dict[str, str]]:
    """State at every version: ``initial`` at version 1, then each commit's writes applied."""
    states = {1: dict(initial)}
    state = dict(initial)
    for o in committed:
        state = apply_writes(dict(state), o["writes"])
        states[o["version"]] = state
    return states
