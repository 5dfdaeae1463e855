"""SHOW and DESCRIBE answered from the tree give exactly what the catalog queries give.

The statements no longer run SQL over the catalog tables (see
``trinity_dbapi/sql/engine/show.py``); the queries they used to run are the
oracle here: same rows, same order, same ``cursor.description``. LIKE is
matched in Python, so it is checked against DuckDB's own LIKE.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.dbapi.connection import Connection
from trinity_dbapi.errors import NoSuchNamespaceError, NoSuchTableError
from trinity_dbapi.sql.engine.show import like_matcher

NAMES = ["t1", "T2", "a_b", "a%b", "a\\b", "é", "日本", "t10", "z"]


@pytest.fixture(scope="module")
def lake_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("show") / "lake")
    con = trinity_dbapi.connect(path, create=True, autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE NAMESPACE n COMMENT 'the n' WITH (owner = 'ann', x = '1')")
    cur.execute("CREATE NAMESPACE bare")
    cur.execute('CREATE NAMESPACE "sp%ce_"')
    for name in NAMES:
        quoted = '"' + name.replace('"', '""') + '"'
        cur.execute(f"CREATE TABLE n.{quoted} (id BIGINT NOT NULL, v VARCHAR(8))")
    cur.execute(
        "CREATE TABLE n.wide (id BIGINT NOT NULL COMMENT 'the key', day DATE, "
        "amount DECIMAL(12, 2), flag BOOLEAN, ts TIMESTAMP WITH TIME ZONE, PRIMARY KEY (id)) "
        "PARTITIONED BY (day) COMMENT 'wide one'"
    )
    con.close()
    return path


@pytest.fixture
def con(lake_path: str) -> Iterator[Connection]:
    connection = trinity_dbapi.connect(lake_path, autocommit=True)
    yield connection
    connection.close()


def _run(con: Connection, sql: str, params: Any = ()) -> tuple[Any, list[tuple[Any, ...]]]:
    cur = con.cursor()
    cur.execute(sql, params)
    return cur.description, cur.fetchall()


def _same(con: Connection, statement: str, oracle: str, params: Any = ()) -> None:
    description, rows = _run(con, statement)
    expected_description, expected = _run(con, oracle, params)
    assert rows == expected
    assert description == expected_description


@pytest.mark.parametrize("table", ["wide", *NAMES])
def test_describe_matches_system_columns(con: Connection, table: str) -> None:
    quoted = '"' + table.replace('"', '""') + '"'
    _same(
        con,
        f"DESCRIBE TABLE n.{quoted}",
        "SELECT column_name, data_type, is_nullable AS nullable, comment, "
        "is_primary_key AS primary_key, is_partition_key AS partition_key "
        "FROM system.columns WHERE namespace_name = ? AND table_name = ? "
        "ORDER BY ordinal_position",
        ("n", table),
    )


def test_describe_wide_values(con: Connection) -> None:
    _, rows = _run(con, "DESCRIBE TABLE n.wide")
    assert rows[0] == ("id", "int8", False, "the key", True, False)
    assert rows[1][0] == "day" and rows[1][5] is True
    assert [row[0] for row in rows] == ["id", "day", "amount", "flag", "ts"]


@pytest.mark.parametrize("like", [None, "t%", "a_b", "a\\b", "%b", "T%", "_", "__", "%", "x%"])
def test_show_tables_matches_information_schema(con: Connection, like: str | None) -> None:
    where = "" if like is None else " AND table_name LIKE ?"
    statement = "SHOW TABLES IN n" + ("" if like is None else " LIKE " + _string(like))
    _same(
        con,
        statement,
        f"SELECT table_name FROM information_schema.tables WHERE table_schema = ?{where} "
        "ORDER BY table_name",
        ("n",) if like is None else ("n", like),
    )


@pytest.mark.parametrize("namespace", ["system", "information_schema", "bare", '"sp%ce_"'])
def test_show_tables_other_namespaces(con: Connection, namespace: str) -> None:
    _same(
        con,
        f"SHOW TABLES IN {namespace}",
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ? "
        "ORDER BY table_name",
        (namespace.strip('"'),),
    )


@pytest.mark.parametrize("like", [None, "n", "sp%", "%_", "i%", "zz"])
def test_show_namespaces_matches_schemata(con: Connection, like: str | None) -> None:
    where = "" if like is None else " AND schema_name LIKE ?"
    _same(
        con,
        "SHOW NAMESPACES" + ("" if like is None else " LIKE " + _string(like)),
        "SELECT schema_name AS namespace_name FROM information_schema.schemata "
        f"WHERE TRUE{where} ORDER BY namespace_name",
        () if like is None else (like,),
    )


@pytest.mark.parametrize("namespace", ["n", "bare"])
def test_describe_namespace_matches_system_namespaces(con: Connection, namespace: str) -> None:
    _same(
        con,
        f"DESCRIBE NAMESPACE {namespace}",
        "SELECT namespace_name, comment, properties FROM system.namespaces "
        "WHERE namespace_name = ?",
        (namespace,),
    )
    _, rows = _run(con, "DESCRIBE NAMESPACE n")
    assert rows[0][:2] == ("n", "the n")


def test_missing_objects_are_named(con: Connection) -> None:
    cur = con.cursor()
    with pytest.raises(NoSuchTableError, match=r"n\.nope"):
        cur.execute("DESCRIBE TABLE n.nope")
    with pytest.raises(NoSuchNamespaceError, match="nope"):
        cur.execute("SHOW TABLES IN nope")
    with pytest.raises(NoSuchNamespaceError, match="nope"):
        cur.execute("DESCRIBE NAMESPACE nope")


def test_show_tables_in_a_current_namespace_not_created_yet(lake_path: str) -> None:
    # It lists every namespace's tables instead, qualified, in the same one column.
    connection = trinity_dbapi.connect(lake_path, autocommit=True, namespace="fresh")
    try:
        description, rows = _run(connection, "SHOW TABLES")
        _, in_n = _run(connection, "SHOW TABLES IN n")
        assert description[0][0] == "table_name" and len(description) == 1
        assert [row for row in rows if row[0].startswith("n.")] == [(f"n.{t}",) for (t,) in in_n]
        assert all("." in row[0] for row in rows) and rows == sorted(rows)
        assert _run(connection, "SHOW TABLES IN fresh")[1] == []  # by name: that one only
    finally:
        connection.close()


def test_show_tables_sees_the_transaction(lake_path: str) -> None:
    connection = trinity_dbapi.connect(lake_path, autocommit=False)
    try:
        cur = connection.cursor()
        cur.execute("CREATE TABLE n.uncommitted (a INT)")
        cur.execute("SHOW TABLES IN n LIKE 'unc%'")
        assert cur.fetchall() == [("uncommitted",)]
        cur.execute("DESCRIBE TABLE n.uncommitted")
        assert cur.fetchall() == [("a", "int4", True, None, False, False)]
        connection.rollback()
        cur.execute("SHOW TABLES IN n LIKE 'unc%'")
        assert cur.fetchall() == []
    finally:
        connection.close()


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_DUCK = duckdb.connect()
_ALPHABET = st.sampled_from(list("ab_%\\\n.*é"))


@settings(max_examples=300, deadline=None)
@given(st.text(_ALPHABET, max_size=6), st.text(_ALPHABET, max_size=6))
def test_like_matcher_is_duckdbs_like(value: str, pattern: str) -> None:
    expected = _DUCK.execute("SELECT ? LIKE ?", [value, pattern]).fetchone()
    assert expected is not None
    assert (like_matcher(pattern).fullmatch(value) is not None) == expected[0]


def test_describe_a_reserved_namespace(lake_path: str) -> None:
    # Its empty properties map once reached DuckDB as "MAP MAP()", a syntax error.
    connection = trinity_dbapi.connect(lake_path, autocommit=True)
    try:
        for name in ("system", "information_schema"):
            description, rows = _run(connection, f"DESCRIBE NAMESPACE {name}")
            assert rows == [(name, "read-only catalog metadata", [])]
            assert [d[0] for d in description] == ["namespace_name", "comment", "properties"]
    finally:
        connection.close()
