"""Reading ahead: immutable files a caller is about to need, read beside what it waits on.

On a store with round trips, a statement waits first for the check that no
newer version exists, then for its tables' definitions, then for their
dataset metadata. The definitions it will read, in the version it already
knows, are files nobody ever rewrites: they are read in the round of the
check (:func:`latest_version`), so when nothing changed, which is almost
always, the statement finds them in the caches. When a commit came in
between, the bytes read ahead are simply not used: nothing is decided from
them. The history reads the roots it lists :data:`ROOTS_AT_ONCE` at a time
(:func:`roots_of`). A local disk has no round trip to hide: nothing is read
ahead there.

The facade (:mod:`.lakehouse`) passes it the chain's own check for the latest
version.

Imports from lakehouse/: chain, io_pool.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from trinity_dbapi.errors import Error
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import LakehouseDefinition, TableDefinition
from trinity_dbapi.format.locations import is_uri
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse.io_pool import io_pool, worth_reading_ahead
from trinity_dbapi.tree import btree
from trinity_dbapi.tree.node import NodeStore

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import VersionChain
    from trinity_dbapi.storage import Storage

__all__ = ["ROOTS_AT_ONCE", "latest_version", "roots_of"]

#: Roots the history reads at once.
ROOTS_AT_ONCE = 64


def latest_version(
    lakehouse: VersionChain,
    known: int,
    tables: Sequence[tuple[str, str]],
    find: Callable[[], int],
) -> int:
    """The latest version, as ``find()`` finds it, with ``tables``' definitions read in its round.

    Args:
        lakehouse: the lakehouse.
        known: the latest version it has seen (0: none), where the
            definitions are looked up.
        tables: ``(namespace, table)`` pairs the caller is about to load.
        find: the check for the latest version
            (:meth:`VersionChain.latest_version
            <trinity_dbapi.lakehouse.chain.VersionChain.latest_version>`).
    """
    storage = lakehouse.storage
    if not (tables and known and worth_reading_ahead(storage)):
        return find()
    # The check runs here, the definitions beside it: both go out at once.
    reading = io_pool().submit(storage.this_round(partial(_definitions, lakehouse, known, tables)))
    try:
        return find()
    finally:
        reading.result()  # never raises: reading ahead is best effort


def _definitions(lakehouse: VersionChain, version: int, tables: Sequence[tuple[str, str]]) -> None:
    # Node files and definition files only, nothing decided from them: a
    # missing table, an expired version or a damaged file is left for the
    # statement's own read to find and report.
    with contextlib.suppress(Exception):
        if lakehouse.pending is not None:
            _provisionally(lakehouse.storage, version, tables)
            return
        snapshot = lakehouse.load_version(version)
        limits = snapshot.definition.key_limits
        for namespace, table in tables:
            path = snapshot.get(keys.table_key(namespace, table, limits))
            if path is not None:
                lakehouse.definition_cache.load(path, TableDefinition, lakehouse.read_location)


def _provisionally(storage: Storage, version: int, tables: Sequence[tuple[str, str]]) -> None:
    """Read ``tables``' definition files as a lakehouse of the default shape would find them.

    The lakehouse definition that gives the tree's order and the key sizes
    is still on its way (a new connection's first statement: see
    :mod:`~trinity_dbapi.lakehouse.opening`). Nearly every lakehouse keeps
    the defaults; for one that does not, the keys found here are none or
    another file's, and what was read is only bytes of immutable files
    in the cache, which the statement's own lookup never takes on trust.
    """
    default = LakehouseDefinition(name="default")
    nodes = NodeStore(storage, default.order)
    root = nodes.load(root_node_file_name(version))
    found = [
        btree.get(nodes, root, keys.table_key(namespace, table, default.key_limits))
        for namespace, table in tables
    ]
    storage.read_many([path for path in found if path is not None and not is_uri(path)])


def roots_of(lakehouse: VersionChain, versions: Sequence[int]) -> None:
    """Read the roots of ``versions`` the process does not hold into the cache, in one round.

    A missing or unreadable root is left for the version's own read to report.
    """
    storage = lakehouse.storage
    if not worth_reading_ahead(storage):
        return
    names = [lakehouse.root_name(v) for v in versions]
    wanted = [name for name in names if not lakehouse.nodes.holds(name)]
    if len(wanted) > 1:
        storage.concurrently([partial(_read_quietly, storage, name) for name in wanted])


def _read_quietly(storage: Storage, path: str) -> None:
    with contextlib.suppress(Error):
        storage.read(path)
