"""MERGE copies only the target rows it can match (``merge_keys``): same results as DuckDB."""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from tests.sql.engine.test_merge import _MATCHED, _NOT_MATCHED, _ROWS, CARDINALITY, acts_twice
from trinity_dbapi.sql.engine import dml, merge, merge_keys

COLUMNS = (
    "id INT4, d DECIMAL(10, 2), ts TIMESTAMPTZ, s VARCHAR(8), l {list}, "
    "st {struct}, day DATE, ok BOOLEAN"
)
OURS = COLUMNS.format(list="LIST<INT4>", struct="STRUCT<a: INT4, b: VARCHAR>")
DUCKS = COLUMNS.format(list="INT4[]", struct="STRUCT(a INT4, b VARCHAR)")
ROWS = [
    f"({i}, {i}.25, TIMESTAMPTZ '2024-01-0{i % 9 + 1} 10:00:00+02', 's{i}', [{i}, NULL], "
    f"{{'a': {i}, 'b': 'b{i}'}}, DATE '2024-02-0{i % 9 + 1}', {'true' if i % 2 else 'false'})"
    for i in range(1, 13)
]
SOURCE = "(VALUES (2, 'two'), (5, 'five'), (5, NULL), (40, 'new'), (NULL, 'null')) AS src(id, s)"

UNIQUE = "(VALUES (2, 'two'), (5, 'five'), (40, 'new')) AS src(id, s)"


def _spy(monkeypatch: pytest.MonkeyPatch, name: str = "matchable") -> list[Any]:
    """What each call of ``merge_keys.<name>`` by the MERGE returned."""
    seen: list[Any] = []
    real = getattr(merge_keys, name)

    def spy(*args: Any) -> Any:
        seen.append(real(*args))
        return seen[-1]

    monkeypatch.setattr(merge, name, spy)
    return seen


def _both(tmp_path: Path, sql: str) -> tuple[Any, Any]:
    """(ours, DuckDB's): rowcount or error text, and the rows in stored order."""
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    for run, columns in ((conn.cursor().execute, OURS), (duck.execute, DUCKS)):
        run(f"CREATE TABLE t ({columns})")
        run("INSERT INTO t VALUES " + ", ".join(ROWS))  # one data file of 12 rows
    try:
        got: Any = conn.cursor().execute(sql).rowcount
    except trinity_dbapi.Error as exc:
        got = str(exc)
    try:
        want: Any = duck.execute(sql).fetchall()[0][0]
    except duckdb.Error as exc:
        want = str(exc)
    ours = conn.cursor().execute("SELECT * FROM t").fetchall()
    theirs = duck.execute("SELECT * FROM t").fetchall()
    conn.close()
    return (got, ours), (want, theirs)


@pytest.mark.parametrize(
    "sql",
    [
        (
            f"MERGE INTO t USING {SOURCE} ON t.id = src.id AND src.s IS NOT NULL "
            "WHEN MATCHED THEN UPDATE SET s = src.s, d = t.d * 2 "
            "WHEN NOT MATCHED THEN INSERT (id, s) VALUES (src.id, src.s)"
        ),
        (
            f"MERGE INTO t AS x USING {SOURCE} ON src.id = x.id AND src.s IS DISTINCT FROM 'five' "
            "WHEN MATCHED AND src.s IS NULL "
            "THEN DELETE WHEN MATCHED THEN UPDATE SET l = [x.id * 10], st = {'a': 0, 'b': src.s}"
        ),
        (
            "MERGE INTO t USING (SELECT id + 1 AS id FROM t WHERE id < 4) AS src USING (id) "
            "WHEN MATCHED THEN UPDATE SET ts = ts + INTERVAL 1 DAY, ok = NOT ok"
        ),
    ],
)
@pytest.mark.parametrize("patched", [True, False], ids=["in-place", "taken-from-the-copy"])
def test_one_file_of_every_type_equals_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sql: str, patched: bool
) -> None:
    """Both ways of building the rewritten file: new values patched into the
    candidate rows (the usual one), and the copy's rows interleaved with the
    rows the semi-join left out (when DuckDB's types do not cast back)."""
    seen = _spy(monkeypatch)
    built: list[Any] = []
    real = merge._patched

    def spy(*args: Any) -> Any:
        built.append(real(*args) if patched else None)
        return built[-1]

    monkeypatch.setattr(merge, "_patched", spy)
    (got, ours), (want, theirs) = _both(tmp_path, sql)
    assert seen and seen[0] is not None and len(seen[0].positions) < 12  # the semi-join ran
    assert built and all((table is not None) == patched for table in built)
    assert got == want
    # The same rows; the old ones in the same order (the unmatched kept their places).
    old = range(1, 13)
    assert [r for r in ours if r[0] in old] == [r for r in theirs if r[0] in old]
    assert sorted(ours, key=repr) == sorted(theirs, key=repr)


def test_statements_without_a_usable_equality_copy_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _spy(monkeypatch)
    counted = _spy(monkeypatch, "count_keys")
    for sql in (
        f"MERGE INTO t USING {SOURCE} ON t.id = src.id WHEN NOT MATCHED BY SOURCE THEN DELETE",
        f"MERGE INTO t USING {UNIQUE} ON t.id + 0 = src.id WHEN MATCHED THEN DELETE",
        f"MERGE INTO t USING {SOURCE} ON t.id < src.id WHEN MATCHED THEN DO NOTHING",
    ):
        (got, ours), (want, theirs) = _both(tmp_path / str(len(counted)), sql)
        assert counted[-1] is None  # no keys to count: every candidate row is copied
        assert got == want and sorted(ours, key=repr) == sorted(theirs, key=repr)
    assert not seen  # so no semi-join ran


def _leftovers(conn: Any) -> list[str]:
    """Temporary keys tables left in the connection's private DuckDB."""
    duck = conn.session.duckdb()
    names = duck.execute("SELECT table_name FROM duckdb_tables()").fetchall()
    return [name for (name,) in names if name.startswith("__trinity_keys_")]


def test_the_keys_are_counted_while_the_rows_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read waits until the keys are counted: only a read on another thread can."""
    counted = threading.Event()
    readers: list[str] = []
    real_count, real_read = merge_keys.count_keys, dml.Target.rows_with_owners

    def count(*args: Any) -> Any:
        try:
            return real_count(*args)
        finally:
            counted.set()

    def read(self: Any, files: Any) -> Any:
        readers.append(threading.current_thread().name)
        assert counted.wait(10), "the keys were not counted while the rows were read"
        return real_read(self, files)

    monkeypatch.setattr(merge, "count_keys", count)
    monkeypatch.setattr(dml.Target, "rows_with_owners", read)
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT4, s VARCHAR)")
    cur.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    sql = f"MERGE INTO t USING {UNIQUE} ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s"
    assert cur.execute(sql).rowcount == 1
    assert readers and readers[0] != threading.current_thread().name
    assert cur.execute("SELECT * FROM t ORDER BY id").fetchall() == [
        (1, "a"),
        (2, "two"),
        (3, "c"),
    ]
    assert _leftovers(conn) == []
    conn.close()


@pytest.mark.parametrize("failing", ["read", "statement", "none"])
def test_the_counted_keys_are_dropped_whatever_happens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT4, s VARCHAR)")
    cur.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    source = UNIQUE
    if failing == "read":

        def read(self: Any, files: Any) -> Any:
            raise trinity_dbapi.OperationalError("the disk went away")

        monkeypatch.setattr(dml.Target, "rows_with_owners", read)
    elif failing == "statement":  # the keys count, the statement's cast fails
        source = "(VALUES (2, 'x')) AS src(id, s)"
    sql = f"MERGE INTO t USING {source} ON t.id = src.id WHEN MATCHED THEN UPDATE SET "
    sql += "s = CAST(src.s AS INT4)" if failing == "statement" else "s = src.s"
    if failing == "none":
        assert cur.execute(sql).rowcount == 1
    else:
        with pytest.raises(trinity_dbapi.Error):
            cur.execute(sql)
        monkeypatch.undo()
        assert cur.execute("SELECT * FROM t ORDER BY id").fetchall() == [(1, "a"), (2, "b")]
    assert _leftovers(conn) == []
    conn.close()


def test_unchanged_columns_are_kept_and_changed_bits_are_not() -> None:
    """``_same``: only values stored identically count as unchanged."""
    import pyarrow as pa

    def same(old: list[Any], new: list[Any], kind: Any = None) -> bool:
        return merge._same(
            pa.chunked_array([pa.array(old, kind)]), pa.chunked_array([pa.array(new, kind)])
        )

    assert same([1, None, 3], [1, None, 3])
    assert not same([1, None, 3], [1, 2, 3]) and not same([1, 2, 3], [1, None, 3])
    assert not same([1, 2], [1, 5])
    assert same(["a", None], ["a", None]) and not same(["a"], ["b"])
    assert same([0.5, float("nan")], [0.5, float("nan")])
    assert not same([0.0], [-0.0])  # equal, but not the same bits
    assert not same([0.5, None], [0.5, None])  # floats with nulls: taken as changed
    assert not same([[1]], [[1]])  # nested: taken as changed
    assert not merge._same(
        pa.chunked_array([pa.array([1], pa.int32())]), pa.chunked_array([pa.array([1], pa.int64())])
    )


@pytest.mark.parametrize(
    "using",
    [
        (
            "(VALUES (2, 'b', -(0.0::FLOAT8))) AS s(id, w, v) ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET v = s.v, w = s.w"
        ),
        "(VALUES (2, 'b')) AS s(id, w) ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = -t.v, w = s.w",
        "(VALUES (1, 'b')) AS s(id, w) ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 'NaN', w = s.w",
        # -0.0 equals 0.0, yet the new value is another float: it must be written.
        "(VALUES (3, 'b')) AS s(id, w) ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = 0.0, w = s.w",
    ],
)
def test_signed_zeros_and_nans_are_stored_as_duckdb_stores_them(tmp_path: Path, using: str) -> None:
    """A float column whose new values compare equal to the old ones is still
    rewritten when their bits differ (``_same`` compares bits)."""
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    duck = duckdb.connect()
    for run in (conn.cursor().execute, duck.execute):
        run("CREATE TABLE t (id INT4, v FLOAT8, w VARCHAR)")
        run("INSERT INTO t VALUES (1, 'NaN'::FLOAT8, 'a'), (2, 0.0, 'a'), (3, -(0.0::FLOAT8), 'a')")
        run(f"MERGE INTO t USING {using}")

    def signs(rows: list[Any]) -> list[Any]:
        return [(i, repr(v), math.copysign(1.0, v), w) for i, v, w in rows]

    ours = conn.cursor().execute("SELECT * FROM t ORDER BY id").fetchall()
    assert signs(ours) == signs(duck.execute("SELECT * FROM t ORDER BY id").fetchall())
    conn.close()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    target=_ROWS,
    source=_ROWS,
    clauses=st.lists(st.one_of(_MATCHED, _NOT_MATCHED), min_size=1, max_size=3),
    split=st.integers(0, 6),
)
def test_random_merges_on_shared_files_equal_duckdbs(
    tmp_path_factory: pytest.TempPathFactory,
    target: Any,
    source: Any,
    clauses: list[str],
    split: int,
) -> None:
    """Target rows in two files (not one per row), so a rewritten file keeps unmatched rows."""
    conn = trinity_dbapi.connect(str(tmp_path_factory.mktemp("lake")), autocommit=True)
    duck = duckdb.connect()
    duck.execute("CREATE SCHEMA ns")
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    for run in (cur.execute, duck.execute):
        run("CREATE TABLE ns.t (id INT4, v INT4, w VARCHAR)")
        run("CREATE TABLE ns.s (id INT4, v INT4, w VARCHAR)")
    for part in (target[:split], target[split:]):
        if part:
            cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?)", [list(r) for r in part])
            duck.executemany("INSERT INTO ns.t VALUES (?, ?, ?)", [list(r) for r in part])
    if source:
        cur.executemany("INSERT INTO ns.s VALUES (?, ?, ?)", [list(r) for r in source])
        duck.executemany("INSERT INTO ns.s VALUES (?, ?, ?)", [list(r) for r in source])
    sql = "MERGE INTO ns.t USING ns.s ON t.id = s.id " + " ".join(clauses)
    twice = acts_twice(duck, sql, None)
    try:
        want: Any = duck.execute(sql).fetchall()[0][0]
    except duckdb.Error as exc:
        want = str(exc).split("\n")[0]
    if twice and not (isinstance(want, str) and "more than once" not in want):
        want = CARDINALITY
    try:
        got: Any = cur.execute(sql).rowcount
    except trinity_dbapi.Error as exc:
        got = str(exc)
    if isinstance(want, str):
        assert isinstance(got, str) and want.split(": ", 1)[-1] in got
        assert sorted(cur.execute("SELECT * FROM ns.t").fetchall(), key=repr) == sorted(
            target, key=repr
        )
    else:
        assert got == want
        theirs = duck.execute("SELECT * FROM ns.t").fetchall()
        assert sorted(cur.execute("SELECT * FROM ns.t").fetchall(), key=repr) == sorted(
            theirs, key=repr
        )
    conn.close()


def test_patching_steps_aside_when_the_copy_cannot_be_patched_in() -> None:
    """None (the copy's rows are taken as they are) for values that do not cast
    back to the stored type, or rows out of candidate order."""
    import numpy as np
    import pyarrow as pa

    row = merge._ROW
    rows = pa.table({"a": pa.array([1, 2, 3], pa.int64()), row: np.arange(3)})
    owners = pa.array([0, 0, 0], pa.int32())
    touched, changed = pa.array([0], pa.int32()), pa.array([1], pa.int64())

    def patched(values: list[Any], positions: list[int]) -> Any:
        now = pa.table({row: pa.array(positions, pa.int64()), "a": values})
        return merge._patched(rows, owners, 1, touched, changed, now, ["a"])

    assert patched([1, 20, 3, 4], [0, 1, 2, 3]).to_pylist() == [{"a": v} for v in (1, 20, 3, 4)]
    assert patched([1, 3], [0, 2]).to_pylist() == [{"a": 1}, {"a": 3}]  # row 1 deleted
    assert patched(["1", "x", "3"], [0, 1, 2]) is None  # 'x' is no BIGINT
    assert patched([2, 1, 3], [1, 0, 2]) is None  # not in candidate order


@pytest.mark.parametrize(
    ("source", "repeated"),
    [
        ("(VALUES (2, 'a'), (5, 'b'), (40, 'c')) AS src(id, s)", False),
        ("(VALUES (2, 'a'), (2, 'b')) AS src(id, s)", True),
        # Two keys that differ as text but equal the target's 2 after DuckDB's cast.
        ("(VALUES ('2', 'a'), ('02', 'b')) AS src(id, s)", True),
    ],
)
def test_the_cardinality_check_runs_only_when_a_row_can_match_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, repeated: bool
) -> None:
    seen = _spy(monkeypatch)
    checks: list[Any] = []
    real = merge._cardinality_check
    monkeypatch.setattr(
        merge, "_cardinality_check", lambda *args: checks.append(args) or real(*args)
    )
    sql = f"MERGE INTO t USING {source} ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s"
    (got, ours), (want, theirs) = _both(tmp_path, sql)
    assert seen[0] is not None and seen[0].repeated is repeated
    assert bool(checks) is repeated  # the check query ran only where it could find something
    if repeated:
        assert "cannot affect the same target row more than once" in got
        assert all(row[3] not in ("a", "b") for row in ours)  # nothing written
    else:
        assert got == want and sorted(ours, key=repr) == sorted(theirs, key=repr)


@pytest.mark.parametrize(
    ("source", "varying"),
    [
        ("(SELECT id, s FROM t) AS src", False),
        ("(SELECT id + 1 AS id, upper(s) AS s FROM t WHERE year(day) > 2000) AS src", False),
        ("(SELECT (random() * 20)::INT4 AS id, 'x' AS s) AS src", True),
        ("(SELECT id, gen_random_uuid()::VARCHAR AS s FROM t) AS src", True),
        ("(SELECT epoch(now())::INT4 AS id, 'x' AS s) AS src", True),
        ("(SELECT id, s FROM t WHERE day < current_date) AS src", True),
        ("(SELECT * FROM t USING SAMPLE 50%) AS src", True),
    ],
)
def test_a_source_that_may_vary_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, varying: bool
) -> None:
    """No keys are counted from a source whose two reads may differ: the
    statement's own read is the only one, as in DuckDB."""
    counted = _spy(monkeypatch, "count_keys")
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT4, s VARCHAR, day DATE)")
    cur.execute("INSERT INTO t VALUES (1, 'a', DATE '2024-01-01'), (2, 'b', DATE '2024-01-02')")
    cur.execute(
        f"MERGE INTO t USING {source} ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s"
    )
    assert (counted[0] is None) is varying
    conn.close()


def test_a_view_that_varies_makes_the_source_vary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = _spy(monkeypatch, "count_keys")
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT4, s VARCHAR)")
    cur.execute("INSERT INTO t VALUES (1, 'a')")
    cur.execute("CREATE VIEW steady AS SELECT id, 'x' AS s FROM t")
    cur.execute("CREATE VIEW dice AS SELECT (random() * 3)::INT4 AS id, 'x' AS s")
    for view, varying in (("steady", False), ("dice", True)):
        sql = f"MERGE INTO t USING {view} AS src ON t.id = src.id WHEN MATCHED THEN UPDATE SET s = src.s"
        cur.execute(sql)
        assert (counted[-1] is None) is varying
    conn.close()


def test_a_random_source_matches_or_inserts_each_row_once(tmp_path: Path) -> None:
    """Read twice, a random key could miss the row it then matches and insert it again."""
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT4, n INT4)")
    cur.execute("INSERT INTO t SELECT range::INT4, 0 FROM range(100)")
    sql = (
        "MERGE INTO t USING (SELECT (random() * 199)::INT4 AS id) AS src ON t.id = src.id "
        "WHEN MATCHED THEN UPDATE SET n = t.n + 1 WHEN NOT MATCHED THEN INSERT VALUES (src.id, 1)"
    )
    for _ in range(20):
        assert cur.execute(sql).rowcount == 1
    ids = [row[0] for row in cur.execute("SELECT id FROM t").fetchall()]
    assert len(ids) == len(set(ids))  # no id twice
    assert cur.execute("SELECT sum(n) FROM t").fetchone() == (20,)
    conn.close()
