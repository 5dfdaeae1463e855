"""Sessions share a DuckDB database per root, and nothing a session does reaches another.

The claims of :mod:`trinity_dbapi.sql.engine.duckdb_pool`, each checked here:
one database per local root's real path (one for every remote root), a
connection of its own per session, nothing left in the database's own
catalog by any kind of statement, another session's registered relations and
temporary tables out of sight, an interrupt that stops one session's query
only, and a commit one session makes read by the next statement of another.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.sql.engine import duckdb_pool

#: Every kind of statement that runs SQL in DuckDB, in one session.
STATEMENTS = [
    "CREATE TABLE t (id INT8, v VARCHAR) PARTITIONED BY (bucket(2, id))",
    "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    "INSERT INTO t SELECT i, 'x' || i FROM range(10, 20) r(i)",
    "UPDATE t SET v = 'B' WHERE id = 2",
    "DELETE FROM t WHERE id = 3",
    "CREATE TABLE s AS SELECT id, v FROM t WHERE id < 12",
    (
        "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v || '!' "
        "WHEN NOT MATCHED THEN INSERT *"
    ),
    "UPDATE t SET v = s.v FROM s WHERE t.id = s.id",
    "CREATE VIEW w AS SELECT id FROM t WHERE id > 1",
    "SELECT count(*) FROM w",
    "SELECT * FROM t ORDER BY id",
    "CALL system.rewrite_data_files('t')",
    "SELECT * FROM system.data_files",
]


def _catalog(duck: Any) -> list[Any]:
    """What a DuckDB connection sees of tables and views beside DuckDB's own."""
    tables = duck.execute("SELECT 'table', table_name, temporary FROM duckdb_tables()").fetchall()
    views = duck.execute(
        "SELECT 'view', view_name, temporary FROM duckdb_views() WHERE NOT internal"
    ).fetchall()
    return sorted(tables + views)


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_no_statement_leaves_anything_in_the_shared_database(tmp_path: Path, kind: str) -> None:
    uri = str(tmp_path / "lake") if kind == "local" else f"memory://pool-{uuid.uuid4().hex}"
    conn = trinity_dbapi.connect(uri, autocommit=True)
    cur = conn.cursor()
    for sql in STATEMENTS:
        cur.execute(sql)
        if cur.description is not None:
            cur.fetchall()
    other = trinity_dbapi.connect(uri)
    assert other.session.duckdb() is not conn.session.duckdb()
    assert _lease(other).database is _lease(conn).database  # one database, two connections
    # Nothing the statements made is in the database's own catalog, and the
    # other connection sees nothing of this one's.
    assert [row for row in _catalog(conn.session.duckdb()) if not row[2]] == []
    assert _catalog(other.session.duckdb()) == []
    assert other.cursor().execute("SELECT count(*) FROM t").fetchone() == (12,)
    other.close()
    conn.close()


def test_registered_relations_and_temporary_tables_stay_with_their_session(
    tmp_path: Path,
) -> None:
    import pyarrow as pa

    uri = f"memory://pool-{uuid.uuid4().hex}"
    one, two = trinity_dbapi.connect(uri), trinity_dbapi.connect(uri)
    mine = one.session.duckdb()
    mine.register("secret_rows", pa.table({"secret": ["s3cr3t"]}))
    mine.execute("CREATE TEMP TABLE secret_copy AS SELECT * FROM secret_rows")
    theirs = two.session.duckdb()
    for name in ("secret_rows", "secret_copy"):
        with pytest.raises(Exception, match="does not exist"):
            theirs.execute(f"SELECT * FROM {name}").fetchall()
    assert _catalog(theirs) == []
    one.close()
    # A later session on the same database starts with nothing of the closed one's.
    three = trinity_dbapi.connect(uri)
    assert _lease(three).database is _lease(two).database
    assert _catalog(three.session.duckdb()) == []
    three.close()
    two.close()


def test_one_database_per_root_and_one_for_remote_roots(tmp_path: Path) -> None:
    # Created at once: before that a root is no folder DuckDB could be allowed.
    first = trinity_dbapi.connect(str(tmp_path / "a"), create=True)
    same = trinity_dbapi.connect(str(tmp_path / "a" / "." / ""))  # the same real path
    (tmp_path / "link").symlink_to(tmp_path / "a")
    linked = trinity_dbapi.connect(str(tmp_path / "link"))
    other = trinity_dbapi.connect(str(tmp_path / "b"), create=True)
    remote = [trinity_dbapi.connect(f"memory://pool-{uuid.uuid4().hex}") for _ in range(2)]
    databases = [_lease(c).database for c in (first, same, linked, other, *remote)]
    assert databases[0] is databases[1] is databases[2]
    assert databases[3] is not databases[0]
    assert databases[4] is databases[5] and databases[4].visible_root is None
    assert databases[4] is not databases[0] and databases[4] is not databases[3]
    for conn in (first, same, linked, other, *remote):
        conn.close()


def test_an_interrupt_stops_one_sessions_query_only(tmp_path: Path) -> None:
    uri = f"memory://pool-{uuid.uuid4().hex}"
    slow = "SELECT count(*) FROM range(4000000000) a(i) WHERE i % 7 = 3"
    one, two = trinity_dbapi.connect(uri), trinity_dbapi.connect(uri)
    assert _lease(one).database is _lease(two).database
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            one.cursor().execute(slow).fetchall()
        except errors.Error as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    one.interrupt()
    thread.join(30)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), errors.OperationalError)
    # The other session's query on the same database runs to its end.
    assert two.cursor().execute("SELECT count(*) FROM range(1000)").fetchone() == (1000,)
    one.close()
    two.close()


def test_a_commit_is_read_by_the_next_statement_of_another_session(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    writer = trinity_dbapi.connect(uri, autocommit=True)
    reader = trinity_dbapi.connect(uri, autocommit=True)
    writer.cursor().execute("CREATE TABLE t (v INT8)")
    sums = []
    for batch in range(3):
        writer.cursor().execute("INSERT INTO t SELECT i FROM range(?) r(i)", [batch + 2])
        sums.append(reader.cursor().execute("SELECT count(*), sum(v) FROM t").fetchone())
    assert sums == [(2, 1), (5, 4), (9, 10)]
    assert _lease(writer).database is _lease(reader).database
    writer.close()
    reader.close()


def _lease(conn: Any) -> duckdb_pool.Lease:
    conn.session.duckdb()
    lease = conn.session._lease
    assert lease is not None
    return lease


_EXIT_WHILE_OPENING = """
import duckdb, time
from trinity_dbapi.sql import table_functions
from trinity_dbapi.sql.engine import duckdb_pool
real = duckdb_pool._open
def slow(key, root):
    # Still in DuckDB's C++ when the main thread ends.
    duckdb.connect().execute("SELECT count(*) FROM range(200000000)").fetchall()
    return real(key, root)
duckdb_pool._open = slow
duckdb_pool.open_ahead()
table_functions.learn_ahead()
time.sleep(0.05)
"""


def test_a_process_that_exits_while_duckdb_opens_ahead_exits_cleanly() -> None:
    """The threads a remote connect starts are joined at exit, never torn down in C++.

    As daemon threads, a process that exited at once (a shell command refused
    before any request) aborted: 'terminate called after throwing', exit 134.
    """
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WHILE_OPENING],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_open_ahead_leaves_an_idle_database_the_first_lease_takes() -> None:
    duckdb_pool.close_idle()
    before = duckdb_pool.open_count()
    duckdb_pool.open_ahead()
    for thread in threading.enumerate():
        if thread.name == "trinity-duckdb-open":
            thread.join(30)
    assert duckdb_pool.open_count() == before + 1
    handed = duckdb_pool.lease(None)
    try:
        assert duckdb_pool.open_count() == before + 1  # the same database, not a second
        assert handed.connection.execute("SELECT 42").fetchall() == [(42,)]
    finally:
        duckdb_pool.drop(handed)
