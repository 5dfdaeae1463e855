"""Point queries over a catalog table answered without DuckDB agree with DuckDB.

``sql/engine/catalog_answer.py`` evaluates a narrow query shape with Arrow.
The oracle is the same query run by DuckDB (the fast path switched off):
same rows, same order where ORDER BY decides it, same ``cursor.description``
and ``rowcount``. Queries are generated over every catalog table, their
columns and values taken from the real rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.dbapi.connection import Connection
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql.engine import catalog_answer

TABLES = [
    ("information_schema", "columns"),
    ("information_schema", "tables"),
    ("information_schema", "schemata"),
    ("system", "columns"),
    ("system", "tables"),
    ("system", "namespaces"),
]


@pytest.fixture(scope="module")
def lake_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("answer") / "lake")
    con = trinity_dbapi.connect(path, create=True, autocommit=True)
    cur = con.cursor()
    for ns in ("a", "b"):
        cur.execute(f"CREATE NAMESPACE {ns} COMMENT 'ns {ns}'")
        for i in range(3):
            cur.execute(
                f"CREATE TABLE {ns}.t{i} (id BIGINT NOT NULL, name VARCHAR(10) COMMENT 'n', "
                f"d DATE, amount DECIMAL(9, 2), PRIMARY KEY (id)) PARTITIONED BY (d)"
            )
    cur.execute('CREATE TABLE a."Tx%" (v INT)')
    con.close()
    return path


@pytest.fixture
def con(lake_path: str) -> Iterator[Connection]:
    connection = trinity_dbapi.connect(lake_path, autocommit=True)
    yield connection
    connection.close()


def _run(con: Connection, sql: str, params: Any = ()) -> tuple[Any, int, list[tuple[Any, ...]]]:
    cur = con.cursor()
    cur.execute(sql, params)
    rows = cur.fetchall()
    return cur.description, cur.rowcount, rows


def _both(
    con: Connection, monkeypatch: pytest.MonkeyPatch, sql: str, params: Any = ()
) -> tuple[Any, Any, bool]:
    """(fast result, DuckDB's result, whether the fast path answered)."""
    used = []
    original = catalog_answer.answer

    def spy(*args: Any) -> Any:
        table = original(*args)
        used.append(table is not None)
        return table

    monkeypatch.setattr(catalog_answer, "answer", spy)
    fast = _run(con, sql, params)
    monkeypatch.setattr(catalog_answer, "answer", lambda *args: None)
    slow = _run(con, sql, params)
    monkeypatch.setattr(catalog_answer, "answer", original)
    return fast, slow, bool(used and used[0])


def _handled(namespace: str, table: str) -> list[str]:
    schema = catalog.catalog_schema(namespace, table)
    return [f.name for f in schema if catalog_answer._kind(f.type) is not None]


def _quote(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


@st.composite
def queries(draw: st.DrawFn, con: Connection) -> tuple[str, list[str]]:
    namespace, table = draw(st.sampled_from(TABLES))
    columns = _handled(namespace, table)
    _, _, rows = _run(con, f"SELECT * FROM {namespace}.{table}")
    names = catalog.catalog_schema(namespace, table).names
    picked = draw(st.lists(st.sampled_from(columns), min_size=1, max_size=3, unique=True))
    select = ", ".join(picked)
    conditions = []
    for column in draw(st.lists(st.sampled_from(columns), max_size=2, unique=True)):
        index = names.index(column)
        kind = catalog_answer._kind(catalog.catalog_schema(namespace, table).field(column).type)
        absent = {str: "zz", int: 12345, bool: True}[kind]  # type: ignore[index]
        seen = [row[index] for row in rows if row[index] is not None] or [absent]
        values = draw(st.lists(st.sampled_from(seen), min_size=1, max_size=3))
        if len(values) == 1 and draw(st.booleans()):
            conditions.append(f"{column} = {_quote(values[0])}")
        else:
            conditions.append(f"{column} IN ({', '.join(map(_quote, values))})")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    order_by = draw(st.lists(st.sampled_from(picked), max_size=2, unique=True))
    desc = draw(st.booleans())
    order = ""
    if order_by:
        order = " ORDER BY " + ", ".join(f"{c}{' DESC' if desc else ''}" for c in order_by)
    return f"SELECT {select} FROM {namespace}.{table}{where}{order}", order_by


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_generated_point_queries_agree_with_duckdb(
    con: Connection, monkeypatch: pytest.MonkeyPatch, data: st.DataObject
) -> None:
    sql, order_by = data.draw(queries(con))
    fast, slow, used = _both(con, monkeypatch, sql)
    assert used, sql
    assert fast[0] == slow[0], sql  # description
    assert fast[1] == slow[1], sql  # rowcount
    assert sorted(map(repr, fast[2])) == sorted(map(repr, slow[2])), sql
    if order_by:  # ties may come in any order; the keys' sequence may not
        names = [d[0] for d in fast[0]]
        keys = [names.index(c) for c in order_by]
        assert [[r[k] for k in keys] for r in fast[2]] == [[r[k] for k in keys] for r in slow[2]]


def test_the_benchmark_shape_is_answered_here(
    con: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    sql = (
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position"
    )
    fast, slow, used = _both(con, monkeypatch, sql, ("a", "t1"))
    assert used and fast == slow
    assert [row[0] for row in fast[2]] == ["id", "name", "d", "amount"]


@pytest.mark.parametrize(
    "sql",
    [
        # ORDER BY prefers the alias: sorting by the table's column would differ
        (
            "SELECT data_type AS column_name, column_name AS c FROM information_schema.columns "
            "WHERE table_schema = 'a' ORDER BY column_name"
        ),
        # names DuckDB resolves without regard to case
        "SELECT COLUMN_NAME FROM information_schema.columns WHERE table_schema = 'a'",
        # a text constant for an integer column: DuckDB casts it
        "SELECT column_name FROM information_schema.columns WHERE ordinal_position = '1'",
        "SELECT column_name FROM information_schema.columns WHERE ordinal_position IN (1, NULL)",
        "SELECT DISTINCT table_schema FROM information_schema.columns",
        "SELECT table_name FROM information_schema.tables LIMIT 2",
        "SELECT table_name FROM information_schema.tables t WHERE t.table_schema = 'a'",
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'a' OR TRUE",
        "SELECT * FROM system.namespaces",  # a MAP column
        "SELECT table_name, table_name FROM information_schema.tables",
        "SELECT table_name FROM information_schema.tables ORDER BY table_name NULLS FIRST",
    ],
)
def test_other_shapes_go_to_duckdb(
    con: Connection, monkeypatch: pytest.MonkeyPatch, sql: str
) -> None:
    fast, slow, used = _both(con, monkeypatch, sql)
    assert not used
    assert fast[:2] == slow[:2]
    assert sorted(map(repr, fast[2])) == sorted(map(repr, slow[2]))  # no ORDER BY


@pytest.mark.parametrize(
    "sql",
    [
        # a value outside the column's type: no row, as in DuckDB (which widens)
        "SELECT column_name FROM information_schema.columns WHERE ordinal_position = 99999999999",
        "SELECT column_name FROM information_schema.columns WHERE ordinal_position IN (-1, 2)",
        # NULLs sort last both ways; the key sequence is what must agree
        "SELECT table_name, comment FROM system.tables ORDER BY comment DESC, table_name",
        "SELECT * FROM information_schema.tables WHERE table_schema IN ('a', 'system')",
        (
            "SELECT is_nullable AS n, column_name FROM system.columns WHERE is_nullable = FALSE "
            "ORDER BY column_name DESC, namespace_name"
        ),
    ],
)
def test_edge_cases_answered_here_agree(
    con: Connection, monkeypatch: pytest.MonkeyPatch, sql: str
) -> None:
    fast, slow, used = _both(con, monkeypatch, sql)
    assert used
    assert fast[:2] == slow[:2]
    assert sorted(map(repr, fast[2])) == sorted(map(repr, slow[2]))
    if "ORDER BY" in sql:
        assert [r[0] for r in fast[2]] == [r[0] for r in slow[2]]


def test_time_travel_and_parameters(lake_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    connection = trinity_dbapi.connect(lake_path, autocommit=True)
    try:
        version = connection.lakehouse.latest_version()
        cur = connection.cursor()
        cur.execute("CREATE TABLE b.later (x INT)")
        sql = (
            "SELECT table_name FROM information_schema.tables "
            f"FOR SYSTEM_VERSION AS OF {version} WHERE table_schema = ? ORDER BY table_name"
        )
        fast, slow, used = _both(connection, monkeypatch, sql, ("b",))
        assert used and fast == slow
        assert [row[0] for row in fast[2]] == ["t0", "t1", "t2"]
        fast, _, _ = _both(
            connection, monkeypatch, sql.split(" FOR")[0] + " WHERE table_schema = ?", ("b",)
        )
        assert sorted(row[0] for row in fast[2]) == ["later", "t0", "t1", "t2"]
        cur.execute("DROP TABLE b.later")
    finally:
        connection.close()
