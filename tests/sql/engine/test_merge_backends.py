"""MERGE INTO on every storage backend: DuckDB's results, and the race with an UPDATE."""

from __future__ import annotations

from typing import Any

import pytest

import trinity_dbapi
from tests.sql.engine.test_merge import SOURCE, STATEMENTS, TARGET, files, load, ours, reference
from trinity_dbapi import errors

#: MERGE with every kind of clause, an UPDATE ... FROM, and one that is DuckDB's error.
CHOSEN = [STATEMENTS[0], STATEMENTS[1], STATEMENTS[3], STATEMENTS[7], STATEMENTS[-2]]


def _connect(backend: tuple[str, dict[str, Any]], **kwargs: Any) -> Any:
    uri, options = backend
    return trinity_dbapi.connect(uri, storage_options=options, **kwargs)


def test_results_equal_duckdbs_own_on_every_backend(backend: tuple[str, dict[str, Any]]) -> None:
    conn = _connect(backend, autocommit=True)
    conn.cursor().execute("CREATE NAMESPACE ns")
    for sql in CHOSEN:
        load(conn, TARGET, SOURCE)
        expected = reference(TARGET, SOURCE, sql)
        got = ours(conn, sql)
        if isinstance(expected[0], str):
            assert isinstance(got[0], str) and expected[0].split(": ", 1)[-1] in got[0]
            assert got[1] == sorted(TARGET, key=repr)
        else:
            assert got == expected, sql
        # A new connection (its own caches) reads the committed result.
        other = _connect(backend, autocommit=True)
        assert sorted(other.cursor().execute("SELECT * FROM ns.t").fetchall(), key=repr) == got[1]
        other.close()
        conn.cursor().execute("DROP TABLE ns.t").execute("DROP TABLE ns.s")
    conn.close()


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "SNAPSHOT"])
def test_merge_racing_an_update_conflicts_on_every_backend(
    backend: tuple[str, dict[str, Any]], isolation: str
) -> None:
    setup = _connect(backend, autocommit=True)
    setup.cursor().execute("CREATE NAMESPACE ns")
    load(setup, TARGET, SOURCE)
    before = files(setup)
    one = _connect(backend, isolation_level=isolation)
    two = _connect(backend, isolation_level=isolation)
    one.cursor().execute(
        "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = -1"
    )
    two.cursor().execute("UPDATE ns.t SET w = 'raced' WHERE id = 1")
    two.commit()
    with pytest.raises(errors.CommitConflictError, match=r"ns\.t"):
        one.commit()
    rows = setup.cursor().execute("SELECT id, v, w FROM ns.t ORDER BY id").fetchall()
    assert rows == [(1, 10, "raced"), (2, 20, "b"), (3, None, "c"), (4, 40, None)]
    assert len(files(setup) - before) == 1  # the UPDATE's file; nothing of the MERGE
    # Racing an UPDATE of another file: SNAPSHOT commits both (the files differ);
    # SERIALIZABLE refuses the MERGE, which read the table the UPDATE changed.
    one.rollback()
    one.cursor().execute(
        "MERGE INTO ns.t USING ns.s ON t.id = s.id AND t.id = 3 WHEN MATCHED THEN "
        "UPDATE SET v = s.v"
    )
    two.cursor().execute("UPDATE ns.t SET w = 'again' WHERE id = 2")
    two.commit()
    merged = 33
    if isolation == "SERIALIZABLE":
        with pytest.raises(errors.CommitConflictError, match="this transaction read it"):
            one.commit()
        merged = None
    else:
        one.commit()
    rows = setup.cursor().execute("SELECT id, v, w FROM ns.t ORDER BY id").fetchall()
    assert rows == [(1, 10, "raced"), (2, 20, "again"), (3, merged, "c"), (4, 40, None)]
    for conn in (one, two, setup):
        conn.close()
