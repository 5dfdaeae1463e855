"""Same-named views of two namespaces in one query, and views in system.columns, against DuckDB."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

import trinity_dbapi
from trinity_dbapi import errors

SETUP = (
    "CREATE NAMESPACE a",
    "CREATE NAMESPACE b",
    "CREATE NAMESPACE c",
    "CREATE TABLE a.t (id INT8, s VARCHAR)",
    "CREATE TABLE b.t (id INT8, s VARCHAR)",
    "INSERT INTO a.t VALUES (1, 'a1'), (2, 'a2'), (3, 'a3')",
    "INSERT INTO b.t VALUES (2, 'b2'), (3, 'b3'), (4, 'b4')",
    "CREATE VIEW a.v AS SELECT id, s FROM a.t WHERE id > 1",
    "CREATE VIEW b.v (id, label) AS SELECT id, upper(s) FROM b.t",
    # c.v is a table: a view a.v and a table c.v share the bare name v.
    "CREATE TABLE c.v (id INT8, n INT4)",
    "INSERT INTO c.v VALUES (2, 20), (4, 40)",
    # A view joining the two same-named views, read through another view.
    "CREATE VIEW c.j AS SELECT a.v.id, a.v.s, b.v.label FROM a.v JOIN b.v ON a.v.id = b.v.id",
)

QUERIES = (
    "SELECT * FROM a.v JOIN b.v ON a.v.id = b.v.id ORDER BY 1",
    "SELECT a.v.s, b.v.label FROM a.v, b.v WHERE a.v.id = b.v.id ORDER BY 1",
    "SELECT b.v.label, count(*) FROM a.v JOIN b.v ON a.v.id <= b.v.id GROUP BY b.v.label ORDER BY 1",
    "SELECT * FROM a.v LEFT JOIN c.v ON a.v.id = c.v.id ORDER BY 1",
    "SELECT a.v.id, c.v.n FROM a.v, c.v WHERE a.v.id = c.v.id",
    "SELECT * FROM c.j ORDER BY id",
    "SELECT x.id, b.v.label FROM a.v AS x JOIN b.v ON x.id = b.v.id ORDER BY 1",
    "SELECT * FROM a.v, b.v, c.v WHERE a.v.id = b.v.id AND b.v.id = c.v.id",
    # a bare v.col that only one of the v's has: DuckDB takes that one
    "SELECT v.s, v.label, c.v.n FROM a.v JOIN b.v USING (id) JOIN c.v USING (id)",
    "SELECT v.n FROM a.v, c.v WHERE a.v.id = c.v.id",
    # a subquery aliased v is what v.id names
    "SELECT v.id FROM a.v AS x, b.v AS y, (SELECT 7 AS id) AS v WHERE x.id = y.id",
)


def _duckdb_sql(sql: str) -> str:
    return sql.replace("INT8", "BIGINT").replace("INT4", "INTEGER").replace("NAMESPACE", "SCHEMA")


@pytest.fixture
def both(tmp_path: Path) -> Iterator[tuple[Any, duckdb.DuckDBPyConnection]]:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    duck = duckdb.connect()
    cur = conn.cursor()
    for sql in SETUP:
        cur.execute(sql)
        duck.execute(_duckdb_sql(sql))
    cur.execute("USE a")
    duck.execute("SET schema = 'a'")
    yield conn, duck
    duck.close()
    conn.close()


@pytest.mark.parametrize("sql", QUERIES)
def test_same_named_views_answer_as_duckdb(
    both: tuple[Any, duckdb.DuckDBPyConnection], sql: str
) -> None:
    conn, duck = both
    cur = conn.cursor()
    cur.execute(sql)
    expected = duck.execute(sql)
    assert cur.fetchall() == expected.fetchall()
    assert [d[0] for d in cur.description] == [d[0] for d in expected.description]


def test_an_ambiguous_bare_reference_is_refused(
    both: tuple[Any, duckdb.DuckDBPyConnection],
) -> None:
    conn, duck = both
    sql = "SELECT v.id FROM a.v, b.v"
    with pytest.raises(duckdb.BinderException, match="Ambiguous reference"):
        duck.execute(sql)
    with pytest.raises(errors.ProgrammingError, match=r"v\.id is ambiguous.*a\.v and b\.v.*alias"):
        conn.cursor().execute(sql)
    with pytest.raises(errors.ProgrammingError, match=r"none of a\.v and b\.v.*'nope'"):
        conn.cursor().execute("SELECT v.nope FROM a.v, b.v")
    # Inside a view too: it cannot be made.
    with pytest.raises(errors.ProgrammingError, match=r"v\.id is ambiguous"):
        conn.cursor().execute("CREATE VIEW c.bad AS SELECT v.id FROM a.v, b.v")


def test_a_bare_view_name_keeps_its_alias(both: tuple[Any, duckdb.DuckDBPyConnection]) -> None:
    # As for tables (query._clashing_names): the current namespace is a, a bare
    # v is a.v and keeps the alias v, so v.s names it. DuckDB calls v.s
    # ambiguous there; the answer is its answer with a.v written out.
    conn, duck = both
    cur = conn.cursor()
    cur.execute("SELECT v.s, b.v.label FROM v JOIN b.v ON v.id = b.v.id ORDER BY 1")
    expected = "SELECT a.v.s, b.v.label FROM a.v JOIN b.v ON a.v.id = b.v.id ORDER BY 1"
    assert cur.fetchall() == duck.execute(expected).fetchall() == [("a2", "B2"), ("a3", "B3")]


def test_a_view_joining_same_named_views_is_created_and_time_travels(
    both: tuple[Any, duckdb.DuckDBPyConnection],
) -> None:
    conn, _ = both
    cur = conn.cursor()
    cur.execute("SELECT max(version) FROM system.versions")
    (version,) = cur.fetchone()
    cur.execute("INSERT INTO b.t VALUES (3, 'late')")
    cur.execute("SELECT count(*) FROM c.j")
    assert cur.fetchone() == (3,)
    cur.execute(f"SELECT id, label FROM c.j FOR SYSTEM_VERSION AS OF {version} ORDER BY id")
    assert cur.fetchall() == [(2, "B2"), (3, "B3")]


def test_system_columns_lists_view_columns(both: tuple[Any, duckdb.DuckDBPyConnection]) -> None:
    conn, duck = both
    cur = conn.cursor()
    cur.execute(
        "SELECT table_name, column_name, ordinal_position, data_type, is_nullable,"
        " is_primary_key, is_partition_key FROM system.columns"
        " WHERE namespace_name = 'b' AND table_name = 'v' ORDER BY ordinal_position"
    )
    assert cur.fetchall() == [
        ("v", "id", 1, "int8", True, False, False),
        ("v", "label", 2, "varchar", True, False, False),
    ]
    cur.execute(
        "SELECT table_name, count(*) FROM system.columns WHERE namespace_name = 'c'"
        " GROUP BY table_name ORDER BY table_name"
    )
    assert cur.fetchall() == [("j", 3), ("v", 2)]
    # Consistent with information_schema.columns, which lists views as DuckDB does.
    info = (
        "SELECT table_schema, table_name, column_name, ordinal_position, is_nullable, data_type"
        " FROM information_schema.columns WHERE table_schema IN ('a', 'b', 'c')"
        " ORDER BY 1, 2, 4"
    )
    cur.execute(info)
    assert cur.fetchall() == duck.execute(info).fetchall()
    cur.execute(
        "SELECT namespace_name, table_name, column_name, ordinal_position FROM system.columns"
        " WHERE namespace_name IN ('a', 'b', 'c') ORDER BY 1, 2, 4"
    )
    listed = cur.fetchall()
    assert listed == [row[:4] for row in duck.execute(info).fetchall()]


def test_system_columns_of_a_view_time_travel(tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (a INT4, b VARCHAR)")
    cur.execute("CREATE VIEW ns.v AS SELECT a FROM ns.t")
    cur.execute("SELECT max(version) FROM system.versions")
    (version,) = cur.fetchone()
    cur.execute("CREATE OR REPLACE VIEW ns.v AS SELECT a, b, a + 1 AS c FROM ns.t")
    query = "SELECT column_name FROM system.columns {} WHERE table_name = 'v' ORDER BY 1"
    cur.execute(query.format(""))
    assert cur.fetchall() == [("a",), ("b",), ("c",)]
    cur.execute(query.format(f"FOR SYSTEM_VERSION AS OF {version}"))
    assert cur.fetchall() == [("a",)]
    cur.execute("DROP VIEW ns.v")
    cur.execute(query.format(""))
    assert cur.fetchall() == []
    conn.close()
