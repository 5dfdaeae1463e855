"""``system.data_files``: one row per live data file, scoped, time-travelable."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.lakehouse import table_formats
from trinity_dbapi.tables import data_files, managed


@pytest.fixture
def uri() -> str:
    return f"memory://data-files-{uuid.uuid4().hex}"


@pytest.fixture
def cur(uri: str) -> Iterator[Any]:
    conn = trinity_dbapi.connect(uri, autocommit=True)
    cursor = conn.cursor()
    cursor.execute("CREATE NAMESPACE n")
    cursor.execute("CREATE TABLE n.t (id INT8, day DATE, b VARCHAR) PARTITIONED BY (day, b)")
    cursor.execute(
        "INSERT INTO n.t VALUES (1, DATE '2024-01-01', 'x'), (2, DATE '2024-01-02', NULL)"
    )
    cursor.execute(
        "INSERT INTO n.t VALUES (3, DATE '2024-01-01', 'x'), (4, DATE '2024-01-01', 'x')"
    )
    cursor.execute("CREATE TABLE n.u (id INT8)")
    cursor.execute("INSERT INTO n.u SELECT range FROM range(10)")
    yield cursor
    conn.close()


def test_one_row_per_file_with_counts_and_partition_values(cur: Any) -> None:
    rows = cur.execute(
        'SELECT table_name, "partition", partition_values, record_count, file_format, '
        'row_group_count FROM system.data_files ORDER BY table_name, "partition", record_count'
    ).fetchall()
    assert rows == [
        ("t", "day=2024-01-01/b=x", [("day", "2024-01-01"), ("b", "x")], 1, "parquet", 1),
        ("t", "day=2024-01-01/b=x", [("day", "2024-01-01"), ("b", "x")], 2, "parquet", 1),
        (
            "t",
            "day=2024-01-02/b=__HIVE_DEFAULT_PARTITION__",
            [("day", "2024-01-02"), ("b", None)],
            1,
            "parquet",
            1,
        ),
        ("u", "", [], 10, "parquet", 1),
    ]
    total = cur.execute("SELECT sum(record_count)::INT8 FROM system.data_files").fetchone()
    assert total == (14,)


def test_file_size_and_path_match_the_store(cur: Any, uri: str) -> None:
    from trinity_dbapi.storage import open_storage

    storage = open_storage(uri)
    rows = cur.execute(
        "SELECT file, label, file_size_in_bytes FROM system.data_files WHERE table_name = 'u'"
    ).fetchall()
    assert len(rows) == 1
    file, label, size = rows[0]
    assert file.endswith(f"/table/{label}.parquet")
    assert size == len(storage.read(file))


def test_time_travel_shows_the_files_of_the_version_read(cur: Any) -> None:
    (version,) = cur.execute("SELECT max(version) FROM system.versions").fetchone()
    cur.execute("DELETE FROM n.u WHERE id < 5")
    now = cur.execute(
        "SELECT sum(record_count)::INT8 FROM system.data_files WHERE table_name = 'u'"
    )
    assert now.fetchone() == (5,)
    before = cur.execute(
        "SELECT sum(record_count)::INT8 FROM system.data_files "
        f"FOR SYSTEM_VERSION AS OF {version} WHERE table_name = 'u'"
    )
    assert before.fetchone() == (10,)
    assert cur.execute(
        "SELECT count(*) FROM system.data_files FOR SYSTEM_VERSION AS OF 2"
    ).fetchone() == (0,)


def test_a_name_condition_reads_only_that_tables_metadata(cur: Any) -> None:
    seen: list[str] = []

    def counting(storage: Any, table: Any) -> Any:
        seen.append(table.name)
        return data_files.describe_files(storage, table)

    table_formats.register_data_files(managed.TABLE_FORMAT, counting)
    try:
        rows = cur.execute(
            "SELECT record_count FROM system.data_files "
            "WHERE namespace_name = 'n' AND table_name = 'u'"
        ).fetchall()
    finally:
        table_formats.register_data_files(managed.TABLE_FORMAT, data_files.describe_files)
    assert rows == [(10,)]
    assert seen == ["u"]


def test_footers_are_read_once_per_file(cur: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    cur.execute("SELECT * FROM system.data_files").fetchall()
    calls: list[str] = []
    original = data_files._read_facts
    monkeypatch.setattr(data_files, "_read_facts", lambda s, p: calls.append(p) or original(s, p))
    cur.execute("INSERT INTO n.u VALUES (99)")
    assert cur.execute("SELECT count(*) FROM system.data_files").fetchone() == (5,)
    assert calls == []  # the writer told the cache what the new file's footer says


def test_what_the_writer_remembers_is_what_the_footers_say(cur: Any) -> None:
    cur.execute("INSERT INTO n.u SELECT range FROM range(300000)")  # several row groups
    query = "SELECT file, record_count, file_size_in_bytes, row_group_count FROM system.data_files"
    remembered = sorted(cur.execute(query).fetchall())
    storage = cur.connection.lakehouse.storage
    footers = sorted((path, *data_files._read_facts(storage, path)) for path, *_ in remembered)
    assert footers == remembered
    assert max(groups for *_, groups in remembered) > 1


def test_a_fresh_process_knows_the_facts_from_the_dataset_metadata(
    cur: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.tables import file_facts

    cur.execute("INSERT INTO n.u SELECT range FROM range(1000)")
    query = "SELECT file, record_count, file_size_in_bytes, row_group_count FROM system.data_files"
    expected = sorted(cur.execute(query).fetchall())
    monkeypatch.setattr(file_facts, "_cache", {})  # as a fresh process finds it
    read: list[str] = []
    original = data_files._read_facts
    monkeypatch.setattr(data_files, "_read_facts", lambda s, p: read.append(p) or original(s, p))
    assert sorted(cur.execute(query).fetchall()) == expected
    assert read == []  # every file's facts are in the metadata


def test_every_backend_reports_footer_counts_and_sizes(backend: tuple[str, dict[str, Any]]) -> None:
    from trinity_dbapi.storage import open_storage

    uri, options = backend
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    conn.execute("CREATE TABLE t (id INT8, p INT4) PARTITIONED BY (p)")
    conn.execute("INSERT INTO t SELECT range, range % 3 FROM range(30)")
    rows = conn.execute(
        "SELECT file, record_count, file_size_in_bytes FROM system.data_files ORDER BY file"
    ).fetchall()
    storage = open_storage(uri, storage_options=options)
    assert len(rows) == 3
    assert [count for _, count, _ in rows] == [10, 10, 10]
    assert [size for _, _, size in rows] == [len(storage.read(file)) for file, _, _ in rows]
    storage.close()
    conn.close()


def test_partition_values_of_transforms_and_of_every_layout(cur: Any) -> None:
    """Transform directories show their text; files of an earlier layout keep theirs."""
    cur.execute("CREATE TABLE n.e (id INT8, ts TIMESTAMP) PARTITIONED BY (day(ts), bucket(4, id))")
    cur.execute("INSERT INTO n.e VALUES (1, TIMESTAMP '2024-01-31 10:00:00')")
    cur.execute("ALTER TABLE n.e SET PARTITIONED BY (hour(ts))")
    cur.execute("INSERT INTO n.e VALUES (2, TIMESTAMP '2024-02-01 23:30:00')")
    cur.execute("ALTER TABLE n.e SET PARTITIONED BY ()")
    cur.execute("INSERT INTO n.e VALUES (3, TIMESTAMP '2024-02-02 00:00:00')")
    rows = cur.execute(
        "SELECT partition, partition_values, record_count FROM system.data_files "
        "WHERE table_name = 'e' ORDER BY partition"
    ).fetchall()
    assert [(r[0], r[2]) for r in rows] == [
        ("", 1),
        (rows[1][0], 1),
        ("ts_hour=2024-02-01-23", 1),
    ]
    # A MAP comes back as its (key, value) pairs, in the layout's order.
    assert list(rows[0][1]) == []
    bucket = rows[1][0].rpartition("=")[2]
    assert rows[1][0] == f"ts_day=2024-01-31/id_bucket={bucket}" and bucket in "0123"
    assert list(rows[1][1]) == [("ts_day", "2024-01-31"), ("id_bucket", bucket)]
    assert list(rows[2][1]) == [("ts_hour", "2024-02-01-23")]
