"""Queries run in DuckDB over the tables of a pinned lakehouse version.

Each table reference of a query is resolved to the snapshot it reads (the
session's transaction, or the version its ``FOR SYSTEM_VERSION`` /
``FOR SYSTEM_TIME`` clause names), materialised as an Arrow table (catalog
metadata) or a scan of the table's data, registered in the session's DuckDB
connection under a private name, and the reference is rewritten to that name.
DuckDB then plans and executes the whole statement: joins, filters,
aggregates and subqueries are DuckDB's, never ours.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from trinity_dbapi.errors import (
    DataError,
    Error,
    InternalError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
)
from trinity_dbapi.sql import arrow_types, catalog

if TYPE_CHECKING:
    from trinity_dbapi.objects import ObjectOperations
    from trinity_dbapi.sql.session import Session
    from trinity_dbapi.sql.statements import AsOf, TableRef
    from trinity_dbapi.transaction import Transaction

_REF_KEY = "trinity_ref"
_names = itertools.count()


def run_query(
    session: Session, expression: exp.Expression, refs: Sequence[TableRef], params: Sequence[Any]
) -> pa.Table:
    """Execute ``expression`` (with ``refs``, its table references) and return its rows.

    Args:
        session: supplies the transaction, the current namespace and DuckDB.
        expression: the parsed query; it is not modified.
        refs: the real table references of ``expression``.
        params: values of the numbered placeholders, in order.
    """
    for i, ref in enumerate(refs):
        ref.node.meta[_REF_KEY] = i
    try:
        query = expression.copy()  # meta is copied with the nodes
    finally:
        for ref in refs:
            ref.node.meta.pop(_REF_KEY, None)
    duck = session.duckdb()
    registered: list[str] = []
    try:
        resolved: dict[tuple[str, str, AsOf | None], str] = {}
        for node in list(query.find_all(exp.Table)):
            index = node.meta.pop(_REF_KEY, None)
            if index is None:
                continue
            ref = refs[index]
            namespace = ref.table.namespace or session.namespace
            key = (namespace, ref.table.name, ref.as_of)
            name = resolved.get(key)
            if name is None:
                name = f"__trinity_{next(_names)}_{uuid.uuid4().hex[:8]}"
                duck.register(name, _materialise(session, namespace, ref.table.name, ref.as_of))
                registered.append(name)
                resolved[key] = name
            _rewrite(node, name)
        return execute_duckdb(duck, query.sql(dialect="duckdb"), params)
    finally:
        for name in registered:
            duck.unregister(name)


def execute_duckdb(duck: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any]) -> pa.Table:
    """Run ``sql`` in DuckDB with positional ``params``; DuckDB errors become ours."""
    try:
        # A relation converts to Arrow without the extra copy a DB-API result makes.
        relation = duck.sql(sql, params=list(params) or None)
        if relation is None:  # not a query: no rows
            return pa.table({})
        # DuckDB 1.4 renamed arrow() to to_arrow_table().
        to_arrow = getattr(relation, "to_arrow_table", None) or relation.arrow
        table: pa.Table = to_arrow()
        return table
    except duckdb.Error as exc:
        raise translate_duckdb_error(exc) from exc


def _rewrite(node: exp.Table, name: str) -> None:
    """Point ``node`` at the registered relation ``name``, keeping its alias."""
    alias = node.args.get("alias")
    if alias is None:
        # Unaliased references are qualified by their table name in the query
        # (``t.col``): keep that name working.
        alias = exp.TableAlias(this=exp.to_identifier(node.name, quoted=True))
    node.set("version", None)
    node.set("db", None)
    node.set("catalog", None)
    node.set("this", exp.to_identifier(name, quoted=True))
    node.set("alias", alias)


def _materialise(session: Session, namespace: str, table: str, as_of: AsOf | None) -> pa.Table:
    view, snapshot = session.view_for(as_of)
    if namespace in catalog.RESERVED_NAMESPACES:
        return catalog.catalog_table(view, snapshot, namespace, table)
    return table_scan(view, namespace, table)


def table_scan(view: ObjectOperations | Transaction, namespace: str, table: str) -> pa.Table:
    """The rows of a user table as this view sees them.

    Tables hold no data files yet: the scan is empty, with the table's exact
    Arrow schema, so queries bind and type-check against the declared columns.
    """
    definition = view.load_table(namespace, table)  # NoSuchTableError names it
    return arrow_types.arrow_schema(definition).empty_table()


# -- DuckDB errors ------------------------------------------------------------------

# DuckDB's exception classes and the PEP 249 class each maps to; looked up by
# name so a DuckDB version without one of them still imports.
_DUCKDB_ERRORS: tuple[tuple[str, type[Error]], ...] = (
    ("ParserException", ProgrammingError),
    ("BinderException", ProgrammingError),
    ("CatalogException", ProgrammingError),
    ("SyntaxException", ProgrammingError),
    ("NotImplementedException", NotSupportedError),
    ("PermissionException", NotSupportedError),
    ("ConversionException", DataError),
    ("OutOfRangeException", DataError),
    ("InvalidInputException", DataError),
    ("TypeMismatchException", DataError),
    ("ConstraintException", DataError),
    ("InvalidTypeException", DataError),
    ("InternalException", InternalError),
    ("InterruptException", OperationalError),
    ("OutOfMemoryException", OperationalError),
    ("IOException", OperationalError),
)


def translate_duckdb_error(exc: duckdb.Error) -> Error:
    """The error of our hierarchy that corresponds to a DuckDB error."""
    message = str(exc)
    cls: type[Error] = OperationalError
    for name, candidate in _DUCKDB_ERRORS:
        duck_cls = getattr(duckdb, name, None)
        if duck_cls is not None and isinstance(exc, duck_cls):
            cls = candidate
            break
    # References carry their table name as alias, so DuckDB's messages name
    # the user's tables; the private relation names never reach the user.
    return cls(f"query failed in DuckDB: {message}")
