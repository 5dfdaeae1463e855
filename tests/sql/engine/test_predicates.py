"""A WHERE clause as the plain-value predicate files are pruned by (sql/engine/predicates.py).

The SQL engine reads ``column -> allowed values`` and ``column -> ValueRange``
off the AND-ed conditions on a table's own columns; Spark's pushed filters
(spark/read.py) become the same form, and both prune through the one door,
``tables.scan.pruned_labels``. The Spark half runs without a JVM: its reader
is driven as Spark's planner drives it (``pushFilters``, then ``partitions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from sqlglot import exp

import trinity_dbapi
from trinity_dbapi.lakehouse.transaction import Transaction
from trinity_dbapi.sql.engine.predicates import scan_predicate
from trinity_dbapi.sql.statements import parse
from trinity_dbapi.tables import managed, scan
from trinity_dbapi.tables.partitions import ValueRange


def _predicate(sql: str, params: Sequence[Any] = (), table: str = "t") -> dict[str, Any]:
    """The predicate of the first reference to ``table`` in ``sql``."""
    tree = parse(sql)[0].expression
    node = next(t for t in tree.find_all(exp.Table) if t.name == table)
    return scan_predicate(node, params)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        pytest.param("p = 1", {"p": [1]}, id="equal"),
        pytest.param("1 = p", {"p": [1]}, id="equal-flipped"),
        pytest.param("(p = 1)", {"p": [1]}, id="parenthesised"),
        pytest.param("k IN ('a', NULL, 'b')", {"k": ["a", "b"]}, id="in-drops-null"),
        pytest.param("p = NULL", {}, id="equal-null"),
        pytest.param("v >= 3 AND v < 10", {"v": ValueRange(3, 10, False)}, id="range"),
        pytest.param("10 > v", {"v": ValueRange(None, 10, False)}, id="range-flipped"),
        pytest.param("v BETWEEN -2 AND 2.5", {"v": ValueRange(-2, 2.5)}, id="between"),
        pytest.param("d >= DATE '2024-01-01'", {"d": ValueRange("2024-01-01")}, id="typed"),
        pytest.param("p IN (1, 2, 3) AND p = 2", {"p": [2]}, id="points-and-points"),
        pytest.param("v > 5 AND v = 7", {"v": [7]}, id="points-win-over-a-range"),
        pytest.param(
            "v >= 1 AND v >= 3 AND v <= 9 AND v < 9", {"v": ValueRange(3, 9, False)}, id="narrowed"
        ),
        pytest.param("v >= 1 AND v >= 'x'", {"v": ValueRange(1)}, id="mixed-kinds-keep-first"),
        pytest.param("p = 1 OR p = 2", {}, id="or"),
        pytest.param("p = v", {}, id="two-columns"),
        pytest.param("p IN (SELECT 1)", {}, id="subquery"),
        pytest.param("p + 1 = 2", {}, id="expression"),
    ],
)
def test_where_conditions_as_plain_values(where: str, expected: dict[str, Any]) -> None:
    assert _predicate(f"SELECT * FROM s.t WHERE {where}") == expected


def test_parameters_are_their_values() -> None:
    sql = "SELECT * FROM s.t WHERE p = ? AND v < ?"
    assert _predicate(sql, [4, 9]) == {"p": [4], "v": ValueRange(None, 9, False)}


def test_only_columns_surely_of_the_table() -> None:
    join = "SELECT * FROM s.t JOIN s.u ON t.p = u.p WHERE {} "
    assert _predicate(join.format("p = 1")) == {}  # unqualified in a join: whose?
    assert _predicate(join.format("t.p = 1 AND u.v = 2")) == {"p": [1]}
    assert _predicate(join.format("u.p = 1"), table="u") == {"p": [1]}
    # t.p beside both t and other.t names neither surely
    assert _predicate("SELECT * FROM s.t JOIN other.t ON TRUE WHERE t.p = 1") == {}
    assert _predicate("SELECT * FROM s.t JOIN other.t ON TRUE WHERE s.t.p = 1") == {"p": [1]}
    # the outer WHERE does not narrow a subquery's table
    assert _predicate("SELECT * FROM (SELECT * FROM s.t) x WHERE p = 1") == {}


# -- one predicate, one door: the engine and Spark prune the same files ---------------------


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """s.t: partitioned by p and day(ts), indexed on k, in 12 files."""
    root = tmp_path_factory.mktemp("predicate") / "lake"
    conn = trinity_dbapi.connect(str(root), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute(
        "CREATE TABLE s.t (p INT4, k VARCHAR(8), v INT8, ts TIMESTAMP) PARTITIONED BY (p, day(ts))"
    )
    cur.execute("CREATE INDEX by_k ON s.t (k)")
    for batch in range(3):
        rows = [
            (i % 2, f"k{batch}", 10 * batch + i, f"2024-01-0{1 + i // 2 + batch} 12:00:00")
            for i in range(4)
        ]
        cur.executemany("INSERT INTO s.t VALUES (?, ?, ?, ?)", rows)
    yield conn, str(root)
    conn.close()


def _case_filters() -> list[Any]:
    pytest.importorskip("pyspark")
    import datetime

    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, In, LessThan

    day = datetime.datetime(2024, 1, 2)
    return [
        ("p = 1", [EqualTo(("p",), 1)]),
        ("k IN ('k1', 'k9')", [In(("k",), ("k1", "k9"))]),
        ("v = 21", [EqualTo(("v",), 21)]),
        (
            "ts >= TIMESTAMP '2024-01-02 00:00:00' AND ts < TIMESTAMP '2024-01-03 00:00:00'",
            [GreaterThanOrEqual(("ts",), day), LessThan(("ts",), day + datetime.timedelta(1))],
        ),
        ("p = 0 AND k = 'k2' AND p IN (0, 1)", [EqualTo(("p",), 0), EqualTo(("k",), "k2")]),
    ]


def test_the_engine_and_spark_prune_the_same_files_through_one_door(lake: Any) -> None:
    cases = _case_filters()
    from trinity_dbapi.spark.source import TrinityLakeDataSource

    conn, uri = lake
    lakehouse = conn.lakehouse
    storage = lakehouse.storage
    view = Transaction(lakehouse, lakehouse.snapshot(), read_only=True)
    definition = view.load_table("s", "t")
    meta = managed.metadata(storage, definition)
    every = list(meta.partitions)
    assert len(every) == 12
    for where, filters in cases:
        engine = _predicate(f"SELECT * FROM s.t WHERE {where}")
        source = TrinityLakeDataSource({"uri": uri, "path": "s.t"})
        reader = source.reader(source.schema())
        assert list(reader.pushFilters(filters)) == filters  # Spark still evaluates each
        spark_labels = [partition.value for partition in reader.partitions()]
        door = scan.pruned_labels(storage, definition, meta, engine)
        plan = scan.plan_query_scan(storage, definition, engine)
        ids = conn.cursor().execute(f"SELECT v FROM s.t WHERE {where}").fetchall()
        # Value conversions differ (a Spark datetime, the engine's text): the files do not.
        if "ts" not in where:
            assert reader.predicate == engine, where
        assert spark_labels == door == plan.labels, where
        assert 0 < len(door) < len(every), where
        # Pruning skipped no file holding a matching row.
        assert _labels_of(storage, meta, definition, [v for (v,) in ids]) <= set(door), where


def _labels_of(storage: Any, meta: Any, definition: Any, values: list[int]) -> set[str]:
    """The files holding a row whose v is one of ``values``."""
    from trinity_dbapi.tables.reader import read_table

    schema = managed.schema(definition)
    found = set()
    for label in meta.partitions:
        rows = read_table(storage, meta, schema, definition.partition_columns, [label])
        if set(rows.column("v").to_pylist()) & set(values):
            found.add(label)
    return found
