"""Opening a lakehouse at a version: its root, then its definition, perhaps beside the caller.

Opening the latest version costs three rounds on a store with round trips:
the hint; the hinted root with the check for a newer one; the lakehouse
definition, whose path only the root gives. The first two are waited for,
so a missing lakehouse, refused credentials and an unreadable root are
reported by the open itself. The third is not: the definition is read on
the storage pool while the caller goes on, and whatever first needs it (the
tree's order to parse a node, the key sizes, a commit) waits for it then.
A connection's first statement sends its check for a newer version and its
tables' definitions beside it (:mod:`~trinity_dbapi.lakehouse.read_ahead`),
so opening and that statement share the round instead of taking one each.

A definition that turns out missing or damaged is reported to that first
user as the same :class:`~trinity_dbapi.errors.DamagedVersionError` the open
would have raised, naming the newest version that opens; a read that failed
for another reason (the network) is tried again by the next user. A local
disk has no round trip to hide: there, and for the versions recovery tries,
the definition is read before the open returns.

It makes chains of the class it is given; the facade's ``open`` gives its own.

Imports from lakehouse/: chain, io_pool, recovery, roots.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from trinity_dbapi.errors import CorruptFileError, StorageFileNotFoundError
from trinity_dbapi.format.paths import LATEST_HINT_FILE, root_node_file_name
from trinity_dbapi.lakehouse import recovery, roots
from trinity_dbapi.lakehouse.chain import VersionChain, shape
from trinity_dbapi.lakehouse.io_pool import io_pool, worth_reading_ahead

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import LakehouseDefinition
    from trinity_dbapi.storage import Storage

__all__ = ["Pending", "open_at", "open_lakehouse"]

_L = TypeVar("_L", bound=VersionChain)


class Pending:
    """The definition an open did not wait for, being read on the storage pool.

    Args:
        version: the version opened.
        path: the definition's path, from the root's ``lakehouse_def`` row.
        storage_options: what the lakehouse was opened with (versions
            recovery tries are opened with them too).
    """

    def __init__(
        self, storage: Storage, version: int, path: str, storage_options: Mapping[str, Any] | None
    ) -> None:
        self.version = version
        self.path = path
        self.storage_options = storage_options
        self.lock = threading.Lock()
        #: A forked child has the future but not the thread that settles it.
        self.pid = os.getpid()
        read = partial(_read_definition, storage, version, path)
        #: None once a read failed: the next user reads it again itself.
        self.future: Future[LakehouseDefinition] | None = io_pool().submit(storage.this_round(read))

    def settle(self, lakehouse: VersionChain) -> None:
        """Wait for the definition, and install it into ``lakehouse`` (whose pending read this is).

        Raises:
            DamagedVersionError: it is missing or damaged, or the root is
                (validated now, with the order the definition gives).
            StorageError: the read failed otherwise; the next call reads again.
        """
        if self.pid != os.getpid():
            # A forked child: the parent's read, its thread and its lock are not here.
            self.pid, self.lock, self.future = os.getpid(), threading.Lock(), None
        with self.lock:
            if lakehouse.pending is None:  # another thread settled it meanwhile
                return
            future, self.future = self.future, None
            storage, version = lakehouse.storage, self.version
            read = (
                future.result
                if future is not None
                else partial(_read_definition, storage, version, self.path)
            )
            try:
                definition = _guarded(self.path, read)
                _install(lakehouse, version, self.path, definition)
            except CorruptFileError as exc:
                opens = partial(
                    open_at, type(lakehouse), storage, storage_options=self.storage_options
                )
                raise recovery.damaged(storage, version, exc, opens) from exc
            lakehouse.pending = None


def open_lakehouse(
    cls: type[_L],
    storage: Storage,
    storage_options: Mapping[str, Any] | None,
    *,
    version: int | None,
    defer: bool,
) -> _L:
    """:meth:`Lakehouse.open <trinity_dbapi.lakehouse.lakehouse.Lakehouse.open>`."""
    pinned = version is not None
    opens = partial(open_at, cls, storage, storage_options=storage_options)
    if version is None:
        version, hint = roots.find_latest(storage, read_root=storage.caches_reads)
        # A hint above every root names a committed version whose root is
        # gone: opening the one below would let the next commit re-use its
        # number silently, so it is damage, like an unreadable root.
        missing = None if hint is None or hint <= version else version + 1
    else:
        recovery.check_version_exists(storage, version)
        missing = None
    try:
        if missing is not None:
            raise CorruptFileError(
                root_node_file_name(missing),
                f"the root of version {missing} is missing, yet the latest-version hint "
                f"{LATEST_HINT_FILE!r} says version {hint} was committed",
            )
        lakehouse = opens(version, wait=pinned or not (defer and worth_reading_ahead(storage)))
    except CorruptFileError as exc:
        at = version if missing is None else missing
        raise recovery.damaged(storage, at, exc, opens) from exc
    if pinned:
        lakehouse.pinned_version = version
    return lakehouse


def open_at(
    cls: type[_L],
    storage: Storage,
    version: int,
    storage_options: Mapping[str, Any] | None,
    *,
    wait: bool = True,
) -> _L:
    """Open ``version``, its root parsed; its definition read now, or with ``wait=False`` beside the caller.

    Any reader error is that file's ``CorruptFileError``: no lower layer
    may decide that a damaged file is a bug or a bad URI.
    """
    name = root_node_file_name(version)
    # Read before the order is known: roots.py parses it without one.
    path = _guarded(name, lambda: roots.root_definition_path(storage.read(name), name))
    if not wait:
        lakehouse = cls(storage, None, storage_options=storage_options)
        lakehouse.pending = Pending(storage, version, path, storage_options)
    else:
        definition = _guarded(path, partial(_read_definition, storage, version, path))
        lakehouse = cls(storage, definition, storage_options=storage_options)
        _install(lakehouse, version, path, definition)
    lakehouse.opened_version = lakehouse._known_latest = version
    return lakehouse


def _read_definition(storage: Storage, version: int, path: str) -> LakehouseDefinition:
    return roots.read_definition(storage.read, path, root_node_file_name(version))


def _guarded(path: str, call: Any) -> Any:
    """``call()``, a reader's error (a file missing, a value refused) as ``path``'s ``CorruptFileError``."""
    import pyarrow as pa

    try:
        return call()
    except StorageFileNotFoundError as exc:
        raise CorruptFileError(path, "the file is missing") from exc
    except (ValueError, TypeError, KeyError, IndexError, pa.ArrowException) as exc:
        raise CorruptFileError(path, f"{type(exc).__name__}: {exc}") from exc


def _install(
    lakehouse: VersionChain, version: int, path: str, definition: LakehouseDefinition
) -> None:
    """Give ``lakehouse`` its definition once the root parses with the order it says.

    The root is validated by a node store of its own, not ``lakehouse.nodes``,
    which would wait for this very definition; it is cached for the first
    snapshot.
    """
    config, nodes = shape(lakehouse.storage, definition, lakehouse.storage_options)
    name = root_node_file_name(version)
    _guarded(name, partial(nodes.load, name))
    lakehouse.install(definition, path, (config, nodes))
