"""The trinity sqlglot dialect: golden corpora, grammar and docs in sync, errors."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

import duckdb
import pytest
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

from trinity_dbapi.errors import SQLSyntaxError, UnsupportedStatementError
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql.dialect import Trinity
from trinity_dbapi.sql.statements import parse
from trinity_dbapi.sql.types_sql import CANONICAL_NAMES

ROOT = Path(__file__).resolve().parents[2]
GRAMMAR = ROOT / "grammar"
IDENTITY = [line for line in (GRAMMAR / "identity.sql").read_text().splitlines() if line]
NORMALIZE = [
    tuple(line.split(" -> ", 1))
    for line in (GRAMMAR / "normalize.sql").read_text().splitlines()
    if line
]
EBNF = (GRAMMAR / "trinity.ebnf").read_text()
PRODUCTIONS = re.findall(r"^(\w+) ::= .*$", EBNF, re.MULTILINE)
PRODUCTION_LINES = re.findall(r"^\w+ ::= .*$", EBNF, re.MULTILINE)
DOCS = (ROOT / "docs" / "sql.md").read_text()


def _blocks(language: str) -> list[str]:
    blocks = re.findall(rf"```{language}\n(.*?)```", DOCS, re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line]


def validate_identity(sql: str) -> exp.Expr:
    """Parse ``sql`` and check that it prints back unchanged (sqlglot's test helper)."""
    expression = sqlglot.parse_one(sql, read="trinity")
    assert expression.sql(dialect="trinity") == sql
    return expression


# -- registration ------------------------------------------------------------------------


def test_dialect_is_registered_by_import_and_entry_point() -> None:
    assert type(Dialect.get_or_raise("trinity")) is Trinity
    (entry,) = entry_points(group="sqlglot.dialects", name="trinity")
    assert entry.load() is Trinity


# -- golden corpora ------------------------------------------------------------------------


def test_identity_corpus_is_large_and_unique() -> None:
    assert len(IDENTITY) >= 120
    assert len(set(IDENTITY)) == len(IDENTITY)


@pytest.mark.parametrize("sql", IDENTITY)
def test_identity_corpus_round_trips(sql: str) -> None:
    expression = validate_identity(sql)
    assert not expression.find(exp.Command)
    (parsed,) = parse(sql)
    assert parsed.sql == sql
    assert parsed.param_count == sql.count("?")


def test_identity_corpus_covers_every_statement_and_type() -> None:
    kinds = {type(sqlglot.parse_one(sql, read="trinity")) for sql in IDENTITY}
    statements = set(texp.NODES) - {
        texp.PropertyItem,
        texp.ColumnDefinition,
        texp.AddColumn,
        texp.DropColumn,
        texp.RenameColumnTo,
        texp.RenameTable,
        texp.SetProperties,
        texp.UnsetProperties,
        texp.AlterColumnType,
    }
    queries = {exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values}
    dml = {exp.Insert, exp.Update, exp.Delete, exp.Commit, exp.Rollback}
    assert statements | queries | dml <= kinds
    corpus = "\n".join(IDENTITY)
    for name in CANONICAL_NAMES.values():
        assert re.search(rf"\b{name}\b", corpus), name
    for clause in ("SYSTEM_VERSION", "VERSION", "SYSTEM_TIME", "TIMESTAMP"):
        assert f"FOR {clause} AS OF" in corpus
    actions = ("ADD COLUMN", "DROP COLUMN", "RENAME COLUMN", "RENAME TO", "SET PROP", "UNSET")
    for action in (*actions, "ALTER COLUMN"):
        assert "ALTER TABLE" in corpus and action in corpus


@pytest.mark.parametrize(("sql", "canonical"), NORMALIZE)
def test_normalize_corpus(sql: str, canonical: str) -> None:
    assert sqlglot.parse_one(sql, read="trinity").sql(dialect="trinity") == canonical
    validate_identity(canonical)


def test_queries_print_as_duckdb_sql_that_duckdb_parses() -> None:
    duck = duckdb.connect()
    for sql in IDENTITY:
        expression = sqlglot.parse_one(sql, read="trinity")
        if isinstance(expression, texp.CreateTableAs):
            expression = expression.expression  # the executor runs the query
        if not isinstance(expression, (exp.Query, exp.Values, exp.DML, texp.Explain)):
            continue
        for table in expression.find_all(exp.Table):
            table.set("version", None)  # the executor replaces time-travelling tables
        assert duck.extract_statements(expression.sql(dialect="duckdb")), sql


def test_placeholders_bind_in_duckdb() -> None:
    (parsed,) = parse("SELECT CAST(? AS INT) + 1 AS a, ?::VARCHAR AS b WHERE ? > 0")
    sql = parsed.expression.sql(dialect="duckdb")
    assert sql == "SELECT CAST($1 AS INT) + 1 AS a, CAST($2 AS TEXT) AS b WHERE $3 > 0"
    assert duckdb.connect().execute(sql, [41, "x", 1]).fetchall() == [(42, "x")]


def test_explain_renders_for_duckdb() -> None:
    (parsed,) = parse("EXPLAIN ANALYZE SELECT ? AS a")
    assert parsed.expression.sql(dialect="duckdb") == "EXPLAIN ANALYZE SELECT $1 AS a"
    assert parsed.expression.sql(dialect="trinity") == "EXPLAIN ANALYZE SELECT ? AS a"
    rows = duckdb.connect().execute(parsed.expression.sql(dialect="duckdb"), [1]).fetchall()
    assert rows and "PROJECTION" in str(rows).upper()


# -- grammar and docs ------------------------------------------------------------------------


def test_grammar_productions_are_unique() -> None:
    assert len(PRODUCTIONS) == len(set(PRODUCTIONS)) > 60


@pytest.mark.parametrize("production", PRODUCTION_LINES)
def test_every_production_is_quoted_in_the_docs(production: str) -> None:
    name = production.split(" ", 1)[0]
    assert re.search(rf"\b{name}\b", DOCS), name
    assert production in DOCS.splitlines(), f"docs/sql.md does not quote: {production}"


def test_docs_syntax_blocks_come_from_the_grammar() -> None:
    lines = _blocks("ebnf")
    assert lines
    for line in lines:
        assert line in PRODUCTION_LINES, f"not a production of grammar/trinity.ebnf: {line}"


def test_docs_examples_are_corpus_lines_that_round_trip() -> None:
    examples = _blocks("sql")
    assert len(examples) >= 30
    for sql in examples:
        assert sql in IDENTITY, f"docs/sql.md example missing from grammar/identity.sql: {sql}"
        validate_identity(sql)


def test_docs_list_every_type_alias() -> None:
    from trinity_dbapi.sql.types_sql import TYPE_NAMES

    table = DOCS.split("### Types", 1)[1].split("### DROP TABLE", 1)[0]
    for name in TYPE_NAMES:
        assert f"`{name}" in table or f" {name}`" in table or f"`{name}`" in table, name


# -- errors ---------------------------------------------------------------------------------

UNSUPPORTED = [
    ("GRANT SELECT ON t TO u", 1, 1),
    ("VACUUM", 1, 1),
    ("VACUUM t", 1, 1),
    ("  CREATE UNIQUE INDEX i ON t (a)", 1, 10),
    ("EXPORT DATABASE 'x'", 1, 1),
    ("PRAGMA version", 1, 1),
    ("ATTACH 'x.db'", 1, 1),
    ("CREATE MATERIALIZED VIEW v AS SELECT 1", 1, 8),
    ("CREATE OR REPLACE TABLE t (a INT4)", 1, 8),
    ("CREATE TEMP TABLE t AS SELECT 1", 1, 8),
    ("DROP MATERIALIZED VIEW v", 1, 6),
    ("ALTER VIEW v RENAME TO w", 1, 7),
    ("ALTER TABLE t ALTER COLUMN a SET DEFAULT 1", 1, 30),
    ("ALTER TABLE t ALTER a DROP NOT NULL", 1, 23),
    ("SHOW FUNCTIONS", 1, 6),
    ("SET memory_limit = '1GB'", 1, 5),
    ("ROLLBACK TO SAVEPOINT s", 1, 13),
    ("CREATE OR REPLACE TABLE t AS SELECT 1", 1, 8),
    ("SELECT 1;\nPIVOT t ON a USING SUM(b)", 2, 1),
]


@pytest.mark.parametrize(("sql", "line", "column"), UNSUPPORTED)
def test_unsupported_statements_raise(sql: str, line: int, column: int) -> None:
    with pytest.raises(UnsupportedStatementError, match=rf"line {line}, column {column}\b"):
        parse(sql)
    with pytest.raises(UnsupportedStatementError):
        sqlglot.parse_one(sql.split(";")[-1], read="trinity")


SYNTAX_ERRORS = [
    ("asdf qwer", 1, 1, "asdf"),
    ("1 + 1", 1, 1, "1"),
    ("SELECT * FROM", 1, 10, "FROM"),
    ("SELECT * FROM t WHERE", 1, 17, "WHERE"),
    ("CREATE TABLE t (a foo)", 1, 19, "foo"),
    ("CREATE TABLE t (a DECIMAL(40, 2))", 1, 27, "40"),
    ("CREATE TABLE t (a DECIMAL(4, 5))", 1, 30, "5"),
    ("CREATE TABLE t (a TIMESTAMP(10))", 1, 29, "10"),
    ("CREATE TABLE t (a FIXED)", 1, 24, ")"),
    ("CREATE TABLE t (a INT4[3])", 1, 24, "3"),
    ("CREATE TABLE t (a INT4 PRIMARY KEY)", 1, 24, "PRIMARY KEY"),
    ("CREATE TABLE a.b.c (x INT4)", 1, 18, "c"),
    ("CREATE NAMESPACE a.b", 1, 19, "."),
    ("CREATE NAMESPACE ?", 1, 18, "?"),
    ("CREATE NAMESPACE ns WITH (a = 1)", 1, 31, "1"),
    ("CREATE foo bar", 1, 8, "foo"),
    ("SELECT $1", 1, 8, "$"),
    ("SELECT * FROM t\n  AS x FOR SYSTEM_VERSION AS OF 3", 2, 8, "FOR"),
    ("SELECT * FROM t FOR SYSTEM_TIME AS OF 3", 1, 39, "3"),
    ("SELECT * FROM t FOR SYSTEM_VERSION AS OF 1.5", 1, 42, "1.5"),
    ("SELECT * FROM t FOR VERSION 3", 1, 29, "3"),
    ("CALL f(a => 1, 2)", 1, 16, "2"),
    ("CALL f(a => 1, a => 2)", 1, 16, "a"),
    ("CALL f(1 + 2)", 1, 10, "+"),
    ("CALL f(x)", 1, 8, "x"),
    ("BEGIN ISOLATION LEVEL READ COMMITTED", 1, 23, "READ"),
    ("SET TRANSACTION ISOLATION LEVEL", 1, 27, "LEVEL"),
    ("SET COMMIT MESSAGE 5", 1, 20, "5"),
    ("SET COMMIT MESSAGE", 1, 12, "MESSAGE"),
    ("EXPLAIN INSERT INTO t VALUES (1)", 1, 9, "INSERT"),
    ("TRUNCATE a, b", 1, 11, ","),
    ("TRUNCATE TABLE t FOR SYSTEM_VERSION AS OF 1", 1, 18, "FOR"),
    ("CREATE INDEX i ON t (a, b)", 1, 25, "b"),
    ("CREATE INDEX i ON t (lower(a))", 1, 27, "("),
    ("CREATE INDEX ON t (a)", 1, 14, "ON"),
    ("CREATE INDEX s.i ON t (a)", 1, 15, "."),
    ("CREATE INDEX i ON t", 1, 19, "t"),
    ("DROP INDEX i", 1, 12, "i"),
    ("CREATE TABLE t", 1, 14, "t"),
    ("CREATE TABLE t COMMENT 'c' SELECT 1", 1, 28, "SELECT"),
    ("CREATE TABLE t AS DELETE FROM u", 1, 19, "DELETE"),
    ("CREATE TABLE t AS 1 + 1", 1, 19, "1"),
    ("SELECT 'unterminated", 1, 8, "'unterminated"),
    ('SELECT "unterminated', 1, 8, '"unterminated'),
]


@pytest.mark.parametrize(("sql", "line", "column", "text"), SYNTAX_ERRORS)
def test_syntax_errors_point_at_the_token(sql: str, line: int, column: int, text: str) -> None:
    with pytest.raises(SQLSyntaxError) as caught:
        parse(sql)
    error = caught.value
    assert (error.line, error.column, error.text) == (line, column, text)
    message = str(error)
    assert message.startswith(f"SQL syntax error at line {line}, column {column}")
    assert "\n  " in message and "^" in message  # the snippet, underlined
    assert "\nhint: " in message
    assert "<Token" not in message


def test_syntax_error_snippet_underlines_the_token() -> None:
    with pytest.raises(SQLSyntaxError) as caught:
        parse("SELECT 1;\nSELECT * FROM t AS x FOR VERSION AS OF 1")
    snippet = str(caught.value).splitlines()[1:3]
    assert snippet == [
        "  SELECT * FROM t AS x FOR VERSION AS OF 1",
        "                       ^^^",
    ]
    assert "before its alias" in str(caught.value)


def test_placeholders_are_numbered_per_statement() -> None:
    first, second = parse("SELECT ?, (SELECT ?) WHERE ? ; INSERT INTO t VALUES (?)")
    numbers = [p.name for p in first.expression.find_all(exp.Placeholder)]
    assert sorted(numbers) == ["1", "2", "3"] and first.param_count == 3
    assert [p.name for p in second.expression.find_all(exp.Placeholder)] == ["1"]
    assert (first.sql, second.sql) == ("SELECT ?, (SELECT ?) WHERE ?", "INSERT INTO t VALUES (?)")


def test_empty_statements_and_comments_are_skipped() -> None:
    assert parse("") == []
    assert parse(" ;; -- nothing\n") == []
    assert [p.sql for p in parse("/* a */ SELECT 1; ; SELECT 2 -- b")] == ["SELECT 1", "SELECT 2"]


def test_keywords_of_other_statements_stay_usable_as_names() -> None:
    validate_identity("SELECT call, explain, start, truncate, index FROM t")
    validate_identity("CREATE TABLE t (date DATE, key INT4, value VARCHAR, comment VARCHAR)")


def test_index_errors_explain_the_single_column_rule() -> None:
    with pytest.raises(SQLSyntaxError, match="exactly one column") as caught:
        parse("CREATE INDEX i ON t (a, b)")
    assert "one index per column" in str(caught.value)
    with pytest.raises(SQLSyntaxError, match="DROP INDEX name ON"):
        parse("DROP INDEX IF EXISTS i")


def test_new_statements_are_real_nodes() -> None:
    nodes = {
        "TRUNCATE t": texp.Truncate,
        "CREATE INDEX i ON t (a)": texp.CreateIndex,
        "DROP INDEX i ON t": texp.DropIndex,
        "CREATE TABLE t AS SELECT 1": texp.CreateTableAs,
    }
    for sql, node in nodes.items():
        expression = sqlglot.parse_one(sql, read="trinity")
        assert type(expression) is node and not expression.find(exp.Command)
    ctas = sqlglot.parse_one("CREATE TABLE t AS FROM u FOR VERSION AS OF 1", read="trinity")
    assert isinstance(ctas.expression, exp.Select)
    assert ctas.expression.find(exp.Version) is not None
