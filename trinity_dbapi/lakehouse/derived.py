"""Files derived from the newest version of each table, for readers other than ours.

A managed table publishes Kartothek's main metadata file
(``<dataset uuid>.by-dataset-metadata.json`` at the lakehouse root) so that
Kartothek finds the dataset unmodified; see docs/datasets.md. The table
formats that derive files register them in
:mod:`trinity_dbapi.lakehouse.table_formats`; this module only follows them.

The rule for derived files: the tree stays the only source of truth and
nothing of ours reads them. They are written **after** the commit point, best
effort: a failure to write them never fails a committed transaction (it is
logged), and the next commit of the table, or ``CALL system.sync_kartothek()``
(:func:`publish_tables`), rewrites them. Two writers committing the same table
at once may leave the older state in the file (the later commit point's writer
may publish first); the next commit or a sync corrects it. Garbage collection
keeps the derived files of the newest version's tables (:func:`live_derived_files`)
and deletes the others (dropped tables).

Imports from lakehouse/: chain, table_formats.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import TableDefinition
from trinity_dbapi.lakehouse.table_formats import Publish, derived_files_of

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot, VersionChain

_log = logging.getLogger(__name__)

#: Prefix of every table key (schema ID 2).
_TABLES = keys.encode_schema_id(keys.TABLE_SCHEMA_ID)


@dataclass(frozen=True)
class Published:
    """The derived files written for one table."""

    namespace: str
    table: str
    table_format: str
    paths: tuple[str, ...]


def _tables(
    lakehouse: VersionChain,
    snapshot: Snapshot,
    table_keys: Iterable[str] | None,
    staged: Mapping[str, bytes] | None = None,
) -> list[tuple[str, str, TableDefinition]]:
    """(namespace, table, definition) of the given table keys (all when None) in ``snapshot``.

    ``staged``: definition files a commit just wrote, by path (spares their reads).
    """

    if table_keys is None:
        found = list(snapshot.scan_prefix(_TABLES))
    else:
        found = []
        for key in table_keys:
            location = snapshot.get(key)
            if location is not None:  # dropped: garbage collection removes its files
                found.append((key, location))
    limits = snapshot.definition.key_limits
    result = []
    for key, location in found:
        if not keys.is_table_key(key):
            continue
        ident = keys.decode_key(key, limits)
        data = staged.get(location) if staged is not None else None
        if data is not None:
            # The commit's own bytes: no read, and (as staged files never are)
            # not put in the definition cache, which fills on first read.
            definition = TableDefinition.from_bytes(data, location)
        else:
            definition = lakehouse.definition_cache.load(
                location, TableDefinition, lakehouse.read_location
            )
        result.append((ident.namespace, str(ident.table), definition))
    return result


def publish_tables(
    lakehouse: VersionChain,
    snapshot: Snapshot,
    table_keys: Iterable[str] | None = None,
    *,
    staged: Mapping[str, bytes] | None = None,
    base: Snapshot | None = None,
) -> list[Published]:
    """Write the derived files of the tables ``table_keys`` (every table when None).

    Args:
        lakehouse: the lakehouse.
        snapshot: the version whose tables are published (the newest, normally).
        table_keys: tree keys of the tables to publish; keys of absent tables
            and of other objects are skipped.
        staged: definition files the commit just wrote, by path (not read again).
        base: the version the commit was made on: a file that would hold
            what it already holds is not written again (None: write all).

    Returns:
        One entry per table whose format derives files, in key order.

    Raises:
        Error: reading a definition or writing a file failed (as raised).
    """
    jobs = []
    for namespace, name, table in _tables(lakehouse, snapshot, table_keys, staged):
        found = derived_files_of(table.table_format)
        if found is not None:
            jobs.append((namespace, name, table, partial(_publish_one, lakehouse, base, found[0])))
    # The tables' files side by side: a commit (a merge) that changed a
    # hundred tables costs one round of derived files, not a hundred.
    written = lakehouse.storage.concurrently(
        [partial(job, namespace, name, table) for namespace, name, table, job in jobs]
    )
    return [
        Published(namespace, name, table.table_format, tuple(paths))
        for (namespace, name, table, _), paths in zip(jobs, written, strict=True)
        if paths
    ]


def _publish_one(
    lakehouse: VersionChain,
    base: Snapshot | None,
    publish: Publish,
    namespace: str,
    name: str,
    table: TableDefinition,
) -> list[str]:
    previous = None if base is None else _definition_in(lakehouse, base, namespace, name)
    return list(publish(lakehouse.storage, table, previous))


def _definition_in(
    lakehouse: VersionChain, snapshot: Snapshot, namespace: str, name: str
) -> TableDefinition | None:
    """The table's definition in ``snapshot`` (already read by the commit), or None."""
    key = keys.table_key(namespace, name, snapshot.definition.key_limits)
    location = snapshot.get(key)
    if location is None:
        return None
    return lakehouse.definition_cache.load(location, TableDefinition, lakehouse.read_location)


def publish_after_commit(
    lakehouse: VersionChain,
    snapshot: Snapshot,
    table_keys: Iterable[str] | None,
    staged: Mapping[str, bytes] | None = None,
    *,
    base: Snapshot | None = None,
) -> None:
    """:func:`publish_tables`, best effort: a failure is logged, never raised.

    Called after the commit point: the version is committed whatever happens here.
    """
    table_keys = None if table_keys is None else [k for k in table_keys if keys.is_table_key(k)]
    if table_keys == []:
        return
    try:
        publish_tables(lakehouse, snapshot, table_keys, staged=staged, base=base)
    except Exception as exc:  # noqa: BLE001 - the commit stands; the next one corrects it
        _log.warning(
            "version %d is committed, but writing the derived files of its tables "
            "(Kartothek's main metadata files) failed: %s; CALL system.sync_kartothek() "
            "rewrites them (the next commit of each table rewrites its main metadata file)",
            snapshot.version,
            exc,
        )


def live_derived_files(lakehouse: VersionChain, snapshot: Snapshot) -> set[str]:
    """Paths of the derived files of every table of ``snapshot`` (garbage collection keeps them)."""
    live: set[str] = set()
    for _, _, table in _tables(lakehouse, snapshot, None):
        found = derived_files_of(table.table_format)
        if found is not None:
            live.update(found[1](lakehouse.storage, table))
    return live


__all__ = ["Published", "live_derived_files", "publish_after_commit", "publish_tables"]
