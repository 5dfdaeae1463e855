"""What each SQL statement does: one handler per statement type.

Handlers are looked up in tables (``CONTROL``, ``HANDLERS``) by the type of
the statement model; each receives the session and the statement and
returns a :class:`~trinity_dbapi.sql.engine.session.Result`. DDL stages changes in
the session's transaction through the object operations; SHOW and DESCRIBE
are queries over the catalog tables, so they answer from exactly the data
``SELECT * FROM system.tables`` shows; their WHERE clauses name the object,
so the catalog tables are built by point lookups and key range scans
(:mod:`~trinity_dbapi.sql.engine.catalog_pushdown`), never in full.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trinity_dbapi.errors import (
    NoSuchNamespaceError,
    NoSuchTableError,
)
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql import model
from trinity_dbapi.sql import statements as st
from trinity_dbapi.sql.engine import ddl, procedures
from trinity_dbapi.sql.engine import dml as data
from trinity_dbapi.sql.engine.query import run_query
from trinity_dbapi.sql.engine.session import Result, Session

Handler = Callable[[Session, Any], Result]


# -- transaction control (no transaction of their own) -------------------------------


def _begin(session: Session, stmt: model.Begin) -> Result:
    session.begin(stmt.isolation)
    return Result()


def _commit(session: Session, stmt: model.Commit) -> Result:
    session.commit()
    return Result()


def _rollback(session: Session, stmt: model.Rollback) -> Result:
    session.rollback()
    return Result()


def _set_transaction(session: Session, stmt: model.SetTransaction) -> Result:
    session.set_isolation(stmt.isolation)
    return Result()


# -- queries ----------------------------------------------------------------------------


def _query(session: Session, stmt: model.Query) -> Result:
    """A query's rows stream from DuckDB: the cursor pulls batches as it is read."""
    reader = run_query(session, stmt.expression, stmt.tables, stmt.params, stream=True)
    return Result(reader, -1)


def _materialised_query(session: Session, stmt: model.Query) -> Result:
    table = run_query(session, stmt.expression, stmt.tables, stmt.params)
    return Result(table, table.num_rows)


def catalog_query(session: Session, sql: str, params: tuple[Any, ...] = ()) -> Result:
    """Run one of our own queries over the catalog tables (SHOW, DESCRIBE)."""
    (parsed,) = st.parse(sql)
    query = st.to_statement(parsed, params)
    assert isinstance(query, model.Query)
    return _materialised_query(session, query)


def _like(column: str, like: str | None) -> tuple[str, tuple[Any, ...]]:
    return ("", ()) if like is None else (f" AND {column} LIKE ?", (like,))


def _show_namespaces(session: Session, stmt: model.ShowNamespaces) -> Result:
    where, params = _like("schema_name", stmt.like)
    return catalog_query(
        session,
        "SELECT schema_name AS namespace_name FROM information_schema.schemata "
        f"WHERE TRUE{where} ORDER BY namespace_name",
        params,
    )


def _show_tables(session: Session, stmt: model.ShowTables) -> Result:
    namespace = stmt.namespace or session.namespace
    _require_namespace(session, namespace)
    where, params = _like("table_name", stmt.like)
    return catalog_query(
        session,
        "SELECT table_name FROM information_schema.tables "
        f"WHERE table_schema = ?{where} ORDER BY table_name",
        (namespace, *params),
    )


def _describe_namespace(session: Session, stmt: model.DescribeNamespace) -> Result:
    _require_namespace(session, stmt.name, default_ok=False)
    if stmt.name in catalog.RESERVED_NAMESPACES:
        return catalog_query(
            session,
            "SELECT schema_name AS namespace_name, 'read-only catalog metadata' AS comment, "
            "MAP {}::MAP(VARCHAR, VARCHAR) AS properties "
            "FROM information_schema.schemata WHERE schema_name = ?",
            (stmt.name,),
        )
    return catalog_query(
        session,
        "SELECT namespace_name, comment, properties FROM system.namespaces "
        "WHERE namespace_name = ?",
        (stmt.name,),
    )


def _describe_table(session: Session, stmt: model.DescribeTable) -> Result:
    namespace, name = session.resolve(stmt.table)
    if namespace in catalog.RESERVED_NAMESPACES:
        if not catalog.is_catalog_table(namespace, name):
            raise NoSuchTableError(namespace, name)
        return catalog_query(
            session,
            "SELECT column_name, udt_name AS data_type, is_nullable = 'YES' AS nullable, "
            "NULL::VARCHAR AS comment, FALSE AS primary_key, FALSE AS partition_key "
            "FROM information_schema.columns WHERE table_schema = ? AND table_name = ? "
            "ORDER BY ordinal_position",
            (namespace, name),
        )
    session.transaction().load_table(namespace, name)  # NoSuchTableError names it
    return catalog_query(
        session,
        "SELECT column_name, data_type, is_nullable AS nullable, comment, "
        "is_primary_key AS primary_key, is_partition_key AS partition_key "
        "FROM system.columns WHERE namespace_name = ? AND table_name = ? "
        "ORDER BY ordinal_position",
        (namespace, name),
    )


def _require_namespace(session: Session, namespace: str, *, default_ok: bool = True) -> None:
    if namespace in catalog.RESERVED_NAMESPACES:
        return
    if default_ok and namespace == session.namespace:
        return  # the current namespace may not exist yet: it is created on first use
    if not session.transaction().namespace_exists(namespace):
        raise NoSuchNamespaceError(namespace)


def _use(session: Session, stmt: model.Use) -> Result:
    namespace = stmt.namespace
    ordinary = namespace not in catalog.RESERVED_NAMESPACES and namespace != "default"
    if ordinary and not session.transaction().namespace_exists(namespace):
        raise NoSuchNamespaceError(namespace)
    session.namespace = namespace
    return Result()


CONTROL: Mapping[type, Handler] = {
    model.Begin: _begin,
    model.Commit: _commit,
    model.Rollback: _rollback,
    model.SetTransaction: _set_transaction,
    model.Call: procedures.call,
}

HANDLERS: Mapping[type, Handler] = {
    model.Query: _query,
    model.ShowNamespaces: _show_namespaces,
    model.ShowTables: _show_tables,
    model.DescribeNamespace: _describe_namespace,
    model.DescribeTable: _describe_table,
    model.ShowCreateTable: ddl.show_create_table,
    model.Use: _use,
    model.CreateNamespace: ddl.create_namespace,
    model.DropNamespace: ddl.drop_namespace,
    model.AlterNamespace: ddl.alter_namespace,
    model.CreateTable: ddl.create_table,
    model.DropTable: ddl.drop_table,
    model.AlterTable: ddl.alter_table,
    model.Dml: data.dml,
    model.TruncateTable: data.truncate,
    model.CreateTableAs: data.create_table_as,
    model.CreateIndex: data.create_index,
    model.DropIndex: data.drop_index,
}
