"""Reading ahead: immutable files a caller is about to need, read beside what it waits on.

On a store with round trips, a statement waits first for the check that no
newer version exists, then for its tables' definitions, then for their
dataset metadata. The definitions it will read, in the version it already
knows, are files nobody ever rewrites: they are read in the round of the
check (:func:`latest_version`), so when nothing changed, which is almost
always, the statement finds them in the caches. When a commit came in
between, the bytes read ahead are simply not used: nothing is decided from
them. The history reads the roots it lists :data:`ROOTS_AT_ONCE` at a time
(:func:`roots`). A local disk has no round trip to hide: nothing is read
ahead there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from trinity_dbapi.errors import Error
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import LakehouseDefinition, TableDefinition
from trinity_dbapi.format.locations import is_uri
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import roots
from trinity_dbapi.lakehouse.transaction import _io_pool
from trinity_dbapi.tree import btree
from trinity_dbapi.tree.node import NodeStore

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse
    from trinity_dbapi.storage import Storage

__all__ = ["ROOTS_AT_ONCE", "latest_version", "roots_of", "worth_it"]

#: Roots the history reads at once.
ROOTS_AT_ONCE = 64


def worth_it(storage: Storage) -> bool:
    """Whether reading ahead saves rounds: a store with round trips, and a cache to fill."""
    return storage.local_root is None and storage.caches_reads


def latest_version(lakehouse: Lakehouse, known: int, tables: Sequence[tuple[str, str]]) -> int:
    """The latest version, with ``tables``' definitions at ``known`` read in the same round.

    Args:
        lakehouse: the lakehouse.
        known: the latest version it has seen (0: none).
        tables: ``(namespace, table)`` pairs the caller is about to load.
    """
    storage = lakehouse.storage
    ahead = worth_it(storage)
    find = partial(roots.find_latest_version, storage, known=known, read_root=ahead)
    if not (tables and known and ahead):
        return find()
    # The check runs here, the definitions beside it: both go out at once.
    reading = _io_pool().submit(storage.this_round(partial(_definitions, lakehouse, known, tables)))
    try:
        return find()
    finally:
        reading.result()  # never raises: reading ahead is best effort


def _definitions(lakehouse: Lakehouse, version: int, tables: Sequence[tuple[str, str]]) -> None:
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


def roots_of(lakehouse: Lakehouse, versions: Sequence[int]) -> None:
    """Read the roots of ``versions`` the process does not hold into the cache, in one round.

    A missing or unreadable root is left for the version's own read to report.
    """
    storage = lakehouse.storage
    if not worth_it(storage):
        return
    names = [root_node_file_name(v) for v in versions]
    wanted = [name for name in names if not lakehouse.nodes.holds(name)]
    if len(wanted) > 1:
        storage.concurrently([partial(_read_quietly, storage, name) for name in wanted])


def _read_quietly(storage: Storage, path: str) -> None:
    with contextlib.suppress(Error):
        storage.read(path)
