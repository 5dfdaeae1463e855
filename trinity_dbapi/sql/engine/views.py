"""Views in SQL: CREATE / DROP / SHOW VIEWS.

A view stores its query as text (trinity dialect) with every table name
qualified by the namespace it resolved to at creation, and the columns the
query gave then (names and types, found by running it with ``LIMIT 0``).
Reading a view (its expansion into its query, as of the version read) is
:mod:`.view_expansion`'s, below the queries that read views.

Imports from sql/engine/: duck_run, query, result, session.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.format.definitions import TRINITY_DIALECT, ViewDefinition
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql import model
from trinity_dbapi.sql.engine.duck_run import result_columns
from trinity_dbapi.sql.engine.query import run_query
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.sql.engine.session import Session

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.transaction import Transaction
    from trinity_dbapi.sql.model import TableRef

__all__ = ["create_view", "drop_view", "show_views"]


def create_view(session: Session, stmt: model.CreateView) -> Result:
    """``CREATE [OR REPLACE] VIEW``: bind the query's columns, store its qualified text."""
    namespace, name = session.resolve(stmt.view)
    where = f"{namespace}.{name}"
    if stmt.or_replace and stmt.if_not_exists:
        raise ProgrammingError(
            f"CREATE OR REPLACE VIEW {where} IF NOT EXISTS: the two clauses contradict; "
            "write one of them"
        )
    session.check_writable_namespace(namespace)
    txn = session.writable()
    if stmt.if_not_exists and txn.view_exists(namespace, name):
        return Result()
    query = stmt.query
    for ref in query.tables:  # stored qualified: the view reads the same tables from anywhere
        if ref.table.namespace is None:
            ref.node.set("db", exp.to_identifier(session.namespace))
    refs = [
        dataclasses.replace(ref, table=model.TableName(*session.resolve(ref.table)))
        for ref in query.tables
    ]
    _refuse_cycle(txn, (namespace, name), refs)
    text = query.expression.sql(dialect="trinity")
    subquery = exp.Subquery(
        this=query.expression, alias=exp.TableAlias(this=exp.to_identifier("q"))
    )
    probe = exp.select("*", copy=False).from_(subquery, copy=False).limit(0, copy=False)
    schema = run_query(session, probe, refs, ()).schema
    columns = list(result_columns(schema))
    if stmt.columns:
        if len(stmt.columns) != len(columns):
            raise ProgrammingError(
                f"view {where!r} lists {len(stmt.columns)} column names but its query gives "
                f"{len(columns)} columns ({', '.join(c.name for c in columns)}); list one name "
                "per column"
            )
        columns = [dataclasses.replace(c, name=n) for c, n in zip(columns, stmt.columns)]
    referenced = []
    for ref in refs:
        pair = (str(ref.table.namespace), ref.table.name)
        if pair[0] not in catalog.RESERVED_NAMESPACES and pair not in referenced:
            referenced.append(pair)
    properties = {"comment": stmt.comment} if stmt.comment is not None else {}
    definition = ViewDefinition(
        name=name,
        columns=tuple(columns),
        sql={TRINITY_DIALECT: text},
        referenced=tuple(referenced),
        properties=properties,
    )
    txn.create_view(
        namespace, definition, if_not_exists=stmt.if_not_exists, or_replace=stmt.or_replace
    )
    return Result()


def _refuse_cycle(txn: Transaction, view: tuple[str, str], refs: Sequence[TableRef]) -> None:
    """Refuse a view whose query reads it back through other views (as Postgres does)."""
    seen: set[tuple[str, str]] = set()
    stack: list[tuple[str, str, tuple[tuple[str, str], ...]]]
    stack = [(ref.table.namespace or view[0], ref.table.name, (view,)) for ref in refs]
    while stack:
        namespace, name, path = stack.pop()
        where = (namespace, name)
        if where == view:
            shown = " -> ".join(f"{n}.{v}" for n, v in (*path, where))
            raise ProgrammingError(
                f"view {view[0]}.{view[1]} would read itself ({shown}); a view cannot read "
                "itself, directly or through other views"
            )
        if where in seen or namespace in catalog.RESERVED_NAMESPACES:
            continue
        seen.add(where)
        if txn.view_exists(namespace, name):
            for ref in txn.load_view(namespace, name).referenced:
                stack.append((ref[0], ref[1], (*path, where)))


def drop_view(session: Session, stmt: model.DropView) -> Result:
    """``DROP VIEW [IF EXISTS]``; a table of the name is refused, IF EXISTS or not (as Postgres)."""
    namespace, name = session.resolve(stmt.view)
    session.check_writable_namespace(namespace)
    txn = session.writable()
    if txn.table_exists(namespace, name):
        raise ProgrammingError(
            f"{namespace}.{name} is a table, not a view; drop it with DROP TABLE {namespace}.{name}"
        )
    txn.drop_view(namespace, name, if_exists=stmt.if_exists)
    return Result()


def show_views(session: Session, stmt: model.ShowViews) -> Result:
    """``SHOW VIEWS [IN ns]``: the view names, sorted; the catalog namespaces have none."""
    namespace = stmt.namespace or session.namespace
    names: list[str] = []
    if namespace not in catalog.RESERVED_NAMESPACES:
        txn = session.transaction()
        if stmt.namespace is not None or txn.namespace_exists(namespace):
            names = txn.list_views(namespace)
    table = pa.table({"view_name": pa.array(sorted(names), pa.string())})
    return Result(table, table.num_rows)
