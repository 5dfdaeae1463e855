"""Tables that hold data: INSERT, SELECT, DELETE, UPDATE, TRUNCATE, CTAS and indices via SQL."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.tables import managed


@pytest.fixture(params=["SERIALIZABLE", "SNAPSHOT"])
def conn(tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    # Every behaviour test runs at both isolation levels.
    connection = trinity_dbapi.connect(
        str(tmp_path / "lake"), autocommit=True, isolation_level=request.param
    )
    connection.cursor().execute("CREATE NAMESPACE ns")
    yield connection
    connection.close()


def rows(conn: Any, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    return conn.cursor().execute(sql, params).fetchall()


def files(conn: Any, table: str) -> dict[str, str]:
    namespace, name = table.split(".")
    definition = conn.lakehouse.begin().load_table(namespace, name)
    return managed.metadata(conn.lakehouse.storage, definition).files()


def test_insert_values_and_select(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (id INT8 NOT NULL, name VARCHAR(20), amount DECIMAL(10, 2))")
    cur.execute("INSERT INTO ns.t VALUES (1, 'a', 1.50), (2, 'b', NULL)")
    assert cur.rowcount == 2
    cur.execute("INSERT INTO ns.t (name, id) VALUES (?, ?)", ["c", 3])
    assert cur.rowcount == 1
    assert rows(conn, "SELECT * FROM ns.t ORDER BY id") == [
        (1, "a", decimal.Decimal("1.50")),
        (2, "b", None),
        (3, "c", None),
    ]
    assert len(files(conn, "ns.t")) == 2  # one file per INSERT


def test_not_null_and_type_errors_name_the_column(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (id INT4 NOT NULL, small INT2)")
    with pytest.raises(errors.IntegrityError, match="id"):
        cur.execute("INSERT INTO ns.t (small) VALUES (1)")
    with pytest.raises(errors.DataError, match="small"):
        cur.execute("INSERT INTO ns.t VALUES (1, 100000)")
    assert rows(conn, "SELECT count(*) FROM ns.t") == [(0,)]
    assert files(conn, "ns.t") == {}


def test_partitioned_table_layout_and_pruned_reads(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE ns.events (day DATE, kind VARCHAR(10), n INT4) PARTITIONED BY (day, kind)"
    )
    cur.execute(
        "INSERT INTO ns.events VALUES (DATE '2024-01-01', 'a/b', 1), (DATE '2024-01-01', 'c', 2), "
        "(DATE '2024-01-02', 'a/b', 3)"
    )
    labels = sorted(files(conn, "ns.events"))
    assert [label.rsplit("/", 1)[0] for label in labels] == [
        "day=2024-01-01/kind=a%2Fb",
        "day=2024-01-01/kind=c",
        "day=2024-01-02/kind=a%2Fb",
    ]
    assert rows(conn, "SELECT day, kind, n FROM ns.events WHERE kind = 'a/b' ORDER BY n") == [
        (datetime.date(2024, 1, 1), "a/b", 1),
        (datetime.date(2024, 1, 2), "a/b", 3),
    ]


def test_delete_rewrites_only_affected_files(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (p INT4, v INT4) PARTITIONED BY (p)")
    cur.execute("INSERT INTO ns.t VALUES (1, 10), (1, 11), (2, 20), (3, 30)")
    before = files(conn, "ns.t")
    cur.execute("DELETE FROM ns.t WHERE v = ?", [11])
    assert cur.rowcount == 1
    after = files(conn, "ns.t")
    unchanged = {label for label in before if label.startswith(("p=2/", "p=3/"))}
    assert unchanged <= after.keys()  # untouched files are kept as they are
    assert not any(label in after for label in before if label.startswith("p=1/"))
    assert rows(conn, "SELECT p, v FROM ns.t ORDER BY v") == [(1, 10), (2, 20), (3, 30)]
    cur.execute("DELETE FROM ns.t WHERE p = 2")
    assert cur.rowcount == 1
    assert not any(label.startswith("p=2/") for label in files(conn, "ns.t"))
    cur.execute("DELETE FROM ns.t WHERE v > 1000")
    assert cur.rowcount == 0


def test_update_including_a_partition_column(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (p INT4, v VARCHAR(5)) PARTITIONED BY (p)")
    cur.execute("INSERT INTO ns.t VALUES (1, 'a'), (1, 'b'), (2, 'c')")
    cur.execute("UPDATE ns.t SET v = v || ?, p = 9 WHERE v = 'a'", ["!"])
    assert cur.rowcount == 1
    assert rows(conn, "SELECT p, v FROM ns.t ORDER BY v") == [(9, "a!"), (1, "b"), (2, "c")]
    assert any(label.startswith("p=9/") for label in files(conn, "ns.t"))
    cur.execute("UPDATE ns.t AS x SET v = upper(x.v)")
    assert cur.rowcount == 3
    assert sorted(r[0] for r in rows(conn, "SELECT v FROM ns.t")) == ["A!", "B", "C"]


def test_truncate_and_ctas(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.src AS SELECT range AS i, range % 3 AS g FROM range(10)")
    assert cur.rowcount == 10
    described = rows(conn, "DESCRIBE ns.src")
    assert [(r[0], r[1]) for r in described] == [("i", "int8"), ("g", "int8")]
    cur.execute(
        "CREATE TABLE ns.agg PARTITIONED BY (g) AS SELECT g, count(*) AS n FROM ns.src GROUP BY g"
    )
    assert rows(conn, "SELECT g, n FROM ns.agg ORDER BY g") == [(0, 4), (1, 3), (2, 3)]
    cur.execute("TRUNCATE TABLE ns.src")
    assert rows(conn, "SELECT count(*) FROM ns.src") == [(0,)]
    assert files(conn, "ns.src") == {}


def test_insert_select_time_travel_and_rollback(conn: Any) -> None:
    lake = conn.lakehouse
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (v INT4)")
    cur.execute("INSERT INTO ns.t VALUES (1)")
    first = lake.latest_version()
    cur.execute("INSERT INTO ns.t SELECT v + 1 FROM ns.t")
    cur.execute("DELETE FROM ns.t WHERE v = 1")
    assert rows(conn, "SELECT v FROM ns.t") == [(2,)]
    assert rows(conn, f"SELECT v FROM ns.t FOR SYSTEM_VERSION AS OF {first}") == [(1,)]
    cur.execute("CREATE TABLE ns.copy (v INT4)")
    cur.execute(f"INSERT INTO ns.copy SELECT v FROM ns.t FOR SYSTEM_VERSION AS OF {first}")
    assert rows(conn, "SELECT v FROM ns.copy") == [(1,)]
    cur.execute("CALL system.rollback_to_version(?)", [first])
    assert rows(conn, "SELECT v FROM ns.t") == [(1,)]


def test_multi_table_transaction_is_atomic(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    setup = trinity_dbapi.connect(uri, autocommit=True).cursor()
    setup.execute("CREATE NAMESPACE ns")
    setup.execute("CREATE TABLE ns.a (v INT4)")
    setup.execute("CREATE TABLE ns.b (v INT4)")
    conn = trinity_dbapi.connect(uri)
    cur = conn.cursor()
    cur.execute("INSERT INTO ns.a VALUES (1)")
    cur.execute("INSERT INTO ns.b VALUES (2)")
    cur.execute("UPDATE ns.a SET v = 10")
    assert cur.execute("SELECT v FROM ns.a").fetchall() == [(10,)]  # own writes
    assert setup.execute("SELECT count(*) FROM ns.a").fetchall() == [(0,)]
    version = conn.lakehouse.latest_version()
    conn.commit()
    assert conn.lakehouse.latest_version() == version + 1
    assert setup.execute("SELECT v FROM ns.a").fetchall() == [(10,)]
    assert setup.execute("SELECT v FROM ns.b").fetchall() == [(2,)]
    cur.execute("INSERT INTO ns.a VALUES (99)")
    conn.rollback()
    assert setup.execute("SELECT v FROM ns.a").fetchall() == [(10,)]


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "SNAPSHOT"])
def test_concurrent_appends_both_commit(tmp_path: Path, isolation: str) -> None:
    uri = str(tmp_path / "lake")
    setup = trinity_dbapi.connect(uri, autocommit=True).cursor()
    setup.execute("CREATE NAMESPACE ns").execute("CREATE TABLE ns.t (v INT4)")
    one = trinity_dbapi.connect(uri, isolation_level=isolation)
    two = trinity_dbapi.connect(uri, isolation_level=isolation)
    one.cursor().execute("INSERT INTO ns.t VALUES (1)")
    two.cursor().execute("INSERT INTO ns.t VALUES (2)")
    one.commit()
    two.commit()
    assert sorted(setup.execute("SELECT v FROM ns.t").fetchall()) == [(1,), (2,)]


def test_concurrent_deletes_of_the_same_rows_conflict(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    setup = trinity_dbapi.connect(uri, autocommit=True).cursor()
    setup.execute("CREATE NAMESPACE ns").execute("CREATE TABLE ns.t (v INT4)")
    setup.execute("INSERT INTO ns.t VALUES (1), (2)")
    one = trinity_dbapi.connect(uri, isolation_level="SNAPSHOT")
    two = trinity_dbapi.connect(uri, isolation_level="SNAPSHOT")
    one.cursor().execute("DELETE FROM ns.t WHERE v = 1")
    two.cursor().execute("DELETE FROM ns.t WHERE v = 2")
    one.commit()
    with pytest.raises(errors.CommitConflictError, match="concurrent commit"):
        two.commit()
    assert setup.execute("SELECT v FROM ns.t").fetchall() == [(2,)]


def test_indices_are_built_and_maintained(conn: Any) -> None:
    from trinity_dbapi.tables.indices import lookup

    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (p INT4, k VARCHAR(5)) PARTITIONED BY (p)")
    cur.execute("INSERT INTO ns.t VALUES (1, 'x'), (2, 'y')")
    cur.execute("CREATE INDEX by_k ON ns.t (k)")
    cur.execute("INSERT INTO ns.t VALUES (3, 'x')")
    cur.execute("DELETE FROM ns.t WHERE p = 1")
    definition = conn.lakehouse.begin().load_table("ns", "t")
    meta = managed.metadata(conn.lakehouse.storage, definition)
    found = lookup(conn.lakehouse.storage, meta, "k", ["x"])
    assert found is not None
    assert sorted(label.split("/")[0] for label in found) == ["p=3"]
    with pytest.raises(errors.ProgrammingError, match="already"):
        cur.execute("CREATE INDEX by_k ON ns.t (k)")
    cur.execute("DROP INDEX by_k ON ns.t")
    cur.execute("DROP INDEX IF EXISTS by_k ON ns.t")
    assert managed.indexes(conn.lakehouse.begin().load_table("ns", "t")) == {}


def test_garbage_collection_keeps_live_data_and_removes_dropped(conn: Any) -> None:
    lake = conn.lakehouse
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.keep (v INT4)")
    cur.execute("INSERT INTO ns.keep VALUES (1)")
    cur.execute("CREATE TABLE ns.gone (v INT4)")
    cur.execute("INSERT INTO ns.gone VALUES (2)")
    gone_files = set(files(conn, "ns.gone").values())
    cur.execute("DROP TABLE ns.gone")
    lake.maintenance.expire_versions(
        older_than=datetime.datetime.now(datetime.timezone.utc), retain_last=1
    )
    result = lake.maintenance.collect_garbage(grace_period_millis=0)
    assert gone_files <= set(result.deleted)
    assert rows(conn, "SELECT v FROM ns.keep") == [(1,)]


def test_executemany_insert_is_one_write_and_one_commit(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (id INT8 NOT NULL, name VARCHAR(10), at TIMESTAMPTZ)")
    version = conn.lakehouse.latest_version()
    at = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    cur.executemany(
        "INSERT INTO ns.t (id, name, at) VALUES (?, ?, ?)", [(i, f"n{i}", at) for i in range(1000)]
    )
    assert cur.rowcount == 1000
    assert conn.lakehouse.latest_version() == version + 1  # exactly one commit
    assert len(files(conn, "ns.t")) == 1
    assert rows(conn, "SELECT count(*), min(id), max(name), min(at) FROM ns.t") == [
        (1000, 0, "n999", at)
    ]
    with pytest.raises(errors.IntegrityError, match="id"):
        cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?)", [(1, "a", None), (None, "b", None)])
    with pytest.raises(errors.DataError, match="name"):
        cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?)", [(1, "far too long a name", None)])
    assert rows(conn, "SELECT count(*) FROM ns.t") == [(1000,)]  # all or nothing


def test_executemany_of_other_statements_is_atomic(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (v INT4)")
    cur.execute("INSERT INTO ns.t VALUES (1), (2), (3)")
    cur.executemany("DELETE FROM ns.t WHERE v = ?", [(1,), (2,)])
    assert cur.rowcount == 2
    with pytest.raises(errors.Error):
        cur.executemany("UPDATE ns.t SET v = CAST(? AS INT4) WHERE v >= 3", [(4,), ("x",)])
    assert rows(conn, "SELECT v FROM ns.t") == [(3,)]


def test_point_queries_prune_files_with_constant_metadata_reads(
    conn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.sql.engine import query

    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (p INT4, k VARCHAR(8), v INT8) PARTITIONED BY (p)")
    cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?)", [(i % 40, f"k{i}", i) for i in range(400)])
    cur.execute("CREATE INDEX by_k ON ns.t (k)")
    scanned: list[int] = []
    real = query.table_scan

    def recording(*args: Any, **kwargs: Any) -> Any:
        scan = real(*args, **kwargs)
        scanned.append(len(scan.paths) if isinstance(scan, query.NativeScan) else len(scan.files))
        return scan

    monkeypatch.setattr(query, "table_scan", recording)
    assert rows(conn, "SELECT count(v) FROM ns.t") == [(400,)]
    assert scanned.pop() == 40
    assert rows(conn, "SELECT sum(v) FROM ns.t WHERE p = ?", [7]) == [(sum(range(7, 400, 40)),)]
    assert scanned.pop() == 1
    assert rows(conn, "SELECT v FROM ns.t AS x WHERE x.p IN (1, 2) AND v < 3") == [(1,), (2,)]
    assert scanned.pop() == 2
    storage = conn.lakehouse.storage
    storage.clear_cache()
    managed.forget_metadata()
    before = storage.stats.snapshot()
    assert rows(conn, "SELECT v FROM ns.t WHERE k = 'k123'") == [(123,)]
    assert scanned.pop() == 1  # the index names the one partition
    reads = storage.stats.since(before).reads
    assert reads <= 4, reads  # the root, the table definition, the dataset metadata, the index
    # a predicate pruning cannot use still returns the right rows
    assert rows(conn, "SELECT count(*) FROM ns.t WHERE p = 7 OR k = 'k1'") == [(11,)]
    assert scanned.pop() == 40


@pytest.mark.parametrize("isolation", ["SERIALIZABLE", "SNAPSHOT"])
def test_data_statements_on_every_backend(
    backend: tuple[str, dict[str, Any]], isolation: str
) -> None:
    uri, options = backend
    conn = trinity_dbapi.connect(
        uri, storage_options=options, autocommit=True, isolation_level=isolation
    )
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute(
        "CREATE TABLE ns.t (day DATE, k VARCHAR(8), amount DECIMAL(8, 2), tags LIST<VARCHAR(4)>)"
        " PARTITIONED BY (day)"
    )
    cur.executemany(
        "INSERT INTO ns.t VALUES (?, ?, ?, ?)",
        [
            (datetime.date(2024, 1, 1), "a", decimal.Decimal("1.25"), ["x"]),
            (datetime.date(2024, 1, 2), "b", decimal.Decimal("2.50"), []),
            (datetime.date(2024, 1, 2), "c", None, None),
        ],
    )
    first = conn.lakehouse.latest_version()
    cur.execute("CREATE INDEX by_k ON ns.t (k)")
    cur.execute("UPDATE ns.t SET amount = amount * 2 WHERE k = 'b'")
    cur.execute("DELETE FROM ns.t WHERE day = DATE '2024-01-01'")
    assert rows(conn, "SELECT k, amount, tags FROM ns.t ORDER BY k") == [
        ("b", decimal.Decimal("5.00"), []),
        ("c", None, None),
    ]
    assert rows(conn, "SELECT k FROM ns.t WHERE k = ?", ["c"]) == [("c",)]
    old = rows(conn, f"SELECT k, amount FROM ns.t FOR SYSTEM_VERSION AS OF {first} ORDER BY k")
    assert old == [("a", decimal.Decimal("1.25")), ("b", decimal.Decimal("2.50")), ("c", None)]
    reopened = trinity_dbapi.connect(uri, storage_options=options, create=False)
    assert reopened.cursor().execute("SELECT count(*) FROM ns.t").fetchall() == [(2,)]
    conn.close()
    reopened.close()


def test_columns_added_and_dropped_while_the_table_holds_rows(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (p INT4, a INT4, b VARCHAR(3)) PARTITIONED BY (p)")
    cur.execute("INSERT INTO ns.t VALUES (1, 10, 'x')")
    cur.execute("ALTER TABLE ns.t ADD COLUMN c DOUBLE")
    assert rows(conn, "SELECT p, a, b, c FROM ns.t") == [(1, 10, "x", None)]
    cur.execute("INSERT INTO ns.t VALUES (2, 20, 'y', 2.5)")
    cur.execute("ALTER TABLE ns.t DROP COLUMN b")
    assert rows(conn, "SELECT * FROM ns.t ORDER BY p") == [(1, 10, None), (2, 20, 2.5)]
    with pytest.raises(errors.NotSupportedError, match="RENAME COLUMN"):
        cur.execute("ALTER TABLE ns.t RENAME COLUMN a TO z")
    with pytest.raises(errors.NotSupportedError, match="NOT NULL"):
        cur.execute("ALTER TABLE ns.t ADD COLUMN d INT4 NOT NULL")


def test_a_dropped_and_re_added_column_does_not_bring_back_old_values(conn: Any) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (a INT4, b VARCHAR(3))")
    cur.execute("INSERT INTO ns.t VALUES (1, 'old')")
    cur.execute("ALTER TABLE ns.t DROP COLUMN b")
    cur.execute("ALTER TABLE ns.t ADD COLUMN b VARCHAR(3)")
    cur.execute("INSERT INTO ns.t VALUES (2, 'new')")
    assert rows(conn, "SELECT a, b FROM ns.t ORDER BY a") == [(1, None), (2, "new")]


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("DECIMAL(10, 3)", decimal.Decimal("1.500")),
        ("TIMESTAMPTZ", datetime.datetime(2024, 1, 1, 12, tzinfo=datetime.timezone.utc)),
        ("BOOLEAN", True),
        ("VARCHAR(10)", "a/b %=ü"),
        ("BINARY(4)", b"\x00/%"),
        ("INT8", None),
    ],
)
def test_partition_columns_of_every_kind_through_sql(conn: Any, kind: str, value: Any) -> None:
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE ns.t (p {kind}, v INT4) PARTITIONED BY (p)")
    cur.executemany("INSERT INTO ns.t VALUES (?, ?)", [(value, 1), (value, 2)])
    assert rows(conn, "SELECT p, sum(v) FROM ns.t GROUP BY p") == [(value, 3)]
    if value is not None:
        assert rows(conn, "SELECT count(*) FROM ns.t WHERE p = ?", [value]) == [(2,)]


def test_files_of_a_rolled_back_transaction_are_collected(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    setup = trinity_dbapi.connect(uri, autocommit=True).cursor()
    setup.execute("CREATE NAMESPACE ns").execute("CREATE TABLE ns.t (v INT4)")
    setup.execute("INSERT INTO ns.t VALUES (1)")
    conn = trinity_dbapi.connect(uri)
    lake = conn.lakehouse
    before = {p for p, _ in lake.storage.list_with_times("")}
    conn.cursor().execute("INSERT INTO ns.t VALUES (2), (3)")
    written = {p for p, _ in lake.storage.list_with_times("")} - before
    assert any(p.endswith(".parquet") for p in written)  # data files are written at once
    conn.rollback()
    assert setup.execute("SELECT v FROM ns.t").fetchall() == [(1,)]  # never visible
    result = lake.maintenance.collect_garbage(grace_period_millis=0)
    assert written <= set(result.deleted)
    assert setup.execute("SELECT v FROM ns.t").fetchall() == [(1,)]


def test_columns_qualified_with_the_namespace(conn: Any) -> None:
    # ns.t.col is standard SQL, and what SQLAlchemy emits for tables in a schema.
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.t (id INT8, name VARCHAR(8))")
    cur.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')")
    cur.execute('UPDATE ns.t SET name = ? WHERE "ns"."t"."id" = ?', ["z", 2])
    cur.execute("DELETE FROM ns.t WHERE ns.t.id = ?", [1])
    assert rows(conn, "SELECT ns.t.id, ns.t.name FROM ns.t WHERE ns.t.id > ?", [0]) == [(2, "z")]
    first = conn.lakehouse.latest_version() - 2
    assert rows(conn, f"SELECT ns.t.id FROM ns.t FOR SYSTEM_VERSION AS OF {first} ORDER BY 1") == [
        (1,),
        (2,),
    ]
    with pytest.raises(errors.ProgrammingError, match=r"other\.t"):
        cur.execute("SELECT other.t.id FROM ns.t")


@pytest.mark.parametrize(
    ("condition", "found"),
    [
        ("tz = TIMESTAMP '2024-01-01 10:00:00'", [(1,)]),  # naive text is UTC
        ("tz = '2024-01-01 10:00:00'", [(1,)]),
        ("tz = '2024-01-01 11:00:00+01'", [(1,)]),
        ("tz = '2024-01-01 10:00:00 UTC'", [(1,)]),  # DuckDB reads it; pruning must not drop it
        ("tz = TIMESTAMPTZ '2024-01-01 10:00:01+00'", []),
        ("d = '2024-01-01'", [(1,)]),
        ("d = DATE '2024-01-02'", []),
        ("tz IN (?, ?)", [(1,)]),
    ],
)
def test_partition_pruning_reads_temporal_text_as_sql_does(
    conn: Any, condition: str, found: list[tuple[int]]
) -> None:
    cur = conn.cursor()
    cur.execute("CREATE TABLE ns.p (tz TIMESTAMPTZ, d DATE, v INT4) PARTITIONED BY (tz, d)")
    cur.execute(
        "INSERT INTO ns.p VALUES (TIMESTAMPTZ '2024-01-01 10:00:00+00', DATE '2024-01-01', 1)"
    )
    params = ["2024-01-01 10:00:00", datetime.datetime(2023, 1, 1)] if "?" in condition else None
    assert rows(conn, f"SELECT v FROM ns.p WHERE {condition}", params) == found
