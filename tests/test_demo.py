"""The Quickstart's demo job, run as a user would run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from trinity_dbapi.format.keys import namespace_tables_prefix
from trinity_dbapi.lakehouse import Lakehouse


def _run(cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.demo"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout


def test_demo_creates_queries_and_grows(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert "created a lakehouse" in first
    assert "namespace sales: 2 tables: customers, orders" in first
    assert "order_id     int8 NOT NULL" in first
    assert "amount       decimal(12,2)" in first
    assert "history: 4 versions" in first

    lake = Lakehouse.open(str(tmp_path / "demo-lakehouse"))
    snap = lake.snapshot()
    assert snap.version == 3
    assert snap.depth() >= 3
    bulk = list(snap.scan_prefix(namespace_tables_prefix("bulk", lake.definition.key_limits)))
    assert len(bulk) == 300

    second = _run(tmp_path)
    assert "opened the lakehouse" in second
    assert "history: 7 versions" in second
    assert Lakehouse.open(str(tmp_path / "demo-lakehouse")).latest_version() == 6
