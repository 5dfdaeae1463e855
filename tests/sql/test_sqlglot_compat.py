"""sql/compat.py: the symbols it picks, and the sqlglot contracts it relies on.

These run on every sqlglot CI tests (28.10.1, the oldest Superset 6.1
admits, and the newest), so each asserts what must hold on the installed
release, whichever it is.
"""

from __future__ import annotations

import configparser
import importlib.util
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import sqlglot
from packaging.requirements import Requirement
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.errors import ErrorLevel, ParseError
from sqlglot.tokens import Token, TokenType

from trinity_dbapi.errors import SQLSyntaxError
from trinity_dbapi.sql import compat
from trinity_dbapi.sql.dialect import Trinity
from trinity_dbapi.sql.statements import parse

ROOT = Path(__file__).resolve().parents[2]
NEWEST_API = importlib.util.find_spec("sqlglot.parsers") is not None


# -- the symbols -------------------------------------------------------------------------------


def test_the_duckdb_classes_are_the_installed_sqlglots() -> None:
    if NEWEST_API:
        from sqlglot.generators.duckdb import DuckDBGenerator
        from sqlglot.parsers.duckdb import DuckDBParser

        assert issubclass(compat.DuckDBGenerator, DuckDBGenerator)
        assert issubclass(compat.DuckDBParser, DuckDBParser)
    assert issubclass(compat.DuckDBGenerator, DuckDB.Generator)
    assert issubclass(compat.DuckDBParser, DuckDB.Parser)
    assert issubclass(Trinity.Parser, compat.DuckDBParser)
    assert issubclass(Trinity.Generator, compat.DuckDBGenerator)


def test_the_generator_is_adapted_only_where_sqlglot_lacks_the_newest_printing() -> None:
    own = DuckDB.Generator
    needed = compat.prints_arrow_lambdas(own) or not {"at", "map"} <= set(own.RESERVED_KEYWORDS)
    assert (compat.DuckDBGenerator is not own) == needed
    assert not compat.prints_arrow_lambdas(compat.DuckDBGenerator)
    assert compat.lambda_text(compat.DuckDBGenerator) == "LAMBDA x : x"


def test_the_parser_is_adapted_only_where_sqlglot_lacks_the_newest_behaviour() -> None:
    needed = compat.expression_takes_class(DuckDB.Parser) or not compat.END_TOKEN_IS_FALSY
    assert (compat.DuckDBParser is not DuckDB.Parser) == needed
    assert (compat.END_OF_INPUT is None) == compat.END_TOKEN_IS_FALSY
    if not needed:  # the newest sqlglot: its own class, untouched
        assert compat.DuckDBParser is DuckDB.Parser


def test_dtype_is_the_enum_of_type_names() -> None:
    assert compat.DType is exp.DataType.Type
    assert compat.DType is getattr(exp, "DType", compat.DType)
    assert exp.DataType.build("TIMESTAMPTZ").this is compat.DType.TIMESTAMPTZ
    assert parse("SELECT CAST(? AS DATE)")[0].expression.find(exp.Cast).to.this == compat.DType.DATE


def test_expr_is_the_base_of_every_node() -> None:
    assert compat.Expr is getattr(exp, "Expr", exp.Expression)
    assert issubclass(exp.Expression, compat.Expr)
    assert isinstance(sqlglot.parse_one("SELECT 1", read="trinity"), compat.Expr)


def test_sqlglot_modules_are_left_as_they_are() -> None:
    # No monkeypatching: importing the dialect adds no name to sqlglot's modules or classes.
    code = (
        "import sqlglot.expressions as e, sqlglot.parser as p\n"
        "def names(): return set(dir(e)), set(dir(e.Expression)), set(dir(p.Parser))\n"
        "before = names()\n"
        "import trinity_dbapi.sql.statements\n"
        "assert names() == before, [sorted(a - b) for a, b in zip(names(), before)]\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr


# -- the contracts the shim relies on ----------------------------------------------------------


def test_meta_get_reads_without_allocating() -> None:
    node = exp.column("a")
    assert compat.meta_get(node, "k") is None
    assert compat.meta_get(node, "k", 5) == 5
    assert node._meta is None  # still not allocated
    node.meta["k"] = 1
    assert compat.meta_get(node, "k") == 1
    assert compat.meta_get(node, "other", "d") == "d"


def test_expression_takes_a_built_node() -> None:
    parser = compat.DuckDBParser(error_level=ErrorLevel.IMMEDIATE)
    token = Token(TokenType.VAR, "x", line=2, col=3, start=7, end=7)
    node = exp.Literal.string("abc")
    built = parser.expression(node, token)
    assert built is node
    assert built.this == "abc"  # not the token's text
    assert {k: built.meta[k] for k in ("line", "col", "start", "end")} == {
        "line": 2,
        "col": 3,
        "start": 7,
        "end": 7,
    }
    assert parser.expression(exp.Null(), comments=["c"]).comments == ["c"]
    with pytest.raises(ParseError, match="Required keyword: 'to' missing"):
        parser.expression(exp.Cast(this=exp.Literal.number(1)))


def test_the_token_past_the_end_is_a_falsy_token() -> None:
    dialect = Trinity()
    parser = dialect.parser()
    (tree,) = parser.parse(dialect.tokenize("SELECT 1"), "SELECT 1")
    assert tree.sql(dialect="trinity") == "SELECT 1"
    for token in (parser._curr, parser._next):
        assert isinstance(token, Token)
        assert not token
        assert token.token_type not in (TokenType.FARROW, TokenType.DOT, TokenType.IDENTIFIER)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CALL system.compact(", "Expected a literal for a procedure argument"),
        ("CALL system.compact(a =>", "Expected a literal for argument a"),
        ("CREATE SCHEMA", "Expected a namespace name but got the end of the statement"),
        ("DESCRIBE", "Expected a table name but got the end of the statement"),
        ("SELECT * FROM", "Expected table name but got the end of the statement"),
        ("BEGIN ISOLATION LEVEL", "Expected SERIALIZABLE or SNAPSHOT but got the end"),
        ("CREATE INDEX i ON t (", "Expected the indexed column but got the end"),
    ],
)
def test_statements_cut_short_are_syntax_errors(sql: str, message: str) -> None:
    # Each reads the token past the end (on 28.10 that was None: an internal error).
    with pytest.raises(SQLSyntaxError, match=message):
        parse(sql)


def test_time_travel_words_are_tokens_of_their_own() -> None:
    tokenizer = Trinity.Tokenizer
    assert not [word for word in tokenizer.KEYWORDS if word.startswith("FOR ")]
    texts = [token.text for token in Trinity().tokenize("SELECT * FROM t FOR VERSION AS OF 3")]
    assert texts == ["SELECT", "*", "FROM", "t", "FOR", "VERSION", "AS", "OF", "3"]
    for spelling, value in [("VERSION", "3"), ("TIMESTAMP", "'2026-01-01 00:00:00'")]:
        sql = f"SELECT * FROM t FOR {spelling} AS OF {value}"
        version = sqlglot.parse_one(sql, read="trinity").find(exp.Version)
        assert version is not None and version.this == spelling
        assert version.expression.sql(dialect="trinity") == value


# -- DuckDB's reserved words --------------------------------------------------------------------


def test_reserved_words_print_quoted_and_run_in_duckdb() -> None:
    tree = sqlglot.parse_one('SELECT min(at), struct, "left", asof FROM t', read="trinity")
    assert tree.sql(dialect="trinity") == 'SELECT MIN("at"), "struct", "left", "asof" FROM t'
    text = compat.duckdb_sql(tree)
    assert text == 'SELECT MIN("at"), "struct", "left", "asof" FROM t'
    duck = duckdb.connect()
    duck.execute('CREATE TABLE t ("at" INT, "struct" INT, "left" INT, "asof" INT)')
    duck.execute("INSERT INTO t VALUES (3, 1, 2, 4), (1, 1, 2, 4)")
    assert duck.execute(text + " GROUP BY ALL").fetchall() == [(1, 1, 2, 4)]


def test_every_reserved_word_is_a_name_duckdb_takes_quoted() -> None:
    duck = duckdb.connect()
    words = compat.DuckDBGenerator.RESERVED_KEYWORDS
    assert {"at", "map", "left", "group", "struct", "select"} <= words
    for word in sorted(words):
        tree = exp.select(exp.column(word)).from_(
            exp.Subquery(this=exp.select(exp.alias_("1", word, quoted=True)), alias="s")
        )
        text = compat.duckdb_sql(tree)
        assert f'"{word}"' in text, text
        assert duck.execute(text).fetchall() == [(1,)], text


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT list_transform([1, 2], x -> x + 1) AS l",
        "SELECT list_transform([1, 2], lambda x: x + 1) AS l",
        "SELECT list_transform([1, 2], LAMBDA x : x + 1) AS l",
    ],
)
def test_lambdas_print_in_the_form_duckdb_runs(sql: str) -> None:
    (parsed,) = parse(sql)
    expected = "SELECT LIST_TRANSFORM([1, 2], LAMBDA x : x + 1) AS l"
    assert parsed.expression.sql(dialect="trinity") == expected
    text = compat.duckdb_sql(parsed.expression)
    assert text == expected
    assert duckdb.connect().execute(text).fetchall() == [([2, 3],)]


def test_duckdb_sql_keeps_explain_and_placeholders() -> None:
    (parsed,) = parse("EXPLAIN SELECT ? AS at")
    text = compat.duckdb_sql(parsed.expression)
    assert text == 'EXPLAIN SELECT $1 AS "at"'
    rows = duckdb.connect().execute(text, [1]).fetchall()
    assert "PROJECTION" in str(rows).upper()


# -- the declared range ----------------------------------------------------------------------


def test_install_requires_admits_the_oldest_and_the_newest_sqlglot() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    lines = config["options"]["install_requires"].split("\n")
    (requirement,) = [Requirement(line) for line in lines if line.strip().startswith("sqlglot")]
    for version in ("28.10.0", "28.10.1", "30.30.0", sqlglot.__version__):
        assert requirement.specifier.contains(version), version
    assert not requirement.specifier.contains("28.9.0")
