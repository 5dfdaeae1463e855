"""SHOW and DESCRIBE: answered from the tree directly, as the catalog tables would.

Each statement's result is exactly what a query over the catalog tables
gives (``SHOW TABLES IN n`` is ``SELECT table_name FROM
information_schema.tables WHERE table_schema = 'n' ORDER BY table_name``),
and the reserved namespaces still run that query. For the user's own
namespaces the rows are built here, without SQL: a table listing is one
key-range scan (no definition file is read), a DESCRIBE one point lookup
and the cached definition. BI tools and SQLAlchemy issue these statements
all day, so they cost what the tree costs: no parse of a rewritten query,
no DuckDB. Result columns are nullable, as DuckDB's would be, so a
cursor's ``description`` is the same either way.

Imports from sql/engine/: query, result, session.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from trinity_dbapi.errors import NoSuchNamespaceError, NoSuchTableError
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.lakehouse.catalog_scope import CatalogScope
from trinity_dbapi.sql import model
from trinity_dbapi.sql import statements as st
from trinity_dbapi.sql.engine.query import run_query
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.sql.engine.session import Session

__all__ = [
    "catalog_query",
    "describe_namespace",
    "describe_table",
    "like_matcher",
    "show_namespaces",
    "show_tables",
]


def catalog_query(session: Session, sql: str, params: tuple[Any, ...] = ()) -> Result:
    """Run one of our own queries over the catalog tables (the reserved namespaces)."""
    (parsed,) = st.parse(sql)
    query = st.to_statement(parsed, params)
    assert isinstance(query, model.Query)
    table = run_query(session, query.expression, query.tables, query.params)
    return Result(table, table.num_rows)


def like_matcher(pattern: str) -> re.Pattern[str]:
    """DuckDB's ``LIKE pattern`` with no ESCAPE clause, as a regular expression.

    ``%`` matches any run of characters, ``_`` exactly one (a newline too);
    everything else, the backslash included, matches itself, case-sensitively.
    Use ``fullmatch``.
    """
    parts = [".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern]
    return re.compile("".join(parts), re.DOTALL)


def _names_result(column: str, names: Iterable[str], like: str | None) -> Result:
    if like is not None:
        matcher = like_matcher(like)
        names = [name for name in names if matcher.fullmatch(name)]
    values = sorted(names)  # code point order: DuckDB's ORDER BY on VARCHAR
    table = pa.table({column: pa.array(values, pa.string())})
    return Result(table, table.num_rows)


def _as_query_result(table: pa.Table, columns: dict[str, str], order_by: str) -> Result:
    """Project ``table`` (source column -> result name), sorted, with nullable fields."""
    table = table.sort_by(order_by).select(list(columns))
    fields = [pa.field(name, table.schema.field(source).type) for source, name in columns.items()]
    result = pa.Table.from_arrays(table.columns, schema=pa.schema(fields))
    return Result(result, result.num_rows)


def show_namespaces(session: Session, stmt: model.ShowNamespaces) -> Result:
    """``SHOW NAMESPACES [LIKE p]``: the user's namespaces and the reserved ones."""
    names = {*session.transaction().list_namespaces(), *catalog.RESERVED_NAMESPACES}
    return _names_result("namespace_name", names, stmt.like)


def show_tables(session: Session, stmt: model.ShowTables) -> Result:
    """``SHOW TABLES [IN n] [LIKE p]``: one key-range scan, no definition read."""
    namespace = stmt.namespace or session.namespace
    if namespace in catalog.RESERVED_NAMESPACES:
        return _names_result("table_name", catalog.catalog_table_names(namespace), stmt.like)
    txn = session.transaction()
    try:
        names = txn.list_tables(namespace)
    except NoSuchNamespaceError:
        if namespace != session.namespace:
            raise
        names = []  # the current namespace may not exist yet: it is created on first use
    return _names_result("table_name", names, stmt.like)


def describe_namespace(session: Session, stmt: model.DescribeNamespace) -> Result:
    """``DESCRIBE NAMESPACE n``: its comment and properties, by one point lookup."""
    if stmt.name in catalog.RESERVED_NAMESPACES:
        return catalog_query(
            session,
            "SELECT schema_name AS namespace_name, 'read-only catalog metadata' AS comment, "
            "MAP {}::MAP(VARCHAR, VARCHAR) AS properties "
            "FROM information_schema.schemata WHERE schema_name = ?",
            (stmt.name,),
        )
    txn = session.transaction()
    if not txn.namespace_exists(stmt.name):
        raise NoSuchNamespaceError(stmt.name)
    scope = CatalogScope(namespaces=frozenset({stmt.name}))
    rows = catalog.catalog_table(txn, txn.snapshot, catalog.SYSTEM, "namespaces", scope)
    columns = {"namespace_name": "namespace_name", "comment": "comment", "properties": "properties"}
    return _as_query_result(rows, columns, "namespace_name")


def describe_table(session: Session, stmt: model.DescribeTable) -> Result:
    """``DESCRIBE TABLE t``: its columns, by one point lookup and the cached definition."""
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
    txn = session.transaction()
    txn.load_table(namespace, name)  # NoSuchTableError names it
    scope = CatalogScope(namespaces=frozenset({namespace}), tables=frozenset({name}))
    rows = catalog.catalog_table(txn, txn.snapshot, catalog.SYSTEM, "columns", scope)
    columns = {
        "column_name": "column_name",
        "data_type": "data_type",
        "is_nullable": "nullable",
        "comment": "comment",
        "is_primary_key": "primary_key",
        "is_partition_key": "partition_key",
    }
    return _as_query_result(rows, columns, "ordinal_position")
