"""The TrinityLake tree: a copy-on-write B-epsilon tree over node files.

Shape (FORMAT-NOTES section 8): a B-tree of order N whose keys and values live
in the node key tables of leaves *and* internal nodes, and every node may have
a write buffer of messages newer than everything below it.

Invariants, checked by :func:`check_invariants` after every test step:

* keys strictly ascending in every node, and within the range its parent gives;
* every leaf at the same depth; internal nodes with k keys have k+1 children;
* occupancy: every non-root node has between ceil(N/2)-1 and N-1 keys, an
  internal root at least 1;
* (I1) a buffered message is newer than anything for its key in the node's own
  key table and subtree, so reads walk down and the first hit wins;
* (I2) a non-root node never buffers a message for one of its own keys: such
  a message is applied where it lands. This is what lets keys move between a
  node and its parent (splits, merges, rotations) without ever passing over a
  newer buffered message.

Writes append messages to the root's buffer. The messages of the latest
committed transaction always stay in the root (the next commit's conflict
check reads them). When a buffer holds more than its capacity, the batch bound
for the child with the most messages is pushed down; messages reaching the node
that holds their key are applied there, others are applied at the leaves. Any
structural change is done by one primitive, :meth:`TreeWriter._rebuild`: take
one or two adjacent children with the separators between them and the parent's
messages for their range, combine them into one node, apply the messages, and
split the result evenly into as many legal nodes as it needs. Splits, merges,
rotations and the deletion of a key from an internal node are all instances of
it, so one piece of code keeps the B-tree rules.

Deleting a key held by an internal node merges the two children around it
together with the key, then applies the delete to the merged node; it moves
down one level at a time until it reaches a leaf, and the even re-split on the
way back up restores occupancy. Underfull children are combined with a sibling
and re-split, which is a merge when the two fit in one node and a rotation
otherwise.

Imports from tree/: node.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from trinity_dbapi.format.node_file import Message
from trinity_dbapi.tree.node import ChildRef, Node, NodeStore

#: Bytes a transaction ID takes in a write-buffer row (a UUID string).
TXN_ID_BYTES = 36


#: The writer's own buffer limit, below the format's size-derived bound (2,265
#: messages with the default sizes). Every commit rewrites the root, so a
#: full-size root buffer (about 60 KB at 2,000 messages) made each single-key
#: commit write and fsync far more than it changed; 256 keeps roots near 10 KB
#: while a flush still moves dozens of messages per child write
#: (benchmarks/commits.py measured the trade-off; see docs/format.md).
DEFAULT_MAX_BUFFER_MESSAGES = 256


@dataclass(frozen=True)
class TreeConfig:
    """Shape parameters of a tree.

    Attributes:
        order: N, the maximum number of children of a node.
        buffer_capacity: messages a node buffer holds before it is flushed.
    """

    order: int
    buffer_capacity: int

    def __post_init__(self) -> None:
        if self.order < 3:
            raise ValueError(f"tree order must be at least 3, not {self.order}")
        if self.buffer_capacity < 1:
            raise ValueError(f"buffer capacity must be at least 1, not {self.buffer_capacity}")

    @property
    def max_keys(self) -> int:
        return self.order - 1

    @property
    def min_keys(self) -> int:
        return math.ceil(self.order / 2) - 1

    @classmethod
    def from_sizes(
        cls,
        *,
        order: int,
        namespace_name_max_size_bytes: int,
        table_name_max_size_bytes: int,
        file_name_max_size_bytes: int,
        node_file_max_size_bytes: int,
        max_buffer_messages: int = DEFAULT_MAX_BUFFER_MESSAGES,
    ) -> TreeConfig:
        """Derive the buffer capacity from the seed's node size formula.

        The node key table takes about ``N * (ns max + table max + file max + 4)``
        bytes; the rest of ``node_file_max_size_bytes`` is write buffer, and a
        message row costs one key-table row plus a transaction ID. That is an
        upper bound: the writer flushes at ``max_buffer_messages`` when it is
        lower, because every commit rewrites the whole root.
        """
        row = (
            namespace_name_max_size_bytes + table_name_max_size_bytes + file_name_max_size_bytes + 4
        )
        buffer_bytes = node_file_max_size_bytes - order * row
        if buffer_bytes < row + TXN_ID_BYTES:
            raise ValueError(
                f"node_file_max_size_bytes={node_file_max_size_bytes} leaves {buffer_bytes} bytes "
                f"for the write buffer after a node key table of {order} rows of {row} bytes; "
                f"raise it to at least {order * row + row + TXN_ID_BYTES}"
            )
        return cls(order, min(buffer_bytes // (row + TXN_ID_BYTES), max_buffer_messages))


# --- reading -------------------------------------------------------------------


def get(store: NodeStore, root: ChildRef, key: str) -> str | None:
    """The value of ``key`` in the tree at ``root``, or None if absent."""
    node = store.resolve(root)
    while True:
        m = node.buffered(key)
        if m is not None:
            return m.value
        i = bisect_left(node.keys, key)
        if i < len(node.keys) and node.keys[i] == key:
            return node.values[i]
        if node.children is None:
            return None
        node = store.resolve(node.children[i])


def scan(
    store: NodeStore, root: ChildRef, lo: str | None = None, hi: str | None = None
) -> Iterator[tuple[str, str]]:
    """Yield ``(key, value)`` for every key with ``lo <= key < hi``, ascending.

    Buffered messages are merged on the way down; only subtrees whose range
    meets ``[lo, hi)`` are read.
    """
    items = _scan(store, store.resolve(root), lo, hi)
    for key in sorted(items):
        yield key, items[key]


def scan_prefix(store: NodeStore, root: ChildRef, prefix: str) -> Iterator[tuple[str, str]]:
    """Yield every ``(key, value)`` whose key starts with ``prefix``."""
    return scan(store, root, prefix, prefix_end(prefix))


def prefix_end(prefix: str) -> str | None:
    """The smallest string greater than every string starting with ``prefix``."""
    for i in range(len(prefix) - 1, -1, -1):
        if ord(prefix[i]) < 0x10FFFF:
            return prefix[:i] + chr(ord(prefix[i]) + 1)
    return None


def _in_range(key: str, lo: str | None, hi: str | None) -> bool:
    return (lo is None or key >= lo) and (hi is None or key < hi)


def _scan(store: NodeStore, node: Node, lo: str | None, hi: str | None) -> dict[str, str]:
    items: dict[str, str] = {}
    if node.children is not None:
        first = 0 if lo is None else bisect_left(node.keys, lo)
        last = len(node.keys) if hi is None else bisect_right(node.keys, hi)
        for i in range(first, min(last, len(node.keys)) + 1):
            items.update(_scan(store, store.resolve(node.children[i]), lo, hi))
    for k, v in zip(node.keys, node.values):
        if _in_range(k, lo, hi):
            items[k] = v
    for m in node.buffer:
        if _in_range(m.key, lo, hi):
            if m.value is None:
                items.pop(m.key, None)
            else:
                items[m.key] = m.value
    return items


def depth(store: NodeStore, root: ChildRef) -> int:
    """Number of levels (a lone root leaf is depth 1)."""
    node, levels = store.resolve(root), 1
    while node.children is not None:
        node, levels = store.resolve(node.children[0]), levels + 1
    return levels


# --- writing -------------------------------------------------------------------


class TreeWriter:
    """Applies committed messages to a tree, copy-on-write.

    Nothing is written to storage here: the result is a new root whose changed
    descendants are dirty nodes in memory; :class:`NodeStore` writes them.
    """

    def __init__(self, store: NodeStore, config: TreeConfig) -> None:
        self.store = store
        self.config = config
        self._draining = False

    @property
    def _capacity(self) -> int:
        # While compacting, every buffer below the root drains completely.
        return 0 if self._draining else self.config.buffer_capacity

    def compact(self, root: ChildRef, keep: str | None) -> Node:
        """A new root whose buffers are all empty but for ``keep``'s messages in the root.

        Only subtrees that hold buffered messages are read and rewritten.
        """
        new_root = self.store.mutable(root)
        self._draining = True
        try:
            self._flush(new_root, keep, limit=0)
            self._drain_children(new_root, keep)
            return self._settle_root(new_root, keep)
        finally:
            self._draining = False

    def _drain_children(self, node: Node, keep: str | None) -> None:
        if node.children is None:
            return
        for i in reversed(range(len(node.children))):
            if not self._has_buffers(node.children[i]):
                continue
            child = self.store.mutable(node.children[i])
            node.children[i] = child
            self._flush(child, None, limit=0)
            self._drain_children(child, None)
            self._place(node, i, *self._split_even(child))
        self._repair_seams(node, keep)

    def _has_buffers(self, ref: ChildRef) -> bool:
        node = self.store.resolve(ref)
        if node.children is None:
            return bool(node.buffer)
        return bool(node.buffer) or any(self._has_buffers(c) for c in node.children)

    def commit(self, root: ChildRef, messages: Sequence[Message], txn: str) -> Node:
        """A new root holding ``messages`` (all of transaction ``txn``) on top of ``root``.

        The messages stay in the new root's buffer; older messages are flushed
        down as far as needed to bring the root buffer back to its capacity.
        """
        new_root = self.store.mutable(root)
        new_root.buffer.extend(messages)
        return self._settle_root(new_root, keep=txn)

    def settle(self, root: ChildRef, keep: str | None) -> Node:
        """A root brought back within the buffer capacity and the B-tree rules."""
        return self._settle_root(self.store.mutable(root), keep)

    # -- the root ----------------------------------------------------------------

    def _settle_root(self, root: Node, keep: str | None) -> Node:
        max_keys = self.config.max_keys
        while True:
            if len(root.buffer) > self.config.buffer_capacity:
                self._flush(root, keep)
            if len(root.keys) > max_keys:
                # The old root's messages move up with the root role, so the
                # pieces start with empty buffers and (I2) holds for them.
                top = Node(children=[root], buffer=root.buffer)
                root.buffer = []
                self._place(top, 0, *self._split_even(root))
                root = top
                continue
            if root.children is not None and not root.keys:
                child = self.store.mutable(root.children[0])
                child.buffer = child.buffer + root.buffer  # the root's are newer
                root = child
                continue
            return root

    # -- flushing ------------------------------------------------------------------

    def _flush(self, node: Node, keep: str | None, limit: int | None = None) -> None:
        """Push messages down until the buffer holds at most ``limit`` (capacity)."""
        limit = self._capacity if limit is None else limit
        if node.children is None:
            flushable = [m for m in node.buffer if m.txn != keep]
            node.buffer = [m for m in node.buffer if m.txn == keep]
            _apply_to_leaf(node, flushable)
            return
        self._absorb(node, keep)
        excess = len(node.buffer) - limit
        if excess <= 0:
            return
        # Route every message once, then push the biggest batches. Pushing in
        # descending child order keeps the lower indexes valid while children
        # split; underfull children are repaired once, at the end.
        keys = node.keys
        routes = [bisect_left(keys, m.key) if m.txn != keep else -1 for m in node.buffer]
        chosen: dict[int, list[Message]] = {}
        total = 0
        for route, count in Counter(r for r in routes if r >= 0).most_common():
            if total >= excess:
                break
            chosen[route] = []
            total += count
        rest: list[Message] = []
        for m, route in zip(node.buffer, routes):
            chosen.get(route, rest).append(m)
        node.buffer = rest
        for route in sorted(chosen, reverse=True):
            self._rebuild(node, route, route, keep, chosen[route], pull=False)
        self._repair_seams(node, keep)

    def _absorb(self, node: Node, keep: str | None) -> None:
        """Apply buffered messages for the node's own keys at the node (I2)."""
        while True:
            index = {k: i for i, k in enumerate(node.keys)}
            last: dict[str, Message] = {}
            for m in node.buffer:
                if m.txn != keep and m.key in index:
                    last[m.key] = m
            if not last:
                return
            sets = {k for k, m in last.items() if m.value is not None}
            for k in sets:
                node.values[index[k]] = last[k].value  # type: ignore[assignment]
            deleted = next((k for k, m in last.items() if m.value is None), None)
            gone = sets | ({deleted} if deleted is not None else set())
            node.buffer = [m for m in node.buffer if m.txn == keep or m.key not in gone]
            if deleted is None:
                return
            # One delete at a time: it restructures the node, which moves keys.
            i = index[deleted]
            self._restructure(node, i, i + 1, keep, extra=[last[deleted]])

    # -- the one structural primitive --------------------------------------------------

    def _restructure(
        self, node: Node, i: int, j: int, keep: str | None, extra: Sequence[Message] = ()
    ) -> None:
        """Rebuild children ``i..j`` of ``node``, then repair an underfull result."""
        start, count = self._rebuild(node, i, j, keep, extra)
        min_keys = self.config.min_keys
        while count == 1 and node.children is not None and len(node.children) > 1:
            child = node.children[start]
            assert isinstance(child, Node)
            if len(child.keys) >= min_keys:
                return
            left = start - 1 if start > 0 else start
            start, count = self._rebuild(node, left, left + 1, keep)

    def _rebuild(
        self,
        node: Node,
        i: int,
        j: int,
        keep: str | None,
        extra: Sequence[Message] = (),
        *,
        pull: bool = True,
    ) -> tuple[int, int]:
        """Combine children ``i..j`` and the separators between them, apply the
        node's messages for that range plus ``extra``, and split evenly.

        Returns where the resulting pieces start among the node's children and
        how many there are. ``pull=False`` skips taking the node's messages,
        for a caller that already took them (and passes them as ``extra``).
        """
        assert node.children is not None
        lo = node.keys[i - 1] if i > 0 else None
        hi = node.keys[j] if j < len(node.keys) else None
        pulled: list[Message] = []
        if pull:
            kept: list[Message] = []
            for m in node.buffer:
                inside = m.txn != keep and (lo is None or m.key > lo) and (hi is None or m.key < hi)
                (pulled if inside else kept).append(m)
            node.buffer = kept
        parts = [self.store.mutable(c) for c in node.children[i : j + 1]]
        combined = parts[0]
        for sep_key, sep_value, part in zip(node.keys[i:j], node.values[i:j], parts[1:]):
            combined.keys += [sep_key, *part.keys]
            combined.values += [sep_value, *part.values]
            if combined.children is not None:
                assert part.children is not None
                combined.children += part.children
            combined.buffer += part.buffer
        del node.keys[i:j], node.values[i:j]
        node.children[i : j + 1] = [combined]
        self._repair_seams(combined, None)
        self._apply(combined, [*pulled, *extra])
        self._repair_seams(combined, None)
        pieces = self._split_even(combined)
        self._place(node, i, *pieces)
        return i, len(pieces[0])

    def _repair_seams(self, node: Node, keep: str | None) -> None:
        """Merge away underfull children a combination inherited.

        A node left with a single child cannot repair that child; once the
        node is combined with a sibling, the child sits next to a new
        neighbour and can be. Only dirty children are looked at: a clean
        child was legal when written, so checking it would cost a read.
        """
        min_keys = self.config.min_keys
        i = 0
        while node.children is not None and len(node.children) > 1 and i < len(node.children):
            child = node.children[i]
            if isinstance(child, Node) and len(child.keys) < min_keys:
                left = i - 1 if i > 0 else i
                self._restructure(node, left, left + 1, keep)
                i = max(left - 1, 0)
            else:
                i += 1

    def _apply(self, node: Node, messages: Sequence[Message]) -> None:
        """Apply messages newer than everything in the (non-root) ``node``.

        Also flushes a buffer that only grew by combining two siblings' buffers.
        """
        if node.children is None:
            _apply_to_leaf(node, messages)
            return
        if messages:
            node.buffer.extend(messages)
            self._absorb(node, None)
        if len(node.buffer) > self._capacity:
            self._flush(node, None)

    def _split_even(self, node: Node) -> tuple[list[Node], list[str], list[str]]:
        """Split an over-full node into the fewest legal nodes of even size."""
        n, order = len(node.keys), self.config.order
        if n <= self.config.max_keys:
            return [node], [], []
        pieces = math.ceil((n + 1) / order)
        total = n - (pieces - 1)
        sizes = [total // pieces + (1 if p < total % pieces else 0) for p in range(pieces)]
        nodes: list[Node] = []
        sep_keys: list[str] = []
        sep_values: list[str] = []
        pos = 0
        for p, size in enumerate(sizes):
            children = node.children[pos : pos + size + 1] if node.children is not None else None
            nodes.append(Node(node.keys[pos : pos + size], node.values[pos : pos + size], children))
            pos += size
            if p < pieces - 1:
                sep_keys.append(node.keys[pos])
                sep_values.append(node.values[pos])
                pos += 1
        for m in node.buffer:  # (I2): no message is for a separator
            nodes[bisect_left(sep_keys, m.key)].buffer.append(m)
        return nodes, sep_keys, sep_values

    @staticmethod
    def _place(
        node: Node, i: int, pieces: list[Node], sep_keys: list[str], sep_values: list[str]
    ) -> None:
        """Put ``pieces`` where child ``i`` of ``node`` is, with their separators."""
        assert node.children is not None
        node.children[i : i + 1] = pieces
        node.keys[i:i] = sep_keys
        node.values[i:i] = sep_values


def _apply_to_leaf(node: Node, messages: Sequence[Message]) -> None:
    """Apply messages (oldest first) to a leaf's key table."""
    if len(messages) > 8:
        merged = dict(zip(node.keys, node.values))
        for m in messages:
            if m.value is None:
                merged.pop(m.key, None)
            else:
                merged[m.key] = m.value
        node.keys = sorted(merged)
        node.values = [merged[k] for k in node.keys]
        return
    for m in messages:
        i = bisect_left(node.keys, m.key)
        present = i < len(node.keys) and node.keys[i] == m.key
        if m.value is None:
            if present:
                del node.keys[i], node.values[i]
        elif present:
            node.values[i] = m.value
        else:
            node.keys.insert(i, m.key)
            node.values.insert(i, m.value)


# --- invariants ----------------------------------------------------------------------


def check_invariants(store: NodeStore, root: ChildRef, config: TreeConfig, keep: str | None) -> int:
    """Raise AssertionError if the tree at ``root`` breaks a rule; return its key count.

    Checked: sorted keys within the parent's range, uniform leaf depth, child
    counts, occupancy, buffer capacity (except the root's latest-transaction
    messages), and (I2).
    """
    root_node = store.resolve(root)
    leaf_depths: set[int] = set()
    count = _check(store, root_node, config, None, None, 1, leaf_depths, is_root=True, keep=keep)
    assert len(leaf_depths) == 1, f"leaves at different depths: {sorted(leaf_depths)}"
    return count


def _check(
    store: NodeStore,
    node: Node,
    config: TreeConfig,
    lo: str | None,
    hi: str | None,
    level: int,
    leaf_depths: set[int],
    *,
    is_root: bool,
    keep: str | None,
) -> int:
    keys = node.keys
    assert all(a < b for a, b in pairwise(keys)), f"unsorted keys {keys}"
    assert len(node.values) == len(keys)
    assert all(_in_range(k, lo, hi) and k != lo for k in keys), f"keys {keys} outside ({lo}, {hi})"
    assert len(keys) <= config.max_keys, f"{len(keys)} keys > {config.max_keys}"
    if not is_root:
        assert len(keys) >= config.min_keys, f"underfull node: {len(keys)} < {config.min_keys}"
        assert not any(m.key in set(keys) for m in node.buffer), "(I2) broken"
        assert len(node.buffer) <= config.buffer_capacity, "over-full buffer below the root"
    else:
        flushable = [m for m in node.buffer if m.txn != keep]
        assert len(node.buffer) <= config.buffer_capacity or not flushable, "over-full root buffer"
    assert all(_in_range(m.key, lo, hi) and m.key != lo for m in node.buffer), (
        "message out of range"
    )
    if node.children is None:
        assert not node.buffer or is_root, "a non-root leaf has buffered messages"
        leaf_depths.add(level)
        return len(keys)
    assert len(node.children) == len(keys) + 1, "child count != keys + 1"
    if is_root:
        assert keys, "an internal root without keys"
    bounds = [lo, *keys, hi]
    total = len(keys)
    for i, child in enumerate(node.children):
        total += _check(
            store,
            store.resolve(child),
            config,
            bounds[i],
            bounds[i + 1],
            level + 1,
            leaf_depths,
            is_root=False,
            keep=keep,
        )
    return total
