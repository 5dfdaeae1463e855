"""What each SQL statement does: one handler per statement type.

Handlers are looked up in tables (``CONTROL``, ``HANDLERS``) by the type of
the statement model; each receives the session and the statement and
returns a :class:`~trinity_dbapi.sql.engine.session.Result`. DDL stages changes in
the session's transaction through the object operations; SHOW and DESCRIBE
(:mod:`~trinity_dbapi.sql.engine.show`) answer exactly what the catalog
tables show, straight from the tree: one key-range scan or point lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from trinity_dbapi.errors import NoSuchNamespaceError
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql import model
from trinity_dbapi.sql.engine import catalog_answer, ddl, procedures, show, views
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
    """A query's rows stream from DuckDB: the cursor pulls batches as it is read.

    A point query over one catalog table is answered without DuckDB
    (:mod:`~trinity_dbapi.sql.engine.catalog_answer`).
    """
    table = catalog_answer.answer(session, stmt.expression, stmt.tables, stmt.params)
    if table is not None:
        return Result(table, -1)  # -1 as for every query: the rows are counted as read
    if isinstance(stmt.expression, texp.Explain) and stmt.expression.args.get("analyze"):
        plan = run_query(session, stmt.expression, stmt.tables, stmt.params)
        return Result(_with_storage_cost(session, plan), -1)
    reader = run_query(session, stmt.expression, stmt.tables, stmt.params, stream=True)
    return Result(reader, -1)


def _with_storage_cost(session: Session, plan: pa.Table) -> pa.Table:
    """DuckDB's analyzed plan, and a row of what the statement cost the store."""
    used = session.lakehouse.storage.stats.since(session.statement_stats)
    text = (
        f"requests: {used.requests} (reads {used.reads}, metadata {used.exists}, "
        f"lists {used.lists}, writes {used.writes + used.creates}), "
        f"request rounds: {used.rounds}, bytes read: {used.bytes_read}, "
        f"cache hits: {used.cache_hits}"
    )
    row: dict[str, list[str | None]] = {name: [None] for name in plan.schema.names}
    names = plan.schema.names
    row[names[0]] = ["trinity_storage"]
    if len(names) > 1:
        row[names[-1]] = [text]
    return pa.concat_tables([plan, pa.table(row, schema=plan.schema)])


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
    model.ShowNamespaces: show.show_namespaces,
    model.ShowTables: show.show_tables,
    model.DescribeNamespace: show.describe_namespace,
    model.DescribeTable: show.describe_table,
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
    model.CreateView: views.create_view,
    model.DropView: views.drop_view,
    model.ShowViews: views.show_views,
}
