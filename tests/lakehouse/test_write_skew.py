"""Write skew: SNAPSHOT ISOLATION allows it, SERIALIZABLE prevents it.

The invariant is "at least one of x and y is 'on'". Two transactions start
from the same snapshot where both are 'on'; each checks the invariant would
still hold and switches a different one off.
"""

from __future__ import annotations

import pytest

from tests.lakehouse.helpers import Backend, open_lake
from trinity_dbapi.errors import CommitConflictError
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.transaction import IsolationLevel, RetryPolicy, Transaction

RETRY = RetryPolicy(max_attempts=4, base_delay=0.0, max_delay=0.0)


def _invariant_holds(x: str | None, y: str | None) -> bool:
    return "on" in (x, y)


def _switch_off(txn: Transaction, key: str) -> None:
    """Read both switches; turn ``key`` off if the invariant still holds afterwards."""
    x, y = txn.get("x"), txn.get("y")
    assert (x, y) == ("on", "on")  # both start from the same snapshot
    after = {"x": x, "y": y, key: "off"}
    assert _invariant_holds(after["x"], after["y"])  # locally the change looks safe
    txn.put(key, "off")


def _start(backend: Backend, isolation: IsolationLevel) -> tuple[Transaction, Transaction]:
    uri, options = backend
    lake = Lakehouse.create(uri, storage_options=options)
    with lake.begin() as txn:
        txn.put("x", "on")
        txn.put("y", "on")
    t1 = lake.begin(isolation=isolation, retry=RETRY)
    t2 = lake.begin(isolation=isolation, retry=RETRY)
    assert t1.snapshot.version == t2.snapshot.version == 1
    _switch_off(t1, "x")
    _switch_off(t2, "y")
    return t1, t2


def test_snapshot_isolation_allows_write_skew(backend: Backend) -> None:
    """Under SNAPSHOT ISOLATION both commit and the invariant breaks."""
    t1, t2 = _start(backend, IsolationLevel.SNAPSHOT)
    assert t1.commit().version == 2
    assert t2.commit().version == 3  # rebased: no write-write conflict
    final = open_lake(backend).snapshot()
    x, y = final.get("x"), final.get("y")
    assert (x, y) == ("off", "off")
    assert not _invariant_holds(x, y)


@pytest.mark.parametrize("first", [0, 1], ids=["t1-first", "t2-first"])
def test_serializable_prevents_write_skew(backend: Backend, first: int) -> None:
    """Under SERIALIZABLE the second commit conflicts on the key the first wrote."""
    txns = _start(backend, IsolationLevel.SERIALIZABLE)
    winner, loser = txns[first], txns[1 - first]
    assert winner.commit().version == 2
    with pytest.raises(CommitConflictError) as info:
        loser.commit()
    written = "x" if first == 0 else "y"
    assert (info.value.key, info.value.version) == (written, 2)
    reopened = open_lake(backend)
    assert reopened.latest_version() == 2
    final = reopened.snapshot()
    assert _invariant_holds(final.get("x"), final.get("y"))
    assert {final.get("x"), final.get("y")} == {"on", "off"}
