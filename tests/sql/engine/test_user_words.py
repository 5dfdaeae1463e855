"""Errors in the user's words: the statement as typed, never the SQL it was rewritten into.

A view is expanded into its query, a table read becomes a scan under a
private name, UPDATE and DELETE become queries over the table's rows:
DuckDB's errors quote that SQL (``LINE 1: ...``) and underline the culprit.
The quote is dropped and the culprit kept (``near '...'``), which is a piece
of what the user typed. A NULL in a NOT NULL column names the table too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

import trinity_dbapi
from trinity_dbapi import errors


@pytest.fixture
def conn(tmp_path: Any) -> Iterator[Any]:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE shop")
    cur.execute("CREATE TABLE shop.orders (id INT NOT NULL, amount DOUBLE, customer VARCHAR)")
    cur.execute("INSERT INTO shop.orders VALUES (1, 2.0, 'a')")
    cur.execute("CREATE VIEW shop.v AS SELECT * FROM shop.orders")
    yield conn
    conn.close()


@pytest.mark.parametrize(
    ("sql", "near"),
    [
        ("SELECT * FROM shop.v WHERE amount = 'abc'", "'abc'"),  # through a view
        ("SELECT * FROM shop.orders WHERE amount = 'abc'", "'abc'"),  # the native scan
        ("UPDATE shop.orders SET amount = amount + 'x'", "'x'"),
        ("DELETE FROM shop.orders WHERE amount = 'abc'", "'abc'"),
        ("INSERT INTO shop.orders SELECT * FROM shop.v WHERE amount = 'abc'", "'abc'"),
        ("SELECT CAST(customer AS INT) FROM shop.orders", "CAST(customer AS INT)"),
        (
            (
                "MERGE INTO shop.orders t USING shop.v s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET amount = 'zz'"
            ),
            "'zz'",
        ),
        (
            "UPDATE shop.orders SET amount = s.amount + 'x' FROM shop.v s WHERE s.id = orders.id",
            "'x'",
        ),
    ],
)
def test_errors_quote_no_rewritten_sql(conn: Any, sql: str, near: str) -> None:
    with pytest.raises(errors.DataError) as info:
        conn.execute(sql)
    message = str(info.value)
    assert message.startswith("query failed in DuckDB: Conversion Error: Could not convert")
    assert message.endswith(f"(near {near!r})")
    assert near in sql  # what it quotes is the user's own text
    for internal in ("LINE 1", "__trinity", "COALESCE", 'AS "v"('):
        assert internal not in message


def test_a_view_column_list_is_not_called_a_values_list(conn: Any) -> None:
    with pytest.raises(errors.ProgrammingError) as info:
        conn.execute("SELECT * FROM shop.orders o JOIN shop.v v ON o.id = v.idd")
    assert str(info.value) == (
        'query failed in DuckDB: Binder Error: the view or subquery "v" has no column named "idd"'
    )


@pytest.mark.parametrize(
    ("sql", "what"),
    [
        ("INSERT INTO shop.orders VALUES (NULL, 1.0, 'b')", "1 value(s) are NULL"),
        ("INSERT INTO shop.orders (amount) VALUES (1.0)", "the data does not provide it"),
        ("UPDATE shop.orders SET id = NULL", "1 value(s) are NULL"),
        ("INSERT INTO shop.orders SELECT NULL, 1, 'x'", "1 value(s) are NULL"),
        (
            (
                "MERGE INTO shop.orders t USING (SELECT 9 AS k) s ON t.id = s.k "
                "WHEN NOT MATCHED THEN INSERT VALUES (NULL, 1, 'x')"
            ),
            "1 value(s) are NULL",
        ),
    ],
)
def test_a_not_null_violation_names_the_table_and_column(conn: Any, sql: str, what: str) -> None:
    with pytest.raises(errors.IntegrityError) as info:
        conn.execute(sql)
    assert str(info.value) == f"shop.orders: column 'id' is NOT NULL but {what}"
    assert conn.execute("SELECT count(*) FROM shop.orders").fetchall() == [(1,)]


def test_an_ingest_not_null_violation_names_the_table(conn: Any) -> None:
    data = pa.table({"id": pa.array([None], pa.int32()), "amount": [1.0], "customer": ["x"]})
    with pytest.raises(errors.IntegrityError) as info:
        conn.cursor().ingest("orders", data, namespace="shop")
    assert str(info.value) == "shop.orders: column 'id' is NOT NULL but 1 value(s) are NULL"
