"""Branches at the lakehouse layer: chains, seals, merge bases, what upkeep keeps and collects."""

from __future__ import annotations

from typing import Any

import pytest

from trinity_dbapi.errors import BranchDroppedError, MergeConflictError, NoSuchRefError
from trinity_dbapi.format.definitions import BranchRecord
from trinity_dbapi.format.features import BRANCHES
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.branches import create_branch, create_tag, drop_branch, list_refs
from trinity_dbapi.lakehouse.merging import merge_base, merge_branch

Backend = tuple[str, dict[str, Any]]


def _lake(backend: Backend) -> Lakehouse:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    lake.commit(lake.snapshot(), {"a": "1", "b": "1"})  # version 1
    return lake


def test_a_branch_is_a_chain_of_its_own_numbered_on_from_its_base(backend: Backend) -> None:
    lake = _lake(backend)
    assert create_branch(lake, "dev", lake.snapshot())  # main's version 2 records it
    dev = lake.on_branch("dev")
    assert dev.latest_version() == 1  # its base, until it commits
    committed = dev.commit(dev.snapshot(), {"a": "dev"})
    assert committed.version == 2
    record = lake.snapshot().definition.branches["dev"]
    assert committed.root.path == root_node_file_name(2, record.folder)
    assert dev.snapshot(1).root.path == root_node_file_name(1)  # below its base: main's
    assert lake.snapshot().get("a") == "1" and dev.snapshot().get("a") == "dev"
    assert BRANCHES in lake.snapshot().definition.required_writer_features
    assert [(r.name, r.version) for r in list_refs(dev)] == [("main", 2), ("dev", 2)]


def test_creating_a_branch_or_tag_reads_and_writes_the_same_at_any_size(backend: Backend) -> None:
    uri, options = backend
    costs = []
    for keys in (5, 400):
        lake = Lakehouse.create(f"{uri.rstrip('/')}-{keys}", storage_options=options)
        lake.commit(lake.snapshot(), {f"k{i:04d}": "v" for i in range(keys)})
        # A small commit flushes the big one's messages out of the root (a
        # cost of the first commit after any large one, not of branching).
        lake.commit(lake.snapshot(), {"z": "1"})
        source = lake.snapshot()
        before = lake.storage.stats.snapshot()
        create_branch(lake, "dev", source)
        create_tag(lake, "eod", source)
        used = lake.storage.stats.since(before)
        costs.append(
            ((used.reads, used.writes, used.creates, used.exists, used.lists), used.rounds)
        )
    assert costs[0][0] == costs[1][0]  # the same requests, whatever the lakehouse holds
    # Rounds: each commit's background definition create may or may not share one.
    assert abs(costs[0][1] - costs[1][1]) <= 2


def test_a_commit_racing_drop_branch_is_refused_not_lost(backend: Backend) -> None:
    lake = _lake(backend)
    create_branch(lake, "dev", lake.snapshot())
    dev = lake.on_branch("dev")
    txn = dev.begin()
    txn.put("a", "late")
    assert drop_branch(lake, "dev")
    with pytest.raises(BranchDroppedError, match="'dev' was dropped"):
        txn.commit()
    with pytest.raises(NoSuchRefError):
        lake.on_branch("dev")


def test_merge_base_is_the_fork_then_the_last_merge(backend: Backend) -> None:
    lake = _lake(backend)
    create_branch(lake, "dev", lake.snapshot())
    dev = lake.on_branch("dev")
    dev.commit(dev.snapshot(), {"c": "dev"})
    lake.commit(lake.snapshot(), {"d": "main"})
    definition = lake.snapshot().definition
    assert merge_base(definition, "dev", "main", dev.snapshot(), lake.snapshot()).version == 1
    result = merge_branch(lake, "dev")
    assert not result.fast_forward and result.objects_changed == 1
    main = lake.snapshot()
    assert (main.get("c"), main.get("d")) == ("dev", "main")
    record: BranchRecord = main.definition.branches["dev"]
    assert record.merged_roots == {"main": dev.snapshot().root.path}
    # The next merge starts at the last one: nothing new, nothing to do.
    again = merge_branch(lake, "dev")
    assert again.objects_changed == 0 and again.version == main.version
    # Main into dev: dev did not move since the merge, a fast-forward.
    forward = merge_branch(lake, "main", "dev")
    assert forward.fast_forward and dev.snapshot().get("d") == "main"


def test_an_object_changed_on_both_sides_is_a_conflict_and_nothing_changes(
    backend: Backend,
) -> None:
    lake = _lake(backend)
    create_branch(lake, "dev", lake.snapshot())
    dev = lake.on_branch("dev")
    dev.commit(dev.snapshot(), {"a": "dev", "b": None})
    lake.commit(lake.snapshot(), {"a": "main", "b": "main"})
    before = lake.latest_version()
    with pytest.raises(MergeConflictError) as caught:
        merge_branch(lake, "dev")
    assert caught.value.conflicts == [
        ("key 'a'", "changed differently on both sides"),
        ("key 'b'", "dropped on the source and changed on the other side"),
    ]
    assert lake.latest_version() == before


def test_upkeep_keeps_what_branches_need_and_collects_dropped_branches(backend: Backend) -> None:
    lake = _lake(backend)
    create_branch(lake, "keep", lake.snapshot(1))
    create_branch(lake, "gone", lake.snapshot())
    for name in ("keep", "gone"):
        chain = lake.on_branch(name)
        chain.commit(chain.snapshot(), {"x": name})
    for i in range(5):
        lake.commit(lake.snapshot(), {"m": str(i)})
    drop_branch(lake, "gone")
    lake.maintenance.expire_versions(older_than=10**15, retain_last=1)
    assert lake.snapshot(1).get("a") == "1"  # keep's base stays
    folder = lake.snapshot().definition.branches["keep"].folder
    result = lake.maintenance.collect_garbage(grace_period_millis=0)
    assert any("_branches/" in path for path in result.deleted)  # the dropped branch's roots
    assert not any(path.startswith(folder) for path in result.deleted)
    keep = lake.on_branch("keep")
    assert (keep.snapshot().get("x"), keep.snapshot().get("a")) == ("keep", "1")
    assert lake.snapshot().get("m") == "4"
