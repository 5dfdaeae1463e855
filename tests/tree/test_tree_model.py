"""The tree against a dict model, reopened from storage after every commit.

Small orders and tiny write buffers make flushes, splits, merges, rotations and
internal deletes happen on almost every step; the invariants of
:func:`btree.check_invariants` are checked after each one.
"""

from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from tests.tree.helpers import small_definition
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.tree import btree

KEYS = [f"k{i:02d}" for i in range(48)]
VALUES = st.text(alphabet="abcxyz", min_size=1, max_size=4)
BATCH = st.dictionaries(st.sampled_from(KEYS), st.none() | VALUES, min_size=1, max_size=8)


class TreeMachine(RuleBasedStateMachine):
    """Commits random batches of sets and deletes; the model is a dict."""

    @initialize(order=st.sampled_from([3, 4, 5]), capacity=st.integers(1, 3))
    def create(self, order: int, capacity: int) -> None:
        self.uri = f"memory://tree-model-{uuid.uuid4().hex}/lake"
        self.definition = small_definition(order, capacity)
        self.lakehouse = Lakehouse.create(self.uri, self.definition)
        self.config = self.lakehouse.tree_config
        assert (self.config.order, self.config.buffer_capacity) == (order, capacity)
        self.model: dict[str, str] = {}
        self.states: list[dict[str, str]] = [{}]  # the model at every version
        self.version = 0
        self.last_batch: dict[str, str | None] = {}
        self.last_txn: str | None = None
        self.keep: str | None = None  # the transaction whose messages may overfill the root

    @rule(batch=BATCH)
    def commit(self, batch: dict[str, str | None]) -> None:
        base = self.lakehouse.snapshot()
        before = self.lakehouse.storage.stats.snapshot()
        snap = self.lakehouse.commit(base, batch)
        used = self.lakehouse.storage.stats.since(before)
        # Copy-on-write: only new files are created; the one overwrite is the hint.
        assert used.writes == 1
        self.version += 1
        assert snap.version == self.version
        self.last_batch, self.last_txn = batch, snap.latest_txn
        self.keep = snap.latest_txn
        for key, value in batch.items():
            if value is None:
                self.model.pop(key, None)
            else:
                self.model[key] = value
        self._versioned()

    def _versioned(self) -> None:
        self.states.append(dict(self.model))
        # Reopen from storage: a new Lakehouse with empty caches reads only files.
        self.lakehouse = Lakehouse.open(self.uri)

    @rule()
    def compact(self) -> None:
        snap = self.lakehouse.maintenance.compact()
        self.version += 1
        assert snap.version == self.version and snap.changed_keys() == set()
        self.last_batch, self.last_txn = {}, snap.latest_txn
        self._versioned()  # the previous transaction's messages may stay in the root

    @rule(data=st.data())
    def rollback(self, data: st.DataObject) -> None:
        target = data.draw(st.integers(0, self.version), label="target")
        snap = self.lakehouse.maintenance.rollback(target)
        self.version += 1
        assert snap.version == self.version
        self.model = dict(self.states[target])
        self.last_batch, self.last_txn, self.keep = {}, snap.latest_txn, None
        self._versioned()

    @rule(key=st.sampled_from(KEYS))
    def point_read(self, key: str) -> None:
        assert self.lakehouse.snapshot().get(key) == self.model.get(key)

    @rule(lo=st.sampled_from(KEYS), hi=st.sampled_from(KEYS))
    def range_read(self, lo: str, hi: str) -> None:
        expected = sorted((k, v) for k, v in self.model.items() if lo <= k < hi)
        assert list(self.lakehouse.snapshot().scan(lo, hi)) == expected

    @rule(prefix=st.sampled_from(["k0", "k1", "k2", "k3", "k4", "k", "x"]))
    def prefix_read(self, prefix: str) -> None:
        expected = sorted((k, v) for k, v in self.model.items() if k.startswith(prefix))
        assert list(self.lakehouse.snapshot().scan_prefix(prefix)) == expected

    @invariant()
    def matches_model_and_rules(self) -> None:
        snap = self.lakehouse.snapshot()
        assert snap.version == self.version
        assert dict(snap.scan()) == self.model
        btree.check_invariants(self.lakehouse.nodes, snap.root, self.config, self.keep)
        # The latest transaction's messages are all in the root, tagged with its ID.
        latest = {m.key: m.value for m in snap.latest_messages()}
        assert latest == self.last_batch
        for version in {0, self.version // 2, self.version}:  # old versions stay intact
            assert dict(self.lakehouse.snapshot(version).scan()) == self.states[version]
        assert snap.latest_txn == self.last_txn
        if self.version:
            assert snap.previous_root == root_node_file_name(self.version - 1)


TreeMachine.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_tree_against_model = TreeMachine.TestCase


@pytest.mark.slow
def test_tree_against_model_long() -> None:
    """A longer campaign for the slow suite."""
    run_state_machine_as_test(
        TreeMachine,
        settings=settings(max_examples=1000, stateful_step_count=100, deadline=None),
    )


@pytest.mark.parametrize("order", [3, 4, 5])
@pytest.mark.parametrize("capacity", [1, 2, 3])
def test_long_random_walk(order: int, capacity: int) -> None:
    """Hundreds of commits over a wide key pool: deep trees, every rebalancing case."""
    rnd = random.Random(order * 10 + capacity)
    uri = f"memory://tree-walk-{uuid.uuid4().hex}/lake"
    lake = Lakehouse.create(uri, small_definition(order, capacity))
    model: dict[str, str] = {}
    for step in range(250):
        batch: dict[str, str | None] = {}
        for _ in range(rnd.randint(1, 12)):
            key = f"k{rnd.randrange(300):03d}"
            batch[key] = None if rnd.random() < 0.35 else f"v{step}"
        lake.commit(lake.snapshot(), batch)
        for key, value in batch.items():
            if value is None:
                model.pop(key, None)
            else:
                model[key] = value
        if step % 10 == 9:
            lake = Lakehouse.open(uri)
            snap = lake.snapshot()
            btree.check_invariants(lake.nodes, snap.root, lake.tree_config, snap.latest_txn)
            assert dict(snap.scan()) == model
            probe = f"k{rnd.randrange(300):03d}"
            assert snap.get(probe) == model.get(probe)
    assert lake.snapshot().depth() >= (4 if order == 3 else 3)
