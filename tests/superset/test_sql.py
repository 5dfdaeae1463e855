"""Superset's SQL parser on the trinity dialect: parse, mutating or not, limit, format.

Superset parses every SQL Lab statement with sqlglot in the dialect its
``SQLGLOT_DIALECTS`` names for the engine (``SupersetTrinity``, registered by
``trinity_dbapi.superset``; it also parses the bare clauses Superset checks), refuses a mutating one where the database does
not allow DML (``is_mutating``: the statement holds an ``exp.Insert``,
``exp.Update``, ``exp.Delete``, ``exp.Merge``, ``exp.Create``, ``exp.Drop``,
``exp.TruncateTable`` or ``exp.Alter``), sets a read-only statement's limit
(``set_limit_value``: the ``limit`` arg of the root node) and prints it back
pretty (``format``) to run it.

Superset is not installed here, so the first tests do exactly those steps
with sqlglot and run the printed SQL through the driver. The last test runs
Superset's own ``superset/sql/parse.py`` when its source can be found
(``SUPERSET_SOURCE``: the ``superset`` package folder, or the end-to-end
test's cached virtualenv, tests/superset/e2e/venv.py), with stand-ins for the two Superset modules
it imports that are not about SQL (its exception classes, and nothing else).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

import trinity_dbapi
from tests.superset.e2e.venv import venv_path
from trinity_dbapi.sql import expressions as nodes
from trinity_dbapi.sql.dialect import Trinity
from trinity_dbapi.superset import host
from trinity_dbapi.superset.dialect import SupersetTrinity

#: Superset 6.1's ``SQLStatement.is_mutating`` node classes (superset/sql/parse.py).
MUTATING_NODES = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Create,
    exp.Drop,
    exp.TruncateTable,
    exp.Alter,
)

#: Statement -> whether it mutates: every statement kind of the grammar.
STATEMENTS: dict[str, bool] = {
    "SELECT id FROM sales.orders FOR SYSTEM_VERSION AS OF 3 ORDER BY id": False,
    "SELECT id FROM sales.orders ORDER BY id": False,
    "WITH o AS (SELECT id FROM sales.orders) SELECT id FROM o ORDER BY id": False,
    "SHOW TABLES IN sales": False,
    "SHOW NAMESPACES": False,
    "SHOW SCHEMAS LIKE 's%'": False,
    "DESCRIBE TABLE sales.orders": False,
    "DESCRIBE NAMESPACE sales": False,
    "SHOW CREATE TABLE sales.orders": False,
    "EXPLAIN SELECT id FROM sales.orders": False,
    "USE sales": False,
    "BEGIN": False,
    "COMMIT": False,
    "ROLLBACK": False,
    "SET TRANSACTION ISOLATION LEVEL SNAPSHOT": False,
    "SET COMMIT MESSAGE 'nightly load'": False,
    "SHOW BRANCHES": False,
    "SHOW TAGS": False,
    "USE BRANCH main": False,  # the session's branch, as USE sets its namespace
    "CREATE NAMESPACE more": True,
    "CREATE SCHEMA IF NOT EXISTS more COMMENT 'x'": True,
    "DROP NAMESPACE more CASCADE": True,
    "ALTER NAMESPACE sales SET PROPERTIES (owner = 'ana')": True,
    "CREATE TABLE sales.t (x INT4) PARTITIONED BY (x)": True,
    "CREATE TABLE sales.t2 AS SELECT id FROM sales.orders": True,
    "DROP TABLE IF EXISTS sales.t": True,
    "ALTER TABLE sales.orders ADD COLUMN note VARCHAR": True,
    "ALTER TABLE sales.orders RENAME TO sales.o2": True,
    "TRUNCATE TABLE sales.orders": True,
    "CREATE INDEX by_id ON sales.orders (id)": True,
    "DROP INDEX by_id ON sales.orders": True,
    "INSERT INTO sales.orders VALUES (9, DATE '2024-01-09')": True,
    "UPDATE sales.orders SET id = 1 WHERE id = 2": True,
    "DELETE FROM sales.orders WHERE id = 1": True,
    "MERGE INTO sales.orders AS o USING (VALUES (1)) AS s(id) ON o.id = s.id "
    "WHEN MATCHED THEN DELETE": True,
    "UPDATE sales.orders SET id = s.id FROM (VALUES (1)) AS s(id) WHERE orders.id = 2": True,
    "CALL system.compact()": True,
    "CALL system.check_integrity()": True,  # read-only, but CALL is refused as a whole
    "SAVE TRANSACTION": True,  # writes the transaction down
    "LOAD TRANSACTION '0f8fad5b-d9cb-469f-a165-70867728950e'": True,  # COMMIT would commit it
    "CREATE BRANCH dev": True,  # ref changes commit to main's definition
    "CREATE BRANCH IF NOT EXISTS dev FROM VERSION 3": True,
    "DROP BRANCH IF EXISTS dev": True,
    "MERGE BRANCH dev INTO main": True,
    "CREATE TAG eod FROM BRANCH main": True,
    "DROP TAG eod": True,
}

#: The read-only statements whose result a LIMIT cuts, and their rows without it.
LIMITED = {
    "SELECT id FROM sales.orders FOR SYSTEM_VERSION AS OF 3 ORDER BY id": [(1,), (2,)],
    "SELECT id FROM sales.orders ORDER BY id": [(1,), (2,), (3,)],
    "WITH o AS (SELECT id FROM sales.orders) SELECT id FROM o ORDER BY id": [(1,), (2,), (3,)],
}


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``sales.orders``: two rows at version 3, three now."""
    path = str(tmp_path_factory.mktemp("superset-sql") / "lake")
    with trinity_dbapi.connect(path, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE sales")  # version 1
        conn.execute("CREATE TABLE sales.orders (id INT8, day DATE)")  # version 2
        conn.execute(
            "INSERT INTO sales.orders VALUES (1, DATE '2024-01-01'), (2, DATE '2024-01-02')"
        )
        conn.execute("INSERT INTO sales.orders VALUES (3, DATE '2024-01-03')")  # version 4
        versions = conn.execute("SELECT max(version) FROM system.versions").fetchone()
    assert versions == (4,)
    yield path


def _rows(path: str, sql: str) -> list[tuple[Any, ...]]:
    with trinity_dbapi.connect(path, read_only=True) as conn:
        return conn.execute(sql).fetchall()


def _is_mutating(tree: exp.Expression) -> bool:
    """What Superset's ``is_mutating`` decides for a tree of the trinity dialect."""
    return any(tree.find(node) for node in MUTATING_NODES)


def _limited_and_formatted(tree: exp.Expression, limit: int) -> str:
    """Superset's ``set_limit_value`` (FORCE_LIMIT) and ``format()``, step for step."""
    tree.args["limit"] = exp.Limit(expression=exp.Literal(this=str(limit), is_string=False))
    return Dialect.get_or_raise(SupersetTrinity).generate(
        tree, copy=True, comments=True, pretty=True
    )


@pytest.mark.parametrize("sql", list(STATEMENTS))
def test_mutating_contract(sql: str) -> None:
    (tree,) = sqlglot.parse(sql, dialect=SupersetTrinity)
    assert _is_mutating(tree) is STATEMENTS[sql]
    # The same tree as the driver's dialect parses.
    assert tree == sqlglot.parse_one(sql, dialect=Trinity)


def test_the_lakehouse_statements_are_sqlglot_kinds() -> None:
    kinds = {
        nodes.CreateNamespace: exp.Create,
        nodes.CreateTable: exp.Create,
        nodes.CreateTableAs: exp.Create,
        nodes.CreateIndex: exp.Create,
        nodes.DropNamespace: exp.Drop,
        nodes.DropTable: exp.Drop,
        nodes.DropIndex: exp.Drop,
        nodes.AlterNamespace: exp.Alter,
        nodes.AlterTable: exp.Alter,
        nodes.Call: exp.Alter,
        nodes.SaveTransaction: exp.Alter,
        nodes.LoadTransaction: exp.Alter,
        nodes.RefChange: exp.Alter,
        nodes.CreateTableClone: exp.Create,
        nodes.Truncate: exp.TruncateTable,
        nodes.DescribeTable: exp.Describe,
        nodes.ShowCreateTable: exp.Describe,
    }
    assert {node: node.__mro__[1] for node in kinds} == kinds
    # Keys (and so the generator's <key>_sql dispatch) stay the class names.
    assert {node.key for node in kinds} == {node.__name__.lower() for node in kinds}
    read_only = set(nodes.NODES) - set(kinds)
    assert not [node for node in read_only if issubclass(node, MUTATING_NODES)]


@pytest.mark.parametrize("sql", [sql for sql, mutating in STATEMENTS.items() if not mutating])
def test_read_only_statements_take_a_limit_and_print_back(lake: str, sql: str) -> None:
    """A limited, pretty-printed statement parses again to the same tree and runs."""
    (tree,) = sqlglot.parse(sql, dialect=SupersetTrinity)
    printed = _limited_and_formatted(tree, 2)
    (again,) = sqlglot.parse(printed, dialect=Trinity)
    assert again.sql(dialect=Trinity) == tree.sql(dialect=Trinity)
    if sql in LIMITED:
        assert _rows(lake, printed) == LIMITED[sql][:2]
        assert _rows(lake, sql) == LIMITED[sql]
    elif not sql.startswith(("USE", "BEGIN", "COMMIT", "ROLLBACK", "SET")):
        # SHOW and DESCRIBE have no LIMIT: it is dropped, and fetch_data cuts the rows.
        assert _rows(lake, printed) == _rows(lake, sql)


def test_time_travel_text_survives_formatting(lake: str) -> None:
    sql = "SELECT count(*) FROM sales.orders FOR SYSTEM_VERSION AS OF 3"
    (tree,) = sqlglot.parse(sql, dialect=SupersetTrinity)
    printed = _limited_and_formatted(tree, 1001)
    assert printed == "SELECT\n  COUNT(*)\nFROM sales.orders FOR SYSTEM_VERSION AS OF 3\nLIMIT 1001"
    assert _rows(lake, printed) == [(2,)]
    # The generic dialect, which Superset would use unregistered, cannot parse it.
    with pytest.raises(sqlglot.errors.ParseError):
        sqlglot.parse(sql)


#: Clauses Superset checks on their own (SQL metrics, custom WHERE and HAVING,
#: row-level security) -> how they print back.
CLAUSES = {
    "SUM(id)": "SUM(id)",
    "COUNT(*)": "COUNT(*)",
    "id": "id",
    '"id"': '"id"',
    "id > 1 AND day = DATE '2024-01-02'": "id > 1 AND day = DATE '2024-01-02'",
    "day IN (DATE '2024-01-01', DATE '2024-01-03')": "day IN (DATE '2024-01-01', DATE '2024-01-03')",
    "day::VARCHAR": "CAST(day AS TEXT)",
    "CASE WHEN id > 1 THEN 'big' END": "CASE WHEN id > 1 THEN 'big' END",
    "id / 2": "id / 2",
    "id IN (SELECT max(id) FROM sales.orders)": "id IN (SELECT MAX(id) FROM sales.orders)",
}


@pytest.mark.parametrize("clause", list(CLAUSES))
def test_clauses_parse_on_their_own(lake: str, clause: str) -> None:
    """What Superset's sanitize_clause does: parse as a statement, print back."""
    (tree,) = sqlglot.parse(clause, dialect=SupersetTrinity)
    assert not _is_mutating(tree)
    printed = Dialect.get_or_raise(SupersetTrinity).generate(tree, copy=True, pretty=False)
    assert printed == CLAUSES[clause]
    # The printed clause means what the original does, in a query.
    query = "SELECT {} FROM sales.orders"
    assert sorted(_rows(lake, query.format(printed)), key=repr) == sorted(
        _rows(lake, query.format(clause)), key=repr
    )
    # The driver's dialect takes statements only.
    with pytest.raises(sqlglot.errors.ParseError, match="Expected a statement"):
        sqlglot.parse(clause, dialect=Trinity)


def test_unsupported_statements_are_parse_errors_for_superset() -> None:
    with pytest.raises(
        sqlglot.errors.ParseError, match="The COPY statement is not supported"
    ) as caught:
        sqlglot.parse("COPY sales.orders TO 'x.csv'", dialect=SupersetTrinity)
    assert caught.value.errors[0]["line"] == 1
    assert caught.value.errors[0]["highlight"] == "COPY"
    assert isinstance(caught.value.__cause__, trinity_dbapi.NotSupportedError)
    with pytest.raises(sqlglot.errors.ParseError):
        sqlglot.parse("id +", dialect=SupersetTrinity)


def test_register_sqlglot_dialect_with_a_stand_in_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("superset", "superset.sql"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    parse = types.ModuleType("superset.sql.parse")
    parse.SQLGLOT_DIALECTS = {"duckdb": "duckdb"}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "superset.sql.parse", parse)
    assert host.register_sqlglot_dialect() is True
    assert {"duckdb": "duckdb", "trinity": SupersetTrinity} == parse.SQLGLOT_DIALECTS  # type: ignore[attr-defined]
    # A deployment's own choice is kept.
    parse.SQLGLOT_DIALECTS = {"trinity": "duckdb"}  # type: ignore[attr-defined]
    assert host.register_sqlglot_dialect() is True
    assert parse.SQLGLOT_DIALECTS == {"trinity": "duckdb"}  # type: ignore[attr-defined]


def test_register_sqlglot_dialect_without_superset() -> None:
    if importlib.util.find_spec("superset") is None:
        assert host.register_sqlglot_dialect() is False


# -- Superset's own parser, when its source is at hand -------------------------------------


def _superset_source() -> Path | None:
    """The ``superset`` package folder: $SUPERSET_SOURCE, else the e2e test's virtualenv."""
    candidates = [Path(os.environ["SUPERSET_SOURCE"])] if os.environ.get("SUPERSET_SOURCE") else []
    # The end-to-end test's cached virtualenv (tests/superset/e2e/venv.py).
    candidates += sorted(venv_path().glob("lib/python3*/site-packages/superset"))
    return next((path for path in candidates if (path / "sql" / "parse.py").is_file()), None)


class _SupersetParseError(Exception):
    """Stands in for ``superset.exceptions.SupersetParseError``."""

    def __init__(self, sql: str, engine: str | None = None, **kwargs: Any) -> None:
        super().__init__(kwargs.get("message") or sql)


def _load(name: str, path: Path, monkeypatch: pytest.MonkeyPatch, package: bool = False) -> Any:
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[str(path.parent)] if package else None
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def superset_parse(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Superset's superset/sql/parse.py, imported from its source with its SQL dialects."""
    source = _superset_source()
    if source is None:
        pytest.skip("Superset's source is not here: set SUPERSET_SOURCE to its package folder")
    pytest.importorskip("jinja2")
    for name in ("superset", "superset.sql"):
        stub = types.ModuleType(name)
        stub.__path__ = []  # a package, so its submodules can be imported
        monkeypatch.setitem(sys.modules, name, stub)
    errors = types.ModuleType("superset.exceptions")
    errors.SupersetParseError = _SupersetParseError  # type: ignore[attr-defined]
    errors.QueryClauseValidationException = type("QueryClauseValidationException", (Exception,), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "superset.exceptions", errors)
    _load("superset.sql.dialects", source / "sql" / "dialects" / "__init__.py", monkeypatch, True)
    parse = _load("superset.sql.parse", source / "sql" / "parse.py", monkeypatch)
    assert host.register_sqlglot_dialect() is True
    return parse


def test_superset_parser_on_every_statement(lake: str, superset_parse: Any) -> None:
    assert superset_parse.SQLGLOT_DIALECTS["trinity"] is SupersetTrinity
    for sql, mutating in STATEMENTS.items():
        script = superset_parse.SQLScript(sql, "trinity")
        assert script.has_mutation() is mutating, sql
        if mutating:
            continue
        (statement,) = script.statements
        statement.set_limit_value(2, superset_parse.LimitMethod.FORCE_LIMIT)
        if sql in LIMITED:
            assert _rows(lake, script.format()) == LIMITED[sql][:2], sql
    time_travel = "SELECT count(*) FROM sales.orders FOR SYSTEM_VERSION AS OF 3"
    script = superset_parse.SQLScript(time_travel, "trinity")
    (statement,) = script.statements
    assert {(t.schema, t.table) for t in statement.tables} == {("sales", "orders")}
    assert _rows(lake, script.optimize().format()) == [(2,)]
    # DESCRIBE and SHOW CREATE TABLE name their table, for Superset's access checks.
    for sql in ("DESCRIBE TABLE sales.orders", "SHOW CREATE TABLE sales.orders"):
        (statement,) = superset_parse.SQLScript(sql, "trinity").statements
        assert {(t.schema, t.table) for t in statement.tables} == {("sales", "orders")}, sql
    assert _rows(
        lake, superset_parse.SQLScript("SELECT DATE '2024-01-02' AS d", "trinity").format()
    ) == [(date(2024, 1, 2),)]
    # Clauses: SQL metrics, custom filters (sanitize_clause), and sub-queries in them.
    for clause, printed in CLAUSES.items():
        assert superset_parse.sanitize_clause(clause, "trinity") == printed, clause
        statement = superset_parse.SQLStatement(clause, "trinity")
        assert statement.has_subquery() is ("SELECT" in clause), clause
    with pytest.raises(_SupersetParseError):
        superset_parse.SQLScript("COPY sales.orders TO 'x.csv'", "trinity")
