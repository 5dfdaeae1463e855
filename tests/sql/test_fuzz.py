"""Fuzzing the driver: whatever the SQL text and parameters, only PEP 249 errors come out.

Statements come from three sources: random text, random token soups built
from the grammar's keywords, and mutations (deletions, duplications,
swaps, insertions) of the golden identity corpus. Each runs against a live
lakehouse through a cursor; the test asserts that the outcome is a result
or an exception of the ``trinity_dbapi.Error`` hierarchy, and that the
lakehouse still opens and lists its namespaces afterwards (nothing was
corrupted). The slow marker's variant runs 5,000 examples.
"""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import trinity_dbapi
from trinity_dbapi import errors

CORPUS = [
    line
    for line in (Path(__file__).resolve().parents[2] / "grammar" / "identity.sql")
    .read_text()
    .splitlines()
    if line.strip() and not line.startswith("--")
]

WORDS = [
    "SELECT", "FROM", "WHERE", "CREATE", "DROP", "ALTER", "TABLE", "NAMESPACE", "SCHEMA",
    "SHOW", "TABLES", "DESCRIBE", "CALL", "system", "information_schema", "tables", "(", ")",
    ",", ";", "?", "'x'", "1", "-1", "NULL", "FOR", "SYSTEM_VERSION", "SYSTEM_TIME", "AS",
    "OF", "TIMESTAMP", "'2024-01-01'", "=>", "=", "INT", "STRUCT<a: INT>", "MAP<INT, INT>",
    "LIST<INT>", "DECIMAL(3,1)", "NOT", "COMMENT", "WITH", "USE", "BEGIN", "COMMIT", "MESSAGE",
    "ROLLBACK", "ISOLATION", "LEVEL", "SERIALIZABLE", "SNAPSHOT", "LIKE", "ns", "t", "*",
    '"q"', "JOIN", "ON", "GROUP", "BY", "ORDER", "LIMIT", "IF", "EXISTS", "CASCADE",
    "PRIMARY", "KEY", "PARTITIONED", "SET", "UNSET", "PROPERTIES", "RENAME", "TO",
    "COLUMN", "ADD", "--", "/*", "*/", "\n", "é", "\x00",
]  # fmt: skip

PARAM_VALUES = hs.one_of(
    hs.none(),
    hs.booleans(),
    hs.integers(min_value=-(2**63), max_value=2**63 - 1),
    hs.floats(allow_nan=True, allow_infinity=True),
    hs.decimals(allow_nan=False, allow_infinity=False, places=3),
    hs.text(max_size=20),
    hs.binary(max_size=10),
    hs.dates(),
    hs.datetimes(),
    hs.times(),
    # and things the whitelist rejects
    hs.just(object()),
    hs.sets(hs.integers(), max_size=2),
    hs.complex_numbers(),
)


@hs.composite
def mutated(draw: Any) -> str:
    words = draw(hs.sampled_from(CORPUS)).split(" ")
    for _ in range(draw(hs.integers(1, 3))):
        i = draw(hs.integers(0, len(words) - 1))
        op = draw(hs.sampled_from(["delete", "duplicate", "swap", "insert", "truncate"]))
        if op == "delete" and len(words) > 1:
            del words[i]
        elif op == "duplicate":
            words.insert(i, words[i])
        elif op == "swap":
            j = draw(hs.integers(0, len(words) - 1))
            words[i], words[j] = words[j], words[i]
        elif op == "insert":
            words.insert(i, draw(hs.sampled_from(WORDS)))
        else:
            words = words[: i + 1]
    return " ".join(words)


STATEMENTS = hs.one_of(
    hs.text(max_size=60),
    hs.lists(hs.sampled_from(WORDS), max_size=12).map(" ".join),
    mutated(),
    hs.sampled_from(CORPUS),
)


@pytest.fixture(scope="module")
def lake_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("fuzz") / "lake")
    conn = trinity_dbapi.connect(uri, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (a INT, b VARCHAR(10))")
    conn.close()
    return uri


def _run(uri: str, sql: str, params: list[Any] | None, autocommit: bool) -> None:
    conn = trinity_dbapi.connect(uri, autocommit=autocommit)
    try:
        cur = conn.cursor()
        try:
            cur.execute(sql, params)
            if cur.description is not None:
                fetched = cur.fetchall()
                assert cur.rowcount in (-1, len(fetched))
        except errors.Error:
            pass  # the only kind of failure allowed
        finally:
            conn.rollback()  # changes outside autocommit are not kept
    finally:
        conn.close()


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    sql=STATEMENTS,
    params=hs.one_of(hs.none(), hs.lists(PARAM_VALUES, max_size=3)),
    autocommit=hs.booleans(),
)
def test_only_pep249_errors_escape(
    lake_uri: str, sql: str, params: list[Any] | None, autocommit: bool
) -> None:
    _run(lake_uri, sql, params, autocommit)
    # the lakehouse is intact: it opens, and its catalog reads back whole
    # (procedures such as rollback may legitimately have changed it)
    check = trinity_dbapi.connect(lake_uri, create=False).cursor()
    names = check.execute("SHOW NAMESPACES").fetchall()
    assert ("system",) in names and all(isinstance(n, str) for (n,) in names)
    check.execute("SELECT count(*) FROM system.columns")
    assert check.fetchone()[0] >= 0


def test_fuzz_values_round_trip_through_select(lake_uri: str) -> None:
    cur = trinity_dbapi.connect(lake_uri).cursor()
    values = [decimal.Decimal("1.500"), datetime.time(1, 2, 3), "é\x01", b"\x00"]
    assert list(cur.execute("SELECT ?, ?, ?, ?", values).fetchone()) == values


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(sql=STATEMENTS, params=hs.one_of(hs.none(), hs.lists(PARAM_VALUES, max_size=3)))
def test_only_pep249_errors_escape_long(lake_uri: str, sql: str, params: list[Any] | None) -> None:
    _run(lake_uri, sql, params, autocommit=True)
    trinity_dbapi.connect(lake_uri, create=False).cursor().execute("SHOW NAMESPACES")
