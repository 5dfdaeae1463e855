"""Write skew: SNAPSHOT ISOLATION allows it, SERIALIZABLE prevents it.

The invariant is "at least one of x and y is 'on'". Two transactions start
from the same snapshot where both are 'on'; each checks the invariant would
still hold and switches a different one off.

Each test runs on main and on a branch (``chain``): a branch made from the
version both switches are 'on' behaves exactly as main does.
"""

from __future__ import annotations

import pytest

from tests.lakehouse.helpers import Backend, open_lake
from trinity_dbapi.errors import CommitConflictError
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.branches import create_branch
from trinity_dbapi.lakehouse.transaction import IsolationLevel, RetryPolicy, Transaction

RETRY = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0)


@pytest.fixture(params=["main", "branch"])
def chain(request: pytest.FixtureRequest) -> str | None:
    """The chain the transactions commit on: main (None), or branch ``dev``."""
    return None if request.param == "main" else "dev"


def _reopened(backend: Backend, chain: str | None) -> Lakehouse:
    lake = open_lake(backend)
    return lake if chain is None else lake.on_branch(chain)


def _invariant_holds(x: str | None, y: str | None) -> bool:
    return "on" in (x, y)


def _switch_off(txn: Transaction, key: str) -> None:
    """Read both switches; turn ``key`` off if the invariant still holds afterwards."""
    x, y = txn.get("x"), txn.get("y")
    assert (x, y) == ("on", "on")  # both start from the same snapshot
    after = {"x": x, "y": y, key: "off"}
    assert _invariant_holds(after["x"], after["y"])  # locally the change looks safe
    txn.put(key, "off")


def _start(
    backend: Backend, isolation: IsolationLevel, chain: str | None
) -> tuple[Transaction, Transaction]:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    with lake.begin() as txn:
        txn.put("x", "on")
        txn.put("y", "on")
    if chain is not None:  # from version 1: the branch's own versions are 2, 3, ...
        create_branch(lake, chain, lake.snapshot())
        lake = lake.on_branch(chain)
    t1 = lake.begin(isolation=isolation, retry=RETRY)
    t2 = lake.begin(isolation=isolation, retry=RETRY)
    assert t1.snapshot.version == t2.snapshot.version == 1
    _switch_off(t1, "x")
    _switch_off(t2, "y")
    return t1, t2


def test_snapshot_isolation_allows_write_skew(backend: Backend, chain: str | None) -> None:
    """Under SNAPSHOT ISOLATION both commit and the invariant breaks."""
    t1, t2 = _start(backend, IsolationLevel.SNAPSHOT, chain)
    assert t1.commit().version == 2
    assert t2.commit().version == 3  # rebased: no write-write conflict
    final = _reopened(backend, chain).snapshot()
    x, y = final.get("x"), final.get("y")
    assert (x, y) == ("off", "off")
    assert not _invariant_holds(x, y)


@pytest.mark.parametrize("first", [0, 1], ids=["t1-first", "t2-first"])
def test_serializable_prevents_write_skew(backend: Backend, first: int, chain: str | None) -> None:
    """Under SERIALIZABLE the second commit conflicts on the key the first wrote."""
    txns = _start(backend, IsolationLevel.SERIALIZABLE, chain)
    winner, loser = txns[first], txns[1 - first]
    assert winner.commit().version == 2
    with pytest.raises(CommitConflictError) as info:
        loser.commit()
    written = "x" if first == 0 else "y"
    assert (info.value.key, info.value.version) == (written, 2)
    reopened = _reopened(backend, chain)
    assert reopened.latest_version() == 2
    final = reopened.snapshot()
    assert _invariant_holds(final.get("x"), final.get("y"))
    assert {final.get("x"), final.get("y")} == {"on", "off"}
    if chain is not None:  # main still reads both switches 'on'
        main = open_lake(backend).snapshot()
        assert (main.get("x"), main.get("y")) == ("on", "on")
