"""Stopping runaway statements: Connection.interrupt(), statement_timeout and Ctrl-C in the shell."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import trinity_dbapi
from trinity_dbapi.errors import (
    OperationalError,
    ProgrammingError,
    QueryInterruptedError,
    StatementTimeoutError,
)

#: DuckDB works on these for hours (or forever) unless stopped.
ENDLESS_COUNT = "SELECT count(*) FROM range(1000000000000000)"
ENDLESS_RECURSION = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
)
#: How long tests wait for something that should take milliseconds (a hang guard, not a timing).
HANG = 60

# A statement nobody can stop would hang the run: fail instead (the thread
# method, as the main thread may be inside DuckDB where no signal reaches it).
pytestmark = pytest.mark.timeout(300, method="thread")


def _memory(name: str) -> str:
    """A fresh in-memory lakehouse (memory:// ones live as long as the process)."""
    return f"memory://{name}-{uuid.uuid4().hex}"


def _interrupt_when_running(conn: trinity_dbapi.Connection) -> threading.Thread:
    """A thread that interrupts ``conn`` as soon as a statement holds its lock."""
    assert callable(getattr(conn, "interrupt", None)), "Connection.interrupt() is missing"

    def interrupt() -> None:
        # The statement holds the connection's lock while it runs; interrupt() must not
        # wait for it. Keep interrupting until the statement is seen running (an
        # interrupt with no statement running does nothing).
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            if conn.session.control._running:
                conn.interrupt()
                return
            time.sleep(0.01)

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("sql", [ENDLESS_COUNT, ENDLESS_RECURSION], ids=["range", "recursive"])
def test_interrupt_from_another_thread_stops_duckdb_and_keeps_the_transaction(sql: str) -> None:
    uri = _memory("interrupt-query")
    conn = trinity_dbapi.connect(uri)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT8)")
    cur.execute("INSERT INTO t VALUES (1)")
    thread = _interrupt_when_running(conn)
    with pytest.raises(QueryInterruptedError) as caught:
        cur.execute(sql)
    thread.join(HANG)
    assert isinstance(caught.value, OperationalError)
    assert not isinstance(caught.value, StatementTimeoutError)
    message = str(caught.value)
    keyword = sql.split()[0]
    assert f"the {keyword} statement was interrupted" in message
    assert "still usable" in message
    # The transaction is still open with its earlier change, and the connection works.
    assert conn.in_transaction
    assert cur.execute("SELECT id FROM t").fetchall() == [(1,)]
    conn.commit()
    other = trinity_dbapi.connect(uri)
    assert other.execute("SELECT id FROM t").fetchall() == [(1,)]


def test_interrupt_while_rows_are_streamed() -> None:
    conn = trinity_dbapi.connect(_memory("interrupt-stream"), autocommit=True)
    cur = conn.execute("SELECT * FROM range(1000000000000000)")
    cur.fetchmany(3)
    thread = _interrupt_when_running(conn)
    with pytest.raises(QueryInterruptedError, match="reading the query's rows was interrupted"):
        cur.fetchall()
    thread.join(HANG)
    assert conn.execute("SELECT 42").fetchall() == [(42,)]


def test_interrupt_with_nothing_running_does_nothing() -> None:
    conn = trinity_dbapi.connect(_memory("interrupt-idle"), autocommit=True)
    conn.interrupt()
    conn.interrupt()
    assert conn.execute("SELECT 42").fetchall() == [(42,)]


def test_interrupt_does_not_wait_for_the_connection_lock() -> None:
    conn = trinity_dbapi.connect(_memory("interrupt-lock"), autocommit=True)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            conn.execute(ENDLESS_COUNT)
        except trinity_dbapi.Error as exc:  # recorded for the main thread
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    while not conn.session.control._running:  # the worker holds the lock now
        time.sleep(0.01)
    caller = threading.Thread(target=conn.interrupt, daemon=True)
    caller.start()
    caller.join(HANG)
    worker.join(HANG)
    assert not caller.is_alive() and not worker.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], QueryInterruptedError)


def _count(conn: trinity_dbapi.Connection) -> tuple[int, int]:
    """(rows of t, versions of the lakehouse)."""
    rows = conn.execute("SELECT count(*) FROM t").fetchone()
    versions = conn.execute("SELECT count(*) FROM system.versions").fetchone()
    assert rows is not None and versions is not None
    return rows[0], versions[0]


@pytest.mark.parametrize("autocommit", [True, False], ids=["autocommit", "transaction"])
def test_interrupted_ingest_writes_nothing(autocommit: bool) -> None:
    conn = trinity_dbapi.connect(_memory("interrupt-ingest"), autocommit=True)
    conn.execute("CREATE TABLE t (id INT8)")
    conn.execute("INSERT INTO t VALUES (0)")
    before = _count(conn)
    conn.autocommit = autocommit
    batches_read = []

    def batches() -> Iterator[pa.RecordBatch]:
        for i in range(1000):
            batches_read.append(i)
            if i == 3:  # the write is under way: stop it from another thread
                stopper = threading.Thread(target=conn.interrupt)
                stopper.start()
                stopper.join()
            yield pa.record_batch({"id": pa.array([i] * 1000, pa.int64())})

    reader = pa.RecordBatchReader.from_batches(pa.schema({"id": pa.int64()}), batches())
    with pytest.raises(QueryInterruptedError, match="ingest into t was interrupted"):
        conn.cursor().ingest("t", reader)
    assert len(batches_read) < 1000  # it stopped early, not at the end
    assert _count(conn) == before
    conn.commit()
    assert _count(conn) == before


@pytest.mark.parametrize("autocommit", [True, False], ids=["autocommit", "transaction"])
def test_interrupted_executemany_writes_nothing(autocommit: bool) -> None:
    conn = trinity_dbapi.connect(_memory("interrupt-many"), autocommit=True)
    conn.execute("CREATE TABLE t (id INT8)")
    conn.execute("INSERT INTO t VALUES (0)")
    before = _count(conn)
    conn.autocommit = autocommit
    if not autocommit:
        conn.execute("INSERT INTO t VALUES (1)")  # an earlier change the interrupt keeps
    events = []

    def on_progress(event: trinity_dbapi.ProgressEvent) -> None:
        events.append(event)
        if event.task == "insert into default.t" and event.done > 0:
            stopper = threading.Thread(target=conn.interrupt)
            stopper.start()
            stopper.join()

    conn.progress = on_progress
    with pytest.raises(QueryInterruptedError, match="the INSERT statement was interrupted"):
        conn.cursor().executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(50_000)])
    conn.progress = None
    assert any(e.done > 0 for e in events)
    rows, versions = _count(conn)
    assert versions == before[1]
    assert rows == before[0] + (0 if autocommit else 1)


def test_statement_timeout_stops_a_recursive_query() -> None:
    conn = trinity_dbapi.connect(_memory("timeout-connect"), autocommit=True, statement_timeout=0.2)
    assert conn.statement_timeout == 0.2
    with pytest.raises(StatementTimeoutError) as caught:
        conn.execute(ENDLESS_RECURSION)
    assert isinstance(caught.value, OperationalError)
    assert caught.value.timeout == 0.2
    message = str(caught.value)
    assert "statement_timeout of 0.2 seconds" in message
    assert "connection.statement_timeout" in message
    conn.statement_timeout = None
    assert conn.statement_timeout is None
    assert conn.execute("SELECT 42").fetchall() == [(42,)]
    conn.statement_timeout = 30
    assert conn.execute("SELECT count(*) FROM range(1000)").fetchall() == [(1000,)]


def test_statement_timeout_bounds_reading_a_streamed_result() -> None:
    conn = trinity_dbapi.connect(_memory("timeout-fetch"), autocommit=True, statement_timeout=0.2)
    cur = conn.execute("SELECT * FROM range(1000000000000000)")
    with pytest.raises(StatementTimeoutError, match="reading the query's rows ran longer"):
        cur.fetchall()


@pytest.mark.parametrize("value", ["1", -1, float("nan"), float("inf"), True, [1]])
def test_statement_timeout_refuses_what_is_not_seconds(value: object) -> None:
    with pytest.raises(ProgrammingError, match="statement_timeout"):
        trinity_dbapi.connect(_memory("timeout-bad"), statement_timeout=value)  # type: ignore[arg-type]
    conn = trinity_dbapi.connect(_memory("timeout-bad"))
    with pytest.raises(ProgrammingError, match="statement_timeout"):
        conn.statement_timeout = value  # type: ignore[assignment]
    assert conn.statement_timeout is None


def test_statement_timeout_zero_is_no_limit() -> None:
    conn = trinity_dbapi.connect(_memory("timeout-zero"), statement_timeout=0)
    assert conn.statement_timeout is None


def test_statement_timeout_as_a_sqlalchemy_url_parameter() -> None:
    sqlalchemy = pytest.importorskip("sqlalchemy")
    engine = sqlalchemy.create_engine(
        # Generous: SQLAlchemy's own first statements on connecting run under it too.
        f"trinity:///{_memory('timeout-url')}?statement_timeout=5&autocommit=true"
    )
    with engine.connect() as connection:
        with pytest.raises(sqlalchemy.exc.OperationalError) as caught:
            connection.execute(sqlalchemy.text(ENDLESS_RECURSION))
        assert isinstance(caught.value.orig, StatementTimeoutError)
        assert caught.value.orig.timeout == 5
        assert connection.execute(sqlalchemy.text("SELECT 42")).scalar() == 42
    engine.dispose()
    with pytest.raises(sqlalchemy.exc.ArgumentError, match="statement_timeout"):
        sqlalchemy.create_engine("trinity:///memory://timeout-url?statement_timeout=soon").connect()


# -- the shell ------------------------------------------------------------------------


def _trinity(*args: str) -> list[str]:
    return [sys.executable, "-m", "trinity_dbapi.cli", *args]


def _spawn(argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start the shell with Ctrl-C's default disposition, whatever this test run inherited.

    A run started in the background by a shell without job control (``cmd &``
    in a script, ``nohup``) inherits SIGINT *ignored*, and an ignored signal
    stays ignored across exec: the shell would then rightly never see the
    Ctrl-C these tests send. A *handled* signal is reset to the default by
    exec, so SIGINT is handled here while the child starts.
    """
    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(argv, **kwargs)
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("option", ["-c", "-f"])
def test_ctrl_c_stops_a_script_with_exit_status_130(option: str, tmp_path: Path) -> None:
    script = f"SELECT 'started';\n{ENDLESS_COUNT};\nSELECT 'never';\n"
    if option == "-f":
        (tmp_path / "script.sql").write_text(script)
        argv = _trinity(str(tmp_path / "lake"), "-f", str(tmp_path / "script.sql"))
    else:
        argv = _trinity(str(tmp_path / "lake"), "-c", script)
    process = _spawn(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    # The first statement's output (its table's header line): the endless one starts now.
    assert process.stdout.readline().strip()
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=5)  # the issue: "within a second"
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError("Ctrl-C did not stop the shell") from None
    assert process.returncode == 130
    assert b"never" not in out
    assert b"was interrupted" in err


def _read_until(fd: int, marker: bytes, seen: bytearray, since: int) -> int:
    """Read the terminal until ``marker`` shows after ``since``; where it ends (hang guard: 30 s)."""
    deadline = time.monotonic() + 30
    while (found := bytes(seen).find(marker, since)) < 0:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise AssertionError(f"no {marker!r} on the terminal; it shows {bytes(seen)!r}")
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the shell closed the terminal
            chunk = b""
        if not chunk:
            raise AssertionError(f"the shell exited before {marker!r}; it showed {bytes(seen)!r}")
        seen.extend(chunk)
    return found + len(marker)


def test_ctrl_c_at_the_prompt_stops_the_statement_and_returns_to_the_prompt(
    tmp_path: Path,
) -> None:
    controller, terminal = pty.openpty()
    env = {**os.environ, "TRINITY_HISTORY": str(tmp_path / "history")}
    process = _spawn(
        _trinity(str(tmp_path / "lake"), "--no-progress"),
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        start_new_session=True,
    )
    os.close(terminal)
    seen = bytearray()
    try:
        at = _read_until(controller, b"trinity> ", seen, 0)
        os.write(controller, f"{ENDLESS_COUNT};\n".encode())
        at = _read_until(controller, b"range", seen, at)  # the echo: the statement is submitted
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        at = _read_until(controller, b"was interrupted", seen, at)
        at = _read_until(controller, b"trinity> ", seen, at)
        os.write(controller, b"SELECT 40 + 2;\n")
        at = _read_until(controller, b"42", seen, at)
        _read_until(controller, b"trinity> ", seen, at)
        os.write(controller, b".quit\n")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)


@pytest.mark.parametrize("where", ["local", "memory"])
def test_interrupts_at_random_moments_stop_a_statement_or_miss_it_never_break_it(
    where: str, tmp_path: Path
) -> None:
    # An interrupt may land anywhere: planning, registering a table with DuckDB,
    # binding its scan, running, dropping the registration, writing, committing.
    # Every statement must then either complete correctly or raise
    # QueryInterruptedError, and the connection must go on working.
    uri = str(tmp_path / "lake") if where == "local" else _memory("interrupt-random")
    conn = trinity_dbapi.connect(uri, autocommit=True)
    conn.execute("CREATE TABLE t (id INT8, part INT8) PARTITIONED BY (part)")
    conn.execute("INSERT INTO t SELECT range, range % 3 FROM range(1000)")
    stop = threading.Event()

    def keep_interrupting() -> None:
        delays = [0.0, 0.001, 0.003, 0.007]
        i = 0
        while not stop.is_set():
            conn.interrupt()
            time.sleep(delays[i % len(delays)])
            i += 1

    interrupter = threading.Thread(target=keep_interrupting, daemon=True)
    interrupter.start()
    inserted = 0
    outcomes = {"done": 0, "interrupted": 0}
    try:
        for i in range(150):
            try:
                if i % 3 == 0:
                    conn.execute("INSERT INTO t VALUES (?, ?)", (10_000 + i, i % 3))
                    inserted += 1
                else:
                    rows = conn.execute("SELECT count(*), sum(id) FROM t WHERE part = 1").fetchall()
                    assert rows[0][0] >= 333
                outcomes["done"] += 1
            except QueryInterruptedError:
                outcomes["interrupted"] += 1
    finally:
        stop.set()
        interrupter.join(HANG)
    assert outcomes["done"] + outcomes["interrupted"] == 150
    # Each INSERT either committed whole or not at all.
    (count,) = conn.execute("SELECT count(*) FROM t WHERE id >= 10000").fetchone()
    assert count <= inserted
    assert conn.execute("SELECT count(*) FROM t WHERE id < 1000").fetchone() == (1000,)
