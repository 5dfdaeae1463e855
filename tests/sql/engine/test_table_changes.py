"""``system.table_changes``: the rows each version inserted and deleted, from the files that differ."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.errors import (
    NoSuchTableError,
    NoSuchVersionError,
    NotSupportedError,
    ProgrammingError,
)
from trinity_dbapi.sql.engine import table_changes
from trinity_dbapi.tables import reader

CHANGES = "SELECT * FROM system.table_changes('ns.t', ?, ?)"


def _connect(uri: str) -> Any:
    return trinity_dbapi.connect(uri, autocommit=True)


@pytest.fixture
def conn() -> Iterator[Any]:
    connection = _connect(f"memory://changes-{uuid.uuid4().hex}")
    connection.execute("CREATE NAMESPACE ns")
    connection.execute("CREATE TABLE ns.t (id INT8, v VARCHAR)")
    yield connection
    connection.close()


def _version(conn: Any) -> int:
    return int(conn.execute("SELECT max(version) FROM system.versions").fetchone()[0])


def _changes(conn: Any, start: Any, end: Any) -> Counter[tuple[Any, ...]]:
    """The rows of table_changes as a multiset (the order within a version is not promised)."""
    return Counter(conn.execute(CHANGES, [start, end]).fetchall())


def test_columns_are_version_change_type_then_the_table_columns(conn: Any) -> None:
    start = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    cur = conn.execute(CHANGES, [start, _version(conn)])
    assert [d[0] for d in cur.description] == ["version", "change_type", "id", "v"]
    assert cur.fetchall() == [(start + 1, "insert", 1, "a")]


def test_insert_delete_update_each_attributed_to_its_version(conn: Any) -> None:
    start = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    inserted = _version(conn)
    conn.execute("DELETE FROM ns.t WHERE id = 2")
    deleted = _version(conn)
    conn.execute("UPDATE ns.t SET v = 'z' WHERE id = 3")
    updated = _version(conn)
    assert _changes(conn, start, updated) == Counter(
        [
            (inserted, "insert", 1, "a"),
            (inserted, "insert", 2, "b"),
            (inserted, "insert", 3, "c"),
            (deleted, "delete", 2, "b"),
            (updated, "delete", 3, "c"),
            (updated, "insert", 3, "z"),
        ]
    )
    # from is exclusive, to inclusive: one version's own changes
    assert _changes(conn, deleted, updated) == Counter(
        [(updated, "delete", 3, "c"), (updated, "insert", 3, "z")]
    )
    assert _changes(conn, updated, updated) == Counter()


def test_rows_come_ordered_by_version_deletes_first(conn: Any) -> None:
    start = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    conn.execute("UPDATE ns.t SET v = 'b'")
    rows = conn.execute(
        "SELECT version, change_type, v FROM system.table_changes('ns.t', ?, ?)",
        [start, _version(conn)],
    ).fetchall()
    assert rows == [
        (start + 1, "insert", "a"),
        (start + 2, "delete", "a"),
        (start + 2, "insert", "b"),
    ]


def test_duplicate_rows_cancel_as_a_multiset(conn: Any) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a'), (1, 'a'), (1, 'a'), (2, NULL), (2, NULL)")
    start = _version(conn)
    # one of three equal rows goes, one NULL row becomes another value
    conn.execute("DELETE FROM ns.t WHERE id = 1")
    conn.execute("INSERT INTO ns.t VALUES (1, 'a'), (1, 'a')")
    end = _version(conn)
    net = Counter({key: n for key, n in _changes(conn, start, end).items()})
    assert net == Counter({(start + 1, "delete", 1, "a"): 3, (start + 2, "insert", 1, "a"): 2})
    conn.execute("UPDATE ns.t SET v = 'x' WHERE id = 2 AND v IS NULL")
    assert _changes(conn, end, end + 1) == Counter(
        {(end + 1, "delete", 2, None): 2, (end + 1, "insert", 2, "x"): 2}
    )


def test_rows_of_every_kind_cancel_exactly(conn: Any) -> None:
    """Nested values, NaN, NULLs and nanoseconds compare as whole rows: unchanged rows vanish."""
    conn.execute(
        "CREATE TABLE ns.n (id INT8, tags ARRAY<VARCHAR>, s STRUCT<a: INT8, b: VARCHAR>, "
        "m MAP<VARCHAR, INT8>, f DOUBLE, d DECIMAL(10,2), ts TIMESTAMP(9))"
    )
    conn.execute(
        "INSERT INTO ns.n VALUES (1, ['a','b'], {'a': 1, 'b': 'x'}, MAP {'k': 1}, 'NaN'::DOUBLE, "
        "1.25, TIMESTAMP '2024-01-01 00:00:00.123456789'), (2, NULL, NULL, NULL, NULL, NULL, NULL)"
    )
    start = _version(conn)
    conn.execute("UPDATE ns.n SET id = 3 WHERE id = 2")
    rows = conn.execute(
        "SELECT * FROM system.table_changes('ns.n', ?, ?)", [start, start + 1]
    ).fetchall()
    nulls = (None,) * 6
    assert rows == [(start + 1, "delete", 2, *nulls), (start + 1, "insert", 3, *nulls)]


def test_merge_shows_its_updates_and_inserts(conn: Any) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')")
    conn.execute("CREATE TABLE ns.s (id INT8, v VARCHAR)")
    conn.execute("INSERT INTO ns.s VALUES (2, 'B'), (3, 'C')")
    start = _version(conn)
    conn.execute(
        "MERGE INTO ns.t USING ns.s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v "
        "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v)"
    )
    end = _version(conn)
    assert _changes(conn, start, end) == Counter(
        [(end, "delete", 2, "b"), (end, "insert", 2, "B"), (end, "insert", 3, "C")]
    )


def test_compaction_shows_nothing(conn: Any) -> None:
    for i in range(4):
        conn.execute(f"INSERT INTO ns.t VALUES ({i}, 'v{i}')")
    start = _version(conn)
    conn.execute("CALL system.rewrite_data_files(table => 'ns.t')")
    end = _version(conn)
    assert end > start
    files = conn.execute(
        "SELECT count(*) FROM system.data_files WHERE table_name = 't'"
    ).fetchone()[0]
    assert files == 1  # the four files were rewritten as one
    assert _changes(conn, start, end) == Counter()


def test_where_order_by_and_aggregates_over_it(conn: Any) -> None:
    start = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    conn.execute("DELETE FROM ns.t WHERE id >= 2")
    end = _version(conn)
    rows = conn.execute(
        "SELECT change_type, count(*), sum(id) FROM system.table_changes('ns.t', ?, ?) "
        "WHERE id > 1 GROUP BY change_type ORDER BY change_type",
        [start, end],
    ).fetchall()
    assert rows == [("delete", 2, 5), ("insert", 2, 5)]
    joined = conn.execute(
        "SELECT c.id, t.v FROM system.table_changes('ns.t', ?, ?) AS c "
        "LEFT JOIN ns.t ON c.id = t.id WHERE c.change_type = 'insert' ORDER BY c.id",
        [start, end],
    ).fetchall()
    assert joined == [(1, "a"), (2, None), (3, None)]
    qualified = conn.execute(
        f"SELECT table_changes.id FROM system.table_changes('ns.t', {start}, {end}) "
        "WHERE table_changes.change_type = 'delete' ORDER BY 1"
    ).fetchall()
    assert qualified == [(2,), (3,)]


def test_tags_as_points(conn: Any) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    conn.execute("CALL system.export_snapshot(name => 'before')")
    tagged = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (2, 'b')")
    conn.execute("CALL system.export_snapshot(name => 'after')")
    rows = conn.execute(
        "SELECT version, change_type, id FROM system.table_changes('ns.t', 'before', 'after')"
    ).fetchall()
    assert rows == [(tagged + 1, "insert", 2)]
    assert conn.execute(
        "SELECT id FROM system.table_changes('ns.t', 'before', ?)", [_version(conn)]
    ).fetchall() == [(2,)]


def test_timestamps_as_points(conn: Any) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    first = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (2, 'b')")
    (at,) = conn.execute(
        "SELECT created_at FROM system.versions WHERE version = ?", [first]
    ).fetchone()
    rows = conn.execute(
        "SELECT version, change_type, id FROM system.table_changes('ns.t', ?, ?)",
        [at, _version(conn)],
    ).fetchall()
    assert rows == [(first + 1, "insert", 2)]
    # a date is its midnight (UTC), as in FOR SYSTEM_TIME AS OF
    everything = conn.execute(
        "SELECT count(*) FROM system.table_changes('ns.t', 0, DATE '2999-01-01')"
    )
    assert everything.fetchall() == [(2,)]
    with pytest.raises(NoSuchVersionError, match="no retained version was created at or before"):
        conn.execute("SELECT * FROM system.table_changes('ns.t', DATE '2000-01-01', 1)")


def test_a_table_created_after_from_point_is_all_inserts(conn: Any) -> None:
    start = _version(conn)
    conn.execute("CREATE TABLE ns.new (id INT8)")
    conn.execute("INSERT INTO ns.new VALUES (1), (2)")
    rows = conn.execute(
        "SELECT version, change_type, id FROM system.table_changes('ns.new', ?, ?) ORDER BY id",
        [start, _version(conn)],
    ).fetchall()
    assert rows == [(start + 2, "insert", 1), (start + 2, "insert", 2)]


def test_a_table_dropped_and_made_again_deletes_then_inserts(conn: Any) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    start = _version(conn)
    conn.execute("DROP TABLE ns.t")
    conn.execute("CREATE TABLE ns.t (id INT8, v VARCHAR)")
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    end = _version(conn)
    assert _changes(conn, start, end) == Counter(
        [(start + 1, "delete", 1, "a"), (end, "insert", 1, "a")]
    )


def test_columns_are_those_of_to_point_null_filled(conn: Any) -> None:
    start = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    conn.execute("ALTER TABLE ns.t ADD COLUMN n INT8")
    conn.execute("INSERT INTO ns.t VALUES (2, 'b', 7)")
    middle = _version(conn)
    cur = conn.execute(CHANGES, [start, middle])
    assert [d[0] for d in cur.description] == ["version", "change_type", "id", "v", "n"]
    assert Counter(cur.fetchall()) == Counter(
        [(start + 1, "insert", 1, "a", None), (middle, "insert", 2, "b", 7)]
    )
    # A column dropped and added again is another column (another ID): the
    # values of the old one are not brought back.
    conn.execute("ALTER TABLE ns.t DROP COLUMN n")
    conn.execute("ALTER TABLE ns.t ADD COLUMN n INT8")
    conn.execute("INSERT INTO ns.t VALUES (3, 'c', 9)")
    end = _version(conn)
    assert _changes(conn, start, end) == Counter(
        [
            (start + 1, "insert", 1, "a", None),
            (middle, "insert", 2, "b", None),
            (end, "insert", 3, "c", 9),
        ]
    )
    conn.execute("ALTER TABLE ns.t DROP COLUMN n")
    assert [d[0] for d in conn.execute(CHANGES, [start, _version(conn)]).description] == [
        "version",
        "change_type",
        "id",
        "v",
    ]


def test_a_column_named_version_pushes_ours_aside(conn: Any) -> None:
    start = _version(conn)
    conn.execute("CREATE TABLE ns.v (version INT8, change_type VARCHAR)")
    conn.execute("INSERT INTO ns.v VALUES (3, 'x')")
    cur = conn.execute("SELECT * FROM system.table_changes('ns.v', ?, ?)", [start, _version(conn)])
    assert [d[0] for d in cur.description] == ["_version", "_change_type", "version", "change_type"]
    assert cur.fetchall() == [(start + 2, "insert", 3, "x")]


def test_points_not_on_one_chain_give_the_difference_without_versions(
    conn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')")
    start = _version(conn)
    conn.execute("DELETE FROM ns.t WHERE id = 1")
    conn.execute("INSERT INTO ns.t VALUES (3, 'c')")
    conn.execute("UPDATE ns.t SET v = 'B' WHERE id = 2")
    end = _version(conn)
    monkeypatch.setattr(table_changes, "versions_between", lambda start, end: None)
    assert _changes(conn, start, end) == Counter(
        [
            (None, "delete", 1, "a"),
            (None, "delete", 2, "b"),
            (None, "insert", 2, "B"),
            (None, "insert", 3, "c"),
        ]
    )


def test_errors(conn: Any) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    end = _version(conn)
    with pytest.raises(
        ProgrammingError, match=r"from_point \(version 3\) is later than to_point \(version 2\)"
    ):
        conn.execute(CHANGES, [3, 2])
    with pytest.raises(
        NoSuchTableError, match=r"'ns.nope' does not exist; it does not exist at version"
    ):
        conn.execute("SELECT * FROM system.table_changes('ns.nope', 0, ?)", [end])
    conn.execute("DROP TABLE ns.t")
    with pytest.raises(
        NoSuchTableError, match=rf"does not exist at version {end + 1}, the to_point"
    ):
        conn.execute(CHANGES, [0, end + 1])
    with pytest.raises(ProgrammingError, match="takes 3 arguments, got 2"):
        conn.execute("SELECT * FROM system.table_changes('ns.t', 0)")
    with pytest.raises(ProgrammingError, match="from_point is -1"):
        conn.execute(CHANGES, [-1, 0])
    with pytest.raises(ProgrammingError, match="is named 'nope'"):
        conn.execute(CHANGES, ["nope", 0])
    with pytest.raises(ProgrammingError, match="version 99 does not exist"):
        conn.execute(CHANGES, [0, 99])
    # unqualified, the name is DuckDB's, and refused like any table function
    with pytest.raises(NotSupportedError, match="table function 'table_changes' is not allowed"):
        conn.execute("SELECT * FROM table_changes('ns.t', 0, 1)")


def test_expired_versions_give_the_expired_version_error(conn: Any) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    old = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (2, 'b')")
    conn.execute(
        "CALL system.expire_versions(older_than => TIMESTAMP '2999-01-01', retain_last => 1)"
    )
    with pytest.raises(trinity_dbapi.Error) as travel:
        conn.execute("SELECT * FROM ns.t FOR SYSTEM_VERSION AS OF ?", [old])
    with pytest.raises(type(travel.value)) as changes:
        conn.execute(CHANGES, [old, _version(conn)])
    assert str(changes.value) == str(travel.value)


def test_an_expired_version_between_the_points_gives_its_error(conn: Any) -> None:
    conn.execute("INSERT INTO ns.t VALUES (1, 'a')")
    # an export keeps its own root: the walk from it reaches the expired versions after it
    (kept,) = conn.execute("CALL system.export_snapshot(name => 'kept')").fetchone()[1:2]
    conn.execute("INSERT INTO ns.t VALUES (2, 'b')")
    conn.execute(
        "CALL system.expire_versions(older_than => TIMESTAMP '2999-01-01', retain_last => 1)"
    )
    end = _version(conn)
    with pytest.raises(trinity_dbapi.Error) as travel:
        conn.execute("SELECT * FROM ns.t FOR SYSTEM_VERSION AS OF ?", [kept + 1])
    with pytest.raises(type(travel.value)) as changes:
        conn.execute(CHANGES, ["kept", end])
    assert str(changes.value) == str(travel.value)
    assert f"version {kept + 1} was expired" in str(changes.value)


def test_only_the_files_that_differ_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = _connect(str(tmp_path / "lake"))  # a local root: each file read through read_referenced
    conn.execute("CREATE NAMESPACE ns")
    conn.execute("CREATE TABLE ns.t (id INT8, v VARCHAR)")
    for i in range(10):
        conn.execute(f"INSERT INTO ns.t VALUES ({i}, 'v{i}'), ({i + 100}, 'w{i}')")
    start = _version(conn)
    conn.execute("INSERT INTO ns.t VALUES (50, 'new')")
    conn.execute("DELETE FROM ns.t WHERE id = 3")  # rewrites the one file holding 3
    end = _version(conn)
    read: list[str] = []
    original = reader.read_referenced

    def counting(storage: Any, path: str, referrer: str) -> bytes:
        if path.endswith(".parquet"):
            read.append(path)
        return original(storage, path, referrer)

    monkeypatch.setattr(reader, "read_referenced", counting)
    rows = conn.execute(CHANGES, [start, end]).fetchall()
    assert Counter(rows) == Counter([(start + 1, "insert", 50, "new"), (end, "delete", 3, "v3")])
    # the new file, the file the DELETE removed and the one it wrote: 3 of 12
    assert len(read) == 3
    assert len(set(read)) == 3
    conn.close()
