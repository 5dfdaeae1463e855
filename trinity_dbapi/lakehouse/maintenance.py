"""Lakehouse upkeep behind one door: ``lakehouse.maintenance``.

* **Rollback** and **compaction** (:mod:`.blind_commits`) commit a rebuilt
  tree: a copy of an older root, or the latest with its buffers flushed.
* **Export** (:mod:`.export`) replicates one version to a target root URI
  (``minimal``, ``partial`` or ``full``), or pins it in place.
* **Expiration** (:mod:`.expiration`) deletes the root files of versions
  past their maximum age, keeping the newest, the latest and exported ones.
* **Garbage collection** (:mod:`.garbage`) deletes every file that no
  retained version and no export reaches, once older than a grace period.

:class:`Maintenance` is the door, as pyiceberg's ``table.maintenance`` is:
each operation is its module's function bound to the lakehouse, so its
signature and docstring are written once, in that module. The ``CALL
system.…`` procedures go through it; the ``Lakehouse`` methods of the same
names are deprecated aliases of it.

The door: nothing in the folder but the facade imports it.

Imports from lakehouse/: blind_commits, chain, expiration, export, garbage.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from trinity_dbapi.lakehouse import blind_commits, expiration, export, garbage
from trinity_dbapi.lakehouse.expiration import ExpireResult, retained_versions
from trinity_dbapi.lakehouse.export import EXPORT_MODES, ExportResult
from trinity_dbapi.lakehouse.garbage import (
    DEFAULT_GRACE_PERIOD_MILLIS,
    GarbageResult,
    reachable_files,
)

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import VersionChain

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

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _bound(
    run: Callable[Concatenate[VersionChain, _P], _R], *, lakehouse_wide: bool = False
) -> Callable[Concatenate[Maintenance, _P], _R]:
    """``run(lakehouse, ...)`` as a method of :class:`Maintenance`, run on its lakehouse.

    ``functools.wraps`` keeps ``run``'s name and docstring, and its signature
    (``inspect.signature`` follows ``__wrapped__``): the lakehouse parameter
    stands where ``self`` stands, so a bound method's signature is the
    operation's own.
    """

    @functools.wraps(run)
    def operation(self: Maintenance, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        # Expiration and collection act on the whole lakehouse, whose
        # versions and files are main's and its branches' alike: from a
        # branch they run on main, which knows every branch.
        lakehouse = self.lakehouse.main_chain if lakehouse_wide else self.lakehouse
        return run(lakehouse, *args, **kwargs)

    operation.__qualname__ = f"Maintenance.{run.__name__}"
    return operation


class Maintenance:
    """The upkeep operations of one lakehouse; get it as ``lakehouse.maintenance``.

    Args:
        lakehouse: the lakehouse they act on.
    """

    def __init__(self, lakehouse: VersionChain) -> None:
        self.lakehouse = lakehouse

    def __repr__(self) -> str:
        return f"Maintenance({self.lakehouse!r})"

    rollback = _bound(blind_commits.rollback)
    compact = _bound(blind_commits.compact)
    export_snapshot = _bound(export.export_snapshot)
    expire_versions = _bound(expiration.expire_versions, lakehouse_wide=True)
    collect_garbage = _bound(garbage.collect_garbage, lakehouse_wide=True)
