"""The keys whose values differ between two trees, reading only what differs.

Two versions of a copy-on-write tree share every node neither changed: a
child pointer that names the same node file on both sides names the same
subtree, which is skipped unread. What is left to compare is the nodes on
the paths to changes: their own keys, their buffered messages and their
children. So the cost of a diff is proportional to what changed between
the two trees (times the tree's depth), not to their size; this is what a
three-way merge of two branches (``MERGE BRANCH``) and the changes between
two versions cost.

:func:`candidate_keys` returns a superset of the keys whose values differ
(a key is a candidate when anything that decides its value differs);
:func:`changed_keys` keeps the ones whose values really differ.

Imports from tree/: btree, node.
"""

from __future__ import annotations

from trinity_dbapi.tree import btree
from trinity_dbapi.tree.node import ChildRef, Node, NodeStore

__all__ = ["candidate_keys", "changed_keys"]

_MISSING = object()


def changed_keys(
    store: NodeStore, a: ChildRef, b: ChildRef
) -> dict[str, tuple[str | None, str | None]]:
    """Every key whose value differs between the trees at ``a`` and ``b``.

    Returns:
        key -> (value at ``a``, value at ``b``); None is absent.
    """
    out: dict[str, tuple[str | None, str | None]] = {}
    for key in sorted(candidate_keys(store, a, b)):
        before, after = btree.get(store, a, key), btree.get(store, b, key)
        if before != after:
            out[key] = (before, after)
    return out


def candidate_keys(store: NodeStore, a: ChildRef, b: ChildRef) -> set[str]:
    """A superset of the keys whose values differ between the trees at ``a`` and ``b``."""
    out: set[str] = set()
    _diff(store, a, b, out)
    return out


def _path(ref: ChildRef) -> str | None:
    return ref if isinstance(ref, str) else ref.path


def _diff(store: NodeStore, a_ref: ChildRef, b_ref: ChildRef, out: set[str]) -> None:
    path = _path(a_ref)
    if a_ref is b_ref or (path is not None and path == _path(b_ref)):
        return  # one node file: one subtree
    a, b = store.resolve(a_ref), store.resolve(b_ref)
    own_a, own_b = dict(zip(a.keys, a.values)), dict(zip(b.keys, b.values))
    out.update(k for k in own_a.keys() | own_b.keys() if own_a.get(k) != own_b.get(k))
    # The newest message per key decides it (later messages win, as in a read).
    buf_a = {m.key: m.value for m in a.buffer}
    buf_b = {m.key: m.value for m in b.buffer}
    out.update(
        k for k in buf_a.keys() | buf_b.keys() if buf_a.get(k, _MISSING) != buf_b.get(k, _MISSING)
    )
    kids_a, kids_b = a.children or [], b.children or []
    if a.keys == b.keys and len(kids_a) == len(kids_b):
        for x, y in zip(kids_a, kids_b, strict=True):
            _diff(store, x, y, out)
        return
    # The pivots moved (a split or a merge of nodes): a subtree both sides
    # hold holds the same keys on both, routed to it on both; every key of a
    # subtree only one side holds is a candidate.
    paths_a = {_path(c) for c in kids_a}
    paths_b = {_path(c) for c in kids_b}
    for kids, other in ((kids_a, paths_b), (kids_b, paths_a)):
        for child in kids:
            if _path(child) is None or _path(child) not in other:
                out.update(_all_keys(store, store.resolve(child)))


def _all_keys(store: NodeStore, node: Node) -> set[str]:
    """Every key a subtree mentions (stored, or in a message, deletions included)."""
    keys = set(node.keys) | {m.key for m in node.buffer}
    for child in node.children or []:
        keys |= _all_keys(store, store.resolve(child))
    return keys
