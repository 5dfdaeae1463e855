"""Kartothek's main metadata file: derived after every commit, kept by GC, rewritten by sync."""

from __future__ import annotations

import datetime
import json
import logging
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.lakehouse import Lakehouse, table_formats
from trinity_dbapi.tables import managed
from trinity_dbapi.tables.kartothek_main import main_metadata_path


def _connect(tmp_path: Path) -> Any:
    return trinity_dbapi.connect(str(tmp_path / "lake"), create=True, autocommit=True)


def _lake(tmp_path: Path) -> Lakehouse:
    return Lakehouse.open(str(tmp_path / "lake"))


def _expected(lake: Lakehouse, namespace: str, name: str) -> tuple[str, dict[str, Any]]:
    """The path and body the newest version of the table must have published."""
    table = lake.begin(read_only=True).load_table(namespace, name)
    body = managed.metadata(lake.storage, table).to_dict()
    body["partition_keys"] = list(table.partition_columns)
    return main_metadata_path(table.format_properties[managed.DATASET_UUID]), body


def _published(lake: Lakehouse, path: str) -> dict[str, Any]:
    # From the disk: the storage's cache of immutable files would keep an old copy.
    assert lake.storage.local_root is not None
    result: dict[str, Any] = json.loads((Path(lake.storage.local_root) / path).read_bytes())
    return result


def test_every_data_change_rewrites_the_main_metadata_file(tmp_path: Path) -> None:
    cur = _connect(tmp_path).cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.t (id INT8, day DATE, v VARCHAR) PARTITIONED BY (day)")
    lake = _lake(tmp_path)
    path, body = _expected(lake, "s", "t")
    # Empty and partitioned: Kartothek must still see the partition column.
    assert _published(lake, path) == body
    assert body["partitions"] == {} and body["partition_keys"] == ["day"]
    statements = [
        "INSERT INTO s.t VALUES (1, DATE '2024-01-01', 'a'), (2, DATE '2024-01-02', 'b')",
        "UPDATE s.t SET v = 'c' WHERE id = 2",
        "DELETE FROM s.t WHERE id = 1",
        "ALTER TABLE s.t ADD COLUMN w INT4",
        "CREATE INDEX by_id ON s.t (id)",
        "INSERT INTO s.t VALUES (3, DATE '2024-01-03', 'd', 7)",
        "TRUNCATE TABLE s.t",
    ]
    seen = []
    for sql in statements:
        cur.execute(sql)
        path_now, body = _expected(lake, "s", "t")
        assert path_now == path
        assert _published(lake, path) == body, sql
        seen.append(len(body["partitions"]))
    assert seen == [2, 2, 1, 1, 1, 2, 0]
    assert "id" in body["indices"]


def test_a_transaction_publishes_once_at_commit(tmp_path: Path) -> None:
    conn = _connect(tmp_path)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s").execute("CREATE TABLE s.t (id INT8)")
    lake = _lake(tmp_path)
    path, _ = _expected(lake, "s", "t")
    conn.autocommit = False
    cur.execute("INSERT INTO s.t VALUES (1)")
    assert _published(lake, path)["partitions"] == {}  # not committed yet
    conn.commit()
    assert _published(lake, path) == _expected(lake, "s", "t")[1]
    assert len(_published(lake, path)["partitions"]) == 1


def test_a_failure_after_the_commit_point_keeps_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cur = _connect(tmp_path).cursor()
    cur.execute("CREATE NAMESPACE s").execute("CREATE TABLE s.t (id INT8)")
    lake = _lake(tmp_path)
    path, _ = _expected(lake, "s", "t")
    publish, derived = table_formats._derived[managed.TABLE_FORMAT]

    def broken(storage: Any, table: Any, previous: Any) -> list[str]:
        raise OSError("disk full")

    monkeypatch.setitem(table_formats._derived, managed.TABLE_FORMAT, (broken, derived))
    with caplog.at_level(logging.WARNING, "trinity_dbapi.lakehouse.derived"):
        cur.execute("INSERT INTO s.t VALUES (1)")
    assert cur.execute("SELECT id FROM s.t").fetchall() == [(1,)]
    assert "disk full" in caplog.text and "sync_kartothek" in caplog.text
    assert _published(lake, path)["partitions"] == {}  # stale
    monkeypatch.setitem(table_formats._derived, managed.TABLE_FORMAT, (publish, derived))
    rows = cur.execute("CALL system.sync_kartothek()").fetchall()
    common = f"{_published(lake, path)['dataset_uuid']}/table/_common_metadata"
    assert rows == [("s.t", common, lake.latest_version()), ("s.t", path, lake.latest_version())]
    assert _published(lake, path) == _expected(lake, "s", "t")[1]


def test_sync_rewrites_every_table_or_one(tmp_path: Path) -> None:
    cur = _connect(tmp_path).cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.a (id INT8)").execute("CREATE TABLE s.b (id INT8)")
    lake = _lake(tmp_path)
    path_a, path_b = _expected(lake, "s", "a")[0], _expected(lake, "s", "b")[0]
    lake.storage.delete(path_a)
    lake.storage.delete(path_b)
    rows = cur.execute("CALL system.sync_kartothek(table => 's.b')").fetchall()
    assert [r[:2] for r in rows if r[1] == path_b] == [("s.b", path_b)]
    assert len(rows) == 2  # and its _common_metadata
    assert not lake.storage.exists(path_a)
    cur.execute("USE s")
    rows = cur.execute("CALL system.sync_kartothek('a')").fetchall()
    assert {r[0] for r in rows} == {"s.a"} and path_a in {r[1] for r in rows}
    assert _published(lake, path_a) == _expected(lake, "s", "a")[1]
    rows = cur.execute("CALL system.sync_kartothek()").fetchall()
    assert sorted(r[:2] for r in rows if r[1].endswith(".json")) == [
        ("s.a", path_a),
        ("s.b", path_b),
    ]
    assert len(rows) == 4
    with pytest.raises(ProgrammingError, match=r"table s\.nope does not exist"):
        cur.execute("CALL system.sync_kartothek(table => 's.nope')")


def test_garbage_collection_keeps_live_tables_and_drops_dropped_ones(tmp_path: Path) -> None:
    cur = _connect(tmp_path).cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.keep (id INT8)").execute("CREATE TABLE s.gone (id INT8)")
    cur.execute("INSERT INTO s.keep VALUES (1)").execute("INSERT INTO s.gone VALUES (2)")
    lake = _lake(tmp_path)
    keep, gone = _expected(lake, "s", "keep")[0], _expected(lake, "s", "gone")[0]
    cur.execute("ALTER TABLE s.keep RENAME TO s.kept")
    cur.execute("DROP TABLE s.gone")
    result = lake.maintenance.collect_garbage(grace_period_millis=0)
    assert gone in result.deleted and keep not in result.deleted
    assert lake.storage.exists(keep) and not lake.storage.exists(gone)
    assert _published(lake, keep) == _expected(lake, "s", "kept")[1]


def test_rollback_republishes_the_tables(tmp_path: Path) -> None:
    cur = _connect(tmp_path).cursor()
    cur.execute("CREATE NAMESPACE s").execute("CREATE TABLE s.t (id INT8)")
    cur.execute("INSERT INTO s.t VALUES (1)")
    lake = _lake(tmp_path)
    version = lake.latest_version()
    cur.execute("INSERT INTO s.t VALUES (2)")
    path, _ = _expected(lake, "s", "t")
    assert len(_published(lake, path)["partitions"]) == 2
    cur.execute(f"CALL system.rollback_to_version({version})")
    assert len(_published(lake, path)["partitions"]) == 1
    assert _published(lake, path) == _expected(lake, "s", "t")[1]


def test_a_process_that_never_imported_tables_keeps_the_file(tmp_path: Path) -> None:
    import subprocess
    import sys
    import textwrap

    cur = _connect(tmp_path).cursor()
    cur.execute("CREATE NAMESPACE s").execute("CREATE TABLE s.t (id INT8)")
    path = _expected(_lake(tmp_path), "s", "t")[0]
    # The table format is found through its entry point, and with it the derived files.
    script = textwrap.dedent(
        f"""
        import sys
        from trinity_dbapi.lakehouse import Lakehouse
        lake = Lakehouse.open({str(tmp_path / "lake")!r})
        assert not [m for m in sys.modules if m.startswith("trinity_dbapi.tables")]
        print("\\n".join(lake.maintenance.collect_garbage(grace_period_millis=0).deleted))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert path not in done.stdout.split()
    assert _lake(tmp_path).storage.exists(path)


def test_every_backend_publishes_a_store_a_kartothek_reader_opens(
    backend: tuple[str, dict[str, Any]],
) -> None:
    """Local, memory and S3: the root is a Kartothek store after every commit.

    Our Kartothek reader (``tables.kartothek``, which finds a dataset the way
    Kartothek does) stands in for Kartothek on the stores it cannot open;
    garbage collection keeps the live table's file and removes the dropped one's.
    """
    from trinity_dbapi.storage import open_storage
    from trinity_dbapi.tables import kartothek

    uri, options = backend
    conn = trinity_dbapi.connect(uri, storage_options=options, create=True, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE t (id INT8, day DATE) PARTITIONED BY (day)")
    cur.execute("CREATE TABLE gone (id INT8)")
    cur.execute("INSERT INTO t VALUES (1, DATE '2024-01-01'), (2, NULL), (3, DATE '2024-01-02')")
    cur.execute("DELETE FROM t WHERE id = 3")
    cur.execute("DROP TABLE gone")
    lake = Lakehouse.open(uri, storage_options=options)
    path, body = _expected(lake, "default", "t")
    uuid = body["dataset_uuid"]
    lake.maintenance.collect_garbage(grace_period_millis=0)
    fresh = open_storage(uri, storage_options=options, cache_bytes=0)
    assert json.loads(fresh.read(path)) == body
    meta = kartothek.open_dataset(fresh, uuid)
    rows = kartothek.read_rows(fresh, meta).to_pylist()
    assert sorted(rows, key=lambda r: r["id"]) == [
        {"id": 1, "day": datetime.date(2024, 1, 1)},
        {"id": 2, "day": None},
    ]
    top = [p for p in fresh.list("") if "/" not in p and p.endswith(".by-dataset-metadata.json")]
    assert top == [path]
    fresh.close()
    conn.close()
