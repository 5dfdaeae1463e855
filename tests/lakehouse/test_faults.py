"""Storage faults at every write of a multi-object commit leave the lakehouse consistent.

A :class:`FaultyStorage` fails exactly the k-th write-type operation (create,
write, delete) of one commit that creates 2 namespaces and 3 tables on a tiny
tree (so definition files, node files, the root and the hint are all written).
For every k the commit either raises a PEP 249 error or succeeds, and a fresh
open sees exactly the old state or exactly the new one, with every version
readable and the latest version unchanged or one higher. Faults are injected
before the operation (the request failed) and after it (the request took
effect but the response was lost), and a later commit must still work.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from tests.lakehouse.helpers import FaultyStorage, full_state, table_def
from tests.tree.helpers import small_definition
from trinity_dbapi.errors import Error, FileAlreadyExistsError, StorageError
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.storage import open_storage

NEW_NAMESPACES = ("ns1", "ns2")
NEW_TABLES = (("ns1", "t1"), ("ns1", "t2"), ("ns2", "t3"))


@dataclass
class Setup:
    """A lakehouse with some history, opened through a fault-injecting storage."""

    uri: str
    faulty: FaultyStorage
    lake: Lakehouse
    old_version: int
    old_state: dict[str, str]


def _setup() -> Setup:
    """A fresh memory lakehouse (order 4, buffer 2) with 8 earlier commits."""
    uri = f"memory://faults-{uuid.uuid4().hex}/lake"
    base = Lakehouse.create(uri, small_definition(4, 2))
    for i in range(8):
        with base.begin() as txn:
            txn.create_namespace(f"a{i}")
            if i % 2:
                txn.create_table(f"a{i}", table_def("x"))
    faulty = FaultyStorage(open_storage(uri))
    lake = Lakehouse.open(faulty)
    old_version = lake.latest_version()
    return Setup(uri, faulty, lake, old_version, full_state(lake.snapshot()))


def _multi_object_commit(lake: Lakehouse) -> int:
    """Create 2 namespaces and 3 tables in one transaction; return the committed version."""
    txn = lake.begin()
    for ns in NEW_NAMESPACES:
        txn.create_namespace(ns, {"n": ns})
    for ns, table in NEW_TABLES:
        txn.create_table(ns, table_def(table, "v"))
    return txn.commit().version


def _write_ops_of_commit() -> list[tuple[str, str]]:
    """The write-type operations one fault-free multi-object commit performs."""
    setup = _setup()
    setup.faulty.arm(None)
    _multi_object_commit(setup.lake)
    return list(setup.faulty.log)


def _check_consistent(uri: str, old_version: int, old_state: dict[str, str]) -> bool:
    """Reopen from fresh storage; assert old-or-new, all versions readable; return is-new."""
    lake = Lakehouse.open(uri)
    latest = lake.latest_version()
    assert latest in (old_version, old_version + 1)
    for version in range(latest + 1):
        snap = lake.snapshot(version)
        assert snap.version == version
        list(snap.scan())
    txn = lake.begin(read_only=True)
    present = [txn.namespace_exists(ns) for ns in NEW_NAMESPACES]
    present += [txn.table_exists(ns, t) for ns, t in NEW_TABLES]
    if latest == old_version:
        assert full_state(lake.snapshot()) == old_state
        assert not any(present)
        return False
    assert all(present)
    new_state = full_state(lake.snapshot())
    assert {k: v for k, v in new_state.items() if k in old_state} == old_state
    assert len(new_state) == len(old_state) + len(NEW_NAMESPACES) + len(NEW_TABLES)
    # every definition file the new version points at exists and parses
    for ns in NEW_NAMESPACES:
        assert dict(txn.load_namespace(ns).properties) == {"n": ns}
    for ns, t in NEW_TABLES:
        assert txn.load_table(ns, t) == table_def(t, "v")
    return True


def _later_commit_works(setup: Setup, latest: int) -> None:
    """Both the lakehouse that saw the fault and a fresh one can still commit."""
    setup.faulty.arm(None)
    with setup.lake.begin() as txn:
        txn.create_namespace("late")
    fresh = Lakehouse.open(setup.uri)
    assert fresh.latest_version() == latest + 1
    with fresh.begin() as txn:
        assert txn.namespace_exists("late")
        txn.create_namespace("lat2")
    assert {"lat2", "late"} <= set(Lakehouse.open(setup.uri).begin().list_namespaces())


def test_commit_performs_many_write_operations() -> None:
    """The commit under test really writes definition files, node files, the root and hint."""
    ops = _write_ops_of_commit()
    creates = [path for op, path in ops if op == "create"]
    assert sum(p.endswith(".binpb") for p in creates) == 5  # 2 namespaces + 3 tables
    assert creates[-1] == root_node_file_name(9)  # the root is created last: the commit point
    assert sum(p.endswith(".arrow") for p in creates[:-1]) >= 2  # node files below the root
    assert ops[-1] == ("write", "_latest_hint.txt")  # then the best-effort hint


@pytest.mark.parametrize("after", [False, True], ids=["fail-before", "fail-after"])
def test_fault_at_every_write_operation(after: bool) -> None:
    """For every k, a fault at the k-th write leaves exactly the old or the new state."""
    ops = _write_ops_of_commit()
    outcomes: list[tuple[int, str, bool]] = []
    for k in range(1, len(ops) + 2):  # one more: the fault never fires
        setup = _setup()
        setup.faulty.arm(k, after=after)
        try:
            version = _multi_object_commit(setup.lake)
        except Error as exc:
            assert isinstance(exc, StorageError)
            assert setup.faulty.failed is not None
            raised = True
        else:
            assert version == setup.old_version + 1
            raised = False
        is_new = _check_consistent(setup.uri, setup.old_version, setup.old_state)
        failed = setup.faulty.failed
        root = root_node_file_name(setup.old_version + 1)
        if not raised:
            # Only the best-effort hint write may fail without failing the
            # commit, and a root create that took effect but answered an
            # error: the root read back is this commit's own.
            took_effect = after and failed == ("create", root)
            assert is_new and (failed is None or failed[0] == "write" or took_effect), (k, failed)
        else:
            assert not is_new, (k, failed)
        outcomes.append((k, "raised" if raised else "ok", is_new))
        _later_commit_works(setup, setup.old_version + int(is_new))
    assert len(outcomes) == len(ops) + 1
    assert outcomes[-1] == (len(ops) + 1, "ok", True)
    assert any(result == "raised" for _, result, _ in outcomes)


def test_an_unanswered_root_create_that_took_effect_is_the_commit() -> None:
    """The root create succeeds but reports an error: the root read back is this
    commit's own, so the commit succeeds, and the lakehouse goes on."""
    ops = _write_ops_of_commit()
    setup = _setup()
    k = ops.index(("create", root_node_file_name(setup.old_version + 1))) + 1
    setup.faulty.arm(k, after=True)
    assert _multi_object_commit(setup.lake) == setup.old_version + 1
    assert setup.faulty.failed == ("create", root_node_file_name(setup.old_version + 1))
    assert _check_consistent(setup.uri, setup.old_version, setup.old_state)
    assert setup.lake.latest_version() == setup.old_version + 1
    _later_commit_works(setup, setup.old_version + 1)


class _UnreadableRootStorage(FaultyStorage):
    """Fails reading back the root a failed create left, as a store that is down would."""

    def _read(self, path: str) -> bytes:
        if self.failed is not None and path == self.failed[1]:
            raise StorageError(f"injected failure reading {path!r}", path=path)
        return super()._read(path)


def test_an_unanswered_root_create_that_cannot_be_read_back_may_have_been_made() -> None:
    """Neither the create nor the read back answers: an error that says the commit
    may have been made (it was), never a conflict's "nothing was committed"."""
    setup = _setup()
    faulty = _UnreadableRootStorage(open_storage(setup.uri))
    lake = Lakehouse.open(faulty)
    ops = _write_ops_of_commit()
    faulty.arm(ops.index(("create", root_node_file_name(setup.old_version + 1))) + 1, after=True)
    with pytest.raises(StorageError, match="may have been made") as raised:
        _multi_object_commit(lake)
    assert "injected failure after create" in str(raised.value)
    assert _check_consistent(setup.uri, setup.old_version, setup.old_state)  # it was made


def test_a_root_create_that_failed_before_the_store_commits_nothing() -> None:
    """The create failed before it reached the store: no root to read back, the
    create's own error, nothing committed."""
    ops = _write_ops_of_commit()
    setup = _setup()
    setup.faulty.arm(ops.index(("create", root_node_file_name(setup.old_version + 1))) + 1)
    with pytest.raises(StorageError, match="injected failure before create"):
        _multi_object_commit(setup.lake)
    assert not _check_consistent(setup.uri, setup.old_version, setup.old_state)
    _later_commit_works(setup, setup.old_version)


class LostResponseStorage(FaultyStorage):
    """Performs the k-th create, then fails like a client retry would: "already exists".

    This is what an object store client does when the response to a
    successful conditional PUT is lost and it sends the request again.
    """

    def _create_exclusive(self, path: str, data: bytes) -> None:
        with self._lock:
            self.count += 1
            hit = self.count == self.fail_at
            self.log.append(("create", path))
        self.inner.create_exclusive(path, data)
        if hit:
            self.failed = ("create", path)
            raise FileAlreadyExistsError(f"lost response: {path!r} exists", path=path)


def _lost_response_setup() -> Setup:
    setup = _setup()
    faulty = LostResponseStorage(open_storage(setup.uri))
    lake = Lakehouse.open(faulty)
    return Setup(setup.uri, faulty, lake, setup.old_version, setup.old_state)


def test_lost_response_on_root_create_is_not_a_conflict() -> None:
    """A retried root create that finds its own file counts as success."""
    setup = _lost_response_setup()
    creates = [p for op, p in _write_ops_of_commit() if op == "create"]
    setup.faulty.arm(creates.index(root_node_file_name(setup.old_version + 1)) + 1)
    assert _multi_object_commit(setup.lake) == setup.old_version + 1
    assert _check_consistent(setup.uri, setup.old_version, setup.old_state)
    _later_commit_works(setup, setup.old_version + 1)


def test_lost_response_at_every_create_is_consistent() -> None:
    """A lost-response "already exists" on any create is recognised as the commit's
    own file (fresh UUID names and the root's own bytes), so the commit succeeds."""
    creates = [p for op, p in _write_ops_of_commit() if op == "create"]
    for k in range(1, len(creates) + 1):
        setup = _lost_response_setup()
        setup.faulty.arm(k)
        try:
            _multi_object_commit(setup.lake)
        except Error:
            raised = True
        else:
            raised = False
        is_new = _check_consistent(setup.uri, setup.old_version, setup.old_state)
        assert is_new and not raised, (k, setup.faulty.failed)
        _later_commit_works(setup, setup.old_version + 1)
