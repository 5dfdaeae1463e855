"""A reader pinned to a version that was then expired and collected: told so, not "corrupt".

Issue 29, item 3. A transaction, a ``connect(uri, version=N)`` connection, a
time-travel query or a cursor still fetching reads files of its version as it
goes; once ``expire_versions`` deleted the version's root and
``collect_garbage`` the files only it reached, that read finds a file
missing. It must get :class:`VersionExpiredError` (the lakehouse is healthy),
while a file missing from a retained version stays :class:`CorruptFileError`.
"""

from __future__ import annotations

import time
from typing import Any

import duckdb
import pytest

import trinity_dbapi
from tests.tree.helpers import small_definition
from trinity_dbapi.errors import (
    CommitConflictError,
    CorruptFileError,
    NoSuchVersionError,
    OperationalError,
    VersionExpiredError,
)
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.expired import describe, duration, was_expired
from trinity_dbapi.sql.engine.duck_errors import QueryFiles
from trinity_dbapi.storage import open_storage

Backend = tuple[str, dict[str, Any]]

#: A cut-off after every version: expire_versions(older_than=LATER, ...) expires all it may.
LATER = 2**62


def _lake(backend: Backend, **fields: Any) -> Lakehouse:
    """Eight namespaces, one per version (1..8), then all dropped in version 9.

    Dropping them makes the namespace definitions and the nodes of versions
    1..8 unreachable from version 9, so garbage collection deletes them once
    those versions are expired.
    """
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(4, 2).replace(**fields), storage_options=options)
    for i in range(8):
        with lake.begin() as txn:
            txn.create_namespace(f"n{i:03d}")
    return lake


def _drop_all(lake: Lakehouse) -> None:
    with lake.begin() as txn:
        for name in txn.list_namespaces():
            txn.drop_namespace(name)


def _reader_error(txn: Any) -> Exception:
    with pytest.raises(trinity_dbapi.Error) as caught:
        for name in txn.list_namespaces():
            txn.load_namespace(name)
    return caught.value


def test_a_pinned_transaction_gets_version_expired_after_expiry_and_gc(backend: Backend) -> None:
    uri, options = backend
    lake = _lake(backend)
    reader = Lakehouse.open(uri, storage_options=options).begin(read_only=True)  # version 8
    assert reader.snapshot.version == 8
    _drop_all(lake)
    expired = lake.maintenance.expire_versions(older_than=LATER, retain_last=1)
    assert expired.retained == (9,)
    assert lake.maintenance.collect_garbage(grace_period_millis=0).deleted

    error = _reader_error(reader)
    assert isinstance(error, VersionExpiredError) and isinstance(error, OperationalError)
    assert not isinstance(error, CorruptFileError)
    assert error.version == 8 and error.latest == 9
    # Younger than the 7-day maximum age: an explicit call expired it.
    assert error.retention == "expire_versions"
    assert not open_storage(uri, storage_options=options).exists(error.path)
    message = str(error)
    assert "version 8 was expired by an explicit expire_versions call" in message
    assert "The lakehouse is healthy" in message and "do not restore or roll back" in message
    assert "Begin again on the latest version (9)" in message
    # Beginning again on the latest version works.
    assert lake.begin(read_only=True).list_namespaces() == []


def test_the_error_names_the_retention_that_expired_the_version(backend: Backend) -> None:
    uri, options = backend
    lake = _lake(
        backend,
        maximum_version_age_millis=1,
        minimum_versions_to_keep=1,
        maximum_version_age_millis_overrides={7: 0},
    )
    other = Lakehouse.open(uri, storage_options=options)
    by_override = other.begin(version=7, read_only=True)
    by_age = other.begin(version=8, read_only=True)
    _drop_all(lake)
    time.sleep(0.01)
    assert 7 in lake.maintenance.expire_versions().expired  # the definition's own retention
    lake.maintenance.collect_garbage(grace_period_millis=0)

    error = _reader_error(by_age)
    assert isinstance(error, VersionExpiredError)
    assert error.retention == "maximum_version_age_millis"
    assert "older than maximum_version_age_millis = 1 ms (1 ms)" in str(error)
    assert "minimum_versions_to_keep = 1" in str(error)
    error = _reader_error(by_override)
    assert isinstance(error, VersionExpiredError)
    assert error.retention == "maximum_version_age_millis_overrides"
    assert "maximum_version_age_millis_overrides[7] = 0 ms" in str(error)


def test_a_missing_node_of_a_retained_version_is_still_damage(backend: Backend) -> None:
    uri, options = backend
    _lake(backend)
    storage = open_storage(uri, storage_options=options)
    reader = Lakehouse.open(uri, storage_options=options).begin(read_only=True)
    child = reader.snapshot.root.children[0]  # type: ignore[index]
    assert isinstance(child, str)
    storage.delete(child)  # lost: version 8's root is still there

    error = _reader_error(reader)
    assert isinstance(error, CorruptFileError) and error.path == child
    assert not isinstance(error, VersionExpiredError)


def test_a_root_lost_above_a_retained_version_is_damage(backend: Backend) -> None:
    """Expiration deletes the oldest versions first: a root gone above a kept one was lost."""
    uri, options = backend
    _lake(backend)
    reader = Lakehouse.open(uri, storage_options=options).begin(version=7, read_only=True)
    storage = open_storage(uri, storage_options=options)
    storage.delete(root_node_file_name(7))  # by hand: versions 0 to 6 and 8 remain
    child = reader.snapshot.root.children[0]  # type: ignore[index]
    assert isinstance(child, str)
    storage.delete(child)

    error = _reader_error(reader)
    assert isinstance(error, CorruptFileError) and error.path == child
    assert not isinstance(error, VersionExpiredError)


def test_time_travel_to_an_expired_version_says_it_was_expired(backend: Backend) -> None:
    uri, options = backend
    lake = _lake(backend)
    lake.maintenance.expire_versions(older_than=LATER, retain_last=3)
    with pytest.raises(NoSuchVersionError, match="lakehouse version 2 was expired") as caught:
        lake.begin(version=2)
    assert caught.value.version == 2
    assert "the retained versions are 6 to 8" in str(caught.value)
    with pytest.raises(NoSuchVersionError, match="lakehouse version 2 was expired"):
        trinity_dbapi.connect(uri, storage_options=options, version=2)
    # A version that was never made is no expired one.
    with pytest.raises(NoSuchVersionError) as never:
        lake.begin(version=20)
    assert "expired" not in str(never.value)


def test_a_commit_on_an_expired_version_is_refused_not_lost(backend: Backend) -> None:
    """Its base and the next version expired, a commit must not take the free number."""
    uri, options = backend
    lake = _lake(backend)
    writer = Lakehouse.open(uri, storage_options=options).begin()  # version 8
    writer.create_namespace("mi")
    for name in ("l1", "l2"):
        with lake.begin() as txn:
            txn.create_namespace(name)
    assert lake.maintenance.expire_versions(older_than=LATER, retain_last=1).retained == (10,)

    with pytest.raises(CommitConflictError, match="was expired") as caught:
        writer.commit()
    assert caught.value.version == 9
    storage = open_storage(uri, storage_options=options)
    assert not storage.exists(root_node_file_name(9))  # no version in the hole
    assert Lakehouse.open(uri, storage_options=options).latest_version() == 10
    # Run again, it begins on the latest version and commits after it.
    with writer.lakehouse.begin() as again:
        assert again.snapshot.version == 10
        again.create_namespace("mi")
    assert again.committed is not None and again.committed.version == 11
    assert "mi" in lake.begin(read_only=True).list_namespaces()


def test_a_handle_idle_across_expiry_begins_on_the_latest_version(backend: Backend) -> None:
    uri, options = backend
    lake = _lake(backend)
    idle = Lakehouse.open(uri, storage_options=options)  # has seen version 8, nothing after
    assert idle.begin(read_only=True).snapshot.version == 8
    for name in ("l1", "l2"):
        with lake.begin() as txn:
            txn.create_namespace(name)
    lake.maintenance.expire_versions(older_than=LATER, retain_last=1)  # 8 and 9 are gone

    again = idle.begin(read_only=True)
    assert again.snapshot.version == 10
    assert {"l1", "l2"} <= set(again.list_namespaces())


def _table_lake(uri: str, options: dict[str, Any]) -> trinity_dbapi.Connection:
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.t (id INT8, v VARCHAR)")
    for i in range(3):
        cur.execute("INSERT INTO s.t VALUES (?, ?)", [i, f"v{i}"])
    return conn


def _expire_rewritten(conn: trinity_dbapi.Connection, uri: str, options: dict[str, Any]) -> None:
    """Rewrite every file of s.t, then expire every older version and collect its files."""
    cur = conn.cursor()
    cur.execute("DELETE FROM s.t WHERE id >= 0")
    cur.execute("INSERT INTO s.t VALUES (100, 'new')")
    lake = Lakehouse.open(uri, storage_options=options)
    lake.maintenance.expire_versions(older_than=LATER, retain_last=1)
    assert lake.maintenance.collect_garbage(grace_period_millis=0).deleted


def test_sql_readers_of_an_expired_version_get_version_expired(backend: Backend) -> None:
    uri, options = backend
    conn = _table_lake(uri, options)
    version = Lakehouse.open(uri, storage_options=options).latest_version()
    pinned = trinity_dbapi.connect(uri, storage_options=options, version=version)
    in_transaction = trinity_dbapi.connect(uri, storage_options=options)  # not autocommit
    cur = in_transaction.cursor()
    assert cur.execute("SELECT count(*) FROM s.t").fetchall() == [(3,)]  # pins `version`
    _expire_rewritten(conn, uri, options)

    for reader in (pinned.cursor(), cur):
        with pytest.raises(VersionExpiredError) as caught:
            reader.execute("SELECT id, v FROM s.t ORDER BY id").fetchall()
        assert caught.value.version == version
        assert caught.value.latest == version + 2
    in_transaction.rollback()  # the next transaction begins on the latest version
    assert cur.execute("SELECT id, v FROM s.t").fetchall() == [(100, "new")]
    # Time travel to it now: its root is gone, and the error says it was expired.
    fresh = trinity_dbapi.connect(uri, storage_options=options).cursor()
    with pytest.raises(NoSuchVersionError, match=f"version {version} was expired"):
        fresh.execute(f"SELECT * FROM s.t FOR SYSTEM_VERSION AS OF {version}")


def test_a_dataset_file_missing_from_a_retained_version_is_still_damage(
    backend: Backend,
) -> None:
    uri, options = backend
    conn = _table_lake(uri, options)
    cur = conn.cursor()
    path = cur.execute("SELECT file FROM system.data_files LIMIT 1").fetchone()[0]  # type: ignore[index]
    open_storage(uri, storage_options=options).delete(path)
    with pytest.raises(CorruptFileError) as caught:
        cur.execute("SELECT * FROM s.t").fetchall()
    assert not isinstance(caught.value, VersionExpiredError)
    assert caught.value.path == path


def test_a_cursor_still_fetching_gets_version_expired(tmp_path: Any) -> None:
    """A streamed read names the file it failed on (an ``OSError`` from Arrow's C stream)."""
    uri = str(tmp_path / "lake")
    conn = _table_lake(uri, {})
    lake = Lakehouse.open(uri)
    snapshot = lake.snapshot()
    paths = {p for p, _ in lake.storage.list_with_times("") if p.endswith(".parquet")}
    files = QueryFiles(duckdb.connect())
    files.add(snapshot, paths)
    path = min(paths)
    failure = OSError(f'IO Error: No files found that match the pattern "{uri}/{path}"')

    retained = files.translate_stream(failure)  # the version is retained: damage
    assert isinstance(retained, CorruptFileError) and retained.path == path
    _expire_rewritten(conn, uri, {})
    expired = files.translate_stream(failure)
    assert isinstance(expired, VersionExpiredError) and expired.version == snapshot.version
    # An error that names no file of the query stays DuckDB's.
    other = files.translate_stream(OSError("Out of Memory Error: failed to allocate"))
    assert type(other) is OperationalError


def test_expired_versions_have_only_pinned_versions_below_them() -> None:
    pins = LakehouseDefinition(
        name="x",
        maximum_version_age_millis_overrides={2: 10**12, 8: 0},
        exported_snapshots={"e": root_node_file_name(3), "far": "s3://b/l/_0.arrow"},
    )
    assert was_expired([6, 7, 8], 4) and was_expired([6, 7, 8], 0)
    assert not was_expired([2, 6, 7, 9], 4)  # 2 is kept by nothing here: 4 was lost
    assert was_expired([2, 6, 7, 9], 4, pins)  # 2 is kept longer by its override
    assert was_expired([2, 3, 6, 9], 5, pins)  # 3 is exported in place
    assert not was_expired([2, 6, 7, 9], 8)  # above 6 and 7: lost
    assert was_expired([2, 6, 7, 9], 8, pins)  # its own maximum age
    assert describe([2, 6, 7, 8]) == "2, 6 to 8" and describe([5]) == "5"
    assert duration(604_800_000) == "7 days" and duration(60_000) == "1 minute"
    assert duration(1500) == "1500 ms" and duration(3000) == "3 s"
