"""Recovery from a damaged version: naming the way back, and the recovery rollback.

When the latest root (or the definition it points at) cannot be read, the
lakehouse cannot be opened the usual way. :func:`damaged` turns the reader's
error into a :class:`DamagedVersionError` naming the newest older version
that does open; ``Lakehouse.open(uri, version=N)`` opens that version pinned;
and a rollback there (:func:`recovery_base`, used by
:func:`blind_commits.rollback`) commits N's content as the version after the
newest existing root, found by file names only: the damaged root is never
parsed. See docs/recovery.md.

:mod:`.opening`, above it, passes it the way to open a version.

Imports from lakehouse/: chain, expired, roots.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from trinity_dbapi.errors import (
    CorruptFileError,
    DamagedVersionError,
    Error,
    LakehouseNotFoundError,
    NoSuchVersionError,
)
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import roots
from trinity_dbapi.lakehouse.chain import Snapshot
from trinity_dbapi.lakehouse.expired import describe, expired_message, was_expired

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import VersionChain
    from trinity_dbapi.storage import Storage

#: How many older versions :func:`damaged` tries before giving up: each try
#: reads a root and a definition, and a longer run of damage is no accident.
MAX_VERSIONS_TRIED = 64


def check_version_exists(storage: Storage, version: int) -> None:
    """Raise unless root ``version`` exists (checked by name: nothing is parsed).

    Raises:
        ProgrammingError: ``version`` is not a version number.
        LakehouseNotFoundError: there is no lakehouse.
        NoSuchVersionError: there is no such root.
    """
    from trinity_dbapi.errors import ProgrammingError

    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 2**32:
        raise ProgrammingError(
            f"version must be a version number (an integer from 0 to 4294967295), not {version!r}"
        )
    if storage.exists(root_node_file_name(version)):
        return
    listed = sorted(roots.listed_versions(storage))
    if not listed:
        raise LakehouseNotFoundError(storage.root_uri)
    # Below the run that ends at the newest root, a version was expired
    # (overrides are in a definition this check does not read: "does not exist").
    if version < listed[-1] and was_expired(listed, version):
        raise NoSuchVersionError(version, listed[-1], expired_message(version, listed))
    raise NoSuchVersionError(
        version,
        listed[-1],
        f"lakehouse version {version} does not exist (the root files are versions "
        f"{describe(listed)}); choose one of those",
    )


def newest_root(storage: Storage) -> int:
    """The highest root version number in storage, by listing and probing names only.

    Listing finds roots beyond a gap (a deleted root) that probing from the
    hint would stop at; probing after it covers a store whose listing lags.
    """
    listed = roots.listed_versions(storage)
    version = max(listed) if listed else roots.find_latest(storage)[0]
    while storage.exists(root_node_file_name(version + 1)):
        version += 1
    return version


def newest_intact(storage: Storage, below: int, opens: Callable[[int], object]) -> int | None:
    """The newest version under ``below`` for which ``opens(version)`` succeeds, or None.

    ``opens`` opens a version, its root and definition fully validated
    (:func:`opening.open_at <trinity_dbapi.lakehouse.opening.open_at>`); it is
    passed in, as opening sits above this module.
    """
    older = sorted((v for v in roots.listed_versions(storage) if v < below), reverse=True)
    for version in older[:MAX_VERSIONS_TRIED]:
        try:
            opens(version)
        except Error:
            continue
        return version
    return None


def damaged(
    storage: Storage,
    version: int,
    exc: CorruptFileError,
    opens: Callable[[int], object],
) -> DamagedVersionError:
    """The error for a version that cannot be opened: the reader's, plus the way back.

    ``opens`` opens an older version, as for :func:`newest_intact`.
    """
    if isinstance(exc, DamagedVersionError):
        return exc
    intact = newest_intact(storage, version, opens)
    return DamagedVersionError(exc.path, exc.problem, version=version, intact=intact)


def recovery_base(lakehouse: VersionChain, target: Snapshot) -> Snapshot:
    """The base of a rollback to ``target`` on a pinned lakehouse.

    Its version is the newest existing root, so the rollback creates the
    version after it; that root is not read (it may be the damaged one). Its
    creation time is the newest readable one between ``target`` and it, so
    creation times keep increasing with the version, as time travel needs.
    """
    newest = newest_root(lakehouse.storage)
    base_root = target.root
    for version in range(newest, target.version, -1):
        try:
            base_root = lakehouse.nodes.load(root_node_file_name(version))
        except Error:
            continue
        break
    return Snapshot(newest, base_root, lakehouse)
