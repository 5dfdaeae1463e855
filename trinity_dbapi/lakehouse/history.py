"""Time travel and history: finding versions by number, timestamp or export name.

Versions are addressable by number (the root file name is the version), and
their creation times strictly increase with the number (the commit protocol
makes sure of it), so the version current at a timestamp is found by binary
search over version numbers: about log2(V) root reads, never a walk along
``previous_root`` pointers. Expiration removes the oldest versions, so the
retained versions are a contiguous run ending at the latest, plus isolated
older versions kept by a per-version override; a missing root met by the
search is below that run, and the overrides are checked by name.

Imports from lakehouse/: chain, read_ahead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from trinity_dbapi.errors import (
    CorruptFileError,
    NoSuchVersionError,
    ProgrammingError,
    StorageFileNotFoundError,
)
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.paths import root_node_version
from trinity_dbapi.lakehouse import read_ahead

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot, VersionChain


@dataclass(frozen=True)
class VersionInfo:
    """One entry of a lakehouse's history.

    Attributes:
        version: the root version number.
        created_at_millis: when it was committed (ms since the epoch, UTC).
        previous_root: the previous root file, None for version 0.
        rollback_from_root: the root this version rolled back from, if any.
        txn_id: the transaction that made the version.
        changed_keys: the tree keys that transaction set or deleted.
        author: who committed it (``connect(..., author=...)``), if recorded.
        commit_message: its commit message (``SET COMMIT MESSAGE``), if recorded.
    """

    version: int
    created_at_millis: int
    previous_root: str | None
    rollback_from_root: str | None
    txn_id: str | None
    changed_keys: tuple[str, ...]
    author: str | None = None
    commit_message: str | None = None

    @classmethod
    def of(cls, snap: Snapshot) -> VersionInfo:
        system = snap.root.system
        return cls(
            snap.version,
            snap.created_at_millis,
            snap.previous_root,
            snap.rollback_from_root,
            snap.latest_txn,
            tuple(sorted(snap.changed_keys())),
            system.get(system_keys.AUTHOR),
            system.get(system_keys.COMMIT_MESSAGE),
        )


def to_millis(timestamp: datetime | float) -> int:
    """Milliseconds since the epoch; a naive datetime is taken as UTC."""
    if isinstance(timestamp, datetime):
        if timestamp.tzinfo is None:
            from datetime import timezone

            timestamp = timestamp.replace(tzinfo=timezone.utc)
        return int(timestamp.timestamp() * 1000)
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float)):
        raise ProgrammingError(
            f"a timestamp must be a datetime or milliseconds since the epoch, not {timestamp!r}"
        )
    return int(timestamp)


def history(lakehouse: VersionChain, *, since: int = 0) -> Iterator[VersionInfo]:
    """Every retained version from ``since`` to the latest, oldest first.

    A version whose root cannot be read is left out, as an expired one is,
    when a later recovery rollback (its ``rollback_from_root`` at or after
    it) went past it: that damaged root stays in place (docs/recovery.md),
    and the history must still list the others. ``check_integrity`` reports
    it, and time travel to it raises ``CorruptFileError`` naming it. Any
    other unreadable root is that error: leaving it out would change the
    history silently.
    """
    latest = lakehouse.latest_version()
    damaged: list[tuple[int, CorruptFileError]] = []  # not yet known to be recovered past
    for version in range(since, latest + 1):
        if (version - since) % read_ahead.ROOTS_AT_ONCE == 0:
            upto = min(version + read_ahead.ROOTS_AT_ONCE, latest + 1)
            read_ahead.roots_of(lakehouse, range(version, upto))
        try:
            snap = _try_snapshot(lakehouse, version)
        except CorruptFileError as exc:
            damaged.append((version, exc))
            continue
        if snap is None:
            continue
        past = root_node_version((snap.rollback_from_root or "").rsplit("/", 1)[-1])
        if past is not None:
            damaged = [(v, exc) for v, exc in damaged if v > past]
        yield VersionInfo.of(snap)
    if damaged:
        raise damaged[0][1]


def newest_versions(
    lakehouse: VersionChain, upto: int, count: int, *, lowest: int = 0
) -> list[VersionInfo]:
    """The ``count`` newest retained versions from ``lowest`` to ``upto``, newest first.

    Walks down from ``upto``, reading about ``count`` roots rather than every
    one. A damaged root met on the way is left out, as :func:`history` leaves
    it out, when a newer version's recovery rollback went past it or
    ``upto`` is not the latest version; otherwise it raises. Damage older than
    the versions returned is not looked at (``check_integrity`` reports it).
    """
    found: list[VersionInfo] = []
    recovered_past = -1  # the newest version a recovery rollback seen so far went past
    strict: bool | None = None
    version = upto
    while version >= max(lowest, 0) and len(found) < count:
        try:
            snap = _try_snapshot(lakehouse, version)
        except CorruptFileError:
            if strict is None:
                strict = upto >= lakehouse.latest_version()
            if strict and version > recovered_past:
                raise
            version -= 1
            continue
        if snap is not None:
            past = root_node_version((snap.rollback_from_root or "").rsplit("/", 1)[-1])
            recovered_past = max(recovered_past, past if past is not None else -1)
            found.append(VersionInfo.of(snap))
        version -= 1
    return found


def oldest_versions(
    lakehouse: VersionChain, candidates: Sequence[int], count: int | None = None
) -> list[VersionInfo]:
    """The retained versions among ``candidates`` (ascending), oldest first; the first ``count``.

    Reads one root per candidate, up to the ``count``-th retained one. A
    damaged root among them makes it fall back to :func:`history` from the
    first candidate, so a damaged root is left out or raises exactly as the
    full history decides (it depends on recovery rollbacks after it).
    """
    found: list[VersionInfo] = []
    for version in candidates:
        if count is not None and len(found) >= count:
            break
        try:
            snap = _try_snapshot(lakehouse, version)
        except CorruptFileError:
            wanted = set(candidates)
            found = [i for i in history(lakehouse, since=candidates[0]) if i.version in wanted]
            return found if count is None else found[:count]
        if snap is not None:
            found.append(VersionInfo.of(snap))
    return found


def versions_created(
    lakehouse: VersionChain, start: int | None, end: int | None
) -> tuple[int, int]:
    """The version numbers ``(lowest, highest)`` created from ``start`` to ``end`` ms (inclusive).

    Creation times increase with the version number, so the versions
    created in an interval are a run of numbers whose ends are found by
    :func:`version_at`'s binary search: about log2(V) root reads per bound
    given (None: unbounded). ``lowest > highest`` when none is. Every
    retained version inside the run was created inside the interval, so the
    caller may stop after the first or last few of it.

    Raises:
        CorruptFileError: the search met a damaged root (the caller falls
            back to reading every version).
    """
    lowest, highest = 0, lakehouse.latest_version()
    if start is not None:
        # NoSuchVersionError: every retained version was created at or after start.
        with contextlib.suppress(NoSuchVersionError):
            lowest = version_at(lakehouse, start - 1) + 1
    if end is not None:
        try:
            highest = version_at(lakehouse, end)
        except NoSuchVersionError:
            highest = -1  # every retained version is newer than end
    return lowest, highest


def version_at(lakehouse: VersionChain, timestamp: datetime | float) -> int:
    """The newest version created at or before ``timestamp``.

    Raises:
        NoSuchVersionError: every retained version is newer than ``timestamp``.
    """
    millis = to_millis(timestamp)
    latest = lakehouse.latest_version()
    lo, hi, found = 0, latest, None
    while lo <= hi:
        mid = (lo + hi) // 2
        snap = _try_snapshot(lakehouse, mid)
        if snap is None or snap.created_at_millis <= millis:
            # A missing root lies below the retained run: search above it.
            if snap is not None:
                found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    if found is None:
        found = _override_version_at(lakehouse, millis)
    if found is None:
        raise NoSuchVersionError(
            -1,
            latest,
            f"no retained version was created at or before {millis} ms since the epoch; "
            "the oldest retained version is newer (older versions were expired)",
        )
    return found


def _override_version_at(lakehouse: VersionChain, millis: int) -> int | None:
    """The newest version kept by a per-version override and created by ``millis``."""
    overrides = lakehouse.definition.maximum_version_age_millis_overrides
    for version in sorted(overrides, reverse=True):
        snap = _try_snapshot(lakehouse, version)
        if snap is not None and snap.created_at_millis <= millis:
            return version
    return None


def _try_snapshot(lakehouse: VersionChain, version: int) -> Snapshot | None:
    try:
        return lakehouse.load_version(version)
    except StorageFileNotFoundError:
        return None
