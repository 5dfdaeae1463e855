"""Version expiration: the root files of versions past their maximum age go.

A version's maximum age is the definition's, a per-version override, or an
explicit cut-off; the newest ``minimum_versions_to_keep`` versions, the
latest, versions pinned by an export, and the beginning version of a saved
transaction not yet committed or expired with every version after it (its
commit checks them, :mod:`.saved_transactions`) are always kept. Their files
are left to garbage collection.

Imports from lakehouse/: chain, commit_point, history, saved_transactions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from trinity_dbapi.errors import CorruptFileError, ProgrammingError
from trinity_dbapi.format.definitions.branches import main_versions_needed
from trinity_dbapi.format.locations import is_uri
from trinity_dbapi.format.paths import root_node_file_name, root_node_version
from trinity_dbapi.lakehouse.history import to_millis
from trinity_dbapi.lakehouse.saved_transactions import kept_alive

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import VersionChain
    from trinity_dbapi.lakehouse.commit_point import Progress


@dataclass(frozen=True)
class ExpireResult:
    """Versions an expiration removed (or would remove, in a dry run)."""

    expired: tuple[int, ...]
    retained: tuple[int, ...]
    dry_run: bool


def retained_versions(lakehouse: VersionChain) -> list[int]:
    """Every version whose root file exists, ascending (one list request)."""
    versions = (root_node_version(p) for p in lakehouse.storage.list("_"))
    return sorted(v for v in versions if v is not None)


def expire_versions(
    lakehouse: VersionChain,
    *,
    older_than: datetime | float | None = None,
    retain_last: int | None = None,
    now: datetime | float | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ExpireResult:
    """Delete the root files of versions past their maximum age.

    A version expires when it was created before its cut-off: ``older_than``
    if given, else now minus the definition's ``maximum_version_age_millis``;
    a per-version override (``maximum_version_age_millis_overrides``) always
    sets that version's own cut-off. Never expired: the newest ``retain_last``
    versions (default ``minimum_versions_to_keep``), the latest version, and
    versions an export pins in place.

    Args:
        older_than: the cut-off for every version without an override of
            its own (default: now minus ``maximum_version_age_millis``).
        retain_last: the newest versions always kept (default:
            ``minimum_versions_to_keep``); at least 1.
        now: the current time (a datetime, naive = UTC, or epoch ms).
        dry_run: only report what would expire.
        progress: called with (versions done, versions to check): a version
            that may expire is done once it is found young enough to keep,
            or once its root file is deleted (found expired, in a dry run);
            the last call has done == total, also when no version may expire
            (0, 0).

    Returns:
        The versions expired and retained.

    Raises:
        ProgrammingError: ``retain_last`` is below 1.
        UnsupportedFeatureError: the lakehouse requires a feature this release
            does not know.
        ReadOnlyError: the lakehouse is pinned (opened with ``version=N``).
    """
    # Pinned, the newer versions would look expirable and their files garbage.
    lakehouse.require_unpinned("expire_versions")
    latest = lakehouse.snapshot()
    definition = latest.definition
    # A newer release's feature (say, branches) may keep versions this one
    # would expire.
    lakehouse.require_known_features("expire_versions", definition)
    now_ms = to_millis(now) if now is not None else int(time.time() * 1000)
    keep_last = definition.minimum_versions_to_keep if retain_last is None else retain_last
    if keep_last < 1:
        raise ProgrammingError(
            f"retain_last must be at least 1 (the latest version), not {keep_last}"
        )
    versions = [v for v in retained_versions(lakehouse) if v <= latest.version]
    protected = set(versions[-keep_last:]) | {latest.version}
    for location in definition.exported_snapshots.values():
        pinned = None if is_uri(location) else root_node_version(location)
        if pinned is not None:
            protected.add(pinned)
    # The versions of main that branches were made from, and the roots of
    # their last merges (docs/format.md, "Branches").
    protected |= main_versions_needed(definition.branches)
    oldest_saved = kept_alive(lakehouse, now_ms).oldest_version
    if oldest_saved is not None:
        protected.update(v for v in versions if v >= oldest_saved)
    default_cutoff = (
        to_millis(older_than)
        if older_than is not None
        else now_ms - definition.maximum_version_age_millis
    )
    candidates = [v for v in versions if v not in protected]
    done = 0

    def one_done() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(candidates))

    expired = []
    for version in candidates:
        override = definition.maximum_version_age_millis_overrides.get(version)
        cutoff = default_cutoff if override is None else now_ms - override
        if _created_at_most(lakehouse, version, versions) < cutoff:
            expired.append(version)
            if not dry_run:
                continue  # done once deleted
        one_done()
    if not dry_run:
        for version in expired:  # oldest first: the retained run stays contiguous
            delete_file(lakehouse, root_node_file_name(version))
            one_done()
    if progress is not None and not candidates:
        progress(0, 0)
    gone = set(expired)
    kept = tuple(v for v in versions if v not in gone)
    return ExpireResult(tuple(expired), kept, dry_run)


def _created_at_most(lakehouse: VersionChain, version: int, versions: list[int]) -> int:
    """When ``version`` was created, or a time after it when its root is damaged.

    Creation times strictly increase with the version, so a damaged root
    (kept after a recovery, docs/recovery.md) is older than the next readable
    one: it expires once that one would, never sooner.
    """
    for later in (v for v in versions if v >= version):
        try:
            return lakehouse.load_version(later).created_at_millis
        except CorruptFileError:
            continue
    return 2**63 - 1  # nothing readable after it: keep it


def delete_file(lakehouse: VersionChain, path: str) -> None:
    """Delete the file at ``path``, and forget it if it is a cached node."""
    lakehouse.storage.delete(path)
    lakehouse.nodes.forget(path)  # a deleted version must not live on in the cache


__all__ = ["ExpireResult", "delete_file", "expire_versions", "retained_versions"]
