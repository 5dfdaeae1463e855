"""The DuckDB bridge on branches: ``attach(..., branch=...)`` and names that pin a branch's head."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.duckdb import attach


@pytest.fixture
def lake(tmp_path: Path) -> str:
    """Main: ns.a (1), ns.old. Branch dev: ns.a (1, 2), ns.only_dev, namespace lab, ns.old dropped.
    Tag eod: main before the branch existed."""
    path = str(tmp_path / "lake")
    with trinity_dbapi.connect(path, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE ns")
        conn.execute("CREATE TABLE ns.a (x INT8)")
        conn.execute("INSERT INTO ns.a VALUES (1)")
        conn.execute("CREATE TABLE ns.old (x INT8)")
        conn.execute("CREATE TAG eod")
        conn.execute("CREATE BRANCH dev")
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO ns.a VALUES (2)")
        conn.execute("CREATE TABLE ns.only_dev (y VARCHAR)")
        conn.execute("INSERT INTO ns.only_dev VALUES ('d')")
        conn.execute("CREATE NAMESPACE lab")
        conn.execute("DROP TABLE ns.old")
    return path


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    try:
        yield connection
    finally:
        connection.close()


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    return con.execute(sql).fetchall()


def _views(con: duckdb.DuckDBPyConnection, schema: str) -> list[str]:
    sql = "SELECT view_name FROM duckdb_views() WHERE schema_name = ? ORDER BY 1"
    return [row[0] for row in _rows(con, sql.replace("?", f"'{schema}'"))]


def test_attach_a_branch_shows_its_tables(lake: str, con: duckdb.DuckDBPyConnection) -> None:
    dev = attach(con, lake, branch="dev", prefix="dev_")
    main = attach(con, lake, prefix="main_")
    assert _views(con, "dev_ns") == ["a", "only_dev"]
    assert _views(con, "main_ns") == ["a", "old"]
    assert "dev_lab" in dev.schemas.values() and "main_lab" not in main.schemas.values()
    assert _rows(con, "SELECT x FROM dev_ns.a ORDER BY x") == [(1,), (2,)]
    assert _rows(con, "SELECT x FROM main_ns.a") == [(1,)]
    assert _rows(con, "SELECT * FROM dev_ns.only_dev") == [("d",)]
    # The catalog tables are the branch's too.
    tables = "SELECT table_name FROM dev_trinity_system.tables WHERE namespace_name = 'ns'"
    assert sorted(_rows(con, tables)) == [("a",), ("only_dev",)]
    assert dev.lakehouse.branch == "dev" and main.lakehouse.branch is None
    assert "branch='dev'" in repr(dev) and "branch=" not in repr(main)
    with trinity_dbapi.connect(lake, branch="dev") as conn:
        assert dev.version == conn.execute("SELECT max(version) FROM system.versions").fetchone()[0]


def test_refresh_follows_the_branch(lake: str, con: duckdb.DuckDBPyConnection) -> None:
    dev = attach(con, lake, branch="dev")
    with trinity_dbapi.connect(lake, autocommit=True) as conn:
        conn.execute("INSERT INTO ns.a VALUES (10)")  # on main: not the branch's
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO ns.a VALUES (3)")
    assert _rows(con, "SELECT x FROM ns.a ORDER BY x") == [(1,), (2,)]  # frozen
    dev.refresh()
    assert _rows(con, "SELECT x FROM ns.a ORDER BY x") == [(1,), (2,), (3,)]


def test_branch_main_is_main(lake: str, con: duckdb.DuckDBPyConnection) -> None:
    attach(con, lake, branch="main")
    assert _views(con, "ns") == ["a", "old"]


def test_names_pin_a_tag_or_a_branch_head(lake: str, con: duckdb.DuckDBPyConnection) -> None:
    """``export=`` takes any ref name, as ``FOR SYSTEM_VERSION AS OF 'name'`` does."""
    attach(con, lake, export="dev", prefix="head_")
    assert _views(con, "head_ns") == ["a", "only_dev"]
    assert _rows(con, "SELECT x FROM head_ns.a ORDER BY x") == [(1,), (2,)]
    attach(con, lake, export="eod", prefix="eod_")
    assert _views(con, "eod_ns") == ["a", "old"]
    with pytest.raises(errors.NoSuchVersionError, match="SHOW BRANCHES and SHOW TAGS list"):
        attach(con, lake, export="nope", prefix="x_")


def test_an_unknown_branch_names_it_and_how_to_list_branches(
    lake: str, con: duckdb.DuckDBPyConnection
) -> None:
    with pytest.raises(errors.NoSuchRefError) as info:
        attach(con, lake, branch="nope", prefix="x_")
    assert "branch 'nope' does not exist; SHOW BRANCHES lists them" in str(info.value)
    with pytest.raises(errors.ProgrammingError, match="branch must be a branch name"):
        attach(con, lake, branch=3, prefix="x_")  # type: ignore[arg-type]
    assert not _rows(con, "SELECT schema_name FROM duckdb_schemas() WHERE schema_name LIKE 'x_%'")
