"""Rollback and compaction: blind commits of a rebuilt tree, retried until they win.

* **Rollback** is a roll forward (FORMAT-NOTES section 6): undoing to version
  ``u`` while the latest is ``v`` commits ``v + 1`` whose tree *is* root
  ``u``'s (same key table, children and buffer; only the root file is new),
  with ``rollback_from_root`` naming root ``v``. Concurrent writers based on
  an older version conflict with it, since it may change any key.
* **Compaction** flushes every buffer except the latest transaction's
  messages in the root, as one ordinary commit of no keys.

Each records the author of the handle that made it (``connect(...,
author=...)``), as a transaction's commit does. Neither reads keys a
transaction could conflict on: each attempt builds its root on the latest
version and tries to create the next one, and a lost race is simply tried
again (:class:`~trinity_dbapi.lakehouse.transaction.RetryPolicy`).
Both are reached through ``lakehouse.maintenance``
(:mod:`~trinity_dbapi.lakehouse.maintenance`).

Imports from lakehouse/: chain, commit_point, derived, recovery, transaction.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from trinity_dbapi.errors import CommitConflictError, RetriesExhaustedError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.lakehouse.commit_point import commit_notes, node_file_progress
from trinity_dbapi.lakehouse.derived import publish_after_commit
from trinity_dbapi.lakehouse.recovery import recovery_base
from trinity_dbapi.lakehouse.transaction import RetryPolicy
from trinity_dbapi.tree import btree

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot, VersionChain
    from trinity_dbapi.lakehouse.commit_point import Progress

__all__ = ["compact", "rollback"]

_rng = random.Random()


def rollback(
    lakehouse: VersionChain,
    version: int,
    *,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> Snapshot:
    """Roll the lakehouse back to ``version`` by committing a copy of its tree.

    Rolling back a rollback works the same way: name the version to return to.

    On a lakehouse opened pinned (``Lakehouse.open(uri, version=N)``, the way
    in past a damaged latest root), this is the recovery: the new version
    comes after the newest existing root, which is never read
    (:func:`~trinity_dbapi.lakehouse.recovery.recovery_base`), takes
    ``version``'s lakehouse definition too (the damaged version's may be
    unreadable), and its ``previous_root`` names ``version``'s root, so the
    chain from it reaches intact roots only; ``rollback_from_root`` names
    the damaged one.

    Args:
        version: the version whose content the new version takes.
        retry: how the commit retries after losing a race.
        progress: node files written, as for :meth:`Transaction.commit`.

    Returns:
        The new version.

    Raises:
        NoSuchVersionError: ``version`` does not exist (never made, or expired).
        RetriesExhaustedError: every attempt lost the race for a version.
        UnsupportedFeatureError: the lakehouse, or ``version``, requires a
            feature this release does not know.
    """
    target = lakehouse.snapshot(version)
    recovering = lakehouse.pinned_version is not None
    # The new version takes the target's tree (and, recovering, its definition).
    lakehouse.require_known_features("rollback", target.definition)
    if not recovering:
        lakehouse.require_known_features("rollback")

    def attempt() -> Snapshot:
        base = recovery_base(lakehouse, target) if recovering else lakehouse.snapshot()
        # The copy shares every child, so only the root is new. Its messages
        # now belong to an older transaction: settle them like any root's.
        writer = btree.TreeWriter(lakehouse.nodes, lakehouse.tree_config)
        new_root = writer.settle(target.root.copy(), keep=None)
        each_file, before_root = node_file_progress(progress)
        extra = {
            system_keys.ROLLBACK_FROM_ROOT: lakehouse.root_name(base.version),
            **commit_notes(lakehouse.author, None),
        }
        if recovering:
            extra[system_keys.PREVIOUS_ROOT] = lakehouse.root_name(target.version)
        return lakehouse.write_root(
            base,
            new_root,
            txn=str(uuid.uuid4()),
            definition_path=target.definition_path if recovering else None,
            extra_system=extra,
            progress=each_file,
            before_root=before_root,
            recovering=recovering,
        )

    snap = _retrying(lakehouse, retry, attempt)
    # Every table may have changed: republish the derived files of all (best effort).
    publish_after_commit(lakehouse, snap, None)
    return snap


def compact(
    lakehouse: VersionChain,
    *,
    retry: RetryPolicy | None = None,
    progress: Progress | None = None,
) -> Snapshot:
    """Flush every buffer (but the latest transaction's messages) as one commit.

    Args:
        retry: how the commit retries after losing a race.
        progress: node files written, as for :meth:`Transaction.commit`.

    Returns:
        The new version.

    Raises:
        RetriesExhaustedError: every attempt lost the race for a version.
        UnsupportedFeatureError: the lakehouse requires a feature this
            release does not know.
    """
    lakehouse.require_known_features("compact")

    def attempt() -> Snapshot:
        base = lakehouse.snapshot()
        writer = btree.TreeWriter(lakehouse.nodes, lakehouse.tree_config)
        new_root = writer.compact(base.root, base.latest_txn)
        each_file, before_root = node_file_progress(progress)
        return lakehouse.write_root(
            base,
            new_root,
            txn=str(uuid.uuid4()),
            extra_system=commit_notes(lakehouse.author, None),
            progress=each_file,
            before_root=before_root,
        )

    return _retrying(lakehouse, retry, attempt)


def _retrying(
    lakehouse: VersionChain, retry: RetryPolicy | None, attempt_once: Callable[[], Snapshot]
) -> Snapshot:
    """Run a blind commit (rollback, compaction) until it wins a version."""
    policy = retry or RetryPolicy()
    for attempt in range(policy.max_attempts):
        try:
            return attempt_once()
        except CommitConflictError:
            time.sleep(policy.delay(attempt, _rng))
    raise RetriesExhaustedError(policy.max_attempts, lakehouse.latest_version())
