"""The PEP 249 driver: module globals, connections, cursors, transactions, isolation."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import trinity_dbapi
from trinity_dbapi import errors


@pytest.fixture
def uri(tmp_path: Path) -> str:
    return str(tmp_path / "lake")


def _names(cur: Any) -> list[str]:
    return [row[0] for row in cur.fetchall()]


# -- module -------------------------------------------------------------------------


def test_module_globals() -> None:
    assert trinity_dbapi.apilevel == "2.0"
    assert trinity_dbapi.threadsafety == 2
    assert trinity_dbapi.paramstyle == "qmark"
    for name in (
        "Warning",
        "Error",
        "InterfaceError",
        "DatabaseError",
        "DataError",
        "OperationalError",
        "IntegrityError",
        "InternalError",
        "ProgrammingError",
        "NotSupportedError",
    ):
        assert issubclass(getattr(trinity_dbapi, name), Exception)
    assert trinity_dbapi.Date(2024, 1, 2) == datetime.date(2024, 1, 2)
    assert trinity_dbapi.Binary(b"x") == b"x"


def test_connect_creates_and_reopens(uri: str) -> None:
    with trinity_dbapi.connect(uri, name="sales_lake") as conn:
        conn.cursor().execute("CREATE NAMESPACE n1")
    assert conn.closed
    with trinity_dbapi.connect(uri, create=False) as conn:
        cur = conn.cursor().execute("SHOW NAMESPACES LIKE 'n%'")
        assert _names(cur) == ["n1"]
        assert conn.lakehouse.snapshot().definition.name == "sales_lake"


def test_connect_missing_without_create(tmp_path: Path) -> None:
    with pytest.raises(errors.OperationalError, match="no Trinity Lakehouse"):
        trinity_dbapi.connect(str(tmp_path / "none"), create=False)
    assert not (tmp_path / "none").exists()


def test_connect_rejects_unknown_options(uri: str) -> None:
    with pytest.raises(errors.ProgrammingError, match="unknown options colour"):
        trinity_dbapi.connect(uri, colour="red")


def test_connection_exception_attributes(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)
    assert conn.ProgrammingError is errors.ProgrammingError
    assert conn.Error is errors.Error
    conn.close()
    conn.close()  # closing twice is fine
    with pytest.raises(errors.InterfaceError, match="closed"):
        conn.cursor()


# -- transactions -------------------------------------------------------------------


def test_changes_are_invisible_to_others_until_commit(uri: str) -> None:
    writer = trinity_dbapi.connect(uri)
    reader = trinity_dbapi.connect(uri, autocommit=True)
    writer.cursor().execute("CREATE NAMESPACE staged")
    assert "staged" not in _names(reader.cursor().execute("SHOW NAMESPACES"))
    # the writer sees its own change
    assert "staged" in _names(writer.cursor().execute("SHOW NAMESPACES"))
    writer.commit()
    assert "staged" in _names(reader.cursor().execute("SHOW NAMESPACES"))


def test_rollback_discards(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE gone")
    conn.rollback()
    assert "gone" not in _names(cur.execute("SHOW NAMESPACES"))
    conn.close()
    assert "gone" not in _names(trinity_dbapi.connect(uri).cursor().execute("SHOW NAMESPACES"))


def test_close_discards_uncommitted_changes(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)
    conn.cursor().execute("CREATE NAMESPACE lost")
    conn.close()
    other = trinity_dbapi.connect(uri).cursor()
    assert "lost" not in _names(other.execute("SHOW NAMESPACES"))


def test_context_manager_rolls_back_on_error(uri: str) -> None:
    with pytest.raises(ZeroDivisionError), trinity_dbapi.connect(uri) as conn:
        conn.cursor().execute("CREATE NAMESPACE half")
        raise ZeroDivisionError
    cur = trinity_dbapi.connect(uri).cursor()
    assert "half" not in _names(cur.execute("SHOW NAMESPACES"))


def test_reads_are_pinned_within_a_transaction(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)  # not autocommit: the first statement pins a version
    other = trinity_dbapi.connect(uri, autocommit=True)
    cur = conn.cursor()
    before = _names(cur.execute("SHOW NAMESPACES"))
    other.cursor().execute("CREATE NAMESPACE later")
    assert _names(cur.execute("SHOW NAMESPACES")) == before  # repeatable read
    conn.commit()
    assert "later" in _names(cur.execute("SHOW NAMESPACES"))


def test_sql_begin_commit_rollback_in_autocommit(uri: str) -> None:
    conn = trinity_dbapi.connect(uri, autocommit=True)
    cur = conn.cursor()
    cur.execute("BEGIN TRANSACTION ISOLATION LEVEL SNAPSHOT")
    assert conn.in_transaction and conn.isolation_level == "SNAPSHOT ISOLATION"
    cur.execute("CREATE NAMESPACE a1")
    cur.execute("CREATE NAMESPACE a2")
    cur.execute("ROLLBACK")
    assert not {"a1", "a2"} & set(_names(cur.execute("SHOW NAMESPACES")))
    cur.execute("START TRANSACTION")
    cur.execute("CREATE NAMESPACE b1")
    cur.execute("CREATE NAMESPACE b2")
    version = conn.lakehouse.latest_version()
    cur.execute("COMMIT")
    assert conn.lakehouse.latest_version() == version + 1  # one commit for both
    assert {"b1", "b2"} <= set(_names(cur.execute("SHOW NAMESPACES")))


def test_autocommit_commits_every_statement(uri: str) -> None:
    conn = trinity_dbapi.connect(uri, autocommit=True)
    start = conn.lakehouse.latest_version()
    conn.cursor().execute("CREATE NAMESPACE x1")
    conn.cursor().execute("CREATE NAMESPACE x2")
    assert conn.lakehouse.latest_version() == start + 2
    assert not conn.in_transaction


def test_switching_autocommit_on_commits(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)
    conn.cursor().execute("CREATE NAMESPACE pending")
    conn.autocommit = True
    other = trinity_dbapi.connect(uri, autocommit=True).cursor()
    assert "pending" in _names(other.execute("SHOW NAMESPACES"))


def test_failed_statement_undoes_only_itself(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE keep")
    with pytest.raises(errors.ProgrammingError, match="already exists"):
        cur.execute("CREATE NAMESPACE keep")
    conn.commit()
    assert "keep" in _names(cur.execute("SHOW NAMESPACES"))


def test_write_skew_is_a_conflict_under_serializable(uri: str) -> None:
    setup = trinity_dbapi.connect(uri, autocommit=True).cursor()
    setup.execute("CREATE NAMESPACE ns")
    one = trinity_dbapi.connect(uri)
    two = trinity_dbapi.connect(uri)
    # each lists the tables of ns, then creates one: a concurrent CREATE in a range
    # the other listed is a serialization conflict
    assert one.cursor().execute("SHOW TABLES IN ns").fetchall() == []
    assert two.cursor().execute("SHOW TABLES IN ns").fetchall() == []
    one.cursor().execute("CREATE TABLE ns.t1 (a INT)")
    two.cursor().execute("CREATE TABLE ns.t2 (a INT)")
    one.commit()
    with pytest.raises(errors.OperationalError, match="commit conflict"):
        two.commit()
    assert not two.in_transaction
    assert _names(setup.execute("SHOW TABLES IN ns")) == ["t1"]


def test_snapshot_isolation_lets_disjoint_writes_both_commit(uri: str) -> None:
    setup = trinity_dbapi.connect(uri, autocommit=True).cursor()
    setup.execute("CREATE NAMESPACE ns")
    one = trinity_dbapi.connect(uri, isolation_level="SNAPSHOT")
    two = trinity_dbapi.connect(uri, isolation_level="SNAPSHOT")
    one.cursor().execute("SHOW TABLES IN ns")
    two.cursor().execute("SHOW TABLES IN ns")
    one.cursor().execute("CREATE TABLE ns.t1 (a INT)")
    two.cursor().execute("CREATE TABLE ns.t2 (a INT)")
    one.commit()
    two.commit()
    assert _names(setup.execute("SHOW TABLES IN ns")) == ["t1", "t2"]


def test_read_only_connection_refuses_writes(uri: str) -> None:
    trinity_dbapi.connect(uri, autocommit=True).cursor().execute("CREATE NAMESPACE r")
    conn = trinity_dbapi.connect(uri, read_only=True)
    with pytest.raises(errors.ProgrammingError, match="read-only"):
        conn.cursor().execute("CREATE NAMESPACE w")
    assert "r" in _names(conn.cursor().execute("SHOW NAMESPACES"))


# -- cursors ------------------------------------------------------------------------


def test_fetch_methods_and_iteration(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    cur.execute("SELECT * FROM range(5) AS r(i)")
    assert cur.rowcount == -1  # streamed: unknown until read (PEP 249 allows -1)
    assert cur.fetchone() == (0,)
    assert cur.fetchmany(2) == [(1,), (2,)]
    cur.arraysize = 1
    assert cur.fetchmany() == [(3,)]
    assert list(cur) == [(4,)]
    assert cur.fetchone() is None
    assert cur.fetchall() == []
    cur.execute("SELECT 1 AS a, 'x' AS b")
    assert cur.fetchall() == [(1, "x")]


def test_description_type_codes_compare_to_type_objects(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    cur.execute(
        "SELECT 1::INTEGER AS i, 'a' AS s, 1.5::DOUBLE AS d, 2.50::DECIMAL(5,2) AS m, "
        "DATE '2024-01-02' AS dt, TIMESTAMP '2024-01-02 03:04:05' AS ts, 'ab'::BLOB AS b"
    )
    description = cur.description
    assert [d[0] for d in description] == ["i", "s", "d", "m", "dt", "ts", "b"]
    assert all(len(d) == 7 for d in description)
    codes = [d[1] for d in description]
    assert codes[0] == trinity_dbapi.NUMBER and codes[2] == trinity_dbapi.NUMBER
    assert codes[1] == trinity_dbapi.STRING
    assert codes[3] == trinity_dbapi.NUMBER and description[3][4:6] == (5, 2)
    assert codes[4] == trinity_dbapi.DATETIME and codes[5] == trinity_dbapi.DATETIME
    assert codes[6] == trinity_dbapi.BINARY
    cur.execute("CREATE NAMESPACE nodesc")
    assert cur.description is None


def test_arrow_fetches(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    cur.execute("SELECT i FROM range(10) AS r(i)")
    assert cur.fetchone() == (0,)
    table = cur.fetch_arrow_table()
    assert isinstance(table, pa.Table) and table.column("i").to_pylist() == list(range(1, 10))
    cur.execute("SELECT i FROM range(10) AS r(i)")
    reader = cur.fetch_record_batch(4)
    assert [batch.num_rows for batch in reader] == [4, 4, 2]


def test_parameters_are_bound_as_values(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    params = [
        None,
        True,
        42,
        1.5,
        decimal.Decimal("3.25"),
        "it's",
        b"\x00\x01",
        datetime.date(2024, 1, 2),
        datetime.datetime(2024, 1, 2, 3, 4, 5),
    ]
    cur.execute("SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?", params)
    assert list(cur.fetchone()) == params
    cur.execute("SELECT ? || '; DROP NAMESPACE x'", ["1'"])  # never spliced into the text
    assert cur.fetchone() == ("1'; DROP NAMESPACE x",)
    cur.execute("CREATE NAMESPACE p COMMENT ? WITH (owner = ?)", ["a 'quoted' comment", "me"])
    cur.execute("DESCRIBE NAMESPACE p")
    row = cur.fetchone()
    assert row[:2] == ("p", "a 'quoted' comment")
    assert dict(row[2]) == {"owner": "me"}


def test_bad_parameters_are_programming_errors(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    with pytest.raises(errors.ProgrammingError, match="parameter 1"):
        cur.execute("SELECT ?", [object()])
    with pytest.raises(errors.ProgrammingError):
        cur.execute("SELECT ?, ?", [1])
    with pytest.raises(errors.ProgrammingError, match="qmark"):
        cur.execute("SELECT ?", {"a": 1})


def test_executemany(uri: str) -> None:
    conn = trinity_dbapi.connect(uri)
    cur = conn.cursor()
    cur.executemany("CREATE NAMESPACE never COMMENT ?", [])  # nothing to do
    assert cur.rowcount == 0
    with pytest.raises(errors.Error):
        cur.executemany("CREATE NAMESPACE ?", [["a"]])  # names are identifiers, not values
    cur.executemany("CREATE NAMESPACE n COMMENT ?", [["first"]])
    cur.executemany("ALTER NAMESPACE n SET PROPERTIES (k = ?)", [["1"], ["2"]])
    conn.commit()
    cur.execute("SELECT properties['k'] FROM system.namespaces WHERE namespace_name = 'n'")
    assert cur.fetchone() == ("2",)


def test_one_statement_per_execute_and_executescript(uri: str) -> None:
    conn = trinity_dbapi.connect(uri, autocommit=True)
    cur = conn.cursor()
    with pytest.raises(errors.ProgrammingError, match="exactly one statement"):
        cur.execute("CREATE NAMESPACE a; CREATE NAMESPACE b")
    cur.executescript("CREATE NAMESPACE a; CREATE NAMESPACE b; SHOW NAMESPACES LIKE '_'")
    assert _names(cur) == ["a", "b"]


def test_closed_cursor(uri: str) -> None:
    cur = trinity_dbapi.connect(uri).cursor()
    cur.close()
    with pytest.raises(errors.InterfaceError, match="cursor is closed"):
        cur.execute("SELECT 1")
    fresh = trinity_dbapi.connect(uri).cursor()
    with pytest.raises(errors.ProgrammingError, match="no result set"):
        fresh.fetchall()
    fresh.setinputsizes([None])
    fresh.setoutputsize(10)


def test_definition_options_must_agree_with_an_existing_lakehouse(uri: str) -> None:
    trinity_dbapi.connect(uri, name="first", order=64, create=True).close()
    trinity_dbapi.connect(uri, name="first").close()  # agreeing options are fine
    with pytest.raises(errors.ProgrammingError, match="already exists") as info:
        trinity_dbapi.connect(uri, name="second", order=99)
    assert "name='second' (it has 'first')" in str(info.value)
    assert "order=99 (it has 64)" in str(info.value)


def test_results_stream_across_batches(uri: str) -> None:
    from trinity_dbapi.sql.engine.duck_run import STREAM_BATCH_ROWS

    cur = trinity_dbapi.connect(uri).cursor()
    total = 2 * STREAM_BATCH_ROWS + 7
    cur.execute("SELECT i FROM range(?) AS r(i)", [total])
    first = cur.fetchmany(STREAM_BATCH_ROWS + 3)  # crosses a batch boundary
    assert first[0] == (0,) and first[-1] == (STREAM_BATCH_ROWS + 2,)
    assert cur.rownumber == STREAM_BATCH_ROWS + 3
    rest = cur.fetch_record_batch(50_000)
    sizes = [batch.num_rows for batch in rest]
    assert sum(sizes) == total - STREAM_BATCH_ROWS - 3 and max(sizes) <= 50_000
    assert cur.fetchone() is None
    # another query on the same connection while one is being read
    a, b = trinity_dbapi.connect(uri).cursor(), None
    a.execute("SELECT i FROM range(?) AS r(i)", [total])
    assert a.fetchone() == (0,)
    b = a.connection.cursor().execute("SELECT 42")
    assert b.fetchall() == [(42,)]
    assert len(a.fetchall()) == total - 1
