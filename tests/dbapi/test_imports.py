"""What opening a connection imports: the driver and the session, not the engine's statements."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import trinity_dbapi

_PROBE = """
import json, sys
import trinity_dbapi
connection = trinity_dbapi.connect(sys.argv[1])
loaded = sorted(m for m in sys.modules if m.startswith("trinity_dbapi."))
connection.cursor().execute("SELECT 1")
after = sorted(m for m in sys.modules if m.startswith("trinity_dbapi."))
print(json.dumps([loaded, after]))
"""


def test_a_connection_imports_no_statement_module_until_it_runs_one(tmp_path: Path) -> None:
    """A connection that only reflects (SQLAlchemy's inspector) pays for no table layer.

    The table format's hooks are registered by the engine's front door, which
    the first statement imports; before it, nothing of ``tables/`` is loaded.
    """
    trinity_dbapi.connect(str(tmp_path / "lake")).close()  # create it
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "lake")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    loaded, after = json.loads(done.stdout.strip().splitlines()[-1])
    assert [m for m in loaded if m.startswith("trinity_dbapi.tables.")] == []
    assert "trinity_dbapi.sql.engine.dispatch" not in loaded
    assert "trinity_dbapi.sql.engine.dispatch" in after
    assert "trinity_dbapi.tables.registration" in after


_STATEMENT_PROBE = """
import json, sys
import trinity_dbapi
cursor = trinity_dbapi.connect(sys.argv[1]).cursor()
rows = cursor.execute(sys.argv[2]).fetchall()
print(json.dumps([rows, sorted(sys.modules)], default=str))
"""

#: What no statement answered from the tree needs: DuckDB, pandas (pyarrow
#: imports it for ``pa.array(list)`` and ``to_numpy``), polars, the table
#: layer (``trinity_dbapi.tables``), pyarrow.compute (~50 ms of docstrings).
_HEAVY = ("duckdb", "pandas", "polars", "trinity_dbapi.tables", "pyarrow.compute")


def _statement_imports(lake: str, sql: str) -> tuple[list[list[object]], list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _STATEMENT_PROBE, lake, sql],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    rows, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return rows, modules


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in _HEAVY)]


def _lake_with_a_table(tmp_path: Path) -> str:
    lake = str(tmp_path / "lake")
    with trinity_dbapi.connect(lake, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE shop")
        conn.execute("CREATE TABLE shop.orders (id INT8, amount FLOAT8)")
        conn.execute("INSERT INTO shop.orders VALUES (1, 2.5), (2, 4.0), (3, NULL)")
    return lake


def test_catalog_statements_import_neither_duckdb_nor_pandas_nor_tables(tmp_path: Path) -> None:
    """SHOW and DESCRIBE are answered from the tree: each pays only for what it uses.

    ``trinity DIR -c .tables`` runs SHOW TABLES; a new process answering it
    in a third of a query's time depends on this set not growing back.
    """
    lake = _lake_with_a_table(tmp_path)
    for sql, expected in [
        ("SHOW TABLES IN shop", [["orders"]]),
        ("SHOW TABLES", [["shop.orders"]]),  # the current namespace is empty: every table
        ("SHOW NAMESPACES LIKE 'sh%'", [["shop"]]),
        (
            "DESCRIBE shop.orders",
            [
                ["id", "int8", True, None, False, False],
                ["amount", "float8", True, None, False, False],
            ],
        ),
        ("DESCRIBE NAMESPACE shop", [["shop", None, []]]),
    ]:
        rows, modules = _statement_imports(lake, sql)
        assert rows == expected, sql
        assert _heavy(modules) == [], sql
        assert "trinity_dbapi.sql.engine.query" not in modules, sql


def test_a_catalog_point_query_imports_neither_duckdb_nor_pandas(tmp_path: Path) -> None:
    """A query over one catalog table answered with Arrow (catalog_answer.py) needs no DuckDB."""
    lake = _lake_with_a_table(tmp_path)
    sql = "SELECT table_name FROM system.tables WHERE namespace_name = 'shop'"
    rows, modules = _statement_imports(lake, sql)
    assert rows == [["orders"]]
    assert [m for m in modules if m.split(".")[0] in ("duckdb", "pandas", "polars")] == []


def test_a_query_fetches_its_rows_without_pandas(tmp_path: Path) -> None:
    """Numbers, dates and timestamps are fetched from the Arrow buffers, not through pandas."""
    lake = _lake_with_a_table(tmp_path)
    sql = (
        "SELECT count(*) AS n, sum(amount) AS total, min(id) AS low, DATE '2024-02-29' AS day, "
        "TIMESTAMPTZ '2024-01-01 10:00:00+00' AS at FROM shop.orders"
    )
    rows, modules = _statement_imports(lake, sql)
    assert rows == [[3, 6.5, 1, "2024-02-29", "2024-01-01 10:00:00+00:00"]]
    assert "duckdb" in modules
    assert [m for m in modules if m == "pandas" or m.startswith("pandas.")] == []
