"""Automatic compaction after a write: the table property ``auto_compact.min_files``.

A managed table whose properties hold ``auto_compact.min_files = N`` (a
positive integer, set with ``CREATE TABLE ... WITH`` or ``ALTER TABLE ...
SET PROPERTIES``) is compacted right after a commit that added data files
to it, in the same session, when a partition of the newest version then has
more than N files smaller than the default target size (128 MiB): those
partitions are rewritten as ``CALL system.rewrite_data_files(table,
min_input_files => N + 1)`` would, in a separate commit. The user's write is
committed before and never fails because of it: an error of the compaction
(a conflict with another writer, an interrupt, a bad property value) is
logged on this module's logger and the files stay as
they were, for the next write or a manual call to retry.

The session runs :func:`compact_after_write` after a commit because the
front door registers it there (``session.register_after_commit``, in
:mod:`.dispatch`); the session never names this module.

Imports from sql/engine/: rewrite_files, session.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from trinity_dbapi.errors import NoSuchTableError
from trinity_dbapi.sql.engine.rewrite_files import rewrite_data_files
from trinity_dbapi.sql.engine.session import Session
from trinity_dbapi.tables.compaction import DEFAULT_TARGET_FILE_SIZE

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot
    from trinity_dbapi.lakehouse.transaction import Transaction

__all__ = ["PROPERTY", "compact_after_write"]

#: The table property that turns automatic compaction on.
PROPERTY = "auto_compact.min_files"

_log = logging.getLogger(__name__)


def _min_files(text: str) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 1 else None


def _asks(view: Transaction, namespace: str, name: str) -> bool:
    try:
        return PROPERTY in view.peek_table(namespace, name).properties
    except NoSuchTableError:
        return False


def compact_after_write(
    session: Session, tables: Iterable[tuple[str, str]], committed: Snapshot | None = None
) -> None:
    """Compact those of ``tables`` (just written and committed) whose property asks for it.

    ``committed``: the version the write made, read first to skip the tables
    without the property.
    """
    if session.read_only or session.in_transaction:
        return  # a later statement's transaction must not receive its changes
    if committed is not None:
        # The version just committed says whether any table asks for it,
        # without a request: its root is in memory. Only a table that does
        # pays for learning the latest version.
        written = session.lakehouse.begin(version=committed.version, read_only=True)
        tables = [table for table in tables if _asks(written, *table)]
    for namespace, name in sorted(tables):
        try:
            definition = session.transaction().peek_table(namespace, name)
        except NoSuchTableError:
            session.rollback()
            continue
        text = definition.properties.get(PROPERTY)
        if text is None:
            session.rollback()
            continue
        min_files = _min_files(text)
        if min_files is None:
            session.rollback()
            _log.warning(
                "table %s.%s: property %s = %r is not a positive integer; no automatic "
                "compaction (set it to the number of small files a partition may hold)",
                namespace,
                name,
                PROPERTY,
                text,
            )
            continue
        try:
            done = rewrite_data_files(
                session, namespace, name, DEFAULT_TARGET_FILE_SIZE, None, min_files + 1
            )
        except Exception as exc:  # noqa: BLE001 - never fail the write already committed
            _log.warning(
                "automatic compaction of table %s.%s failed; the write was committed and "
                "its files stay as they are: %s",
                namespace,
                name,
                exc,
            )
            continue
        _log.info(
            "automatic compaction of table %s.%s rewrote %d files into %d",
            namespace,
            name,
            done.column("files_rewritten")[0].as_py(),
            done.column("files_added")[0].as_py(),
        )
