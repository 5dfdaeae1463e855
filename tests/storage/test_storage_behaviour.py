"""One behaviour suite for every storage backend (``storage`` fixture: local,
memory, s3 on moto), plus the generic fsspec backend and error redaction."""

from __future__ import annotations

import multiprocessing
import os
import queue
import random
import subprocess
import sys
import threading
import uuid
from typing import Any

import fsspec
import pytest

import trinity_dbapi
from trinity_dbapi.errors import (
    ExclusiveCreateNotSupportedError,
    FileAlreadyExistsError,
    InvalidURIError,
    NotSupportedError,
    StorageError,
    StorageFileNotFoundError,
)
from trinity_dbapi.storage import Storage, StorageStats, open_storage
from trinity_dbapi.storage.fsspec_storage import FsspecStorage

MB = 1024 * 1024
RACERS = 16
ROUNDS = 5
PROCESS_ROUNDS = 3  # spawning 16 interpreters is the slow part; threads do 5


def _payload(path: str, racer: int, size: int = MB) -> bytes:
    """Distinct, reproducible content for one racer on one path."""
    header = f"{path}|racer={racer}|".encode()
    return header + random.Random(f"{path}/{racer}").randbytes(size - len(header))


# -- read / write / delete / exists ---------------------------------------------


def test_fresh_root_is_empty(storage: Storage) -> None:
    assert storage.root_uri.endswith("/")
    assert storage.list() == []
    assert storage.exists("anything") is False


def test_create_then_read_round_trips(storage: Storage) -> None:
    storage.create_exclusive("a/b/node-1.arrow", b"content")
    assert storage.read("a/b/node-1.arrow") == b"content"
    assert storage.exists("a/b/node-1.arrow") is True
    assert storage.exists("a/b") is False  # a "directory" is not a file
    assert storage.exists("a/b/node-1") is False


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00", bytes(range(256)) * 3, b"\r\n\x00\xff" * 1000],
    ids=["empty", "nul", "all-bytes", "line-endings"],
)
def test_binary_content_round_trips_exactly(storage: Storage, data: bytes) -> None:
    storage.create_exclusive("created.bin", data)
    storage.write("written.bin", data)
    storage.clear_cache()
    assert storage.read("created.bin") == data
    assert storage.read("written.bin") == data
    assert type(storage.read("created.bin")) is bytes


def test_five_megabytes_round_trip(storage: Storage) -> None:
    data = random.Random(5).randbytes(5 * MB)
    storage.create_exclusive("big.arrow", data)
    storage.clear_cache()
    assert storage.read("big.arrow") == data


def test_overwrite_replaces_content(storage: Storage) -> None:
    storage.write("_latest_hint.txt", b"1")
    storage.write("_latest_hint.txt", b"22")
    assert storage.read("_latest_hint.txt") == b"22"
    storage.write("_latest_hint.txt", b"")
    assert storage.read("_latest_hint.txt") == b""


def test_read_missing_file_names_the_path(storage: Storage) -> None:
    with pytest.raises(StorageFileNotFoundError) as info:
        storage.read("dir/missing.arrow")
    assert info.value.path == "dir/missing.arrow"
    assert "dir/missing.arrow" in str(info.value)


def test_read_of_a_directory_is_not_found(storage: Storage) -> None:
    storage.create_exclusive("dir/file", b"x")
    with pytest.raises(StorageFileNotFoundError) as info:
        storage.read("dir")
    assert info.value.path == "dir"


def test_delete_removes_and_missing_delete_is_a_noop(storage: Storage) -> None:
    storage.create_exclusive("d/x", b"1")
    storage.create_exclusive("d/y", b"2")
    storage.delete("d/x")
    assert storage.exists("d/x") is False
    assert storage.list() == ["d/y"]
    with pytest.raises(StorageFileNotFoundError):
        storage.read("d/x")
    storage.delete("d/x")  # already gone
    storage.delete("never/existed")
    assert storage.list() == ["d/y"]
    # A deleted path can be created again.
    storage.create_exclusive("d/x", b"3")
    assert storage.read("d/x") == b"3"


@pytest.mark.parametrize("path", ["../escape", "/abs", "a//b", "a/./b", "a/..", "", "a/"])
def test_paths_that_could_leave_the_root_are_rejected(storage: Storage, path: str) -> None:
    with pytest.raises(InvalidURIError):
        storage.create_exclusive(path, b"x")
    with pytest.raises(InvalidURIError):
        storage.read(path)
    assert storage.list() == []


# -- list -------------------------------------------------------------------------


def test_list_is_by_string_prefix_sorted_and_relative(storage: Storage) -> None:
    files = [
        "b.txt",
        "ab/d/e.txt",
        "a.txt",
        "ab/c.txt",
        "_00001.arrow",
        "abc",
        "x/y/z/w",
    ]
    for name in files:
        storage.create_exclusive(name, name.encode())
    storage.write("_latest_hint.txt", b"1")
    everything = sorted([*files, "_latest_hint.txt"])
    assert storage.list() == everything
    assert storage.list("") == everything
    assert storage.list("a") == ["a.txt", "ab/c.txt", "ab/d/e.txt", "abc"]
    assert storage.list("ab") == ["ab/c.txt", "ab/d/e.txt", "abc"]
    assert storage.list("ab/") == ["ab/c.txt", "ab/d/e.txt"]
    assert storage.list("ab/d") == ["ab/d/e.txt"]
    assert storage.list("ab/c") == ["ab/c.txt"]
    assert storage.list("ab/c.txt") == ["ab/c.txt"]
    assert storage.list("_") == ["_00001.arrow", "_latest_hint.txt"]
    assert storage.list("x/y/") == ["x/y/z/w"]
    assert storage.list("zzz") == []
    assert storage.list("nope/") == []


def test_list_sees_writes_and_deletes_of_another_storage_object(
    storage: Storage, backend: tuple[str, dict[str, Any]]
) -> None:
    # Another process's commit must be visible at once: no stale listing cache.
    other = open_storage(backend[0], storage_options=backend[1])
    assert storage.list("v/") == []
    assert storage.exists("v/_1.arrow") is False
    other.create_exclusive("v/_1.arrow", b"1")
    assert storage.list("v/") == ["v/_1.arrow"]
    assert storage.exists("v/_1.arrow") is True
    assert storage.read("v/_1.arrow") == b"1"
    other.delete("v/_1.arrow")
    assert storage.list("v/") == []
    assert storage.exists("v/_1.arrow") is False


# -- exclusive create ---------------------------------------------------------------


def test_create_exclusive_on_existing_path_fails_and_keeps_content(
    storage: Storage,
) -> None:
    storage.create_exclusive("_00000.arrow", b"original")
    with pytest.raises(FileAlreadyExistsError) as info:
        storage.create_exclusive("_00000.arrow", b"intruder")
    assert info.value.path == "_00000.arrow"
    assert "_00000.arrow" in str(info.value)
    storage.clear_cache()
    assert storage.read("_00000.arrow") == b"original"
    assert storage.list() == ["_00000.arrow"]  # no temp files left behind


def test_create_exclusive_of_empty_file_still_excludes(storage: Storage) -> None:
    # s3fs's open(mode="xb") silently overwrites when zero bytes are written.
    storage.create_exclusive("empty", b"")
    with pytest.raises(FileAlreadyExistsError):
        storage.create_exclusive("empty", b"")
    with pytest.raises(FileAlreadyExistsError):
        storage.create_exclusive("empty", b"not empty")
    storage.clear_cache()
    assert storage.read("empty") == b""


def test_create_exclusive_over_overwritten_file_fails(storage: Storage) -> None:
    storage.write("_latest_hint.txt", b"3")
    with pytest.raises(FileAlreadyExistsError):
        storage.create_exclusive("_latest_hint.txt", b"4")
    assert storage.read("_latest_hint.txt") == b"3"


def test_before_publish_runs_while_the_file_is_still_invisible(storage: Storage) -> None:
    seen: list[bool] = []
    storage.create_exclusive(
        "v/_1.arrow", b"root", before_publish=lambda: seen.append(storage.exists("v/_1.arrow"))
    )
    assert seen == [False]  # called exactly once, before the file appeared
    storage.clear_cache()
    assert storage.read("v/_1.arrow") == b"root"


def test_a_failing_before_publish_publishes_nothing(storage: Storage) -> None:
    def fail() -> None:
        raise StorageError("a file the root points at could not be written")

    with pytest.raises(StorageError, match="could not be written"):
        storage.create_exclusive("v/_1.arrow", b"root", before_publish=fail)
    assert storage.exists("v/_1.arrow") is False
    # no staged temp file left behind either (a local backend lists its own here)
    assert storage.list_with_times("v/") == []
    storage.create_exclusive("v/_1.arrow", b"retry")  # the name is still free
    assert storage.read("v/_1.arrow") == b"retry"


def _check_race(storage: Storage, path: str, outcomes: dict[int, str]) -> None:
    winners = [racer for racer, outcome in outcomes.items() if outcome == "won"]
    assert sorted(outcomes) == list(range(RACERS))
    assert len(winners) == 1, f"{path}: {outcomes}"
    losers = {o for racer, o in outcomes.items() if racer != winners[0]}
    assert losers == {"lost"}, f"{path}: {outcomes}"
    storage.clear_cache()
    assert storage.read(path) == _payload(path, winners[0])
    assert storage.list(path) == [path]


def test_create_exclusive_race_threads(storage: Storage) -> None:
    barrier = threading.Barrier(RACERS)
    for round_ in range(ROUNDS):
        path = f"race/_{round_:05d}.arrow"
        outcomes: dict[int, str] = {}

        def race(racer: int, path: str = path, outcomes: dict[int, str] = outcomes) -> None:
            data = _payload(path, racer)
            barrier.wait(timeout=60)
            try:
                storage.create_exclusive(path, data)
                outcomes[racer] = "won"
            except FileAlreadyExistsError:
                outcomes[racer] = "lost"
            except Exception as exc:  # noqa: BLE001 - _check_race reports it
                outcomes[racer] = repr(exc)

        threads = [threading.Thread(target=race, args=(i,)) for i in range(RACERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        _check_race(storage, path, outcomes)


def _race_process(
    uri: str,
    options: dict[str, Any],
    paths: list[str],
    racer: int,
    barrier: Any,
    results: Any,
) -> None:
    """Body of one racing process: opens its own storage, races on every path."""
    storage = open_storage(uri, storage_options=options)
    for path in paths:
        data = _payload(path, racer)
        barrier.wait(timeout=120)
        try:
            storage.create_exclusive(path, data)
            outcome = "won"
        except FileAlreadyExistsError:
            outcome = "lost"
        except Exception as exc:  # noqa: BLE001 - the parent reports it
            outcome = repr(exc)
        results.put((path, racer, outcome))


def test_create_exclusive_race_processes(
    storage: Storage, backend: tuple[str, dict[str, Any]]
) -> None:
    uri, options = backend
    if uri.startswith("memory://"):
        pytest.skip("memory:// is in-process only; the thread race covers it")
    # spawn, not fork: the parent runs threads (moto server, s3fs event loop).
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(RACERS)
    results = context.Queue()
    paths = [f"prace/_{round_:05d}.arrow" for round_ in range(PROCESS_ROUNDS)]
    processes = [
        context.Process(target=_race_process, args=(uri, options, paths, racer, barrier, results))
        for racer in range(RACERS)
    ]
    for process in processes:
        process.start()
    outcomes: dict[str, dict[int, str]] = {path: {} for path in paths}
    try:
        for _ in range(RACERS * PROCESS_ROUNDS):
            path, racer, outcome = results.get(timeout=120)
            outcomes[path][racer] = outcome
    except queue.Empty:
        pytest.fail(f"racing processes stopped reporting: {outcomes}")
    finally:
        for process in processes:
            process.join(timeout=60)
            if process.is_alive():
                process.kill()
    assert [p.exitcode for p in processes] == [0] * RACERS
    for path in paths:
        _check_race(storage, path, outcomes[path])


# -- counters and cache -------------------------------------------------------------


def test_counters_count_each_operation_and_byte(storage: Storage) -> None:
    storage.stats.reset()
    storage.create_exclusive("n/1.arrow", b"12345")
    storage.write("_latest_hint.txt", b"7")
    with pytest.raises(FileAlreadyExistsError):
        storage.create_exclusive("n/1.arrow", b"xyz")  # an attempt is counted
    storage.clear_cache()
    assert storage.read("n/1.arrow") == b"12345"
    assert storage.read("_latest_hint.txt") == b"7"
    assert storage.exists("n/1.arrow") is True
    assert storage.exists("n/2.arrow") is False
    assert storage.list("n/") == ["n/1.arrow"]
    storage.delete("n/1.arrow")
    assert storage.stats == StorageStats(
        reads=2,
        writes=1,
        creates=2,
        deletes=1,
        exists=2,
        lists=1,
        bytes_read=6,
        bytes_written=9,
        cache_hits=0,
        rounds=9,  # one after another
    )


def test_immutable_files_are_served_from_cache(storage: Storage) -> None:
    storage.create_exclusive("node-a.arrow", b"node")
    storage.clear_cache()
    before = storage.stats.snapshot()
    assert storage.read("node-a.arrow") == b"node"
    assert storage.read("node-a.arrow") == b"node"
    delta = storage.stats.since(before)
    assert (delta.reads, delta.cache_hits, delta.bytes_read) == (1, 1, 4)
    # The creator caches what it created: reading it back costs no request.
    storage.create_exclusive("node-b.arrow", b"bb")
    before = storage.stats.snapshot()
    assert storage.read("node-b.arrow") == b"bb"
    assert storage.stats.since(before) == StorageStats(cache_hits=1)


def test_latest_hint_is_never_cached(storage: Storage) -> None:
    for name in ("_latest_hint.txt", "sub/_latest_hint.txt"):
        storage.write(name, b"1")
        assert storage.read(name) == b"1"
        before = storage.stats.snapshot()
        storage.write(name, b"2")
        assert storage.read(name) == b"2"
        assert storage.read(name) == b"2"
        delta = storage.stats.since(before)
        assert (delta.reads, delta.cache_hits, delta.writes) == (2, 0, 1)


def test_cache_can_be_disabled(backend: tuple[str, dict[str, Any]]) -> None:
    uncached = open_storage(backend[0], storage_options=backend[1], cache_bytes=0)
    uncached.create_exclusive("f", b"x")
    assert uncached.read("f") == b"x"
    assert uncached.read("f") == b"x"
    assert (uncached.stats.reads, uncached.stats.cache_hits) == (2, 0)


# -- open_storage, generic fsspec backend, redaction ------------------------------------


def test_open_storage_picks_backend_by_scheme(
    backend: tuple[str, dict[str, Any]], storage: Storage
) -> None:
    expected = {
        "file": "LocalStorage",
        "memory": "MemoryStorage",
        "s3": "S3Storage",
        "gs": "GCSStorage",
        "abfs": "AzureStorage",
    }
    scheme = backend[0].split("://")[0]
    assert type(storage).__name__ == expected[scheme]
    assert storage.supports_exclusive_create is True
    assert storage.root_uri == backend[0] + "/"


# -- what readers that open files themselves get -----------------------------------


def test_fsspec_filesystem_reaches_the_storage_files(storage: Storage) -> None:
    storage.create_exclusive("d/data.bin", b"payload")
    reached = storage.fsspec_filesystem()
    assert reached is not None
    fs, root = reached
    assert not root.endswith("/")
    assert fs.cat_file(f"{root}/d/data.bin") == b"payload"


def test_local_root_is_the_folder_of_a_local_store_only(storage: Storage) -> None:
    storage.create_exclusive("d/data.bin", b"payload")
    root = storage.local_root
    if storage.root_uri.startswith("file://"):
        assert root is not None and not root.endswith("/")
        with open(os.path.join(root, "d", "data.bin"), "rb") as handle:
            assert handle.read() == b"payload"
    else:
        assert root is None


def test_generic_fsspec_storage_has_a_filesystem_and_no_local_root(tmp_path: Any) -> None:
    storage = open_storage(f"local://{tmp_path}/lake")
    storage.write("x/y.bin", b"\x00\x01")
    assert storage.local_root is None  # not a file:// root: read through fsspec
    reached = storage.fsspec_filesystem()
    assert reached is not None
    fs, root = reached
    assert fs.cat_file(f"{root}/x/y.bin") == b"\x00\x01"


def test_a_backend_without_file_access_says_so() -> None:
    class BytesOnly(Storage):
        def _read(self, path: str) -> bytes:
            raise StorageFileNotFoundError(path)

        def _write(self, path: str, data: bytes) -> None: ...

        def _create_exclusive(self, path: str, data: bytes) -> None: ...

        def _delete(self, path: str) -> None: ...

        def _exists(self, path: str) -> bool:
            return False

        def _list(self, prefix: str) -> list[str]:
            return []

    storage = BytesOnly("memory://bytes-only/")
    assert storage.local_root is None
    assert storage.fsspec_filesystem() is None


def test_generic_fsspec_storage_reads_but_cannot_commit() -> None:
    root = f"memory://generic-{uuid.uuid4().hex}/lake"
    storage = FsspecStorage(root, fsspec.filesystem("memory"))
    assert storage.supports_exclusive_create is False
    storage.write("a/b.txt", b"hello")
    storage.write("a/c.txt", b"")
    assert storage.read("a/b.txt") == b"hello"
    assert storage.list("a/b") == ["a/b.txt"]
    assert storage.exists("a/c.txt") is True
    with pytest.raises(ExclusiveCreateNotSupportedError) as info:
        storage.create_exclusive("_00000.arrow", b"root")
    message = str(info.value)
    assert "'memory'" in message and "cannot guarantee" in message
    assert "file://" in message and "memory://" in message and "s3://" in message
    assert info.value.uri == root + "/"
    assert storage.exists("_00000.arrow") is False
    storage.delete("a/b.txt")
    assert storage.list() == ["a/c.txt"]
    with pytest.raises(StorageFileNotFoundError):
        storage.read("a/b.txt")


def test_open_storage_on_other_fsspec_protocol_is_generic(tmp_path: Any) -> None:
    storage = open_storage(f"local://{tmp_path}/lake")
    assert type(storage) is FsspecStorage
    storage.write("x/y.bin", b"\x00\x01")  # creates the missing parent directories
    assert (tmp_path / "lake" / "x" / "y.bin").read_bytes() == b"\x00\x01"
    assert storage.list() == ["x/y.bin"]
    with pytest.raises(ExclusiveCreateNotSupportedError):
        storage.create_exclusive("_00000.arrow", b"")


def test_open_storage_unknown_scheme_is_not_supported() -> None:
    with pytest.raises(NotSupportedError) as info:
        open_storage("nosuchproto://b/lake", storage_options={"secret": "hunter2-xyz"})
    assert "nosuchproto" in str(info.value)
    assert "hunter2-xyz" not in str(info.value)


class _FailingFS:
    """A stand-in fsspec file system whose backend errors quote the secret."""

    @staticmethod
    def _strip_protocol(uri: str) -> str:
        return uri.split("://", 1)[1]

    def cat_file(self, path: str) -> bytes:
        raise OSError(f"denied for key AKIA-TOP and secret s3cr3t-value at {path}")

    def invalidate_cache(self, path: str | None = None) -> None:
        pass


def test_backend_errors_never_show_credentials() -> None:
    storage = FsspecStorage(
        "memory://redact/lake",
        _FailingFS(),
        storage_options={
            "key": "AKIA-TOP",
            "client_kwargs": {"aws_secret": "s3cr3t-value"},
        },
    )
    with pytest.raises(StorageError) as info:
        storage.read("f.arrow")
    message = str(info.value)
    assert "s3cr3t-value" not in message and "AKIA-TOP" not in message
    assert "***" in message and "'f.arrow'" in message
    assert info.value.path == "f.arrow"
    assert not isinstance(info.value, StorageFileNotFoundError)


@pytest.mark.s3
def test_s3_missing_bucket_errors_never_show_credentials(
    s3_storage_options: dict[str, Any],
) -> None:
    options = {**s3_storage_options, "secret": "very-secret-password"}
    storage = open_storage(
        f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/lake", storage_options=options
    )
    with pytest.raises(StorageError) as info:
        storage.read("x.arrow")
    assert info.value.path == "x.arrow"
    assert "very-secret-password" not in str(info.value)
    assert "very-secret-password" not in repr(info.value)


@pytest.mark.s3
def test_s3_large_body_uses_conditional_multipart(
    s3_bucket: str, s3_storage_options: dict[str, Any]
) -> None:
    # Bodies of at least 2 * 5 MiB chunks go through multipart upload; the
    # If-None-Match condition must then hold on CompleteMultipartUpload.
    import s3fs

    storage = open_storage(f"s3://{s3_bucket}/lake", storage_options=s3_storage_options)
    assert isinstance(storage.fs, s3fs.S3FileSystem)  # type: ignore[attr-defined]
    original = s3fs.S3FileSystem.pipe_file

    def small_chunks(self: Any, path: str, data: bytes, **kwargs: Any) -> Any:
        return original(self, path, data, chunksize=5 * MB, **kwargs)

    data = random.Random(11).randbytes(11 * MB)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(s3fs.S3FileSystem, "pipe_file", small_chunks)
        storage.create_exclusive("big.arrow", data)
        with pytest.raises(FileAlreadyExistsError):
            storage.create_exclusive("big.arrow", data[::-1])
    storage.clear_cache()
    assert storage.read("big.arrow") == data


def test_local_create_exclusive_leaves_no_temp_files(tmp_path: Any) -> None:
    storage = open_storage(str(tmp_path / "lake"))
    storage.create_exclusive("d/_00000.arrow", b"a")
    with pytest.raises(FileAlreadyExistsError):
        storage.create_exclusive("d/_00000.arrow", b"b")
    storage.write("d/_latest_hint.txt", b"0")
    storage.write("d/_latest_hint.txt", b"1")
    assert sorted(os.listdir(tmp_path / "lake" / "d")) == [
        "_00000.arrow",
        "_latest_hint.txt",
    ]
    # An in-flight temp file of another writer is never listed.
    (tmp_path / "lake" / "d" / ".tmp-inflight").write_bytes(b"partial")
    assert storage.list("d/") == ["d/_00000.arrow", "d/_latest_hint.txt"]


def test_s3_without_s3fs_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "s3fs", None)  # makes "import s3fs" fail
    with pytest.raises(NotSupportedError) as info:
        open_storage("s3://bucket/lake")
    assert "pip install trinity-dbapi[s3]" in str(info.value)


def test_importing_storage_does_not_import_backends() -> None:
    code = (
        "import sys, trinity_dbapi.storage; "
        "print(sorted(m for m in ('s3fs', 'fsspec', 'botocore') if m in sys.modules))"
    )
    repo = os.path.dirname(os.path.dirname(os.path.abspath(trinity_dbapi.__file__)))
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=repo,
    )
    assert out.stdout.strip() == "[]"


def test_create_unique_creates_once_and_counts(storage: Storage) -> None:
    """Uniquely named files (node files, definitions): created whole, never overwritten."""
    before = storage.stats.snapshot()
    storage.create_unique("0101/0000/1111/00000000-node-a.arrow", b"node bytes")
    assert storage.read("0101/0000/1111/00000000-node-a.arrow") == b"node bytes"
    used = storage.stats.since(before)
    assert (used.creates, used.bytes_written, used.reads) == (1, 10, 0)  # read from cache
    with pytest.raises(FileAlreadyExistsError) as info:
        storage.create_unique("0101/0000/1111/00000000-node-a.arrow", b"other")
    assert info.value.path == "0101/0000/1111/00000000-node-a.arrow"
    storage.clear_cache()
    assert storage.read("0101/0000/1111/00000000-node-a.arrow") == b"node bytes"
    assert storage.list("0101/") == ["0101/0000/1111/00000000-node-a.arrow"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_reads_writes_and_exits(storage: Storage) -> None:
    """A storage made before a fork works in the child, which then exits normally.

    fsspec's file systems are not fork-safe: the child makes its own from the
    same options. The child runs what the interpreter runs at exit (the
    finalizers of every file system it holds) before it ends: one of the
    parent's would wait forever on a loop with no thread in the child.
    """
    import time
    import weakref

    storage.create_exclusive("before", b"parent")
    assert storage.read("before") == b"parent"  # the parent's file system in use
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit code
        code = 1
        try:
            storage.clear_cache()
            ok = storage.read("before") == b"parent"
            storage.create_exclusive("from-child", b"child")
            weakref.finalize._exitfunc()  # type: ignore[attr-defined]
            code = 0 if ok else 2
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while (ended := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if ended[0] == 0:
        os.kill(child, 9)
        os.waitpid(child, 0)
        pytest.fail("the forked child never finished (a request or a finalizer waited forever)")
    assert os.waitstatus_to_exitcode(ended[1]) == 0
    if not storage.root_uri.startswith("memory://"):  # the child's memory is its own
        # The parent's pooled connections still answer: the child closed its
        # copies without unregistering them from the parent's event loop
        # (Azure's next read waited out a 60 s timeout when it did).
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(storage.read, "from-child").result(timeout=30) == b"child"
