"""A float partition column keeps the sign of zero: -0.0 and 0.0 are two partitions.

Decision (docs/datasets.md, "Partition directories", rule 10a): a partition
value is stored bit-exact in its directory's canonical text, so -0.0 is
``f=-0`` and 0.0 is ``f=0``, also when both come in one INSERT (Arrow sorts
and compares them as equal, which put both in the first one's directory).
SQL equality still holds: ``f = 0.0`` and ``f = -0.0`` find both, through
partition pruning and through an index; NaN is a partition of its own.
"""

from __future__ import annotations

import math
import struct
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_dbapi

ROWS = [(1, 0.0), (2, -0.0), (3, math.nan), (4, 0.0), (5, -0.0), (6, None), (7, 1.5)]


def _bits(value: float | None) -> object:
    """A value as its bits (NaN as one value): tells -0.0 from 0.0."""
    if value is None:
        return None
    return "nan" if math.isnan(value) else struct.pack(">d", value)


@pytest.fixture
def cur() -> Iterator[Any]:
    conn = trinity_dbapi.connect(f"memory://zeros-{uuid.uuid4().hex}", autocommit=True)
    yield conn.cursor()
    conn.close()


def _write(cur: Any, table: str, path: str, rows: list[tuple[int, float | None]]) -> None:
    if path == "execute":  # one INSERT of many rows, the values as parameters
        marks = ", ".join("(?, ?)" for _ in rows)
        cur.execute(f"INSERT INTO {table} VALUES {marks}", [v for row in rows for v in row])
    elif path == "executemany":
        cur.executemany(f"INSERT INTO {table} VALUES (?, ?)", rows)
    elif path == "ingest":
        ids, values = zip(*rows, strict=True)
        cur.ingest(table, pa.table({"id": list(ids), "f": pa.array(values, pa.float64())}))
    else:  # literals: a number with an exponent is a DOUBLE, -0.0e0 keeps its sign
        texts = {0.0: "0.0e0", 1.5: "1.5e0"}

        def text(v: float | None) -> str:
            if v is None:
                return "NULL"
            if math.isnan(v):
                return "'nan'::DOUBLE"
            return ("-" if math.copysign(1, v) < 0 else "") + texts[abs(v)]

        cur.execute(
            f"INSERT INTO {table} VALUES " + ", ".join(f"({i}, {text(v)})" for i, v in rows)
        )


def _stored(cur: Any, table: str) -> list[tuple[int, object]]:
    return [(i, _bits(f)) for i, f in cur.execute(f"SELECT id, f FROM {table} ORDER BY id")]


@pytest.mark.parametrize("path", ["execute", "executemany", "ingest", "literal"])
@pytest.mark.parametrize("sql_type", ["FLOAT4", "FLOAT8"])
def test_both_zeros_and_nan_in_one_insert_read_back_exactly(
    cur: Any, sql_type: str, path: str
) -> None:
    cur.execute(f"CREATE TABLE t (id INT8, f {sql_type}) PARTITIONED BY (f)")
    _write(cur, "t", path, ROWS)
    assert _stored(cur, "t") == [(i, _bits(f)) for i, f in ROWS]
    partitions = cur.execute('SELECT "partition", record_count FROM system.data_files').fetchall()
    assert sorted(partitions) == [
        ("f=-0", 2),
        ("f=0", 2),
        ("f=1.5", 1),
        ("f=__HIVE_DEFAULT_PARTITION__", 1),
        ("f=nan", 1),
    ]


@pytest.mark.parametrize(
    ("where", "params", "ids"),
    [
        ("f = 0.0", [], [1, 2, 4, 5]),
        ("f = -0.0", [], [1, 2, 4, 5]),
        ("f = 0", [], [1, 2, 4, 5]),
        ("f = -0e0", [], [1, 2, 4, 5]),
        ("f = ?", [0.0], [1, 2, 4, 5]),
        ("f = ?", [-0.0], [1, 2, 4, 5]),
        ("f = '-0'::DOUBLE", [], [1, 2, 4, 5]),
        ("f IN (?, 1.5)", [-0.0], [1, 2, 4, 5, 7]),
        ("f <= 0", [], [1, 2, 4, 5]),
        ("f > -1 AND f < 1", [], [1, 2, 4, 5]),
        ("f = 'nan'::DOUBLE", [], [3]),
        ("f IS NULL", [], [6]),
        ("f = 1.5", [], [7]),
    ],
)
@pytest.mark.parametrize("sql_type", ["FLOAT4", "FLOAT8"])
def test_pruning_takes_minus_zero_for_zero(
    cur: Any, sql_type: str, where: str, params: list[Any], ids: list[int]
) -> None:
    cur.execute(f"CREATE TABLE t (id INT8, f {sql_type}) PARTITIONED BY (f)")
    cur.executemany("INSERT INTO t VALUES (?, ?)", ROWS)
    got = cur.execute(f"SELECT id FROM t WHERE {where} ORDER BY id", params).fetchall()
    assert [i for (i,) in got] == ids


@pytest.mark.parametrize("value", [0.0, -0.0])
def test_an_index_finds_both_zeros(cur: Any, value: float) -> None:
    """The index keeps -0.0 and 0.0 apart (Arrow's is_in tells their bits apart)."""
    cur.execute("CREATE TABLE t (id INT8, f FLOAT8)")
    cur.execute("CREATE INDEX by_f ON t (f)")
    cur.executemany("INSERT INTO t VALUES (?, ?)", [(1, -0.0), (2, 1.0)])
    cur.executemany("INSERT INTO t VALUES (?, ?)", [(3, 0.0), (4, 1.0)])
    for where, params in (("f = ?", [value]), (f"f = {value!r}e0", []), ("f IN (?)", [value])):
        got = cur.execute(f"SELECT id, f FROM t WHERE {where} ORDER BY id", params).fetchall()
        assert [(i, _bits(f)) for i, f in got] == [(1, _bits(-0.0)), (3, _bits(0.0))], where


def test_rewriting_a_partition_keeps_its_sign(cur: Any) -> None:
    cur.execute("CREATE TABLE t (id INT8, f FLOAT8, note VARCHAR) PARTITIONED BY (f)")
    cur.executemany("INSERT INTO t VALUES (?, ?, ?)", [(1, -0.0, "a"), (2, 0.0, "b")])
    cur.executemany("INSERT INTO t VALUES (?, ?, ?)", [(3, -0.0, "c"), (4, 0.0, "d")])
    cur.execute("UPDATE t SET note = 'x' WHERE id IN (1, 2)")
    cur.execute("CALL system.rewrite_data_files('t')")
    rows = cur.execute("SELECT id, f, note FROM t ORDER BY id").fetchall()
    assert [(i, _bits(f), n) for i, f, n in rows] == [
        (1, _bits(-0.0), "x"),
        (2, _bits(0.0), "x"),
        (3, _bits(-0.0), "c"),
        (4, _bits(0.0), "d"),
    ]
    partitions = cur.execute('SELECT DISTINCT "partition" FROM system.data_files').fetchall()
    assert sorted(partitions) == [("f=-0",), ("f=0",)]


VALUES = st.sampled_from([0.0, -0.0, math.nan, 1.5, -1.5, math.inf, -math.inf, None, 5e-324])


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(values=st.lists(VALUES, min_size=1, max_size=12))
def test_every_float_partition_value_reads_back_bit_exact(values: list[float | None]) -> None:
    with trinity_dbapi.connect(f"memory://zeros-{uuid.uuid4().hex}", autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE t (id INT8, f FLOAT8) PARTITIONED BY (f)")
        rows = list(enumerate(values))
        cur.executemany("INSERT INTO t VALUES (?, ?)", rows)
        assert _stored(cur, "t") == [(i, _bits(f)) for i, f in rows]
        zeros = [i for i, f in rows if f == 0]
        assert [i for (i,) in cur.execute("SELECT id FROM t WHERE f = 0.0 ORDER BY id")] == zeros


@pytest.mark.filterwarnings("ignore")  # plateau's and pandas' deprecations
def test_plateau_reads_each_sign_back(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """plateau (Kartothek's fork) reads the directory ``-0`` as -0.0 (``np.float64('-0')``)."""
    eager = pytest.importorskip("plateau.io.eager")
    minimalkv = pytest.importorskip("minimalkv")
    from tests.kartothek import our_tables

    root = tmp_path / "lake"
    with trinity_dbapi.connect(str(root), create=True, autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE NAMESPACE s")
        cur.execute("CREATE TABLE s.z (id INT8, f FLOAT8) PARTITIONED BY (f)")
        cur.executemany("INSERT INTO s.z VALUES (?, ?)", [(1, 0.0), (2, -0.0), (3, math.nan)])
    store = minimalkv.get_store_from_url(f"hfs://{root}")
    uuid_ = our_tables.dataset_uuid(root, "z")
    frame = eager.read_table(dataset_uuid=uuid_, store=store, predicates=[[("f", "==", 0.0)]])
    assert sorted(int(i) for i in frame["id"]) == [1, 2]
    assert "collision" in caplog.text  # plateau merges the zeros in its own partition index
    frame = eager.read_table(dataset_uuid=uuid_, store=store)
    got = sorted((int(i), _bits(float(f))) for i, f in zip(frame["id"], frame["f"], strict=True))
    assert got == [(1, _bits(0.0)), (2, _bits(-0.0)), (3, "nan")]
