"""Lakehouse lifecycle behind one typed accessor: ``lakehouse.maintenance``.

* **Rollback** is a roll forward (FORMAT-NOTES section 6): undoing to version
  ``u`` while the latest is ``v`` commits ``v + 1`` whose tree *is* root
  ``u``'s (same key table, children and buffer; only the root file is new),
  with ``rollback_from_root`` naming root ``v``. Concurrent writers based on
  an older version conflict with it, since it may change any key.
* **Compaction** flushes every buffer except the latest transaction's
  messages in the root, as one ordinary commit of no keys.
* **Export** (:mod:`.export`) replicates one version to a target root URI
  (``minimal``, ``partial`` or ``full``), or pins it in place.
* **Expiration** (:mod:`.expiration`) deletes the root files of versions
  past their maximum age, keeping the newest, the latest and exported ones.
* **Garbage collection** (:mod:`.garbage`) deletes every file that no
  retained version and no export reaches, once older than a grace period.

:class:`Maintenance` holds rollback and compaction and hands the others to
their modules; none of them imports :class:`Lakehouse` but for type checking,
so the dependency points one way: the lakehouse module imports this one.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import CommitConflictError, RetriesExhaustedError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import expiration, export, garbage
from trinity_dbapi.lakehouse.derived import publish_after_commit
from trinity_dbapi.lakehouse.expiration import ExpireResult, retained_versions
from trinity_dbapi.lakehouse.export import EXPORT_MODES, ExportResult
from trinity_dbapi.lakehouse.garbage import (
    DEFAULT_GRACE_PERIOD_MILLIS,
    GarbageResult,
    reachable_files,
)
from trinity_dbapi.lakehouse.recovery import recovery_base
from trinity_dbapi.lakehouse.transaction import Progress, RetryPolicy, node_file_progress
from trinity_dbapi.tree import btree

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse
    from trinity_dbapi.lakehouse.snapshot import Snapshot

_rng = random.Random()


class Maintenance:
    """The lifecycle operations of one lakehouse; get it as ``lakehouse.maintenance``.

    Args:
        lakehouse: the lakehouse they act on.
    """

    def __init__(self, lakehouse: Lakehouse) -> None:
        self.lakehouse = lakehouse

    def __repr__(self) -> str:
        return f"Maintenance({self.lakehouse!r})"

    def rollback(
        self, version: int, *, retry: RetryPolicy | None = None, progress: Progress | None = None
    ) -> Snapshot:
        """Roll the lakehouse back to ``version`` by committing a copy of its tree.

        Rolling back a rollback works the same way: name the version to return to.

        On a lakehouse opened pinned (``Lakehouse.open(uri, version=N)``, the way
        in past a damaged latest root), this is the recovery: the new version
        comes after the newest existing root, which is never read
        (:func:`recovery.recovery_base`), takes ``version``'s lakehouse definition
        too (the damaged version's may be unreadable), and its ``previous_root``
        names ``version``'s root, so the chain from it reaches intact roots only;
        ``rollback_from_root`` names the damaged one.

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
        lakehouse = self.lakehouse
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
            extra = {system_keys.ROLLBACK_FROM_ROOT: root_node_file_name(base.version)}
            if recovering:
                extra[system_keys.PREVIOUS_ROOT] = root_node_file_name(target.version)
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

        snap = self._retrying(retry, attempt)
        # Every table may have changed: republish the derived files of all (best effort).
        publish_after_commit(lakehouse, snap, None)
        return snap

    def compact(
        self, *, retry: RetryPolicy | None = None, progress: Progress | None = None
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
        lakehouse = self.lakehouse
        lakehouse.require_known_features("compact")

        def attempt() -> Snapshot:
            base = lakehouse.snapshot()
            writer = btree.TreeWriter(lakehouse.nodes, lakehouse.tree_config)
            new_root = writer.compact(base.root, base.latest_txn)
            each_file, before_root = node_file_progress(progress)
            return lakehouse.write_root(
                base, new_root, txn=str(uuid.uuid4()), progress=each_file, before_root=before_root
            )

        return self._retrying(retry, attempt)

    def export_snapshot(
        self,
        name: str,
        *,
        version: int | None = None,
        mode: str = "minimal",
        target: str | None = None,
        depth: int | None = None,
        target_storage_options: dict[str, Any] | None = None,
        progress: Progress | None = None,
    ) -> ExportResult:
        """Export one version under ``name``: pin it in place, or copy it to ``target``.

        Args:
            name: the export's name (not all digits: ``AS OF 3`` means version 3).
            version: the version to export (the latest when None).
            mode: ``minimal`` (the root), ``partial`` (the top ``depth`` levels)
                or ``full`` (an independent lakehouse).
            target: root URI of the new lakehouse; None pins the version in place
                (minimal only).
            depth: tree levels a partial export copies (1 = the root only).
            target_storage_options: fsspec options for the target (default: the
                source's).
            progress: called with (files copied, -1) as the copy goes, and with
                (n, n) once it is complete, before the export is recorded.

        Returns:
            What the export did, and the version that records it.

        Raises:
            ObjectExistsError: an export of that name exists.
            LakehouseExistsError: the target already holds a lakehouse.
            UnsupportedFeatureError: the lakehouse, or the version exported,
                requires a feature this release does not know (checked before
                anything is copied).
        """
        self.lakehouse.require_known_features("export_snapshot")
        if version is not None:  # its definition is what the copy writes
            self.lakehouse.require_known_features(
                "export_snapshot", self.lakehouse.snapshot(version).definition
            )
        return export.export_snapshot(
            self.lakehouse,
            name,
            version=version,
            mode=mode,
            target=target,
            depth=depth,
            target_storage_options=target_storage_options,
            progress=progress,
        )

    def expire_versions(
        self,
        *,
        older_than: datetime | float | None = None,
        retain_last: int | None = None,
        now: datetime | float | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ExpireResult:
        """Delete the root files of versions past their maximum age.

        Args:
            older_than: the cut-off for every version without an override of
                its own (default: now minus ``maximum_version_age_millis``).
            retain_last: the newest versions always kept (default:
                ``minimum_versions_to_keep``); at least 1.
            now: the current time (a datetime, naive = UTC, or epoch ms).
            dry_run: only report what would expire.
            progress: called with (versions done, versions to check).

        Returns:
            The versions expired and retained.

        Raises:
            ProgrammingError: ``retain_last`` is below 1.
        """
        return expiration.expire_versions(
            self.lakehouse,
            older_than=older_than,
            retain_last=retain_last,
            now=now,
            dry_run=dry_run,
            progress=progress,
        )

    def collect_garbage(
        self,
        *,
        grace_period_millis: int = DEFAULT_GRACE_PERIOD_MILLIS,
        now: datetime | float | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> GarbageResult:
        """Delete every file no retained version or export reaches, once old enough.

        Args:
            grace_period_millis: files younger than this are kept (they may
                belong to a commit in flight).
            now: the current time (a datetime, naive = UTC, or epoch ms).
            dry_run: only report what would be deleted.
            progress: called with (files deleted, files to delete).

        Returns:
            The files deleted, and how many were reachable or too young.

        Raises:
            NotSupportedError: a table has a table format nobody registered
                (:func:`table_formats.register_table_format`).
            UnsupportedFeatureError: the lakehouse requires a feature this
                release does not know: what such a feature reaches would look
                like garbage.
        """
        self.lakehouse.require_known_features("collect_garbage")
        return garbage.collect_garbage(
            self.lakehouse,
            grace_period_millis=grace_period_millis,
            now=now,
            dry_run=dry_run,
            progress=progress,
        )

    def _retrying(
        self, retry: RetryPolicy | None, attempt_once: Callable[[], Snapshot]
    ) -> Snapshot:
        """Run a blind commit (rollback, compaction) until it wins a version."""
        policy = retry or RetryPolicy()
        for attempt in range(policy.max_attempts):
            try:
                return attempt_once()
            except CommitConflictError:
                time.sleep(policy.delay(attempt, _rng))
        raise RetriesExhaustedError(policy.max_attempts, self.lakehouse.latest_version())


__all__ = [
    "DEFAULT_GRACE_PERIOD_MILLIS",
    "EXPORT_MODES",
    "ExpireResult",
    "ExportResult",
    "GarbageResult",
    "Maintenance",
    "reachable_files",
    "retained_versions",
]
