"""A new ``trinity DIR -c ...`` pays only for the imports its statements use.

``.tables`` is answered from the tree: no DuckDB, no pandas, no table layer,
no pyarrow.compute (each a tenth of a second or more to import on a small
machine). A query imports DuckDB and the table layer, and still no pandas:
its rows are fetched from the Arrow buffers. The shell treats no statement
specially: these sets are what the engine's code paths import.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import trinity_dbapi

_PROBE = """
import json, sys
from trinity_dbapi.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("\\n" + json.dumps([code, sorted(sys.modules)]))
"""

#: Loaded by no catalog statement (see tests/dbapi/test_imports.py).
_HEAVY = ("duckdb", "pandas", "polars", "trinity_dbapi.tables", "pyarrow.compute")


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> str:
    uri = str(tmp_path_factory.mktemp("startup") / "lake")
    with trinity_dbapi.connect(uri, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE shop")
        conn.execute("CREATE TABLE shop.orders (id INT8, amount FLOAT8)")
        conn.execute("INSERT INTO shop.orders VALUES (1, 2.5), (2, 4.0), (3, NULL)")
    return uri


def _run(lake: str, command: str) -> tuple[str, list[str]]:
    """What ``trinity LAKE -c COMMAND`` prints, and the modules its process loaded."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, lake, "-c", command],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    printed, _, last = done.stdout.rstrip().rpartition("\n")
    code, modules = json.loads(last)
    assert code == 0, done.stderr
    return printed, modules


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in _HEAVY)]


def test_tables_imports_neither_duckdb_nor_pandas_nor_the_table_layer(lake: str) -> None:
    printed, modules = _run(lake, ".tables")
    assert "shop.orders" in printed
    assert _heavy(modules) == []


def test_a_count_imports_duckdb_but_not_pandas(lake: str) -> None:
    printed, modules = _run(lake, "SELECT count(*) AS n, sum(amount) AS total FROM shop.orders")
    assert [line.split() for line in printed.splitlines()[-2:]] == [
        ["3", "|", "6.5"],
        ["(1", "row)"],
    ]
    assert "duckdb" in modules
    assert "trinity_dbapi.tables.registration" in modules  # a query reaches tables' data
    assert [m for m in modules if m == "pandas" or m.startswith("pandas.")] == []
