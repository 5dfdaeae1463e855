"""Finding things without knowing where they are: "did you mean", and SHOW TABLES across namespaces.

A missing table or namespace's error names the closest existing ones (the
same name in another namespace first, then a small edit away), listed from
the tree only once the statement failed; a missing column's error turns
DuckDB's candidates into the same question. ``SHOW TABLES`` with no ``IN``,
when the current namespace holds no table, lists every namespace's tables as
``namespace.table``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.sql.engine.suggest import closest


@pytest.fixture
def conn(tmp_path: Any) -> Iterator[Any]:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE shop")
    cur.execute("CREATE NAMESPACE hr")
    cur.execute("CREATE TABLE shop.orders (id INT NOT NULL, amount DOUBLE, customer VARCHAR)")
    cur.execute("CREATE TABLE shop.customers (id INT, name VARCHAR)")
    cur.execute("CREATE TABLE hr.people (id INT, name VARCHAR)")
    cur.execute("CREATE VIEW shop.big_orders AS SELECT * FROM shop.orders WHERE amount > 100")
    yield conn
    conn.close()


def _message(conn: Any, sql: str, error: type[Exception] = errors.ProgrammingError) -> str:
    with pytest.raises(error) as info:
        conn.execute(sql)
    return str(info.value)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        # The name is right, the namespace is not (the issue's own example).
        (
            "SELECT * FROM orders",
            "table 'default.orders' does not exist; did you mean shop.orders?",
        ),
        (
            "SELECT * FROM shop.order",
            "table 'shop.order' does not exist; did you mean shop.orders?",
        ),
        (
            "SELECT * FROM shpo.orders",
            "table 'shpo.orders' does not exist; did you mean shop.orders?",
        ),
        ("SELECT * FROM people", "table 'default.people' does not exist; did you mean hr.people?"),
        (
            "DROP TABLE shop.custmers",
            "table 'shop.custmers' does not exist; did you mean shop.customers?",
        ),
        (
            "INSERT INTO hr.peple VALUES (1, 'a')",
            "table 'hr.peple' does not exist; did you mean hr.people?",
        ),
        # Views and catalog tables are names one may mean too.
        (
            "SELECT * FROM shop.big_order",
            "table 'shop.big_order' does not exist; did you mean shop.big_orders?",
        ),
        (
            "SELECT * FROM system.tabels",
            "table 'system.tabels' does not exist; did you mean system.tables?",
        ),
    ],
)
def test_a_missing_table_names_the_tables_meant(conn: Any, sql: str, message: str) -> None:
    assert _message(conn, sql, errors.NoSuchTableError) == message


def test_nothing_close_keeps_the_general_fix(conn: Any) -> None:
    assert _message(conn, "SELECT * FROM zzz", errors.NoSuchTableError) == (
        "table 'default.zzz' does not exist; create it first or check the namespace and name"
    )


def test_the_same_name_in_several_namespaces_names_each(conn: Any) -> None:
    conn.execute("CREATE TABLE hr.orders (id INT)")
    assert _message(conn, "SELECT * FROM orders", errors.NoSuchTableError) == (
        "table 'default.orders' does not exist; did you mean hr.orders or shop.orders?"
    )


@pytest.mark.parametrize(
    "sql",
    ["USE shpo", "CREATE TABLE shpo.x (a INT)", "DROP NAMESPACE shpo", "SHOW TABLES IN shpo"],
)
def test_a_missing_namespace_names_the_namespace_meant(conn: Any, sql: str) -> None:
    assert _message(conn, sql, errors.NoSuchNamespaceError) == (
        "namespace 'shpo' does not exist; did you mean shop?"
    )


def test_a_view_named_as_a_table_keeps_its_own_message(conn: Any) -> None:
    message = _message(
        conn, "INSERT INTO shop.big_orders VALUES (1, 2, 'x')", errors.NoSuchTableError
    )
    assert "shop.big_orders is a view, which is read-only" in message
    assert "did you mean" not in message


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT amont FROM shop.orders",
        "SELECT amont FROM shop.big_orders",  # through a view
        "UPDATE shop.orders SET amount = 1 WHERE amont > 0",
        "DELETE FROM shop.orders WHERE amont = 1",
    ],
)
def test_a_missing_column_names_the_column_meant(conn: Any, sql: str) -> None:
    assert _message(conn, sql) == (
        'query failed in DuckDB: Binder Error: Referenced column "amont" not found in FROM '
        'clause!; did you mean "amount"?'
    )


def test_a_statement_that_succeeds_lists_nothing(conn: Any, monkeypatch: Any) -> None:
    from trinity_dbapi.lakehouse.transaction import Transaction

    def refuse(*args: Any) -> Any:
        raise AssertionError("listed names on a statement that succeeded")

    monkeypatch.setattr(Transaction, "list_namespaces", refuse)
    assert conn.execute("SELECT count(*) FROM shop.orders").fetchall() == [(0,)]


def test_closest() -> None:
    assert closest("ordres", ["orders", "customers", "order_items"]) == ["orders"]
    assert closest("ORDERS", ["Orders"]) == ["Orders"]
    assert closest("x", ["orders"]) == []


# -- SHOW TABLES with no namespace ----------------------------------------------------------


def _rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    return conn.execute(sql).fetchall()


def test_show_tables_in_an_absent_namespace_lists_every_namespace(conn: Any) -> None:
    # The current namespace is 'default', which does not exist (as after the demo).
    cur = conn.execute("SHOW TABLES")
    assert cur.fetchall() == [("hr.people",), ("shop.customers",), ("shop.orders",)]
    assert [d[0] for d in cur.description] == ["table_name"]  # the same one column
    assert _rows(conn, "SHOW TABLES LIKE 'c%'") == [("shop.customers",)]  # the table's name


def test_show_tables_in_an_empty_namespace_lists_every_namespace(conn: Any) -> None:
    conn.execute("CREATE NAMESPACE empty")
    conn.execute("USE empty")
    assert _rows(conn, "SHOW TABLES") == [("hr.people",), ("shop.customers",), ("shop.orders",)]
    assert _rows(conn, "SHOW TABLES IN empty") == []  # asked for by name: that one only


def test_show_tables_in_a_namespace_with_tables_lists_its_own(conn: Any) -> None:
    conn.execute("USE shop")
    assert _rows(conn, "SHOW TABLES") == [("customers",), ("orders",)]
    assert _rows(conn, "SHOW TABLES IN hr") == [("people",)]


def test_show_tables_on_an_empty_lakehouse_is_empty(tmp_path: Any) -> None:
    with trinity_dbapi.connect(str(tmp_path / "new")) as conn:
        assert _rows(conn, "SHOW TABLES") == []


def test_ingest_and_executemany_name_the_table_meant(conn: Any) -> None:
    import pyarrow as pa

    with pytest.raises(errors.NoSuchTableError) as info:
        conn.cursor().ingest("order", pa.table({"id": [1]}), namespace="shop")
    assert str(info.value) == "table 'shop.order' does not exist; did you mean shop.orders?"
    with pytest.raises(errors.NoSuchTableError) as info:
        conn.cursor().executemany("INSERT INTO people VALUES (?, ?)", [(1, "a"), (2, "b")])
    assert str(info.value) == "table 'default.people' does not exist; did you mean hr.people?"
