""".ci/check_demo.py fails CI unless the demo left tables that hold rows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import trinity_dbapi

CHECK = Path(__file__).resolve().parent.parent / ".ci" / "check_demo.py"


def _check(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _lake(folder: Path, *statements: str) -> None:
    with trinity_dbapi.connect(str(folder), autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


def test_no_lakehouse_fails(tmp_path: Path) -> None:
    done = _check(tmp_path / "none")
    assert done.returncode == 1
    assert "no lakehouse at" in done.stderr
    assert not (tmp_path / "none").exists()  # read-only: nothing created


def test_a_lakehouse_without_tables_fails(tmp_path: Path) -> None:
    _lake(tmp_path / "lake", "CREATE NAMESPACE shop")
    done = _check(tmp_path / "lake")
    assert (done.returncode, done.stdout) == (1, "")
    assert "has no tables" in done.stderr


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_table_without_rows_fails(tmp_path: Path, partitioned: bool) -> None:
    partitions = " PARTITIONED BY (p)" if partitioned else ""
    _lake(
        tmp_path / "lake",
        "CREATE NAMESPACE shop",
        "CREATE TABLE shop.full (x INT8, p INT4)",
        f'CREATE TABLE shop."empty-one" (x INT8, p INT4){partitions}',
        "INSERT INTO shop.full VALUES (1, 1), (2, 1)",
    )
    done = _check(tmp_path / "lake")
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["shop.empty-one: 0 rows", "shop.full: 2 rows"]
    assert "tables without rows: shop.empty-one" in done.stderr


def test_tables_holding_rows_pass(tmp_path: Path) -> None:
    _lake(
        tmp_path / "lake",
        "CREATE NAMESPACE shop",
        "CREATE TABLE shop.orders (x INT8)",
        "INSERT INTO shop.orders SELECT * FROM range(1500)",
    )
    done = _check(tmp_path / "lake")
    assert (done.returncode, done.stdout, done.stderr) == (0, "shop.orders: 1,500 rows\n", "")
