"""Tab completion's candidates (:func:`trinity_dbapi.cli.completion.complete`), and its catalog cache."""

from __future__ import annotations

import os
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.cli.completion import Catalog, complete, create_statements, quote

COMMANDS = [".tables", ".timer", ".timing", ".help", "\\dt", "\\d"]


class Counting:
    """A connection whose cursors count the statements the catalog runs."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.statements: list[str] = []

    @property
    def in_transaction(self) -> bool:
        return bool(self.connection.in_transaction)

    def cursor(self) -> Any:
        cursor = self.connection.cursor()
        execute = cursor.execute

        def counted(sql: str, *args: Any) -> Any:
            self.statements.append(sql)
            return execute(sql, *args)

        cursor.execute = counted
        return cursor


@pytest.fixture
def lake() -> Any:
    connection = trinity_dbapi.connect(
        f"memory://completion-{os.urandom(4).hex()}", autocommit=True
    )
    for statement in (
        "CREATE NAMESPACE shop",
        "CREATE TABLE shop.orders (id INT8, item VARCHAR, price DOUBLE)",
        "CREATE TABLE shop.people (id INT8, name VARCHAR)",
        'CREATE TABLE "MixedCase" (x INT8)',
    ):
        connection.execute(statement)
    yield connection
    connection.close()


def _complete(lake: Any, word: str, before: str = "", current: str = "default") -> list[str]:
    return complete(
        word, before, catalog=Catalog(lambda: (lake, 0)), current=current, commands=COMMANDS
    )


@pytest.mark.parametrize(
    ("before", "word", "expected"),
    [
        ("SELECT * FROM ", "sh", ["shop."]),  # a namespace, no keyword after FROM
        ("SELECT * FROM ", "shop.o", ["shop.orders "]),
        ("SELECT * FROM ", "shop.", ["shop.orders ", "shop.people "]),
        ("", "sel", ["select "]),  # keywords in the case typed
        ("", "SEL", ["SELECT "]),
        ("SELECT ", "shop.orders.i", ["shop.orders.id ", "shop.orders.item "]),
        ("SELECT * FROM shop.orders o WHERE ", "o.pr", ["o.price "]),  # an alias
        (
            "SELECT * FROM shop.orders JOIN shop.people p ON ",
            "na",
            ["name ", "namespace ", "namespaces "],
        ),
        ("SELECT * FROM shop.orders WHERE ", "pri", ["price ", "primary "]),
        ("", ".ti", [".timer ", ".timing "]),
        ("", "\\d", ["\\dt ", "\\d "]),
        ("CALL ", "sys", ["system."]),
        ("CALL ", "system.comp", ["system.compact("]),
        ("SELECT * FROM ", "sys", ["system."]),  # built-in namespaces when typed
        ("SELECT * FROM ", "system.ver", ["system.versions "]),
        ("SELECT * FROM ", '"Mix', ['"MixedCase" ']),  # quoted as SQL needs it
        ("SELECT * FROM ", "nosuch.", []),
        ("SELECT * FROM shop.orders WHERE ", "zzz", []),
        ("CREATE TABLE shop.copy ", "cl", ["clone "]),
        ("CREATE TABLE shop.copy CLONE ", "shop.o", ["shop.orders "]),  # a name, no keyword
    ],
)
def test_candidates(lake: Any, before: str, word: str, expected: list[str]) -> None:
    assert _complete(lake, word, before) == sorted(expected)


def test_unqualified_tables_of_the_current_namespace(lake: Any) -> None:
    assert _complete(lake, "or", "SELECT * FROM ", current="shop") == ["orders "]
    assert _complete(lake, "it", "SELECT * FROM orders WHERE ", current="shop") == ["item "]
    # Built-in namespaces are not offered to an empty word; the user's are.
    assert _complete(lake, "", "SELECT * FROM ") == ['"MixedCase" ', "default.", "shop."]


def test_the_catalog_is_read_once_per_epoch(lake: Any) -> None:
    counting, epoch = Counting(lake), [0]
    catalog = Catalog(lambda: (counting, epoch[0]))
    for _ in range(3):
        catalog.tables("shop")
        catalog.columns("shop", "orders")
    assert counting.statements == [
        "SHOW NAMESPACES",
        "SELECT table_schema, table_name FROM information_schema.tables",
        "DESCRIBE shop.orders",
    ]
    lake.execute("CREATE TABLE shop.returns (id INT8)")
    assert "returns" not in catalog.tables("shop")  # same epoch: the cached names
    epoch[0] += 1  # what a CREATE in the shell does
    assert catalog.tables("shop") == ["orders", "people", "returns"]
    assert len(counting.statements) == 5


def test_quote() -> None:
    assert quote("orders") == "orders"
    assert quote("default") == "default"
    assert quote("order") == '"order"'  # reserved
    assert quote("Orders") == '"Orders"'
    assert quote('a"b') == '"a""b"'


def test_create_statements(lake: Any) -> None:
    assert create_statements(lake, "shop.people") == (
        'CREATE TABLE "shop"."people" ("id" INT8, "name" VARCHAR);'
    )
    assert str(create_statements(lake)).splitlines() == [
        'CREATE TABLE "default"."MixedCase" ("x" INT8);',
        'CREATE TABLE "shop"."orders" ("id" INT8, "item" VARCHAR, "price" FLOAT8);',
        'CREATE TABLE "shop"."people" ("id" INT8, "name" VARCHAR);',
    ]


def test_no_catalog_read_inside_a_transaction(lake: Any) -> None:
    counting = Counting(lake)
    catalog = Catalog(lambda: (counting, 0))
    assert catalog.tables("shop") == ["orders", "people"]
    lake.execute("BEGIN")
    try:
        counting.statements.clear()
        # The names read before BEGIN are offered; nothing joins the transaction's reads.
        assert catalog.tables("shop") == ["orders", "people"]
        assert catalog.columns("shop", "people") == []  # not read before
        assert counting.statements == []
        fresh = Catalog(lambda: (counting, 1))
        assert fresh.namespaces() == [] and counting.statements == []
    finally:
        lake.execute("ROLLBACK")
    assert catalog.columns("shop", "people") == ["id", "name"]
