"""Scripts exit quietly: nothing on stderr at interpreter exit but what the script printed.

DuckDB 2.x prints "nanobind: leaked ..." reports for every DuckDB object
still alive when its module is torn down. A connection kept by an uncaught
exception's traceback, a reference cycle, or a result streamed half-way
used to be such objects; sessions now release DuckDB at exit
(``trinity_dbapi.sql.session``).
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
    from trinity_dbapi.sql.session import _release_at_exit

    conn = trinity_dbapi.connect(str(tmp_path / "lake"))
    conn.execute("CREATE NAMESPACE n")  # uncommitted
    conn.execute("SELECT 1").fetchone()  # opens the private DuckDB
    _release_at_exit()
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
