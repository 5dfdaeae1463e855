"""What statements cost a remote store: requests and request rounds, counted.

The budgets of docs/storage.md ("What each operation costs"), on memory://
and on S3 (moto): the readers read both through the storage, as they read
any store that is not a local disk. Every request waits ``LATENCY`` seconds,
so the requests a statement sends together overlap for sure and the rounds
counted are the statement's chain of requests that waited on one another;
a change that adds a sequential request fails here.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.storage import Storage
from trinity_dbapi.storage.cache import shared_cache
from trinity_dbapi.tables import file_facts, managed

LATENCY = 0.02

pytestmark = pytest.mark.usefixtures("_no_cached_bytes")


def _fresh() -> None:
    """Forget what this process cached, as a new process starts: bytes, decoded metadata, facts."""
    shared_cache().clear()
    managed.forget_metadata()
    file_facts._cache.clear()


@pytest.fixture
def _no_cached_bytes() -> Any:
    _fresh()
    yield
    _fresh()


@pytest.fixture
def lake(round_trip_lake: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    return round_trip_lake


def _connect(lake: tuple[str, dict[str, Any]]) -> Any:
    # Created now (not at the first write): the latency is set on its storage.
    con = trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True, create=True)
    con.lakehouse.storage.latency = LATENCY
    return con


def _cost(con: Any, sql: str, params: Any = None) -> tuple[Any, Any]:
    before = con.storage_stats
    cur = con.cursor()
    cur.execute(sql, params)
    rows = cur.fetchall() if cur.description else None
    return rows, con.storage_stats.since(before)


def _thirty_files(con: Any) -> None:
    cur = con.cursor()
    cur.execute("CREATE TABLE t (id INT8, v FLOAT8)")
    for i in range(30):
        cur.execute("INSERT INTO t VALUES (?, ?), (?, ?)", [2 * i, i, 2 * i + 1, i])


def test_an_autocommit_single_row_insert_costs_at_most_four_rounds(lake: Any) -> None:
    con = _connect(lake)
    con.execute("CREATE TABLE t (id INT8, v FLOAT8)")
    con.execute("INSERT INTO t VALUES (0, 0)")
    _, used = _cost(con, "INSERT INTO t VALUES (?, ?)", [1, 1.0])
    # The latest version; data file, dataset metadata, definition and the
    # check that the base still exists; the root; the hint and Kartothek's
    # main file (the schema did not change: no _common_metadata).
    assert used.rounds <= 4, used
    assert used.writes == 2 and used.creates == 4, used
    rows, _ = _cost(con, "SELECT count(*), sum(v) FROM t")
    assert rows == [(2, 1.0)]


def test_a_warm_query_on_an_unchanged_table_costs_one_round_and_no_read(lake: Any) -> None:
    con = _connect(lake)
    _thirty_files(con)
    first, _ = _cost(con, "SELECT count(*), sum(v) FROM t WHERE id < 10")
    again, used = _cost(con, "SELECT count(*), sum(v) FROM t WHERE id < 10")
    assert first == again == [(10, 20.0)]
    # Only learning that no newer version exists (two HEADs at once).
    assert (used.rounds, used.requests, used.reads) == (1, 2, 0), used
    rows, used = _cost(con, "SELECT count(*) FROM t")
    assert rows == [(60,)] and used.reads == 0, used


def test_a_fresh_connection_reads_a_table_in_depth_plus_five_rounds(
    lake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _connect(lake)
    _thirty_files(writer)
    _fresh()
    monkeypatch.setattr(Storage, "latency", LATENCY)  # connect's requests too
    reader = trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True)
    # Connecting waits for the hint, then for its root read beside the check
    # that no newer root exists; the lakehouse definition is on its way.
    assert reader.storage_stats.rounds <= 3
    rows = reader.cursor().execute("SELECT * FROM t WHERE id = 7").fetchall()
    assert rows == [(7, 3.0)]
    depth = 1  # a lakehouse of a few keys is a root node alone
    # The statement's check for a newer version and its table's definition
    # go out beside the lakehouse definition; the dataset metadata; the one
    # file whose value bounds hold 7.
    total = reader.storage_stats
    assert total.rounds == depth + 4, total
    assert (total.reads, total.exists) == (6, 3), total
    # A value no bounds rule on (FLOAT8 has none): the other 29 files, at once.
    rows, used = _cost(reader, "SELECT id FROM t WHERE v = 3.0")
    assert rows == [(6,), (7,)]
    assert used.rounds == 2 and used.reads == 29, used


def test_a_fresh_count_reads_no_data_file(lake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _connect(lake)
    _thirty_files(writer)
    _fresh()
    monkeypatch.setattr(Storage, "latency", LATENCY)
    reader = trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True)
    rows = reader.cursor().execute("SELECT count(*) FROM t").fetchall()
    assert rows == [(60,)]
    # The hint; the root and the check for a newer one; the lakehouse and
    # table definitions with the statement's check; the dataset metadata,
    # whose file facts give the count: no data file.
    total = reader.storage_stats
    assert (total.rounds, total.reads) == (4, 5), total


def test_a_fresh_describe_costs_three_rounds(lake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _connect(lake)
    writer.execute("CREATE TABLE t (id INT8, v FLOAT8)")
    _fresh()
    monkeypatch.setattr(Storage, "latency", LATENCY)
    reader = trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True)
    rows = reader.cursor().execute("DESCRIBE t").fetchall()
    assert [row[:2] for row in rows] == [("id", "int8"), ("v", "float8")]
    # The hint; the root and the check for a newer one; the lakehouse and
    # table definitions with the statement's check. Nothing else.
    total = reader.storage_stats
    assert (total.rounds, total.reads, total.exists) == (3, 4, 3), total


def test_a_commit_by_another_connection_is_read_by_the_next_statement(lake: Any) -> None:
    reader = _connect(lake)
    _thirty_files(reader)
    reader.execute("SELECT count(*) FROM t").fetchall()
    writer = trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True)
    writer.execute("INSERT INTO t VALUES (100, 100)")
    rows, used = _cost(reader, "SELECT count(*), max(id) FROM t")
    assert rows == [(61, 100)]
    assert used.rounds <= 4, used


def test_explain_analyze_and_the_connection_report_what_a_statement_cost(lake: Any) -> None:
    con = _connect(lake)
    _thirty_files(con)
    _fresh()
    rows = con.execute("EXPLAIN ANALYZE SELECT sum(v) FROM t").fetchall()
    key, text = rows[-1][0], rows[-1][-1]
    assert key == "trinity_storage"
    found = {name.strip(): value for name, value in re.findall(r"([a-z ]+):? (\d+)", text)}
    # Learning the latest version, the dataset metadata, then the 30 files at
    # once (the table's definition came from the connection's own cache).
    assert int(found["request rounds"]) <= 3, text
    assert int(found["reads"]) == 31 and int(found["bytes read"]) > 0, text
    before = con.storage_stats
    con.execute("SELECT sum(v) FROM t").fetchall()
    again = con.storage_stats.since(before)
    assert (again.reads, again.cache_hits >= 30) == (0, True), again


def test_a_bridge_query_reads_each_file_once_and_a_warm_one_nothing(
    lake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import duckdb

    from trinity_dbapi.duckdb import attach

    writer = _connect(lake)
    _thirty_files(writer)
    _fresh()
    monkeypatch.setattr(Storage, "latency", LATENCY)
    duck = duckdb.connect()
    attached = attach(duck, lake[0], storage_options=lake[1])
    storage = attached.lakehouse.storage
    opened = storage.stats.snapshot()
    # Opening (3), the latest version with the definitions ahead, the table's
    # dataset metadata, the namespace, then system.versions' 32 roots read
    # 64 at a time instead of one after another.
    assert opened.rounds <= 9, opened
    before = storage.stats.snapshot()
    assert duck.execute('SELECT count(*), sum(v) FROM "default".t').fetchall() == [(60, 870.0)]
    first = storage.stats.since(before)
    # One suffix-range GET per file, no HEAD; DuckDB's threads open several at once.
    assert (first.reads, first.exists) == (30, 0), first
    assert first.rounds < 30, first
    before = storage.stats.snapshot()
    duck.execute('SELECT count(*), sum(v) FROM "default".t').fetchall()
    assert storage.stats.since(before).requests == 0  # immutable files, from the cache
    attached.detach()


def test_a_commit_by_another_process_is_read_by_the_next_statement(lake: Any) -> None:
    import subprocess
    import sys

    reader = _connect(lake)
    _thirty_files(reader)
    assert reader.execute("SELECT count(*) FROM t").fetchall() == [(60,)]
    script = (
        "import json, sys, trinity_dbapi\n"
        "uri, options = sys.argv[1], json.loads(sys.argv[2])\n"
        "con = trinity_dbapi.connect(uri, storage_options=options or None, autocommit=True)\n"
        "con.execute('INSERT INTO t VALUES (100, 100)')\n"
    )
    if lake[0].startswith("memory://"):
        pytest.skip("memory:// is one process's store")
    import json

    subprocess.run([sys.executable, "-c", script, lake[0], json.dumps(lake[1])], check=True)
    rows, used = _cost(reader, "SELECT count(*), max(id) FROM t")
    assert rows == [(61, 100)]
    # The check finds the new root; the root, the new definition and
    # metadata, then the new file (the 30 others are cached).
    assert used.rounds <= 5, used


def test_a_fresh_read_of_big_files_costs_one_round_of_ranges_and_no_head(
    lake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.tables import remote_files

    # Files of a few KB count as big here, read in ranges of 1 KB.
    monkeypatch.setattr(remote_files, "WHOLE_FILE_BYTES", 2048)
    monkeypatch.setattr(remote_files, "RANGE_BYTES", 1024)
    writer = _connect(lake)
    writer.execute("CREATE TABLE t (id INT8, v FLOAT8)")
    for part in range(3):
        rows = ", ".join(f"({i}, {i})" for i in range(part * 1000, part * 1000 + 1000))
        writer.execute(f"INSERT INTO t VALUES {rows}")
    _fresh()
    monkeypatch.setattr(Storage, "latency", LATENCY)
    reader = trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True)
    rows, used = _cost(reader, "SELECT count(v), sum(v) FROM t")
    assert rows == [(3000, sum(range(3000)))]
    # The latest version with the definition ahead; the dataset metadata,
    # whose facts give each file's size; every range of the 3 files at once.
    assert (used.rounds, used.exists) == (3, 2), used
    assert used.reads > 2 + 3, used  # several ranges per file


@pytest.mark.parametrize("factor", [0.5, 2])
def test_a_size_the_facts_got_wrong_still_reads_the_file_whole(
    lake: Any, monkeypatch: pytest.MonkeyPatch, factor: float
) -> None:
    from trinity_dbapi.tables import remote_files

    monkeypatch.setattr(remote_files, "WHOLE_FILE_BYTES", 2048)
    writer = _connect(lake)
    writer.execute("CREATE TABLE t (id INT8, v FLOAT8)")
    values = ", ".join(f"({i}, {i})" for i in range(1000))
    writer.execute(f"INSERT INTO t VALUES {values}")
    _fresh()
    recorded = file_facts.recorded

    def lying(meta: Any) -> dict[str, Any]:
        # A damaged metadata file: sizes too small and too big.
        return {
            path: (rows, size * 2, groups) for path, (rows, size, groups) in recorded(meta).items()
        }

    monkeypatch.setattr(file_facts, "recorded", lying)
    reader = trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True)
    assert _cost(reader, "SELECT count(v), sum(id) FROM t")[0] == [(1000, sum(range(1000)))]
