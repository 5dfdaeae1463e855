"""Transaction behaviour on every storage backend.

Covers read-your-own-writes, invisibility before commit, abort, the context
manager, read-only transactions, closed transactions, the write-write rule of
SNAPSHOT ISOLATION with rebase, the read and range rules of SERIALIZABLE,
retry exhaustion, and every namespace and table operation, each checked after
commit and after reopening the lakehouse.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.lakehouse.helpers import Backend, full_state, open_lake, table_def
from trinity_dbapi.errors import (
    CommitConflictError,
    Error,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    ObjectExistsError,
    ReadOnlyError,
    RetriesExhaustedError,
    TransactionClosedError,
)
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.transaction import IsolationLevel, RetryPolicy, Transaction
from trinity_dbapi.storage.local import LocalStorage

FAST_RETRY = RetryPolicy(max_attempts=8, base_delay=0.0, max_delay=0.0)


def _create(backend: Backend, initial: dict[str, str] | None = None) -> Lakehouse:
    """A new lakehouse at ``backend``; ``initial`` is committed as version 1."""
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    if initial:
        with lake.begin() as txn:
            for key, value in initial.items():
                txn.put(key, value)
        assert lake.latest_version() == 1
    return lake


def _commit_puts(lake: Lakehouse, **values: str) -> int:
    """Commit ``values`` in a transaction of its own; return the new version."""
    txn = lake.begin()
    for key, value in values.items():
        txn.put(key, value)
    return txn.commit().version


# -- visibility ----------------------------------------------------------------------


def test_reads_see_own_writes(backend: Backend) -> None:
    """get, scan and scan_prefix merge the transaction's staged puts and deletes."""
    lake = _create(backend, {"a": "1", "b": "2", "c": "3", "p/1": "x", "p/2": "y", "q/1": "z"})
    txn = lake.begin()
    txn.put("b", "20")
    txn.delete("c")
    txn.put("d", "4")
    txn.put("p/3", "w")
    txn.delete("p/1")
    txn.delete("zz")  # deleting a missing key is harmless
    assert [txn.get(k) for k in ("a", "b", "c", "d", "zz")] == ["1", "20", None, "4", None]
    assert list(txn.scan("a", "d")) == [("a", "1"), ("b", "20")]
    assert list(txn.scan("b", "e")) == [("b", "20"), ("d", "4")]
    assert list(txn.scan_prefix("p/")) == [("p/2", "y"), ("p/3", "w")]
    assert dict(txn.scan()) == {"a": "1", "b": "20", "d": "4", "p/2": "y", "p/3": "w", "q/1": "z"}
    # a later put overrides an earlier delete of the same key, and vice versa
    txn.put("c", "30")
    txn.delete("d")
    assert (txn.get("c"), txn.get("d")) == ("30", None)
    snap = txn.commit()
    assert snap.version == 2
    expected = {"a": "1", "b": "20", "c": "30", "p/2": "y", "p/3": "w", "q/1": "z"}
    assert full_state(open_lake(backend).snapshot()) == expected


def test_nothing_visible_before_commit(backend: Backend) -> None:
    """Staged writes are invisible to other transactions and to a fresh open until commit."""
    lake = _create(backend, {"a": "1"})
    writer = lake.begin()
    writer.put("a", "2")
    writer.put("b", "new")
    writer.create_namespace("ns1")
    before = lake.begin()
    assert (before.get("a"), before.get("b"), before.list_namespaces()) == ("1", None, [])
    fresh = open_lake(backend)
    assert fresh.latest_version() == 1
    assert full_state(fresh.snapshot()) == {"a": "1"}
    assert fresh.begin().list_namespaces() == []

    assert writer.commit().version == 2
    # a transaction begun earlier keeps reading its pinned version
    assert (before.get("a"), before.get("b")) == ("1", None)
    after = open_lake(backend).begin()
    assert (after.get("a"), after.get("b"), after.list_namespaces()) == ("2", "new", ["ns1"])


def test_abort_discards(backend: Backend) -> None:
    """An aborted transaction writes nothing, and cannot be used or committed afterwards."""
    lake = _create(backend, {"a": "1"})
    before = lake.storage.stats.snapshot()
    txn = lake.begin()
    txn.put("a", "2")
    txn.create_namespace("ns1")
    txn.abort()
    used = lake.storage.stats.since(before)
    assert (used.creates, used.writes, used.deletes) == (0, 0, 0)
    assert not txn.is_active
    txn.abort()  # aborting again is a no-op
    with pytest.raises(TransactionClosedError):
        txn.commit()
    reopened = open_lake(backend)
    assert reopened.latest_version() == 1
    assert full_state(reopened.snapshot()) == {"a": "1"}


def test_context_manager_commits_on_success_and_aborts_on_error(backend: Backend) -> None:
    """``with lake.begin()`` commits when the block succeeds and aborts when it raises."""
    lake = _create(backend)
    with lake.begin() as txn:
        txn.put("a", "1")
    assert txn.committed is not None and txn.committed.version == 1
    with pytest.raises(ValueError, match="boom"), lake.begin() as failing:
        failing.put("a", "2")
        failing.put("b", "2")
        raise ValueError("boom")
    assert not failing.is_active and failing.committed is None
    with pytest.raises(TransactionClosedError):
        failing.get("a")
    # explicitly committed inside the block: the exit does nothing more
    with lake.begin() as explicit:
        explicit.put("c", "3")
        assert explicit.commit().version == 2
    reopened = open_lake(backend)
    assert reopened.latest_version() == 2
    assert full_state(reopened.snapshot()) == {"a": "1", "c": "3"}


def test_read_only_refuses_writes_and_writes_nothing(backend: Backend) -> None:
    """A read-only transaction reads, refuses every write with ReadOnlyError, commits no file."""
    lake = _create(backend, {"a": "1"})
    with lake.begin() as setup:
        setup.create_namespace("ns1")
        setup.create_table("ns1", table_def("t1"))
    before = lake.storage.stats.snapshot()
    txn = lake.begin(read_only=True)
    assert txn.get("a") == "1"
    assert txn.list_tables("ns1") == ["t1"]
    refused = [
        lambda: txn.put("a", "2"),
        lambda: txn.delete("a"),
        lambda: txn.create_namespace("ns2"),
        lambda: txn.alter_namespace("ns1", set_properties={"k": "v"}),
        lambda: txn.drop_namespace("ns1", cascade=True),
        lambda: txn.create_table("ns1", table_def("t2")),
        lambda: txn.replace_table("ns1", table_def("t1", "x")),
        lambda: txn.rename_table("ns1", "t1", "ns1", "t9"),
        lambda: txn.drop_table("ns1", "t1"),
    ]
    for attempt in refused:
        with pytest.raises(ReadOnlyError, match="read-only"):
            attempt()
    assert txn.is_active  # refusing a write does not end the transaction
    snap = txn.commit()
    used = lake.storage.stats.since(before)
    assert (used.creates, used.writes, used.deletes) == (0, 0, 0)
    assert snap.version == 2 and lake.latest_version() == 2
    assert full_state(open_lake(backend).snapshot(2)) == full_state(lake.snapshot(2))


def test_reading_transaction_commits_without_new_version(backend: Backend) -> None:
    """A writable transaction that only read commits without creating a version."""
    lake = _create(backend, {"a": "1", "b": "2"})
    before = lake.storage.stats.snapshot()
    txn = lake.begin()
    assert txn.get("a") == "1" and list(txn.scan()) == [("a", "1"), ("b", "2")]
    assert txn.commit().version == 1
    used = lake.storage.stats.since(before)
    assert (used.creates, used.writes) == (0, 0)
    assert open_lake(backend).latest_version() == 1


def test_closed_transaction_raises(backend: Backend) -> None:
    """Every operation on a committed or failed transaction raises TransactionClosedError."""
    lake = _create(backend, {"a": "1"})
    committed = lake.begin()
    committed.put("a", "2")
    committed.commit()
    loser = lake.begin(version=1, isolation="SNAPSHOT")
    loser.put("a", "3")
    with pytest.raises(CommitConflictError):
        loser.commit()
    for txn in (committed, loser):
        for use in (
            lambda t=txn: t.get("a"),
            lambda t=txn: t.put("a", "4"),
            lambda t=txn: t.delete("a"),
            lambda t=txn: list(t.scan()),
            lambda t=txn: t.list_namespaces(),
            lambda t=txn: t.commit(),
        ):
            with pytest.raises(TransactionClosedError, match="already"):
                use()
    assert open_lake(backend).snapshot().get("a") == "2"


# -- SNAPSHOT ISOLATION ------------------------------------------------------------


def test_snapshot_write_write_conflict_names_key_and_version(backend: Backend) -> None:
    """Two SNAPSHOT transactions from one version writing the same key: the second fails."""
    lake = _create(backend, {"k": "0"})
    t1 = lake.begin(isolation="SNAPSHOT", retry=FAST_RETRY)
    t2 = lake.begin(isolation=IsolationLevel.SNAPSHOT, retry=FAST_RETRY)
    t1.put("k", "t1")
    t2.put("k", "t2")
    t2.put("other", "t2")
    assert t1.commit().version == 2
    with pytest.raises(CommitConflictError) as info:
        t2.commit()
    assert (info.value.key, info.value.version) == ("k", 2)
    assert "'k'" in str(info.value) and "version 2" in str(info.value)
    assert isinstance(info.value, Error)
    reopened = open_lake(backend)
    assert reopened.latest_version() == 2
    assert full_state(reopened.snapshot()) == {"k": "t1"}


def test_snapshot_disjoint_writes_rebase(backend: Backend) -> None:
    """SNAPSHOT transactions writing different keys both commit; the second is rebased."""
    lake = _create(backend, {"x": "0", "y": "0"})
    t1 = lake.begin(isolation="SNAPSHOT", retry=FAST_RETRY)
    t2 = lake.begin(isolation="SNAPSHOT", retry=FAST_RETRY)
    # reading the other's key is allowed under SNAPSHOT ISOLATION
    assert t1.get("y") == "0" and t2.get("x") == "0"
    t1.put("x", "1")
    t2.put("y", "2")
    assert t1.commit().version == 2 and t1.attempts == 1
    snap = t2.commit()
    assert snap.version == 3 and t2.attempts == 2
    final = full_state(open_lake(backend).snapshot())
    assert final == {"x": "1", "y": "2"}


# -- SERIALIZABLE --------------------------------------------------------------------


@pytest.mark.parametrize("present", [True, False], ids=["read-present", "read-absent"])
def test_serializable_read_write_conflict(backend: Backend, present: bool) -> None:
    """SERIALIZABLE fails when another commit changed a key it read (found or absent)."""
    lake = _create(backend, {"x": "0"} if present else {"other": "0"})
    reader = lake.begin(isolation="SERIALIZABLE", retry=FAST_RETRY)
    snapshot_reader = lake.begin(isolation="SNAPSHOT", retry=FAST_RETRY)
    for txn in (reader, snapshot_reader):
        assert txn.get("x") == ("0" if present else None)
        txn.put("y", txn.isolation.value)
    _commit_puts(lake, x="1")
    with pytest.raises(CommitConflictError) as info:
        reader.commit()
    assert (info.value.key, info.value.version) == ("x", 2)
    assert "read it" in str(info.value)
    # the same interleaving is fine under SNAPSHOT ISOLATION
    assert snapshot_reader.commit().version == 3
    assert open_lake(backend).snapshot().get("y") == IsolationLevel.SNAPSHOT.value


def test_serializable_range_conflict_on_listed_namespace(backend: Backend) -> None:
    """list_tables('ns1') conflicts with a concurrent create_table in ns1, not in ns2."""
    lake = _create(backend)
    with lake.begin() as setup:
        for ns in ("ns1", "ns2", "ns3"):
            setup.create_namespace(ns)
        setup.create_table("ns1", table_def("t1"))
    base = lake.latest_version()

    lister = lake.begin(retry=FAST_RETRY)
    assert lister.list_tables("ns1") == ["t1"]
    lister.create_table("ns3", table_def("n1"))
    with lake.begin() as other:
        other.create_table("ns2", table_def("t2"))  # outside the listed range
    assert lister.commit().version == base + 2 and lister.attempts == 2

    lister = lake.begin(retry=FAST_RETRY)
    assert lister.list_tables("ns1") == ["t1"]
    lister.create_table("ns3", table_def("n2"))
    with lake.begin() as other:
        other.create_table("ns1", table_def("t"))  # a phantom in the listed range
    with pytest.raises(CommitConflictError) as info:
        lister.commit()
    assert info.value.version == base + 3
    message = str(info.value)
    assert "table 'ns1.t'" in message and f"version {base + 3}" in message
    assert "range" in message
    final = open_lake(backend).begin()
    assert final.list_tables("ns1") == ["t", "t1"]
    assert final.list_tables("ns3") == ["n1"]


def test_retries_exhausted_after_lost_race(backend: Backend) -> None:
    """With max_attempts=1 a lost race without conflict raises RetriesExhaustedError."""
    lake = _create(backend, {"a": "0"})
    txn = lake.begin(retry=RetryPolicy(max_attempts=1))
    txn.put("b", "1")
    _commit_puts(lake, a="1")
    with pytest.raises(RetriesExhaustedError) as info:
        txn.commit()
    assert info.value.attempts == 1 and txn.attempts == 1
    assert isinstance(info.value, Error) and not txn.is_active
    reopened = open_lake(backend)
    assert reopened.latest_version() == 2
    assert full_state(reopened.snapshot()) == {"a": "1"}


def test_retries_exhausted_names_the_version_it_tried(backend: Backend) -> None:
    """RetriesExhaustedError reports the base and the version of the last real attempt."""
    lake = _create(backend, {"a": "0"})
    txn = lake.begin(retry=RetryPolicy(max_attempts=1))
    txn.put("b", "1")
    _commit_puts(lake, a="1")  # takes version 2, the one txn will try
    with pytest.raises(RetriesExhaustedError) as info:
        txn.commit()
    assert info.value.version == 1  # the attempt was based on version 1 ...
    assert "last tried version 2" in str(info.value)  # ... and tried to create version 2


# -- objects -------------------------------------------------------------------------


def _reader(backend: Backend) -> Transaction:
    return open_lake(backend).begin(read_only=True)


def test_namespace_operations(backend: Backend) -> None:
    """create/list/load/alter/drop namespace, their flags and errors, checked after reopen."""
    lake = _create(backend)
    with lake.begin() as txn:
        assert txn.create_namespace("ns1", {"owner": "ann", "tier": "gold"}) is True
        assert txn.create_namespace("ns2") is True
        assert txn.list_namespaces() == ["ns1", "ns2"]  # visible inside the transaction
        with pytest.raises(ObjectExistsError, match="ns1"):
            txn.create_namespace("ns1")
        assert txn.create_namespace("ns1", {"owner": "bob"}, if_not_exists=True) is False
    reader = _reader(backend)
    assert reader.list_namespaces() == ["ns1", "ns2"]
    assert dict(reader.load_namespace("ns1").properties) == {"owner": "ann", "tier": "gold"}
    assert dict(reader.load_namespace("ns2").properties) == {}
    assert reader.namespace_exists("ns1") and not reader.namespace_exists("nsx")
    with pytest.raises(NoSuchNamespaceError, match="nsx"):
        reader.load_namespace("nsx")

    with lake.begin() as txn:
        altered = txn.alter_namespace(
            "ns1", set_properties={"tier": "bronze", "x": "1"}, unset_properties=["owner"]
        )
        assert dict(altered.properties) == {"tier": "bronze", "x": "1"}
        with pytest.raises(NoSuchNamespaceError):
            txn.alter_namespace("nsx", set_properties={"a": "b"})
    assert dict(_reader(backend).load_namespace("ns1").properties) == {"tier": "bronze", "x": "1"}

    with lake.begin() as txn:
        txn.create_table("ns1", table_def("t1"))
        txn.create_table("ns1", table_def("t2"))
    with lake.begin() as txn:
        with pytest.raises(NamespaceNotEmptyError) as info:
            txn.drop_namespace("ns1")
        assert info.value.tables == 2
        with pytest.raises(NoSuchNamespaceError):
            txn.drop_namespace("nsx")
        assert txn.drop_namespace("nsx", if_exists=True) is False
        assert txn.drop_namespace("ns2") is True
    reader = _reader(backend)
    assert reader.list_namespaces() == ["ns1"] and reader.list_tables("ns1") == ["t1", "t2"]

    with lake.begin() as txn:
        assert txn.drop_namespace("ns1", cascade=True) is True
        assert txn.list_namespaces() == []
    reader = _reader(backend)
    assert reader.list_namespaces() == []
    assert list(reader.scan()) == []  # the cascade removed the table keys too
    with pytest.raises(NoSuchTableError):
        reader.load_table("ns1", "t1")
    with pytest.raises(NoSuchNamespaceError):
        reader.list_tables("ns1")


def test_table_operations(backend: Backend) -> None:
    """create/list/load/replace/rename/drop table, their flags and errors, after reopen."""
    lake = _create(backend)
    t1, t2 = table_def("t1"), table_def("t2", "a")
    with lake.begin() as txn:
        with pytest.raises(NoSuchNamespaceError, match="ns1"):
            txn.create_table("ns1", t1)
        txn.create_namespace("ns1")
        txn.create_namespace("ns2")
        assert txn.create_table("ns1", t1) is True
        assert txn.create_table("ns1", t2) is True
        assert txn.list_tables("ns1") == ["t1", "t2"]
        with pytest.raises(ObjectExistsError, match=re.escape("ns1.t1")):
            txn.create_table("ns1", t1)
        assert txn.create_table("ns1", table_def("t1", "zzz"), if_not_exists=True) is False
    reader = _reader(backend)
    assert reader.list_tables("ns1") == ["t1", "t2"] and reader.list_tables("ns2") == []
    assert reader.load_table("ns1", "t1") == t1 and reader.load_table("ns1", "t2") == t2
    assert reader.table_exists("ns1", "t1") and not reader.table_exists("ns2", "t1")
    with pytest.raises(NoSuchTableError, match=re.escape("ns2.t1")):
        reader.load_table("ns2", "t1")
    with pytest.raises(NoSuchNamespaceError):
        reader.list_tables("nsx")

    wider = table_def("t1", "b", "c")
    with lake.begin() as txn:
        txn.replace_table("ns1", wider)
        with pytest.raises(NoSuchTableError):
            txn.replace_table("ns2", table_def("t9"))
    assert _reader(backend).load_table("ns1", "t1") == wider

    with lake.begin() as txn:
        renamed = txn.rename_table("ns1", "t1", "ns2", "t3")
        assert renamed == wider.replace(name="t3")
        with pytest.raises(ObjectExistsError):
            txn.rename_table("ns1", "t2", "ns2", "t3")
        with pytest.raises(NoSuchNamespaceError):
            txn.rename_table("ns1", "t2", "nsx", "t2")
        with pytest.raises(NoSuchTableError):
            txn.rename_table("ns1", "t1", "ns2", "t4")  # already moved away
        txn.rename_table("ns1", "t2", "ns1", "t5")
    reader = _reader(backend)
    assert reader.list_tables("ns1") == ["t5"] and reader.list_tables("ns2") == ["t3"]
    assert reader.load_table("ns2", "t3") == wider.replace(name="t3")
    assert reader.load_table("ns1", "t5") == t2.replace(name="t5")
    with pytest.raises(NoSuchTableError):
        reader.load_table("ns1", "t1")

    with lake.begin() as txn:
        assert txn.drop_table("ns2", "t3") is True
        with pytest.raises(NoSuchTableError):
            txn.drop_table("ns2", "t3")
        assert txn.drop_table("ns2", "t3", if_exists=True) is False
    reader = _reader(backend)
    assert reader.list_tables("ns2") == [] and reader.list_tables("ns1") == ["t5"]
    assert reader.list_namespaces() == ["ns1", "ns2"]


@pytest.mark.parametrize("isolation", ["SNAPSHOT", "SERIALIZABLE"])
@pytest.mark.parametrize("drop_first", [True, False])
def test_a_table_never_outlives_its_namespace(
    backend: Backend, isolation: str, drop_first: bool
) -> None:
    """DROP NAMESPACE and a concurrent CREATE TABLE in it cannot both commit,
    at either isolation level: the catalog's integrity does not depend on it."""
    lake = _create(backend)
    with lake.begin() as setup:
        setup.create_namespace("ns1")
    dropper = lake.begin(isolation=isolation)
    creator = lake.begin(isolation=isolation)
    dropper.drop_namespace("ns1")
    creator.create_table("ns1", table_def("t"))
    first, second = (dropper, creator) if drop_first else (creator, dropper)
    first.commit()
    with pytest.raises(CommitConflictError, match="depend on"):
        second.commit()
    reader = open_lake(backend).begin(read_only=True)
    if drop_first:
        assert reader.list_namespaces() == []
        assert [k for k, _ in reader.scan_prefix("C===")] == []
    else:
        assert reader.list_tables("ns1") == ["t"]


@pytest.mark.parametrize("isolation", ["SNAPSHOT", "SERIALIZABLE"])
def test_concurrent_table_creations_in_one_namespace_both_commit(
    backend: Backend, isolation: str
) -> None:
    lake = _create(backend)
    with lake.begin() as setup:
        setup.create_namespace("ns1")
    one, two = lake.begin(isolation=isolation), lake.begin(isolation=isolation)
    one.create_table("ns1", table_def("a"))
    two.create_table("ns1", table_def("b"))
    one.commit()
    two.commit()
    assert two.attempts == 2
    assert open_lake(backend).begin().list_tables("ns1") == ["a", "b"]


# -- commit I/O overlap ----------------------------------------------------------------


class _OverlapProbe(LocalStorage):
    """Local storage whose uniquely named files wait until a root has been staged."""

    def __init__(self, root_uri: str) -> None:
        super().__init__(root_uri)
        self.root_staged = threading.Event()
        self.waited: list[bool] = []

    def _write_temp(self, directory: str, data: bytes, *, sync: bool = True) -> str:
        temp = super()._write_temp(directory, data, sync=sync)
        if os.path.normpath(directory) == os.path.normpath(self.root_dir):  # roots: top level
            self.root_staged.set()
        return temp

    def _create_unique(self, path: str, data: bytes) -> None:
        self.waited.append(self.root_staged.wait(timeout=10))
        super()._create_unique(path, data)


def test_staged_files_sync_while_the_root_is_staged(tmp_path: Path) -> None:
    """The root's temp file is written and synced while the definition files are,
    and is linked into place only after they are durable."""
    uri = str(tmp_path / "lake")
    Lakehouse.create(uri)
    probe = _OverlapProbe(uri)
    lake = Lakehouse.open(probe)
    with lake.begin() as txn:
        txn.create_namespace("ns1")
    assert probe.waited == [True]  # the definition waited for the root's staging
    assert Lakehouse.open(uri).snapshot().version == 1
    with Lakehouse.open(uri).begin() as txn:
        assert txn.namespace_exists("ns1")


def test_rollback_to_savepoint_undoes_only_later_changes(tmp_path: Path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    txn = lake.begin()
    txn.create_namespace("kept")
    savepoint = txn.savepoint()
    txn.create_namespace("undone")
    txn.drop_namespace("kept")
    txn.rollback_to(savepoint)
    assert txn.list_namespaces() == ["kept"]
    txn.commit()
    assert lake.begin().list_namespaces() == ["kept"]


def _append(item: str) -> Callable[[str | None], str | None]:
    def change(current: str | None) -> str | None:
        return item if current is None else f"{current},{item}"

    return change


@pytest.mark.parametrize("isolation", list(IsolationLevel))
def test_concurrent_merges_of_one_key_both_commit(tmp_path: Path, isolation: str) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    one = lake.begin(isolation=isolation, retry=FAST_RETRY)
    two = lake.begin(isolation=isolation, retry=FAST_RETRY)
    assert one.merge("files", _append("a")) == "a"
    assert one.merge("files", _append("b")) == "a,b"  # merges compose
    assert two.merge("files", _append("c")) == "c"
    one.commit()
    two.commit()  # rebased: its merge is applied again to the newest value
    assert two.attempts == 2
    assert lake.snapshot().get("files") == "a,b,c"


def test_a_merge_may_refuse_the_newest_value(tmp_path: Path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    _commit_puts(lake, table="t1")

    def append_to_existing(current: str | None) -> str | None:
        if current is None:
            raise CommitConflictError("the table was dropped meanwhile")
        return current + "+file"

    txn = lake.begin(retry=FAST_RETRY)
    txn.merge("table", append_to_existing)
    dropper = lake.begin()
    dropper.delete("table")
    dropper.commit()
    with pytest.raises(CommitConflictError, match="dropped meanwhile"):
        txn.commit()
    assert lake.snapshot().get("table") is None


def test_put_after_merge_is_absolute_and_conflicts_normally(tmp_path: Path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    one = lake.begin(isolation=IsolationLevel.SNAPSHOT, retry=FAST_RETRY)
    one.merge("k", _append("a"))
    one.put("k", "replaced")
    other = lake.begin()
    other.put("k", "theirs")
    other.commit()
    with pytest.raises(CommitConflictError):
        one.commit()


def test_savepoint_restores_merges(tmp_path: Path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    txn = lake.begin(retry=FAST_RETRY)
    txn.merge("k", _append("a"))
    savepoint = txn.savepoint()
    txn.merge("k", _append("b"))
    txn.rollback_to(savepoint)
    _commit_puts(lake, other="x")  # forces a rebase of txn's commit
    txn.commit()
    assert lake.snapshot().get("k") == "a"


def test_concurrent_table_merges_both_commit_and_a_drop_conflicts(tmp_path: Path) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    with lake.begin() as setup:
        setup.create_namespace("ns")
        setup.create_table("ns", table_def("t"))

    def tag(name: str) -> Callable[[Any], Any]:
        return lambda d: d.replace(properties={**d.properties, name: "1"})

    one, two = lake.begin(retry=FAST_RETRY), lake.begin(retry=FAST_RETRY)
    assert one.merge_table("ns", "t", tag("one")).properties == {"one": "1"}
    two.merge_table("ns", "t", tag("two"))
    one.commit()
    two.commit()  # rebased: its change re-applied to the definition "one" wrote
    assert dict(lake.begin().load_table("ns", "t").properties) == {"one": "1", "two": "1"}
    with pytest.raises(NoSuchTableError):
        lake.begin().merge_table("ns", "missing", tag("x"))
    late = lake.begin(retry=FAST_RETRY)
    late.merge_table("ns", "t", tag("late"))
    with lake.begin() as dropper:
        dropper.drop_table("ns", "t")
    with pytest.raises(CommitConflictError, match="dropped"):
        late.commit()
