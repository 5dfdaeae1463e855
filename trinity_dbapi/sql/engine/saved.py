"""SAVE TRANSACTION and LOAD TRANSACTION: a session's transaction handed to another.

``SAVE TRANSACTION`` (inside a transaction) saves the open transaction with
:func:`~trinity_dbapi.lakehouse.handoff.save_transaction` and returns one row,
its id; the session is then outside any transaction, and a ``COMMIT`` there
says the transaction was saved away. ``LOAD TRANSACTION 'id'`` (outside a
transaction) claims the saved transaction and makes it the session's open
transaction, as ``BEGIN`` would open one; ``COMMIT`` commits it, ``ROLLBACK``
abandons it (it cannot be loaded again).

Imports from sql/engine/: result, session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from trinity_dbapi.errors import ProgrammingError, ReadOnlyError
from trinity_dbapi.lakehouse import handoff
from trinity_dbapi.lakehouse.saved_transactions import loaded_path
from trinity_dbapi.sql.engine.result import Result

if TYPE_CHECKING:
    from trinity_dbapi.sql import model
    from trinity_dbapi.sql.engine.session import Session

__all__ = ["load_transaction", "save_transaction"]


def save_transaction(session: Session) -> Result:
    """``SAVE TRANSACTION``: one row, ``transaction_id``.

    Raises:
        ProgrammingError: no transaction is open.
    """
    if not session.in_transaction:
        raise ProgrammingError(
            "SAVE TRANSACTION outside a transaction: there is nothing to save; run BEGIN, "
            "the changes, then SAVE TRANSACTION"
        )
    record = handoff.save_transaction(session.transaction())
    return Result(pa.table({"transaction_id": pa.array([record.id], pa.string())}), 1)


def load_transaction(session: Session, stmt: model.LoadTransaction) -> Result:
    """``LOAD TRANSACTION 'id'``: the saved transaction becomes the session's open one.

    Raises:
        ProgrammingError: a transaction is open here.
        ReadOnlyError: the session is read-only.
        SavedTransactionError: the id is unknown, or the transaction was
            committed, loaded elsewhere, or expired.
    """
    if session.in_transaction and (session.autocommit or session.transaction().has_changes):
        raise ProgrammingError(
            "LOAD TRANSACTION inside an open transaction: a transaction is already in "
            "progress; COMMIT or ROLLBACK it first"
        )
    if session.read_only:
        raise ReadOnlyError(
            "LOAD TRANSACTION: this connection is read-only and could not commit it; "
            "connect with read_only=False to load it"
        )
    txn = handoff.load_transaction(session.lakehouse, stmt.txn_id, retry=session.retry)
    try:
        session.begin(None, txn)
    except BaseException:
        # Not taken after all: give the claim back, so it can be loaded again.
        txn.abort()
        session.lakehouse.storage.delete(loaded_path(txn.id))
        raise
    return Result()
