"""Storage faults at every write of a multi-object commit leave the lakehouse consistent.

A :class:`FaultyStorage` fails exactly the k-th write-type operation (create,
write, delete) of one commit that creates 2 namespaces and 3 tables on a tiny
tree (so definition files, node files, the root and the hint are all written).
For every k the commit either raises a PEP 249 error or succeeds, and a fresh
open sees exactly the old state or exactly the new one, with every version
readable and the latest version unchanged or one higher. Faults are injected
before the operation (the request failed) and after it (the request took
effect but the response was lost), and a later commit must still work.

Every test runs on main and on a branch (``chain``): a branch commit's root
and hint live in the branch's folder, and main never moves.
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
from trinity_dbapi.lakehouse.branches import create_branch
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
    branch: str | None = None

    @property
    def root(self) -> str:
        """The root node file the commit under test creates."""
        return self.lake.root_name(self.old_version + 1)


@pytest.fixture(params=["main", "branch"])
def chain(request: pytest.FixtureRequest) -> str | None:
    """The chain the commit under test is made on: main (None), or branch ``dev``."""
    return None if request.param == "main" else "dev"


def _on(lake: Lakehouse, branch: str | None) -> Lakehouse:
    return lake if branch is None else lake.on_branch(branch)


def _setup(branch: str | None = None) -> Setup:
    """A fresh memory lakehouse (order 4, buffer 2) with 8 earlier commits.

    With ``branch``: a branch made after them, with 2 commits of its own.
    """
    uri = f"memory://faults-{uuid.uuid4().hex}/lake"
    base = Lakehouse.create(uri, small_definition(4, 2))
    for i in range(8):
        with base.begin() as txn:
            txn.create_namespace(f"a{i}")
            if i % 2:
                txn.create_table(f"a{i}", table_def("x"))
    if branch is not None:
        create_branch(base, branch, base.snapshot())
        for i in range(2):
            with base.on_branch(branch).begin() as txn:
                txn.create_namespace(f"b{i}")
    faulty = FaultyStorage(open_storage(uri))
    lake = _on(Lakehouse.open(faulty), branch)
    old_version = lake.latest_version()
    return Setup(uri, faulty, lake, old_version, full_state(lake.snapshot()), branch)


def _multi_object_commit(lake: Lakehouse) -> int:
    """Create 2 namespaces and 3 tables in one transaction; return the committed version."""
    txn = lake.begin()
    for ns in NEW_NAMESPACES:
        txn.create_namespace(ns, {"n": ns})
    for ns, table in NEW_TABLES:
        txn.create_table(ns, table_def(table, "v"))
    return txn.commit().version


def _write_ops_of_commit(branch: str | None = None) -> list[tuple[str, str]]:
    """The write-type operations one fault-free multi-object commit performs."""
    setup = _setup(branch)
    setup.faulty.arm(None)
    _multi_object_commit(setup.lake)
    return list(setup.faulty.log)


def _root_op(ops: list[tuple[str, str]], setup: Setup) -> int:
    """Where in ``ops`` (1-based) the commit creates its root, whichever setup listed them:
    each setup's branch has a folder of its own, so the root is found by its name."""
    name = root_node_file_name(setup.old_version + 1)
    found = (
        k
        for k, (op, path) in enumerate(ops, 1)
        if (op, path.rpartition("/")[2]) == ("create", name)
    )
    return next(found)


def _check_consistent(
    uri: str, old_version: int, old_state: dict[str, str], branch: str | None = None
) -> bool:
    """Reopen from fresh storage; assert old-or-new, all versions readable; return is-new.

    On a branch, main must hold none of the new objects.
    """
    main = Lakehouse.open(uri)
    if branch is not None:
        on_main = main.begin(read_only=True)
        assert not any(on_main.namespace_exists(ns) for ns in NEW_NAMESPACES)
    lake = _on(main, branch)
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
    fresh = _on(Lakehouse.open(setup.uri), setup.branch)
    assert fresh.latest_version() == latest + 1
    with fresh.begin() as txn:
        assert txn.namespace_exists("late")
        txn.create_namespace("lat2")
    reopened = _on(Lakehouse.open(setup.uri), setup.branch)
    assert {"lat2", "late"} <= set(reopened.begin().list_namespaces())


def test_commit_performs_many_write_operations(chain: str | None) -> None:
    """The commit under test really writes definition files, node files, the root and hint."""
    ops = _write_ops_of_commit(chain)
    creates = [path for op, path in ops if op == "create"]
    assert sum(p.endswith(".binpb") for p in creates) == 5  # 2 namespaces + 3 tables
    # the root is created last: the commit point; then the best-effort hint
    if chain is None:
        assert creates[-1] == root_node_file_name(9)
        assert ops[-1] == ("write", "_latest_hint.txt")
    else:  # a branch made at main's version 8, with 2 commits of its own: 9 and 10
        folder = creates[-1].rpartition("/")[0] + "/"
        assert folder.startswith("_branches/") and folder != "_branches/"
        assert creates[-1] == f"{folder}{root_node_file_name(11)}"
        assert ops[-1] == ("write", f"{folder}_latest_hint.txt")
    assert sum(p.endswith(".arrow") for p in creates[:-1]) >= 2  # node files below the root


@pytest.mark.parametrize("after", [False, True], ids=["fail-before", "fail-after"])
def test_fault_at_every_write_operation(after: bool, chain: str | None) -> None:
    """For every k, a fault at the k-th write leaves exactly the old or the new state."""
    ops = _write_ops_of_commit(chain)
    outcomes: list[tuple[int, str, bool]] = []
    for k in range(1, len(ops) + 2):  # one more: the fault never fires
        setup = _setup(chain)
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
        is_new = _check_consistent(setup.uri, setup.old_version, setup.old_state, chain)
        failed = setup.faulty.failed
        root = setup.root
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


def test_an_unanswered_root_create_that_took_effect_is_the_commit(chain: str | None) -> None:
    """The root create succeeds but reports an error: the root read back is this
    commit's own, so the commit succeeds, and the lakehouse goes on."""
    ops = _write_ops_of_commit(chain)
    setup = _setup(chain)
    setup.faulty.arm(_root_op(ops, setup), after=True)
    assert _multi_object_commit(setup.lake) == setup.old_version + 1
    assert setup.faulty.failed == ("create", setup.root)
    assert _check_consistent(setup.uri, setup.old_version, setup.old_state, chain)
    assert setup.lake.latest_version() == setup.old_version + 1
    _later_commit_works(setup, setup.old_version + 1)


class _UnreadableRootStorage(FaultyStorage):
    """Fails reading back the root a failed create left, as a store that is down would."""

    def _read(self, path: str) -> bytes:
        if self.failed is not None and path == self.failed[1]:
            raise StorageError(f"injected failure reading {path!r}", path=path)
        return super()._read(path)


def test_an_unanswered_root_create_that_cannot_be_read_back_may_have_been_made(
    chain: str | None,
) -> None:
    """Neither the create nor the read back answers: an error that says the commit
    may have been made (it was), never a conflict's "nothing was committed"."""
    setup = _setup(chain)
    faulty = _UnreadableRootStorage(open_storage(setup.uri))
    lake = _on(Lakehouse.open(faulty), chain)
    ops = _write_ops_of_commit(chain)
    faulty.arm(_root_op(ops, setup), after=True)
    with pytest.raises(StorageError, match="may have been made") as raised:
        _multi_object_commit(lake)
    assert "injected failure after create" in str(raised.value)
    assert _check_consistent(setup.uri, setup.old_version, setup.old_state, chain)  # made


def test_a_root_create_that_failed_before_the_store_commits_nothing(chain: str | None) -> None:
    """The create failed before it reached the store: no root to read back, the
    create's own error, nothing committed."""
    ops = _write_ops_of_commit(chain)
    setup = _setup(chain)
    setup.faulty.arm(_root_op(ops, setup))
    with pytest.raises(StorageError, match="injected failure before create"):
        _multi_object_commit(setup.lake)
    assert not _check_consistent(setup.uri, setup.old_version, setup.old_state, chain)
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


def _lost_response_setup(branch: str | None) -> Setup:
    setup = _setup(branch)
    faulty = LostResponseStorage(open_storage(setup.uri))
    lake = _on(Lakehouse.open(faulty), branch)
    return Setup(setup.uri, faulty, lake, setup.old_version, setup.old_state, branch)


def test_lost_response_on_root_create_is_not_a_conflict(chain: str | None) -> None:
    """A retried root create that finds its own file counts as success."""
    setup = _lost_response_setup(chain)
    creates = [(op, p) for op, p in _write_ops_of_commit(chain) if op == "create"]
    setup.faulty.arm(_root_op(creates, setup))
    assert _multi_object_commit(setup.lake) == setup.old_version + 1
    assert _check_consistent(setup.uri, setup.old_version, setup.old_state, chain)
    _later_commit_works(setup, setup.old_version + 1)


def test_lost_response_at_every_create_is_consistent(chain: str | None) -> None:
    """A lost-response "already exists" on any create is recognised as the commit's
    own file (fresh UUID names and the root's own bytes), so the commit succeeds."""
    creates = [p for op, p in _write_ops_of_commit(chain) if op == "create"]
    for k in range(1, len(creates) + 1):
        setup = _lost_response_setup(chain)
        setup.faulty.arm(k)
        try:
            _multi_object_commit(setup.lake)
        except Error:
            raised = True
        else:
            raised = False
        is_new = _check_consistent(setup.uri, setup.old_version, setup.old_state, chain)
        assert is_new and not raised, (k, setup.faulty.failed)
        _later_commit_works(setup, setup.old_version + 1)
