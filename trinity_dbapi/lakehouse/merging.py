"""MERGE BRANCH: a three-way, data-aware merge of one branch into another, as one commit.

From the merge base (the newest version both sides' histories share, or
the root of the last merge between the two), each side's changes are the
keys whose values differ from the base, found by :mod:`trinity_dbapi.tree.diff`
reading only the nodes that differ: the cost follows what changed, not the
lakehouse. Then, per object:

* changed on one side only: the source's change is taken (the target's stays);
* changed the same way on both: nothing to do;
* a table whose definition both sides changed: its table format merges the
  data (:func:`~trinity_dbapi.lakehouse.table_formats.table_merge_of`: for
  Kartothek datasets, file by file: appends on both sides are kept, a file
  rewritten or deleted on both sides is a conflict, compatible schema
  changes apply);
* anything else both sides changed (a table dropped on one side and changed
  on the other, created on both, a namespace or view changed differently)
  is a conflict.

On any conflict nothing changes and :class:`~trinity_dbapi.errors.MergeConflictError`
lists every one. Otherwise the merge is one transaction on the target,
rebased over concurrent commits like any other; when the target did not
move since the base it is a fast-forward (the same commit, with nothing of
the target's to keep). The pair's new merge base is recorded in main's
definition: in the merge commit itself when the target is main, by a
second commit on main otherwise (should that one be lost, the next merge
starts from an older base, which is safe: the merge works on sets of files
and definitions, and an already merged change meets itself).

Imports from lakehouse/: branches, chain, table_formats, transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from itertools import chain as concat
from typing import TYPE_CHECKING

from trinity_dbapi.errors import (
    CommitConflictError,
    Error,
    MergeConflictError,
    NoSuchRefError,
    ProgrammingError,
)
from trinity_dbapi.format.definitions import MAIN, LakehouseDefinition, TableDefinition
from trinity_dbapi.format.definitions.branches import lineage_of
from trinity_dbapi.format.keys import decode_key, is_table_key
from trinity_dbapi.format.paths import root_node_version, table_definition_path
from trinity_dbapi.lakehouse.branches import require_main
from trinity_dbapi.lakehouse.chain import Snapshot
from trinity_dbapi.lakehouse.table_formats import table_merge_of
from trinity_dbapi.lakehouse.transaction import Transaction
from trinity_dbapi.tree import diff

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import VersionChain

__all__ = ["MergeResult", "merge_base", "merge_branch"]


@dataclass(frozen=True)
class MergeResult:
    """What a merge did.

    Attributes:
        version: the target's version the merge committed (its head, when
            there was nothing to merge).
        fast_forward: the target had not moved since the merge base.
        objects_changed: namespaces, tables and views the merge changed.
        base_version: the merge base's version.
    """

    version: int
    fast_forward: bool
    objects_changed: int
    base_version: int


def merge_branch(
    main: VersionChain,
    source: str,
    target: str = MAIN,
    *,
    author: str | None = None,
    message: str | None = None,
) -> MergeResult:
    """Merge branch ``source`` into ``target`` (main by default) with one commit on ``target``.

    Args:
        main: the lakehouse's main chain (``Lakehouse.main``).
        source: the branch merged (``main`` merges main into a branch).
        target: the branch that receives the commit.
        author: recorded as the merge commit's author.
        message: the merge commit's message (default: ``merge <source> into <target>``).

    Raises:
        ProgrammingError: ``source`` is ``target``.
        NoSuchRefError: either branch does not exist.
        MergeConflictError: both sides changed something in ways that do
            not merge; nothing was changed.
        CommitConflictError: a concurrent commit on the target changed what
            the merge changes; nothing was changed, run it again.
    """
    require_main(main, "MERGE BRANCH")
    if source == target:
        raise ProgrammingError(
            f"MERGE BRANCH {source} INTO {target}: a branch merged into itself changes nothing; "
            "name another branch after INTO"
        )
    # Main's latest once: it records the branches, and is a head when main
    # is a side.
    main_head = main.snapshot()
    definition = main_head.definition
    try:
        src = main.on_branch(source, definition)
    except NoSuchRefError:
        raise NoSuchRefError("branch", source) from None
    try:
        tgt = main.on_branch(target, definition)
    except NoSuchRefError:
        raise NoSuchRefError("branch (the merge's target)", target) from None
    head_s = main_head if source == MAIN else src.snapshot()
    head_t = main_head if target == MAIN else tgt.snapshot()
    base = merge_base(definition, source, target, head_s, head_t)
    nodes = main.nodes
    from_source = diff.changed_keys(nodes, base.root, head_s.root)
    if not from_source:
        return MergeResult(head_t.version, False, 0, base.version)
    txn = Transaction(tgt, head_t)
    if author is not None:
        txn.author = author
    txn.message = message or f"merge {source} into {target}"
    merger = _Merger(txn)
    for key, (before, theirs) in from_source.items():
        # A merge of the key, not a write after a read: rebased over a
        # concurrent commit on the target, it is worked out again against
        # that commit's value (a concurrent append to a table the branch
        # also appended to merges, as two appends do).
        txn.merge(key, partial(merger.change, key, before, theirs))
    merger.staging = False
    if merger.conflicts:
        txn.abort()
        raise MergeConflictError(source, target, merger.conflicts)
    if not merger.changed:
        # Both sides made the same changes: nothing to commit, and no new
        # merge base worth a version of its own.
        txn.abort()
        return MergeResult(head_t.version, False, 0, base.version)
    root = head_s.root.path or src.root_name(head_s.version)
    if target == MAIN:
        txn.change_definition(lambda d: _recorded(d, source, target, root))
    committed = txn.commit()
    if target != MAIN:
        record = Transaction(main, main.snapshot())
        record.change_definition(lambda d: _recorded(d, source, target, root))
        record.commit()
    # A fast-forward: the target had not moved since the base at all (it
    # changed nothing the source changed, so only the rest may differ).
    forward = merger.fast_forward and (
        head_t.root.path == base.root.path or not diff.candidate_keys(nodes, base.root, head_t.root)
    )
    return MergeResult(committed.version, forward, len(merger.changed), base.version)


def merge_base(
    definition: LakehouseDefinition, source: str, target: str, head_s: Snapshot, head_t: Snapshot
) -> Snapshot:
    """The newest state both heads contain: their histories' fork, or their last merge's root."""
    src, tgt = head_s.lakehouse, head_t.lakehouse
    fork = _fork_version(src.lineage, tgt.lineage, head_s.version, head_t.version)
    base = src.snapshot(fork)
    recorded = None
    for name, other in ((source, target), (target, source)):
        record = definition.branches.get(name)
        if record is not None and other in record.merged_roots:
            recorded = record.merged_roots[other]
    if recorded is not None:
        version = root_node_version(recorded.rpartition("/")[2])
        try:
            merged = Snapshot(-1 if version is None else version, src.nodes.load(recorded), src)
        except Error:  # collected since: the fork is still a common state
            return base
        if merged.created_at_millis > base.created_at_millis:
            return merged
    return base


def _fork_version(
    source: tuple[tuple[int, str], ...],
    target: tuple[tuple[int, str], ...],
    head_s: int,
    head_t: int,
) -> int:
    """The newest version whose root both lineages share (capped by both heads)."""
    for first in sorted({first for first, _ in concat(source, target)}):
        if lineage_of(source, first) != lineage_of(target, first):
            return min(first - 1, head_s, head_t)
    return min(head_s, head_t)


class _Merger:
    """Works out each object's merged value against the target's (again, on a rebase)."""

    def __init__(self, txn: Transaction) -> None:
        self.txn = txn
        #: While the merge is staged: conflicts are gathered, to list them all.
        self.staging = True
        self.conflicts: list[tuple[str, str]] = []
        #: Keys whose value the merge changes on the target.
        self.changed: set[str] = set()
        #: Whether the target had changed nothing the source changed (a
        #: fast-forward needs it unchanged altogether).
        self.fast_forward = True

    def change(
        self, key: str, base: str | None, theirs: str | None, ours: str | None
    ) -> str | None:
        """The merged value of ``key``, given the target's current value ``ours``."""
        if ours == base:  # changed on the source only: taken
            self._changed(key, theirs != ours)
            return theirs
        self.fast_forward = False
        if ours == theirs:
            return ours  # the same change on both sides
        reasons: list[str] = []
        value = _merged(self.txn, key, base, theirs, ours, reasons)
        if not reasons:
            self._changed(key, value != ours)
            return value
        what = self.txn.describe_key(key)
        if self.staging:
            self.conflicts.extend((what, reason) for reason in reasons)
            return ours
        raise CommitConflictError(
            f"commit conflict: a commit on the merge's target, made while it ran, changed "
            f"{what} so that it no longer merges ({'; '.join(reasons)}). Nothing was "
            "committed; run MERGE BRANCH again",
            key=key,
        )

    def _changed(self, key: str, changed: bool) -> None:
        if changed:
            self.changed.add(key)
        else:
            self.changed.discard(key)


def _merged(
    txn: Transaction,
    key: str,
    base: str | None,
    theirs: str | None,
    ours: str | None,
    reasons: list[str],
) -> str | None:
    """An object both sides changed, differently: its merged value, or ``reasons`` why not."""
    if theirs is None or ours is None:
        side = "the source" if theirs is None else "the target"
        reasons.append(f"dropped on {side} and changed on the other side")
        return ours
    if _same_definition(txn, theirs, ours):
        # The same definition written twice, created on both sides too (the
        # default namespace a first CREATE TABLE makes on each side).
        return ours
    if base is None:
        reasons.append("created on both sides")
        return ours
    if not is_table_key(key):
        reasons.append("changed differently on both sides")
        return ours
    kinds = [txn.read_object_definition(p, TableDefinition) for p in (base, theirs, ours)]
    merge = table_merge_of(kinds[2].table_format)
    if merge is None:
        reasons.append(f"table format {kinds[2].table_format!r} merges no data")
        return ours
    merged = merge(txn, kinds[0], kinds[1], kinds[2])
    if merged.definition is None:
        reasons.extend(merged.conflicts)
        return ours
    obj = decode_key(key, txn.snapshot.definition.key_limits)
    path = table_definition_path(obj.namespace, merged.definition.name)
    txn.stage_file(path, merged.definition.to_bytes())
    return path


def _same_definition(txn: Transaction, theirs: str, ours: str) -> bool:
    """Whether two values name definition files of equal bytes (False when unreadable)."""
    try:
        return txn.read_file(theirs) == txn.read_file(ours)
    except Error:
        return False  # not a file this lakehouse holds: the values decide


def _recorded(
    definition: LakehouseDefinition, source: str, target: str, root: str
) -> LakehouseDefinition:
    """``definition`` with ``root`` as the pair's last merge, on each side that is a branch."""
    branches = dict(definition.branches)
    for name, other in ((source, target), (target, source)):
        record = branches.get(name)
        if record is not None:
            branches[name] = record.replace(merged_roots={**record.merged_roots, other: root})
    return definition.replace(branches=branches)
