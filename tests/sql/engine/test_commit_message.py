"""SQL ``SET COMMIT MESSAGE``: the message of the open transaction's version, in system.versions."""

from __future__ import annotations

from pathlib import Path

import pytest

import trinity_dbapi
from trinity_dbapi import errors

VERSIONS = "SELECT version, author, commit_message FROM system.versions ORDER BY version"


def _versions(location: Path) -> list[tuple[object, ...]]:
    """What another connection (nobody's author) reads of every version."""
    with trinity_dbapi.connect(str(location), create=False, read_only=True) as reader:
        return reader.execute(VERSIONS).fetchall()


def test_outside_autocommit_the_message_names_the_next_commit(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    conn = trinity_dbapi.connect(str(lake), author="ana")
    cur = conn.cursor()
    cur.execute("SET COMMIT MESSAGE 'first'")
    cur.execute("SET COMMIT MESSAGE ?", ["nightly load\nof 2026-12-01"])  # the last one counts
    cur.execute("CREATE NAMESPACE sales")  # creates the lakehouse: the message is kept
    conn.commit()
    cur.execute("CREATE NAMESPACE scratch")  # a new transaction: no message
    conn.commit()
    cur.execute("SET COMMIT MESSAGE 'dropped'")
    cur.execute("CREATE NAMESPACE nothing")
    conn.rollback()
    cur.execute("SET COMMIT MESSAGE 'taken back'")
    cur.execute("SET COMMIT MESSAGE ?", [None])
    cur.execute("CREATE NAMESPACE plain")
    conn.commit()
    conn.close()
    assert _versions(lake) == [
        (0, None, None),
        (1, "ana", "nightly load\nof 2026-12-01"),
        (2, "ana", None),
        (3, "ana", None),
    ]


def test_autocommit_needs_begin(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    conn = trinity_dbapi.connect(str(lake), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE sales")
    with pytest.raises(errors.ProgrammingError, match="SET COMMIT MESSAGE outside a transaction"):
        cur.execute("SET COMMIT MESSAGE 'lost'")
    cur.execute("CREATE NAMESPACE scratch")  # the refused message named nothing
    cur.execute("BEGIN")
    cur.execute("SET COMMIT MESSAGE 'two tables'")
    cur.execute("CREATE TABLE sales.a (id INT8)")
    cur.execute("CREATE TABLE sales.b (id INT8)")
    cur.execute("COMMIT")
    cur.execute("BEGIN")
    cur.execute("SET COMMIT MESSAGE 'nothing changed'")
    cur.execute("COMMIT")  # no change: no version, nothing recorded
    assert cur.execute(VERSIONS).fetchall() == [
        (0, None, None),
        (1, None, None),
        (2, None, None),
        (3, None, "two tables"),
    ]
    conn.close()


def test_bad_messages_are_refused_and_change_nothing(tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), create=True)
    cur = conn.cursor()
    cur.execute("SET COMMIT MESSAGE 'kept'")
    with pytest.raises(errors.DataError, match=r"the commit message holds '\\x1b' at position 0"):
        cur.execute("SET COMMIT MESSAGE ?", ["\x1b[2J"])
    with pytest.raises(errors.DataError, match="4097 bytes of UTF-8, over the 4096"):
        cur.execute("SET COMMIT MESSAGE ?", ["x" * 4097])
    with pytest.raises(errors.ProgrammingError, match="the commit message must be a string"):
        cur.execute("SET COMMIT MESSAGE ?", [42])
    with pytest.raises(errors.SQLSyntaxError, match="a string literal or \\? for the commit"):
        cur.execute("SET COMMIT MESSAGE kept")
    cur.execute("CREATE NAMESPACE sales")
    conn.commit()
    assert cur.execute(VERSIONS).fetchall()[-1] == (1, None, "kept")
    conn.close()


def test_the_message_survives_a_rebase_and_retry(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    trinity_dbapi.connect(str(lake), create=True).close()
    ana = trinity_dbapi.connect(str(lake), author="ana")
    bo = trinity_dbapi.connect(str(lake), author="bo")
    ana.execute("SET COMMIT MESSAGE 'ana loads'")
    ana.execute("CREATE NAMESPACE ana_ns")  # begun on version 0
    bo.execute("SET COMMIT MESSAGE 'bo loads'")
    bo.execute("CREATE NAMESPACE bo_ns")  # begun on version 0 too
    ana_txn = ana.session.transaction()
    bo.commit()  # version 1
    ana.commit()  # loses version 1, is rebased on it and made version 2
    assert ana_txn.attempts == 2
    assert _versions(lake) == [(0, None, None), (1, "bo", "bo loads"), (2, "ana", "ana loads")]
    ana.close()
    bo.close()


def test_maintenance_calls_record_the_author(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    conn = trinity_dbapi.connect(str(lake), autocommit=True, author="ops")
    conn.execute("CREATE NAMESPACE sales")
    conn.execute("CALL system.compact()")
    conn.execute("CALL system.rollback_to_version(1)")
    rows = conn.execute(VERSIONS).fetchall()
    assert rows == [(0, None, None), (1, "ops", None), (2, "ops", None), (3, "ops", None)]
    conn.close()
