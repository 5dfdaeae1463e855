"""Rollback, compaction, snapshot export, version expiration and garbage collection."""

from __future__ import annotations

import inspect
import time
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.tree.helpers import small_definition
from trinity_dbapi.errors import (
    CommitConflictError,
    LakehouseExistsError,
    ObjectExistsError,
    ProgrammingError,
    RetriesExhaustedError,
)
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse, blind_commits, expiration, export, garbage
from trinity_dbapi.lakehouse.maintenance import Maintenance
from trinity_dbapi.lakehouse.transaction import RetryPolicy
from trinity_dbapi.storage import open_storage
from trinity_dbapi.tree import btree

Backend = tuple[str, dict[str, Any]]


def _lake(backend: Backend, namespaces: int = 0) -> Lakehouse:
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(4, 2), storage_options=options)
    for i in range(namespaces):
        with lake.begin() as txn:
            txn.create_namespace(f"n{i:03d}", {"i": str(i)})
    return lake


def _names(lake: Lakehouse, version: int | None = None) -> list[str]:
    return lake.begin(version=version, read_only=True).list_namespaces()


def _target(backend: Backend, name: str) -> str:
    uri = backend[0].rstrip("/")
    return uri.rpartition("/")[0] + f"/{name}-{uuid.uuid4().hex[:8]}"


# -- the door and its deprecated aliases --------------------------------------------------

OPERATIONS = ("rollback", "compact", "export_snapshot", "expire_versions", "collect_garbage")
MODULES = {
    "rollback": blind_commits,
    "compact": blind_commits,
    "export_snapshot": export,
    "expire_versions": expiration,
    "collect_garbage": garbage,
}


def test_maintenance_is_a_typed_accessor(backend: Backend) -> None:
    lake = _lake(backend, 2)
    assert isinstance(lake.maintenance, Maintenance) and lake.maintenance is lake.maintenance
    assert lake.maintenance.compact().version == 3
    assert lake.maintenance.rollback(1).version == 4
    assert _names(lake) == ["n000"]


@pytest.mark.parametrize("name", OPERATIONS)
def test_each_operation_is_written_once_in_its_module(name: str) -> None:
    """The door's method is its module's function: one signature, one docstring, every argument named."""
    function = getattr(MODULES[name], name)
    operation = getattr(Maintenance, name)
    assert inspect.signature(operation) == inspect.signature(function)
    assert operation.__doc__ == function.__doc__
    parameters = inspect.signature(function).parameters.values()
    assert all(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


@pytest.mark.parametrize("name", OPERATIONS)
def test_each_deprecated_alias_has_its_operations_signature(tmp_path: Path, name: str) -> None:
    lake = _lake((str(tmp_path / "lake"), {}))
    alias, operation = getattr(lake, name), getattr(lake.maintenance, name)
    assert inspect.signature(alias) == inspect.signature(operation)
    assert inspect.signature(getattr(Lakehouse, name)) == inspect.signature(
        getattr(Maintenance, name)
    )
    doc = getattr(Lakehouse, name).__doc__
    assert doc.startswith(f"Deprecated: use ``lakehouse.maintenance.{name}``")
    assert inspect.cleandoc(operation.__doc__) in inspect.cleandoc(doc)


def test_each_deprecated_alias_warns_and_still_works(tmp_path: Path) -> None:
    lake = _lake((str(tmp_path / "lake"), {}), 3)
    calls = {
        "compact": lambda: lake.compact().version == 4,
        "rollback": lambda: lake.rollback(1).version == 5 and _names(lake) == ["n000"],
        "export_snapshot": lambda: lake.export_snapshot("e", version=2).recorded_in_version == 6,
        "expire_versions": lambda: lake.expire_versions(retain_last=1, dry_run=True).dry_run,
        "collect_garbage": lambda: lake.collect_garbage(grace_period_millis=0).dry_run is False,
    }
    assert set(calls) == set(OPERATIONS)
    for name, call in calls.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert call(), name
        assert [str(w.message) for w in caught] == [
            f"Lakehouse.{name} is deprecated; use lakehouse.maintenance.{name}"
        ]
        assert caught[0].category is DeprecationWarning
        assert caught[0].filename == __file__  # the caller's line, not the alias's
    assert lake.snapshot().definition.exported_snapshots == {"e": root_node_file_name(2)}


# -- rollback ---------------------------------------------------------------------------


def test_rollback_is_a_roll_forward(backend: Backend) -> None:
    lake = _lake(backend, 10)
    snap = lake.maintenance.rollback(4)
    assert snap.version == 11
    assert snap.rollback_from_root == root_node_file_name(10)
    assert _names(lake) == [f"n{i:03d}" for i in range(4)]
    assert len(_names(lake, 10)) == 10  # history is kept: nothing was rewritten
    # The rolled-back tree shares every node with version 4.
    assert snap.root.children == lake.snapshot(4).root.children
    undone = lake.maintenance.rollback(10)  # rolling back the rollback
    assert undone.version == 12 and len(_names(lake)) == 10
    assert undone.rollback_from_root == root_node_file_name(11)
    reopened = Lakehouse.open(backend[0], storage_options=backend[1])
    assert len(_names(reopened)) == 10
    btree.check_invariants(reopened.nodes, undone.root, reopened.tree_config, None)


def test_a_rollback_conflicts_with_writers_that_began_before_it(backend: Backend) -> None:
    lake = _lake(backend, 3)
    txn = lake.begin(isolation="SNAPSHOT")
    txn.create_namespace("late")
    lake.maintenance.rollback(1)
    with pytest.raises(CommitConflictError, match="rolled the lakehouse back"):
        txn.commit()
    assert _names(lake) == ["n000"]


# -- compaction -------------------------------------------------------------------------


def test_compaction_empties_every_buffer_but_the_latest_transaction(backend: Backend) -> None:
    lake = _lake(backend, 40)
    before = dict(lake.snapshot().scan())
    latest_txn = lake.snapshot().latest_txn
    snap = lake.maintenance.compact()
    assert snap.version == 41 and snap.changed_keys() == set()
    assert dict(snap.scan()) == before
    btree.check_invariants(lake.nodes, snap.root, lake.tree_config, latest_txn)
    assert {m.txn for m in snap.root.buffer} <= {latest_txn}

    def buffered(ref: object, top: bool) -> int:
        node = lake.nodes.resolve(ref)  # type: ignore[arg-type]
        own = 0 if top else len(node.buffer)
        return own + sum(buffered(c, False) for c in node.children or ())

    assert buffered(snap.root, True) == 0
    with lake.begin() as txn:  # the tree keeps working normally afterwards
        txn.create_namespace("post")
    assert "post" in _names(lake)


# -- export -----------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "depth"), [("minimal", None), ("partial", 2), ("full", None)])
def test_export_to_a_target_opens_as_a_lakehouse(
    backend: Backend, mode: str, depth: int | None
) -> None:
    lake = _lake(backend, 30)
    target = _target(backend, mode)
    result = lake.maintenance.export_snapshot(
        f"e-{mode}", version=20, mode=mode, target=target, depth=depth
    )
    assert result.version == 20 and result.recorded_in_version == 31
    exported = Lakehouse.open(target, storage_options=backend[1])
    assert exported.latest_version() == 0
    txn = exported.begin(read_only=True)
    assert txn.list_namespaces() == _names(lake, 20)
    assert txn.load_namespace("n007").properties == {"i": "7"}
    assert exported.definition.exported_snapshots == {}
    assert lake.snapshot().definition.exported_snapshots[f"e-{mode}"] == result.location
    assert lake.snapshot_by_export(f"e-{mode}").version == 20
    copied = {"minimal": 2, "partial": 3}.get(mode)
    if copied is not None:
        # the root (and partial: the second level) plus the lakehouse definition
        assert result.files_copied <= (2 if mode == "minimal" else 1 + 1 + 5)
    else:
        target_files = open_storage(target, storage_options=backend[1]).list("")
        assert all("://" not in f for f in target_files)
        assert result.files_copied >= 30  # every node and namespace definition


def test_full_export_is_independent_of_the_source(backend: Backend) -> None:
    lake = _lake(backend, 12)
    target = _target(backend, "full")
    lake.maintenance.export_snapshot("copy", mode="full", target=target)
    source = open_storage(backend[0], storage_options=backend[1])
    for path in source.list(""):
        source.delete(path)
    exported = Lakehouse.open(target, storage_options=backend[1])
    assert len(exported.begin().list_namespaces()) == 12
    with exported.begin() as txn:  # and it takes new commits
        txn.create_namespace("new")
    assert len(Lakehouse.open(target, storage_options=backend[1]).begin().list_namespaces()) == 13


def test_export_errors(backend: Backend) -> None:
    lake = _lake(backend, 2)
    lake.maintenance.export_snapshot("x")
    with pytest.raises(ObjectExistsError, match="exported snapshot 'x' already exists"):
        lake.maintenance.export_snapshot("x")
    with pytest.raises(ProgrammingError, match="give it a target root URI"):
        lake.maintenance.export_snapshot("y", mode="full")
    with pytest.raises(ProgrammingError, match="depth >= 1"):
        lake.maintenance.export_snapshot("y", mode="partial", target=_target(backend, "p"))
    with pytest.raises(ProgrammingError, match="not one of"):
        lake.maintenance.export_snapshot("y", mode="everything")
    with pytest.raises(LakehouseExistsError):
        lake.maintenance.export_snapshot("y", mode="minimal", target=backend[0])
    with pytest.raises(ProgrammingError, match="digits"):
        lake.maintenance.export_snapshot("2024", version=1)
    # A name the rules refuse is refused before any file is copied.
    target = _target(backend, "bad-name")
    for bad in ("2024", "a\u200bb", "caf\u0065\u0301"):
        with pytest.raises(ProgrammingError):
            lake.maintenance.export_snapshot(bad, mode="full", target=target)
        assert open_storage(target, storage_options=backend[1]).list("") == []


def test_concurrent_exports_are_both_recorded(backend: Backend) -> None:
    """Definition changes rebase: two exports from the same version both land."""
    lake = _lake(backend, 2)
    first = lake.begin()
    second = lake.begin()
    first.change_definition(
        lambda d: d.replace(exported_snapshots={**d.exported_snapshots, "a": "x"})
    )
    second.change_definition(
        lambda d: d.replace(exported_snapshots={**d.exported_snapshots, "b": "y"})
    )
    first.commit()
    second.commit()
    assert second.attempts == 2
    assert dict(lake.snapshot().definition.exported_snapshots) == {"a": "x", "b": "y"}


# -- expiration and garbage collection ------------------------------------------------------


def test_expiration_by_age_keeps_the_minimum_and_overrides(backend: Backend) -> None:
    uri, options = backend
    definition = small_definition(4, 2).replace(
        minimum_versions_to_keep=3,
        maximum_version_age_millis=1,
        maximum_version_age_millis_overrides={2: 10**12},
    )
    lake = Lakehouse.create(uri, definition, storage_options=options)
    for i in range(8):
        with lake.begin() as txn:
            txn.create_namespace(f"n{i:03d}")
    time.sleep(0.01)
    dry = lake.maintenance.expire_versions(dry_run=True)
    assert dry.expired == (0, 1, 3, 4, 5) and dry.dry_run
    assert lake.snapshot(0).version == 0  # a dry run deletes nothing
    done = lake.maintenance.expire_versions()
    assert done.expired == (0, 1, 3, 4, 5)
    assert done.retained == (2, 6, 7, 8)
    reopened = Lakehouse.open(uri, storage_options=options)
    assert reopened.latest_version() == 8
    assert _names(reopened, 2) == ["n000", "n001"]


def test_expiration_never_removes_pinned_or_latest_versions(backend: Backend) -> None:
    lake = _lake(backend, 6)
    lake.maintenance.export_snapshot("keep", version=1)
    future = time.time() * 1000 + 60_000
    result = lake.maintenance.expire_versions(older_than=future, retain_last=1)
    assert 1 not in result.expired and 7 not in result.expired
    assert set(result.retained) == {1, 7}
    assert _names(lake, lake.snapshot_by_export("keep").version) == ["n000"]
    with pytest.raises(ProgrammingError, match="at least 1"):
        lake.maintenance.expire_versions(retain_last=0)


def test_garbage_collection_deletes_only_unreachable_files(backend: Backend) -> None:
    uri, options = backend
    lake = _lake(backend, 12)
    with lake.begin() as txn:
        txn.drop_namespace("n003")
    # an orphan of a failed commit: the definition file it wrote before losing
    loser = lake.begin(version=5, retry=RetryPolicy(max_attempts=1))
    loser.create_namespace("orph")
    listing = open_storage(uri, storage_options=options)
    existing = set(listing.list(""))
    with pytest.raises(RetriesExhaustedError):
        loser.commit()
    staged = set(listing.list("")) - existing - {"_latest_hint.txt"}
    assert any("namespace-orph-" in path for path in staged)
    lake.maintenance.expire_versions(older_than=time.time() * 1000 + 60_000, retain_last=2)
    storage = open_storage(uri, storage_options=options)
    all_files = set(storage.list(""))

    young = lake.maintenance.collect_garbage()  # default grace period: everything is too young
    assert young.deleted == [] and young.too_young > 0

    dry = lake.maintenance.collect_garbage(grace_period_millis=0, dry_run=True)
    assert dry.deleted and set(storage.list("")) == all_files
    progress: list[int] = []
    done = lake.maintenance.collect_garbage(
        grace_period_millis=0, progress=lambda n, _t: progress.append(n)
    )
    assert sorted(done.deleted) == sorted(dry.deleted)
    assert staged <= set(done.deleted)  # the failed commit's files are collected
    assert progress == list(range(1, len(done.deleted) + 1))
    remaining = set(storage.list(""))
    assert remaining == all_files - set(done.deleted)
    # everything the retained versions need is still there
    reopened = Lakehouse.open(uri, storage_options=options)
    for version in (12, 13):
        txn = reopened.begin(version=version, read_only=True)
        for ns in txn.list_namespaces():
            assert txn.load_namespace(ns).name == ns
    assert "n003" not in _names(reopened)
    # and a second pass finds nothing more
    assert lake.maintenance.collect_garbage(grace_period_millis=0).deleted == []


def test_gc_removes_temporary_files_of_a_killed_local_writer(tmp_path: Any) -> None:
    lake = Lakehouse.create(str(tmp_path / "lake"), small_definition(4, 2))
    with lake.begin() as txn:
        txn.create_namespace("a")
    leftover = tmp_path / "lake" / "0101" / ".tmp-0f3c9a"
    leftover.parent.mkdir(parents=True, exist_ok=True)
    leftover.write_bytes(b"half a node file")
    assert ".tmp-0f3c9a" not in " ".join(lake.storage.list(""))  # invisible to readers
    result = lake.maintenance.collect_garbage(grace_period_millis=0)
    assert "0101/.tmp-0f3c9a" in result.deleted and not leftover.exists()
    assert lake.begin().list_namespaces() == ["a"]
