"""Saved transactions on storage: their records and markers, and what they keep alive.

``SAVE TRANSACTION`` hands a running transaction to another session or
process (:mod:`.handoff` saves and loads). Saving is no commit: main's chain
is never touched. Everything lives in its own folder, ``_transactions/``
(docs/format.md, "Saved transactions"):

* ``<id>.arrow``: the running root node file, the tree as the transaction
  would leave it (upstream's ``running_root_node_file_path``), written like
  a root but in no chain; its non-root nodes are ordinary node files. A
  transaction without changes has none: its running root is its beginning root.
* ``<id>.binpb``: the record, a
  :class:`~trinity_dbapi.format.definitions.TransactionDefinition` (schema
  ID 4), created exclusively and last: the moment the transaction is saved.
* ``<id>.loaded``: the claim, created exclusively by the one ``LOAD`` that wins.
* ``<id>.committed``: written after the loader's commit; holds the version.

Until ``expire_at_millis``, expiration keeps the beginning version of a saved
transaction not committed yet and every version after it (its commit checks
them for conflicts), and garbage collection keeps every file its running root
reaches and its own files; a committed one keeps only its record and
markers, so that LOAD says "committed". After ``expire_at_millis`` it keeps
nothing, and garbage collection deletes its files like any other garbage.

Imports from lakehouse/: chain.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trinity_dbapi.errors import CorruptFileError, SavedTransactionError, StorageFileNotFoundError
from trinity_dbapi.format.definitions import TransactionDefinition
from trinity_dbapi.format.definitions.transaction import (
    TRANSACTIONS_FOLDER,
    is_transaction_file,
    transaction_id_problem,
)

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import VersionChain
    from trinity_dbapi.storage import Storage

__all__ = [
    "HandOff",
    "KeptAlive",
    "committed_path",
    "kept_alive",
    "loaded_path",
    "read_record",
    "record_path",
]


@dataclass
class HandOff:
    """What a transaction's commit needs, as plain data (SAVE / LOAD TRANSACTION).

    A merge is a function, which cannot be saved: SAVE records the keys
    whose every change was a merge, with their current values, and the
    loader rebuilds each as a three-way merge of the table (:mod:`.handoff`).
    """

    writes: dict[str, str | None]
    files: dict[str, bytes]
    reads: set[str]
    ranges: list[tuple[str | None, str | None]]
    required: set[str]
    required_ranges: list[tuple[str | None, str | None]]
    #: Keys whose every change is a merge: how each is recomputed on rebase.
    merges: dict[str, list[Callable[[str | None], str | None]]] = field(default_factory=dict)


def record_path(txn_id: str) -> str:
    """The record (definition file) of saved transaction ``txn_id``."""
    return f"{TRANSACTIONS_FOLDER}{txn_id}.binpb"


def loaded_path(txn_id: str) -> str:
    """The claim file the one LOAD of ``txn_id`` creates."""
    return f"{TRANSACTIONS_FOLDER}{txn_id}.loaded"


def committed_path(txn_id: str) -> str:
    """The marker written once the loader committed ``txn_id``."""
    return f"{TRANSACTIONS_FOLDER}{txn_id}.committed"


def now_millis() -> int:
    return int(time.time() * 1000)


def read_record(storage: Storage, txn_id: str) -> TransactionDefinition:
    """The record of saved transaction ``txn_id``.

    Raises:
        SavedTransactionError: ``txn_id`` is no transaction id, or no saved
            transaction has it (never saved, or expired and collected).
        CorruptFileError: the record is damaged.
    """
    problem = transaction_id_problem(txn_id)
    if problem is not None:
        raise SavedTransactionError(
            str(txn_id),
            "unknown",
            f"LOAD TRANSACTION: {problem}; give the id SAVE TRANSACTION returned",
        )
    path = record_path(txn_id)
    try:
        data = storage.read(path)
    except StorageFileNotFoundError:
        raise SavedTransactionError(
            txn_id,
            "unknown",
            f"LOAD TRANSACTION: no saved transaction has id {txn_id!r} in this lakehouse (it "
            "was never saved here, or it expired and garbage collection removed it); give "
            "the id SAVE TRANSACTION returned, on the lakehouse it was saved in",
        ) from None
    definition = TransactionDefinition.from_bytes(data, path)
    if definition.id != txn_id:
        raise CorruptFileError(path, f"it holds transaction {definition.id!r}, not {txn_id!r}")
    return definition


@dataclass
class KeptAlive:
    """What the saved transactions keep from expiration and garbage collection.

    Attributes:
        files: their own files to keep (records, markers, running roots).
        running_roots: running roots whose trees garbage collection walks.
        oldest_version: the oldest beginning version of a live one on main
            (None: none); expiration keeps it and every version after it.
    """

    files: set[str] = field(default_factory=set)
    running_roots: list[str] = field(default_factory=list)
    oldest_version: int | None = None


def kept_alive(lakehouse: VersionChain, now_ms: int | None = None) -> KeptAlive:
    """What the saved transactions not expired at ``now_ms`` keep (one list, one read each).

    A record that cannot be read keeps all its files (never guess) but no
    version: it cannot be loaded anyway.
    """
    storage = lakehouse.storage
    now = now_millis() if now_ms is None else now_ms
    listed = [p for p in storage.list(TRANSACTIONS_FOLDER) if is_transaction_file(p)]
    by_id: dict[str, list[str]] = {}
    for path in listed:
        by_id.setdefault(path[len(TRANSACTIONS_FOLDER) :].rpartition(".")[0], []).append(path)
    kept = KeptAlive()
    for txn_id, files in sorted(by_id.items()):
        if record_path(txn_id) not in files:
            continue  # a SAVE that never finished, or a collection half done: garbage
        try:
            definition = read_record(storage, txn_id)
        except (CorruptFileError, SavedTransactionError):
            kept.files.update(files)
            continue
        if now >= definition.expire_at_millis:
            continue
        committed = committed_path(txn_id) in files
        running = definition.running_root_node_file_path
        kept.files.update(f for f in files if not (committed and f == running))
        if committed:
            continue
        if running != definition.beginning_root_node_file_path:
            kept.running_roots.append(running)
        if definition.branch == "":
            version = definition.beginning_version
            if kept.oldest_version is None or version < kept.oldest_version:
                kept.oldest_version = version
    return kept
