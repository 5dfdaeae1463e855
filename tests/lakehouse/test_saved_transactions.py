"""Saved transactions: SAVE on one lakehouse handle, LOAD and COMMIT on another.

Every test runs on each backend. The saver's handle and the loader's are
separate opens (their own storage, cold caches), as two processes would be.
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.lakehouse.helpers import Backend, open_lake
from trinity_dbapi.errors import (
    CommitConflictError,
    NotSupportedError,
    SavedTransactionError,
    StorageError,
    TransactionClosedError,
)
from trinity_dbapi.format.definitions.transaction import running_root_path
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.handoff import load_transaction, save_transaction
from trinity_dbapi.lakehouse.saved_transactions import (
    committed_path,
    kept_alive,
    loaded_path,
    record_path,
)
from trinity_dbapi.lakehouse.transaction import IsolationLevel, RetryPolicy

RETRY = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0)


def _lake(backend: Backend, **fields: int) -> Lakehouse:
    uri, options = backend
    lake = Lakehouse.create(uri, None, storage_options=options, **fields)
    with lake.begin() as txn:
        txn.put("x", "1")
        txn.put("r/1", "a")
    return lake


def test_save_then_load_and_commit_elsewhere(backend: Backend) -> None:
    lake = _lake(backend)
    txn = lake.begin()
    assert txn.get("x") == "1"
    txn.put("y", "2")
    txn.delete("r/1")
    record = save_transaction(txn)
    assert record.id == txn.id and txn.is_saved and not txn.is_active
    assert record.beginning_version == 1
    assert record.running_root_node_file_path == running_root_path(txn.id)
    assert record.expire_at_millis == record.began_at_millis + 7 * 24 * 3600 * 1000
    assert record.read_keys == ("x",) and record.deleted_keys == ("r/1",)
    # Saving commits nothing of the transaction. The first save on a lakehouse
    # makes one version that changes no key: its definition requires the feature.
    reader = open_lake(backend)
    assert reader.latest_version() == 2
    assert reader.snapshot().changed_keys() == set()
    assert "saved_transactions" in reader.snapshot().definition.required_writer_features
    again = lake.begin()
    again.put("q", "1")
    save_transaction(again)
    assert open_lake(backend).latest_version() == 2  # once only
    # The saver can neither continue nor commit it.
    with pytest.raises(TransactionClosedError, match="was saved"):
        txn.commit()
    with pytest.raises(TransactionClosedError, match="LOAD TRANSACTION"):
        txn.put("z", "3")

    loader = load_transaction(open_lake(backend), record.id, retry=RETRY)
    assert loader.get("y") == "2" and loader.get("r/1") is None  # its staged state
    loader.put("z", "3")  # and it goes on
    committed = loader.commit()
    assert committed.version == 3
    assert committed.latest_txn == record.id  # the version names the saved transaction
    latest = open_lake(backend).snapshot()
    assert dict(latest.scan()) == {"x": "1", "y": "2", "z": "3"}
    storage = open_lake(backend).storage
    assert storage.read(committed_path(record.id)) == b"3"


def test_running_root_holds_the_transactions_state(backend: Backend) -> None:
    """The running root is a tree an upstream reader can walk: the state as of the save."""
    lake = _lake(backend)
    txn = lake.begin()
    txn.put("y", "2")
    record = save_transaction(txn)
    reader = open_lake(backend)
    root = reader.nodes.load(record.running_root_node_file_path)
    from trinity_dbapi.lakehouse.chain import Snapshot  # a pinned view of that root

    state = dict(Snapshot(-1, root, reader).scan())
    assert state == {"x": "1", "r/1": "a", "y": "2"}


def test_a_transaction_without_changes_runs_on_its_beginning_root(backend: Backend) -> None:
    lake = _lake(backend)
    txn = lake.begin()
    txn.get("x")
    record = save_transaction(txn)
    assert record.running_root_node_file_path == record.beginning_root_node_file_path
    loaded = load_transaction(open_lake(backend), record.id)
    assert loaded.commit().version == 1  # nothing to commit


@pytest.mark.parametrize("what", ["key", "range"])
def test_serializable_read_set_is_validated_by_the_loaders_commit(
    backend: Backend, what: str
) -> None:
    """A concurrent change to what the saver read fails the loader's commit."""
    lake = _lake(backend)
    txn = lake.begin(isolation=IsolationLevel.SERIALIZABLE)
    if what == "key":
        assert txn.get("x") == "1"
    else:
        assert list(txn.scan_prefix("r/")) == [("r/1", "a")]
    txn.put("y", "2")
    record = save_transaction(txn)
    with open_lake(backend).begin() as other:  # a concurrent writer
        other.put("x" if what == "key" else "r/2", "changed")
    loader = load_transaction(open_lake(backend), record.id, retry=RETRY)
    with pytest.raises(CommitConflictError, match=r"read it|range this transaction listed"):
        loader.commit()
    assert open_lake(backend).snapshot().get("y") is None  # nothing committed


def test_snapshot_isolation_saved_is_snapshot_isolation_loaded(backend: Backend) -> None:
    lake = _lake(backend)
    txn = lake.begin(isolation=IsolationLevel.SNAPSHOT)
    assert txn.get("x") == "1"
    txn.put("y", "2")
    record = save_transaction(txn)
    assert record.isolation_level == "SNAPSHOT"
    with open_lake(backend).begin() as other:
        other.put("x", "changed")
    loader = load_transaction(open_lake(backend), record.id, retry=RETRY)
    assert loader.isolation is IsolationLevel.SNAPSHOT
    assert loader.commit().version == 4  # rebased over the write it did not depend on
    assert open_lake(backend).snapshot().get("y") == "2"


def test_a_merge_is_saved_by_its_key_and_value(backend: Backend) -> None:
    """A merge (a function) cannot be saved: its key and value are; the loader merges again.

    Unchanged meanwhile, the key takes the saved value; changed, only a table
    merges (three-way, tests/sql/engine/test_saved_transactions.py): any
    other key conflicts.
    """
    lake = _lake(backend)
    for concurrent in (False, True):
        txn = lake.begin(isolation=IsolationLevel.SNAPSHOT)
        assert txn.merge("x", lambda v: (v or "") + "+saved") is not None
        record = save_transaction(txn)
        assert record.merged_keys == ("x",) and record.writes["x"].endswith("+saved")
        if concurrent:
            with open_lake(backend).begin() as other:
                other.put("x", "2")
            with pytest.raises(CommitConflictError, match=r"key 'x'.*do not merge"):
                load_transaction(open_lake(backend), record.id, retry=RETRY).commit()
        else:
            load_transaction(open_lake(backend), record.id, retry=RETRY).commit()
            assert open_lake(backend).snapshot().get("x") == "1+saved"


def test_a_definition_change_cannot_be_saved(backend: Backend) -> None:
    lake = _lake(backend)
    txn = lake.begin()
    txn.put("y", "2")
    txn.change_definition(lambda d: d.replace(properties={"k": "v"}))
    with pytest.raises(NotSupportedError, match="lakehouse definition"):
        save_transaction(txn)
    assert txn.is_active  # nothing was saved: it commits here as before
    assert txn.commit().version == 2
    assert open_lake(backend).storage.list("_transactions/") == []


def test_load_says_which_it_is(backend: Backend) -> None:
    lake = _lake(backend)
    txn = lake.begin()
    txn.put("y", "2")
    record = save_transaction(txn)
    first = load_transaction(open_lake(backend), record.id)
    with pytest.raises(SavedTransactionError, match="another session loaded it") as loaded:
        load_transaction(open_lake(backend), record.id)
    assert loaded.value.state == "loaded"
    first.commit()
    with pytest.raises(SavedTransactionError, match="committed already") as committed:
        load_transaction(open_lake(backend), record.id)
    assert committed.value.state == "committed"
    for unknown in ("not-an-id", "12345678-1234-4234-8234-123456789012"):
        with pytest.raises(SavedTransactionError) as raised:
            load_transaction(open_lake(backend), unknown)
        assert raised.value.state == "unknown" and raised.value.txn_id == unknown


def test_expired_transaction_cannot_be_loaded_or_committed(backend: Backend) -> None:
    # Long enough for a loaded machine to load in time; the wait is until
    # the expiry itself, not a fixed guess.
    lake = _lake(backend, txn_ttl_millis=2000)
    txn = lake.begin()
    txn.put("y", "2")
    record = save_transaction(txn)
    assert record.expire_at_millis - record.began_at_millis == 2000
    loaded = load_transaction(open_lake(backend), record.id)  # in time
    other = lake.begin()
    other.put("z", "3")
    late = save_transaction(other)
    expiry = max(record.expire_at_millis, late.expire_at_millis)
    time.sleep(max(0.0, expiry / 1000 - time.time()) + 0.05)
    with pytest.raises(SavedTransactionError, match="expired") as expired:
        load_transaction(open_lake(backend), late.id)
    assert expired.value.state == "expired"
    with pytest.raises(SavedTransactionError, match="expired"):
        loaded.commit()  # loaded in time, committed too late
    assert open_lake(backend).snapshot().get("y") is None


def test_a_lost_claim_race_leaves_one_loader(backend: Backend) -> None:
    """The claim is an exclusive create: of two loaders, exactly one continues it."""
    lake = _lake(backend)
    txn = lake.begin()
    txn.put("y", "2")
    record = save_transaction(txn)
    storage = open_lake(backend).storage
    storage.create_exclusive(loaded_path(record.id), b"0")  # another loader won just now
    with pytest.raises(SavedTransactionError) as raised:
        load_transaction(open_lake(backend), record.id)
    assert raised.value.state == "loaded"


def test_expiration_and_gc_keep_a_saved_transaction_until_it_expires(backend: Backend) -> None:
    ttl = 60_000
    lake = _lake(backend, txn_ttl_millis=ttl, minimum_versions_to_keep=1)
    txn = lake.begin()
    txn.put("y", "2")
    record = save_transaction(txn)
    for i in range(3):  # main moves on
        with lake.begin() as later:
            later.put(f"w{i}", "v")
    maintenance = open_lake(backend).maintenance
    now = time.time() * 1000 + 1_000
    result = maintenance.expire_versions(older_than=now, now=now)
    assert 1 not in result.expired and {1, 2, 3, 4} <= set(result.retained)
    assert 0 in result.expired  # older than its beginning version: free to go
    garbage = maintenance.collect_garbage(grace_period_millis=0, now=now)
    own = {record_path(record.id), running_root_path(record.id)}
    assert not own & set(garbage.deleted)
    reader = open_lake(backend)
    assert kept_alive(reader, int(now)).running_roots == [running_root_path(record.id)]
    # It still loads and commits after both.
    assert load_transaction(reader, record.id).commit().get("y") == "2"

    # Once expired it keeps nothing, and garbage collection takes its files.
    after = record.expire_at_millis + 1
    assert kept_alive(open_lake(backend), after).files == set()
    gone = open_lake(backend).maintenance.collect_garbage(grace_period_millis=0, now=after)
    assert {record_path(record.id), running_root_path(record.id), loaded_path(record.id)} <= set(
        gone.deleted
    )
    assert open_lake(backend).storage.list("_transactions/") == []
    assert open_lake(backend).snapshot().get("y") == "2"  # what it committed stays


def test_expired_uncommitted_transaction_is_collected_and_only_it(backend: Backend) -> None:
    lake = _lake(backend, txn_ttl_millis=60_000)
    old = lake.begin()
    old.began_at_millis -= 30_000  # it began earlier: it expires 30 s before the other
    old.put("y", "2")
    expired = save_transaction(old)
    young_txn = lake.begin()
    young_txn.put("z", "3")
    young = save_transaction(young_txn)
    now = expired.expire_at_millis + 1
    assert now < young.expire_at_millis
    kept = kept_alive(open_lake(backend), now)
    assert kept.files == {record_path(young.id), running_root_path(young.id)}
    assert kept.oldest_version == young.beginning_version
    result = open_lake(backend).maintenance.collect_garbage(grace_period_millis=0, now=now)
    assert {record_path(expired.id), running_root_path(expired.id)} <= set(result.deleted)
    assert not {record_path(young.id), running_root_path(young.id)} & set(result.deleted)
    assert load_transaction(open_lake(backend), young.id).commit().get("z") == "3"


def test_a_save_that_fails_before_its_record_leaves_nothing_loadable(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record is created last: a save cut short before it saved nothing."""
    lake = _lake(backend)
    txn = lake.begin()
    txn.put("y", "2")
    storage = lake.storage
    create = storage.create_exclusive

    def fail_on_the_record(path: str, data: bytes, *args: object, **kwargs: object) -> None:
        if path == record_path(txn.id):
            raise StorageError("the store went away", path=path)
        create(path, data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(storage, "create_exclusive", fail_on_the_record)
    with pytest.raises(StorageError):
        save_transaction(txn)
    monkeypatch.undo()
    assert txn.is_active  # not saved: it still commits here
    with pytest.raises(SavedTransactionError) as unknown:
        load_transaction(open_lake(backend), txn.id)
    assert unknown.value.state == "unknown"
    # What it wrote is garbage: the running root goes once past the grace period.
    reader = open_lake(backend)
    assert reader.storage.exists(running_root_path(txn.id))
    later = time.time() * 1000 + 2 * 3600 * 1000
    gone = reader.maintenance.collect_garbage(now=later)
    assert running_root_path(txn.id) in gone.deleted
    assert txn.commit().get("y") == "2"


def test_of_loaders_racing_exactly_one_continues(backend: Backend) -> None:
    lake = _lake(backend)
    txn = lake.begin()
    txn.put("y", "2")
    record = save_transaction(txn)
    outcomes: list[str] = []

    def load() -> None:
        try:
            load_transaction(open_lake(backend), record.id)
            outcomes.append("won")
        except SavedTransactionError as exc:
            outcomes.append(exc.state)

    threads = [threading.Thread(target=load) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["loaded"] * 5 + ["won"]


def test_staged_definition_files_are_written_by_the_save_and_reused_by_the_commit(
    backend: Backend,
) -> None:
    lake = _lake(backend)
    txn = lake.begin()
    txn.create_namespace("sales")
    record = save_transaction(txn)
    assert len(record.staged_files) == 1
    (staged,) = record.staged_files
    reader = open_lake(backend)
    assert reader.storage.exists(staged)  # durable before the record existed
    loader = load_transaction(reader, record.id)
    assert loader.list_namespaces() == ["sales"]
    committed = loader.commit()
    assert open_lake(backend).snapshot().get(next(iter(record.writes))) == staged
    assert committed.version == 3  # 2 made the lakehouse require the feature
