"""CREATE VIEW / DROP VIEW / SHOW VIEWS and queries over views, against DuckDB's own views."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

import trinity_dbapi
from trinity_dbapi import errors

SETUP = (
    "CREATE TABLE ns.t (a INT8, b VARCHAR)",
    "INSERT INTO ns.t VALUES (1, 'x'), (2, 'y'), (3, 'z')",
)
VIEWS = (
    "CREATE VIEW ns.v (k, s) AS SELECT a, b FROM ns.t WHERE a > 1",
    "CREATE VIEW ns.w AS SELECT k * 10 AS z, s FROM ns.v",
)
QUERIES = (
    "SELECT * FROM ns.v ORDER BY k",
    "SELECT * FROM ns.w ORDER BY z",
    "SELECT v.k, w.z FROM ns.v AS v JOIN ns.w AS w ON v.s = w.s ORDER BY 1",
    "SELECT count(*), max(z) FROM ns.w",
    "SELECT * FROM ns.t WHERE a IN (SELECT k FROM ns.v) ORDER BY a",
)


def _connect(backend: tuple[str, dict[str, Any]]) -> Any:
    uri, options = backend
    conn = trinity_dbapi.connect(uri, storage_options=options)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    for sql in SETUP:
        cur.execute(sql)
    conn.commit()
    for sql in VIEWS:
        cur.execute(sql)
    conn.commit()
    return conn


def test_views_answer_as_duckdb_views(backend: tuple[str, dict[str, Any]]) -> None:
    conn = _connect(backend)
    cur = conn.cursor()
    duck = duckdb.connect()
    duck.execute("CREATE SCHEMA ns")
    for sql in SETUP + VIEWS:
        duck.execute(sql.replace("INT8", "BIGINT"))
    for sql in QUERIES:
        cur.execute(sql)
        assert cur.fetchall() == duck.execute(sql).fetchall(), sql
    cur.execute("SELECT * FROM ns.v")
    assert [d[0] for d in cur.description] == ["k", "s"]
    cur.execute("SHOW VIEWS IN ns")
    assert cur.fetchall() == [("v",), ("w",)]
    conn.close()


def test_unqualified_names_resolve_at_creation(backend: tuple[str, dict[str, Any]]) -> None:
    conn = _connect(backend)
    cur = conn.cursor()
    cur.execute("USE ns")
    cur.execute("CREATE VIEW u COMMENT 'small' AS SELECT a FROM t WHERE a < 3")
    conn.commit()
    cur.execute("SHOW VIEWS")
    assert cur.fetchall() == [("u",), ("v",), ("w",)]
    cur.execute("USE default")
    cur.execute("SELECT a FROM ns.u ORDER BY a")
    assert cur.fetchall() == [(1,), (2,)]
    txn = conn.session.transaction()
    definition = txn.load_view("ns", "u")
    assert definition.sql["trinity"] == "SELECT a FROM ns.t WHERE a < 3"
    assert definition.referenced == (("ns", "t"),)
    assert definition.properties == {"comment": "small"}
    assert [(c.name, c.type.kind) for c in definition.columns] == [("a", "int8")]
    conn.close()


def test_time_travel_reads_view_and_tables_as_of(backend: tuple[str, dict[str, Any]]) -> None:
    conn = _connect(backend)
    cur = conn.cursor()
    version = conn.session.transaction().snapshot.version
    cur.execute("INSERT INTO ns.t VALUES (4, 'q')")
    cur.execute("CREATE OR REPLACE VIEW ns.v (k, s) AS SELECT a, b FROM ns.t WHERE a > 2")
    conn.commit()
    cur.execute("SELECT k FROM ns.v ORDER BY k")
    assert cur.fetchall() == [(3,), (4,)]
    cur.execute(f"SELECT k FROM ns.v FOR SYSTEM_VERSION AS OF {version} ORDER BY k")
    assert cur.fetchall() == [(2,), (3,)]
    cur.execute(f"SELECT z FROM ns.w FOR SYSTEM_VERSION AS OF {version} ORDER BY z")
    assert cur.fetchall() == [(20,), (30,)]
    uri, options = backend
    pinned = trinity_dbapi.connect(uri, storage_options=options, version=version)
    pcur = pinned.cursor()
    pcur.execute("SELECT z FROM ns.w ORDER BY z")
    assert pcur.fetchall() == [(20,), (30,)]
    pinned.close()
    conn.close()


def test_errors(backend: tuple[str, dict[str, Any]]) -> None:
    conn = _connect(backend)
    cur = conn.cursor()
    with pytest.raises(errors.ProgrammingError, match=r"is a view, not a table.*DROP VIEW"):
        cur.execute("DROP TABLE ns.v")
    with pytest.raises(errors.ProgrammingError, match=r"is a table, not a view.*DROP TABLE"):
        cur.execute("DROP VIEW IF EXISTS ns.t")
    with pytest.raises(errors.ProgrammingError, match="has a \\? parameter"):
        cur.execute("CREATE VIEW ns.p AS SELECT * FROM ns.t WHERE a = ?", (1,))
    with pytest.raises(errors.ObjectExistsError):
        cur.execute("CREATE VIEW ns.t AS SELECT 1 AS one")
    with pytest.raises(errors.ObjectExistsError):
        cur.execute("CREATE TABLE ns.v (a INT8)")
    with pytest.raises(errors.ObjectExistsError):
        cur.execute("CREATE VIEW ns.v AS SELECT 1 AS one")
    with pytest.raises(errors.ProgrammingError, match="lists 1 column names but its query gives 2"):
        cur.execute("CREATE VIEW ns.c (x) AS SELECT a, b FROM ns.t")
    cur.execute("CREATE VIEW ns.c AS SELECT a, a FROM ns.t")  # DuckDB's names: a, a_1
    cur.execute("SELECT * FROM ns.c WHERE a = 1")
    assert [d[0] for d in cur.description] == ["a", "a_1"] and cur.fetchall() == [(1, 1)]
    with pytest.raises(errors.ProgrammingError, match="'a' appears twice in the column list"):
        cur.execute("CREATE VIEW ns.d (a, a) AS SELECT 1, 2")
    with pytest.raises(errors.ProgrammingError, match="contradict"):
        cur.execute("CREATE OR REPLACE VIEW IF NOT EXISTS ns.c AS SELECT 1 AS one")
    conn.rollback()
    cur.execute("CREATE VIEW IF NOT EXISTS ns.v AS SELECT 1 AS one")
    cur.execute("SELECT count(*) FROM ns.v")
    assert cur.fetchall() == [(2,)]  # unchanged
    cur.execute("DROP VIEW IF EXISTS ns.nothing")
    with pytest.raises(errors.NoSuchObjectError):
        cur.execute("DROP VIEW ns.nothing")
    cur.execute("DROP TABLE ns.t")
    conn.commit()
    with pytest.raises(errors.NoSuchObjectError, match=r"'ns\.t' does not exist; view ns\.v reads"):
        cur.execute("SELECT * FROM ns.w")
    conn.rollback()
    cur.execute("DROP VIEW ns.w")
    conn.commit()
    cur.execute("SHOW VIEWS IN ns")
    assert cur.fetchall() == [("v",)]
    conn.close()


def test_cycle_refused(backend: tuple[str, dict[str, Any]]) -> None:
    conn = _connect(backend)
    cur = conn.cursor()
    with pytest.raises(errors.ProgrammingError, match="would read itself"):
        cur.execute("CREATE OR REPLACE VIEW ns.v AS SELECT * FROM ns.w")
    with pytest.raises(errors.ProgrammingError, match="would read itself"):
        cur.execute("CREATE VIEW ns.self AS SELECT 1 AS one UNION ALL SELECT * FROM ns.self")
    conn.close()


def test_views_feed_writes_and_refuse_them(backend: tuple[str, dict[str, Any]]) -> None:
    conn = _connect(backend)
    cur = conn.cursor()
    cur.execute("INSERT INTO ns.t SELECT k + 10, s FROM ns.v")
    cur.execute("CREATE TABLE ns.copy AS SELECT * FROM ns.w")
    cur.execute("SELECT * FROM ns.copy ORDER BY z")
    assert cur.fetchall() == [(20, "y"), (30, "z"), (120, "y"), (130, "z")]
    cur.execute("SELECT x.k FROM ns.v AS x WHERE x.k > 10 ORDER BY 1")
    assert cur.fetchall() == [(12,), (13,)]
    for sql in (
        "INSERT INTO ns.v VALUES (1, 'q')",
        "DELETE FROM ns.v",
        "UPDATE ns.v SET k = 1",
        "ALTER TABLE ns.v ADD COLUMN c INT8",
        "DESCRIBE TABLE ns.v",
    ):
        with pytest.raises(errors.ProgrammingError, match=r"ns\.v is a view, which is read-only"):
            cur.execute(sql)
    conn.close()


def test_views_in_the_catalog_tables(backend: tuple[str, dict[str, Any]]) -> None:
    conn = _connect(backend)
    cur = conn.cursor()
    version = conn.session.transaction().snapshot.version
    cur.execute("CREATE VIEW ns.c COMMENT 'counted' AS SELECT count(*) AS n FROM ns.t")
    conn.commit()
    cur.execute(
        "SELECT table_name, table_type, is_insertable_into, TABLE_COMMENT "
        "FROM information_schema.tables WHERE table_schema = 'ns' ORDER BY table_name"
    )
    assert cur.fetchall() == [
        ("c", "VIEW", "NO", "counted"),
        ("t", "BASE TABLE", "YES", None),
        ("v", "VIEW", "NO", None),
        ("w", "VIEW", "NO", None),
    ]
    cur.execute(
        "SELECT table_name, table_type, table_format, comment, column_count "
        "FROM system.tables WHERE namespace_name = 'ns' AND table_type = 'VIEW' ORDER BY 1"
    )
    assert cur.fetchall() == [
        ("c", "VIEW", "view", "counted", 1),
        ("v", "VIEW", "view", None, 2),
        ("w", "VIEW", "view", None, 2),
    ]
    cur.execute(  # a point query: answered by the catalog pushdown
        "SELECT table_schema, view_definition, is_updatable FROM information_schema.views "
        "WHERE table_schema = 'ns' AND table_name = 'v'"
    )
    assert cur.fetchall() == [("ns", "CREATE VIEW v AS SELECT a, b FROM ns.t WHERE a > 1;", "NO")]
    cur.execute(
        "SELECT column_name, data_type, ordinal_position FROM information_schema.columns "
        "WHERE table_schema = 'ns' AND table_name = 'w' ORDER BY ordinal_position"
    )
    assert cur.fetchall() == [("z", "BIGINT", 1), ("s", "VARCHAR", 2)]
    cur.execute(
        "SELECT table_name FROM information_schema.views "
        f"FOR SYSTEM_VERSION AS OF {version} ORDER BY 1"
    )
    assert cur.fetchall() == [("v",), ("w",)]
    cur.execute("SELECT count(*) FROM information_schema.views WHERE table_name LIKE 'v%'")
    assert cur.fetchall() == [(1,)]
    conn.close()


@pytest.mark.parametrize("isolation", ["SNAPSHOT", "SERIALIZABLE"])
def test_view_created_while_its_table_is_dropped(tmp_path: Any, isolation: str) -> None:
    """SNAPSHOT commits the view (it fails when read); SERIALIZABLE conflicts on the table read."""
    a = trinity_dbapi.connect(str(tmp_path / "lake"))
    b = trinity_dbapi.connect(str(tmp_path / "lake"))
    ca, cb = a.cursor(), b.cursor()
    ca.execute("CREATE TABLE t (x INT8)")
    a.commit()
    ca.execute(f"BEGIN ISOLATION LEVEL {isolation}")
    ca.execute("CREATE VIEW v AS SELECT x FROM t")
    cb.execute("DROP TABLE t")
    b.commit()
    if isolation == "SERIALIZABLE":
        with pytest.raises(errors.CommitConflictError, match=r"table 'default\.t'"):
            a.commit()
        cb.execute("SHOW VIEWS")
        assert cb.fetchall() == []
    else:
        a.commit()
        with pytest.raises(errors.NoSuchObjectError, match=r"view default\.v reads it"):
            ca.execute("SELECT * FROM v")
    a.close()
    b.close()
