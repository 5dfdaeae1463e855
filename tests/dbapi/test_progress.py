"""Progress of long statements: ``Connection.progress`` and the events each statement sends.

A recording handler collects every :class:`ProgressEvent`; :func:`_tasks`
groups them by task and checks the contract on every task (one unit, ``done``
never decreasing, a last event with ``done == total``), so each test only
states which tasks a statement reports and their final counts.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import FrozenInstanceError
from typing import Any

import pyarrow as pa
import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.sql.engine.progress import NodeFileProgress, ProgressEvent
from trinity_dbapi.tree.btree import TXN_ID_BYTES

Backend = tuple[str, dict[str, Any]]

_ROW = 8 + 8 + 160 + 4
#: A lakehouse whose node buffers hold two messages: most commits write node files.
SMALL_TREE: dict[str, Any] = {
    "order": 4,
    "namespace_name_max_size_bytes": 8,
    "table_name_max_size_bytes": 8,
    "file_name_max_size_bytes": 160,
    "node_file_max_size_bytes": 4 * _ROW + 2 * (_ROW + TXN_ID_BYTES),
}


class Recorder:
    """A progress handler that keeps every event."""

    def __init__(self) -> None:
        self.events: list[ProgressEvent] = []

    def __call__(self, event: ProgressEvent) -> None:
        self.events.append(event)

    def take(self) -> list[tuple[str, str, int]]:
        """The tasks reported since the last call: (task, unit, final count), checked."""
        events, self.events = self.events, []
        return _tasks(events)


def _tasks(events: list[ProgressEvent]) -> list[tuple[str, str, int]]:
    """Group events into tasks (a task ends with done == total) and check each one."""
    tasks: list[tuple[str, str, int]] = []
    current: list[ProgressEvent] = []
    for event in events:
        if current:
            first = current[0]
            assert (event.task, event.unit) == (first.task, first.unit), (
                f"{event} interrupts {first.task!r} before its final event"
            )
            assert event.done >= current[-1].done, f"{event.task}: done went backwards"
        current.append(event)
        assert event.total is None or event.done <= event.total, event
        if event.done == event.total:
            tasks.append((event.task, event.unit, event.done))
            current = []
    assert not current, f"{current[0].task!r} never sent its final event (done == total)"
    return tasks


def _without_commits(tasks: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    return [task for task in tasks if not task[0].startswith("commit")]


def _connect(uri: str, options: dict[str, Any], **kwargs: Any) -> Any:
    return trinity_dbapi.connect(uri, storage_options=options, **SMALL_TREE, **kwargs)


@pytest.fixture
def shop(backend: Backend) -> Iterator[tuple[Any, Recorder]]:
    """An autocommit connection with table shop.orders (id, amount) and a recorder."""
    uri, options = backend
    recorder = Recorder()
    conn = _connect(uri, options, autocommit=True, progress=recorder)
    conn.execute("CREATE NAMESPACE shop")
    conn.execute("CREATE TABLE shop.orders (id INT8 NOT NULL, amount DECIMAL(12, 2))")
    recorder.take()
    try:
        yield conn, recorder
    finally:
        conn.close()


def _count(conn: Any, table: str = "shop.orders") -> int:
    count: int = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return count


# -- the API ----------------------------------------------------------------------------


def test_progress_event_is_a_frozen_dataclass_re_exported() -> None:
    from trinity_dbapi.dbapi import ProgressEvent as FromDriver

    assert FromDriver is ProgressEvent is trinity_dbapi.ProgressEvent
    event = ProgressEvent("commit", "node files", 1)
    assert (event.task, event.unit, event.done, event.total) == ("commit", "node files", 1, None)
    with pytest.raises(FrozenInstanceError):
        event.done = 2  # type: ignore[misc]


def test_connection_progress_property(tmp_path: Any) -> None:
    recorder = Recorder()
    with trinity_dbapi.connect(str(tmp_path / "lake")) as conn:
        assert conn.progress is None
        conn.progress = recorder
        assert conn.progress is recorder and conn.session.progress is recorder
        conn.progress = None
        assert conn.session.progress is None
        with pytest.raises(errors.ProgrammingError, match="must be a callable"):
            conn.progress = "bar"  # type: ignore[assignment]
    with trinity_dbapi.connect(str(tmp_path / "lake"), progress=recorder) as conn:
        assert conn.progress is recorder
    with pytest.raises(errors.ProgrammingError, match="must be a callable"):
        trinity_dbapi.connect(str(tmp_path / "lake"), progress=3)


def test_no_handler_no_events(tmp_path: Any) -> None:
    """Without a handler nothing is reported (and nothing breaks)."""
    with trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True, **SMALL_TREE) as conn:
        conn.execute("CREATE TABLE t (id INT8)")
        conn.execute("INSERT INTO t SELECT * FROM range(10)")
        conn.execute("CALL system.compact()")
        assert _count(conn, "t") == 10


# -- what each statement reports ----------------------------------------------------------


def test_inserts_report_rows(shop: tuple[Any, Recorder]) -> None:
    conn, recorder = shop
    cur = conn.cursor()
    cur.execute("INSERT INTO shop.orders VALUES (1, 1.50), (2, 2.50), (3, NULL)")
    assert _without_commits(recorder.take()) == [("insert into shop.orders", "rows", 3)]
    cur.execute("INSERT INTO shop.orders SELECT i, NULL FROM range(10, 17) AS t(i)")
    assert _without_commits(recorder.take()) == [("insert into shop.orders", "rows", 7)]
    cur.executemany("INSERT INTO shop.orders (id) VALUES (?)", [[i] for i in range(20, 25)])
    assert _without_commits(recorder.take()) == [("insert into shop.orders", "rows", 5)]
    cur.ingest("orders", pa.table({"id": [30, 31]}), namespace="shop")
    assert _without_commits(recorder.take()) == [("insert into shop.orders", "rows", 2)]
    cur.execute("USE shop")
    cur.execute("INSERT INTO orders SELECT i, NULL FROM range(100, 100) AS t(i)")  # no rows
    assert _without_commits(recorder.take()) == [("insert into shop.orders", "rows", 0)]
    assert _count(conn) == 17


def test_insert_totals_known_or_not(shop: tuple[Any, Recorder]) -> None:
    """A whole table's total is known from the start; a reader's only at the end."""
    conn, recorder = shop
    cur = conn.cursor()
    cur.execute("INSERT INTO shop.orders VALUES (1, 1.50), (2, 2.50)")
    inserted = [e for e in recorder.events if e.task.startswith("insert")]
    assert [(e.done, e.total) for e in inserted] == [(0, 2), (2, 2)]
    recorder.events.clear()

    rows = 600_000  # more than two of the writer's chunks (256K rows)
    data = pa.table({"id": pa.array(range(rows), pa.int64())})
    cur.ingest("orders", data.to_reader(max_chunksize=50_000), namespace="shop")
    streamed = [e for e in recorder.events if e.task.startswith("insert")]
    assert streamed[0] == ProgressEvent("insert into shop.orders", "rows", 0, None)
    assert [e.total for e in streamed[1:-1]] == [None] * (len(streamed) - 2)
    assert 0 < streamed[1].done < rows  # reported as it is read, not at the end only
    assert streamed[-1] == ProgressEvent("insert into shop.orders", "rows", rows, rows)
    assert _without_commits(recorder.take()) == [("insert into shop.orders", "rows", rows)]
    assert cur.rowcount == rows
    assert _count(conn) == rows + 2


def test_ctas_update_delete_report_rows(shop: tuple[Any, Recorder]) -> None:
    conn, recorder = shop
    cur = conn.cursor()
    cur.execute("INSERT INTO shop.orders SELECT i, 1 FROM range(6) AS t(i)")
    recorder.take()
    cur.execute("CREATE TABLE shop.copy AS SELECT * FROM shop.orders WHERE id < 4")
    assert _without_commits(recorder.take()) == [("create table shop.copy", "rows", 4)]
    # one file holds all six rows: an update rewrites them all
    cur.execute("UPDATE shop.orders SET amount = 2 WHERE id = 1")
    assert _without_commits(recorder.take()) == [("update shop.orders", "rows", 6)]
    cur.execute("DELETE FROM shop.orders WHERE id = 5")
    assert _without_commits(recorder.take()) == [("delete from shop.orders", "rows", 5)]
    cur.execute("DELETE FROM shop.orders WHERE id = 99")  # no file affected: no work
    assert _without_commits(recorder.take()) == []
    assert conn.execute("SELECT sum(amount) FROM shop.orders").fetchone()[0] == 6


def test_commit_reports_node_files(backend: Backend) -> None:
    uri, options = backend
    recorder = Recorder()
    with _connect(uri, options, progress=recorder) as conn:
        cur = conn.cursor()
        # A commit's own messages stay in the root: later commits flush them.
        for i in range(6):
            cur.execute(f"CREATE TABLE first{i} (id INT8)")
            conn.commit()
        recorder.take()
        for i in range(12):
            cur.execute(f"CREATE TABLE t{i} (id INT8)")
        assert recorder.take() == []  # nothing is written before the commit
        before = set(conn.lakehouse.storage.list(""))
        conn.commit()
        written = set(conn.lakehouse.storage.list("")) - before
        node_files = [path for path in written if "node-" in path]
        assert node_files  # the tree is small: the commit flushed buffers
        assert recorder.take() == [("commit", "node files", len(node_files))]
        # A SQL COMMIT reports the same way.
        cur.execute("BEGIN")
        for i in range(12):
            cur.execute(f"DROP TABLE t{i}")
        cur.execute("COMMIT")
        (commit,) = recorder.take()
        assert commit[:2] == ("commit", "node files") and commit[2] > 0


def test_a_commit_without_node_files_reports_nothing(tmp_path: Any) -> None:
    recorder = Recorder()
    with trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True, progress=recorder) as conn:
        conn.execute("CREATE TABLE t (id INT8)")  # the default tree: a root only
        assert recorder.take() == []


def test_procedures_report_their_work(shop: tuple[Any, Recorder], backend: Backend) -> None:
    conn, recorder = shop
    cur = conn.cursor()
    for i in range(4):
        cur.execute("INSERT INTO shop.orders VALUES (?, 1)", [i])
    recorder.take()

    compacted = recorder_tasks(recorder, cur, "CALL system.compact()")
    assert [task[:2] for task in compacted] == [("compact", "node files")]

    latest = cur.execute("SELECT max(version) FROM system.versions").fetchone()[0]
    expire = "CALL system.expire_versions(older_than => TIMESTAMP '2999-01-01', retain_last => 2)"
    assert recorder_tasks(recorder, cur, expire.replace(")", ", dry_run => TRUE)")) == [
        ("expire versions (dry run)", "versions", latest - 1)
    ]
    assert recorder_tasks(recorder, cur, expire) == [("expire versions", "versions", latest - 1)]
    expired, retained, _ = cur.execute(expire).fetchone()
    assert (expired, retained) == ([], [latest - 1, latest])
    assert recorder.take() == [("expire versions", "versions", 0)]  # nothing may expire

    gc = "CALL system.collect_garbage(grace_period_millis => 0"
    dry = recorder_tasks(recorder, cur, gc + ", dry_run => TRUE)")
    deleted = cur.execute(gc + ")").fetchone()[0]
    assert deleted > 0
    assert dry == [("collect garbage (dry run)", "files", deleted)]
    assert recorder.take() == [("collect garbage", "files", deleted)]
    assert recorder_tasks(recorder, cur, gc + ")") == [("collect garbage", "files", 0)]

    assert recorder_tasks(recorder, cur, "CALL system.export_snapshot('pin')") == [
        ("export snapshot pin", "files", 0)
    ]
    # A copy of the root (and the lakehouse definition) only: a full export of
    # a lakehouse whose garbage was collected can miss a file (see
    # test_a_full_export_reports_every_file_copied).
    uri, _ = backend
    target = uri.replace("/lake", "/copy")
    cur.execute("CALL system.export_snapshot('eod', target => ?)", [target])
    assert cur.fetchone()[4] == 2
    assert recorder.take() == [("export snapshot eod", "files", 2)]

    rolled = recorder_tasks(recorder, cur, f"CALL system.rollback_to_version({latest})")
    assert [task[:2] for task in rolled] == [(f"roll back to version {latest}", "node files")]
    assert _count(conn) == 4


def test_a_full_export_reports_every_file_copied(
    shop: tuple[Any, Recorder], backend: Backend
) -> None:
    conn, recorder = shop
    for i in range(4):
        conn.execute("INSERT INTO shop.orders VALUES (?, 1)", [i])
    recorder.take()
    target = backend[0].replace("/lake", "/copy")
    call = "CALL system.export_snapshot('eod', mode => 'full', target => ?)"
    copied = conn.execute(call, [target]).fetchone()[4]
    assert copied > 2
    events = [e for e in recorder.events if not e.task.startswith("commit")]
    assert [e.done for e in events] == [*range(copied + 1), copied]  # one per file
    assert [e.total for e in events] == [None] * (copied + 1) + [copied]
    assert _without_commits(recorder.take()) == [("export snapshot eod", "files", copied)]


def recorder_tasks(recorder: Recorder, cur: Any, sql: str) -> list[tuple[str, str, int]]:
    """Run ``sql`` and return the tasks it reported (commits left out)."""
    recorder.take()
    cur.execute(sql)
    return _without_commits(recorder.take())


def test_events_come_from_the_statement_thread(tmp_path: Any) -> None:
    threads: set[int] = set()
    with trinity_dbapi.connect(
        str(tmp_path / "lake"),
        autocommit=True,
        progress=lambda e: threads.add(threading.get_ident()),
        **SMALL_TREE,
    ) as conn:
        for i in range(6):
            conn.execute(f"CREATE TABLE t{i} AS SELECT * FROM range(3)")
        conn.execute("CALL system.compact()")
    assert threads == {threading.get_ident()}


# -- retries ------------------------------------------------------------------------------


def test_node_file_progress_names_each_attempt() -> None:
    """A commit that loses the race reports its next attempt as a task of its own."""
    recorder = Recorder()
    progress = NodeFileProgress(recorder, "commit", quiet=True)
    for report in [(1, -1), (2, -1), (2, 2), (0, 0), (1, -1), (1, 1)]:
        progress(*report)
    assert recorder.take() == [
        ("commit", "node files", 2),
        ("commit, attempt 3", "node files", 1),  # attempt 2 wrote the root only
    ]
    loud = NodeFileProgress(recorder, "compact", quiet=False)
    loud.start()
    for report in [(0, 0), (0, 0)]:
        loud(*report)
    assert recorder.take() == [
        ("compact", "node files", 0),
        ("compact, attempt 2", "node files", 0),
    ]


def test_a_retried_commit_reports_both_attempts(tmp_path: Any) -> None:
    uri = str(tmp_path / "lake")
    with trinity_dbapi.connect(uri, autocommit=True, **SMALL_TREE) as setup:
        for i in range(6):
            setup.execute(f"CREATE TABLE t{i} (id INT8)")
    recorder = Recorder()
    loser = trinity_dbapi.connect(uri, isolation_level="SNAPSHOT", progress=recorder)
    winner = trinity_dbapi.connect(uri, autocommit=True)
    for i in range(4):
        loser.execute(f"CREATE TABLE a{i} (id INT8)")
    for i in range(4):
        winner.execute(f"CREATE TABLE b{i} (id INT8)")
    loser.commit()  # loses the race for its version, rebases, wins the next one
    assert [(name, unit) for name, unit, _ in recorder.take()] == [
        ("commit", "node files"),
        ("commit, attempt 2", "node files"),
    ]
    names = {row[0] for row in winner.execute("SHOW TABLES").fetchall()}
    assert {"a0", "a3", "b0", "b3"} <= names
    loser.close()
    winner.close()


# -- a handler that raises ----------------------------------------------------------------


class Stop(Exception):
    """What the test handlers raise."""


def _stopper(when: Any) -> Any:
    """A handler raising Stop on the first event ``when(event)`` accepts."""

    def handler(event: ProgressEvent) -> None:
        if when(event):
            raise Stop(f"stopped at {event.done} {event.unit}")

    return handler


def _latest(conn: Any) -> int:
    latest: int = conn.lakehouse.latest_version()
    return latest


@pytest.mark.parametrize(
    ("statement", "task"),
    [
        ("INSERT INTO shop.orders VALUES (9, 9), (10, 10)", "insert into shop.orders"),
        ("INSERT INTO shop.orders SELECT i, 0 FROM range(100, 110) AS t(i)", "insert"),
        ("CREATE TABLE shop.copy AS SELECT * FROM shop.orders", "create table shop.copy"),
        ("UPDATE shop.orders SET amount = 0", "update shop.orders"),
        ("DELETE FROM shop.orders WHERE id = 1", "delete from shop.orders"),
        ("CALL system.compact()", "compact"),
        ("CALL system.rollback_to_version(1)", "roll back"),
        ("CALL system.export_snapshot('pin')", "export snapshot pin"),
    ],
)
@pytest.mark.parametrize("at", ["start", "end"])
def test_a_raising_handler_stops_the_statement_and_changes_nothing(
    shop: tuple[Any, Recorder], statement: str, task: str, at: str
) -> None:
    conn, _ = shop
    conn.execute("INSERT INTO shop.orders VALUES (1, 1), (2, 2), (3, 3)")
    before = (_latest(conn), conn.execute("SELECT * FROM shop.orders ORDER BY id").fetchall())
    final = at == "end"
    conn.progress = _stopper(lambda e: e.task.startswith(task) and (e.done == e.total) == final)
    with pytest.raises(errors.ProgressHandlerError) as info:
        conn.execute(statement)
    assert isinstance(info.value, errors.OperationalError)
    assert isinstance(info.value.__cause__, Stop) and info.value.error is info.value.__cause__
    assert info.value.task.startswith(task)
    message = str(info.value)
    assert "progress handler raised Stop (stopped at" in message
    assert "connection.progress = None" in message
    conn.progress = None
    after = (_latest(conn), conn.execute("SELECT * FROM shop.orders ORDER BY id").fetchall())
    assert after == before
    assert conn.execute("SHOW TABLES IN shop").fetchall() == [("orders",)]
    # the connection goes on working
    conn.execute(statement)
    assert _latest(conn) > before[0]


def test_a_raising_handler_stops_a_streamed_ingest_midway(shop: tuple[Any, Recorder]) -> None:
    conn, _ = shop
    before = _latest(conn)
    read: list[int] = []

    def batches() -> Iterator[pa.RecordBatch]:
        for start in range(0, 1_000_000, 100_000):
            read.append(start)
            yield pa.record_batch({"id": pa.array(range(start, start + 100_000), pa.int64())})

    schema = pa.schema([("id", pa.int64())])
    conn.progress = _stopper(lambda e: e.done > 0)
    with pytest.raises(
        errors.ProgressHandlerError, match=r"'insert into shop\.orders' was at 300000 rows"
    ):
        conn.cursor().ingest(
            "orders", pa.RecordBatchReader.from_batches(schema, batches()), namespace="shop"
        )
    assert len(read) < 10  # stopped while reading, not after
    conn.progress = None
    assert (_latest(conn), _count(conn)) == (before, 0)


def test_a_raising_handler_aborts_a_commit(backend: Backend) -> None:
    uri, options = backend
    with _connect(uri, options) as conn:
        for i in range(6):  # committed one by one: later commits flush their messages
            conn.execute(f"CREATE TABLE keep{i} (id INT8)")
            conn.commit()
        before = _latest(conn)
        tables = conn.execute("SHOW TABLES").fetchall()
        for final in (False, True):  # while writing node files, and just before the root
            conn.progress = _stopper(lambda e, final=final: (e.done == e.total) == final)
            for i in range(8):
                conn.execute(f"CREATE TABLE t{i} (id INT8)")
            with pytest.raises(errors.ProgressHandlerError, match="'commit'"):
                conn.commit()
            assert not conn.in_transaction  # the transaction is gone, as after a conflict
            assert _latest(conn) == before
        conn.progress = None
        assert conn.execute("SHOW TABLES").fetchall() == tables
        conn.execute("CREATE TABLE t0 (id INT8)")
        conn.commit()
        assert _latest(conn) == before + 1


def test_a_raising_handler_stops_garbage_collection_and_expiration(
    shop: tuple[Any, Recorder],
) -> None:
    conn, recorder = shop
    for i in range(5):
        conn.execute("INSERT INTO shop.orders VALUES (?, 1)", [i])
    conn.execute("UPDATE shop.orders SET amount = 2")  # the old data files become garbage
    latest = _latest(conn)
    conn.progress = _stopper(lambda e: e.task == "expire versions" and e.done == 5)
    expire = "CALL system.expire_versions(older_than => TIMESTAMP '2999-01-01', retain_last => 1)"
    with pytest.raises(errors.ProgressHandlerError):
        conn.execute(expire)
    # what it deleted was past retention; the rest is still there, contiguous
    versions = [row[0] for row in conn.execute("SELECT version FROM system.versions").fetchall()]
    assert versions == list(range(5, latest + 1))
    gc = "CALL system.collect_garbage(grace_period_millis => 0)"
    conn.progress = None
    assert conn.execute(gc.replace(")", ", dry_run => TRUE)")).fetchone()[0] > 1
    conn.progress = _stopper(lambda e: e.task == "collect garbage" and e.done == 1)
    with pytest.raises(errors.ProgressHandlerError):
        conn.execute(gc)
    assert conn.execute("SELECT sum(amount) FROM shop.orders").fetchone()[0] == 10
    conn.progress = recorder
    recorder.take()
    conn.execute(expire)
    conn.execute(gc)
    assert _count(conn) == 5 and _latest(conn) == latest
    assert [task[:2] for task in recorder.take()] == [
        ("expire versions", "versions"),
        ("collect garbage", "files"),
    ]


def test_keyboard_interrupt_in_a_handler_undoes_the_statement(shop: tuple[Any, Recorder]) -> None:
    conn, _ = shop
    before = _latest(conn)

    def interrupt(event: ProgressEvent) -> None:
        if event.done:
            raise KeyboardInterrupt

    conn.progress = interrupt
    with pytest.raises(KeyboardInterrupt):
        conn.execute("INSERT INTO shop.orders VALUES (1, 1)")
    conn.progress = None
    assert (_latest(conn), _count(conn)) == (before, 0)
