"""``CALL system.rewrite_data_files``: small files per partition into files near a target size."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.errors import (
    CommitConflictError,
    NotSupportedError,
    ProgrammingError,
    QueryInterruptedError,
)
from trinity_dbapi.sql.engine import rewrite_files
from trinity_dbapi.tables import compaction

CALL = "CALL system.rewrite_data_files"


def _connect(uri: str, options: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    return trinity_dbapi.connect(uri, storage_options=options or {}, autocommit=True, **kwargs)


@pytest.fixture
def conn() -> Iterator[Any]:
    connection = _connect(f"memory://rewrite-{uuid.uuid4().hex}")
    connection.execute("CREATE NAMESPACE n")
    connection.execute("CREATE TABLE n.t (id INT8, day DATE, v VARCHAR) PARTITIONED BY (day)")
    yield connection
    connection.close()


def _fill(conn: Any, rows: int, days: int = 2) -> list[tuple[Any, ...]]:
    """One INSERT (one file) per row, spread over ``days`` partitions; the rows in order."""
    for i in range(rows):
        conn.execute(f"INSERT INTO n.t VALUES ({i}, DATE '2024-01-0{1 + i % days}', 'v{i}')")
    return _rows(conn)


def _rows(conn: Any, as_of: str = "") -> list[tuple[Any, ...]]:
    return conn.execute(f"SELECT id, day, v FROM n.t {as_of} ORDER BY id").fetchall()


def _files(conn: Any, as_of: str = "") -> dict[str, int]:
    rows = conn.execute(
        f'SELECT "partition", count(*) FROM system.data_files {as_of} '
        "WHERE namespace_name = 'n' AND table_name = 't' GROUP BY ALL"
    ).fetchall()
    return dict(rows)


def _version(conn: Any) -> int:
    return int(conn.execute("SELECT max(version) FROM system.versions").fetchone()[0])


def test_small_files_become_one_file_per_partition(backend: tuple[str, dict[str, Any]]) -> None:
    uri, options = backend
    conn = _connect(uri, options)
    conn.execute("CREATE NAMESPACE n")
    conn.execute("CREATE TABLE n.t (id INT8, day DATE, v VARCHAR) PARTITIONED BY (day)")
    before = _fill(conn, 8)
    assert _files(conn) == {"day=2024-01-01": 4, "day=2024-01-02": 4}
    sizes = conn.execute("SELECT sum(file_size_in_bytes)::INT8 FROM system.data_files").fetchone()
    result = conn.execute(f"{CALL}(table => 'n.t')")
    assert [d[0] for d in result.description] == [
        "table_name",
        "files_rewritten",
        "files_added",
        "rows",
        "bytes_before",
        "bytes_after",
        "version",
    ]
    name, rewritten, added, rows, bytes_before, bytes_after, version = result.fetchone()
    assert (name, rewritten, added, rows, bytes_before) == ("n.t", 8, 2, 8, sizes[0])
    after = conn.execute("SELECT sum(file_size_in_bytes)::INT8 FROM system.data_files").fetchone()
    assert bytes_after == after[0] < bytes_before
    assert version == _version(conn)
    assert _files(conn) == {"day=2024-01-01": 1, "day=2024-01-02": 1}
    assert _rows(conn) == before
    # the rows of a file keep the order they were written in
    in_file = conn.execute("SELECT id FROM n.t WHERE day = DATE '2024-01-01'").fetchall()
    assert in_file == [(0,), (2,), (4,), (6,)]
    # nothing left to do: no new version
    again = conn.execute(f"{CALL}('n.t')").fetchone()
    assert again[1:6] == (0, 0, 0, 0, 0) and again[6] == version
    conn.close()


def test_groups_follow_a_simple_model() -> None:
    """Next fit per partition: a group closes once its files reach the target."""
    conn = _connect(f"memory://rewrite-model-{uuid.uuid4().hex}")
    conn.execute("CREATE NAMESPACE n")
    conn.execute("CREATE TABLE n.t (id INT8, day DATE, v VARCHAR) PARTITIONED BY (day)")
    before = _fill(conn, 12, days=1)
    sizes = [
        s for (s,) in conn.execute("SELECT file_size_in_bytes FROM system.data_files").fetchall()
    ]
    target = sum(sizes[:3])  # about three files per group
    model: list[list[int]] = [[]]  # next fit: a group closes once it reaches the target
    for size in sizes:
        if sum(model[-1]) >= target:
            model.append([])
        model[-1].append(size)
    groups = [g for g in model if len(g) > 1]
    result = conn.execute(f"{CALL}('n.t', target_file_size_bytes => {target})").fetchone()
    assert result[1] == sum(len(g) for g in groups)
    assert result[2] == len(groups) == 4
    assert _files(conn)["day=2024-01-01"] == len(model)
    assert _rows(conn) == before
    new_sizes = conn.execute("SELECT file_size_in_bytes FROM system.data_files").fetchall()
    assert all(s < 2 * target for (s,) in new_sizes)  # near the target, never far above
    conn.close()


def test_min_input_files_and_where(conn: Any) -> None:
    _fill(conn, 6, days=3)  # two files in each of three partitions
    conn.execute("INSERT INTO n.t VALUES (10, DATE '2024-01-03', 'x')")
    result = conn.execute(f"{CALL}('n.t', min_input_files => 3)").fetchone()
    assert result[1:3] == (3, 1)  # only day 3 had three small files
    assert _files(conn) == {"day=2024-01-01": 2, "day=2024-01-02": 2, "day=2024-01-03": 1}
    result = conn.execute(
        f"{CALL}('n.t', where => 'day >= DATE ''2024-01-02'' OR day IS NULL')"
    ).fetchone()
    assert result[1:3] == (2, 1)
    assert _files(conn) == {"day=2024-01-01": 2, "day=2024-01-02": 1, "day=2024-01-03": 1}


@pytest.mark.parametrize(
    ("where", "error", "match"),
    [
        ("id = 1", ProgrammingError, "'id', which is not a partition column"),
        ("day IN (SELECT 1)", NotSupportedError, "no queries"),
        ("day = ", ProgrammingError, "is not a SQL expression"),
        ("day = 'not a date'", ProgrammingError, "cannot be evaluated"),
    ],
)
def test_where_is_refused_clearly(conn: Any, where: str, error: type, match: str) -> None:
    _fill(conn, 2)
    quoted = where.replace("'", "''")
    with pytest.raises(error, match=match):
        conn.execute(f"{CALL}('n.t', where => '{quoted}')")
    assert _files(conn) == {"day=2024-01-01": 1, "day=2024-01-02": 1}


def test_bad_arguments(conn: Any) -> None:
    with pytest.raises(ProgrammingError, match="min_input_files must be 2 or more"):
        conn.execute(f"{CALL}('n.t', min_input_files => 1)")
    with pytest.raises(ProgrammingError, match="target_file_size_bytes must be positive"):
        conn.execute(f"{CALL}('n.t', target_file_size_bytes => 0)")
    with pytest.raises(trinity_dbapi.Error, match=r"n\.nope"):
        conn.execute(f"{CALL}('n.nope')")
    conn.execute("CREATE TABLE n.flat (id INT8)")
    with pytest.raises(NotSupportedError, match="not partitioned"):
        conn.execute(f"{CALL}('n.flat', where => 'id = 1')")


def test_time_travel_and_garbage_collection_keep_old_files(conn: Any) -> None:
    before = _fill(conn, 4)
    version = _version(conn)
    conn.execute(f"{CALL}('n.t')")
    assert _rows(conn, f"FOR SYSTEM_VERSION AS OF {version}") == before
    assert _files(conn, f"FOR SYSTEM_VERSION AS OF {version}") == {
        "day=2024-01-01": 2,
        "day=2024-01-02": 2,
    }
    deleted = conn.execute("CALL system.collect_garbage(grace_period_millis => 0)").fetchone()
    assert _rows(conn, f"FOR SYSTEM_VERSION AS OF {version}") == before  # still reachable
    conn.execute(
        "CALL system.expire_versions(older_than => TIMESTAMP '2100-01-01 00:00:00', "
        "retain_last => 1)"
    )
    gone = conn.execute("CALL system.collect_garbage(grace_period_millis => 0)").fetchone()
    assert gone[0] >= 4 > deleted[0]  # the four small files went once no version reached them
    assert _rows(conn) == before


def test_indices_still_prune(conn: Any) -> None:
    from trinity_dbapi.tables import indices, managed

    conn.execute("CREATE INDEX by_id ON n.t (id)")
    before = _fill(conn, 6)
    conn.execute(f"{CALL}('n.t')")
    lakehouse = conn.lakehouse
    table = lakehouse.begin(read_only=True).load_table("n", "t")
    meta = managed.metadata(lakehouse.storage, table)
    by_day = {label.rpartition("/")[0]: label for label in meta.partitions}
    # the index names exactly the one new file of each value's partition, no old file
    assert indices.lookup(lakehouse.storage, meta, "id", [3]) == {by_day["day=2024-01-02"]}
    assert indices.lookup(lakehouse.storage, meta, "id", [0, 1]) == set(by_day.values())
    assert indices.lookup(lakehouse.storage, meta, "id", [99]) == set()
    assert conn.execute("SELECT v FROM n.t WHERE id = 3").fetchall() == [("v3",)]
    assert conn.execute("SELECT count(*) FROM n.t WHERE id IN (1, 4, 99)").fetchone() == (2,)
    conn.execute("INSERT INTO n.t VALUES (100, DATE '2024-01-01', 'new')")
    assert conn.execute("SELECT v FROM n.t WHERE id = 100").fetchall() == [("new",)]
    assert _rows(conn)[:6] == before


def _while_rewriting(monkeypatch: pytest.MonkeyPatch, action: Callable[[], None]) -> None:
    """Run ``action`` (another connection's commit) after the files are written, before commit."""
    original = compaction.rewrite

    def racing(*args: Any, **kwargs: Any) -> compaction.Compaction:
        done = original(*args, **kwargs)
        action()
        return done

    monkeypatch.setattr(rewrite_files.compaction, "rewrite", racing)


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "SNAPSHOT"])
def test_an_append_committed_meanwhile_survives(
    backend: tuple[str, dict[str, Any]], isolation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, options = backend
    conn = _connect(uri, options, isolation_level=isolation)
    conn.execute("CREATE NAMESPACE n")
    conn.execute("CREATE TABLE n.t (id INT8, day DATE, v VARCHAR) PARTITIONED BY (day)")
    before = _fill(conn, 4)
    other = _connect(uri, options, isolation_level=isolation)
    _while_rewriting(
        monkeypatch, lambda: other.execute("INSERT INTO n.t VALUES (50, DATE '2024-01-01', 'a')")
    )
    result = conn.execute(f"{CALL}('n.t')").fetchone()
    assert result[1:3] == (4, 2)
    assert _rows(conn) == [*before, (50, before[0][1], "a")]
    assert _files(conn) == {"day=2024-01-01": 2, "day=2024-01-02": 1}
    other.close()
    conn.close()


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "SNAPSHOT"])
def test_a_delete_committed_meanwhile_makes_it_conflict(
    backend: tuple[str, dict[str, Any]], isolation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, options = backend
    conn = _connect(uri, options, isolation_level=isolation)
    conn.execute("CREATE NAMESPACE n")
    conn.execute("CREATE TABLE n.t (id INT8, day DATE, v VARCHAR) PARTITIONED BY (day)")
    before = _fill(conn, 4)
    other = _connect(uri, options, isolation_level=isolation)
    _while_rewriting(monkeypatch, lambda: other.execute("DELETE FROM n.t WHERE id = 2"))
    version = _version(conn)
    with pytest.raises(CommitConflictError, match="run the statement again"):
        conn.execute(f"{CALL}('n.t')")
    assert _version(conn) == version + 1  # the DELETE only
    assert _rows(conn) == [row for row in before if row[0] != 2]  # nothing lost or back
    monkeypatch.undo()
    conn.execute(f"{CALL}('n.t')")  # run again: it plans from the new version
    assert _rows(conn) == [row for row in before if row[0] != 2]
    assert _files(conn) == {"day=2024-01-01": 1, "day=2024-01-02": 1}
    other.close()
    conn.close()


def test_an_interrupt_commits_nothing(conn: Any) -> None:
    before = _fill(conn, 6)
    version = _version(conn)

    def on_progress(event: trinity_dbapi.ProgressEvent) -> None:
        if event.task.startswith("rewrite data files") and event.done > 0:
            stopper = threading.Thread(target=conn.interrupt)
            stopper.start()
            stopper.join()

    conn.progress = on_progress
    with pytest.raises(QueryInterruptedError):
        conn.execute(f"{CALL}('n.t')")
    conn.progress = None
    assert _version(conn) == version
    assert _rows(conn) == before
    assert _files(conn) == {"day=2024-01-01": 3, "day=2024-01-02": 3}


def test_progress_counts_files(conn: Any) -> None:
    _fill(conn, 4)
    events: list[Any] = []
    conn.progress = events.append
    conn.execute(f"{CALL}('n.t')")
    conn.progress = None
    mine = [e for e in events if e.task == "rewrite data files of n.t"]
    assert mine[0].done == 0 and mine[-1].done == mine[-1].total == 4
    assert {e.unit for e in mine} == {"files"}


def test_500_single_row_inserts_become_one_file(conn: Any) -> None:
    conn.execute("CREATE TABLE n.many (id INT8, v VARCHAR)")
    for i in range(500):
        conn.execute(f"INSERT INTO n.many VALUES ({i}, 'v{i}')")
    count = (
        "SELECT count(*) FROM system.data_files WHERE namespace_name = 'n' AND table_name = 'many'"
    )
    assert conn.execute(count).fetchone() == (500,)
    started = time.perf_counter()
    result = conn.execute(f"{CALL}('n.many')").fetchone()
    elapsed = time.perf_counter() - started
    assert result[1:4] == (500, 1, 500)
    assert conn.execute(count).fetchone() == (1,)
    assert conn.execute("SELECT list(id ORDER BY id) = range(500) FROM n.many").fetchone() == (
        True,
    )
    print(f"500 files -> 1 in {elapsed:.2f} s")


def test_auto_compact_after_writes(conn: Any, caplog: pytest.LogCaptureFixture) -> None:
    conn.execute("ALTER TABLE n.t SET PROPERTIES ('auto_compact.min_files' = '3')")
    before = _fill(conn, 6, days=2)  # day 1 reaches 3 files, then 4: compacted at the 4th
    assert _files(conn) == {"day=2024-01-01": 3, "day=2024-01-02": 3}
    conn.execute("INSERT INTO n.t VALUES (6, DATE '2024-01-01', 'v6')")
    assert _files(conn) == {"day=2024-01-01": 1, "day=2024-01-02": 3}
    assert _rows(conn) == [*before, (6, before[0][1], "v6")]
    changed = conn.execute(
        "SELECT changed_objects FROM system.versions ORDER BY version DESC LIMIT 2"
    ).fetchall()
    assert changed == [(["table n.t"],), (["table n.t"],)]  # the write, then the compaction
    # a bad value is logged, never fails the write
    conn.execute("ALTER TABLE n.t SET PROPERTIES ('auto_compact.min_files' = 'many')")
    with caplog.at_level("WARNING", logger="trinity_dbapi.sql.engine.auto_compact"):
        conn.execute("INSERT INTO n.t VALUES (7, DATE '2024-01-02', 'v7')")
    assert "is not a positive integer" in caplog.text
    assert _files(conn) == {"day=2024-01-01": 1, "day=2024-01-02": 4}


def test_auto_compact_failure_never_fails_the_write(
    conn: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    conn.execute("ALTER TABLE n.t SET PROPERTIES ('auto_compact.min_files' = '1')")

    def failing(*args: Any, **kwargs: Any) -> compaction.Compaction:
        raise CommitConflictError("commit conflict on table n.t: simulated")

    monkeypatch.setattr(rewrite_files.compaction, "rewrite", failing)
    with caplog.at_level("WARNING", logger="trinity_dbapi.sql.engine.auto_compact"):
        _fill(conn, 4, days=1)
    assert "automatic compaction of table n.t failed" in caplog.text
    assert _files(conn) == {"day=2024-01-01": 4}
    assert len(_rows(conn)) == 4


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "SNAPSHOT"])
def test_processes_append_while_another_compacts(tmp_path: Any, isolation: str) -> None:
    import multiprocessing as mp

    from tests.sql.engine import data_workers

    uri = str(tmp_path / "lake")
    setup = trinity_dbapi.connect(uri, autocommit=True)
    setup.execute("CREATE NAMESPACE ns")
    setup.execute("CREATE TABLE ns.t (k INT4, v INT8) PARTITIONED BY (k)")
    setup.cursor().executemany("INSERT INTO ns.t VALUES (?, ?)", [(w, -1) for w in range(2)])
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(3)
    results = ctx.Queue()
    workers = [
        ctx.Process(target=data_workers.appender, args=(uri, w, 6, 5, start, results))
        for w in range(2)
    ]
    workers.append(
        ctx.Process(target=data_workers.compactor, args=(uri, 9, 6, isolation, start, results))
    )
    for process in workers:
        process.start()
    outcomes = [results.get(timeout=240) for _ in workers]
    for process in workers:
        process.join(timeout=60)
    assert [o for o in outcomes if o[1] != "ok"] == []
    # every appended row is there exactly once, whatever the compactor rewrote meanwhile
    counts = setup.execute("SELECT k, count(*), count(DISTINCT v) FROM ns.t GROUP BY k ORDER BY k")
    assert counts.fetchall() == [(0, 31, 31), (1, 31, 31)]
    setup.execute("CALL system.rewrite_data_files('ns.t')")
    files = setup.execute("SELECT count(*) FROM system.data_files").fetchone()
    assert files == (2,)
    assert setup.execute("SELECT count(*) FROM ns.t").fetchone() == (62,)
    setup.close()
