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

Imports from sql/engine/: result, session; inside functions: query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from trinity_dbapi.errors import NoSuchNamespaceError, NoSuchTableError
from trinity_dbapi.format import arrow_values
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.lakehouse.catalog_scope import CatalogScope
from trinity_dbapi.sql import model
from trinity_dbapi.sql import statements as st
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
    # Here: the query engine imports DuckDB, which a listing of names never needs.
    from trinity_dbapi.sql.engine.query import run_query

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
    # Not pa.array, which imports pandas: a new `trinity DIR -c .tables` paid 0.2 s for it.
    table = pa.Table.from_arrays([arrow_values.array(values, pa.string())], names=[column])
    return Result(table, table.num_rows)


def _as_query_result(
    name: str, rows: Iterable[Mapping[str, Any]], columns: dict[str, str], order_by: str
) -> Result:
    """Project rows of ``system.<name>`` (source column -> result name), sorted, nullable fields.

    Sorted in Python and built by :func:`~trinity_dbapi.format.arrow_values.array`:
    a DESCRIBE's few rows need neither pyarrow.compute nor pandas (each a
    tenth of a second to import in a new process).
    """
    schema = catalog.catalog_schema(catalog.SYSTEM, name)
    ordered = sorted(rows, key=lambda row: row[order_by])
    types = {source: schema.field(source).type for source in columns}
    fields = [pa.field(result, types[source]) for source, result in columns.items()]
    arrays = [
        arrow_values.array([row.get(source) for row in ordered], types[source])
        for source in columns
    ]
    result = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    return Result(result, result.num_rows)


def show_namespaces(session: Session, stmt: model.ShowNamespaces) -> Result:
    """``SHOW NAMESPACES [LIKE p]``: the user's namespaces and the reserved ones."""
    names = {*session.transaction().list_namespaces(), *catalog.RESERVED_NAMESPACES}
    return _names_result("namespace_name", names, stmt.like)


def show_tables(session: Session, stmt: model.ShowTables) -> Result:
    """``SHOW TABLES [IN n] [LIKE p]``: one key-range scan, no definition read.

    Without ``IN``, when the current namespace holds no table (or does not
    exist yet, as ``default`` after the demo), the tables of every user
    namespace, each named ``namespace.table`` in the same one column
    ``table_name`` (``LIKE`` matches the table's own name): what a user can
    write in a query, found without knowing where it is. A key-range scan per
    namespace.
    """
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
    if names or stmt.namespace is not None:
        return _names_result("table_name", names, stmt.like)
    matcher = None if stmt.like is None else like_matcher(stmt.like)
    qualified = [
        f"{where}.{name}"
        for where in txn.list_namespaces()
        for name in txn.list_tables(where)
        if matcher is None or matcher.fullmatch(name)
    ]
    return _names_result("table_name", qualified, None)


def describe_namespace(session: Session, stmt: model.DescribeNamespace) -> Result:
    """``DESCRIBE NAMESPACE n``: its comment and properties, by one point lookup."""
    if stmt.name in catalog.RESERVED_NAMESPACES:
        return catalog_query(
            session,
            "SELECT schema_name AS namespace_name, 'read-only catalog metadata' AS comment, "
            "CAST(map() AS MAP(VARCHAR, VARCHAR)) AS properties "
            "FROM information_schema.schemata WHERE schema_name = ?",
            (stmt.name,),
        )
    txn = session.transaction()
    if not txn.namespace_exists(stmt.name):
        raise NoSuchNamespaceError(stmt.name)
    scope = CatalogScope(namespaces=frozenset({stmt.name}))
    rows = catalog.catalog_rows(txn, txn.snapshot, catalog.SYSTEM, "namespaces", scope)
    columns = {"namespace_name": "namespace_name", "comment": "comment", "properties": "properties"}
    return _as_query_result("namespaces", rows, columns, "namespace_name")


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
    rows = catalog.catalog_rows(txn, txn.snapshot, catalog.SYSTEM, "columns", scope)
    columns = {
        "column_name": "column_name",
        "data_type": "data_type",
        "is_nullable": "nullable",
        "comment": "comment",
        "is_primary_key": "primary_key",
        "is_partition_key": "partition_key",
    }
    return _as_query_result("columns", rows, columns, "ordinal_position")
