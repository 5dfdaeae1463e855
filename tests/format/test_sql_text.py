"""SQL quoting: what a quoted name or string reads back as, in DuckDB and the dialect."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

import trinity_dbapi.sql.dialect  # noqa: F401  (registers the trinity dialect)
from trinity_dbapi.format.sql_text import qualified_name, quote_identifier, quote_string

#: Any text, NUL, quotes, backslashes, newlines and non-ASCII letters included
#: (hypothesis leaves out lone surrogates, which no UTF-8 text holds).
TEXT = st.text()
#: DuckDB refuses the empty quoted identifier (``""``), so names have a character.
NAMES = st.text(min_size=1)
_SETTINGS = settings(max_examples=200, deadline=None)


@pytest.fixture(scope="module")
def duck() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    yield con
    con.close()


@pytest.mark.parametrize(
    ("text", "identifier", "string"),
    [
        ("plain", '"plain"', "'plain'"),
        ('a"b', '"a""b"', "'a\"b'"),
        ("it's", '"it\'s"', "'it''s'"),
        ("", '""', "''"),
        ("a\\b", '"a\\b"', "'a\\b'"),
        ("nul\x00here", '"nul\x00here"', "'nul\x00here'"),
    ],
)
def test_quoting_doubles_its_own_quote_and_nothing_else(
    text: str, identifier: str, string: str
) -> None:
    assert quote_identifier(text) == identifier
    assert quote_string(text) == string


def test_a_qualified_name_quotes_each_part() -> None:
    assert qualified_name("db", 'my "s"', "t.x") == '"db"."my ""s"""."t.x"'


@_SETTINGS
@given(TEXT)
def test_a_quoted_string_reads_back_in_duckdb(duck: duckdb.DuckDBPyConnection, text: str) -> None:
    assert duck.execute(f"SELECT {quote_string(text)}").fetchall() == [(text,)]


@_SETTINGS
@given(NAMES)
def test_a_quoted_identifier_names_the_column_in_duckdb(
    duck: duckdb.DuckDBPyConnection, name: str
) -> None:
    duck.execute(f"SELECT 1 AS {quote_identifier(name)}")
    assert duck.description is not None
    assert duck.description[0][0] == name


@_SETTINGS
@given(TEXT, NAMES)
def test_both_read_back_in_the_trinity_dialect(text: str, name: str) -> None:
    select = sqlglot.parse_one(
        f"SELECT {quote_string(text)} AS {quote_identifier(name)}", read="trinity"
    )
    (alias,) = select.expressions
    assert isinstance(alias, exp.Alias)
    assert alias.this.this == text
    assert alias.alias == name
