"""Lakehouses made through SQL for Kartothek and plateau to read, and SELECT as JSON rows.

Shared by tests/kartothek/test_kartothek_reads_ours.py (Kartothek 5.3 in its
own virtualenv) and tests/tables/test_plateau_reads_ours.py (plateau in the
main environment), so both read exactly the same tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trinity_dbapi
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.tables import managed

from .rows_json import to_json

#: The partition column types of the per-type probe: name -> (SQL type, two values).
#: Table ``s.p_<name>`` holds ids 1 and 2 with the two values in its partition
#: column ``k``; ``s.n_<name>`` holds id 1 with the first value and id 2 with NULL.
PARTITION_TYPES: dict[str, tuple[str, str, str]] = {
    "int2": ("INT2", "1", "-2"),
    "int4": ("INT4", "100000", "-3"),
    "int8": ("INT8", "1099511627776", "-1"),
    "float4": ("FLOAT4", "1.5", "-0.25"),
    "float8": ("FLOAT8", "2.5", "0.001"),
    "decimal": ("DECIMAL(10,2)", "1.50", "-2.25"),
    "varchar": ("VARCHAR", "'a b'", "'süd/1'"),
    "boolean": ("BOOLEAN", "true", "false"),
    "date": ("DATE", "DATE '2024-01-01'", "DATE '2024-02-29'"),
    "timestamp": (
        "TIMESTAMP",
        "TIMESTAMP '2024-01-01 10:30:00'",
        "TIMESTAMP '2024-01-02 00:00:00.123456'",
    ),
    "timestamptz": (
        "TIMESTAMPTZ",
        "TIMESTAMPTZ '2024-01-01 10:30:00+00'",
        "TIMESTAMPTZ '2024-01-02 00:00:00.5+00'",
    ),
}

#: Table ``s.w``: one column of every non-partition kind; row 1 holds values, row 2 NULLs.
WIDE_COLUMNS = (
    "id INT8, b BOOLEAN, i2 INT2, i4 INT4, i8 INT8, f4 FLOAT4, f8 FLOAT8, d DECIMAL(10,2),"
    " c CHAR(3), vc VARCHAR, dt DATE, t TIME, ttz TIMETZ, ts0 TIMESTAMP(0), ts3 TIMESTAMP(3),"
    " ts TIMESTAMP, ts9 TIMESTAMP(9), tstz TIMESTAMPTZ, fx FIXED(4), bin VARBINARY,"
    " st STRUCT<a: INT4, b: VARCHAR>, m MAP<VARCHAR, INT8>, l LIST<FLOAT8>"
)
WIDE_VALUES = (
    "1, true, 1, 2, 3, 1.5, 2.5, 1.25, 'abc', 'x', DATE '2024-01-01', TIME '10:30:00.123456',"
    " TIMETZ '10:30:00+00', TIMESTAMP '2024-01-01 10:30:00', TIMESTAMP '2024-01-01 10:30:00.123',"
    " TIMESTAMP '2024-01-01 10:30:00.123456', TIMESTAMP_NS '2024-01-01 10:30:00.123456789',"
    " TIMESTAMPTZ '2024-01-01 10:30:00+00', '\\x01\\x02\\x03\\x04'::BLOB, '\\xff'::BLOB,"
    " {'a': 1, 'b': 'q'}, MAP {'k': 7}, [1.5, 2.5]"
)
#: What every reader must give for ``s.w`` (``rows_json`` values, and SELECT's).
WIDE_ROWS = [
    {
        "id": 1,
        "b": True,
        "i2": 1,
        "i4": 2,
        "i8": 3,
        "f4": 1.5,
        "f8": 2.5,
        "d": "1.25",
        "c": "abc",
        "vc": "x",
        "dt": "2024-01-01",
        "t": "10:30:00.123456",
        "ttz": "10:30:00",
        "ts0": "2024-01-01T10:30:00",
        "ts3": "2024-01-01T10:30:00.123000",
        "ts": "2024-01-01T10:30:00.123456",
        "ts9": "2024-01-01T10:30:00.123456789",
        "tstz": "2024-01-01T10:30:00+00:00",
        "fx": "0x01020304",
        "bin": "0xff",
        "st": {"a": 1, "b": "q"},
        "m": [["k", 7]],
        "l": [1.5, 2.5],
    },
]
WIDE_ROWS.append({name: 2 if name == "id" else None for name in WIDE_ROWS[0]})


def build_lake(root: Path) -> None:
    """``s.p`` partitioned by ``day`` and ``s.i`` indexed on ``k``, each after
    INSERT, UPDATE, DELETE and ALTER TABLE ADD COLUMN."""
    conn = trinity_dbapi.connect(str(root), create=True, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.p (id INT8, day DATE, name VARCHAR, x FLOAT8) PARTITIONED BY (day)")
    cur.execute(
        "INSERT INTO s.p VALUES (1, DATE '2024-01-01', 'a', 1.5), (2, DATE '2024-01-01', 'b', 2.5),"
        " (3, DATE '2024-01-02', 'c', NULL), (4, DATE '2024-01-03', 'd', 4.25)"
    )
    cur.execute("UPDATE s.p SET name = 'bb', x = 20.5 WHERE id = 2")
    cur.execute("DELETE FROM s.p WHERE id = 4")
    cur.execute("ALTER TABLE s.p ADD COLUMN n INT4")
    cur.execute("INSERT INTO s.p VALUES (5, DATE '2024-01-03', 'e', 5.5, 50)")
    cur.execute("CREATE TABLE s.i (id INT8, k VARCHAR, v INT8)")
    cur.execute("CREATE INDEX by_k ON s.i (k)")
    cur.execute("INSERT INTO s.i VALUES (1, 'x', 10), (2, 'y', 20), (3, 'x', 30)")
    cur.execute("INSERT INTO s.i VALUES (4, 'z', 40)")
    cur.execute("UPDATE s.i SET v = 31 WHERE id = 3")
    cur.execute("DELETE FROM s.i WHERE k = 'y'")
    cur.execute("ALTER TABLE s.i ADD COLUMN w VARCHAR")
    cur.execute("INSERT INTO s.i VALUES (5, 'x', 50, 'new')")
    conn.close()


def build_probe_lake(root: Path) -> None:
    """The per-type probe: ``s.p_<type>`` and ``s.n_<type>`` per :data:`PARTITION_TYPES`, and ``s.w``."""
    conn = trinity_dbapi.connect(str(root), create=True, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    for name, (sql_type, first, second) in PARTITION_TYPES.items():
        for prefix, other in (("p", second), ("n", "NULL")):
            table = f"s.{prefix}_{name}"
            cur.execute(f"CREATE TABLE {table} (id INT8, k {sql_type}, v INT4) PARTITIONED BY (k)")
            cur.execute(f"INSERT INTO {table} VALUES (1, {first}, 10), (2, {other}, 20)")
    cur.execute(f"CREATE TABLE s.w ({WIDE_COLUMNS})")
    cur.execute(f"INSERT INTO s.w VALUES ({WIDE_VALUES})")
    cur.execute("INSERT INTO s.w (id) VALUES (2)")
    conn.close()


def build_clone_lake(root: Path) -> None:
    """``s.c``, a clone of ``s.o`` (partitioned by ``day``, indexed on ``k``) changed on
    both sides, then ``s.o`` dropped and its garbage collected: ``s.c`` reads
    files of its own and files still under the dropped source's dataset
    (docs/datasets.md, decision 25); ``s.c2`` clones ``s.c`` as it was first."""
    conn = trinity_dbapi.connect(str(root), create=True, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.o (id INT8, day DATE, k VARCHAR, x FLOAT8) PARTITIONED BY (day)")
    cur.execute("CREATE INDEX by_k ON s.o (k)")
    cur.execute(
        "INSERT INTO s.o VALUES (1, DATE '2024-01-01', 'x', 1.5), (2, DATE '2024-01-01', 'y', 2.5),"
        " (3, DATE '2024-01-02', 'x', NULL), (4, DATE '2024-01-03', 'z', 4.25)"
    )
    cur.execute("CREATE TABLE s.c CLONE s.o")
    cur.execute("SELECT max(version) FROM system.versions")
    (first,) = cur.fetchone()
    cur.execute("INSERT INTO s.c VALUES (5, DATE '2024-01-03', 'x', 5.5)")
    cur.execute("DELETE FROM s.c WHERE id = 2")
    cur.execute("DELETE FROM s.o WHERE id = 4")
    cur.execute(f"CREATE TABLE s.c2 CLONE s.c FOR SYSTEM_VERSION AS OF {first}")
    cur.execute("DROP TABLE s.o")
    cur.execute(
        "CALL system.expire_versions(older_than => TIMESTAMP '2999-01-01 00:00:00', "
        "retain_last => 1)"
    )
    cur.execute("CALL system.collect_garbage(grace_period_millis => 0)")
    conn.close()


def dataset_uuid(root: Path, table: str) -> str:
    """The dataset UUID of ``s.<table>``."""
    definition = Lakehouse.open(str(root)).begin(read_only=True).load_table("s", table)
    return definition.format_properties[managed.DATASET_UUID]


def select_rows(root: Path, sql: str) -> list[dict[str, Any]]:
    """The rows of ``sql`` as ``rows_json`` dicts, sorted by ``id``."""
    with trinity_dbapi.connect(str(root)) as conn:
        cur = conn.cursor()
        cur.execute(sql)
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    out = [dict(zip(names, map(to_json, row), strict=True)) for row in rows]
    return sorted(out, key=lambda r: r["id"])
