"""The Quickstart's demo job, run as a user would run it: twice, in a fresh folder."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import trinity_dbapi

#: Lines every run prints, whatever the run number.
EVERY_RUN = [
    "trinity> SHOW NAMESPACES",
    " information_schema",
    " ops",
    " sales",
    " system",
    "trinity> SHOW TABLES IN sales",
    " customers",
    " orders",
    "trinity> DESCRIBE sales.orders",
    (
        'CREATE TABLE "sales"."customers" ("customer" VARCHAR(64) NOT NULL COMMENT '
        '\'customer code\', "country" CHAR(2), "tags" LIST<VARCHAR(16)>, "address" '
        'STRUCT<street: VARCHAR(128), city: VARCHAR(64)>, PRIMARY KEY ("customer")) '
        "COMMENT 'One row per customer'"
    ),
    "trinity> BEGIN",
    "trinity> COMMIT",
    " ops       |      1 |       4 |           0 |            4",
    " tags        | VARCHAR[]                                | list<varchar(16)>",
    (
        ' address     | STRUCT("street" VARCHAR, "city" VARCHAR) | '
        "struct<street: varchar(128), city: varchar(64)>"
    ),
    "     -> LEFT JOIN system.columns FOR SYSTEM_VERSION AS OF ? AS old",
]


#: DESCRIBE sales.orders on the first run (later runs show the added columns too).
FIRST_DESCRIBE = [
    (
        " order_id    | int8                                                            | false    "
        "| order number | true        | false"
    ),
    (
        " order_day   | date                                                            | false    "
        "| NULL         | true        | true"
    ),
    (
        " lines       | list<struct<sku: varchar(32), qty: int4, price: decimal(12,2)>> | true     "
        "| NULL         | false       | false"
    ),
]


def _run(cwd: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "trinity_dbapi.demo"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return done.stdout.splitlines()


def _check_common(lines: list[str]) -> None:
    missing = [line for line in EVERY_RUN if line not in lines]
    assert not missing, missing


def _bulk_seconds(lines: list[str], version: int) -> float:
    pattern = rf"bulk load: 2,000 tables in one transaction, version {version}, ([0-9.]+) s"
    (seconds,) = [float(m.group(1)) for line in lines if (m := re.fullmatch(pattern, line))]
    return seconds


def _depth(lines: list[str], versions: int) -> int:
    pattern = rf"history: {versions} versions; tree depth (\d+) \(order 8\)"
    (depth,) = [int(m.group(1)) for line in lines if (m := re.fullmatch(pattern, line))]
    return depth


def test_demo_creates_queries_and_grows(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert re.fullmatch(r"created a lakehouse in file://.*/demo-lakehouse/ \(version 0\)", first[0])
    _check_common(first)
    assert not [line for line in FIRST_DESCRIBE if line not in first]
    assert "OK, 2,000 tables" in first
    assert "     -> -- and 1,999 more, up to bulk.b1_t1999" in first
    assert _bulk_seconds(first, 6) > 0  # printed; never a timing assertion in a test
    assert " bulk      |   2000 |    4000 |           0 |            2" in first
    assert " sales     |      2 |       9 |           3 |            5" in first
    assert "     -> -- parameters: 6" in first
    assert f" note_1      | {'varchar(200)':<63} | true" in first
    assert "       7 |       1 | table sales.orders" in first
    assert "       6 |    2001 | namespace bulk" in first
    assert _depth(first, 8) >= 3

    lake = str(tmp_path / "demo-lakehouse")
    with trinity_dbapi.connect(lake, create=False, read_only=True) as conn:
        tables = conn.execute("SELECT count(*) FROM system.tables").fetchone()
        assert tables == (2_003,)

    second = _run(tmp_path)
    assert re.fullmatch(
        r"opened the lakehouse in file://.*/demo-lakehouse/ \(version 7\)", second[0]
    )
    _check_common(second)
    describe_note_1 = "| true     | added by run 1 | false       | false"  # run 1's ALTER
    assert f" note_1      | {'varchar(200)':<63} {describe_note_1}" in second
    assert " bulk" in second  # SHOW NAMESPACES now lists the first run's bulk namespace
    assert "     -> -- and 1,999 more, up to bulk.b2_t1999" in second
    assert _bulk_seconds(second, 8) > 0
    assert " bulk      |   4000 |    8000 |           0 |            2" in second
    assert f" note_1      | {'varchar(200)':<63} | false" in second
    assert f" note_2      | {'varchar(200)':<63} | true" in second
    assert "       9 |       1 | table sales.orders" in second
    assert "       8 |    2000 | table bulk.b2_t0000" in second
    assert _depth(second, 10) >= 3
