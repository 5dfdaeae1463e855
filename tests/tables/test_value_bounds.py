"""Value bounds in the file facts: point queries skip files, and never a matching row.

Each data file this project writes records the min and max of its integer
and short text columns (``trinity_dbapi.tables.value_bounds``); a query's
``column = value`` / ``IN`` reads only the files whose bounds can hold one
of its values. The answers are checked against a plain model, and the
files read are counted: a fresh process's point lookup over 30 files reads
the one that holds the value.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.storage.cache import shared_cache
from trinity_dbapi.tables import file_facts, managed

TABLE = "CREATE TABLE t (id INT8, k VARCHAR, v FLOAT8)"


def _fresh() -> None:
    """As a new process finds it: no cached bytes, facts or bounds."""
    shared_cache().clear()
    with file_facts._lock:
        file_facts._cache.clear()
        file_facts._bounds.clear()


def _reads(con: Any, sql: str, params: Any = None) -> tuple[list[Any], int]:
    before = con.storage_stats
    rows = sorted(con.cursor().execute(sql, params).fetchall(), key=repr)
    return rows, con.storage_stats.since(before).reads


def _thirty_files(uri: str) -> Any:
    con = trinity_dbapi.connect(uri, autocommit=True)
    con.execute(TABLE)
    for i in range(30):
        a, b = 2 * i, 2 * i + 1
        con.execute(
            "INSERT INTO t VALUES (?, ?, ?), (?, ?, ?)", [a, f"k{a:03d}", i, b, f"k{b:03d}", i]
        )
    return con


def _recorded(con: Any) -> dict[str, Any]:
    lakehouse = con.lakehouse
    table = lakehouse.begin().load_table("default", "t")
    meta = managed.metadata(lakehouse.storage, table)
    return json.loads(meta.metadata[file_facts.FACTS_KEY])


@pytest.fixture(autouse=True)
def _clean() -> Any:
    _fresh()
    yield
    _fresh()


def test_every_file_records_the_bounds_of_its_integer_and_text_columns(tmp_path: Any) -> None:
    con = _thirty_files(f"memory://bounds-{tmp_path.name}/lake")
    entries = list(_recorded(con).values())
    assert len(entries) == 30
    # id is column 1, k column 2; the FLOAT8 column 3 has none.
    assert sorted(e[3]["1"] for e in entries)[:2] == [[0, 1], [2, 3]]
    assert min(e[3]["2"] for e in entries) == ["k000", "k001"]
    assert all(set(e[3]) == {"1", "2"} and e[:3][0] == 2 for e in entries)


def test_a_fresh_point_lookup_reads_only_the_file_that_can_hold_the_value(
    tmp_path: Any,
) -> None:
    uri = f"memory://bounds-{tmp_path.name}/lake"
    _thirty_files(uri).close()
    _fresh()
    con = trinity_dbapi.connect(uri, autocommit=True)
    con.execute("SELECT count(*) FROM t").fetchall()  # definitions and metadata: cached now
    rows, reads = _reads(con, "SELECT * FROM t WHERE id = 7")
    assert (rows, reads) == ([(7, "k007", 3.0)], 1)
    rows, reads = _reads(con, "SELECT id FROM t WHERE k IN ('k020', 'k041')")
    assert (rows, reads) == ([(20,), (41,)], 2)
    rows, reads = _reads(con, "SELECT id FROM t WHERE id = ?", [1000])
    assert (rows, reads) == ([], 0)
    # A value of another kind than the column is DuckDB's to cast: every
    # file is read (those already read come from the cache) and the row found.
    rows, reads = _reads(con, "SELECT id FROM t WHERE id = '9'")
    assert rows == [(9,)] and reads == 27


def test_bounds_never_outlive_a_column_dropped_and_added_again(tmp_path: Any) -> None:
    uri = f"memory://bounds-{tmp_path.name}/lake"
    con = _thirty_files(uri)
    # A new column ID, all NULL in the old files, whose bounds of the old
    # column must neither make them match nor skip the new file.
    con.execute("ALTER TABLE t DROP COLUMN id")
    con.execute("ALTER TABLE t ADD COLUMN id INT8")
    con.execute("INSERT INTO t VALUES ('new', 0, 7)")
    _fresh()
    rows, _ = _reads(con, "SELECT k, id FROM t WHERE id = 7")
    assert rows == [("new", 7)]
    rows, _ = _reads(con, "SELECT k FROM t WHERE k = 'k007'")
    assert rows == [("k007",)]


def test_files_of_only_nulls_and_of_long_text_are_never_skipped_wrongly(tmp_path: Any) -> None:
    con = trinity_dbapi.connect(f"memory://bounds-{tmp_path.name}/lake", autocommit=True)
    con.execute(TABLE)
    long = "x" * 100
    con.execute("INSERT INTO t VALUES (NULL, NULL, 1)")
    con.execute("INSERT INTO t VALUES (5, ?, 2)", [long])
    con.execute("INSERT INTO t VALUES (NULL, 'b', 3), (6, NULL, 4)")
    recorded = list(_recorded(con).values())
    assert [e[3] if len(e) == 4 else None for e in recorded] == [
        None,
        {"1": [5, 5]},  # the 100-character text is no bound
        {"1": [6, 6], "2": ["b", "b"]},
    ]
    _fresh()
    assert _reads(con, "SELECT v FROM t WHERE k = ?", [long])[0] == [(2.0,)]
    assert _reads(con, "SELECT v FROM t WHERE id IN (5, 6)")[0] == [(2.0,), (4.0,)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.lists(
        st.lists(
            st.tuples(
                st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.integers(-5, 5)),
                st.one_of(st.none(), st.text(max_size=4), st.sampled_from(["", "a", "é", "😀"])),
            ),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=5,
    ),
    wanted=st.lists(st.integers(-6, 6), min_size=1, max_size=3),
    text=st.lists(st.sampled_from(["", "a", "b", "é", "😀", "zz"]), min_size=1, max_size=2),
)
def test_pruned_answers_equal_a_model_of_every_row(
    files: list[list[tuple[int | None, str | None]]], wanted: list[int], text: list[str]
) -> None:
    _fresh()
    con = trinity_dbapi.connect("memory://bounds-model/lake", autocommit=True)
    try:
        con.execute("DROP TABLE IF EXISTS t")
        con.execute(TABLE)
        for rows in files:
            values = [x for n, k in rows for x in (n, k, 0.0)]
            con.execute("INSERT INTO t VALUES " + ", ".join(["(?, ?, ?)"] * len(rows)), values)
        every = [row for rows in files for row in rows]
        marks = ", ".join("?" * len(wanted))
        got, _ = _reads(con, f"SELECT id, k FROM t WHERE id IN ({marks})", wanted)
        assert got == sorted([r for r in every if r[0] in wanted], key=repr)
        got, _ = _reads(
            con, "SELECT id, k FROM t WHERE k IN (" + ", ".join("?" * len(text)) + ")", text
        )
        assert got == sorted([r for r in every if r[1] in text], key=repr)
    finally:
        con.execute("DROP TABLE IF EXISTS t")
        con.close()


@pytest.mark.parametrize(
    ("entry", "rule"),
    [
        ([1, 2, 1, []], "fourth element must be an object"),
        ([1, 2, 1, {"x": [1, 2]}], "column id 'x'"),
        ([1, 2, 1, {"1": [3, 2]}], "min <= max"),
        ([1, 2, 1, {"1": [1, "a"]}], "two integers or two strings"),
        ([1, 2, 1, {"1": [True, True]}], "two integers or two strings"),
        ([1, 2, 1, {"1": [0, 2**63]}], "two integers or two strings"),
        ([1, 2, 1, {"1": ["a", "b" * 65]}], "at most 64"),
        ([1, 2, 1, {}, 5], "must be [rows, bytes, row_groups]"),
    ],
)
def test_malformed_bounds_are_refused_with_the_rule(entry: list[Any], rule: str) -> None:
    with pytest.raises(ValueError, match=r"trinity\.file_facts") as caught:
        text = json.dumps({"label": entry})
        file_facts.parse(text)
        file_facts.parse_bounds(text)
    assert rule in str(caught.value)


def test_a_query_refuses_malformed_bounds_as_a_corrupt_file(tmp_path: Any) -> None:
    import dataclasses

    from trinity_dbapi.errors import CorruptFileError

    con = _thirty_files(f"memory://bounds-{tmp_path.name}/lake")
    table = con.lakehouse.begin().load_table("default", "t")
    meta = managed.metadata(con.lakehouse.storage, table)
    bad = json.dumps({label: [2, 10, 1, {"1": [9, 1]}] for label in meta.partitions})
    damaged = dataclasses.replace(meta, metadata={**meta.metadata, file_facts.FACTS_KEY: bad})
    assert len(file_facts.recorded(damaged)) == 30  # the counts still read
    with pytest.raises(CorruptFileError, match=r"min <= max") as caught:
        file_facts.recorded_bounds(damaged)
    assert meta.dataset_uuid in str(caught.value)
