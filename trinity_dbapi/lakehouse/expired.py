"""Telling a reader of an expired version apart from a damaged lakehouse.

A reader pins one version and reads its files as it goes: a transaction, a
connection opened with ``version=N``, a time-travel query, a cursor still
fetching. Meanwhile ``expire_versions`` may delete that version's root and
``collect_garbage`` the files only it reached; the reader's next read then
finds a file missing, which on its own looks exactly like damage. Telling
them apart only costs requests on that error path:

* the missing file is really gone (a file that is there but unreadable is
  damage, whatever happened to its version);
* the pinned version's root is gone too (garbage collection never deletes a
  file a retained root reaches, so with the root still there the file was
  lost: damage);
* and the version lies where expiration leaves holes. Creation times grow
  with the version, so expiration deletes the oldest versions first; the
  only ones it keeps below an expired version are those an export pins in
  place or a per-version maximum age keeps longer. So the version was
  expired when it has a per-version maximum age of its own, or when every
  retained version below it is so pinned. A root missing above a retained
  version that nothing pins is a lost root: damage.

Then the reader gets :class:`VersionExpiredError` instead of
:class:`CorruptFileError`, whose advice (restore, roll back) would throw away
good commits. Time travel to a version whose root is already gone gets
:func:`missing_version`'s ``NoSuchVersionError``, which says it was expired.

What it reads of a lakehouse is its own small :class:`Reader` protocol, so that
:mod:`.chain` can call it from every read that fails.

Imports from lakehouse/: roots.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from trinity_dbapi.errors import (
    CorruptFileError,
    Error,
    NoSuchVersionError,
    VersionExpiredError,
)
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.locations import is_uri
from trinity_dbapi.format.paths import root_node_file_name, root_node_version
from trinity_dbapi.lakehouse import roots

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import LakehouseDefinition
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tree.node import NodeStore


class Reader(Protocol):
    """What this module reads of a lakehouse (a :class:`~trinity_dbapi.lakehouse.chain.VersionChain`)."""

    @property
    def storage(self) -> Storage: ...

    @property
    def nodes(self) -> NodeStore: ...

    def latest_version(self) -> int: ...

    def read_definition(self, path: str, *, referrer: str | None = None) -> LakehouseDefinition: ...


def expired_error(
    lakehouse: Reader, version: int, created_at_millis: int, exc: CorruptFileError
) -> Error:
    """The error for a file of pinned ``version`` that a read found damaged or missing.

    Args:
        lakehouse: the lakehouse read.
        version: the version the reader is pinned to (negative: an export
            read by name, never expired).
        created_at_millis: when that version was created (from its root,
            which the reader holds), to say what expired it.
        exc: the reader's error.

    Returns:
        :class:`VersionExpiredError` when the version was expired and garbage
        collection deleted the file; otherwise ``exc`` itself (damage).
    """
    storage = lakehouse.storage
    local = _local_path(storage, exc.path)
    if version < 0 or local is None:
        return exc  # a file of another lakehouse (an export's): not ours to judge
    try:
        if storage.exists(local) or storage.exists(root_node_file_name(version)):
            return exc
        listed = sorted(roots.listed_versions(storage))
    except Error:
        return exc  # the store fails now: keep the reader's own error
    if not listed or version >= listed[-1]:
        return exc
    definition = _definition(lakehouse, listed[-1])
    if definition is None or not was_expired(listed, version, definition):
        return exc
    retention, why = _what_expired(definition, version, created_at_millis)
    return VersionExpiredError(version, exc.path, retention=retention, why=why, latest=listed[-1])


def missing_version(lakehouse: Reader, version: int) -> NoSuchVersionError:
    """The error for time travel to ``version``, whose root file does not exist.

    Says the version was expired when it was (see :func:`was_expired`), and
    which versions are retained; a list request and the newest root and
    definition (cached, as a rule), on this error path only.
    """
    latest = lakehouse.latest_version()
    try:
        listed = sorted(roots.listed_versions(lakehouse.storage))
    except Error:
        listed = []
    definition = _definition(lakehouse, listed[-1]) if listed else None
    if listed and version < listed[-1] and was_expired(listed, version, definition):
        return NoSuchVersionError(version, latest, expired_message(version, listed))
    return NoSuchVersionError(version, latest)


def expired_message(version: int, listed: Sequence[int]) -> str:
    """What :class:`NoSuchVersionError` says of ``version``, expired; ``listed`` ascending."""
    return (
        f"lakehouse version {version} was expired: version expiration deleted its root file, "
        f"so it can no longer be read; the retained versions are {describe(listed)}: choose "
        "one of those (SELECT version FROM system.versions lists them), and raise "
        "maximum_version_age_millis or minimum_versions_to_keep to keep versions longer"
    )


def was_expired(
    listed: Sequence[int], version: int, definition: LakehouseDefinition | None = None
) -> bool:
    """Whether ``version``, whose root is not among ``listed``, was expired rather than lost.

    Args:
        listed: the versions whose root files exist, ascending.
        version: a version below the newest whose root is gone.
        definition: the newest definition: its per-version maximum ages and
            in-place exports are what expiration keeps below an expired
            version (None: nothing is).
    """
    pinned: set[int] = set()
    if definition is not None:
        if version in definition.maximum_version_age_millis_overrides:
            return True
        pinned.update(definition.maximum_version_age_millis_overrides)
        for location in definition.exported_snapshots.values():
            exported = None if is_uri(location) else root_node_version(location)
            if exported is not None:
                pinned.add(exported)
    return all(kept in pinned for kept in listed if kept < version)


def describe(listed: Sequence[int]) -> str:
    """Ascending versions as runs: ``2, 5 to 9``."""
    runs: list[list[int]] = []
    for version in listed:
        if runs and version == runs[-1][1] + 1:
            runs[-1][1] = version
        else:
            runs.append([version, version])
    return ", ".join(str(lo) if lo == hi else f"{lo} to {hi}" for lo, hi in runs)


def _local_path(storage: Storage, path: str) -> str | None:
    if not is_uri(path):
        return path
    if path.startswith(storage.root_uri):
        return path[len(storage.root_uri) :]
    return None


def _definition(lakehouse: Reader, version: int) -> LakehouseDefinition | None:
    """The definition of ``version`` (the newest): the retention that expired the reader's."""
    name = root_node_file_name(version)
    try:
        root = lakehouse.nodes.load(name)
        return lakehouse.read_definition(root.system[system_keys.LAKEHOUSE_DEF], referrer=name)
    except (Error, KeyError):
        return None


def _what_expired(
    definition: LakehouseDefinition | None, version: int, created_at_millis: int
) -> tuple[str, str]:
    """``(retention, why)`` of :class:`VersionExpiredError`.

    The newest definition holds the retention that expiration applied (it
    reads the latest one); a version younger than the maximum age was
    expired by a call that asked for more (``older_than``, ``retain_last``).
    """
    if definition is None:
        return "expire_versions", "by expire_versions"
    override = definition.maximum_version_age_millis_overrides.get(version)
    if override is not None:
        why = (
            f"by its own maximum age, maximum_version_age_millis_overrides[{version}] = "
            f"{override} ms ({duration(override)})"
        )
        return "maximum_version_age_millis_overrides", why
    age = definition.maximum_version_age_millis
    if int(time.time() * 1000) - created_at_millis > age:
        why = (
            f"by the retention policy, older than maximum_version_age_millis = {age} ms "
            f"({duration(age)}) and not among the newest minimum_versions_to_keep = "
            f"{definition.minimum_versions_to_keep} versions"
        )
        return "maximum_version_age_millis", why
    why = (
        "by an explicit expire_versions call, with older_than or retain_last, before the "
        f"retention policy's maximum age of {age} ms ({duration(age)})"
    )
    return "expire_versions", why


def duration(millis: int) -> str:
    """``millis`` in the largest whole unit: ``7 days``, ``90 minutes``, ``1500 ms``."""
    for unit, size in (("day", 86_400_000), ("hour", 3_600_000), ("minute", 60_000)):
        if millis >= size and millis % size == 0:
            count = millis // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    if millis >= 1000 and millis % 1000 == 0:
        return f"{millis // 1000} s"
    return f"{millis} ms"


__all__ = [
    "describe",
    "duration",
    "expired_error",
    "expired_message",
    "missing_version",
    "was_expired",
]
