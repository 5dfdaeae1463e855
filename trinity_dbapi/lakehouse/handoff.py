"""SAVE and LOAD TRANSACTION: a running transaction handed to another session or process.

Upstream TrinityLake's distributed transaction ("advanced write-audit-publish"):
:func:`save_transaction` writes down everything the transaction's commit
needs and closes it in the saving session, which can then neither continue
nor commit it; :func:`load_transaction`, in any process, claims it and
returns a transaction that continues it, whose commit is an ordinary one:
rebased over what was committed meanwhile and checked, at the saved
isolation level, against exactly the keys and ranges the saver read.

Saving is no commit: main's chain is untouched. In order, so that a crash
at any point leaves either nothing loadable or a complete saved transaction:

1. the staged object definition files, and the data files still being
   written in the background, are made durable;
2. the running root (the tree with the staged writes applied) is written to
   ``_transactions/<id>.arrow``, its non-root nodes first;
3. the record ``_transactions/<id>.binpb`` is created exclusively.

Loading checks, and says which: an unknown id, a committed one, one another
session loaded, an expired one; then it exclusively creates the claim
``_transactions/<id>.loaded``, so two loaders never both continue it. The
files and their lifetimes are :mod:`.saved_transactions`'.

Imports from lakehouse/: chain, commit_point, saved_transactions, table_formats, transaction.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import (
    CommitConflictError,
    FileAlreadyExistsError,
    NoSuchVersionError,
    ProgrammingError,
    ReadOnlyError,
    SavedTransactionError,
    StorageError,
)
from trinity_dbapi.format import features
from trinity_dbapi.format.definitions import (
    LakehouseDefinition,
    TableDefinition,
    TransactionDefinition,
)
from trinity_dbapi.format.definitions.transaction import running_root_path
from trinity_dbapi.format.keys import decode_key, is_table_key
from trinity_dbapi.format.paths import table_definition_path
from trinity_dbapi.lakehouse import commit_point
from trinity_dbapi.lakehouse.saved_transactions import (
    HandOff,
    committed_path,
    loaded_path,
    now_millis,
    read_record,
    record_path,
)
from trinity_dbapi.lakehouse.table_formats import table_merge_of
from trinity_dbapi.lakehouse.transaction import IsolationLevel, RetryPolicy, Transaction
from trinity_dbapi.tree import btree

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot, VersionChain

__all__ = ["LoadedTransaction", "load_transaction", "save_transaction"]

#: Upstream's spelling of each isolation level in a saved transaction.
_LEVEL_NAMES = {IsolationLevel.SERIALIZABLE: "SERIALIZABLE", IsolationLevel.SNAPSHOT: "SNAPSHOT"}


def _branch_of(chain: VersionChain) -> str:
    """The branch a chain is ("" for main): the one place SAVE asks it."""
    return chain.branch or ""


def _open_chain(lakehouse: VersionChain, definition: TransactionDefinition) -> VersionChain:
    """The chain a saved transaction runs on: the loading session's, which must be the saver's.

    Raises:
        ProgrammingError: the session is on another branch than the one the
            transaction was saved on (its changes belong to that one).
    """
    saved_on = definition.branch or "main"
    if (lakehouse.branch or "main") != saved_on:
        raise ProgrammingError(
            f"LOAD TRANSACTION {definition.id!r}: it was saved on branch {saved_on!r}, and this "
            f"session is on branch {lakehouse.branch or 'main'!r}; run USE BRANCH {saved_on} "
            "first (its changes belong to that branch)"
        )
    return lakehouse


def save_transaction(txn: Transaction) -> TransactionDefinition:
    """Save ``txn`` for another session or process to load and commit; close it here.

    Returns:
        The saved record; its ``id`` is what LOAD TRANSACTION takes.

    Raises:
        ReadOnlyError: ``txn`` is read-only, or the lakehouse is pinned.
        NotSupportedError: ``txn`` changes the lakehouse definition.
        TransactionClosedError: ``txn`` is no longer active.
    """
    chain = txn.lakehouse
    if txn.read_only:
        raise ReadOnlyError(
            f"SAVE TRANSACTION of transaction {txn.id}: it is read-only, so there is nothing "
            "to commit elsewhere; begin one without read_only to save it"
        )
    chain.require_unpinned("SAVE TRANSACTION")
    state = txn.hand_off()
    branch = _branch_of(chain)
    _require_feature(chain.main_chain)
    base = txn.snapshot
    storage = chain.storage
    storage.create_unique_many(list(state.files.items()))
    storage.settle()  # data files written in the background: durable before the record
    now = max(now_millis(), txn.began_at_millis)
    running = _write_running_root(chain, base, txn.id, state.writes, now)
    deleted = sorted(k for k, v in state.writes.items() if v is None)
    definition = TransactionDefinition(
        id=txn.id,
        isolation_level=_LEVEL_NAMES[txn.isolation],
        beginning_root_node_file_path=base.root.path or chain.root_name(base.version),
        running_root_node_file_path=running,
        began_at_millis=txn.began_at_millis,
        expire_at_millis=txn.began_at_millis + base.definition.txn_ttl_millis,
        writes={k: v for k, v in state.writes.items() if v is not None},
        deleted_keys=deleted,
        read_keys=sorted(state.reads),
        read_ranges=list(state.ranges),
        required_keys=sorted(state.required),
        required_ranges=list(state.required_ranges),
        staged_files=sorted(state.files),
        branch=branch,
        beginning_version=base.version,
        saved_at_millis=now,
        commit_message=txn.message or "",
        merged_keys=sorted(state.merges),
    )
    storage.create_exclusive(record_path(txn.id), definition.to_bytes())
    txn.mark_saved()
    return definition


def _require_feature(chain: VersionChain) -> None:
    """Make the lakehouse require ``saved_transactions`` of writers (once: a definition commit).

    A release that does not know saved transactions would expire the
    versions and collect the files one needs; requiring the feature makes it
    refuse to (docs/format.md, "Required features"). The version this makes
    changes no key, and nothing of the transaction.
    """
    feature = features.SAVED_TRANSACTIONS
    if feature in chain.snapshot().definition.required_writer_features:
        return

    def requiring(definition: LakehouseDefinition) -> LakehouseDefinition:
        required = dict(definition.required_writer_features)
        required.setdefault(feature, features.FIRST_RELEASE[feature])
        return definition.replace(required_writer_features=required)

    with Transaction(chain, chain.snapshot()) as enabling:
        enabling.change_definition(requiring)


def _write_running_root(
    chain: VersionChain, base: Snapshot, txn_id: str, writes: dict[str, str | None], now: int
) -> str:
    """Write the tree as ``writes`` leave it; return its root node file (the beginning's if none)."""
    beginning = base.root.path or chain.root_name(base.version)
    if not writes:
        return beginning
    messages = commit_point.messages(writes, txn_id)
    root = btree.TreeWriter(chain.nodes, chain.tree_config).commit(base.root, messages, txn_id)
    chain.nodes.write_dirty_children(root, now, None)
    system = commit_point.root_system(
        base.version,
        base.definition_path,
        now=now,
        txn=txn_id,
        definition_path=None,
        extra_system=None,
    )
    path = running_root_path(txn_id)
    chain.storage.create_exclusive(path, chain.nodes.encode(root, system))
    return path


class LoadedTransaction(Transaction):
    """A saved transaction continued by its loader; its commit marks it committed.

    It refuses to commit once expired: garbage collection may have removed
    what it needs.
    """

    def __init__(
        self,
        lakehouse: VersionChain,
        snapshot: Snapshot,
        definition: TransactionDefinition,
        **kwargs: Any,
    ) -> None:
        super().__init__(lakehouse, snapshot, **kwargs)
        self.expire_at_millis = definition.expire_at_millis

    def commit(self, *, progress: commit_point.Progress | None = None) -> Snapshot:
        """Commit as any transaction does, then record that it was committed.

        Raises:
            SavedTransactionError: it expired before this commit.
        """
        if self.is_active and now_millis() >= self.expire_at_millis:
            self.abort()
            raise SavedTransactionError(
                self.id,
                "expired",
                f"COMMIT of loaded transaction {self.id}: it expired at "
                f"{self.expire_at_millis} ms (txn_ttl_millis after it began) and garbage "
                "collection may have removed what it needs; nothing was committed, run the "
                "work again (raise the lakehouse's txn_ttl_millis for longer hand-offs)",
            )
        committed = super().commit(progress=progress)
        # Best effort: without the marker a second LOAD still says "loaded".
        with contextlib.suppress(StorageError):  # the commit stands whatever the marker does
            self.lakehouse.storage.write(committed_path(self.id), str(committed.version).encode())
        return committed


def load_transaction(
    lakehouse: VersionChain, txn_id: str, *, retry: RetryPolicy | None = None
) -> LoadedTransaction:
    """Claim saved transaction ``txn_id`` and continue it here; COMMIT commits it.

    Raises:
        SavedTransactionError: the id is unknown, or the transaction was
            committed, loaded by another session, or expired (``state`` says which).
        ProgrammingError: it was saved on another branch than the session's.
        CorruptFileError: its record or a file it staged is damaged.
    """
    storage = lakehouse.storage
    definition = read_record(storage, txn_id)
    committed, loaded = storage.exists_many([committed_path(txn_id), loaded_path(txn_id)])
    if committed:
        version = storage.read(committed_path(txn_id)).decode(errors="replace")[:20]
        raise _refused(txn_id, "committed", f"it was committed already (version {version})")
    if loaded:
        raise _refused(txn_id, "loaded", "another session loaded it already")
    if now_millis() >= definition.expire_at_millis:
        raise _refused(
            txn_id,
            "expired",
            f"it expired at {definition.expire_at_millis} ms (the lakehouse's txn_ttl_millis "
            "after it began)",
        )
    chain = _open_chain(lakehouse, definition)
    try:
        snapshot = chain.snapshot(definition.beginning_version)
    except NoSuchVersionError:
        raise _refused(
            txn_id,
            "expired",
            f"version {definition.beginning_version}, which it began on, was expired",
        ) from None
    files = storage.read_many(list(definition.staged_files))
    writes: dict[str, str | None] = dict(definition.writes)
    writes.update(dict.fromkeys(definition.deleted_keys))
    state = HandOff(
        writes,
        dict(zip(definition.staged_files, files, strict=True)),
        set(definition.read_keys),
        list(definition.read_ranges),
        set(definition.required_keys),
        list(definition.required_ranges),
    )
    try:  # the claim: exactly one loader continues it
        storage.create_exclusive(loaded_path(txn_id), str(now_millis()).encode())
    except FileAlreadyExistsError:
        raise _refused(txn_id, "loaded", "another session loaded it already") from None
    txn = LoadedTransaction(
        chain, snapshot, definition, isolation=definition.isolation_level, retry=retry
    )
    state.merges = {
        key: [_three_way(txn, key, snapshot.get(key), writes[key])]
        for key in definition.merged_keys
    }
    txn.adopt(txn_id, definition.began_at_millis, state)
    if definition.commit_message:
        txn.message = definition.commit_message
    return txn


def _three_way(
    txn: Transaction, key: str, began: str | None, saved: str | None
) -> Callable[[str | None], str | None]:
    """The merge a saved append becomes: its table merged three-way into the newest.

    Unchanged since the transaction began, the key takes the saved value.
    Changed, the table is merged as MERGE BRANCH merges one (the table
    format's registered merge: appends on both sides keep both, a file
    rewritten on both sides conflicts), from the table as the transaction
    began, its saved state merged into the newest.
    """

    def change(current: str | None) -> str | None:
        if current == began:
            return saved
        what = txn.describe_key(key)
        problem = "a concurrent commit created, dropped or replaced it"
        if None not in (current, began, saved) and is_table_key(key):
            assert current is not None and began is not None and saved is not None
            read = partial(txn.read_object_definition, kind=TableDefinition)
            base, ours, theirs = read(began), read(saved), read(current)
            merge = table_merge_of(base.table_format)
            if merge is not None:
                merged = merge(txn, base, ours, theirs)
                if merged.definition is not None:
                    obj = decode_key(key, txn.snapshot.definition.key_limits)
                    path = table_definition_path(obj.namespace, str(obj.table))
                    txn.stage_file(path, merged.definition.to_bytes())
                    return path
                problem = "; ".join(merged.conflicts)
            else:
                problem = f"its format {base.table_format!r} merges no data"
        raise CommitConflictError(
            f"commit conflict on {what}: a concurrent commit changed it after the saved "
            f"transaction {txn.id} began, and its changes do not merge ({problem}). Nothing "
            "was committed; run the transaction again",
            key=key,
        )

    return change


def _refused(txn_id: str, state: str, why: str) -> SavedTransactionError:
    return SavedTransactionError(
        txn_id,
        state,
        f"LOAD TRANSACTION {txn_id!r}: {why}; a saved transaction is loaded and committed "
        "once, before it expires: run the work again in a new transaction",
    )
