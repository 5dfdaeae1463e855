"""Columns qualified with their namespace (``ns.t.col``) resolve, as SQLAlchemy writes them.

Issue 14's claim, checked: they did, except when two namespaces' tables of
the same name were both unaliased in one query (``FROM a.t, b.t``, what
SQLAlchemy emits for two ``Table("t", schema=...)``): both became the alias
``t`` and DuckDB refused the query as ambiguous.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi


@pytest.fixture
def conn() -> Iterator[Any]:
    connection = trinity_dbapi.connect(f"memory://qualified-{uuid.uuid4().hex}", autocommit=True)
    for sql in (
        "CREATE NAMESPACE a",
        "CREATE NAMESPACE b",
        "CREATE TABLE a.t (id INT8, x INT8)",
        "CREATE TABLE b.t (id INT8, x INT8)",
        "INSERT INTO a.t VALUES (1, 10), (2, 20)",
        "INSERT INTO b.t VALUES (1, 100), (3, 300)",
    ):
        connection.execute(sql)
    yield connection
    connection.close()


@pytest.mark.parametrize(
    ("sql", "rows"),
    [
        ("SELECT a.t.x FROM a.t ORDER BY a.t.id", [(10,), (20,)]),
        ('SELECT "a"."t"."x" FROM "a"."t" WHERE "a"."t"."id" = 2', [(20,)]),
        ("SELECT a.t.* FROM a.t WHERE a.t.id = 1", [(1, 10)]),
        ("SELECT a.t.x, b.t.x FROM a.t, b.t WHERE a.t.id = b.t.id", [(10, 100)]),
        ("SELECT a.t.id FROM a.t JOIN b.t ON a.t.id = b.t.id", [(1,)]),
        ("SELECT a.t.id FROM a.t LEFT JOIN b.t ON a.t.id = b.t.id WHERE b.t.id IS NULL", [(2,)]),
        ("SELECT a.t.x, (SELECT max(b.t.x) FROM b.t) FROM a.t WHERE a.t.id = 1", [(10, 300)]),
        ("SELECT b.t.id FROM b.t WHERE b.t.id NOT IN (SELECT a.t.id FROM a.t)", [(3,)]),
        ("SELECT a.t.x + o.x FROM a.t, b.t AS o WHERE a.t.id = o.id", [(110,)]),
    ],
)
def test_namespace_qualified_columns_resolve(
    conn: Any, sql: str, rows: list[tuple[int, ...]]
) -> None:
    assert conn.execute(sql).fetchall() == rows


def test_dml_with_namespace_qualified_columns_of_same_named_tables(conn: Any) -> None:
    cur = conn.execute("UPDATE a.t SET x = a.t.x + 1 WHERE a.t.id IN (SELECT b.t.id FROM b.t)")
    assert cur.rowcount == 1
    conn.execute("DELETE FROM b.t WHERE b.t.id IN (SELECT a.t.id FROM a.t)")
    conn.execute("INSERT INTO b.t SELECT a.t.id + 10, a.t.x FROM a.t, b.t WHERE a.t.x < b.t.x")
    assert conn.execute("SELECT * FROM a.t ORDER BY id").fetchall() == [(1, 11), (2, 20)]
    assert conn.execute("SELECT * FROM b.t ORDER BY id").fetchall() == [
        (3, 300),
        (11, 11),
        (12, 20),
    ]


def test_sqlalchemy_tables_of_the_same_name_in_two_schemas(conn: Any) -> None:
    sa = pytest.importorskip("sqlalchemy")
    engine = sa.create_engine(
        "trinity:///memory://unused", creator=lambda: conn, poolclass=sa.pool.StaticPool
    )
    metadata = sa.MetaData()
    ta = sa.Table("t", metadata, autoload_with=engine, schema="a")
    tb = sa.Table("t", metadata, autoload_with=engine, schema="b")
    query = (
        sa.select(ta.c.id, ta.c.x, tb.c.x)
        .select_from(ta.join(tb, ta.c.id == tb.c.id))
        .where(tb.c.x > sa.bindparam("floor"))
        .order_by(ta.c.id)
    )
    compiled = str(query.compile(engine))
    assert "a.t.id" in compiled
    assert "b.t.x" in compiled
    with engine.connect() as connection:
        assert connection.execute(query, {"floor": 50}).fetchall() == [(1, 10, 100)]
        # Two FROM entries, as SQLAlchemy writes an implicit join.
        implicit = sa.select(sa.func.count()).where(ta.c.id < tb.c.id)
        assert connection.execute(implicit).scalar() == 2


def test_an_unqualified_table_beside_a_qualified_one_of_the_same_name(tmp_path: Path) -> None:
    """``FROM t JOIN s.t``: columns ``t.col`` are the current namespace's, ``s.t.col`` the other's.

    SQLAlchemy's compliance suite (SameNamedSchemaTableTest) writes exactly this.
    """
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE t (id INT8, other INT8)")
    cur.execute("CREATE TABLE s.t (id INT8)")
    cur.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    cur.execute("INSERT INTO s.t VALUES (10), (30)")
    cur.execute(
        "SELECT t.id, s.t.id FROM t JOIN s.t ON t.other = s.t.id WHERE t.id = ? ORDER BY t.id",
        [1],
    )
    assert cur.fetchall() == [(1, 10)]
    cur.execute(
        "SELECT t.id, anon.id FROM t JOIN (SELECT t1.id FROM t AS t1 JOIN s.t "
        "ON t1.other = s.t.id) AS anon ON t.id = anon.id"
    )
    assert cur.fetchall() == [(1, 1)]
    conn.close()
