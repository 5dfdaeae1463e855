"""Branches and tags on every storage backend: the behaviour, and what they cost.

Issue 35's behaviour suite: on local files, memory, S3 (moto), GCS
(fake-gcs-server) and Azure (Azurite), a branch is created, written, read
beside main, tagged, merged, dropped and collected, and garbage collection
takes the dropped branch's folder and keeps every file a live branch or a
tag reaches. And the costs the rules promise, counted in storage requests:
a commit on a branch costs what the same commit on main costs (rule 2; main
writes one file more, Kartothek's derived dataset metadata, which a branch
commit never writes: rule 4), and creating a branch or a tag costs the same
requests at 5 tables as at 200 (rule 3).
"""

from __future__ import annotations

from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.storage import Storage, open_storage
from trinity_dbapi.storage.cache import shared_cache
from trinity_dbapi.tables import managed

Backend = tuple[str, dict[str, Any]]

FAR_FUTURE = "TIMESTAMP '2999-01-01 00:00:00'"


def _connect(backend: Backend, branch: str | None = None) -> Any:
    uri, options = backend
    return trinity_dbapi.connect(uri, storage_options=options, autocommit=True, branch=branch)


def _rows(cur: Any, sql: str) -> list[tuple[Any, ...]]:
    cur.execute(sql)
    return sorted(cur.fetchall())


def _files(backend: Backend) -> set[str]:
    uri, options = backend
    storage = open_storage(uri, storage_options=options)
    try:
        return set(storage.list(""))
    finally:
        storage.close()


def _data_files(backend: Backend, branch: str, table: str) -> set[str]:
    """The data files ``table`` reads on ``branch``'s head."""
    uri, options = backend
    lake = Lakehouse.open(uri, storage_options=options)
    loaded = lake.on_branch(branch).begin(read_only=True).load_table("default", table)
    return set(managed.metadata(lake.storage, loaded).files().values())


def _folder(cur: Any, branch: str) -> str:
    """The folder of ``branch``'s own roots (``_branches/<uuid4>/``)."""
    cur.execute("SELECT ref_name, root FROM system.refs")
    root = dict(cur.fetchall())[branch]
    assert root.startswith("_branches/"), root
    return root.rpartition("/")[0] + "/"


def test_branch_write_read_tag_merge_drop_and_collect(backend: Backend) -> None:
    con = _connect(backend)
    cur = con.cursor()
    cur.execute("CREATE TABLE orders (id INT8, amount INT8)")
    cur.execute("INSERT INTO orders VALUES (1, 10), (2, 20)")
    cur.execute("CREATE BRANCH dev")
    cur.execute("CREATE BRANCH gone")
    cur.execute("CREATE BRANCH keep")

    # Writes on a branch show there only; main's own writes stay on main.
    dev = _connect(backend, branch="dev").cursor()
    dev.execute("INSERT INTO orders VALUES (3, 30)")
    dev.execute("DELETE FROM orders WHERE id = 1")
    cur.execute("INSERT INTO orders VALUES (4, 40)")
    assert _rows(cur, "SELECT * FROM orders") == [(1, 10), (2, 20), (4, 40)]
    assert _rows(dev, "SELECT * FROM orders") == [(2, 20), (3, 30)]
    assert _rows(cur, "SELECT * FROM orders FOR SYSTEM_VERSION AS OF 'dev'") == [
        (2, 20),
        (3, 30),
    ]

    # A tag pins the branch's head: later writes on the branch leave it.
    cur.execute("CREATE TAG audited FROM BRANCH dev")
    dev.execute("UPDATE orders SET amount = 31 WHERE id = 3")
    assert _rows(cur, "SELECT * FROM orders FOR SYSTEM_VERSION AS OF 'audited'") == [
        (2, 20),
        (3, 30),
    ]
    tags = _rows(cur, "SELECT ref_name FROM system.refs WHERE ref_type = 'tag'")
    assert tags == [("audited",)]

    # Both sides changed the table without touching the same file: merged.
    cur.execute("MERGE BRANCH dev INTO main")
    (merged,) = cur.fetchall()
    assert merged[:2] == ("dev", "main") and merged[4] is False  # not a fast-forward
    assert _rows(cur, "SELECT * FROM orders") == [(2, 20), (3, 31), (4, 40)]

    # The branches to drop and keep each hold files of their own.
    gone = _connect(backend, branch="gone").cursor()
    gone.execute("CREATE TABLE scratch (id INT8)")
    gone.execute("INSERT INTO scratch VALUES (7)")
    keep = _connect(backend, branch="keep").cursor()
    keep.execute("CREATE TABLE kept (id INT8)")
    keep.execute("INSERT INTO kept VALUES (8), (9)")
    gone_folder, keep_folder = _folder(cur, "gone"), _folder(cur, "keep")
    gone_files = {p for p in _files(backend) if p.startswith(gone_folder)}
    assert gone_files, "the branch wrote roots of its own"
    scratch = _data_files(backend, "gone", "scratch")
    kept = _data_files(backend, "keep", "kept")
    assert len(scratch) == len(kept) == 1 and (scratch | kept) <= _files(backend)
    cur.execute("DROP BRANCH gone")
    cur.execute("DROP BRANCH dev")
    assert _rows(cur, "SELECT ref_name FROM system.refs WHERE ref_type = 'branch'") == [
        ("keep",),
        ("main",),
    ]

    cur.execute(f"CALL system.expire_versions(older_than => {FAR_FUTURE}, retain_last => 1)")
    cur.execute("CALL system.collect_garbage(grace_period_millis => 0)")
    left = _files(backend)
    assert not {p for p in left if p.startswith(gone_folder)}, "the dropped branch's folder"
    assert {p for p in left if p.startswith(keep_folder)}, "the live branch's roots"
    assert not scratch & left, "the data file only the dropped branch read"
    assert kept <= left, "the data file the live branch reads"

    # Every ref still reads all it held, from a fresh process's caches.
    shared_cache().clear()
    managed.forget_metadata()
    fresh = _connect(backend).cursor()
    assert _rows(fresh, "SELECT * FROM orders") == [(2, 20), (3, 31), (4, 40)]
    assert _rows(fresh, "SELECT * FROM kept FOR SYSTEM_VERSION AS OF 'keep'") == [(8,), (9,)]
    assert _rows(fresh, "SELECT * FROM orders FOR SYSTEM_VERSION AS OF 'keep'") == [
        (1, 10),
        (2, 20),
    ]
    assert _rows(fresh, "SELECT * FROM orders FOR SYSTEM_VERSION AS OF 'audited'") == [
        (2, 20),
        (3, 30),
    ]


#: How many times a cost is measured: request counts repeat exactly; rounds
#: of requests that overlap (a write finished in the background while the
#: next one starts) depend on thread timing, so the costs are measured with
#: a simulated latency per request, as tests/sql/engine/test_request_budget_paths.py
#: does, and the fewest rounds over the runs is the cost the code asks for.
RUNS = 3
LATENCY = 0.01


def _cost(con: Any, statements: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, int, Any]:
    """(requests, fewest rounds, one run's stats) of each statement, after a warm-up run.

    Every statement must make the same requests (asserted): they are
    measured as the same change.
    """
    monkeypatch.setattr(Storage, "latency", LATENCY)
    cur = con.cursor()
    cur.execute(statements[0])  # warms the caches
    runs = []
    for sql in statements[1:]:
        before = con.storage_stats
        cur.execute(sql)
        runs.append(con.storage_stats.since(before))
    monkeypatch.setattr(Storage, "latency", 0.0)
    assert len({run.requests for run in runs}) == 1, runs
    return runs[0].requests, min(run.rounds for run in runs), runs[0]


def test_a_branch_commit_costs_what_a_main_commit_costs(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    cur = _connect(backend).cursor()
    cur.execute("CREATE TABLE t (id INT8, v INT8)")
    cur.execute("INSERT INTO t VALUES (1, 1)")
    cur.execute("CREATE BRANCH dev")
    inserts = [f"INSERT INTO t VALUES ({i}, {i})" for i in range(2, 3 + RUNS)]
    main_requests, main_rounds, on_main = _cost(_connect(backend), inserts, monkeypatch)
    dev_requests, dev_rounds, on_dev = _cost(_connect(backend, branch="dev"), inserts, monkeypatch)
    # Main also rewrites the table's Kartothek dataset metadata (what other
    # readers trust follows main only: rule 4): one write more, nothing else.
    assert on_main.writes == on_dev.writes + 1, (on_main, on_dev)
    assert dev_requests == main_requests - 1, (on_main, on_dev)
    for kind in ("reads", "creates", "deletes", "exists", "lists"):
        assert getattr(on_dev, kind) == getattr(on_main, kind), (kind, on_main, on_dev)
    assert dev_rounds <= main_rounds, (on_main, on_dev)
    assert _rows(cur, "SELECT count(*) FROM t FOR SYSTEM_VERSION AS OF 'dev'") == [(2 + RUNS,)]
    assert _rows(cur, "SELECT count(*) FROM t") == [(2 + RUNS,)]


def _ref_costs(
    backend: Backend, tables: int, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[int, int, Any]]:
    """The costs of CREATE BRANCH and of CREATE TAG on a lakehouse of ``tables`` tables."""
    con = _connect(backend)
    cur = con.cursor()
    cur.execute("BEGIN")
    for i in range(tables):
        cur.execute(f"CREATE TABLE t{i} (id INT8)")
    cur.execute("COMMIT")
    cur.execute("INSERT INTO t0 VALUES (1)")
    cur.execute("CREATE BRANCH first")  # the first ref adds the 'branches' feature
    branches = _cost(con, [f"CREATE BRANCH b{i}" for i in range(RUNS + 1)], monkeypatch)
    tags = _cost(con, [f"CREATE TAG g{i} FROM BRANCH b{i}" for i in range(RUNS + 1)], monkeypatch)
    assert _rows(cur, f"SELECT count(*) FROM t{tables - 1} FOR SYSTEM_VERSION AS OF 'g0'") == [(0,)]
    assert _rows(cur, "SELECT count(*) FROM t0 FOR SYSTEM_VERSION AS OF 'g0'") == [(1,)]
    return [branches, tags]


def test_creating_a_branch_or_a_tag_costs_the_same_at_5_and_200_tables(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, options = backend
    few = _ref_costs((uri + "/few", options), 5, monkeypatch)
    many = _ref_costs((uri + "/many", options), 200, monkeypatch)
    for (requests, rounds, small), (big_requests, big_rounds, big) in zip(few, many, strict=True):
        assert big_requests == requests, (small, big)
        assert big_rounds == rounds, (small, big)
        assert big.reads == small.reads, (small, big)
