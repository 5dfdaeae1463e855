"""``CREATE TABLE [IF NOT EXISTS] t CLONE source [FOR SYSTEM_VERSION AS OF ...]``.

The new table shares the source version's files (no data is copied, read or
listed: :mod:`trinity_dbapi.tables.clones`) and is staged in the session's
transaction like any ``CREATE TABLE``; from then on each table diverges by
copy-on-write (docs/sql.md, "Clones"; docs/datasets.md, decision 25). The
source is read as the statement's time travel clause says: the transaction's
view without one (so a table created in the same transaction can be
cloned), else the version, export, tag or branch head named, through the
same path as ``FROM t FOR SYSTEM_VERSION AS OF ...``.

Imports from sql/engine/: result, session.
"""

from __future__ import annotations

from trinity_dbapi.errors import NotSupportedError, ObjectExistsError, ProgrammingError
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql import model
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.sql.engine.session import DEFAULT_NAMESPACE, Session
from trinity_dbapi.tables.clones import clone_table

__all__ = ["create_table_clone"]


def create_table_clone(session: Session, stmt: model.CreateTableClone) -> Result:
    """Stage a new table sharing the files of ``stmt.source`` as of ``stmt.as_of``.

    Raises:
        ObjectExistsError: the new table exists (without ``IF NOT EXISTS``).
        NoSuchObjectError: the source does not exist (in that version).
        ProgrammingError: the source is a view.
        NotSupportedError: the source is a catalog table, or a table whose
            files are not this lakehouse's.
    """
    namespace, name = session.resolve(stmt.table)
    source_namespace, source_name = session.resolve(stmt.source)
    where = f"{source_namespace}.{source_name}"
    session.check_writable_namespace(namespace)
    if source_namespace in catalog.RESERVED_NAMESPACES:
        raise NotSupportedError(
            f"{where} cannot be cloned: it is a catalog table the lakehouse computes, with "
            f"no files of its own; copy its rows with CREATE TABLE ... AS SELECT * FROM {where}"
        )
    txn = session.writable()
    if txn.table_exists(namespace, name):  # as CTAS: the source is not even read
        if stmt.if_not_exists:
            return Result()
        raise ObjectExistsError("table", f"{namespace}.{name}")
    view, _ = session.view_for(stmt.as_of)
    if view.view_exists(source_namespace, source_name):
        raise ProgrammingError(
            f"{where} is a view, not a table, and only a table can be cloned; copy the "
            f"view's rows with CREATE TABLE ... AS SELECT * FROM {where}, or define another "
            "view with CREATE VIEW"
        )
    source = view.load_table(source_namespace, source_name)
    if namespace == DEFAULT_NAMESPACE and not txn.namespace_exists(namespace):
        txn.create_namespace(namespace)  # "default" is created on first use
    clone = clone_table(session.lakehouse.storage, source, name, where)
    clone.check_new_names(namespace=namespace)
    txn.create_table(namespace, clone)
    return Result()
