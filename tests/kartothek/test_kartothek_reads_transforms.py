"""Kartothek 5.3.0 reads a table partitioned by transforms (``day(ts)``, ``bucket(2, id)``, ...).

A transform's directory is a partition key Kartothek types from
``_common_metadata``, so it returns it as an extra column: text for
``day``, int32 for ``bucket`` (the NULL partition of a text key as
Kartothek gives every text key's: the marker text). Its predicates on the
key prune as on any partition key.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import mmh3
import pytest

import trinity_dbapi

from . import our_tables, venv

pytestmark = pytest.mark.kartothek

SCRIPT = Path(__file__).with_name("read_with_kartothek.py")


def _read(python: Path, root: Path, uuid: str, predicates: Any = None) -> list[dict[str, Any]]:
    args = [str(python), str(SCRIPT), str(root), uuid]
    if predicates is not None:
        args.append(json.dumps(predicates))
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return sorted((json.loads(line) for line in done.stdout.splitlines()), key=lambda r: r["id"])


def test_kartothek_reads_transform_partitions_as_extra_columns(tmp_path: Path) -> None:
    try:
        python = venv.ensure_venv()
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))
    root = tmp_path / "lake"
    with trinity_dbapi.connect(str(root), autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE NAMESPACE s")
        cur.execute(
            "CREATE TABLE s.t (id INT8, ts TIMESTAMP, k VARCHAR) "
            "PARTITIONED BY (k, day(ts), bucket(2, id))"
        )
        cur.execute(
            "INSERT INTO s.t VALUES (1, TIMESTAMP '2024-01-01 10:00:00', 'a'), "
            "(2, TIMESTAMP '2024-01-02 10:00:00', 'b'), (3, NULL, 'a')"
        )
        cur.execute("DELETE FROM s.t WHERE id = 3")
        cur.execute("INSERT INTO s.t VALUES (4, TIMESTAMP '2024-01-02 23:59:59', 'a')")
    uuid = our_tables.dataset_uuid(root, "t")
    rows = _read(python, root, uuid)
    assert rows == [
        {"id": 1, "ts": "2024-01-01T10:00:00", "k": "a", "ts_day": "2024-01-01", "id_bucket": 0},
        {"id": 2, "ts": "2024-01-02T10:00:00", "k": "b", "ts_day": "2024-01-02", "id_bucket": 0},
        {"id": 4, "ts": "2024-01-02T23:59:59", "k": "a", "ts_day": "2024-01-02", "id_bucket": 0},
    ]
    assert [r["id"] for r in _read(python, root, uuid, [[["ts_day", "==", "2024-01-02"]]])] == [
        2,
        4,
    ]


def test_kartothek_reads_files_of_two_partitionings(tmp_path: Path) -> None:
    try:
        python = venv.ensure_venv()
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))
    root = tmp_path / "lake"
    with trinity_dbapi.connect(str(root), autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE NAMESPACE s")
        cur.execute(
            "CREATE TABLE s.t (id INT8, ts TIMESTAMP, k VARCHAR) PARTITIONED BY (k, day(ts))"
        )
        cur.execute(
            "INSERT INTO s.t VALUES (1, TIMESTAMP '2024-01-01 10:00:00', 'a'), "
            "(2, TIMESTAMP '2024-01-02 10:00:00', 'b')"
        )
        cur.execute("ALTER TABLE s.t SET PARTITIONED BY (bucket(2, id))")
        cur.execute("INSERT INTO s.t VALUES (3, TIMESTAMP '2024-01-03 10:00:00', 'c')")
    rows = _read(python, root, our_tables.dataset_uuid(root, "t"))
    # k from the path in the old files, from the payload in the new one; a key
    # a file has no directory for reads as null.
    assert rows == [
        {"id": 1, "ts": "2024-01-01T10:00:00", "k": "a", "ts_day": "2024-01-01", "id_bucket": None},
        {"id": 2, "ts": "2024-01-02T10:00:00", "k": "b", "ts_day": "2024-01-02", "id_bucket": None},
        {"id": 3, "ts": "2024-01-03T10:00:00", "k": "c", "ts_day": None, "id_bucket": 1},
    ]


def test_kartothek_reads_decimal_truncate_and_time_bucket_partitions(tmp_path: Path) -> None:
    try:
        python = venv.ensure_venv()
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))
    root = tmp_path / "lake"
    with trinity_dbapi.connect(str(root), autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE NAMESPACE s")
        cur.execute(
            "CREATE TABLE s.t (id INT8, amount DECIMAL(9, 2), clock TIME) "
            "PARTITIONED BY (truncate(50, amount), bucket(3, clock))"
        )
        cur.execute(
            "INSERT INTO s.t VALUES (1, 10.65, TIME '22:31:08'), (2, -0.05, TIME '00:00:01'), "
            "(3, 10.99, TIME '22:31:08')"
        )
    rows = _read(python, root, our_tables.dataset_uuid(root, "t"))
    # The keys typed from _common_metadata: the decimal with its scale, the bucket an int
    # ((murmur3 of 81068000000 microseconds, -662762989) & INT_MAX) % 3 and of 1000000.
    late = (-662762989 & 0x7FFFFFFF) % 3
    early = (mmh3.hash((10**6).to_bytes(8, "little"), signed=True) & 0x7FFFFFFF) % 3
    assert rows == [
        {
            "id": 1,
            "amount": "10.65",
            "clock": "22:31:08",
            "amount_trunc": "10.50",
            "clock_bucket": late,
        },
        {
            "id": 2,
            "amount": "-0.05",
            "clock": "00:00:01",
            "amount_trunc": "-0.50",
            "clock_bucket": early,
        },
        {
            "id": 3,
            "amount": "10.99",
            "clock": "22:31:08",
            "amount_trunc": "10.50",
            "clock_bucket": late,
        },
    ]
