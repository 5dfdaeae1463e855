"""count(*) from the file facts the dataset metadata records: exact after every kind of change.

A query that reads only how many rows a table has is answered from the
facts (:mod:`trinity_dbapi.sql.engine.row_count`); ``sum(1)`` is not
recognised and scans the files, so comparing the two after each change
checks the recorded facts against the data itself.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.sql.engine import row_count
from trinity_dbapi.tables import file_facts


def _answered_from_facts(con: Any, monkeypatch: pytest.MonkeyPatch, sql: str) -> Any:
    """Run ``sql``, failing if it scanned a data file instead of using the facts."""
    scanned: list[str] = []
    original = row_count.table_rows

    def table_rows(*args: Any) -> Any:
        rows = original(*args)
        scanned.append("facts" if rows is not None else "scan")
        return rows

    monkeypatch.setattr(row_count, "table_rows", table_rows)
    result = con.execute(sql).fetchall()
    monkeypatch.setattr(row_count, "table_rows", original)
    assert scanned == ["facts"], sql
    return result


@pytest.fixture
def con(tmp_path: Any) -> Any:
    connection = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    connection.execute("CREATE TABLE t (id INT8, p INT4) PARTITIONED BY (p)")
    return connection


def test_count_is_exact_after_every_kind_of_change(con: Any, monkeypatch: Any) -> None:
    steps = [
        "INSERT INTO t SELECT range, range % 3 FROM range(100)",
        "INSERT INTO t VALUES (1000, 1)",
        "DELETE FROM t WHERE id % 7 = 0",
        "UPDATE t SET p = 4 WHERE id < 10",
        "CALL system.rewrite_data_files('default.t')",
        "ALTER TABLE t ADD COLUMN c VARCHAR",
        "INSERT INTO t (id, p, c) VALUES (2000, 2, 'x')",
        "DELETE FROM t WHERE p = 2",
    ]
    for step in steps:
        con.execute(step)
        scanned = con.execute("SELECT sum(1) FROM t").fetchone()[0] or 0
        counted = _answered_from_facts(con, monkeypatch, "SELECT count(*) FROM t")
        assert counted == [(scanned,)], step


def test_the_answer_keeps_the_query_s_shape(con: Any, monkeypatch: Any) -> None:
    con.execute("INSERT INTO t SELECT range, range % 3 FROM range(10)")
    cur = con.cursor()
    cur.execute("SELECT count(*) AS n, count(1) > 5 AS many, 2 * count(*) FROM t")
    assert cur.fetchall() == [(10, True, 20)]
    assert [d[0] for d in cur.description][:2] == ["n", "many"]
    assert _answered_from_facts(con, monkeypatch, "SELECT 1 FROM t LIMIT 1") == [(1,)]
    assert con.execute("SELECT count(*) FROM t").description[0][0] == "count_star()"


def test_time_travel_counts_the_version_read(con: Any, monkeypatch: Any) -> None:
    con.execute("INSERT INTO t SELECT range, 1 FROM range(5)")
    con.execute("INSERT INTO t SELECT range, 1 FROM range(7)")
    rows = _answered_from_facts(
        con, monkeypatch, "SELECT count(*) FROM t FOR SYSTEM_VERSION AS OF 2"
    )
    assert rows == [(5,)]


def test_files_nothing_is_known_of_are_scanned(con: Any, monkeypatch: Any) -> None:
    con.execute("INSERT INTO t SELECT range, range % 2 FROM range(10)")
    # Metadata written without facts (an older release): the files are counted by DuckDB.
    monkeypatch.setattr(file_facts, "for_added", lambda storage, added: {})
    monkeypatch.setattr(file_facts, "_cache", {})
    con.execute("INSERT INTO t SELECT range, 5 FROM range(4)")
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(14,)]


def test_queries_that_read_a_column_are_scanned(con: Any) -> None:
    con.execute("INSERT INTO t SELECT range, range % 3 FROM range(10)")
    assert con.execute("SELECT count(*) FROM t WHERE id > 4").fetchall() == [(5,)]
    assert con.execute("SELECT count(id), count(*) FROM t GROUP BY p ORDER BY p").fetchall() == [
        (4, 4),
        (3, 3),
        (3, 3),
    ]


def test_a_damaged_facts_attribute_is_a_corrupt_file(con: Any) -> None:
    import json

    from trinity_dbapi.tables.metadata import DatasetMetadata
    from trinity_dbapi.tables.metadata_io import decode_metadata, encode_metadata

    bad = {file_facts.FACTS_KEY: '{"a": [1, -2, 3]}'}
    with pytest.raises(trinity_dbapi.errors.ProgrammingError, match="non-negative"):
        encode_metadata(DatasetMetadata("u", {}, metadata=bad), "json")  # never written
    body = {"dataset_metadata_version": 4, "dataset_uuid": "u", "metadata": bad, "partitions": {}}
    with pytest.raises(trinity_dbapi.errors.CorruptFileError, match="non-negative"):
        decode_metadata("u.by-dataset-metadata.json", json.dumps(body).encode())


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("insert"), st.integers(0, 40)),
            st.tuples(st.just("delete"), st.integers(0, 5)),
            st.tuples(st.just("compact"), st.just(0)),
        ),
        max_size=6,
    )
)
def test_count_matches_a_model(tmp_path_factory: Any, steps: list[tuple[str, int]]) -> None:
    con = trinity_dbapi.connect(str(tmp_path_factory.mktemp("model") / "lake"), autocommit=True)
    con.execute("CREATE TABLE t (id INT8, p INT4) PARTITIONED BY (p)")
    model: list[int] = []
    for kind, n in steps:
        if kind == "insert":
            con.execute(f"INSERT INTO t SELECT range, range % 3 FROM range({n})")
            model += list(range(n))
        elif kind == "delete":
            con.execute(f"DELETE FROM t WHERE id % 6 = {n}")
            model = [i for i in model if i % 6 != n]
        else:
            con.execute("CALL system.rewrite_data_files('default.t')")
        assert con.execute("SELECT count(*) FROM t").fetchall() == [(len(model),)]
