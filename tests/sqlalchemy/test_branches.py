"""The URL option ``?branch=``: reflection, queries, pandas and writes on a branch."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

import trinity_dbapi
from trinity_dbapi.errors import NoSuchRefError

pd = pytest.importorskip("pandas")


@pytest.fixture
def lake(tmp_path: Path) -> str:
    """Main: ``ns.a`` (one row), ``ns.gone``. Branch ``dev``: ``ns.a`` (two rows),
    ``ns.only_dev``, namespace ``lab``, and ``ns.gone`` dropped."""
    path = str(tmp_path / "lake")
    with trinity_dbapi.connect(path, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE ns")
        conn.execute("CREATE TABLE ns.a (x INT8)")
        conn.execute("CREATE TABLE ns.gone (x INT8)")
        conn.execute("INSERT INTO ns.a VALUES (1)")
        conn.execute("CREATE BRANCH dev")
        conn.execute("USE BRANCH dev")
        conn.execute("CREATE TABLE ns.only_dev (y VARCHAR, z FLOAT8)")
        conn.execute("CREATE NAMESPACE lab")
        conn.execute("DROP TABLE ns.gone")
        conn.execute("INSERT INTO ns.a VALUES (2)")
    return path


def _engine(lake: str, query: str = "") -> sa.Engine:
    return sa.create_engine(f"trinity:///{lake}{query}", poolclass=sa.pool.NullPool)


def test_reflection_of_a_branch_lists_its_own_tables(lake: str) -> None:
    dev = sa.inspect(_engine(lake, "?branch=dev"))
    main = sa.inspect(_engine(lake))
    assert "lab" in dev.get_schema_names()
    assert "lab" not in main.get_schema_names()
    assert dev.get_table_names("ns") == ["a", "only_dev"]
    assert main.get_table_names("ns") == ["a", "gone"]
    assert dev.has_table("only_dev", "ns") and not dev.has_table("gone", "ns")
    assert main.has_table("gone", "ns") and not main.has_table("only_dev", "ns")
    columns = [(c["name"], str(c["type"])) for c in dev.get_columns("only_dev", "ns")]
    assert columns == [("y", "VARCHAR"), ("z", "DOUBLE")]
    with pytest.raises(sa.exc.NoSuchTableError):
        main.get_columns("only_dev", "ns")
    metadata = sa.MetaData()
    metadata.reflect(_engine(lake, "?branch=dev"), schema="ns")
    assert sorted(metadata.tables) == ["ns.a", "ns.only_dev"]


def test_branch_main_in_the_url_is_main(lake: str) -> None:
    assert sa.inspect(_engine(lake, "?branch=main")).get_table_names("ns") == ["a", "gone"]


def test_pandas_reads_a_branch(lake: str) -> None:
    frame = pd.read_sql("SELECT x FROM ns.a ORDER BY x", _engine(lake, "?branch=dev"))
    assert frame["x"].tolist() == [1, 2]
    table = pd.read_sql_table("a", _engine(lake, "?branch=dev"), schema="ns")
    assert sorted(table["x"].tolist()) == [1, 2]
    assert pd.read_sql("SELECT x FROM ns.a", _engine(lake))["x"].tolist() == [1]


def test_writes_through_a_branch_url_commit_to_the_branch(lake: str) -> None:
    engine = _engine(lake, "?branch=dev")
    frame = pd.DataFrame({"y": ["p", "q"], "z": [1.0, 2.0]})
    assert frame.to_sql("only_dev", engine, schema="ns", if_exists="append", index=False) == 2
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO ns.a VALUES (3)")
    with trinity_dbapi.connect(lake, branch="dev") as dev:
        assert dev.execute("SELECT count(*) FROM ns.only_dev").fetchone() == (2,)
        assert dev.execute("SELECT x FROM ns.a ORDER BY x").fetchall() == [(1,), (2,), (3,)]
    with trinity_dbapi.connect(lake) as main:
        assert main.execute("SELECT x FROM ns.a").fetchall() == [(1,)]


def test_an_unknown_branch_names_it_and_how_to_list_branches(lake: str) -> None:
    with pytest.raises(sa.exc.ProgrammingError) as info:
        _engine(lake, "?branch=nope").connect()
    assert isinstance(info.value.orig, NoSuchRefError)
    assert "branch 'nope' does not exist; SHOW BRANCHES lists them" in str(info.value)
