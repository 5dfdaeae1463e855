"""Time travel by version, timestamp and export name; the history listing."""

from __future__ import annotations

import itertools
import math
from datetime import datetime, timezone
from typing import Any

import pytest

from tests.tree.helpers import small_definition
from trinity_dbapi.errors import NoSuchVersionError, ProgrammingError
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse

Backend = tuple[str, dict[str, Any]]


def _build(backend: Backend, commits: int) -> tuple[Lakehouse, list[int]]:
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(4, 2), storage_options=options)
    times = [lake.snapshot().created_at_millis]
    for i in range(commits):
        with lake.begin() as txn:
            txn.create_namespace(f"n{i:03d}")
        times.append(txn.committed.created_at_millis)  # type: ignore[union-attr]
    return lake, times


def test_creation_times_strictly_increase(backend: Backend) -> None:
    _lake, times = _build(backend, 30)
    assert all(a < b for a, b in itertools.pairwise(times))


def test_by_version_is_one_root_read(backend: Backend) -> None:
    _lake, _ = _build(backend, 12)
    fresh = Lakehouse.open(backend[0], storage_options=backend[1])
    fresh.storage.clear_cache()  # as a fresh process finds it
    before = fresh.storage.stats.snapshot()
    snap = fresh.snapshot(5)
    used = fresh.storage.stats.since(before)
    assert used.reads == 1 and used.exists == 0
    assert [ns for ns in fresh.begin(version=5).list_namespaces()] == [
        f"n{i:03d}" for i in range(5)
    ]
    assert snap.version == 5


def test_by_timestamp_binary_search(backend: Backend) -> None:
    _lake, times = _build(backend, 40)
    fresh = Lakehouse.open(backend[0], storage_options=backend[1])
    bound = 2 * math.log2(len(times)) + 2
    for version, created in enumerate(times):
        for ts, expected in ((created, version), (created + 0.5, version)):
            fresh.storage.clear_cache()
            fresh.nodes.clear_cache()
            before = fresh.storage.stats.snapshot()
            assert fresh.snapshot_at(ts).version == expected
            assert fresh.storage.stats.since(before).reads <= bound
    as_datetime = datetime.fromtimestamp(times[7] / 1000, tz=timezone.utc)
    assert fresh.snapshot_at(as_datetime).version == 7
    naive_utc = as_datetime.replace(tzinfo=None)  # a naive timestamp is UTC
    assert fresh.snapshot_at(naive_utc).version == 7
    with pytest.raises(NoSuchVersionError, match="no retained version was created"):
        fresh.snapshot_at(times[0] - 1)
    with pytest.raises(ProgrammingError, match="timestamp must be"):
        fresh.snapshot_at("yesterday")  # type: ignore[arg-type]


def test_timestamp_search_skips_expired_versions(backend: Backend) -> None:
    lake, times = _build(backend, 20)
    result = lake.maintenance.expire_versions(older_than=times[12], retain_last=1)
    assert result.expired == tuple(range(12))
    assert lake.snapshot_at(times[15]).version == 15
    assert lake.snapshot_at(times[12]).version == 12
    with pytest.raises(NoSuchVersionError):
        lake.snapshot_at(times[5])
    # Expired, not "does not exist": it did, until expiration removed it.
    with pytest.raises(NoSuchVersionError, match="version 3 was expired") as caught:
        lake.snapshot(3)
    assert "the retained versions are 12 to 20" in str(caught.value)


def test_history_lists_every_version(backend: Backend) -> None:
    lake, times = _build(backend, 6)
    lake.maintenance.rollback(2)
    history = lake.history()
    assert [h.version for h in history] == list(range(8))
    assert [h.created_at_millis for h in history[:7]] == times
    assert history[0].previous_root is None and history[0].changed_keys == ()
    third = history[3]
    assert third.previous_root == root_node_file_name(2)
    assert len(third.changed_keys) == 1 and third.changed_keys[0].startswith("B===")
    assert len({h.txn_id for h in history}) == 8
    assert history[7].rollback_from_root == root_node_file_name(6)
    assert history[7].changed_keys == ()
    assert [h.version for h in lake.history(since=5)] == [5, 6, 7]


def test_by_export_name(backend: Backend) -> None:
    lake, _ = _build(backend, 5)
    lake.maintenance.export_snapshot("month-end", version=3)
    snap = lake.snapshot_by_export("month-end")
    assert snap.version == 3
    assert lake.begin(version=snap.version).list_namespaces() == ["n000", "n001", "n002"]
    with pytest.raises(
        NoSuchVersionError, match="no tag, branch or exported snapshot is named 'nope'"
    ):
        lake.snapshot_by_export("nope")
