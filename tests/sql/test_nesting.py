"""Deeply nested SQL: BI tools' deep CASE / COALESCE chains run; past the limit, a clear error."""

from __future__ import annotations

import sys
import threading
import uuid
from collections.abc import Callable

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.errors import InternalError, NestingTooDeepError, ProgrammingError
from trinity_dbapi.sql.dialect import Trinity
from trinity_dbapi.sql.nesting import MAX_NESTING_DEPTH, nesting_depth

#: Statements nesting ``depth`` levels of one construct each, by name.
NESTED: dict[str, Callable[[int], str]] = {
    "parentheses": lambda d: "SELECT " + "(" * d + "1" + ")" * d,
    "coalesce": lambda d: "SELECT " + "coalesce(" * d + "NULL, 1" + ", 2)" * d,
    "case": lambda d: "SELECT " + "CASE WHEN 1 = 1 THEN " * d + "1" + " END" * d,
    "case else": lambda d: "SELECT " + "CASE WHEN 1 = 0 THEN 0 ELSE " * d + "1" + " END" * d,
    "scalar subqueries": lambda d: "SELECT " + "(SELECT " * d + "1" + ")" * d,
    "derived tables": lambda d: (
        "SELECT * FROM " + "(SELECT * FROM " * (d - 1) + "(SELECT 1 AS x) s" + ") s" * (d - 1)
    ),
    "arithmetic": lambda d: "SELECT " + "(1 + " * d + "1" + ")" * d,
    "casts": lambda d: "SELECT " + "CAST(" * d + "1" + " AS INT8)" * d,
    "in subqueries": lambda d: (
        "SELECT 1 IN " + "(SELECT 1 WHERE 1 IN " * (d - 1) + "(1)" + ")" * (d - 1)
    ),
}


@pytest.fixture
def conn() -> trinity_dbapi.Connection:
    return trinity_dbapi.connect(f"memory://nesting-{uuid.uuid4().hex}", autocommit=True)


def _duckdb_rows(sql: str) -> list[tuple[object, ...]]:
    return duckdb.connect().execute(sql).fetchall()


@pytest.mark.parametrize("kind", sorted(NESTED))
def test_depth_100_runs_and_gives_duckdbs_result(conn: trinity_dbapi.Connection, kind: str) -> None:
    sql = NESTED[kind](100)
    assert conn.execute(sql).fetchall() == _duckdb_rows(sql)


@pytest.mark.parametrize("kind", ["parentheses", "coalesce", "case", "arithmetic", "casts"])
def test_the_limit_itself_runs(conn: trinity_dbapi.Connection, kind: str) -> None:
    sql = NESTED[kind](MAX_NESTING_DEPTH)
    assert conn.execute(sql).fetchall() == _duckdb_rows(sql)


def test_a_long_flat_chain_runs(conn: trinity_dbapi.Connection) -> None:
    # Left-deep trees of 900 operators (DuckDB's own limit is 1000 levels).
    sql = "SELECT 1" + " + 1" * 900 + ", TRUE" + " AND TRUE" * 900
    assert conn.execute(sql).fetchall() == [(901, True)]


@pytest.mark.parametrize("kind", sorted(NESTED))
def test_past_the_limit_is_a_programming_error_naming_it(
    conn: trinity_dbapi.Connection, kind: str
) -> None:
    with pytest.raises(NestingTooDeepError) as caught:
        conn.execute(NESTED[kind](MAX_NESTING_DEPTH + 1))
    assert isinstance(caught.value, ProgrammingError)
    assert caught.value.limit == MAX_NESTING_DEPTH
    assert caught.value.depth == MAX_NESTING_DEPTH + 1
    assert f"at most {MAX_NESTING_DEPTH} levels deep" in str(caught.value)
    assert conn.execute("SELECT 42").fetchall() == [(42,)]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT " + "NOT " * 20_000 + "TRUE",
        "SELECT " + "- " * 20_000 + "1",
        "SELECT " + "(" * 100_000 + "1" + ")" * 100_000,
    ],
    ids=["not chain", "minus chain", "100000 parentheses"],
)
def test_any_depth_is_an_error_naming_the_limit_never_an_internal_error(
    conn: trinity_dbapi.Connection, sql: str
) -> None:
    with pytest.raises(NestingTooDeepError, match=f"at most {MAX_NESTING_DEPTH} levels") as caught:
        conn.execute(sql)
    assert not isinstance(caught.value, InternalError)


def test_a_result_type_nested_deeper_than_arrow_takes_is_not_supported(
    conn: trinity_dbapi.Connection,
) -> None:
    # Nested lists make nested result types, and pyarrow imports 64 levels of them at most.
    assert conn.execute("SELECT " + "[" * 60 + "1" + "]" * 60).fetchone() is not None
    with pytest.raises(trinity_dbapi.NotSupportedError, match="nests more than 64 levels"):
        conn.execute("SELECT " + "[" * 100 + "1" + "]" * 100)
    assert conn.execute("SELECT 42").fetchall() == [(42,)]


def test_executemany_and_scripts_get_the_same_budget(conn: trinity_dbapi.Connection) -> None:
    conn.execute("CREATE TABLE t (v INT8)")
    deep = "coalesce(" * 100 + "?" + ", 0)" * 100
    conn.cursor().executemany(f"INSERT INTO t VALUES ({deep})", [(1,), (2,)])
    script = f"{NESTED['case'](100)}; INSERT INTO t VALUES ({deep.replace('?', '3')})"
    conn.cursor().executescript(script)
    assert sorted(conn.execute("SELECT v FROM t").fetchall()) == [(1,), (2,), (3,)]


def test_nesting_runs_in_other_threads_and_the_recursion_limit_comes_back(
    conn: trinity_dbapi.Connection,
) -> None:
    before = sys.getrecursionlimit()
    results: dict[str, object] = {}

    def run(kind: str) -> None:
        try:
            results[kind] = conn.execute(NESTED[kind](MAX_NESTING_DEPTH)).fetchall()
        except trinity_dbapi.Error as exc:  # recorded for the main thread
            results[kind] = exc

    threads = [threading.Thread(target=run, args=(k,)) for k in ("parentheses", "coalesce", "case")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {"parentheses": [(1,)], "coalesce": [(1,)], "case": [(1,)]}
    assert sys.getrecursionlimit() == before


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kinds=st.lists(st.sampled_from(sorted(NESTED)), min_size=1, max_size=3),
    depth=st.integers(min_value=1, max_value=MAX_NESTING_DEPTH),
)
def test_within_the_limit_the_result_is_duckdbs(
    conn: trinity_dbapi.Connection, kinds: list[str], depth: int
) -> None:
    # Mixed constructs: each level takes the next kind in turn, nested inside each other.
    sql = "SELECT 1"
    for level in range(depth):
        inner = sql.removeprefix("SELECT ")
        kind = kinds[level % len(kinds)]
        sql = _wrap(kind, inner)
    expected: object
    if nesting_depth(Trinity().tokenize(sql)) > MAX_NESTING_DEPTH:
        expected = ProgrammingError  # a derived table nests two levels at once
    else:
        try:
            expected = _duckdb_rows(sql)
        except duckdb.Error:  # DuckDB's own limits (its max_expression_depth) apply too
            expected = ProgrammingError
    try:
        got: object = conn.execute(sql).fetchall()
    except ProgrammingError:
        got = ProgrammingError
    assert got == expected


def _wrap(kind: str, inner: str) -> str:
    """``SELECT <inner>`` wrapped in one more level of ``kind``."""
    wrappers = {
        "parentheses": f"({inner})",
        "coalesce": f"coalesce(NULL, {inner}, 2)",
        "case": f"CASE WHEN 1 = 1 THEN {inner} END",
        "case else": f"CASE WHEN 1 = 0 THEN 0 ELSE {inner} END",
        "scalar subqueries": f"(SELECT {inner})",
        "derived tables": f"(SELECT * FROM (SELECT {inner} AS x) s)",
        "arithmetic": f"(0 + {inner})",
        "casts": f"CAST({inner} AS INT8)",
        "in subqueries": f"(CASE WHEN 1 IN (SELECT 1) THEN {inner} END)",
    }
    return "SELECT " + wrappers[kind]
