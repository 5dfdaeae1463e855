"""The session's private DuckDB: what it may read, what it caches, and that SQL cannot change it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

import trinity_dbapi
from trinity_dbapi.sql.engine.duckdb_pool import DUCKDB_SETTINGS


@pytest.fixture
def conn(tmp_path: Path) -> Any:
    connection = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    yield connection
    connection.close()


def _setting(duck: duckdb.DuckDBPyConnection, name: str) -> str:
    row = duck.execute("SELECT value FROM duckdb_settings() WHERE name = ?", [name]).fetchone()
    assert row is not None, name
    return str(row[0])


def test_immutable_file_caches_apply_to_every_cursor(conn: Any) -> None:
    # Streamed queries run on cursors of the private connection: a setting made
    # for the first connection only would leave them without the caches.
    duck = conn.session.duckdb()
    for target in (duck, duck.cursor()):
        assert _setting(target, "parquet_metadata_cache") == "true"
        assert _setting(target, "validate_external_file_cache") == "NO_VALIDATION"
    assert set(DUCKDB_SETTINGS) == {
        "parquet_metadata_cache",
        "validate_external_file_cache",
        "TimeZone",
    }


def test_configuration_is_locked_and_external_access_off(conn: Any, tmp_path: Path) -> None:
    duck = conn.session.duckdb()
    assert _setting(duck, "enable_external_access") == "false"
    with pytest.raises(duckdb.Error, match="locked"):
        duck.execute("SET enable_external_access = true")
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    with pytest.raises(duckdb.Error):
        duck.execute(f"SELECT * FROM read_csv('{outside}')").fetchall()


def test_repeated_scans_see_new_files_after_each_commit(conn: Any) -> None:
    # Caching footers without validation is safe only because a committed
    # file never changes: every write makes new files, so a later scan of the
    # same table sees exactly the new version's rows.
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (p INT4, v INT8) PARTITIONED BY (p)")
    counts = []
    for batch in range(3):
        cur.execute("INSERT INTO ns.t SELECT i % 2, i FROM range(?) AS r(i)", [10 * (batch + 1)])
        counts.append(cur.execute("SELECT count(*), sum(v) FROM ns.t").fetchone())
    cur.execute("DELETE FROM ns.t WHERE v < 5")
    counts.append(cur.execute("SELECT count(*), sum(v) FROM ns.t").fetchone())
    assert counts == [(10, 45), (30, 235), (60, 670), (45, 640)]


_TZ_PROBE = """
import datetime, sys, trinity_dbapi
conn = trinity_dbapi.connect(sys.argv[1], autocommit=True)
cur = conn.cursor()
cur.execute("CREATE TABLE t (ts TIMESTAMPTZ)")
cur.execute("INSERT INTO t VALUES (TIMESTAMPTZ '2024-03-10 12:00:00')")
naive = datetime.datetime(2024, 3, 10, 12, 0)
print(cur.execute("SELECT current_setting('TimeZone')").fetchone()[0])
print(cur.execute("SELECT ts FROM t").fetchone()[0].isoformat())
print(cur.execute("SELECT count(*) FROM t WHERE ts = ?", [naive]).fetchone()[0])
print(cur.execute("SELECT date_trunc('day', ts) FROM t").fetchone()[0].isoformat())
"""


def test_time_zone_is_utc_whatever_the_host_says(tmp_path: Path) -> None:
    # A host in New York must not shift TIMESTAMPTZ values, literals,
    # naive parameters or date_trunc buckets (docs/sql.md: UTC).
    env = {**os.environ, "TZ": "America/New_York"}
    out = subprocess.run(
        [sys.executable, "-c", _TZ_PROBE, str(tmp_path / "lake")],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == ["UTC", "2024-03-10T12:00:00+00:00", "1", "2024-03-10T00:00:00+00:00"]
