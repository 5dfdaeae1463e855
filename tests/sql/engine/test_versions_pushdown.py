"""system.versions at the cost of the versions asked for: version and time bounds pushed down.

A WHERE clause bounding ``version`` or ``created_at`` reads only the roots
in range (a time bound: the binary search time travel uses, about log2(V)
roots), and ``ORDER BY version LIMIT k`` over bounds that are the whole
WHERE clause reads k of them. Every pushed-down query must answer what the
full build answers (the oracle: the scope forced to EVERYTHING).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import trinity_dbapi
from tests.sql.engine.reads import lake_with_damaged_root, roots_read
from trinity_dbapi.dbapi.connection import Connection
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.catalog import catalog_table
from trinity_dbapi.lakehouse.catalog_scope import EVERYTHING, CatalogScope, VersionScope
from trinity_dbapi.lakehouse.transaction import Transaction

LATEST = 32
KEPT = 4  # an old version a per-version retention override keeps
#: Versions 0..9 are expired but KEPT.
RETAINED = [KEPT, *range(10, LATEST + 1)]


@pytest.fixture(scope="module")
def lake_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Versions 4 and 10..32 retained (0..9 expired but 4), each commit creating one namespace."""
    path = str(tmp_path_factory.mktemp("versions") / "lake")
    overrides = {KEPT: 10**12}
    lake = Lakehouse.create(
        path,
        LakehouseDefinition(name="lake").replace(maximum_version_age_millis_overrides=overrides),
    )
    for i in range(LATEST):
        if i == 12:
            lake.maintenance.expire_versions(older_than=datetime.now(timezone.utc), retain_last=3)
        with lake.begin() as txn:
            txn.create_namespace(f"v{i:02d}")
        time.sleep(0.002)  # creation times some milliseconds apart
    assert [info.version for info in lake.history()] == RETAINED
    return path


@pytest.fixture(scope="module")
def created(lake_path: str) -> dict[int, datetime]:
    """Each retained version's creation time."""
    lake = Lakehouse.open(lake_path)
    return {
        info.version: datetime.fromtimestamp(info.created_at_millis / 1000, timezone.utc)
        for info in lake.history()
    }


@pytest.fixture
def con(lake_path: str) -> Iterator[Connection]:
    connection = trinity_dbapi.connect(lake_path, autocommit=True)
    yield connection
    connection.close()


@contextmanager
def _full_build() -> Iterator[None]:
    """Every catalog table built whole, whatever the WHERE clause: the oracle."""
    with mock.patch(
        "trinity_dbapi.sql.engine.catalog_pushdown.catalog_scope", lambda *a: EVERYTHING
    ):
        yield


def _roots_read(con: Connection, sql: str, params: Any = ()) -> tuple[int, list[Any]]:
    """How many root files a statement read from storage (or tried to), from cold, and its rows."""
    con.lakehouse.storage.clear_cache()
    con.lakehouse.nodes.clear_cache()
    con.lakehouse.snapshot()  # the statement's own snapshot: read by any statement
    return roots_read(con, sql, params)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")


# -- the property: pushed down == full build -------------------------------------------


_VERSION = hs.integers(min_value=-2, max_value=LATEST + 3)
_OPS = hs.sampled_from(["=", "<", "<=", ">", ">=", "<>"])


@hs.composite
def _moment(draw: hs.DrawFn, created: dict[int, datetime]) -> datetime:
    """A time at, just around or far from a version's creation (µs precision)."""
    base = draw(hs.sampled_from(sorted(created.items())))[1]
    shift = draw(
        hs.one_of(
            hs.just(0),
            hs.integers(min_value=-2500, max_value=2500),
            hs.sampled_from([-86_400_000_000, 86_400_000_000]),
        )
    )
    return base + timedelta(microseconds=shift)


@hs.composite
def _timestamp(draw: hs.DrawFn, created: dict[int, datetime], params: list[Any]) -> str:
    """SQL for a time: literals of every kind, or a bound parameter."""
    moment = draw(_moment(created))
    zone = timezone(timedelta(minutes=draw(hs.sampled_from([0, 60, -330, 14 * 60]))))
    local = moment.astimezone(zone)
    offset = local.strftime("%z")
    offset = offset[:3] + ":" + offset[3:]
    text = local.strftime("%Y-%m-%d %H:%M:%S.%f")
    kind = draw(hs.integers(min_value=0, max_value=8))
    if kind == 0:
        return f"TIMESTAMP '{_iso(moment)}'"
    if kind == 1:
        return f"TIMESTAMPTZ '{text}{offset}'"
    if kind == 2:
        return f"'{text}{offset}'"
    if kind == 3:
        return f"CAST('{text}{offset}' AS TIMESTAMP WITH TIME ZONE)"
    if kind == 4:
        return f"TIMESTAMP '{text}{offset}'"  # an offset in a zone-less literal
    if kind == 5:
        params.append(local)
        return "?"
    if kind == 6:
        params.append(moment.astimezone(timezone.utc).replace(tzinfo=None))
        return "?"
    if kind == 7:
        params.append(f"{text}{offset}")
        return "?"
    return f"'{_iso(moment)[:10]}'"  # a date as text: midnight UTC


@hs.composite
def _condition(draw: hs.DrawFn, created: dict[int, datetime], params: list[Any]) -> str:
    kind = draw(hs.integers(min_value=0, max_value=9))
    column = draw(hs.sampled_from(["version", "v.version", "VERSION"]))
    if kind == 0:
        return f"{column} {draw(_OPS)} {draw(_VERSION)}"
    if kind == 1:
        values = draw(hs.lists(_VERSION, min_size=1, max_size=4))
        return f"{column} IN ({', '.join(map(str, values))})"
    if kind == 2:
        return f"{column} BETWEEN {draw(_VERSION)} AND {draw(_VERSION)}"
    if kind == 3:
        params.append(draw(_VERSION))
        return f"? {draw(_OPS)} {column}"
    if kind in (4, 5):
        return f"created_at {draw(_OPS)} {draw(_timestamp(created, params))}"
    if kind == 6:
        low = draw(_timestamp(created, params))
        high = draw(_timestamp(created, params))
        return f"v.created_at BETWEEN {low} AND {high}"
    if kind == 7:
        return f"{draw(_timestamp(created, params))} {draw(_OPS)} created_at"
    other = [
        f"(version = {draw(_VERSION)} OR version = {draw(_VERSION)})",
        "version % 3 = 0",
        f"NOT (version < {draw(_VERSION)})",
        "txn_id IS NOT NULL",
        "version = NULL",
        f"created_at >= DATE '{_iso(draw(_moment(created)))[:10]}'",
        f"version + 0 > {draw(_VERSION)}",
        f"version IN ({draw(_VERSION)}, NULL)",
        "created_at >= now() - INTERVAL 1 DAY",
    ]
    return draw(hs.sampled_from(other))


@hs.composite
def _query(draw: hs.DrawFn, created: dict[int, datetime]) -> tuple[str, list[Any]]:
    params: list[Any] = []
    conditions = draw(hs.lists(_condition(created, params), min_size=0, max_size=3))
    sql = "SELECT v.version, created_at, txn_id, changed_keys FROM system.versions v"
    if conditions:
        sql += " WHERE " + " AND ".join(conditions)
    if draw(hs.booleans()):
        sql += " ORDER BY version" + draw(hs.sampled_from(["", " ASC", " DESC"]))
        sql += f" LIMIT {draw(hs.integers(min_value=0, max_value=6))}"
        if draw(hs.booleans()):
            sql += f" OFFSET {draw(hs.integers(min_value=0, max_value=4))}"
    return sql, params


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=hs.data())
def test_pushed_down_answers_what_the_full_build_answers(
    con: Connection, created: dict[int, datetime], data: hs.DataObject
) -> None:
    sql, params = data.draw(_query(created))
    cur = con.cursor()
    pushed = cur.execute(sql, params).fetchall()
    with _full_build():
        full = cur.execute(sql, params).fetchall()
    if "ORDER BY" in sql:
        assert pushed == full, sql
    else:
        assert sorted(pushed) == sorted(full), sql


# -- point and range reads ----------------------------------------------------------------


def test_a_point_version_reads_one_root(con: Connection) -> None:
    reads, rows = _roots_read(con, "SELECT version FROM system.versions WHERE version = 20")
    assert rows == [(20,)]
    assert reads == 1
    reads, rows = _roots_read(con, "SELECT version FROM system.versions WHERE version = ?", [25])
    assert (reads, rows) == (1, [(25,)])
    reads, rows = _roots_read(
        con, "SELECT version FROM system.versions WHERE version IN (11, 30, 99) ORDER BY 1"
    )
    assert rows == [(11,), (30,)]
    assert reads == 2  # 99 is past the snapshot: not even looked for


def test_an_expired_or_future_version_reads_at_most_its_root(con: Connection) -> None:
    assert _roots_read(con, "SELECT * FROM system.versions WHERE version = 3") == (1, [])
    assert _roots_read(con, f"SELECT version FROM system.versions WHERE version = {KEPT}") == (
        1,
        [(KEPT,)],
    )
    assert _roots_read(con, "SELECT * FROM system.versions WHERE version > 40") == (0, [])
    assert (
        _roots_read(con, "SELECT * FROM system.versions WHERE version = 1 AND version = 2")[1] == []
    )


def test_a_version_range_reads_its_roots(con: Connection) -> None:
    reads, rows = _roots_read(
        con, "SELECT version FROM system.versions WHERE version BETWEEN 14 AND 16 ORDER BY 1"
    )
    assert rows == [(14,), (15,), (16,)]
    assert reads == 3
    reads, rows = _roots_read(
        con, "SELECT version FROM system.versions WHERE version >= 20 ORDER BY version LIMIT 2"
    )
    assert rows == [(20,), (21,)]
    assert reads == 2
    reads, rows = _roots_read(
        con,
        "SELECT version FROM system.versions WHERE version < 30 ORDER BY version DESC LIMIT 2",
    )
    assert rows == [(29,), (28,)]
    assert reads == 2


def _search_reads() -> int:
    """The roots one binary search over versions 0..LATEST may read."""
    return math.ceil(math.log2(LATEST + 2))


def test_a_timestamp_bound_reads_log_n_roots(con: Connection, created: dict[int, datetime]) -> None:
    at = _iso(created[21])
    reads, rows = _roots_read(
        con,
        f"SELECT version FROM system.versions WHERE created_at >= TIMESTAMP '{at}' "
        "ORDER BY version LIMIT 1",
    )
    assert rows == [(21,)]
    assert reads <= _search_reads() + 1
    reads, rows = _roots_read(
        con,
        "SELECT version FROM system.versions WHERE created_at <= ? ORDER BY version DESC LIMIT 1",
        [created[17]],
    )
    assert rows == [(17,)]
    assert reads <= _search_reads() + 1
    reads, rows = _roots_read(
        con,
        "SELECT version FROM system.versions WHERE created_at BETWEEN ? AND ? ORDER BY 1",
        [created[15], created[18]],
    )
    assert rows == [(15,), (16,), (17,), (18,)]
    assert reads <= 2 * _search_reads() + 4
    # The full build reads every retained root, and looks for the expired ones.
    with _full_build():
        reads, _ = _roots_read(
            con, f"SELECT version FROM system.versions WHERE created_at >= '{at}'"
        )
    assert reads >= len(RETAINED)


def test_a_timestamp_bound_finds_a_version_kept_past_expiry(
    con: Connection, created: dict[int, datetime]
) -> None:
    """Between the kept version and the retained run lie expired versions' times."""
    sql = "SELECT version FROM system.versions WHERE created_at <= ? ORDER BY 1 DESC LIMIT 1"
    assert con.cursor().execute(sql, [created[10] - timedelta(milliseconds=1)]).fetchall() == [
        (KEPT,)
    ]
    sql = "SELECT version FROM system.versions WHERE created_at > ? ORDER BY version LIMIT 2"
    assert con.cursor().execute(sql, [created[KEPT]]).fetchall() == [(10,), (11,)]
    sql = "SELECT version FROM system.versions WHERE created_at < ?"
    assert con.cursor().execute(sql, [created[KEPT]]).fetchall() == []


def test_conditions_not_understood_read_every_root(con: Connection) -> None:
    for sql in (
        "SELECT version FROM system.versions WHERE version = 20 OR version = 21",
        "SELECT version FROM system.versions WHERE created_at >= now() - INTERVAL 1 DAY",
        "SELECT version FROM system.versions WHERE version = length(txn_id)",
    ):
        reads, _ = _roots_read(con, sql)
        assert reads >= len(RETAINED), sql


def test_a_condition_not_understood_keeps_the_limit_from_being_pushed(con: Connection) -> None:
    """The bounds narrow, but rows in range may fail the rest: the LIMIT is not pushed."""
    reads, rows = _roots_read(
        con,
        "SELECT version FROM system.versions WHERE version >= 12 AND version % 5 = 0 "
        "ORDER BY version LIMIT 2",
    )
    assert rows == [(15,), (20,)]
    assert reads == LATEST - 12  # every root from 12 on but the latest, which is cached


def test_order_by_an_output_column_named_version_is_not_pushed(con: Connection) -> None:
    sql = "SELECT -version AS version FROM system.versions v ORDER BY version LIMIT 2"
    assert con.cursor().execute(sql).fetchall() == [(-LATEST,), (-LATEST + 1,)]


# -- time travel and transactions ---------------------------------------------------------


def test_time_travel_never_sees_newer_versions(
    con: Connection, created: dict[int, datetime]
) -> None:
    cur = con.cursor()
    sql = "SELECT version FROM system.versions FOR SYSTEM_VERSION AS OF 20 WHERE version >= 18"
    assert cur.execute(sql).fetchall() == [(18,), (19,), (20,)]
    sql = (
        "SELECT version FROM system.versions FOR SYSTEM_VERSION AS OF 20 "
        "WHERE created_at >= ? ORDER BY version DESC LIMIT 5"
    )
    assert cur.execute(sql, [created[19]]).fetchall() == [(20,), (19,)]
    sql = "SELECT version FROM system.versions FOR SYSTEM_VERSION AS OF 20 WHERE version = 25"
    assert cur.execute(sql).fetchall() == []


def test_a_pinned_connection_never_sees_newer_versions(
    lake_path: str, created: dict[int, datetime]
) -> None:
    con = trinity_dbapi.connect(lake_path, version=22)
    try:
        cur = con.cursor()
        rows = cur.execute(
            "SELECT version FROM system.versions WHERE created_at > ? ORDER BY 1", [created[20]]
        )
        assert rows.fetchall() == [(21,), (22,)]
        rows = cur.execute("SELECT version FROM system.versions WHERE version IN (22, 23, 30)")
        assert rows.fetchall() == [(22,)]
    finally:
        con.close()


def test_a_transaction_sees_the_versions_of_its_snapshot(tmp_path: Path) -> None:
    path = str(tmp_path / "lake")
    lake = Lakehouse.create(path)
    for i in range(4):
        with lake.begin() as txn:
            txn.create_namespace(f"v{i}")
    con = trinity_dbapi.connect(path)  # not autocommit: one transaction until commit
    other = trinity_dbapi.connect(path, autocommit=True)
    try:
        cur = con.cursor()
        newest = "SELECT version FROM system.versions WHERE version >= 3 ORDER BY version DESC"
        assert cur.execute(newest).fetchall() == [(4,), (3,)]
        other.cursor().execute("CREATE NAMESPACE later")
        assert cur.execute(newest).fetchall() == [(4,), (3,)]
        assert cur.execute("SELECT version FROM system.versions WHERE version = 5").fetchall() == []
        since = "SELECT version FROM system.versions WHERE created_at >= ? ORDER BY 1 LIMIT 3"
        assert cur.execute(since, [datetime(2000, 1, 1)]).fetchall() == [(0,), (1,), (2,)]
        con.commit()
        assert cur.execute(newest).fetchall() == [(5,), (4,), (3,)]
    finally:
        con.close()
        other.close()


# -- the catalog API and damaged roots -----------------------------------------------------


def test_the_catalog_api_takes_a_version_scope(
    lake_path: str, created: dict[int, datetime]
) -> None:
    lake = Lakehouse.open(lake_path)
    snap = lake.snapshot()
    view = Transaction(lake, snap, read_only=True)
    millis = int(created[24].timestamp() * 1000)
    scope = CatalogScope(versions=VersionScope(created_from=millis, count=2, newest_first=False))
    table = catalog_table(view, snap, "system", "versions", scope)
    assert table.column("version").to_pylist() == [24, 25]
    full = catalog_table(view, snap, "system", "versions", EVERYTHING)
    assert full.column("version").to_pylist() == RETAINED


def test_a_damaged_root_in_range_is_what_the_full_history_says(tmp_path: Path) -> None:
    con = trinity_dbapi.connect(lake_with_damaged_root(tmp_path / "lake"))
    try:
        cur = con.cursor()
        assert cur.execute("SELECT version FROM system.versions WHERE version = 5").fetchall() == [
            (5,)
        ]
        for sql in (
            "SELECT version FROM system.versions WHERE version BETWEEN 2 AND 4",
            "SELECT version FROM system.versions WHERE version IN (3, 4)",
            "SELECT version FROM system.versions WHERE created_at >= '2000-01-01'",
        ):
            with pytest.raises(trinity_dbapi.DatabaseError, match=root_node_file_name(3)):
                cur.execute(sql)
    finally:
        con.close()
