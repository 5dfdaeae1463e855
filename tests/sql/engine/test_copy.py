"""COPY FROM and TO, done by the driver inside the directories a connection was given.

Round trips (COPY TO, then COPY FROM into a fresh table, gives the same
rows) for each format and option; the row counts; and the attack list the
sandbox was attacked with (``..``, symbolic links out of the directory, odd
characters, remote roots, a connection without ``file_access``): each is
refused with a PEP 249 error, and the file system is the same before and
after, with no file opened.
"""

from __future__ import annotations

import datetime
import decimal
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.sql.engine import file_access

UTC = datetime.timezone.utc
COLUMNS = (
    "id INT8 NOT NULL, name VARCHAR, amount DECIMAL(10, 2), day DATE, seen TIMESTAMPTZ, "
    "ok BOOLEAN, score FLOAT8"
)
ROWS = [
    (
        1,
        'comma, "quote"',
        decimal.Decimal("1.50"),
        datetime.date(2024, 2, 29),
        datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
        True,
        0.5,
    ),
    (2, None, None, None, None, None, None),
    (3, "", decimal.Decimal("-10.25"), datetime.date(1999, 12, 31), None, False, -1.0),
    (4, "line\nbreak", decimal.Decimal("0.00"), None, None, True, 1e300),
]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


@pytest.fixture
def conn(tmp_path: Path, data: Path) -> Iterator[Any]:
    """A connection that may use ``data``, with table ``s.t`` holding :data:`ROWS`."""
    connection = trinity_dbapi.connect(
        str(tmp_path / "lake"), autocommit=True, file_access=[str(data)]
    )
    connection.execute("CREATE NAMESPACE s")
    connection.execute(f"CREATE TABLE s.t ({COLUMNS})")
    connection.cursor().executemany(
        "INSERT INTO s.t VALUES (?, ?, ?, ?, ?, ?, ?)", [list(row) for row in ROWS]
    )
    yield connection
    connection.close()


def _rows(conn: Any, table: str) -> list[tuple[Any, ...]]:
    return conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()


def _round_trip(conn: Any, path: Path, options: str = "") -> int:
    """COPY s.t TO path, then FROM it into a new table s.u; return COPY FROM's rowcount."""
    cursor = conn.cursor()
    cursor.execute(f"COPY s.t TO '{path}' {options}")
    assert cursor.rowcount == len(ROWS)
    cursor.execute(f"CREATE TABLE s.u ({COLUMNS})")
    cursor.execute(f"COPY s.u FROM '{path}' {options}")
    assert _rows(conn, "s.u") == ROWS
    return cursor.rowcount


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("t.csv", ""),
        ("t.csv", "(FORMAT csv, HEADER TRUE, DELIMITER ',')"),
        ("t.txt", "(HEADER FALSE, DELIMITER '|')"),  # no extension it knows: CSV
        ("t.tsv", ""),
        ("t.parquet", ""),
        ("t.pq", "(FORMAT parquet)"),
        ("t.jsonl", ""),
        ("t.data", "(FORMAT json)"),
    ],
)
def test_round_trips(conn: Any, data: Path, name: str, options: str) -> None:
    assert _round_trip(conn, data / name, options) == len(ROWS)


@pytest.mark.parametrize("name", ["n.jsonl", "n.parquet"])
def test_times_and_nested_values_round_trip(conn: Any, data: Path, name: str) -> None:
    conn.execute(
        "CREATE TABLE s.n (a TIME, b TIMESTAMP, l LIST<INT8>, r STRUCT<x: INT8, y: VARCHAR>)"
    )
    conn.execute(
        "INSERT INTO s.n VALUES (TIME '10:11:12.5', TIMESTAMP '2024-01-02 03:04:05', [1, 2], "
        "{'x': 1, 'y': 'q'}), (NULL, NULL, NULL, NULL)"
    )
    conn.execute(f"COPY s.n TO '{data / name}'")
    conn.execute("CREATE TABLE s.m AS SELECT * FROM s.n LIMIT 0")
    assert conn.execute(f"COPY s.m FROM '{data / name}'").rowcount == 2
    query = "SELECT * FROM {} ORDER BY a NULLS LAST"
    assert conn.execute(query.format("s.m")).fetchall() == [
        (
            datetime.time(10, 11, 12, 500000),
            datetime.datetime(2024, 1, 2, 3, 4, 5),
            [1, 2],
            {"x": 1, "y": "q"},
        ),
        (None, None, None, None),
    ]


def test_header_and_delimiter_are_written_as_asked(conn: Any, data: Path) -> None:
    conn.execute(f"COPY (SELECT id, name FROM s.t WHERE id < 4 ORDER BY id) TO '{data}/a.csv'")
    assert (data / "a.csv").read_text() == '"id","name"\n1,"comma, ""quote"""\n2,\n3,""\n'
    conn.execute(
        f"COPY (SELECT id, ok FROM s.t ORDER BY id) TO '{data}/b.csv' (HEADER FALSE, DELIMITER ';')"
    )
    assert (data / "b.csv").read_text() == "1;true\n2;\n3;false\n4;true\n"
    conn.execute(f"COPY (SELECT id, day FROM s.t WHERE id = 1) TO '{data}/c.json'")
    assert (data / "c.json").read_text() == '{"id":1,"day":"2024-02-29"}\n'
    conn.execute(f"COPY (SELECT id, amount FROM s.t WHERE id > 2 ORDER BY id) TO '{data}/d.pq'")
    table = pq.read_table(data / "d.pq")
    assert table.column("amount").to_pylist() == [decimal.Decimal("-10.25"), decimal.Decimal(0)]


def test_copy_from_a_csv_without_header_and_a_subset_of_columns(conn: Any, data: Path) -> None:
    (data / "more.csv").write_text("id|name|amount|day|seen|ok|score\n10|ten|||||\n")
    cursor = conn.cursor()
    cursor.execute(f"COPY s.t FROM '{data}/more.csv' (DELIMITER '|')")
    assert cursor.rowcount == 1
    (data / "partial.csv").write_text("name,id\neleven,11\n")  # by name, in any order
    cursor.execute(f"COPY s.t FROM '{data}/partial.csv'")
    got = conn.execute("SELECT id, name, amount FROM s.t WHERE id > 9 ORDER BY id").fetchall()
    assert got == [(10, "ten", None), (11, "eleven", None)]


def test_parameters_name_the_file_and_filter_the_query(conn: Any, data: Path) -> None:
    cursor = conn.cursor()
    cursor.execute(
        "COPY (SELECT id FROM s.t WHERE id > ? ORDER BY id) TO ?", [2, str(data / "p.csv")]
    )
    assert cursor.rowcount == 2
    assert (data / "p.csv").read_text() == '"id"\n3\n4\n'


def test_relative_paths_are_taken_from_the_working_directory(
    conn: Any, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(data)
    conn.execute("COPY s.t TO 'rel.parquet'")
    assert (data / "rel.parquet").is_file()
    monkeypatch.chdir(data.parent)
    conn.execute("CREATE TABLE s.u AS SELECT * FROM s.t LIMIT 0")
    conn.execute("COPY s.u FROM 'data/rel.parquet'")
    assert _rows(conn, "s.u") == ROWS


def test_an_existing_file_is_replaced_only_with_overwrite(conn: Any, data: Path) -> None:
    target = data / "o.csv"
    target.write_text("keep me")
    with pytest.raises(errors.FileAccessError, match=r"exists already.*OVERWRITE"):
        conn.execute(f"COPY s.t TO '{target}'")
    assert target.read_text() == "keep me"
    conn.execute(f"COPY (SELECT 1 AS one) TO '{target}' (OVERWRITE)")
    assert target.read_text() == '"one"\n1\n'
    assert sorted(os.listdir(data)) == ["o.csv"]  # no temporary file left


def test_a_failing_query_or_file_writes_and_changes_nothing(conn: Any, data: Path) -> None:
    with pytest.raises(errors.Error, match=r"[Cc]onver"):
        conn.execute(f"COPY (SELECT CAST(name AS INT) FROM s.t) TO '{data}/x.csv'")
    assert os.listdir(data) == []
    (data / "bad.csv").write_text("id,amount\n5,1.0\n6,oops\n")
    version = conn.lakehouse.latest_version()
    with pytest.raises(errors.DataError) as caught:
        conn.execute(f"COPY s.t FROM '{data}/bad.csv'")
    message = str(caught.value)
    assert message.startswith(f"cannot copy '{data}/bad.csv' into s.t: column 'amount'")
    assert message.endswith(
        "nothing was copied: fix the file (or the table's column types), then run the COPY again"
    )
    assert conn.lakehouse.latest_version() == version
    assert len(_rows(conn, "s.t")) == len(ROWS)


def test_wrong_files_and_options(conn: Any, data: Path) -> None:
    with pytest.raises(
        errors.ProgrammingError, match=r"there is no file '.*nope.csv'; check the path"
    ):
        conn.execute(f"COPY s.t FROM '{data}/nope.csv'")
    (data / "sub").mkdir()
    with pytest.raises(errors.ProgrammingError, match="is a folder, not a file"):
        conn.execute(f"COPY s.t FROM '{data}/sub'")
    with pytest.raises(errors.ProgrammingError, match="HEADER applies to CSV files"):
        conn.execute(f"COPY s.t TO '{data}/x.parquet' (HEADER FALSE)")
    with pytest.raises(errors.ProgrammingError, match="DELIMITER takes one character"):
        conn.execute(f"COPY s.t TO '{data}/x.csv' (DELIMITER ';;')")
    with pytest.raises(errors.SQLSyntaxError, match="Expected a COPY option"):
        conn.execute(f"COPY s.t TO '{data}/x.csv' (COMPRESSION gzip)")
    with pytest.raises(errors.NoSuchTableError):
        conn.execute(f"COPY s.nope FROM '{data}/x.csv'")
    (data / "extra.csv").write_text("id,extra\n1,2\n")
    with pytest.raises(
        errors.ProgrammingError, match="names 'extra', which the table has no column"
    ):
        conn.execute(f"COPY s.t FROM '{data}/extra.csv'")
    conn.execute("CREATE TABLE s.b (id INT8, blob VARBINARY, m MAP<VARCHAR, INT8>)")
    for column, name in (("blob", "b.csv"), ("blob", "b.json"), ("m", "m.jsonl")):
        with pytest.raises(errors.NotSupportedError, match="write FORMAT parquet"):
            conn.execute(f"COPY (SELECT {column} FROM s.b) TO '{data}/{name}'")
    with pytest.raises(errors.NotSupportedError, match="COPY does not write to CSV"):
        conn.execute(f"COPY (SELECT [1] AS l) TO '{data}/l.csv'")
    assert sorted(os.listdir(data)) == ["extra.csv", "sub"]


def test_copy_reads_through_a_read_only_connection_but_writes_no_table(
    tmp_path: Path, conn: Any, data: Path
) -> None:
    conn.execute(f"COPY s.t TO '{data}/t.parquet'")
    with trinity_dbapi.connect(
        str(tmp_path / "lake"), read_only=True, file_access=[data]
    ) as reader:
        reader.execute(f"COPY s.t TO '{data}/again.parquet'")
        assert pq.read_table(data / "again.parquet").num_rows == len(ROWS)
        with pytest.raises(errors.ReadOnlyError):
            reader.execute(f"COPY s.t FROM '{data}/t.parquet'")


# -- the attack list -----------------------------------------------------------------------


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with its size and modification time (links not followed)."""
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            found[path] = (info.st_size, info.st_mtime_ns)
    return found


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths COPY opened for reading or writing."""
    calls: list[str] = []
    read, write = file_access.open_for_read, file_access.open_for_write

    def spy_read(real: str, shown: str) -> Any:
        calls.append(real)
        return read(real, shown)

    def spy_write(real: str, shown: str, **kwargs: Any) -> Any:
        calls.append(real)
        return write(real, shown, **kwargs)

    monkeypatch.setattr(file_access, "open_for_read", spy_read)
    monkeypatch.setattr(file_access, "open_for_write", spy_write)
    return calls


def _attacks(tmp_path: Path, data: Path) -> list[tuple[str, str]]:
    """(path, what the message says) for each attack, with its bait laid out."""
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.csv").write_text("id\n99\n")
    (data / "inner").mkdir(exist_ok=True)
    (data / "link").symlink_to(outside, target_is_directory=True)
    (data / "file-link.csv").symlink_to(outside / "secret.csv")
    (data / "sibling").symlink_to(tmp_path / "data-sibling")  # dangling, outside
    return [
        (f"{data}/../outside/secret.csv", "'..' component"),
        (f"{data}/inner/../../outside/secret.csv", "'..' component"),
        ("..", "'..' component"),
        (f"{data}/link/secret.csv", "outside the directories"),
        (f"{data}/file-link.csv", "outside the directories"),
        (f"{data}/sibling", "outside the directories"),
        (f"{data}-sibling/x.csv", "outside the directories"),  # a prefix is not a parent
        (str(data), "outside the directories"),  # the directory itself is no file in it
        (f"{data}/inner/..", "'..' component"),
        (str(outside / "secret.csv"), "outside the directories"),
        ("/etc/passwd", "outside the directories"),
        ("secret.csv", "outside the directories"),  # relative to the working directory
        (f"{data}/x\x00.csv", "control character"),
        (f"{data}/x\n.csv", "control character"),
        (f"{data}/x\r.csv", "control character"),
        ("s3://bucket/x.csv", "local files only"),
        ("http://example.com/x.csv", "local files only"),
        (f"file://{data}/x.csv", "local files only"),
        (f"file:{data}/x.csv", "local files only"),
        ("gs://bucket/x.parquet", "local files only"),
    ]


@pytest.mark.parametrize("direction", ["FROM", "TO"])
def test_every_attack_is_refused_and_touches_nothing(
    tmp_path: Path, conn: Any, data: Path, opened: list[str], direction: str
) -> None:
    attacks = _attacks(tmp_path, data)
    before = _tree(tmp_path)
    version = conn.lakehouse.latest_version()
    for path, problem in attacks:
        with pytest.raises(errors.FileAccessError) as caught:
            conn.execute(f"COPY s.t {direction} ?", [path])
        assert isinstance(caught.value, errors.ProgrammingError)
        assert problem in str(caught.value), path
        assert caught.value.path == path
    assert opened == []
    assert _tree(tmp_path) == before
    assert conn.lakehouse.latest_version() == version
    assert len(_rows(conn, "s.t")) == len(ROWS)


def test_a_connection_without_file_access_is_refused(
    tmp_path: Path, conn: Any, data: Path, opened: list[str]
) -> None:
    (data / "t.csv").write_text("id\n1\n")
    before = _tree(tmp_path)
    with trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True) as plain:
        for sql in (
            f"COPY s.t FROM '{data}/t.csv'",
            f"COPY s.t TO '{data}/u.csv'",
            f"COPY (SELECT 1) TO '{data}/u.csv'",
        ):
            with pytest.raises(errors.FileAccessError) as caught:
                plain.execute(sql)
            assert "this connection has no file access" in str(caught.value)
            assert 'connect(..., file_access=["/data"])' in str(caught.value)
    assert opened == []
    assert _tree(tmp_path) == before


def test_a_file_swapped_for_a_link_after_the_check_is_not_followed(
    tmp_path: Path, data: Path
) -> None:
    (tmp_path / "secret").write_text("no")
    real = file_access.resolve(str(data / "x.csv"), (str(data),), "COPY ... FROM")
    (data / "x.csv").symlink_to(tmp_path / "secret")  # the race: a link appears
    with pytest.raises(errors.FileAccessError, match="became a symbolic link"):
        file_access.open_for_read(real, "x.csv")
    os.mkfifo(data / "fifo.csv")
    with pytest.raises(errors.FileAccessError, match="not a regular file"):
        file_access.open_for_read(str(data / "fifo.csv"), "fifo.csv")


# -- SUMMARIZE and DESCRIBE SELECT -------------------------------------------------------------


def test_summarize_and_describe_query_match_duckdb(conn: Any) -> None:
    import duckdb

    duck = duckdb.connect()
    # DuckDB reads the table's Parquet scan, whose columns are all nullable: the
    # same data in a DuckDB table without the NOT NULL constraint.
    columns = COLUMNS.replace("INT8 NOT NULL", "BIGINT").replace("FLOAT8", "DOUBLE")
    duck.execute(f"CREATE TABLE t ({columns})")
    duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?)", [list(r) for r in ROWS])
    duck.execute("SET TimeZone = 'UTC'")
    for ours, theirs in [
        ("SUMMARIZE s.t", "SUMMARIZE t"),
        (
            "SUMMARIZE SELECT id, score FROM s.t WHERE id > 1",
            "SUMMARIZE SELECT id, score FROM t WHERE id > 1",
        ),
        (
            "DESCRIBE SELECT id, amount * 2 AS doubled, name FROM s.t",
            "DESCRIBE SELECT id, amount * 2 AS doubled, name FROM t",
        ),
    ]:
        cursor = conn.execute(ours)
        expected = duck.execute(theirs)
        assert [d[0] for d in cursor.description] == [d[0] for d in expected.description]
        got, want = cursor.fetchall(), expected.fetchall()
        # approx_unique is HyperLogLog's estimate: the same data gives the same estimate.
        assert got == want, ours


def test_summarize_time_travels_and_takes_parameters(conn: Any) -> None:
    version = conn.lakehouse.latest_version()
    conn.execute("DELETE FROM s.t WHERE id > 1")
    now = conn.execute("SUMMARIZE s.t").fetchall()
    then = conn.execute(f"SUMMARIZE s.t FOR SYSTEM_VERSION AS OF {version}").fetchall()
    count = 10  # the count column
    assert (now[0][count], then[0][count]) == (1, len(ROWS))
    rows = conn.execute("SUMMARIZE SELECT id FROM s.t WHERE id >= ?", [1]).fetchall()
    assert [(r[0], r[count]) for r in rows] == [("id", 1)]
