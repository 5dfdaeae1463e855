"""The sandbox of the private DuckDB: SQL reads the lakehouse root's files and nothing else.

Escape attempts through every table function that opens files, over paths
outside the root in every form (absolute, relative, ``~``, ``file://``,
through a symbolic link inside the root), on roots whose names DuckDB could
misread; DuckDB's temporary directory; a remote root. Each must fail with a
PEP 249 error, and the lakehouse's own tables must still read correctly.
"""

from __future__ import annotations

import atexit
import gc
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.sql.engine import duckdb_pool

#: Root names DuckDB must not misread: a backslash (a separator to DuckDB),
#: ``..`` inside a name, glob characters, URL escapes, quotes, unicode, and
#: ``=`` (a hive partition to DuckDB). ``?`` and ``#`` are refused when
#: connecting (the URI rules: they start a query or a fragment).
ODD_ROOT_NAMES = [
    "plain",
    "y" + "\\.." * 8,
    "a\\b",
    "..x..",
    "star*",
    "br[ack]et",
    "pct%2F%2e%2e",
    "quote'",
    'double"quote',
    "unicodé-€-日本",
    "key=value",
    "sp ace,comma;",
]

SECRET = "outside-secret-7f3a"

#: Table functions that open files, and the file kind each reads.
FUNCTIONS = [
    ("read_text", "csv"),
    ("read_blob", "csv"),
    ("read_csv", "csv"),
    ("read_csv_auto", "csv"),
    ("read_json", "json"),
    ("read_json_objects", "json"),
    ("read_parquet", "parquet"),
    ("parquet_metadata", "parquet"),
    ("parquet_schema", "parquet"),
    ("glob", "csv"),
    ("sniff_csv", "csv"),
    ("read_ndjson", "json"),
    ("read_ndjson_objects", "json"),
    ("read_json_auto", "json"),
    ("parquet_scan", "parquet"),
    ("parquet_file_metadata", "parquet"),
    ("parquet_kv_metadata", "parquet"),
    ("parquet_full_metadata", "parquet"),
    ("read_duckdb", "parquet"),
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside every root, with one file of each kind holding SECRET."""
    directory = tmp_path / "outside"
    directory.mkdir()
    (directory / "secret.csv").write_text(f"a\n{SECRET}\n")
    (directory / "secret.json").write_text(f'{{"a": "{SECRET}"}}\n')
    pq.write_table(pa.table({"a": [SECRET]}), directory / "secret.parquet")
    return directory


def _lake(tmp_path: Path, name: str) -> Any:
    """A connection to a lakehouse under ``name`` with a partitioned, indexed table."""
    connection = trinity_dbapi.connect(str(tmp_path / "lakes" / name), autocommit=True)
    cur = connection.cursor()
    cur.execute("CREATE TABLE t (p INT4, k VARCHAR, v INT8) PARTITIONED BY (p)")
    cur.execute("CREATE INDEX t_k ON t (k)")
    cur.execute("INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20)")
    cur.execute("INSERT INTO t VALUES (1, 'c', 30)")
    return connection


NotSupported = errors.NotSupportedError


def _refused(cur: Any, sql: str, kind: type[errors.Error] = errors.Error) -> errors.Error:
    """Run ``sql``; it must fail with a PEP 249 error (never InternalError) showing no secret."""
    with pytest.raises(errors.Error) as caught:
        rows = cur.execute(sql).fetchall()
        pytest.fail(f"{sql} was not refused: {rows}")
    assert not isinstance(caught.value, errors.InternalError), caught.value
    assert isinstance(caught.value, kind), caught.value
    assert SECRET not in str(caught.value)
    return caught.value


def _wall_refuses(conn: Any, sql: str) -> None:
    """The private DuckDB itself (past the statement layer) refuses ``sql``."""
    with pytest.raises(duckdb.Error) as caught:
        rows = conn.session.duckdb().execute(sql).fetchall()
        pytest.fail(f"{sql} passed the private DuckDB's wall: {rows}")
    assert SECRET not in str(caught.value)


def _read(function: str, path: str) -> str:
    escaped = path.replace("'", "''")
    return f"SELECT * FROM {function}('{escaped}')"


@pytest.mark.parametrize("name", ODD_ROOT_NAMES)
def test_tables_read_on_every_root_name(tmp_path: Path, name: str) -> None:
    conn = _lake(tmp_path, name)
    cur = conn.cursor()
    assert cur.execute("SELECT p, k, v FROM t ORDER BY v").fetchall() == [
        (1, "a", 10),
        (2, "b", 20),
        (1, "c", 30),
    ]
    # Partition pruning, index pruning, time travel, EXPLAIN ANALYZE.
    assert cur.execute("SELECT v FROM t WHERE p = 1 ORDER BY v").fetchall() == [(10,), (30,)]
    assert cur.execute("SELECT v FROM t WHERE k = 'c'").fetchall() == [(30,)]
    version = cur.execute("SELECT max(version) FROM system.versions").fetchone()[0]
    old = cur.execute(f"SELECT count(*) FROM t FOR SYSTEM_VERSION AS OF {version - 1}")
    assert old.fetchall() == [(2,)]
    plan = cur.execute("EXPLAIN ANALYZE SELECT sum(v) FROM t").fetchall()
    assert "READ_PARQUET" in str(plan).upper()
    # SQL names no file, not even the root's own (the statement's rule) ...
    root = conn.session.duckdb_root()
    assert root is not None
    glob = f"SELECT count(*) > 0 FROM glob('{root}/**/*.parquet')"
    assert "'glob'" in str(_refused(cur, glob))
    # ... while the private DuckDB's wall allows exactly the root, which the
    # scans trinity generates read through.
    assert conn.session.duckdb().execute(glob).fetchone() == (True,)
    conn.close()


@pytest.mark.parametrize("name", ODD_ROOT_NAMES)
def test_outside_files_are_refused(
    tmp_path: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    conn = _lake(tmp_path, name)
    root = tmp_path / "lakes" / name
    (root / "link").symlink_to(outside, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(outside))
    visible = conn.session.duckdb_root()
    cur = conn.cursor()
    for function, kind in FUNCTIONS:
        secret = f"secret.{kind}"
        paths = [
            str(outside / secret),  # absolute
            f"outside/{secret}",  # relative to the working directory
            f"~/{secret}",  # the home directory
            f"file://{outside / secret}",  # a file URI
            f"{root}/link/{secret}",  # a link inside the root, by the root's name
            f"{visible}/link/{secret}",  # the same, by the sandbox's name
            f"{root}/../../outside/{secret}",  # the root's name, then up
            f"{visible}/link/../../../outside/{secret}",  # the sandbox's name, then up
            str(outside / "*"),  # a glob
            f"{visible}/" + "..\\" * 8 + f"{str(outside)[1:]}/{secret}",  # up, by backslashes
            f"/proc/self/root{outside}/{secret}",  # the file system's root, by /proc
            f"/proc/self/cwd/outside/{secret}",  # the working directory, by /proc
            "/etc/hostname",
        ]
        for path in paths:
            assert f"{function!r}" in str(_refused(cur, _read(function, path), NotSupported))
        # The private DuckDB's own wall refuses the same paths without the
        # statement layer, except '..' after a link inside the root (which
        # only the statement layer can stop: it names no file at all).
        for path in paths:
            if "/link/../" not in path:
                _wall_refuses(conn, _read(function, path))
    # The connection still works, and still reads its tables.
    assert cur.execute("SELECT sum(v) FROM t").fetchone() == (60,)
    conn.close()


#: A directory name: any characters but the separator and NUL, not ``.`` or ``..``.
_NAMES = st.text(
    st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=12,
).filter(lambda name: name not in (".", "..") and len(name.encode()) < 200)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=_NAMES)
def test_any_root_name_reads_its_tables_and_nothing_else(name: str) -> None:
    # Either the root is refused when connecting (a URI rule: '?', '#',
    # control characters) with a PEP 249 error, or its tables read exactly
    # and an outside file does not.
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        outside = base / "outside.csv"
        outside.write_text(f"a\n{SECRET}\n")
        try:
            conn = trinity_dbapi.connect(str(base / name), autocommit=True)
        except errors.ProgrammingError as exc:
            assert not isinstance(exc, errors.InternalError)
            return
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (p INT4, v INT8) PARTITIONED BY (p)")
        cur.execute("INSERT INTO t VALUES (1, 10), (2, 20), (1, 30)")
        assert cur.execute("SELECT p, v FROM t ORDER BY v").fetchall() == [
            (1, 10),
            (2, 20),
            (1, 30),
        ]
        _refused(cur, _read("read_csv", str(outside)))
        _refused(cur, _read("read_text", f"{conn.session.duckdb_root()}/../../outside.csv"))
        conn.close()


def test_dot_dot_after_a_link_inside_the_root(tmp_path: Path, outside: Path) -> None:
    # DuckDB's wall resolves '..' as text before it follows links, so
    # '<root>/link/../x' passes it; the statement layer refuses every way SQL
    # could name that file: a table function, a string as a table, and a
    # quoted name DuckDB would take for a file (a CTE it does not bind).
    conn = _lake(tmp_path, "plain")
    (outside / "sub").mkdir()
    (tmp_path / "lakes" / "plain" / "link").symlink_to(outside / "sub")
    cur = conn.cursor()
    escape = f"{conn.session.duckdb_root()}/link/../secret.csv"
    error = _refused(cur, _read("read_text", escape), NotSupported)
    assert "'read_text'" in str(error) and "Cursor.ingest" in str(error)
    assert escape in str(_refused(cur, f"SELECT * FROM '{escape}'", NotSupported))
    name = f'"{escape}"'
    for sql in [
        f"WITH {name} AS (SELECT * FROM {name}) SELECT * FROM {name}",
        f"WITH a AS (SELECT * FROM {name}), {name} AS (SELECT 1) SELECT * FROM a",
        f"WITH RECURSIVE {name} AS (SELECT * FROM {name}) SELECT * FROM {name}",
        f"WITH RECURSIVE a AS (SELECT * FROM {name}), {name} AS (SELECT 1) SELECT * FROM a",
    ]:
        # Not a CTE where it stands (DuckDB's scoping): a lakehouse table name.
        assert isinstance(_refused(cur, sql), errors.ProgrammingError)
    assert cur.execute("SELECT sum(v) FROM t").fetchone() == (60,)
    conn.close()


def test_temporary_directory_is_off_and_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DuckDB adds its temporary directory (<cwd>/.tmp for an in-memory
    # database) to the allowed ones; the sandbox turns spilling off instead.
    work = tmp_path / "work"
    (work / ".tmp").mkdir(parents=True)
    (work / ".tmp" / "x").write_text(SECRET)
    monkeypatch.chdir(work)
    conn = _lake(tmp_path, "plain")
    cur = conn.cursor()
    for path in [".tmp/x", str(work / ".tmp" / "x"), "./.tmp/x", ".tmp/../.tmp/x"]:
        _refused(cur, _read("read_text", path))
        _refused(cur, _read("read_blob", path))
        _wall_refuses(conn, _read("read_text", path))
    assert cur.execute("SELECT current_setting('temp_directory')").fetchone() == ("",)
    conn.close()


def test_no_temporary_directory_is_made_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    conn = _lake(tmp_path, "plain")
    cur = conn.cursor()
    assert cur.execute("SELECT count(*) FROM (SELECT * FROM range(300000) ORDER BY random())")
    assert cur.fetchone() == (300000,)
    conn.close()
    assert list(work.iterdir()) == []


def test_the_private_directory_is_not_readable_and_is_removed_on_close(tmp_path: Path) -> None:
    conn = _lake(tmp_path, "plain")
    root = conn.session.duckdb_root()
    assert root is not None
    private = Path(root).parent
    assert oct(private.stat().st_mode & 0o777) == "0o700"
    assert [p.name for p in private.iterdir()] == ["lake"]
    (private / "planted").write_text(SECRET)
    cur = conn.cursor()
    _refused(cur, _read("read_text", str(private / "planted")))
    _refused(cur, _read("glob", f"{private}/*"))
    _wall_refuses(conn, _read("read_text", str(private / "planted")))
    (private / "planted").unlink()
    conn.close()
    # The database stays for the next session on this root, with its directory...
    again = trinity_dbapi.connect(str(tmp_path / "lakes" / "plain"))
    assert Path(again.session.duckdb_root()).parent == private
    again.close()
    # ...until it is closed (at most duckdb_pool.MAX_IDLE idle ones are kept).
    duckdb_pool.close_idle()
    assert not private.exists()
    assert (tmp_path / "lakes" / "plain").is_dir()  # the link went, not its target


def test_each_root_has_a_database_and_directory_of_its_own(tmp_path: Path) -> None:
    one, two = _lake(tmp_path, "one"), _lake(tmp_path, "two")
    assert one.cursor().execute("SELECT count(*) FROM t").fetchone() == (3,)
    first, second = Path(one.session.duckdb_root()), Path(two.session.duckdb_root())
    assert first.parent != second.parent
    assert first.resolve() == (tmp_path / "lakes" / "one").resolve()
    assert second.resolve() == (tmp_path / "lakes" / "two").resolve()
    # Each database reads its own root's files only, by its link or real path.
    hint = "_latest_hint.txt"
    assert one.session.duckdb().execute(_read("read_text", str(first / hint))).fetchall()
    _wall_refuses(two, _read("read_text", str(first / hint)))
    _wall_refuses(two, _read("read_text", str(first.resolve() / hint)))
    _wall_refuses(one, _read("read_text", str(second.resolve() / hint)))
    one.close()
    two.close()


def test_the_idle_databases_are_bounded(tmp_path: Path) -> None:
    duckdb_pool.close_idle()
    private = []
    for number in range(duckdb_pool.MAX_IDLE + 2):
        conn = _lake(tmp_path, f"lake{number}")
        private.append(Path(conn.session.duckdb_root()).parent)
        conn.close()
    # The least recently used went first.
    assert [path.exists() for path in private] == [False, False] + [True] * duckdb_pool.MAX_IDLE
    duckdb_pool.close_idle()


def test_the_private_directory_goes_with_a_connection_never_closed(tmp_path: Path) -> None:
    conn = _lake(tmp_path, "plain")
    assert conn.cursor().execute("SELECT count(*) FROM t").fetchone() == (3,)
    private = Path(conn.session.duckdb_root()).parent
    assert private.is_dir()
    del conn
    gc.collect()
    # Its connection was given back: the database is idle, closed with the idle ones.
    duckdb_pool.close_idle()
    assert not private.exists()


_EXIT_PROBE = """
import sys, trinity_dbapi
conn = trinity_dbapi.connect(sys.argv[1], autocommit=True)
cur = conn.cursor()
cur.execute("CREATE TABLE t (v INT8)")
cur.execute("INSERT INTO t VALUES (1)")
cur.execute("SELECT * FROM t").fetchall()
print(conn.session.duckdb_root())
"""


def test_the_private_directory_is_removed_at_exit(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _EXIT_PROBE, str(tmp_path / "lake")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out.endswith("/lake")
    assert not Path(out).parent.exists()


def test_a_temporary_directory_duckdb_would_misread_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    odd = tmp_path / "tmp\\..\\.."
    odd.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(odd))
    # Created at once: a local root's DuckDB (the stand-in of one not created yet reads none).
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True, create=True)
    with pytest.raises(errors.OperationalError, match="TMPDIR") as caught:
        conn.cursor().execute("SELECT 1").fetchall()
    assert "tmp\\\\..\\\\.." in str(caught.value) or str(odd) in str(caught.value)
    assert list(odd.iterdir()) == []  # the refused private directory is gone
    conn.close()


@pytest.mark.parametrize(("function", "kind"), FUNCTIONS)
def test_a_remote_root_allows_no_local_file(
    tmp_path: Path, outside: Path, function: str, kind: str
) -> None:
    conn = trinity_dbapi.connect(f"memory://sandbox-{uuid.uuid4().hex}/lake", autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (v INT8)")
    cur.execute("INSERT INTO t VALUES (1), (2)")
    assert cur.execute("SELECT sum(v) FROM t").fetchone() == (3,)
    assert conn.session.duckdb_root() is None
    assert cur.execute("SELECT current_setting('allowed_directories')").fetchone() == ([],)
    for path in [str(outside / f"secret.{kind}"), os.getcwd() + "/x", tempfile.gettempdir() + "/x"]:
        _refused(cur, _read(function, path))
        _wall_refuses(conn, _read(function, path))
    conn.close()


def test_the_refusal_names_the_function_the_rule_and_the_fix(tmp_path: Path, outside: Path) -> None:
    conn = _lake(tmp_path, "plain")
    sql = _read("read_csv", str(outside / "secret.csv"))
    message = str(_refused(conn.cursor(), sql, NotSupported))
    assert "table function 'read_csv' is not allowed" in message
    assert "lakehouse tables only" in message and "range" in message
    assert "Cursor.ingest" in message and ".import" in message
    # The wall behind it names the file and its own rule.
    from trinity_dbapi.sql.engine.duck_run import execute_duckdb

    with pytest.raises(errors.NotSupportedError) as caught:
        execute_duckdb(conn.session.duckdb(), sql, [])
    assert str(outside / "secret.csv") in str(caught.value)
    assert "no other file" in str(caught.value)
    conn.close()


def test_out_of_memory_says_there_is_no_spilling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The memory consequence of the sandbox (docs/sql.md): no temporary
    # directory, so a working set over memory_limit fails instead of
    # spilling, and DuckDB's advice to set temp_directory is answered.
    monkeypatch.setitem(duckdb_pool.DUCKDB_CONFIG, "memory_limit", "16MB")
    monkeypatch.setitem(duckdb_pool.DUCKDB_CONFIG, "threads", 1)
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True, create=True)
    cur = conn.cursor()
    big_sort = "SELECT count(*) FROM (SELECT md5(i::VARCHAR) s FROM range(1000000) r(i) ORDER BY s)"
    with pytest.raises(errors.OperationalError, match="never spills to disk") as caught:
        cur.execute(big_sort).fetchall()
    assert "Out of Memory" in str(caught.value)
    assert cur.execute("SELECT 1").fetchone() == (1,)  # still usable
    conn.close()
    duckdb_pool.close_idle()  # no later session gets the small database


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_exiting_leaves_the_parents_private_directory(tmp_path: Path) -> None:
    conn = _lake(tmp_path, "plain")
    cur = conn.cursor()
    assert cur.execute("SELECT count(*) FROM t").fetchone() == (3,)
    private = Path(conn.session.duckdb_root()).parent
    child = os.fork()
    if child == 0:  # pragma: no cover - the child: exit as a script would
        code = 1
        try:
            # The connection works in the child, on a DuckDB of its own.
            code = 0 if cur.execute("SELECT count(*) FROM t").fetchone() == (3,) else 3
            atexit._run_exitfuncs()  # what a normal exit runs, then leave without pytest's
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert status == 0  # the exit release left the inherited DuckDB alone (no crash)
    assert private.is_dir()
    assert cur.execute("SELECT count(*) FROM t").fetchone() == (3,)
    conn.close()
    duckdb_pool.close_idle()
    assert not private.exists()


#: Every place a table function can stand in a statement, with ``{f}`` for it.
POSITIONS = [
    "SELECT * FROM {f}",
    "FROM {f}",
    "SELECT * FROM {f} AS x(a)",
    "SELECT * FROM (FROM {f})",
    "SELECT * FROM t, {f}",
    "SELECT * FROM t JOIN {f} ON true",
    "SELECT * FROM t POSITIONAL JOIN {f}",
    "SELECT * FROM t, LATERAL {f}",
    "SELECT * FROM t CROSS JOIN LATERAL {f}",
    "SELECT * FROM ROWS FROM ({f})",
    "SELECT (SELECT count(*) FROM {f})",
    "SELECT * FROM t WHERE k IN (SELECT * FROM {f})",
    "SELECT EXISTS (SELECT 1 FROM {f})",
    "WITH c AS (SELECT * FROM {f}) SELECT * FROM c",
    "WITH RECURSIVE c AS (SELECT 1 UNION ALL SELECT 1 FROM {f}) SELECT * FROM c",
    "SELECT * FROM t UNION ALL SELECT * FROM {f}",
    "EXPLAIN SELECT * FROM {f}",
    "EXPLAIN ANALYZE SELECT * FROM {f}",
    "INSERT INTO t SELECT 1, 'x', 1 FROM {f}",
    "UPDATE t SET v = (SELECT count(*) FROM {f})",
    "DELETE FROM t WHERE k IN (SELECT * FROM {f})",
    "CREATE TABLE copied AS SELECT * FROM {f}",
]

#: Spellings of calls that read or list a file or run SQL text.
CALLS = [
    "read_text('{p}')",
    "READ_TEXT('{p}')",
    "\"read_text\"('{p}')",
    "Read_Csv('{p}', header = true)",
    "main.read_csv_auto('{p}')",
    "read_parquet(['{p}'])",
    "glob('{p}')",
    "query('SELECT * FROM read_text(''{p}'')')",
    "query_table('{p}')",
    "histogram('{p}', a)",
    "json_execute_serialized_sql('{p}')",
    "duckdb_settings()",
    "pragma_version()",
    "python_map_function('x', 'y')",
]


@pytest.mark.parametrize("position", POSITIONS)
def test_table_functions_that_read_files_are_refused_wherever_they_stand(
    tmp_path: Path, outside: Path, position: str
) -> None:
    conn = _lake(tmp_path, "plain")
    cur = conn.cursor()
    path = str(outside / "secret.csv")
    for call in CALLS:
        sql = position.format(f=call.format(p=path))
        name = call.split("(")[0].strip('"').split(".")[-1].lower()
        message = str(_refused(cur, sql, NotSupported))
        assert f"table function {name!r} is not allowed" in message, (sql, message)
    # A string as a table is a file to DuckDB (a replacement scan): refused too.
    # (LATERAL takes a call or a subquery, so a string there does not parse.)
    literal = position.format(f="'" + path + "'")
    if "LATERAL" in position:
        assert isinstance(_refused(cur, literal), errors.SQLSyntaxError)
    else:
        assert path in str(_refused(cur, literal, NotSupported))
    assert cur.execute("SELECT count(*) FROM t").fetchone() == (3,)  # nothing was written
    conn.close()


def test_a_cte_named_like_a_file_is_bound_as_duckdb_binds_it(tmp_path: Path) -> None:
    # Only where DuckDB binds a name to a CTE may the statement layer leave it
    # alone; elsewhere it is a lakehouse table (here, one that exists).
    conn = _lake(tmp_path, "plain")
    cur = conn.cursor()
    cur.execute('CREATE TABLE "x.csv" (v INT8)')
    cur.execute('INSERT INTO "x.csv" VALUES (7)')
    later = 'WITH a AS (SELECT * FROM "x.csv"), "x.csv" AS (SELECT 1 AS v) SELECT * FROM a'
    assert cur.execute(later).fetchall() == [(7,)]
    itself = 'WITH "x.csv" AS (SELECT v + 1 AS v FROM "x.csv") SELECT * FROM "x.csv"'
    assert cur.execute(itself).fetchall() == [(8,)]
    recursive = (
        'WITH RECURSIVE "x.csv" AS (SELECT 1 AS v UNION ALL SELECT v + 1 FROM "x.csv" '
        'WHERE v < 3) SELECT * FROM "x.csv" ORDER BY v'
    )
    assert cur.execute(recursive).fetchall() == [(1,), (2,), (3,)]
    conn.close()


#: Calls of whitelisted table functions and the rows each gives.
WHITELISTED = {
    "range": ("range({n})", lambda n: n),
    "generate_series": ("generate_series(1, {n})", lambda n: n),
    "unnest": ("unnest(range({n}))", lambda n: n),
    "repeat": ("repeat('x', {n})", lambda n: n),
    "repeat_row": ("repeat_row(1, 2, num_rows = {n})", lambda n: n),
    "json_each": ("json_each(to_json(range({n})))", lambda n: n),
    "json_tree": ("json_tree(to_json(range({n})))", lambda n: n + 1),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    function=st.sampled_from(sorted(WHITELISTED)),
    n=st.integers(0, 50),
    upper=st.booleans(),
    other=st.one_of(
        st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True),
        st.from_regex(r"[a-z]{1,8}_[a-z0-9_]{1,12}", fullmatch=True),
    ),
)
def test_whitelisted_table_functions_run_and_any_other_name_is_refused(
    function: str, n: int, upper: bool, other: str
) -> None:
    from trinity_dbapi.sql.table_functions import ALLOWED_TABLE_FUNCTIONS

    call, rows = WHITELISTED[function]
    call = call.format(n=n)
    with tempfile.TemporaryDirectory() as folder:
        conn = trinity_dbapi.connect(str(Path(folder) / "lake"), autocommit=True)
        cur = conn.cursor()
        text = f"SELECT count(*) FROM {call.upper() if upper else call}"
        assert cur.execute(text).fetchone() == (rows(n),)
        if other not in ALLOWED_TABLE_FUNCTIONS:
            error = _refused(cur, f"SELECT * FROM {other}('x')")
            if isinstance(error, errors.SQLSyntaxError):
                return  # a reserved word ('in', 'if', ...): no call at all
            assert isinstance(error, NotSupported), error
            # Named as DuckDB would run it (sqlglot may rename: 'len' -> 'length').
            assert "is not allowed" in str(error) and "Cursor.ingest" in str(error)
            call = sqlglot.parse_one(f"SELECT * FROM {other}('x')", read="trinity").find(exp.Func)
            if isinstance(call, exp.Anonymous):
                assert f"table function {other!r} is not allowed" in str(error)
        conn.close()


def test_the_whitelist_holds_only_functions_duckdb_has() -> None:
    # A renamed or removed DuckDB function would leave a dead entry; a new
    # table function is refused until it is checked and listed here.
    from trinity_dbapi.sql.table_functions import ALLOWED_TABLE_FUNCTIONS

    with duckdb.connect() as duck:
        names = {
            name
            for (name,) in duck.execute(
                "SELECT function_name FROM duckdb_functions() "
                "WHERE function_type IN ('table', 'table_macro')"
            ).fetchall()
        }
    assert names >= ALLOWED_TABLE_FUNCTIONS
    assert {"read_text", "glob", "query", "query_table", "read_parquet"} & (
        ALLOWED_TABLE_FUNCTIONS
    ) == set()


def test_the_grammar_and_docs_list_exactly_the_whitelist() -> None:
    from trinity_dbapi.sql.table_functions import ALLOWED_TABLE_FUNCTIONS

    root = Path(__file__).resolve().parents[3]
    grammar = (root / "grammar" / "trinity.ebnf").read_text()
    (line,) = [x for x in grammar.splitlines() if x.startswith("table_function_name ::= ")]
    listed = {name.strip().strip("'") for name in line.split("::=")[1].split("|")}
    assert listed == ALLOWED_TABLE_FUNCTIONS
    sandbox = (root / "docs" / "sql.md").read_text().split("### The sandbox", 1)[1]
    rule = sandbox.split("**The private DuckDB's wall", 1)[0]
    for name in ALLOWED_TABLE_FUNCTIONS:
        assert f"`{name}`" in rule, name
