"""Recovery from a damaged lakehouse (docs/recovery.md).

A damaged latest root must not lock everyone out: ``connect`` names the file
and the newest intact version, ``connect(uri, version=N)`` reads that
version without reading later roots, ``CALL system.rollback_to_version(N)``
there makes N's content the latest again, and ``CALL system.check_integrity()``
reports every damaged or missing file a version reaches, one row each.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import trinity_dbapi
from trinity_dbapi.errors import (
    CorruptFileError,
    DamagedVersionError,
    LakehouseNotFoundError,
    NoSuchVersionError,
    ProgrammingError,
    ReadOnlyError,
)
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import TableDefinition
from trinity_dbapi.format.paths import LATEST_HINT_FILE, root_node_file_name
from trinity_dbapi.storage import Storage, open_storage
from trinity_dbapi.tables import layout, managed
from trinity_dbapi.tables.metadata_io import read_metadata

Backend = tuple[str, dict[str, Any]]


def _connect(backend: Backend, **options: Any) -> trinity_dbapi.Connection:
    uri, storage_options = backend
    return trinity_dbapi.connect(uri, storage_options=storage_options, **options)


def _first_statement(backend: Backend) -> None:
    """Connect and run a statement: a remote root's definition arrives beside the first one."""
    with _connect(backend) as conn:
        conn.execute("SELECT 1")


def _storage(backend: Backend) -> Storage:
    uri, storage_options = backend
    return open_storage(uri, storage_options=storage_options)


def _rows(conn: trinity_dbapi.Connection, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in conn.execute(sql).fetchall()]


def _lakehouse(backend: Backend) -> int:
    """A lakehouse whose version N holds rows 1 and 2 and whose version N + 1 adds 3; returns N."""
    with _connect(backend, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (a INT8, b VARCHAR) PARTITIONED BY (b)")
        conn.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y')")
        intact = conn.lakehouse.latest_version()
        conn.execute("INSERT INTO t VALUES (3, 'x')")
        assert conn.lakehouse.latest_version() == intact + 1
    return intact


def _truncate(storage: Storage, path: str) -> None:
    data = storage.read(path)
    storage.write(path, data[: len(data) // 2])


def _flip_last_byte(storage: Storage, path: str) -> None:
    # The last byte is part of the Arrow file's closing magic number, which
    # the reader checks (it ignores the opening one); a byte flipped in a
    # column's data is caught only where the format checks it (docs/format.md).
    data = storage.read(path)
    storage.write(path, data[:-1] + bytes([data[-1] ^ 0xFF]))


def _delete_keeping_hint(storage: Storage, path: str) -> None:
    storage.delete(path)
    assert storage.read(LATEST_HINT_FILE).strip().lstrip(b"0") != b""  # the hint still says so


DAMAGE = {
    "truncated": _truncate,
    "byte flipped": _flip_last_byte,
    "deleted, hint kept": _delete_keeping_hint,
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_latest_root_names_the_file_and_the_intact_version(
    backend: Backend, damage: str
) -> None:
    intact = _lakehouse(backend)
    damaged = root_node_file_name(intact + 1)
    DAMAGE[damage](_storage(backend), damaged)
    for options in ({}, {"read_only": True}):
        with pytest.raises(CorruptFileError) as info:
            _connect(backend, **options)
        assert isinstance(info.value, DamagedVersionError)
        assert info.value.path == damaged
        assert info.value.version == intact + 1
        assert info.value.intact == intact
        message = str(info.value)
        assert damaged in message
        assert f"connect(uri, version={intact})" in message
        assert f"trinity DIR --at-version {intact}" in message
        assert f"CALL system.rollback_to_version({intact})" in message


@pytest.mark.parametrize("damage", DAMAGE)
def test_recovery_reads_the_intact_version_and_rolls_forward(backend: Backend, damage: str) -> None:
    intact = _lakehouse(backend)
    damaged = intact + 1
    DAMAGE[damage](_storage(backend), root_node_file_name(damaged))
    with _connect(backend, version=intact, autocommit=True) as conn:
        assert conn.lakehouse.latest_version() == intact
        assert _rows(conn, "SELECT a, b FROM t ORDER BY a") == [(1, "x"), (2, "y")]
        assert _rows(conn, f"SELECT count(*) FROM t FOR VERSION AS OF {intact - 1}") == [(0,)]
        with pytest.raises(ReadOnlyError, match=rf"reads version {intact} .*rollback_to_version"):
            conn.execute("INSERT INTO t VALUES (9, 'z')")
        result = _rows(conn, f"CALL system.rollback_to_version({intact})")
    # After the newest existing root: the damaged one is kept, never overwritten.
    new = damaged + 1 if damage != "deleted, hint kept" else damaged
    assert result == [(intact, new)]
    with _connect(backend, autocommit=True) as conn:
        assert conn.lakehouse.latest_version() == new
        assert _rows(conn, "SELECT a, b FROM t ORDER BY a") == [(1, "x"), (2, "y")]
        snap = conn.lakehouse.snapshot()
        # The chain from the new root reaches intact roots only.
        assert snap.previous_root == root_node_file_name(intact)
        assert snap.rollback_from_root == root_node_file_name(new - 1)
        assert snap.definition_path == conn.lakehouse.snapshot(intact).definition_path
        assert snap.created_at_millis > conn.lakehouse.snapshot(intact).created_at_millis
        conn.execute("INSERT INTO t VALUES (4, 'x')")
        assert _rows(conn, "SELECT a FROM t ORDER BY a") == [(1,), (2,), (4,)]


def test_a_pinned_connection_never_reads_later_versions(backend: Backend) -> None:
    intact = _lakehouse(backend)
    with _connect(backend, version=intact) as conn:
        assert _rows(conn, "SELECT count(*) FROM t") == [(2,)]
        with pytest.raises(NoSuchVersionError, match=f"opened at \\(version={intact}\\)"):
            conn.execute(f"SELECT * FROM t FOR VERSION AS OF {intact + 1}")
        versions = [row[0] for row in _rows(conn, "SELECT version FROM system.versions")]
        assert max(versions) == intact


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE u (a INT8)",
        "DELETE FROM t",
        "CREATE NAMESPACE other",
        "CALL system.compact()",
        "CALL system.collect_garbage(dry_run => TRUE)",
        "CALL system.expire_versions(retain_last => 1)",
        "CALL system.export_snapshot('e')",
    ],
)
def test_a_pinned_connection_refuses_writes(backend: Backend, sql: str) -> None:
    intact = _lakehouse(backend)
    with _connect(backend, version=intact, autocommit=True) as conn:
        with pytest.raises(ReadOnlyError, match=rf"version={intact}.*rollback_to_version"):
            conn.execute(sql)
        assert _rows(conn, "SELECT count(*) FROM t") == [(2,)]
    with _connect(backend) as conn:
        assert conn.lakehouse.latest_version() == intact + 1  # nothing was committed


def test_the_lakehouse_api_refuses_maintenance_when_pinned(backend: Backend) -> None:
    from trinity_dbapi.lakehouse import Lakehouse

    intact = _lakehouse(backend)
    uri, options = backend
    lake = Lakehouse.open(uri, storage_options=options, version=intact)
    # Pinned, the newer version's files would look unreachable: never collect them.
    with pytest.raises(ReadOnlyError):
        lake.maintenance.collect_garbage(grace_period_millis=0)
    with pytest.raises(ReadOnlyError):
        lake.maintenance.expire_versions(retain_last=1)
    with pytest.raises(ReadOnlyError):
        lake.commit(lake.snapshot(), {"k": "v"})


def test_a_read_only_pinned_connection_refuses_the_rollback(backend: Backend) -> None:
    intact = _lakehouse(backend)
    conn = _connect(backend, version=intact, read_only=True, autocommit=True)
    with conn, pytest.raises(ReadOnlyError, match="read-only"):
        conn.execute(f"CALL system.rollback_to_version({intact})")


@pytest.mark.parametrize("version", [-1, 2**32, True, "1", 1.0])
def test_version_must_be_a_version_number(backend: Backend, version: Any) -> None:
    _lakehouse(backend)
    with pytest.raises(ProgrammingError, match="version must be a version number"):
        _connect(backend, version=version)


def test_a_version_that_does_not_exist(backend: Backend) -> None:
    intact = _lakehouse(backend)
    with pytest.raises(NoSuchVersionError, match=f"version {intact + 5} does not exist"):
        _connect(backend, version=intact + 5)


def test_version_never_creates_a_lakehouse(backend: Backend) -> None:
    with pytest.raises(LakehouseNotFoundError):
        _connect(backend, version=0)
    assert not _storage(backend).list("")


def test_a_damaged_pinned_version_names_an_older_one(backend: Backend) -> None:
    intact = _lakehouse(backend)
    _truncate(_storage(backend), root_node_file_name(intact))
    with pytest.raises(DamagedVersionError) as info:
        _connect(backend, version=intact)
    assert info.value.intact == intact - 1


def test_no_intact_version_says_to_restore(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    trinity_dbapi.connect(uri, create=True).close()
    storage = open_storage(uri)
    _truncate(storage, root_node_file_name(0))
    with pytest.raises(DamagedVersionError, match=r"[Nn]o older version opens") as info:
        trinity_dbapi.connect(uri)
    assert info.value.intact is None


def test_a_corrupt_latest_definition_is_damage_too(backend: Backend) -> None:
    intact = _lakehouse(backend)
    with _connect(backend, autocommit=True) as conn:
        conn.execute("CALL system.export_snapshot('e')")  # a new lakehouse definition file
        latest = conn.lakehouse.snapshot()
    storage = _storage(backend)
    storage.write(latest.definition_path, b"\xff\xff garbage")
    with pytest.raises(DamagedVersionError) as info:
        _first_statement(backend)
    assert info.value.path == latest.definition_path
    assert info.value.intact == intact + 1


def test_the_shell_opens_a_version(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    intact = _lakehouse((uri, {}))
    _truncate(open_storage(uri), root_node_file_name(intact + 1))

    def trinity(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "trinity_dbapi.cli", uri, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    refused = trinity("-c", "SELECT count(*) FROM t")
    assert refused.returncode == 1
    assert f"--at-version {intact}" in refused.stderr
    read = trinity(
        "--at-version", str(intact), "--format", "csv", "-c", "SELECT a FROM t ORDER BY a"
    )
    assert read.returncode == 0, read.stderr
    assert read.stdout.split() == ["a", "1", "2"]
    # The old spelling still works, with a note that it is deprecated.
    fixed = trinity("--version", str(intact), "-c", f"CALL system.rollback_to_version({intact})")
    assert f"--version {intact} is deprecated; write --at-version {intact}" in fixed.stderr
    assert fixed.returncode == 0, fixed.stderr
    after = trinity("--format", "csv", "-c", "SELECT count(*) AS n FROM t")
    assert after.returncode == 0, after.stderr
    assert after.stdout.split() == ["n", "2"]


# -- check_integrity ------------------------------------------------------------------------


def _table_files(conn: trinity_dbapi.Connection) -> dict[str, Any]:
    """Where table default.t keeps its definition, dataset metadata, data and index files."""
    snap = conn.lakehouse.snapshot()
    location = snap.get(keys.table_key("default", "t", snap.definition.key_limits))
    assert location is not None
    table = TableDefinition.from_bytes(conn.lakehouse.read_location(location), location)
    meta_path = table.format_properties[managed.METADATA_LOCATION]
    meta = read_metadata(conn.lakehouse.storage, meta_path)
    return {
        "definition": location,
        "metadata": meta_path,
        "common": layout.common_metadata_path(meta.dataset_uuid),
        "data": sorted(meta.files().values()),
        "index": sorted(meta.indices.values()),
    }


def _checked_lakehouse(backend: Backend) -> tuple[dict[str, Any], str]:
    """A lakehouse with node files below the root, a table, data and an index."""
    with _connect(backend, autocommit=True, order=4) as conn:
        conn.execute("CREATE TABLE t (a INT8, b VARCHAR) PARTITIONED BY (b)")
        conn.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y')")
        conn.execute("CREATE INDEX ia ON t (a)")
        for i in range(6):
            conn.execute(f"CREATE NAMESPACE n{i}")
        conn.execute("CALL system.compact()")
        children = conn.lakehouse.snapshot().root.children
        assert children, "the test needs node files below the root"
        return _table_files(conn), str(children[0])


def _check(backend: Backend, **options: Any) -> list[tuple[Any, ...]]:
    with _connect(backend, **options) as conn:
        return _rows(conn, "CALL system.check_integrity()")


def test_check_integrity_of_an_intact_lakehouse_is_one_ok_row(backend: Backend) -> None:
    _checked_lakehouse(backend)
    events: list[Any] = []
    with _connect(backend, progress=events.append) as conn:
        cur = conn.execute("CALL system.check_integrity()")
        assert [d[0] for d in cur.description] == ["file", "object", "problem"]
        assert cur.fetchall() == [(None, None, "ok")]
    tasks = {e.task for e in events}
    assert tasks == {"check integrity"}
    assert events[-1].done == events[-1].total
    assert events[-1].total >= 15  # root, definition, nodes, 8 definitions, dataset files


@pytest.mark.parametrize(
    "which", ["node", "definition", "metadata", "common", "data", "data missing", "index"]
)
def test_check_integrity_reports_each_damaged_file(backend: Backend, which: str) -> None:
    files, node = _checked_lakehouse(backend)
    storage = _storage(backend)
    path = {
        "node": node,
        "definition": files["definition"],
        "metadata": files["metadata"],
        "common": files["common"],
        "data": files["data"][0],
        "data missing": files["data"][0],
        "index": files["index"][0],
    }[which]
    if which == "data missing":
        storage.delete(path)
    elif which == "metadata":
        storage.write(path, b"{not json")
    else:
        _truncate(storage, path)
    rows = _check(backend)
    problem = {row[0]: row for row in rows}
    assert path in problem, rows
    _, obj, text = problem[path]
    assert text
    if which == "data missing":
        assert text.startswith("the file is missing"), text
    if which == "node":
        # A damaged node hides its subtree (whose files cannot be known): one row.
        assert obj is None
    else:
        assert obj == "default.t"
    assert len(rows) == 1, rows


def test_check_integrity_reports_every_problem(backend: Backend) -> None:
    files, _ = _checked_lakehouse(backend)
    storage = _storage(backend)
    for path in files["data"]:
        storage.delete(path)
    rows = _check(backend)
    assert sorted(row[0] for row in rows) == files["data"]
    assert {row[2] for row in rows} == {"the file is missing"}


def test_check_integrity_checks_the_pinned_version(backend: Backend) -> None:
    with _connect(backend, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (a INT8, b VARCHAR)")
        conn.execute("INSERT INTO t VALUES (1, 'x')")
        before = conn.lakehouse.latest_version()
        conn.execute("INSERT INTO t VALUES (2, 'y')")
        files = _table_files(conn)
    newest = files["data"]
    storage = _storage(backend)
    with _connect(backend, version=before) as conn:
        old = set(_table_files(conn)["data"])
    (added,) = [p for p in newest if p not in old]
    storage.delete(added)
    assert _check(backend, version=before) == [(None, None, "ok")]
    assert [row[0] for row in _check(backend)] == [added]
    assert [row[0] for row in _check(backend, read_only=True)] == [added]


def test_check_integrity_reads_files_not_caches(backend: Backend) -> None:
    _checked_lakehouse(backend)
    with _connect(backend, autocommit=True) as conn:
        assert _rows(conn, "SELECT count(*) FROM t") == [(2,)]  # every file now cached
        files = _table_files(conn)
        _storage(backend).delete(files["metadata"])
        rows = _rows(conn, "CALL system.check_integrity()")
    assert rows == [(files["metadata"], "default.t", "the file is missing")]


def test_after_recovery_the_damaged_root_is_reported_until_it_expires(backend: Backend) -> None:
    intact = _lakehouse(backend)
    damaged = root_node_file_name(intact + 1)
    _truncate(_storage(backend), damaged)
    with _connect(backend, version=intact, autocommit=True) as conn:
        conn.execute(f"CALL system.rollback_to_version({intact})")
    with _connect(backend, autocommit=True) as conn:
        # The history lists every version that reads; the recovery names the damaged one.
        versions = _rows(conn, "SELECT version, rollback_from_root FROM system.versions")
        assert [v for v, _ in versions] == [*range(intact + 1), intact + 2]
        assert versions[-1] == (intact + 2, damaged)
        with pytest.raises(CorruptFileError, match=damaged):
            conn.execute(f"SELECT * FROM t FOR VERSION AS OF {intact + 1}")
        problems = _rows(conn, "CALL system.check_integrity()")
        assert [(file, obj) for file, obj, _ in problems] == [(damaged, None)]
        # Garbage collection cannot tell what the damaged root reaches: it stops.
        with pytest.raises(CorruptFileError, match=damaged):
            conn.execute("CALL system.collect_garbage(dry_run => TRUE)")
        # Its age is bounded by the next version's (creation times increase).
        later = datetime.now(timezone.utc) + timedelta(days=1)
        expired = conn.execute(
            "CALL system.expire_versions(older_than => ?, retain_last => 1)", [later]
        ).fetchone()
        assert expired is not None
        assert list(expired[0]) == [*range(intact + 2)]
        assert _rows(conn, "CALL system.check_integrity()") == [(None, None, "ok")]
        assert _rows(conn, "SELECT a FROM t ORDER BY a") == [(1,), (2,)]
        conn.execute("CALL system.collect_garbage(grace_period_millis => 0)")
        assert _rows(conn, "SELECT a FROM t ORDER BY a") == [(1,), (2,)]


def test_check_integrity_reports_a_damaged_older_root(backend: Backend) -> None:
    intact = _lakehouse(backend)
    older = root_node_file_name(intact - 1)
    _truncate(_storage(backend), older)
    assert [row[0] for row in _check(backend)] == [older]
    # Pinned at a version before it, the damaged root is a later one: never read.
    assert _check(backend, version=intact - 2) == [(None, None, "ok")]


@pytest.fixture(scope="module")
def five_versions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local lakehouse: version 1 creates t, versions 2 to 5 insert rows 1 to 4."""
    path = tmp_path_factory.mktemp("five") / "lake"
    with trinity_dbapi.connect(str(path), autocommit=True) as conn:
        conn.execute("CREATE TABLE t (a INT8)")
        for row in range(1, 5):
            conn.execute(f"INSERT INTO t VALUES ({row})")
        assert conn.lakehouse.latest_version() == 5
    return path


@settings(max_examples=12, deadline=None)
@given(
    older=st.sets(st.integers(1, 4)),
    cut=st.floats(0, 0.99),
)
@example(older={1, 2, 3, 4}, cut=0.0)  # only version 0, with no table, is intact
@example(older=set(), cut=0.5)
def test_recovery_finds_the_newest_intact_version_whatever_is_damaged(
    five_versions: Path, older: set[int], cut: float
) -> None:
    # Property: with the latest root and any older ones cut short, the error
    # names the newest root that is not, and recovering there restores its rows.
    with tempfile.TemporaryDirectory() as folder:
        uri = str(Path(folder) / "lake")
        shutil.copytree(five_versions, uri)
        storage = open_storage(uri)
        for version in {5, *older}:
            data = storage.read(root_node_file_name(version))
            storage.write(root_node_file_name(version), data[: int(len(data) * cut)])
        expected = max(v for v in range(5) if v not in older)
        with pytest.raises(DamagedVersionError) as info:
            trinity_dbapi.connect(uri)
        assert (info.value.version, info.value.intact) == (5, expected)
        with trinity_dbapi.connect(uri, version=expected, autocommit=True) as conn:
            assert _rows(conn, f"CALL system.rollback_to_version({expected})") == [(expected, 6)]
        with trinity_dbapi.connect(uri) as conn:
            tables = _rows(conn, "SHOW TABLES")
            if expected == 0:
                assert tables == []
            else:
                rows = _rows(conn, "SELECT a FROM t ORDER BY a")
                assert rows == [(row,) for row in range(1, expected)]
