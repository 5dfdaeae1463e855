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
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from trinity_dbapi.errors import CorruptFileError, StorageFileNotFoundError
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.node_file import DEFAULT_COMPRESSION
from trinity_dbapi.format.paths import LATEST_HINT_FILE, root_node_file_name
from trinity_dbapi.lakehouse import read_ahead, recovery, roots
from trinity_dbapi.lakehouse.transaction import _io_pool
from trinity_dbapi.tree import btree
from trinity_dbapi.tree.node import NodeStore

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse
    from trinity_dbapi.storage import Storage

__all__ = [
    "COMPRESSION_PROPERTY",
    "Pending",
    "open_at",
    "open_lakehouse",
    "settle",
    "shape",
    "tree_config",
]

#: Lakehouse definition property choosing node file compression (zstd, lz4, none).
COMPRESSION_PROPERTY = "trinity.node-file.compression"

_L = TypeVar("_L", bound="Lakehouse")


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
        self.future: Future[LakehouseDefinition] | None = _io_pool().submit(
            storage.this_round(read)
        )


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
        lakehouse = opens(version, wait=pinned or not (defer and read_ahead.worth_it(storage)))
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


def settle(lakehouse: Lakehouse) -> None:
    """Wait for the definition an open did not wait for, and install it.

    Raises:
        DamagedVersionError: it is missing or damaged, or the root is
            (validated now, with the order the definition gives).
        StorageError: the read failed otherwise; the next call reads again.
    """
    pending = lakehouse.pending
    if pending is None:
        return
    if pending.pid != os.getpid():
        # A forked child: the parent's read, its thread and its lock are not here.
        pending.pid, pending.lock, pending.future = os.getpid(), threading.Lock(), None
    with pending.lock:
        if lakehouse.pending is None:  # another thread settled it meanwhile
            return
        future, pending.future = pending.future, None
        storage, version = lakehouse.storage, pending.version
        read = (
            future.result
            if future is not None
            else partial(_read_definition, storage, version, pending.path)
        )
        try:
            definition = _guarded(pending.path, read)
            _install(lakehouse, version, pending.path, definition)
        except CorruptFileError as exc:
            opens = partial(
                open_at, type(lakehouse), storage, storage_options=pending.storage_options
            )
            raise recovery.damaged(storage, version, exc, opens) from exc
        lakehouse.pending = None


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


def shape(
    storage: Storage, definition: LakehouseDefinition, storage_options: Mapping[str, Any]
) -> tuple[btree.TreeConfig, NodeStore]:
    """The tree shape ``definition`` asks for, and the node store that reads and writes it."""
    compression = definition.properties.get(COMPRESSION_PROPERTY, DEFAULT_COMPRESSION)
    nodes = NodeStore(storage, definition.order, compression=compression)
    nodes.storage_options = storage_options
    return tree_config(definition), nodes


def tree_config(definition: LakehouseDefinition) -> btree.TreeConfig:
    """The tree shape a lakehouse definition asks for."""
    return btree.TreeConfig.from_sizes(
        order=definition.order,
        namespace_name_max_size_bytes=definition.namespace_name_max_size_bytes,
        table_name_max_size_bytes=definition.table_name_max_size_bytes,
        file_name_max_size_bytes=definition.file_name_max_size_bytes,
        node_file_max_size_bytes=definition.node_file_max_size_bytes,
    )


def _install(
    lakehouse: Lakehouse, version: int, path: str, definition: LakehouseDefinition
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
