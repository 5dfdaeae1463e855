"""Scripts exit quietly: nothing on stderr at interpreter exit but what the script printed.

DuckDB 2.x prints "nanobind: leaked ..." reports for every DuckDB object
still alive when its module is torn down. A connection kept by an uncaught
exception's traceback, a reference cycle, or a result streamed half-way
used to be such objects; sessions now release DuckDB at exit
(``trinity_dbapi.sql.engine.session``).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SETUP = """
import sys
import trinity_dbapi

def open_lake():
    conn = trinity_dbapi.connect(sys.argv[1], autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE IF NOT EXISTS n")
    cur.execute("CREATE TABLE IF NOT EXISTS n.t (x INT8)")
    cur.execute("INSERT INTO n.t SELECT * FROM range(300000)")
    return conn, cur
"""

#: name -> (script body, what stderr holds: "" means stderr is empty).
SCRIPTS = {
    "uncaught error with the connection in the traceback": (
        """
def work():
    conn, cur = open_lake()
    cur.execute("SELECT count(*) FROM n.t").fetchone()
    raise RuntimeError("boom")
work()
""",
        "RuntimeError: boom",
    ),
    "uncaught SQL error": (
        """
def work():
    conn, cur = open_lake()
    cur.execute("SELECT no_such_column FROM n.t")
work()
""",
        "no_such_column",
    ),
    "a result streamed half-way": (
        """
def work():
    conn, cur = open_lake()
    cur.execute("SELECT * FROM n.t")
    assert len(cur.fetchmany(10)) == 10
    raise RuntimeError("stop reading")
work()
""",
        "RuntimeError: stop reading",
    ),
    "connections in a reference cycle, never closed": (
        """
conn, cur = open_lake()
cur.execute("SELECT * FROM n.t").fetchone()
cur.cycle = [cur, conn]
conn.cycle = cur
""",
        "",
    ),
    "a closed connection": (
        """
conn, cur = open_lake()
cur.execute("SELECT * FROM n.t").fetchone()
conn.close()
""",
        "",
    ),
}


#: Scripts of the shapes that aborted or printed noise at exit (issue 14, item 14):
#: each runs several times, since exit races show up in a few runs out of 25.
STRESS = {
    "several connections with results fetched part-way": """
kept = []
for _ in range(3):
    conn, cur = open_lake()
    cur.execute("SELECT * FROM n.t, range(3)")
    assert len(cur.fetchmany(5)) == 5
    kept.append((conn, cur))
""",
    "a thread holding a half-read cursor at exit": """
import threading, time
ready = threading.Event()
def work():
    conn, cur = open_lake()
    cur.execute("SELECT * FROM n.t")
    cur.fetchmany(5)
    ready.set()
    time.sleep(600)
threading.Thread(target=work, daemon=True).start()
assert ready.wait(60)
""",
    "a thread running a statement at exit": """
import threading, time
ready = threading.Event()
def work():
    conn, cur = open_lake()
    ready.set()
    try:
        cur.execute("SELECT count(*) FROM range(10000000000)")
    except trinity_dbapi.Error:
        pass  # interrupted by the exit
threading.Thread(target=work, daemon=True).start()
assert ready.wait(60)
time.sleep(0.3)
""",
    "a connection opened and used in another thread": """
import threading
kept = []
def work():
    conn, cur = open_lake()
    cur.execute("SELECT * FROM n.t")
    cur.fetchmany(5)
    kept.append((conn, cur))
thread = threading.Thread(target=work)
thread.start()
thread.join()
""",
    "a record batch reader left open": """
conn, cur = open_lake()
cur.execute("SELECT * FROM n.t")
reader = cur.fetch_record_batch(100)
assert reader.read_next_batch().num_rows == 100
""",
    "an exception's traceback holding a cursor": """
try:
    conn, cur = open_lake()
    cur.execute("SELECT * FROM n.t")
    cur.fetchmany(5)
    raise ValueError("kept")
except ValueError as exc:
    saved = exc
""",
    "the DuckDB bridge with a result read part-way": """
import duckdb
from trinity_dbapi.duckdb import attach
conn, cur = open_lake()
conn.close()
con = duckdb.connect()
attached = attach(con, sys.argv[1])
result = con.execute("SELECT * FROM n.t")
assert len(result.fetchmany(5)) == 5
""",
    "a pandas read_sql chunk iterator left open": """
import pandas as pd
import sqlalchemy as sa
conn, cur = open_lake()
conn.close()
engine = sa.create_engine("trinity:///" + sys.argv[1])
chunks = pd.read_sql("SELECT * FROM n.t", engine, chunksize=1000)
assert len(next(chunks)) == 1000
""",
}


def _stress(name: str, runs: int, tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SETUP) + textwrap.dedent(STRESS[name]))
    for run in range(runs):
        done = subprocess.run(
            [sys.executable, str(script), str(tmp_path / "lake")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, ""), f"run {run + 1} of {runs}"


@pytest.mark.parametrize("name", sorted(STRESS))
def test_scripts_exit_cleanly_run_after_run(name: str, tmp_path: Path) -> None:
    _stress(name, 3, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(STRESS))
def test_scripts_exit_cleanly_25_runs(name: str, tmp_path: Path) -> None:
    _stress(name, 25, tmp_path)


def test_a_connection_released_at_exit_rolls_back_and_closes_quietly(tmp_path: Path) -> None:
    # Pools and iterators finalized after the atexit release (SQLAlchemy's
    # reset-on-return) roll back their connections: that must not raise.
    import trinity_dbapi
    from trinity_dbapi.sql.engine.duckdb_lifecycle import release_at_exit

    conn = trinity_dbapi.connect(str(tmp_path / "lake"))
    conn.execute("SELECT 1").fetchone()
    release_at_exit()
    assert conn.closed
    conn.rollback()
    conn.close()
    with pytest.raises(trinity_dbapi.InterfaceError, match="closed"):
        conn.commit()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_exits_without_leak_reports(name: str, tmp_path: Path) -> None:
    body, ending = SCRIPTS[name]
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SETUP) + textwrap.dedent(body))
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "lake")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "nanobind" not in done.stderr
    assert "leaked" not in done.stderr
    if ending:
        assert done.returncode == 1
        assert ending in done.stderr
    else:
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""


def test_a_closed_connection_closes_the_streams_it_started(tmp_path: Path) -> None:
    import trinity_dbapi
    from trinity_dbapi import InterfaceError

    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("SELECT * FROM range(500000)")
    assert cur.fetchone() == (0,)
    session = conn.session
    assert len(session._streams) == 1
    conn.close()
    assert len(session._streams) == 0
    with pytest.raises(InterfaceError, match="closed"):
        cur.fetchone()


def test_abandon_at_exit_drops_the_transaction_without_storage(tmp_path: Path) -> None:
    import trinity_dbapi
    from trinity_dbapi.sql.engine.duckdb_lifecycle import release_at_exit

    conn = trinity_dbapi.connect(str(tmp_path / "lake"))
    conn.execute("CREATE NAMESPACE n")  # uncommitted
    conn.execute("SELECT 1").fetchone()  # opens the private DuckDB
    release_at_exit()
    assert conn.closed
    again = trinity_dbapi.connect(str(tmp_path / "lake"), read_only=True)
    assert again.execute("SHOW NAMESPACES").fetchall() == [
        ("information_schema",),
        ("system",),
    ]
    again.close()


def test_the_session_fails_tests_whose_scripts_leave_exit_noise() -> None:
    # tests/conftest.py wraps subprocess.run for every test of the session.
    noisy = "import sys; sys.stderr.write('nanobind: leaked 3 instances!\\n')"
    with pytest.raises(pytest.fail.Exception, match="exit noise"):
        subprocess.run([sys.executable, "-c", noisy], capture_output=True, text=True, check=False)
    quiet = subprocess.run(
        [sys.executable, "-c", "print('ok')"], capture_output=True, text=True, check=True
    )
    assert quiet.stdout == "ok\n"
