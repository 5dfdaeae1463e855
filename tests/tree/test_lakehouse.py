"""Creating, opening and committing a lakehouse, on every storage backend."""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pytest

from tests.tree.helpers import small_definition
from trinity_dbapi.errors import (
    CommitConflictError,
    DamagedVersionError,
    LakehouseExistsError,
    LakehouseNotFoundError,
    NoSuchVersionError,
    ProgrammingError,
    UnsupportedFormatVersionError,
)
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.paths import LATEST_HINT_FILE, root_node_file_name
from trinity_dbapi.format.proto import trinity_pb2
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.storage import open_storage
from trinity_dbapi.tree import btree

Backend = tuple[str, dict[str, Any]]


def _open(backend: Backend) -> Lakehouse:
    uri, options = backend
    return Lakehouse.open(uri, storage_options=options)


def test_create_then_open(backend: Backend) -> None:
    uri, options = backend
    created = Lakehouse.create(uri, storage_options=options, name="sales", order=16)
    assert created.latest_version() == 0
    opened = _open(backend)
    assert opened.definition == created.definition
    assert opened.definition.name == "sales" and opened.definition.order == 16
    snap = opened.snapshot()
    assert (snap.version, list(snap.scan()), snap.previous_root) == (0, [], None)
    assert opened.storage.read(LATEST_HINT_FILE) == b"0000000000"  # fixed width


def test_create_twice_and_open_missing(backend: Backend) -> None:
    uri, options = backend
    with pytest.raises(LakehouseNotFoundError, match="no Trinity Lakehouse"):
        Lakehouse.open(uri, storage_options=options)
    assert not Lakehouse.exists(uri, storage_options=options)
    Lakehouse.create(uri, storage_options=options)
    assert Lakehouse.exists(uri, storage_options=options)
    with pytest.raises(LakehouseExistsError):
        Lakehouse.create(uri, storage_options=options)


def test_commits_persist_and_versions_chain(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(4, 2), storage_options=options)
    snap = lake.snapshot()
    model: dict[str, str] = {}
    for i in range(30):
        changes: dict[str, str | None] = {f"key{i:03d}": f"v{i}", f"key{i // 2:03d}": None}
        snap = lake.commit(snap, changes)
        for k, v in changes.items():
            if v is None:
                model.pop(k, None)
            else:
                model[k] = v
    reopened = _open(backend)
    latest = reopened.snapshot()
    assert latest.version == 30
    assert dict(latest.scan()) == model
    assert latest.depth() >= 3  # order 4 with a dozen keys needs several levels
    btree.check_invariants(reopened.nodes, latest.root, reopened.tree_config, latest.latest_txn)
    assert latest.previous_root == root_node_file_name(29)
    # every old version stays readable: copy-on-write never rewrote a file
    assert reopened.snapshot(10).get("key009") == "v9"
    assert reopened.snapshot(0).get("key009") is None
    with pytest.raises(NoSuchVersionError, match="version 31 does not exist"):
        reopened.snapshot(31)


def test_root_node_system_rows(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    snap = lake.commit(lake.snapshot(), {"a": "1"})
    data = lake.storage.read("_10000000000000000000000000000000.arrow")
    table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    pairs = zip(table.column("key").to_pylist(), table.column("value").to_pylist())
    rows = dict(itertools.takewhile(lambda kv: kv != (None, None), pairs))
    assert set(rows) == {"created_at_millis", "lakehouse_def", "previous_root", "txn_id", "n_keys"}
    assert rows["txn_id"] == snap.latest_txn and len(rows["txn_id"]) == 36
    assert rows["previous_root"] == "_00000000000000000000000000000000.arrow"
    assert rows["lakehouse_def"].startswith("_lakehouse_def_")
    assert rows["n_keys"] == "0"  # the key is still a buffered message
    assert int(rows["created_at_millis"]) > 1_600_000_000_000


@pytest.mark.parametrize(
    "hint", [None, b"", b"garbage", b"0", b"2", b"-1", b"\xff\xfe", b"4294967296"]
)
def test_a_bad_hint_never_hides_a_version(backend: Backend, hint: bytes | None) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    snap = lake.snapshot()
    for i in range(5):
        snap = lake.commit(snap, {f"k{i}": "v"})
    if hint is None:
        lake.storage.delete(LATEST_HINT_FILE)
    else:
        lake.storage.write(LATEST_HINT_FILE, hint)
    reopened = _open(backend)
    assert reopened.latest_version() == 5
    assert reopened.snapshot().get("k4") == "v"


def test_a_hint_above_every_root_is_a_lost_root(backend: Backend) -> None:
    # The hint is written after a root is created, and only expiration (never
    # of the latest) deletes roots: a hint above every root records a committed
    # version whose root is gone. Opening the version below would let the next
    # commit silently re-use its number, so it is damage (docs/recovery.md).
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    snap = lake.snapshot()
    for i in range(5):
        snap = lake.commit(snap, {f"k{i}": "v"})
    lake.storage.write(LATEST_HINT_FILE, b"99")
    with pytest.raises(DamagedVersionError, match=r"hint .* says version 99") as info:
        _open(backend)
    assert info.value.path == root_node_file_name(6)
    assert info.value.intact == 5


def test_losing_the_root_create_is_a_conflict(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    base = lake.snapshot()
    lake.commit(base, {"a": "winner"})
    with pytest.raises(
        CommitConflictError, match=r"version 1 .* committed by another writer"
    ) as info:
        lake.commit(base, {"a": "loser"})
    assert info.value.version == 1
    assert _open(backend).snapshot().get("a") == "winner"


def test_unchanged_subtrees_are_shared(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(4, 3), storage_options=options)
    snap = lake.snapshot()
    for i in range(0, 60, 3):
        snap = lake.commit(snap, {f"k{i:03d}": "a", f"k{i + 1:03d}": "b", f"k{i + 2:03d}": "c"})
    snap = lake.commit(snap, {"k000": "x"})  # leaves the root buffer with room
    assert snap.root.children is not None and len(snap.root.buffer) <= 3
    before = lake.storage.stats.snapshot()
    after = lake.commit(snap, {"k999": "new"})
    used = lake.storage.stats.since(before)
    if len(after.root.buffer) <= 3:  # no flush was needed: only the root is new
        assert used.creates == 1
        assert after.root.children == snap.root.children
    shared = set(after.root.children or ()) & set(snap.root.children or ())
    assert shared, "a one-key commit must share unchanged children"


def test_latest_transaction_stays_in_the_root_even_past_capacity(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(3, 1), storage_options=options)
    batch = {f"k{i:02d}": str(i) for i in range(20)}
    snap = lake.commit(lake.snapshot(), batch)
    assert {m.key for m in snap.latest_messages()} == set(batch)
    snap = lake.commit(snap, {"z": "1"})
    # the previous transaction's messages were flushed; only the new one stays
    assert [(m.key, m.value) for m in snap.root.buffer] == [("z", "1")]
    assert dict(_open(backend).snapshot().scan()) == {**batch, "z": "1"}


def test_unsupported_major_version_is_refused(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    def_path = lake.snapshot().definition_path
    proto = trinity_pb2.LakehouseDef()
    proto.ParseFromString(lake.storage.read(def_path))
    proto.major_version = 7
    storage = open_storage(uri, storage_options=options)
    storage.delete(def_path)
    storage.create_exclusive(def_path, proto.SerializeToString())
    with pytest.raises(UnsupportedFormatVersionError, match="major version 7"):
        _open(backend)


def test_bad_keys_and_values_are_programming_errors(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    with pytest.raises(ProgrammingError, match="non-empty strings"):
        lake.commit(lake.snapshot(), {"": "x"})
    with pytest.raises(ProgrammingError, match="must be a string or None"):
        lake.commit(lake.snapshot(), {"k": 3})  # type: ignore[dict-item]
    assert lake.latest_version() == 0


def test_definition_too_small_for_the_order_is_refused() -> None:
    with pytest.raises(ProgrammingError, match="node_file_max_size_bytes"):
        LakehouseDefinition(name="x", order=128, node_file_max_size_bytes=1000)


def test_a_lost_create_response_is_not_a_conflict(backend: Backend) -> None:
    """An object store may lose the reply to a create that won; the retry then
    sees its own file. The commit must count as done, not as a conflict."""
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    storage = lake.storage
    real_create = storage._create_exclusive

    def create_then_lose_reply(path: str, data: bytes) -> None:
        real_create(path, data)
        if path.startswith("_1"):  # root version 1: the "retry" finds the file
            real_create(path, data)

    storage._create_exclusive = create_then_lose_reply  # type: ignore[method-assign]
    snap = lake.commit(lake.snapshot(), {"a": "1"})
    assert snap.version == 1
    assert _open(backend).snapshot().get("a") == "1"


def test_progress_is_reported_for_written_nodes(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(4, 2), storage_options=options)
    snap = lake.commit(lake.snapshot(), {f"k{i:03d}": "v" for i in range(200)})
    seen: list[int] = []
    before = lake.storage.stats.snapshot()
    lake.commit(snap, {"x": "1"}, progress=seen.append)
    created = lake.storage.stats.since(before).creates
    assert seen == list(range(1, created))  # every node file but the root, in order
    assert len(seen) > 10


def test_an_empty_commit_makes_no_version(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    snap = lake.commit(lake.snapshot(), {"a": "1"})
    before = lake.storage.stats.snapshot()
    assert lake.commit(snap, {}) is snap
    assert lake.storage.stats.since(before).creates == 0
    assert lake.latest_version() == 1


def test_writer_buffer_limit_is_below_the_format_bound(tmp_path: Any) -> None:
    formula = btree.TreeConfig.from_sizes(
        order=128,
        namespace_name_max_size_bytes=100,
        table_name_max_size_bytes=100,
        file_name_max_size_bytes=200,
        node_file_max_size_bytes=1048576,
        max_buffer_messages=10**9,
    )
    assert formula.buffer_capacity == 2265  # the seed's size formula
    lake = Lakehouse.create(str(tmp_path / "lake"))
    assert lake.tree_config.buffer_capacity == btree.DEFAULT_MAX_BUFFER_MESSAGES == 256


def test_a_fuller_foreign_root_buffer_is_flushed_by_our_next_commit(tmp_path: Any) -> None:
    """Another writer may fill buffers up to the format's bound; we read and commit on it."""
    uri = str(tmp_path / "lake")
    foreign = Lakehouse.create(uri)
    # A writer that fills buffers.
    foreign.install(foreign.definition, shaped=(btree.TreeConfig(128, 2265), foreign.nodes))
    expected = {}
    for batch in range(12):
        changes = {f"k{batch:02d}{i:03d}": f"v{batch}.{i}" for i in range(50)}
        foreign.commit(foreign.snapshot(), changes)
        expected.update(changes)
    assert len(foreign.snapshot().root.buffer) > 256  # nothing flushed yet

    ours = Lakehouse.open(uri)
    snap = ours.commit(ours.snapshot(), {"zz": "last"})
    expected["zz"] = "last"
    assert len(snap.root.buffer) <= 256
    btree.check_invariants(ours.nodes, snap.root, ours.tree_config, snap.latest_txn)
    reopened = Lakehouse.open(uri).snapshot()
    assert dict(reopened.scan()) == expected
