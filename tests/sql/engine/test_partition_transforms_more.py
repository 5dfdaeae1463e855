"""Partition transforms: CTAS, decimal and time sources, and dropping unused partitionings."""

from __future__ import annotations

import datetime
import decimal
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.format.definitions import PARTITION_TRANSFORMS
from trinity_dbapi.tables import managed, scan
from trinity_dbapi.tables.metadata import PARTITION_SPECS_KEY, PARTITION_TRANSFORMS_KEY
from trinity_dbapi.tables.transforms import Transform

D = decimal.Decimal
INT_MAX = 2**31 - 1


def _connect(path: Path) -> Any:
    conn = trinity_dbapi.connect(str(path / "lake"), autocommit=True)
    conn.cursor().execute("CREATE NAMESPACE ns")
    return conn


def _meta(conn: Any, name: str = "t") -> Any:
    definition = conn.lakehouse.begin().load_table("ns", name)
    return definition, managed.metadata(conn.lakehouse.storage, definition)


def _directories(conn: Any, name: str = "t") -> list[str]:
    return sorted(label.rpartition("/")[0] for label in _meta(conn, name)[1].partitions)


def _bucket(values: list[Any], type_: pa.DataType, n: int = INT_MAX) -> list[Any]:
    return Transform("b", "bucket", "c", n).apply(pa.array(values, type_)).to_pylist()


def _truncate(values: list[Any], type_: pa.DataType, w: int) -> list[Any]:
    return Transform("t", "truncate", "c", w).apply(pa.array(values, type_)).to_pylist()


# -- the values: Iceberg's spec and pyiceberg ------------------------------------------


def test_decimal_time_and_fixed_follow_the_iceberg_spec_vectors() -> None:
    # Appendix B's hashes, masked to non-negative as the bucket transform does.
    assert _bucket([D("14.20"), None], pa.decimal128(4, 2)) == [-500754589 & INT_MAX, None]
    assert _bucket([D("14.20")], pa.decimal128(38, 2)) == [-500754589 & INT_MAX]
    moment = datetime.time(22, 31, 8)
    for type_ in (pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns")):
        assert _bucket([moment], type_) == [-662762989 & INT_MAX], type_
    assert _bucket([b"\x00\x01\x02\x03"], pa.binary(4)) == [-188683207 & INT_MAX]
    # "Truncate Transform Details": 10.65 with W = 50 is 10.50 (W in units of the scale).
    assert _truncate([D("10.65"), D("-0.05"), D("0.49"), None], pa.decimal128(4, 2), 50) == [
        D("10.50"),
        D("-0.50"),
        D("0.00"),
        None,
    ]
    # 38 digits stay exact (Python's decimal context would round to 28).
    wide = D("12345678901234567890123456789012345.678")
    assert _truncate([wide], pa.decimal128(38, 3), 10) == [
        D("12345678901234567890123456789012345.670")
    ]
    with pytest.raises(errors.DataError, match=r"truncates to -10000 units of scale 2"):
        _truncate([D("-99.99")], pa.decimal128(4, 2), 50)


def test_the_values_equal_pyicebergs_transforms() -> None:
    transforms = pytest.importorskip("pyiceberg.transforms")
    types = pytest.importorskip("pyiceberg.types")
    from pyiceberg.utils.datetime import time_to_micros

    rnd = random.Random(19)
    decimals = [D(rnd.randrange(-(10**9), 10**9)).scaleb(-3) for _ in range(200)]
    times = [
        datetime.time(rnd.randrange(24), rnd.randrange(60), rnd.randrange(60), rnd.randrange(10**6))
        for _ in range(200)
    ]
    fixed = [rnd.randbytes(5) for _ in range(50)]
    for n in (1, 7, 16, 1000):
        expected = transforms.BucketTransform(n).transform(types.DecimalType(12, 3))
        assert _bucket(decimals, pa.decimal128(12, 3), n) == [expected(v) for v in decimals]
        expected = transforms.BucketTransform(n).transform(types.TimeType())
        got = _bucket(times, pa.time64("us"), n)
        assert got == [expected(time_to_micros(v)) for v in times]
        expected = transforms.BucketTransform(n).transform(types.FixedType(5))
        assert _bucket(fixed, pa.binary(5), n) == [expected(v) for v in fixed]
    for w in (1, 3, 50, 10**4):
        expected = transforms.TruncateTransform(w).transform(types.DecimalType(12, 3))
        got = _truncate(decimals, pa.decimal128(12, 3), w)
        assert got == [expected(v) for v in decimals]


# -- SQL: tables partitioned by decimal and time transforms -----------------------------

COLUMNS = "id INT8, amount DECIMAL(9, 2), clock TIME, code FIXED(2)"
SPEC = "truncate(500, amount), bucket(4, amount), bucket(3, clock), bucket(2, code)"


def _rows(n: int = 120) -> list[tuple[Any, ...]]:
    rnd = random.Random(3)
    rows = []
    for i in range(n):
        amount = None if i % 11 == 0 else D(rnd.randrange(-5000, 5000)).scaleb(-2)
        at = None if i % 13 == 0 else datetime.time(rnd.randrange(24), rnd.randrange(60))
        rows.append((i, amount, at, bytes([i % 3, 1])))
    return rows


def test_decimal_and_time_partitions_prune_and_read_as_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.sql.engine import query

    conn = _connect(tmp_path)
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE ns.t ({COLUMNS}) PARTITIONED BY ({SPEC})")
    rows = _rows()
    cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?, ?)", rows)
    duck = duckdb.connect()
    duck.execute("CREATE TABLE t (id BIGINT, amount DECIMAL(9, 2), clock TIME, code BLOB)")
    duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    directories = _directories(conn)
    first = directories[0].split("/")
    assert [part.partition("=")[0] for part in first] == [
        "amount_trunc",
        "amount_bucket",
        "clock_bucket",
        "code_bucket",
    ]
    # The directory of a row holds its transformed values.
    row = next(r for r in rows if r[1] is not None and r[2] is not None)
    trunc = _truncate([row[1]], pa.decimal128(9, 2), 500)[0]
    assert any(
        d.startswith(
            f"amount_trunc={trunc}/amount_bucket={_bucket([row[1]], pa.decimal128(9, 2), 4)[0]}/"
        )
        for d in directories
    )
    scanned: list[int] = []
    real = query.table_scan

    def recording(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        scanned.append(len(getattr(result, "paths", getattr(result, "files", ()))))
        return result

    monkeypatch.setattr(query, "table_scan", recording)
    total = len(_meta(conn)[1].partitions)
    amounts = [r[1] for r in rows if r[1] is not None]
    times = [r[2] for r in rows if r[2] is not None]
    for sql, params in [
        ("SELECT * FROM {t} ORDER BY id", []),
        ("SELECT id FROM {t} WHERE amount = ? ORDER BY id", [amounts[5]]),
        ("SELECT id FROM {t} WHERE amount IN (?, ?) ORDER BY id", [amounts[1], amounts[9]]),
        ("SELECT id FROM {t} WHERE clock = ? ORDER BY id", [times[4]]),
        ("SELECT id FROM {t} WHERE clock = ? AND amount = ? ORDER BY id", [times[0], amounts[0]]),
        ("SELECT id FROM {t} WHERE amount IS NULL ORDER BY id", []),
        ("SELECT id FROM {t} WHERE amount = 12.345 ORDER BY id", []),
        # truncate only grows with the value: ranges prune by it.
        ("SELECT id FROM {t} WHERE amount >= ? AND amount < ? ORDER BY id", [D("-10"), D("5")]),
        ("SELECT id FROM {t} WHERE amount BETWEEN -3 AND 4.99 ORDER BY id", []),
        ("SELECT id FROM {t} WHERE amount > 45 ORDER BY id", []),
        ("SELECT id FROM {t} WHERE amount <= -45.00 ORDER BY id", []),
        ("SELECT id FROM {t} WHERE amount < -5.005 ORDER BY id", []),  # inexact: no pruning
    ]:
        scanned.clear()
        got = cur.execute(sql.format(t="ns.t"), params).fetchall()
        assert got == duck.execute(sql.format(t="t"), params).fetchall(), sql
        if "WHERE" in sql and "IS NULL" not in sql and "5.005" not in sql:
            assert scanned and scanned[0] < total, (sql, scanned, total)
    # Every range, pruned, finds what the full scan finds.
    rnd = random.Random(5)
    for _ in range(40):
        low, high = sorted(D(rnd.randrange(-6000, 6000)).scaleb(-2) for _ in range(2))
        for op in ("<", "<="):
            sql = f"SELECT id FROM {{t}} WHERE amount >= ? AND amount {op} ? ORDER BY id"
            got = cur.execute(sql.format(t="ns.t"), [low, high]).fetchall()
            assert got == duck.execute(sql.format(t="t"), [low, high]).fetchall(), (low, high)
    # Spark's pruning takes the same predicates.
    definition, meta = _meta(conn)
    labels = scan.pruned_labels(conn.lakehouse.storage, definition, meta, {"clock": [times[4]]})
    assert 0 < len(labels) < total
    assert {lb.split("/")[2] for lb in labels} == {
        f"clock_bucket={_bucket([times[4]], pa.time64('us'), 3)[0]}"
    }
    conn.close()


# -- CREATE TABLE ... AS with transforms -----------------------------------------------


def test_ctas_with_transforms_makes_the_table_create_and_insert_make(tmp_path: Path) -> None:
    conn = _connect(tmp_path)
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE ns.src AS SELECT i::INT8 AS id, TIMESTAMPTZ '2024-01-01 00:00:00+00' "
        "+ i * INTERVAL 5 HOUR AS ts, ('n' || (i % 7))::VARCHAR AS name, "
        "(i * 3.25)::DECIMAL(8, 2) AS amount FROM range(60) r(i)"
    )
    spec = "day(ts), bucket(4, id), truncate(1, name), truncate(100, amount)"
    cur.execute(f"CREATE TABLE ns.a PARTITIONED BY ({spec}) AS SELECT * FROM ns.src")
    cur.execute(
        "CREATE TABLE ns.b (id INT8, ts TIMESTAMPTZ(6), name VARCHAR, amount DECIMAL(8, 2)) "
        f"PARTITIONED BY ({spec})"
    )
    cur.execute("INSERT INTO ns.b SELECT * FROM ns.src")
    (a_text,) = cur.execute("SHOW CREATE TABLE ns.a").fetchone()
    (b_text,) = cur.execute("SHOW CREATE TABLE ns.b").fetchone()
    assert a_text == b_text.replace('"ns"."b"', '"ns"."a"')
    assert _directories(conn, "a") == _directories(conn, "b")
    assert len(set(_directories(conn, "a"))) > 10
    assert (
        cur.execute("SELECT * FROM ns.a ORDER BY id").fetchall()
        == cur.execute("SELECT * FROM ns.b ORDER BY id").fetchall()
    )
    day = "WHERE ts >= '2024-01-02' AND ts < '2024-01-03' ORDER BY id"
    assert cur.execute(f"SELECT id FROM ns.a {day}").fetchall() == [(i,) for i in range(5, 10)]
    conn.close()


@pytest.mark.parametrize(
    ("sql", "error", "words"),
    [
        ("PARTITIONED BY (day(nope)) AS SELECT 1 AS id", errors.ProgrammingError, "'nope'"),
        ("PARTITIONED BY (day(id)) AS SELECT 1 AS id", errors.NotSupportedError, "day takes"),
        (
            "PARTITIONED BY (day(ts)) AS SELECT TIMESTAMP '2024-01-01' AS ts, 1 AS ts_day",
            errors.ProgrammingError,
            "directory name 'ts_day', which is a column",
        ),
        (
            "PARTITIONED BY (bucket(2, id), bucket(3, id)) AS SELECT 1 AS id",
            errors.ProgrammingError,
            "directory name 'id_bucket' appears twice",
        ),
    ],
)
def test_ctas_refuses_bad_transforms_and_leaves_no_table(
    tmp_path: Path, sql: str, error: type, words: str
) -> None:
    conn = _connect(tmp_path)
    cur = conn.cursor()
    with pytest.raises(error, match=words):
        cur.execute(f"CREATE TABLE ns.t {sql}")
    assert cur.execute("SHOW TABLES IN ns").fetchall() == []
    conn.close()


# -- earlier partitionings leave the metadata with their last file ---------------------


def _specs(conn: Any) -> tuple[list[list[str]] | None, set[str], set[str]]:
    """Earlier partitionings, transforms of the dataset metadata, and of the definition."""
    definition, meta = _meta(conn)
    specs = meta.metadata.get(PARTITION_SPECS_KEY)
    in_meta = set(json.loads(meta.metadata.get(PARTITION_TRANSFORMS_KEY, "{}")))
    in_definition = set(json.loads(definition.format_properties.get(PARTITION_TRANSFORMS, "{}")))
    return (None if specs is None else json.loads(specs)), in_meta, in_definition


def _two_partitionings(conn: Any) -> Any:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (id INT8, ts TIMESTAMPTZ) PARTITIONED BY (bucket(2, id))")
    insert = (
        "INSERT INTO ns.t SELECT i, TIMESTAMPTZ '2024-01-01 00:00:00+00' + i * INTERVAL 7 HOUR "
        "FROM range(?, ?) r(i)"
    )
    for start in range(0, 10, 2):  # several files in each bucket: compaction has work
        cur.execute(insert, [start, start + 2])
    assert all(n > 1 for n in Counter(_directories(conn)).values())
    cur.execute("ALTER TABLE ns.t SET PARTITIONED BY (day(ts))")
    cur.execute(insert, [10, 20])
    assert _specs(conn) == ([["id_bucket"]], {"ts_day", "id_bucket"}, {"ts_day", "id_bucket"})
    return cur


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM ns.t WHERE id < 10",
        "TRUNCATE TABLE ns.t",
        "CALL system.rewrite_data_files('ns.t', min_input_files => 2)",
        "UPDATE ns.t SET id = id + 100 WHERE id < 10",
    ],
)
def test_an_earlier_partitioning_goes_with_its_last_file(tmp_path: Path, statement: str) -> None:
    conn = _connect(tmp_path)
    cur = _two_partitionings(conn)
    expected = cur.execute("SELECT id, ts FROM ns.t ORDER BY id").fetchall()
    if statement.startswith("DELETE"):
        # Some of its files remain: the partitioning stays.
        cur.execute("DELETE FROM ns.t WHERE id IN (0, 1)")
        assert _specs(conn)[0] == [["id_bucket"]]
    cur.execute(statement)
    assert _specs(conn) == (None, {"ts_day"}, {"ts_day"})
    assert all(d.startswith("ts_day=") for d in _directories(conn))
    rows = cur.execute("SELECT id, ts FROM ns.t ORDER BY id").fetchall()
    if statement.startswith("DELETE"):
        expected = [r for r in expected if r[0] >= 10]
    elif statement.startswith("TRUNCATE"):
        expected = []
    elif statement.startswith("UPDATE"):
        expected = sorted((i + 100 if i < 10 else i, ts) for i, ts in expected)
    assert rows == expected
    # The name id_bucket is free again: another width takes it.
    cur.execute("ALTER TABLE ns.t SET PARTITIONED BY (bucket(3, id))")
    cur.execute("INSERT INTO ns.t VALUES (500, TIMESTAMPTZ '2025-05-05 05:00:00+00')")
    assert cur.execute("SELECT ts FROM ns.t WHERE id = 500").fetchall() == [
        (datetime.datetime(2025, 5, 5, 5, tzinfo=datetime.timezone.utc),)
    ]
    assert _specs(conn)[0] == ([["ts_day"]] if rows else None)
    conn.close()


def test_an_append_or_a_partial_delete_keeps_a_partitioning_files_still_have(
    tmp_path: Path,
) -> None:
    conn = _connect(tmp_path)
    cur = _two_partitionings(conn)
    cur.execute("INSERT INTO ns.t VALUES (99, NULL)")
    cur.execute("DELETE FROM ns.t WHERE id = 3")
    assert _specs(conn) == ([["id_bucket"]], {"ts_day", "id_bucket"}, {"ts_day", "id_bucket"})
    with pytest.raises(errors.ProgrammingError, match="whose files the table still has"):
        cur.execute("ALTER TABLE ns.t SET PARTITIONED BY (bucket(3, id))")
    # A read pruned by the old partitioning still finds its files.
    assert cur.execute("SELECT id FROM ns.t WHERE id IN (2, 4, 12) ORDER BY id").fetchall() == [
        (2,),
        (4,),
        (12,),
    ]
    conn.close()


def test_files_written_the_old_way_conflict_after_a_concurrent_repartitioning(
    tmp_path: Path,
) -> None:
    conn = _connect(tmp_path)
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (id INT8, v INT4) PARTITIONED BY (bucket(2, id))")
    cur.execute("INSERT INTO ns.t VALUES (1, 1)")
    other = trinity_dbapi.connect(str(tmp_path / "lake"))
    other.cursor().execute("INSERT INTO ns.t VALUES (2, 2)")  # written as bucket(2, id)
    cur.execute("ALTER TABLE ns.t SET PARTITIONED BY (v)")
    cur.execute("DELETE FROM ns.t")  # the last bucket(2, id) file: the partitioning goes
    with pytest.raises(errors.CommitConflictError, match="changed its partitioning"):
        other.commit()
    other.close()
    cur.execute("INSERT INTO ns.t VALUES (3, 3)")
    assert cur.execute("SELECT * FROM ns.t").fetchall() == [(3, 3)]
    assert _directories(conn) == ["v=3"]
    conn.close()


def test_ranges_on_an_integer_truncate_read_only_the_directories_they_reach(
    tmp_path: Path,
) -> None:
    conn = _connect(tmp_path)
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (n INT4, v INT4) PARTITIONED BY (truncate(10, n))")
    cur.execute(
        "INSERT INTO ns.t SELECT CAST(i - 50 AS INT4), CAST(i AS INT4) FROM range(100) r(i)"
    )
    cur.execute("INSERT INTO ns.t VALUES (NULL, -1)")
    definition, meta = _meta(conn)
    storage = conn.lakehouse.storage
    from trinity_dbapi.tables.partitions import ValueRange

    def directories(bounds: ValueRange) -> list[str]:
        labels = scan.pruned_labels(storage, definition, meta, {"n": bounds})
        return sorted(label.rpartition("/")[0] for label in labels)

    assert directories(ValueRange(-11, 5, False)) == [f"n_trunc={v}" for v in (-10, -20, 0)]
    assert directories(ValueRange(None, -41)) == ["n_trunc=-50"]
    assert directories(ValueRange(40, None)) == ["n_trunc=40"]
    rnd = random.Random(11)
    for _ in range(30):
        low, high = sorted(rnd.randrange(-60, 60) for _ in range(2))
        got = cur.execute(
            "SELECT n FROM ns.t WHERE n >= ? AND n < ? ORDER BY n", [low, high]
        ).fetchall()
        assert got == [(n,) for n in range(max(low, -50), min(high, 50))], (low, high)
    conn.close()
