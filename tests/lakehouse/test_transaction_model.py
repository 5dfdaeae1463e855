"""Random interleavings of concurrent transactions against a model of the history.

A Hypothesis state machine keeps 2-4 transactions open at once, at both
isolation levels, on a tiny tree (order 3 or 4, one or two buffered messages
per node, so commits flush and restructure), and interleaves begin, read,
scan, write, commit and abort. The model is the committed state at every
version and the keys each version changed. Every read and scan must see the
transaction's pinned version plus its own writes. At each commit:

* success at version ``c``: the state at ``c`` is the state at ``c - 1`` plus
  the transaction's writes; under SERIALIZABLE every value it observed (keys it
  had not written yet, and scans) equals the state at ``c - 1``, i.e. it is
  consistent with its serial position; under SNAPSHOT ISOLATION no version
  after its snapshot wrote one of its keys;
* CommitConflictError: the model confirms a real conflict (no spurious
  aborts): an intervening version wrote a key it writes (both levels), or one
  it read or that lies in a range it scanned (SERIALIZABLE); and whenever the
  model finds such a conflict the commit must have failed.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from tests.lakehouse.helpers import apply_writes, full_state
from tests.tree.helpers import small_definition
from trinity_dbapi.errors import CommitConflictError
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.transaction import IsolationLevel, RetryPolicy, Transaction

KEYS = ["a", "b", "c", "d", "e"]
BOUNDS = st.sampled_from([None, *KEYS, "bb", "dd"])  # mostly bounded ranges
VALUES = st.sampled_from([None, "1", "2", "3", "xyz"])  # None deletes
SLOT = st.integers(0, 3)
MIN_OPEN, MAX_OPEN = 2, 4
ISOLATION = st.sampled_from(list(IsolationLevel))
NO_WAIT = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0)


def _event(name: str) -> None:
    """Count an outcome in Hypothesis' statistics (a no-op in the plain random walks)."""
    if currently_in_test_context():
        event(name)


def _in_range(key: str, lo: str | None, hi: str | None) -> bool:
    return (lo is None or key >= lo) and (hi is None or key < hi)


def _visible(
    state: dict[str, str], writes: dict[str, str | None], lo: str | None, hi: str | None
) -> dict[str, str]:
    """What a scan of ``[lo, hi)`` shows: ``state`` with ``writes`` applied."""
    merged = apply_writes(dict(state), writes)
    return {k: v for k, v in merged.items() if _in_range(k, lo, hi)}


@dataclass
class Scan:
    """One scan: its range, what it returned and the own writes it merged."""

    lo: str | None
    hi: str | None
    observed: dict[str, str]
    own_writes: dict[str, str | None]


@dataclass
class Record:
    """What one open transaction did, for the checks at commit."""

    txn: Transaction
    base: int
    reads: dict[str, str | None] = field(default_factory=dict)
    scans: list[Scan] = field(default_factory=list)
    writes: dict[str, str | None] = field(default_factory=dict)

    @property
    def serializable(self) -> bool:
        return self.txn.isolation is IsolationLevel.SERIALIZABLE


class TransactionMachine(RuleBasedStateMachine):
    """Interleaves several transactions on one lakehouse; the model is the history."""

    @initialize(
        order=st.sampled_from([3, 4]),
        capacity=st.integers(1, 2),
        first=ISOLATION,
        second=ISOLATION,
    )
    def create(
        self, order: int, capacity: int, first: IsolationLevel, second: IsolationLevel
    ) -> None:
        self.uri = f"memory://txn-model-{uuid.uuid4().hex}/lake"
        self.lake = Lakehouse.create(self.uri, small_definition(order, capacity))
        self.states: list[dict[str, str]] = [{}]  # committed state per version
        self.changed: list[set[str]] = [set()]  # keys written by each version
        self.open: list[Record] = []
        self.begin(first)
        self.begin(second)

    @property
    def latest(self) -> int:
        return len(self.states) - 1

    def _pick(self, slot: int) -> Record:
        """One of the open transactions (there are always at least two)."""
        return self.open[slot % len(self.open)]

    # -- rules -----------------------------------------------------------------------

    def _end(self, rec: Record, replacement: IsolationLevel) -> None:
        """Forget an ended transaction; keep at least two open."""
        self.open.remove(rec)
        while len(self.open) < MIN_OPEN:
            self.begin(replacement)

    @precondition(lambda self: len(self.open) < MAX_OPEN)
    @rule(isolation=ISOLATION)
    def begin(self, isolation: IsolationLevel) -> None:
        txn = self.lake.begin(isolation=isolation, retry=NO_WAIT)
        assert txn.snapshot.version == self.latest  # begin pins the latest version
        self.open.append(Record(txn, self.latest))

    @rule(slot=SLOT, key=st.sampled_from(KEYS))
    def read(self, slot: int, key: str) -> None:
        rec = self._pick(slot)
        value = rec.txn.get(key)
        if key in rec.writes:
            assert value == rec.writes[key]  # read your own writes
            return
        assert value == self.states[rec.base].get(key)  # the pinned version, repeatably
        rec.reads[key] = value

    @rule(slot=SLOT, read_key=st.sampled_from(KEYS), key=st.sampled_from(KEYS), value=VALUES)
    def read_then_write(self, slot: int, read_key: str, key: str, value: str | None) -> None:
        """Write one key after reading another: the shape of write skew."""
        self.read(slot, read_key)
        self.write(slot, key, value)

    @rule(slot=SLOT, lo=BOUNDS, hi=BOUNDS)
    def scan(self, slot: int, lo: str | None, hi: str | None) -> None:
        rec = self._pick(slot)
        observed = dict(rec.txn.scan(lo, hi))
        assert observed == _visible(self.states[rec.base], rec.writes, lo, hi)
        rec.scans.append(Scan(lo, hi, observed, dict(rec.writes)))

    @rule(slot=SLOT, key=st.sampled_from(KEYS), value=VALUES)
    def write(self, slot: int, key: str, value: str | None) -> None:
        rec = self._pick(slot)
        if value is None:
            rec.txn.delete(key)
        else:
            rec.txn.put(key, value)
        rec.writes[key] = value

    @rule(slot=SLOT, replacement=ISOLATION)
    def abort(self, slot: int, replacement: IsolationLevel) -> None:
        rec = self._pick(slot)
        rec.txn.abort()
        assert self.lake.latest_version() == self.latest
        self._end(rec, replacement)

    @rule(slot=SLOT, replacement=ISOLATION)
    def commit(self, slot: int, replacement: IsolationLevel) -> None:
        rec = self._pick(slot)
        self._check_commit(rec)
        self._end(rec, replacement)

    def _check_commit(self, rec: Record) -> None:
        conflict = self._model_conflict(rec)
        try:
            snap = rec.txn.commit()
        except CommitConflictError as exc:
            assert conflict is not None, f"spurious abort: {exc}"
            version, keys = conflict
            assert exc.version == version and exc.key in keys, (exc, conflict)
            assert self.lake.latest_version() == self.latest  # nothing was committed
            _event(f"conflict ({rec.txn.isolation.name})")
            return
        assert conflict is None, f"missed conflict at version {conflict}"
        if not rec.writes:
            assert snap.version == rec.base and self.lake.latest_version() == self.latest
            return
        c = self.latest + 1
        assert snap.version == c and self.lake.latest_version() == c
        _event(f"commit after {rec.txn.attempts - 1} lost race(s)")
        before = self.states[c - 1]
        after = apply_writes(dict(before), rec.writes)
        assert full_state(snap) == after
        assert snap.changed_keys() == set(rec.writes)
        if rec.serializable:
            self._check_serial_position(rec, before)
        else:
            touched = set().union(*self.changed[rec.base + 1 : c])
            assert not touched & rec.writes.keys()  # write-write rule
        self.states.append(after)
        self.changed.append(set(rec.writes))

    # -- model -----------------------------------------------------------------------

    def _model_conflict(self, rec: Record) -> tuple[int, set[str]] | None:
        """The first intervening version that conflicts, with the conflicting keys."""
        if not rec.writes:
            return None
        for version in range(rec.base + 1, self.latest + 1):
            changed = self.changed[version]
            keys = changed & rec.writes.keys()
            if rec.serializable:
                keys |= changed & rec.reads.keys()
                keys |= {k for k in changed for s in rec.scans if _in_range(k, s.lo, s.hi)}
            if keys:
                return version, keys
        return None

    @staticmethod
    def _check_serial_position(rec: Record, before: dict[str, str]) -> None:
        """Everything ``rec`` observed is what the version just before its own shows."""
        for key, value in rec.reads.items():
            assert before.get(key) == value, (key, value, before.get(key))
        for s in rec.scans:
            assert _visible(before, s.own_writes, s.lo, s.hi) == s.observed

    def teardown(self) -> None:
        """Every version, reopened from storage, matches the model."""
        if not hasattr(self, "lake"):
            return
        reopened = Lakehouse.open(self.uri)
        assert reopened.latest_version() == self.latest
        for version, state in enumerate(self.states):
            assert full_state(reopened.snapshot(version)) == state


TestTransactionModel = TransactionMachine.TestCase
TestTransactionModel.settings = settings(
    max_examples=300,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.slow
def test_transaction_model_long() -> None:
    """A bigger campaign for the slow suite."""
    run_state_machine_as_test(
        TransactionMachine,
        settings=settings(
            max_examples=1500,
            stateful_step_count=80,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


def _random_walk(seed: int, steps: int) -> None:
    """Drive the machine's rules with plain seeded random choices for ``steps`` steps.

    Hypothesis favours short runs; long walks add histories with many commits
    between a transaction's begin and its commit (rebase over several versions).
    """
    rng = random.Random(seed)
    levels = list(IsolationLevel)
    machine = TransactionMachine()
    machine.create(rng.choice([3, 4]), rng.randint(1, 2), rng.choice(levels), rng.choice(levels))
    actions = ["begin", "read", "read_then_write", "scan", "write", "abort", "commit"]
    for _ in range(steps):
        action = rng.choices(actions, weights=[2, 3, 3, 2, 3, 1, 3])[0]
        slot, key, level = rng.randrange(MAX_OPEN), rng.choice(KEYS), rng.choice(levels)
        value = rng.choice([None, "1", "2", "3", "xyz"])
        if action == "begin":
            if len(machine.open) < MAX_OPEN:
                machine.begin(level)
        elif action == "read":
            machine.read(slot, key)
        elif action == "read_then_write":
            machine.read_then_write(slot, rng.choice(KEYS), key, value)
        elif action == "scan":
            machine.scan(slot, rng.choice([None, *KEYS]), rng.choice([None, *KEYS]))
        elif action == "write":
            machine.write(slot, key, value)
        elif action == "abort":
            machine.abort(slot, level)
        else:
            machine.commit(slot, level)
    machine.teardown()


@pytest.mark.parametrize("seed", range(8))
def test_random_walk(seed: int) -> None:
    """Long seeded walks through the same rules and checks."""
    _random_walk(seed, 300)


@pytest.mark.slow
def test_random_walks_long() -> None:
    """Many more walks for the slow suite."""
    for seed in range(100, 400):
        _random_walk(seed, 600)
