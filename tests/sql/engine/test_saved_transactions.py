"""SAVE TRANSACTION and LOAD TRANSACTION through the driver: connections and processes."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import trinity_dbapi
from trinity_dbapi.errors import (
    CommitConflictError,
    ProgrammingError,
    ReadOnlyError,
    SavedTransactionError,
    TransactionClosedError,
)
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.saved_transactions import record_path

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _connect(path: Path, **kwargs: object) -> trinity_dbapi.Connection:
    return trinity_dbapi.connect(str(path), autocommit=True, **kwargs)


def _lake(tmp_path: Path) -> Path:
    path = tmp_path / "lake"
    with _connect(path) as conn:
        conn.execute("CREATE TABLE t (a INT8)")
        conn.execute("CREATE TABLE u (a INT8)")
        conn.execute("INSERT INTO t VALUES (1)")
    return path


def _save(conn: trinity_dbapi.Connection, *statements: str) -> str:
    conn.execute("BEGIN")
    for sql in statements:
        conn.execute(sql)
    cursor = conn.execute("SAVE TRANSACTION")
    assert [d[0] for d in cursor.description] == ["transaction_id"]
    rows = cursor.fetchall()
    assert len(rows) == 1
    return str(rows[0][0])


def _count(conn: trinity_dbapi.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_save_in_one_connection_load_and_commit_in_another(tmp_path: Path) -> None:
    path = _lake(tmp_path)
    saver = _connect(path)
    txn_id = _save(saver, "INSERT INTO t VALUES (2)", "INSERT INTO u VALUES (10)")
    assert re.fullmatch(r"[0-9a-f-]{36}", txn_id)
    # The saver is outside any transaction now: it sees the committed state only.
    assert _count(saver, "t") == 1
    loader = _connect(path)
    loader.execute("LOAD TRANSACTION ?", [txn_id])
    assert _count(loader, "t") == 2 and _count(loader, "u") == 1  # the saved changes
    loader.execute("INSERT INTO t VALUES (3)")  # it goes on
    assert _count(saver, "t") == 1  # nothing visible before the commit
    loader.execute("COMMIT")
    assert sorted(r[0] for r in saver.execute("SELECT a FROM t").fetchall()) == [1, 2, 3]
    assert _count(_connect(path), "u") == 1


def test_the_saver_can_neither_commit_nor_continue(tmp_path: Path) -> None:
    path = _lake(tmp_path)
    saver = _connect(path)
    txn_id = _save(saver, "INSERT INTO t VALUES (2)")
    with pytest.raises(TransactionClosedError, match=f"LOAD TRANSACTION '{txn_id}'"):
        saver.execute("COMMIT")
    saver.execute("COMMIT")  # once said, the session is simply outside a transaction
    # It goes on with new transactions of its own (on another table: see below).
    saver.execute("INSERT INTO u VALUES (5)")
    saver.execute("BEGIN")
    saver.execute("INSERT INTO u VALUES (6)")
    saver.execute("COMMIT")
    assert _count(saver, "u") == 2
    loader = _connect(path)
    loader.execute(f"LOAD TRANSACTION '{txn_id}'")
    loader.execute("COMMIT")
    assert _count(saver, "t") == 2


def test_a_saved_append_merges_with_a_concurrent_append(tmp_path: Path) -> None:
    """An append is a merge: the loader's commit merges the table three-way, keeping both."""
    path = _lake(tmp_path)
    txn_id = _save(_connect(path), "INSERT INTO t VALUES (2)")
    _connect(path).execute("INSERT INTO t VALUES (3)")  # a concurrent append to t
    loader = _connect(path)
    loader.execute("LOAD TRANSACTION ?", [txn_id])
    loader.execute("COMMIT")
    assert sorted(r[0] for r in loader.execute("SELECT a FROM t").fetchall()) == [1, 2, 3]


def test_saved_and_concurrent_rewrites_of_one_file_conflict(tmp_path: Path) -> None:
    path = _lake(tmp_path)
    conn = _connect(path)
    conn.execute("BEGIN ISOLATION LEVEL SNAPSHOT")
    conn.execute("DELETE FROM t WHERE a = 1")
    txn_id = conn.execute("SAVE TRANSACTION").fetchone()[0]
    _connect(path).execute("UPDATE t SET a = 5 WHERE a = 1")  # rewrites the same file
    loader = _connect(path)
    loader.execute("LOAD TRANSACTION ?", [txn_id])
    with pytest.raises(CommitConflictError, match=r"table 'default\.t'.*do not merge") as raised:
        loader.execute("COMMIT")
    assert ".parquet" in str(raised.value)  # names the file both rewrote
    assert [r[0] for r in loader.execute("SELECT a FROM t").fetchall()] == [5]


def test_pep249_commit_after_save_says_so_too(tmp_path: Path) -> None:
    path = _lake(tmp_path)
    conn = trinity_dbapi.connect(str(path))  # not autocommit: the first statement begins
    conn.execute("INSERT INTO t VALUES (2)")
    txn_id = conn.execute("SAVE TRANSACTION").fetchone()[0]
    with pytest.raises(TransactionClosedError, match="was saved"):
        conn.commit()
    conn.execute("INSERT INTO t VALUES (3)")  # a new transaction
    conn.commit()
    other = _connect(path)
    other.execute("LOAD TRANSACTION ?", [txn_id])
    other.execute("COMMIT")
    assert sorted(r[0] for r in other.execute("SELECT a FROM t").fetchall()) == [1, 2, 3]


def test_serializable_read_set_is_checked_at_the_loaders_commit(tmp_path: Path) -> None:
    """The saver read t and wrote u; a concurrent write to t fails the loader's commit."""
    path = _lake(tmp_path)
    saver = _connect(path)
    txn_id = _save(saver, "SELECT count(*) FROM t", "INSERT INTO u SELECT count(*) FROM t")
    _connect(path).execute("INSERT INTO t VALUES (7)")  # after the saver read t
    loader = _connect(path)
    loader.execute("LOAD TRANSACTION ?", [txn_id])
    with pytest.raises(CommitConflictError, match="read it"):
        loader.execute("COMMIT")
    assert _count(loader, "u") == 0  # nothing committed
    with pytest.raises(SavedTransactionError) as again:
        loader.execute("LOAD TRANSACTION ?", [txn_id])
    assert again.value.state == "loaded"


def test_snapshot_isolation_does_not_check_reads(tmp_path: Path) -> None:
    path = _lake(tmp_path)
    saver = _connect(path)
    saver.execute("BEGIN ISOLATION LEVEL SNAPSHOT")
    saver.execute("SELECT count(*) FROM t")
    saver.execute("INSERT INTO u VALUES (1)")
    txn_id = saver.execute("SAVE TRANSACTION").fetchone()[0]
    _connect(path).execute("INSERT INTO t VALUES (7)")
    loader = _connect(path)
    loader.execute("LOAD TRANSACTION ?", [txn_id])
    loader.execute("COMMIT")
    assert _count(loader, "u") == 1


def test_errors_say_which(tmp_path: Path) -> None:
    path = _lake(tmp_path)
    conn = _connect(path)
    with pytest.raises(ProgrammingError, match="SAVE TRANSACTION outside a transaction"):
        conn.execute("SAVE TRANSACTION")
    txn_id = _save(_connect(path), "INSERT INTO t VALUES (2)")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO u VALUES (1)")
    with pytest.raises(ProgrammingError, match="LOAD TRANSACTION inside an open transaction"):
        conn.execute("LOAD TRANSACTION ?", [txn_id])
    conn.execute("ROLLBACK")
    with pytest.raises(SavedTransactionError, match="no saved transaction has id") as unknown:
        conn.execute("LOAD TRANSACTION '12345678-1234-4234-8234-123456789012'")
    assert unknown.value.state == "unknown"
    with pytest.raises(ReadOnlyError):
        _connect(path, read_only=True).execute("LOAD TRANSACTION ?", [txn_id])
    conn.execute("LOAD TRANSACTION ?", [txn_id])  # the read-only attempt claimed nothing
    with pytest.raises(SavedTransactionError, match="another session loaded it") as loaded:
        _connect(path).execute("LOAD TRANSACTION ?", [txn_id])
    assert loaded.value.state == "loaded"
    conn.execute("COMMIT")
    with pytest.raises(SavedTransactionError, match="committed already") as committed:
        _connect(path).execute("LOAD TRANSACTION ?", [txn_id])
    assert committed.value.state == "committed"


def test_ttl_expires_a_saved_transaction(tmp_path: Path) -> None:
    path = tmp_path / "lake"
    Lakehouse.create(f"file://{path}", txn_ttl_millis=300)
    conn = _connect(path)
    conn.execute("CREATE TABLE t (a INT8)")
    txn_id = _save(conn, "INSERT INTO t VALUES (1)")
    import time

    time.sleep(0.35)
    with pytest.raises(SavedTransactionError, match="expired") as expired:
        _connect(path).execute("LOAD TRANSACTION ?", [txn_id])
    assert expired.value.state == "expired"


def test_gc_keeps_a_saved_transactions_files_until_it_expires(tmp_path: Path) -> None:
    path = _lake(tmp_path)
    saver = _connect(path)
    rows = ", ".join(f"({i})" for i in range(100))
    txn_id = _save(saver, f"INSERT INTO t VALUES {rows}", "CREATE TABLE v (b INT8)")
    other = _save(_connect(path), "INSERT INTO u VALUES (42)")
    lake = Lakehouse.open(f"file://{path}")
    record = lake.storage.read(record_path(txn_id))
    from trinity_dbapi.format.definitions import TransactionDefinition

    first = TransactionDefinition.from_bytes(record, "r")
    second = TransactionDefinition.from_bytes(lake.storage.read(record_path(other)), "r")
    parquet_before = {p for p in lake.storage.list("") if p.endswith(".parquet")}
    now = first.began_at_millis + 60_000  # an hour later than any grace: all old enough
    kept = lake.maintenance.collect_garbage(grace_period_millis=0, now=now)
    assert not [p for p in kept.deleted if p.endswith(".parquet") or "_transactions/" in p]
    # The first loads and commits as saved: its data files and definitions were kept.
    loader = _connect(path)
    loader.execute("LOAD TRANSACTION ?", [txn_id])
    loader.execute("COMMIT")
    assert _count(loader, "t") == 101 and _count(loader, "v") == 0
    # The second expires unloaded: collection then takes its files, and only its.
    after = second.expire_at_millis + 1
    gone = Lakehouse.open(f"file://{path}").maintenance.collect_garbage(
        grace_period_millis=0, now=after
    )
    deleted_parquet = {p for p in gone.deleted if p.endswith(".parquet")}
    assert deleted_parquet and deleted_parquet <= parquet_before
    assert record_path(other) in gone.deleted
    assert _count(_connect(path), "t") == 101  # what was committed stays whole
    assert _count(_connect(path), "u") == 0


@pytest.mark.parametrize(
    "branch", [None, pytest.param("dev", marks=pytest.mark.processes)], ids=["main", "branch"]
)
def test_save_in_one_process_load_and_commit_in_another(tmp_path: Path, branch: str | None) -> None:
    """Either way round, on main and on a branch: the other process's changes are committed
    on the chain they were saved on, and only there."""
    path = _lake(tmp_path)
    if branch is not None:
        with _connect(path) as conn:
            conn.execute(f"CREATE BRANCH {branch}")
    script = textwrap.dedent(
        """
        import sys, trinity_dbapi
        conn = trinity_dbapi.connect(sys.argv[1], autocommit=True, branch=sys.argv[2] or None)
        if sys.argv[3] == "save":
            conn.execute("BEGIN")
            conn.execute("INSERT INTO t VALUES (20)")
            print(conn.execute("SAVE TRANSACTION").fetchone()[0])
        else:
            conn.execute("LOAD TRANSACTION ?", [sys.argv[4]])
            conn.execute("INSERT INTO t VALUES (30)")
            conn.execute("COMMIT")
            print("committed")
        """
    )

    def run(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", script, str(path), branch or "", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return done.stdout.strip()

    # A child saves; this process loads and commits.
    child_txn = run("save")
    conn = _connect(path, branch=branch)
    conn.execute("LOAD TRANSACTION ?", [child_txn])
    conn.execute("COMMIT")
    # This process saves; a child loads, goes on and commits.
    mine = _save(_connect(path, branch=branch), "INSERT INTO t VALUES (40)")
    assert run("load", mine) == "committed"
    assert sorted(r[0] for r in conn.execute("SELECT a FROM t").fetchall()) == [1, 20, 30, 40]
    if branch is not None:  # main never saw them
        assert [r[0] for r in _connect(path).execute("SELECT a FROM t").fetchall()] == [1]


def test_the_sql_page_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (DOCS / "sql.md").read_text()
    block = text.split("### Saved transactions", 1)[1].split("```python\n", 1)[1].split("```")[0]
    exec(block.replace("/tmp/handoff-demo", str(tmp_path / "lake")), {})  # noqa: S102
    assert capsys.readouterr().out.split() == ["(1,)", "(1,)"]
