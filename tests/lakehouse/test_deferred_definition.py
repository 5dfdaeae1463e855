"""A connection to a remote root reads the lakehouse definition beside its first statement.

``trinity_dbapi.connect`` waits for the hint and the root (so a missing
lakehouse, refused credentials or a damaged root are its own errors), not for
the definition (trinity_dbapi/lakehouse/opening.py): its first user waits for
it and meets what is wrong with it, every time, as the same error connect
would have raised; a read that failed for another reason is tried again.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.errors import DamagedVersionError, StorageError
from trinity_dbapi.lakehouse.lakehouse import Lakehouse
from trinity_dbapi.storage import Storage, open_storage
from trinity_dbapi.storage.cache import shared_cache

LATENCY = 0.02


@pytest.fixture
def lake(round_trip_lake: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    uri, options = round_trip_lake
    with trinity_dbapi.connect(uri, storage_options=options, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id INT8, v VARCHAR)")
        conn.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    shared_cache().clear()  # as a new process finds it
    return uri, options


def _connect(lake: tuple[str, dict[str, Any]]) -> Any:
    return trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True)


def test_connect_returns_before_the_definition_and_the_first_statement_installs_it(
    lake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Storage, "latency", LATENCY)
    conn = _connect(lake)
    assert conn.lakehouse.pending is not None
    assert conn.execute("SELECT v FROM t ORDER BY id").fetchall() == [("a",), ("b",)]
    assert conn.lakehouse.pending is None
    assert conn.lakehouse.definition.name == "lakehouse"


def test_a_local_root_and_the_python_api_wait_for_the_definition(lake: Any, tmp_path: Any) -> None:
    assert Lakehouse.open(lake[0], storage_options=lake[1]).pending is None
    local = trinity_dbapi.connect(str(tmp_path / "local"))
    assert local.lakehouse.pending is None


def test_a_damaged_definition_fails_every_statement_as_connect_would_have(lake: Any) -> None:
    conn = _connect(lake)
    path = conn.lakehouse.pending.path
    assert conn.lakehouse.definition  # read, so no read in flight fills the cache below
    conn.close()
    shared_cache().clear()
    storage = open_storage(lake[0], storage_options=lake[1])
    storage.write(path, b"\xff\xff not a definition")
    conn = _connect(lake)  # the root is fine: connect says nothing
    for _ in range(2):
        with pytest.raises(DamagedVersionError) as info:
            conn.execute("SELECT count(*) FROM t")
        # Every version shares that definition file: none opens.
        assert (info.value.path, info.value.intact) == (path, None)
    conn.close()


def test_a_definition_read_that_failed_is_read_again(
    lake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Storage.read
    failed: list[str] = []

    def flaky(self: Storage, path: str) -> bytes:
        if path.startswith("_lakehouse_def_") and not failed:
            failed.append(path)
            raise StorageError(f"read of {path!r} failed: connection reset", path=path)
        return original(self, path)

    monkeypatch.setattr(Storage, "read", flaky)
    conn = _connect(lake)
    with pytest.raises(StorageError, match="connection reset"):
        conn.execute("SELECT count(*) FROM t")
    assert failed and conn.lakehouse.pending is not None
    assert conn.execute("SELECT count(*) FROM t").fetchall() == [(2,)]
    assert conn.lakehouse.pending is None


def test_threads_that_need_the_definition_at_once_install_it_once(lake: Any) -> None:
    conn = _connect(lake)
    pending = conn.lakehouse.pending
    assert pending is not None
    seen: list[Any] = []
    threads = [threading.Thread(target=lambda: seen.append(conn.lakehouse.nodes)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and len({id(nodes) for nodes in seen}) == 1


def test_a_lakehouse_of_another_shape_reads_right_whatever_was_read_ahead(
    round_trip_lake: tuple[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not the default order nor key sizes: the first statement's read-ahead,
    # made before the definition says them, looks in the wrong places.
    uri, options = round_trip_lake
    with trinity_dbapi.connect(
        uri,
        storage_options=options,
        autocommit=True,
        order=4,
        namespace_name_max_size_bytes=20,
        table_name_max_size_bytes=20,
    ) as conn:
        conn.execute("CREATE NAMESPACE s")
        for i in range(6):
            conn.execute(f"CREATE TABLE s.t{i} (id INT8)")
            conn.execute(f"INSERT INTO s.t{i} VALUES ({i})")
    shared_cache().clear()
    monkeypatch.setattr(Storage, "latency", LATENCY)
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    assert conn.lakehouse.pending is not None
    assert conn.execute("SELECT id FROM s.t4").fetchall() == [(4,)]
    assert conn.lakehouse.definition.order == 4


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork here")
def test_a_forked_child_reads_the_definition_itself(lake: Any) -> None:
    import os

    conn = _connect(lake)
    assert conn.lakehouse.pending is not None
    with conn.lakehouse.pending.lock:  # a parent thread settling it as the child is made
        child = os.fork()
        if child == 0:  # pragma: no cover - the child reports through its exit code
            try:
                ok = conn.lakehouse.definition.name == "lakehouse"
            finally:
                os._exit(0 if ok else 1)
    deadline = time.monotonic() + 30
    while (ended := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if ended[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        pytest.fail("the forked child waited forever for its parent's read")
    assert os.waitstatus_to_exitcode(ended[1]) == 0
