"""Placeholders of another paramstyle are told the driver's: qmark, ``?``.

``%s`` (format, psycopg's), ``%(name)s`` (pyformat) and ``:name`` (named,
sqlite3's) used to meet sqlglot's internals ("Required keyword: 'this'
missing for <class '...Mod'>") and a hint about reserved words.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi import errors

HINT = "hint: cursor.execute(\"SELECT * FROM t WHERE id = ? AND name = ?\", (42, 'x'))"


@pytest.fixture
def conn() -> Iterator[Any]:
    with trinity_dbapi.connect("memory://paramstyle", autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t (id INT, name VARCHAR)")
        yield conn


@pytest.mark.parametrize(
    ("sql", "params", "placeholder", "style", "column"),
    [
        ("SELECT * FROM t WHERE id = %s", (1,), "%s", "format", 28),
        ("SELECT * FROM t WHERE id = %(id)s", (1,), "%(id)s", "pyformat", 28),
        ("SELECT * FROM t WHERE id = :id", (1,), ":id", "named", 28),
        ("INSERT INTO t VALUES (%s, %s)", (1, "a"), "%s", "format", 23),
        ("UPDATE t SET name = :name WHERE id = 1", ("a",), ":name", "named", 21),
    ],
)
def test_a_placeholder_of_another_paramstyle_names_the_paramstyle(
    conn: Any, sql: str, params: Any, placeholder: str, style: str, column: int
) -> None:
    with pytest.raises(errors.SQLSyntaxError) as info:
        conn.execute(sql, params)
    error = info.value
    first, snippet, carets, hint = str(error).split("\n")
    assert first == (
        f"SQL syntax error at line 1, column {column} near {placeholder!r}: {placeholder} is a "
        f"placeholder of the {style} paramstyle, but paramstyle is qmark: write ? for each value "
        "and pass the values as a list or tuple, in the order of the ?s"
    )
    assert snippet == f"  {sql}"
    assert carets == " " * (column + 1) + "^" * len(placeholder)
    assert hint == HINT
    assert (error.line, error.column, error.text) == (1, column, placeholder)
    for internal in ("Required keyword", "sqlglot", "reserved"):
        assert internal not in str(error)


def test_a_dict_of_parameters_names_the_paramstyle(conn: Any) -> None:
    with pytest.raises(errors.ProgrammingError) as info:
        conn.execute("SELECT * FROM t WHERE id = %(id)s", {"id": 1})
    assert str(info.value) == (
        "parameters are a dict, but paramstyle is qmark: write ? placeholders and pass the "
        "values as a list or tuple, in order"
    )


@pytest.mark.parametrize(
    ("sql", "rows"),
    [
        ("SELECT '%s', '%(a)s', ':a'", [("%s", "%(a)s", ":a")]),  # in strings: text
        ('SELECT 7 % 2 AS "%s"', [(1,)]),  # modulo, and a quoted name
        ("SELECT 1::INT -- %s\n", [(1,)]),  # a cast; a comment
        ("SELECT [1, 2, 3][:2]", [([1, 2],)]),  # a slice is no :name
    ],
)
def test_text_that_only_looks_like_a_placeholder_runs(conn: Any, sql: str, rows: Any) -> None:
    assert conn.execute(sql).fetchall() == rows


def test_a_syntax_error_without_such_placeholders_keeps_its_message(conn: Any) -> None:
    with pytest.raises(errors.SQLSyntaxError) as info:
        conn.execute("SELECT * FROM t WHERE id = 7 %")
    assert "paramstyle" not in str(info.value)
