"""PARTITIONED BY transforms (Iceberg's year, month, day, hour, bucket, truncate)."""

from __future__ import annotations

import datetime
import random
from pathlib import Path
from typing import Any

import duckdb
import mmh3
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.sql.engine import query
from trinity_dbapi.tables import managed
from trinity_dbapi.tables.transforms import Transform

UTC = datetime.timezone.utc
START = datetime.datetime(2023, 12, 30, tzinfo=UTC)
SPEC = "day(ts), bucket(8, id), truncate(2, name), year(d), month(d)"
COLUMNS = "id INT8, ts TIMESTAMPTZ, name VARCHAR, d DATE, v INT4"


def _data(n: int = 300, seed: int = 7) -> list[tuple[Any, ...]]:
    rnd = random.Random(seed)
    result = []
    for i in range(n):
        ts = START + datetime.timedelta(minutes=rnd.randrange(0, 6 * 24 * 60))
        name = rnd.choice(["alpha", "beta", "al", "b", "é", "gamma", None])
        d = datetime.date(2023, 11, 1) + datetime.timedelta(days=rnd.randrange(0, 120))
        result.append((i, None if i % 17 == 0 else ts, name, None if i % 13 == 0 else d, i % 5))
    return result


QUERIES = [
    "SELECT * FROM {t} ORDER BY id",
    (
        "SELECT id FROM {t} WHERE ts >= TIMESTAMPTZ '2024-01-01 00:00:00+00' "
        "AND ts < TIMESTAMPTZ '2024-01-02 00:00:00+00' ORDER BY id"
    ),
    "SELECT id FROM {t} WHERE ts BETWEEN '2024-01-02 06:00:00' AND '2024-01-03 12:30:00' ORDER BY id",
    "SELECT id FROM {t} WHERE ts > '2024-01-03' ORDER BY id",
    "SELECT id FROM {t} WHERE ts <= '2023-12-31 23:59:59' ORDER BY id",
    "SELECT id FROM {t} WHERE d < DATE '2023-12-01' ORDER BY id",
    "SELECT id FROM {t} WHERE d >= DATE '2024-02-01' AND d <= DATE '2024-02-15' ORDER BY id",
    "SELECT id, name FROM {t} WHERE id IN (3, 4, 250) ORDER BY id",
    "SELECT id FROM {t} WHERE name = 'alpha' ORDER BY id",
    "SELECT id FROM {t} WHERE name IN ('al', 'é') ORDER BY id",
    "SELECT id FROM {t} WHERE ts IS NULL ORDER BY id",
    "SELECT count(*), sum(v) FROM {t} WHERE ts >= '2024-01-04' OR name = 'b'",
]


def _connect(uri: str, options: dict[str, Any] | None = None) -> Any:
    conn = trinity_dbapi.connect(uri, storage_options=options or {}, autocommit=True)
    conn.cursor().execute("CREATE NAMESPACE ns")
    return conn


def _filled(conn: Any, spec: str = SPEC) -> list[tuple[Any, ...]]:
    data = _data()
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE ns.t ({COLUMNS}) PARTITIONED BY ({spec})")
    cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?, ?, ?)", data[:150])
    cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?, ?, ?)", data[150:])
    return data


def _duck(data: list[tuple[Any, ...]]) -> duckdb.DuckDBPyConnection:
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    duck.execute(f"CREATE TABLE t ({COLUMNS.replace('INT8', 'BIGINT').replace('INT4', 'INTEGER')})")
    duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", data)
    return duck


def test_queries_return_what_duckdb_returns_on_every_backend(
    backend: tuple[str, dict[str, Any]],
) -> None:
    uri, options = backend
    conn = _connect(uri, options)
    data = _filled(conn, "day(ts), truncate(1, name)")  # few files: S3 through moto is slow
    duck = _duck(data)
    cur = conn.cursor()
    for sql in QUERIES:
        assert (
            cur.execute(sql.format(t="ns.t")).fetchall() == duck.sql(sql.format(t="t")).fetchall()
        ), sql
    # DML keeps the source columns and moves rows between partitions; a new
    # partitioning applies to new files, the old ones stay readable.
    for statement in (
        "UPDATE {t} SET ts = ts + INTERVAL 2 DAY, d = DATE '2024-05-05' WHERE id % 3 = 0",
        "ALTER TABLE {t} SET PARTITIONED BY (name, month(ts))",
        "DELETE FROM {t} WHERE ts < '2024-01-01' OR name = 'beta'",
        "INSERT INTO {t} VALUES (900, '2024-01-02 01:00:00+00', 'alpha', '2024-01-01', 2)",
        "ALTER TABLE {t} SET PARTITIONED BY ()",
        "UPDATE {t} SET name = 'zz' || name WHERE id IN (5, 6, 7)",
        "INSERT INTO {t} VALUES (901, NULL, 'beta', NULL, 3)",
    ):
        cur.execute(statement.format(t="ns.t"))
        if not statement.startswith("ALTER"):
            duck.execute(statement.format(t="t"))
        for sql in QUERIES:
            ours = cur.execute(sql.format(t="ns.t")).fetchall()
            assert ours == duck.sql(sql.format(t="t")).fetchall(), (statement, sql)
    conn.close()


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    scanned: list[int] = []
    real = query.table_scan

    def recording(*args: Any, **kwargs: Any) -> Any:
        scan = real(*args, **kwargs)
        if isinstance(scan, query.NativeScan):
            scanned.append(len(scan.paths))
        elif isinstance(scan, pa.Table):
            scanned.append(-1)
        else:
            scanned.append(len(scan.files))
        return scan

    monkeypatch.setattr(query, "table_scan", recording)
    return scanned


def _day_files(conn: Any) -> dict[str, int]:
    definition = conn.lakehouse.begin().load_table("ns", "t")
    meta = managed.metadata(conn.lakehouse.storage, definition)
    days: dict[str, int] = {}
    for label in meta.partitions:
        day = label.split("/")[0]
        days[day] = days.get(day, 0) + 1
    return days


def test_a_one_day_range_reads_only_that_days_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = _connect(str(tmp_path / "lake"))
    _filled(conn, "day(ts)")
    days = _day_files(conn)
    assert set(days) == {f"ts_day=2023-12-{d}" for d in (30, 31)} | {
        f"ts_day=2024-01-0{d}" for d in range(1, 5)
    } | {"ts_day=__HIVE_DEFAULT_PARTITION__"}
    scanned = _recording(monkeypatch)
    cur = conn.cursor()
    cur.execute(
        "SELECT count(*) FROM ns.t WHERE ts >= TIMESTAMPTZ '2024-01-02 00:00:00+00' "
        "AND ts < TIMESTAMPTZ '2024-01-03 00:00:00+00'"
    )
    expected = sum(
        1 for row in _data() if row[1] is not None and row[1].date() == datetime.date(2024, 1, 2)
    )
    assert cur.fetchall() == [(expected,)]
    assert scanned.pop() == days["ts_day=2024-01-02"]
    cur.execute("SELECT count(*) FROM ns.t WHERE ts BETWEEN ? AND ?", ["2024-01-02", "2024-01-02"])
    assert scanned.pop() == days["ts_day=2024-01-02"]
    cur.execute("SELECT count(*) FROM ns.t WHERE ts = '2024-01-03 10:00:00'")
    assert scanned.pop() == days["ts_day=2024-01-03"]
    cur.execute("SELECT count(id) FROM ns.t")  # count(*) alone is answered from file facts
    assert scanned.pop() == sum(days.values())
    # After SET PARTITIONED BY, files of both partitionings are pruned by their own directories.
    first = conn.lakehouse.latest_version()
    cur.execute("ALTER TABLE ns.t SET PARTITIONED BY (hour(ts))")
    cur.execute("INSERT INTO ns.t SELECT id + 1000, ts, name, d, v FROM ns.t")
    scanned.clear()
    cur.execute(
        "SELECT count(*) FROM ns.t WHERE ts >= TIMESTAMPTZ '2024-01-02 00:00:00+00' "
        "AND ts < TIMESTAMPTZ '2024-01-03 00:00:00+00'"
    )
    assert cur.fetchall() == [(2 * expected,)]
    hours = {
        label.split("/")[0]
        for label in _all_labels(conn)
        if label.startswith("ts_hour=2024-01-02-")
    }
    assert scanned.pop() == -1  # read in Python by column ID: the files' columns differ
    definition = conn.lakehouse.begin().load_table("ns", "t")
    meta = managed.metadata(conn.lakehouse.storage, definition)
    from trinity_dbapi.tables import scan
    from trinity_dbapi.tables.partitions import ValueRange

    chosen = scan.pruned_labels(
        conn.lakehouse.storage,
        definition,
        meta,
        {"ts": ValueRange("2024-01-02", "2024-01-03", False)},
    )
    assert sorted({label.split("/")[0] for label in chosen}) == sorted(
        {"ts_day=2024-01-02", *hours}
    )
    assert len(chosen) == days["ts_day=2024-01-02"] + len(hours)
    # Time travel reads the version before with its own partitioning.
    assert cur.execute(
        f"SELECT count(*) FROM ns.t FOR SYSTEM_VERSION AS OF {first}"
    ).fetchall() == [(len(_data()),)]
    (text,) = cur.execute("SHOW CREATE TABLE ns.t").fetchone()
    assert text.endswith('PARTITIONED BY (hour("ts"))')
    conn.close()


def _all_labels(conn: Any) -> list[str]:
    definition = conn.lakehouse.begin().load_table("ns", "t")
    return list(managed.metadata(conn.lakehouse.storage, definition).partitions)


@pytest.fixture(scope="module", params=["one partitioning", "three partitionings"])
def filled(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Any:
    conn = _connect(str(tmp_path_factory.mktemp("prop") / "lake"))
    data = _data()
    cur = conn.cursor()
    cur.execute(
        f"CREATE TABLE ns.t ({COLUMNS}) PARTITIONED BY (hour(ts), month(d), bucket(4, id), "
        "truncate(1, name))"
    )
    specs = ["name, day(ts), bucket(4, id)", "", "year(d), v"]
    if request.param == "one partitioning":
        specs = []
    for number, start in enumerate(range(0, len(data), 100)):
        if number and specs:
            cur.execute(f"ALTER TABLE ns.t SET PARTITIONED BY ({specs[number - 1]})")
        cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?, ?, ?)", data[start : start + 100])
    yield conn, _duck(data)
    conn.close()


_MOMENTS = st.datetimes(
    min_value=datetime.datetime(2023, 12, 29), max_value=datetime.datetime(2024, 1, 6)
).map(lambda m: m.replace(microsecond=m.microsecond // 1000 * 1000))
_DAYS = st.dates(min_value=datetime.date(2023, 10, 25), max_value=datetime.date(2024, 3, 5))
_OPS = st.sampled_from([">=", ">", "<", "<=", "="])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ts_op=_OPS,
    ts=_MOMENTS,
    ts_op2=_OPS,
    ts2=_MOMENTS,
    d_op=_OPS,
    d=_DAYS,
    ids=st.lists(st.integers(-5, 320), max_size=4),
    names=st.lists(st.sampled_from(["a", "al", "alpha", "b", "é", "zz"]), max_size=3),
)
def test_pruned_scans_equal_full_scans(
    filled: Any,
    ts_op: str,
    ts: datetime.datetime,
    ts_op2: str,
    ts2: datetime.datetime,
    d_op: str,
    d: datetime.date,
    ids: list[int],
    names: list[str],
) -> None:
    conn, duck = filled
    conditions = [
        f"ts {ts_op} TIMESTAMP '{ts.isoformat(sep=' ')}'",
        f"ts {ts_op2} '{ts2.isoformat(sep=' ')}'",
        f"d {d_op} DATE '{d.isoformat()}'",
    ]
    if ids:
        conditions.append(f"id IN ({', '.join(map(str, ids))})")
    if names:
        conditions.append(f"name IN ({', '.join(repr(n) for n in names)})")
    for k in range(1, len(conditions) + 1):
        where = " AND ".join(conditions[:k])
        sql = f"SELECT id FROM {{t}} WHERE {where} ORDER BY id"
        expected = duck.sql(sql.format(t="t")).fetchall()
        assert conn.cursor().execute(sql.format(t="ns.t")).fetchall() == expected, where


@pytest.mark.parametrize("now", ["v", ""])
def test_files_of_an_earlier_partitioning_are_pruned_by_their_own_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, now: str
) -> None:
    from trinity_dbapi.tables import scan

    conn = _connect(str(tmp_path / "lake"))
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE ns.t ({COLUMNS}) PARTITIONED BY (day(ts))")
    data = _data()
    cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?, ?, ?)", data[:150])
    by_day = len(_all_labels(conn))
    cur.execute(f"ALTER TABLE ns.t SET PARTITIONED BY ({now})")
    cur.executemany("INSERT INTO ns.t VALUES (?, ?, ?, ?, ?)", data[150:])
    later = len(_all_labels(conn)) - by_day
    assert (by_day, later) == (7, 5 if now else 1)  # six days and the NULLs; v's 5 values
    chosen: list[int] = []
    real = scan.pruned_labels

    def recording(*args: Any, **kwargs: Any) -> Any:
        labels = real(*args, **kwargs)
        chosen.append(len(labels))
        return labels

    monkeypatch.setattr(scan, "pruned_labels", recording)
    duck = _duck(data)
    day = START + datetime.timedelta(days=2)
    sql = "SELECT id FROM {t} WHERE ts >= ? AND ts < ? ORDER BY id"
    params = [day, day + datetime.timedelta(days=1)]
    assert cur.execute(sql.format(t="ns.t"), params).fetchall() == (
        duck.execute(sql.format(t="t"), params).fetchall()
    )
    # One of the day files, and every file of the later partitioning (which has no ts_day).
    assert chosen == [1 + later]
    conn.close()


def test_bucket_and_truncate_follow_the_iceberg_spec() -> None:
    # The spec's examples (appendix B): murmur3_x86_32 hashes of the value's bytes.
    def bucket(values: list[Any], type_: pa.DataType) -> list[int]:
        return Transform("b", "bucket", "c", 2**31 - 1).apply(pa.array(values, type_)).to_pylist()

    masked = [h & (2**31 - 1) for h in (2017239379, 1210000089, -653330422, -2047944441)]
    assert bucket([34], pa.int32()) == bucket([34], pa.int64()) == [masked[0] % (2**31 - 1)]
    assert bucket(["iceberg"], pa.string()) == [masked[1]]
    assert bucket([datetime.date(2017, 11, 16)], pa.date32()) == [masked[2]]
    moment = datetime.datetime(2017, 11, 16, 22, 31, 8)
    assert bucket([moment], pa.timestamp("us")) == [masked[3]]
    assert bucket([moment.replace(tzinfo=UTC)], pa.timestamp("ns", "UTC")) == [masked[3]]
    assert bucket([None], pa.int64()) == [None]
    assert mmh3.hash(b"iceberg", signed=True) == 1210000089
    ints = Transform("t", "truncate", "c", 10).apply(pa.array([1, -1, 10, -10, None], pa.int64()))
    assert ints.to_pylist() == [0, -10, 10, -10, None]
    text = Transform("t", "truncate", "c", 3).apply(pa.array(["iceberg", "éé", None]))
    assert text.to_pylist() == ["ice", "éé", None]
    stamps = pa.array(
        [datetime.datetime(1999, 12, 31, 23, 5, tzinfo=UTC)], pa.timestamp("us", "UTC")
    )
    texts = {
        k: Transform("x", k, "c").apply(stamps).to_pylist()
        for k in ("year", "month", "day", "hour")
    }
    assert texts == {
        "year": ["1999"],
        "month": ["1999-12"],
        "day": ["1999-12-31"],
        "hour": ["1999-12-31-23"],
    }


def test_show_create_table_and_the_catalog_name_the_transforms(tmp_path: Path) -> None:
    conn = _connect(str(tmp_path / "lake"))
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE ns.t ({COLUMNS}) PARTITIONED BY (v, {SPEC}, hour(ts))")
    (text,) = cur.execute("SHOW CREATE TABLE ns.t").fetchone()
    assert text.endswith(
        'PARTITIONED BY ("v", day("ts"), bucket(8, "id"), truncate(2, "name"), year("d"), '
        'month("d"), hour("ts"))'
    )
    cur.execute("DROP TABLE ns.t")
    cur.execute(text)  # the text creates the same table
    assert cur.execute("SHOW CREATE TABLE ns.t").fetchone() == (text,)
    cur.execute(
        "INSERT INTO ns.t VALUES (1, TIMESTAMPTZ '2024-01-01 10:00:00+00', 'abc', DATE '2024-01-01', 4)"
    )
    assert cur.execute("SELECT * FROM ns.t").fetchall() == [
        (1, datetime.datetime(2024, 1, 1, 10, tzinfo=UTC), "abc", datetime.date(2024, 1, 1), 4)
    ]
    (label,) = _day_files(conn)
    assert label == "v=4"
    definition = conn.lakehouse.begin().load_table("ns", "t")
    meta = managed.metadata(conn.lakehouse.storage, definition)
    (full,) = meta.partitions
    assert full.split("/")[:-1] == [
        "v=4",
        "ts_day=2024-01-01",
        f"id_bucket={(mmh3.hash((1).to_bytes(8, 'little'), signed=True) & 0x7FFFFFFF) % 8}",
        "name_trunc=ab",
        "d_year=2024",
        "d_month=2024-01",
        "ts_hour=2024-01-01-10",
    ]
    conn.close()


@pytest.mark.parametrize(
    ("spec", "error", "words"),
    [
        ("hour(d)", errors.NotSupportedError, "hour takes timestamps"),
        ("day(id)", errors.NotSupportedError, "dates and timestamps"),
        ("truncate(2, d)", errors.NotSupportedError, "integers, decimals, strings and binary"),
        ("bucket(0, id)", errors.ProgrammingError, "positive integer width"),
        ("day(nope)", errors.ProgrammingError, "'nope' is not a column"),
        ("day(ts), day(ts)", errors.ProgrammingError, "taken by a column or another partition"),
        ("week(ts)", errors.ProgrammingError, "not a partition transform"),
    ],
)
def test_bad_transforms_are_refused(tmp_path: Path, spec: str, error: type, words: str) -> None:
    conn = _connect(str(tmp_path / "lake"))
    with pytest.raises(error, match=words):
        conn.cursor().execute(f"CREATE TABLE ns.t ({COLUMNS}) PARTITIONED BY ({spec})")
    conn.close()


def test_a_source_column_cannot_be_dropped_or_renamed(tmp_path: Path) -> None:
    conn = _connect(str(tmp_path / "lake"))
    cur = conn.cursor()
    cur.execute(f"CREATE TABLE ns.t ({COLUMNS}) PARTITIONED BY (day(ts))")
    with pytest.raises(errors.ProgrammingError, match="partitioning"):
        cur.execute("ALTER TABLE ns.t DROP COLUMN ts")
    with pytest.raises(errors.NotSupportedError, match=r"partitioned by day\(ts\)"):
        cur.execute("ALTER TABLE ns.t RENAME COLUMN ts TO at")
    cur.execute("CREATE TABLE ns.c PARTITIONED BY (day(ts)) AS SELECT * FROM ns.t")
    assert cur.execute("SHOW CREATE TABLE ns.c").fetchone()[0].endswith('BY (day("ts"))')
    cur.execute("CREATE TABLE ns.b (id INT8, v INT4) PARTITIONED BY (bucket(8, id))")
    cur.execute("INSERT INTO ns.b VALUES (1, 1)")
    with pytest.raises(errors.ProgrammingError, match=r"earlier partition bucket\(8, id\)"):
        cur.execute("ALTER TABLE ns.b SET PARTITIONED BY (bucket(4, id))")
    with pytest.raises(errors.ProgrammingError, match="twice"):
        cur.execute("ALTER TABLE ns.b SET PARTITIONED BY (v, v)")
    with pytest.raises(errors.ProgrammingError, match=r"'nope' of table ns\.b does not exist"):
        cur.execute("ALTER TABLE ns.b SET PARTITIONED BY (nope)")
    with pytest.raises(errors.NotSupportedError, match="hour takes timestamps"):
        cur.execute("ALTER TABLE ns.b SET PARTITIONED BY (hour(v))")
    cur.execute("ALTER TABLE ns.b SET PARTITIONED BY (v)")
    cur.execute("INSERT INTO ns.b VALUES (3, 3)")
    cur.execute("ALTER TABLE ns.b SET PARTITIONED BY ()")
    for change in ("DROP COLUMN v", "RENAME COLUMN v TO w"):
        with pytest.raises(errors.NotSupportedError, match="hold its values in their directory"):
            cur.execute(f"ALTER TABLE ns.b {change}")
    cur.execute("UPDATE ns.b SET v = v WHERE v = 3")  # rewrites the file with the v directory
    cur.execute("ALTER TABLE ns.b SET PARTITIONED BY (v)")
    cur.execute("DELETE FROM ns.b")  # no file of bucket(8, id) is left: the name is free again
    cur.execute("ALTER TABLE ns.b SET PARTITIONED BY (bucket(4, id))")
    cur.execute("INSERT INTO ns.b VALUES (2, 2)")
    assert cur.execute("SELECT * FROM ns.b").fetchall() == [(2, 2)]
    conn.close()


@pytest.mark.parametrize("repartition", [False, True])
def test_the_duckdb_bridge_reads_a_transform_partitioned_table(
    tmp_path: Path, repartition: bool
) -> None:
    from trinity_dbapi.duckdb import attach

    lake = tmp_path / "lake"
    conn = _connect(str(lake))
    data = _filled(conn)
    if repartition:
        conn.cursor().execute("ALTER TABLE ns.t SET PARTITIONED BY (v, hour(ts))")
        conn.cursor().execute("DELETE FROM ns.t WHERE id < 50")
        conn.cursor().executemany("INSERT INTO ns.t VALUES (?, ?, ?, ?, ?)", data[:50])
    conn.close()
    duck = duckdb.connect()
    duck.execute("SET TimeZone = 'UTC'")
    attach(duck, f"file://{lake}")
    reference = _duck(data)
    for sql in QUERIES:
        assert (
            duck.sql(sql.format(t="ns.t")).fetchall() == reference.sql(sql.format(t="t")).fetchall()
        )


def test_indexes_catalog_and_reflection_of_a_transform_partitioned_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlalchemy as sa

    conn = _connect(str(tmp_path / "lake"))
    data = _filled(conn, "v, day(ts)")
    cur = conn.cursor()
    cur.execute("CREATE INDEX by_name ON ns.t (name)")
    scanned = _recording(monkeypatch)
    expected = sorted(row[0] for row in data if row[2] == "beta")
    assert [r[0] for r in cur.execute("SELECT id FROM ns.t WHERE name = 'beta' ORDER BY id")] == (
        expected
    )
    assert 0 < scanned.pop() < sum(_day_files(conn).values())  # the index prunes
    (columns,) = cur.execute(
        "SELECT partition_columns FROM system.tables WHERE table_name = 't'"
    ).fetchone()
    assert list(columns) == ["v", "ts_day"]
    conn.close()
    engine = sa.create_engine(f"trinity:///{tmp_path / 'lake'}")
    options = sa.inspect(engine).get_table_options("t", "ns")
    assert options["trinity_partitioned_by"] == ["v"]  # a transform's directory is no column
    engine.dispose()


def test_column_id_reads_time_travel_and_spark_pruning(tmp_path: Path) -> None:
    from trinity_dbapi.tables import scan
    from trinity_dbapi.tables.partitions import ValueRange

    conn = _connect(str(tmp_path / "lake"))
    data = _filled(conn, "month(ts), bucket(3, id)")
    before = conn.lakehouse.latest_version()
    cur = conn.cursor()
    cur.execute("ALTER TABLE ns.t ADD COLUMN extra INT4")  # files now differ: read by column ID
    cur.execute(
        "INSERT INTO ns.t VALUES (1000, TIMESTAMPTZ '2024-01-05 00:00:00+00', 'x', NULL, 1, 7)"
    )
    definition = conn.lakehouse.begin().load_table("ns", "t")
    plan = scan.plan_query_scan(conn.lakehouse.storage, definition, {})
    assert plan.form is scan.ScanForm.BY_COLUMN_ID
    duck = _duck(data)
    duck.execute("ALTER TABLE t ADD COLUMN extra INTEGER")
    duck.execute("INSERT INTO t VALUES (1000, '2024-01-05 00:00:00+00', 'x', NULL, 1, 7)")
    for sql in [
        *QUERIES,
        "SELECT id, extra FROM {t} WHERE extra IS NOT NULL OR id < 3 ORDER BY id",
    ]:
        assert (
            cur.execute(sql.format(t="ns.t")).fetchall() == duck.sql(sql.format(t="t")).fetchall()
        )
    # Time travel reads the version before the change.
    old = cur.execute(
        f"SELECT count(*) FROM ns.t FOR SYSTEM_VERSION AS OF {before} WHERE ts < '2024-01-01'"
    ).fetchall()
    assert old == [(sum(1 for r in data if r[1] is not None and r[1].year == 2023),)]
    # Spark's pruning: points and ranges on the source columns.
    meta = managed.metadata(conn.lakehouse.storage, definition)
    storage = conn.lakehouse.storage
    all_labels = list(meta.partitions)
    december = scan.pruned_labels(
        storage, definition, meta, {"ts": ValueRange("2023-12-01", "2024-01-01", False)}
    )
    assert december and all(label.startswith("ts_month=2023-12/") for label in december)
    assert set(december) == {lb for lb in all_labels if lb.startswith("ts_month=2023-12/")}
    one = scan.pruned_labels(storage, definition, meta, {"id": [4]})
    assert 0 < len(one) < len(all_labels)
    assert len({label.split("/")[1] for label in one}) == 1
    conn.close()


def test_a_bound_the_column_cannot_hold_exactly_prunes_nothing_it_needs(tmp_path: Path) -> None:
    conn = _connect(str(tmp_path / "lake"))
    cur = conn.cursor()
    cur.execute(
        "CREATE TABLE ns.t (id INT8, d DATE, ts TIMESTAMP(0)) PARTITIONED BY (day(d), hour(ts))"
    )
    cur.execute(
        "INSERT INTO ns.t VALUES (1, DATE '2024-01-01', TIMESTAMP '2024-01-01 10:00:00'), "
        "(2, DATE '2023-12-31', TIMESTAMP '2024-01-01 09:59:59')"
    )
    # d < 2024-01-01 10:00 holds for d = 2024-01-01: the bound is not "before 2024-01-01".
    noon = datetime.datetime(2024, 1, 1, 10)
    assert cur.execute("SELECT id FROM ns.t WHERE d < ? ORDER BY id", [noon]).fetchall() == [
        (1,),
        (2,),
    ]
    assert cur.execute("SELECT id FROM ns.t WHERE d < ? ORDER BY id", [noon.date()]).fetchall() == [
        (2,)
    ]
    half = datetime.datetime(2024, 1, 1, 10, 0, 0, 500000)
    assert cur.execute("SELECT id FROM ns.t WHERE ts < ? ORDER BY id", [half]).fetchall() == [
        (1,),
        (2,),
    ]
    assert cur.execute("SELECT id FROM ns.t WHERE ts < ? ORDER BY id", [noon]).fetchall() == [(2,)]
    conn.close()
