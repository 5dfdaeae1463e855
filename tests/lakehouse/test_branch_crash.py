"""SIGKILL at a chosen write of a branch commit or of a MERGE BRANCH leaves every chain committed.

A worker process (``workers.kill_at``) runs one statement on a local
lakehouse and kills itself with SIGKILL just before, or just after, its
``k``-th write-type operation (a root, a node, definition, data or metadata
file, a hint): the statement is an INSERT on branch ``dev``, ``MERGE BRANCH
dev`` (into main) or ``MERGE BRANCH dev INTO qa``. Both sides of each merge
changed table ``t``, so the merge is data-aware, not a fast-forward.

Afterwards main, ``dev`` and ``qa`` each read exactly their state before the
statement or after it (rows and version agree), ``CALL
system.check_integrity()`` is clean on each, and running the statement again
where it did not commit, then another commit and merge on every chain, gives
exactly the state of a run that was never killed. A merge into a branch is
two commits (the branch's, then main's record of the pair's merge base): a
kill between them leaves the branch merged and main at its old version, and
merging again must not duplicate a row.

The default run kills at the commit points (before and after each root);
``slow`` kills before every write and after the last.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import tests
import trinity_dbapi
from tests.lakehouse import workers
from trinity_dbapi.format.paths import LATEST_HINT_FILE, root_node_file_name

# A process killed per case: CI's process leg runs them (.ci/run).
pytestmark = pytest.mark.processes

REPO_ROOT = Path(tests.__file__).resolve().parent.parent
CHAINS = ("main", "dev", "qa")
SCENARIOS = tuple(workers.KILL_SCENARIOS)
#: The chains each statement moves.
MOVED = {
    "branch-commit": {"dev"},
    "merge-into-main": {"main"},
    "merge-into-branch": {"qa", "main"},
}
#: Which chains moved when killed before and after each root (two for a merge into a branch).
AT_COMMIT_POINTS = {
    "branch-commit": ["none", "dev"],
    "merge-into-main": ["none", "main"],
    # the kill between qa's merge commit and main's record leaves qa merged alone
    "merge-into-branch": ["none", "qa", "qa", "main qa"],
}

#: A chain's state: its latest version and its rows of ``t``.
State = tuple[int, list[tuple[Any, ...]]]


def _connect(lake: Path, chain: str, **options: Any) -> trinity_dbapi.Connection:
    branch = None if chain == "main" else chain
    return trinity_dbapi.connect(str(lake), create=False, branch=branch, **options)


def _states(lake: Path) -> dict[str, State]:
    """Each chain's latest version and rows, read by fresh connections."""
    states = {}
    for chain in CHAINS:
        with _connect(lake, chain) as conn:
            rows = conn.execute("SELECT k, v FROM t ORDER BY k").fetchall()
            states[chain] = (conn.lakehouse.latest_version(), [tuple(r) for r in rows])
    return states


def _integrity(lake: Path) -> dict[str, list[tuple[Any, ...]]]:
    """``CALL system.check_integrity()`` on every chain."""
    found = {}
    for chain in CHAINS:
        with _connect(lake, chain) as conn:
            found[chain] = [tuple(r) for r in conn.execute("CALL system.check_integrity()")]
    return found


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Main, ``dev`` and ``qa`` each appended to ``t`` after both branches were made."""
    lake = tmp_path_factory.mktemp("template") / "lake"
    with trinity_dbapi.connect(str(lake), autocommit=True) as conn:
        conn.execute("CREATE TABLE t (k INT8, v VARCHAR)")
        conn.execute("INSERT INTO t VALUES (1, 'main'), (2, 'main')")
        conn.execute("CREATE BRANCH dev")
        conn.execute("CREATE BRANCH qa")
        conn.execute("INSERT INTO t VALUES (4, 'main')")
    for chain, row in (("dev", "(3, 'dev')"), ("qa", "(5, 'qa')")):
        with _connect(lake, chain, autocommit=True) as conn:
            conn.execute(f"INSERT INTO t VALUES {row}")
    return lake


def _copy(template: Path, to: Path) -> Path:
    shutil.copytree(template, to)
    return to


def _run_worker(scenario: str, lake: Path, k: str, when: str) -> subprocess.CompletedProcess[str]:
    command = ["kill-at", scenario, f"file://{lake}", k, when]
    return subprocess.run(
        [sys.executable, "-m", "tests.lakehouse.workers", *command],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _unkilled(template: Path, tmp_path: Path, scenario: str) -> tuple[list[list[str]], Path]:
    """The write operations of the statement run to its end, and the lakehouse it left."""
    lake = _copy(template, tmp_path / "unkilled")
    done = _run_worker(scenario, lake, "0", "before")
    assert done.returncode == 0, done.stderr
    ops = [json.loads(line) for line in done.stdout.splitlines()]
    assert sum(kind == "root" for kind, _ in ops) == (2 if scenario == "merge-into-branch" else 1)
    return ops, lake


def _kill_points(ops: list[list[str]], every: bool) -> list[tuple[str, str]]:
    """``(k, when)`` pairs: around each root (the commit points), or before every write."""
    if every:
        return [(str(k), "before") for k in range(1, len(ops) + 1)] + [(str(len(ops)), "after")]
    roots = sum(kind == "root" for kind, _ in ops)
    return [(f"root:{n}", when) for n in range(1, roots + 1) for when in ("before", "after")]


def _finish(lake: Path, scenario: str, before: dict[str, State], now: dict[str, State]) -> None:
    """Run the statement again where the kill left it uncommitted."""
    branch, _ = workers.KILL_SCENARIOS[scenario]
    target = branch or ("qa" if scenario == "merge-into-branch" else "main")
    if scenario == "merge-into-branch":
        # Merged into qa but main's record of the merge lost: merging again finds
        # the same rows on both sides and must not add them twice.
        if now["qa"] == before["qa"] or now["main"] == before["main"]:
            workers.run_scenario(f"file://{lake}", scenario)
    elif now[target] == before[target]:
        workers.run_scenario(f"file://{lake}", scenario)


def _crash_at(
    template: Path, root: Path, scenario: str, k: str, when: str, after: dict[str, State]
) -> str:
    """Kill the statement at ``(k, when)``, check the chains; return which ones moved."""
    lake = _copy(template, root / "lake")
    before = _states(lake)
    killed = _run_worker(scenario, lake, k, when)
    assert killed.returncode == -signal.SIGKILL, (k, when, killed.stderr)
    now = _states(lake)
    for chain in CHAINS:  # each chain is at a committed state, rows and version together
        if scenario == "merge-into-branch" and chain == "main":
            # two commits: main's rows never change, its version follows qa's merge
            assert now["main"][1] == before["main"][1]
            assert now["main"][0] in (before["main"][0], after["main"][0])
            assert now["main"] == before["main"] or now["qa"] == after["qa"], (k, when)
            continue
        assert now[chain] in (before[chain], after[chain]), (chain, k, when)
    assert _integrity(lake) == {chain: [(None, None, "ok")] for chain in CHAINS}, (k, when)
    _finish(lake, scenario, before, now)
    finished = _states(lake)
    assert {c: s[1] for c, s in finished.items()} == {c: s[1] for c, s in after.items()}
    # every chain commits and merges on after the crash
    for chain, row in (("main", "(7, 'main')"), ("dev", "(8, 'dev')"), ("qa", "(9, 'qa')")):
        with _connect(lake, chain, autocommit=True) as conn:
            conn.execute(f"INSERT INTO t VALUES {row}")
    with _connect(lake, "main", autocommit=True) as conn:
        conn.execute("MERGE BRANCH dev INTO qa")
        conn.execute("MERGE BRANCH dev")
    rows = {c: s[1] for c, s in _states(lake).items()}
    assert rows["main"] == sorted({*after["main"][1], *after["dev"][1], (7, "main"), (8, "dev")})
    assert rows["qa"] == sorted({*after["qa"][1], *after["dev"][1], (8, "dev"), (9, "qa")})
    assert _integrity(lake) == {chain: [(None, None, "ok")] for chain in CHAINS}
    return " ".join(chain for chain in CHAINS if now[chain] != before[chain]) or "none"


def _campaign(template: Path, tmp_path: Path, scenario: str, every: bool) -> list[str]:
    ops, unkilled = _unkilled(template, tmp_path, scenario)
    after = _states(unkilled)
    before = _states(template)
    # A branch's roots and hint live in its folder: a commit there never writes main's,
    # nor the derived file non-trinity readers trust (Kartothek's main metadata file),
    # which only a merge into main writes.
    on_main = {p for kind, p in ops if kind in ("root", "hint") and not p.startswith("_branches/")}
    derived = {p for p in on_main if p.endswith(".by-dataset-metadata.json")}
    main_root = root_node_file_name(before["main"][0] + 1)
    assert on_main - derived == (
        set() if scenario == "branch-commit" else {main_root, LATEST_HINT_FILE}
    )
    assert len(derived) == (scenario == "merge-into-main")
    moved = {c for c in CHAINS if after[c] != before[c]}
    assert moved == MOVED[scenario]
    outcomes = []
    for i, (k, when) in enumerate(_kill_points(ops, every)):
        outcomes.append(_crash_at(template, tmp_path / f"kill{i}", scenario, k, when, after))
    return outcomes


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_kill_at_a_commit_point_leaves_each_chain_committed(
    template: Path, tmp_path: Path, scenario: str
) -> None:
    """Killed just before and just after each root: nothing, then the commit, took effect."""
    outcomes = _campaign(template, tmp_path, scenario, every=False)
    assert outcomes == AT_COMMIT_POINTS[scenario]


@pytest.mark.slow
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_kill_at_any_write_leaves_each_chain_committed(
    template: Path, tmp_path: Path, scenario: str
) -> None:
    """Killed before every write of the statement, and after its last."""
    outcomes = _campaign(template, tmp_path, scenario, every=True)
    assert "none" in outcomes and outcomes[-1] != "none"
