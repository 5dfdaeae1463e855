"""``tree.diff``: the keys two versions differ in, against a dict model, reading only what differs."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.tree.helpers import small_definition
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.tree import diff

KEYS = [f"k{i:02d}" for i in range(40)]
VALUES = st.text(alphabet="abcxyz", min_size=1, max_size=4)
BATCH = st.dictionaries(st.sampled_from(KEYS), st.none() | VALUES, min_size=1, max_size=8)


def _state(model: dict[str, str], batch: dict[str, str | None]) -> dict[str, str]:
    state = dict(model)
    for key, value in batch.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return state


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    order=st.sampled_from([3, 4, 5]),
    capacity=st.integers(1, 3),
    batches=st.lists(BATCH, min_size=1, max_size=12),
    pick=st.data(),
)
def test_changed_keys_equals_the_difference_of_the_models(
    order: int, capacity: int, batches: list[dict[str, str | None]], pick: st.DataObject
) -> None:
    lake = Lakehouse.create(
        f"memory://diff-{uuid.uuid4().hex}/lake", small_definition(order, capacity)
    )
    states = [{}]
    for batch in batches:
        lake.commit(lake.snapshot(), batch)
        states.append(_state(states[-1], batch))
    a = pick.draw(st.integers(0, len(states) - 1))
    b = pick.draw(st.integers(0, len(states) - 1))
    found = diff.changed_keys(lake.nodes, lake.snapshot(a).root, lake.snapshot(b).root)
    expected = {
        k: (states[a].get(k), states[b].get(k))
        for k in states[a].keys() | states[b].keys()
        if states[a].get(k) != states[b].get(k)
    }
    assert found == expected


def test_a_small_change_to_a_large_tree_reads_only_the_path_to_it() -> None:
    lake = Lakehouse.create(f"memory://diff-{uuid.uuid4().hex}/lake", small_definition(8, 4))
    lake.commit(lake.snapshot(), {f"key{i:05d}": "v" for i in range(3000)})
    for i in range(0, 3000, 100):  # flush the buffers down: a settled tree
        lake.commit(lake.snapshot(), {f"key{i:05d}": "w"})
    before = lake.snapshot()
    after = lake.commit(before, {"key01234": "changed"})
    before_root, after_root = before.root.path, after.root.path
    lake.nodes.clear_cache()
    lake.storage.clear_cache()
    assert before_root is not None and after_root is not None
    reads = lake.storage.stats.snapshot()
    found = diff.changed_keys(lake.nodes, before_root, after_root)
    used = lake.storage.stats.since(reads)
    assert found == {"key01234": ("v", "changed")}
    depth = before.depth()
    # Each side's path to the change (and the lookups of the one key found),
    # never the whole tree of hundreds of nodes.
    assert 2 <= used.reads <= 4 * depth, (used.reads, depth)
