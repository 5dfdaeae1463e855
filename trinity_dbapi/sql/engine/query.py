"""Queries run in DuckDB over the tables of a pinned lakehouse version.

Each table reference of a query is resolved to the snapshot it reads (the
session's transaction, or the version its ``FOR SYSTEM_VERSION`` /
``FOR SYSTEM_TIME`` clause names), materialised as an Arrow table (catalog
metadata) or a scan of the table's data, registered in the session's DuckDB
connection under a private name, and the reference is rewritten to that name.
DuckDB then plans and executes the whole statement: joins, filters,
aggregates and subqueries are DuckDB's, never ours.

A view reference is first replaced by its query as of the version read
(:mod:`.view_expansion`); a user table becomes its scan (:mod:`.native_scan`),
or a relation of its row counts when the query reads no column
(:mod:`.row_count`); a catalog table is built for the rows the query can
match (:mod:`.catalog_pushdown`); a call of ``system.table_changes`` is the
rows :mod:`.table_changes` computes. The SQL runs through :mod:`.duck_run`.

Imports from sql/engine/: catalog_pushdown, duck_errors, duck_run, native_scan,
predicates, row_count, session, table_changes, view_expansion.
"""

from __future__ import annotations

import contextlib
import itertools
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.format.sql_text import quote_identifier
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql.compat import duckdb_sql
from trinity_dbapi.sql.engine import catalog_pushdown, row_count
from trinity_dbapi.sql.engine.duck_errors import FetchedScan, QueryFiles
from trinity_dbapi.sql.engine.duck_run import execute_duckdb, stream_duckdb, unregister
from trinity_dbapi.sql.engine.native_scan import NativeScan, table_scan
from trinity_dbapi.sql.engine.predicates import scan_predicate
from trinity_dbapi.sql.engine.table_changes import table_changes
from trinity_dbapi.sql.engine.view_expansion import expand_views
from trinity_dbapi.tables.temporal import nanosecond_scalar
from trinity_dbapi.tables.temporal import text as temporal_text

if TYPE_CHECKING:
    from trinity_dbapi.sql.engine.session import Session
    from trinity_dbapi.sql.model import AsOf, TableRef

#: The ``meta`` key :func:`marked` tags a table node with: its index in the references.
REF_KEY = "trinity_ref"
_names = itertools.count()


def run_query(
    session: Session,
    expression: exp.Expression,
    refs: Sequence[TableRef],
    params: Sequence[Any],
    *,
    stream: bool = False,
) -> Any:
    """Execute ``expression`` (with ``refs``, its table references) and return its rows.

    Args:
        session: supplies the transaction, the current namespace and DuckDB.
        expression: the parsed query; it is not modified.
        refs: the real table references of ``expression``.
        params: values of the numbered placeholders, in order.
        stream: return a ``pa.RecordBatchReader`` that pulls batches from
            DuckDB as they are read, instead of the whole ``pa.Table``.
    """
    with marked(refs):
        query = expression.copy()  # meta is copied with the nodes
    return execute_marked(session, query, refs, params, stream=stream)


@contextlib.contextmanager
def marked(refs: Sequence[TableRef]) -> Iterator[None]:
    """Tag each reference's node with its index while the caller copies parts of the tree.

    Copies keep the tags (sqlglot copies node metadata), so a query built
    from copied pieces still knows which of its tables are which reference.
    """
    for i, ref in enumerate(refs):
        ref.node.meta[REF_KEY] = i
    try:
        yield
    finally:
        for ref in refs:
            ref.node.meta.pop(REF_KEY, None)


def execute_marked(
    session: Session,
    query: exp.Expression,
    refs: Sequence[TableRef],
    params: Sequence[Any],
    *,
    overrides: Mapping[int, Any] | None = None,
    stream: bool = False,
) -> Any:
    """Run a query whose tagged table nodes (see :func:`marked`) stand for ``refs``.

    ``query`` is modified. ``overrides`` maps a reference index to the Arrow
    data to scan instead of the table (DML passes the rows it is rewriting).
    Only the placeholders ``query`` still holds are bound. A streamed query
    runs on a DuckDB cursor of its own, which lives as long as its reader.
    """
    if refs:
        query, refs = expand_views(session, query, refs, REF_KEY)
    duck = session.duckdb_cursor() if stream else session.duckdb()
    if stream:  # Connection.interrupt() reaches the cursor's query as long as it runs
        session.control.add_cursor(duck)
    registered: list[str] = []
    # Every data file DuckDB may read for this query: a failure that names
    # one of them is a damaged file, whatever DuckDB calls the error.
    files = QueryFiles(session.duckdb())
    natives: dict[str, str] = {}
    unaliased: set[tuple[str, str]] = set()
    # A query of row counts only (count(*)) reads no data file when the counts are known.
    counted = not overrides and row_count.reads_no_column(query)
    try:
        resolved: dict[Any, str] = {}
        clashing = _clashing_names(query, refs, session.namespace)
        for node in list(query.find_all(exp.Table)):
            index = node.meta.pop(REF_KEY, None)
            if index is None:
                continue
            session.control.check()  # materialising a reference may read much metadata
            ref = refs[index]
            namespace = ref.table.namespace or session.namespace
            if ref.arguments is not None and node.args.get("alias") is None:
                # A table function's rows are named after it: table_changes.version
                node.set("alias", exp.TableAlias(this=exp.to_identifier(ref.table.name)))
            if node.args.get("alias") is None:
                unaliased.add((namespace, ref.table.name))
            predicate: Any
            if ref.arguments is not None:  # system.table_changes(...): its arguments are its key
                predicate = ("arguments", ref.arguments)
            elif namespace in catalog.RESERVED_NAMESPACES:
                predicate = catalog_pushdown.catalog_scope(node, params, namespace, ref.table.name)
            else:
                predicate = scan_predicate(node, params)
            key: Any = ("override", index) if overrides and index in overrides else None
            shown = repr(sorted(predicate.items()) if isinstance(predicate, dict) else predicate)
            key = key or (namespace, ref.table.name, ref.as_of, shown)
            name = resolved.get(key)
            if name is None:
                name = f"__trinity_{next(_names)}_{uuid.uuid4().hex[:8]}"
                rows = None
                if counted and namespace not in catalog.RESERVED_NAMESPACES:
                    view, _ = session.view_for(ref.as_of)
                    storage = session.lakehouse.storage
                    rows = row_count.table_rows(storage, view, namespace, ref.table.name)
                if rows is not None:
                    natives[name] = row_count.rows_relation(rows)
                else:
                    if key[0] == "override":
                        relation = overrides[index]  # type: ignore[index]
                    elif ref.arguments is not None:
                        relation = table_changes(session, ref)
                    else:
                        relation = _materialise(
                            session, namespace, ref.table.name, ref.as_of, predicate, files
                        )
                    if isinstance(relation, NativeScan):
                        files.scans.append(relation)
                        # Spliced into the SQL text below (our own identifier, so
                        # the replacement is exact): DuckDB binds the scan once.
                        natives[name] = relation.subquery(duck, session.duckdb_root())
                    else:
                        duck.register(name, relation)
                        registered.append(name)
                resolved[key] = name
            written = (ref.table.namespace, ref.table.name)
            _rewrite(node, name, namespace if written in clashing else None)
        _unqualify_columns(query, unaliased, clashing)
        query, used = _bind_used(query, params)
        sql = duckdb_sql(query)
        for name, subquery in natives.items():
            sql = sql.replace(quote_identifier(name), subquery)
        session.control.check()
        if stream:
            return stream_duckdb(
                duck,
                sql,
                used,
                track=session.track_stream,
                on_close=lambda: session.control.remove_cursor(duck),
                translate=files.translate,
                translate_stream=files.translate_stream,
            )
        return execute_duckdb(duck, sql, used, translate=files.translate)
    except BaseException as exc:
        if stream:  # stream_duckdb did not take the cursor over
            session.control.remove_cursor(duck)
            with contextlib.suppress(duckdb.Error):
                duck.close()
        if isinstance(exc, CorruptFileError):  # a native scan reading its files' footers
            error = files.explain(exc)
            if error is not exc:
                raise error from exc
        raise
    finally:
        if not stream:
            for name in registered:
                unregister(duck, name)


def _bind_used(query: exp.Expression, params: Sequence[Any]) -> tuple[exp.Expression, list[Any]]:
    """Renumber the placeholders ``query`` holds to $1..$k; return their values in order.

    DuckDB refuses values for parameters a statement does not use, and a
    query built from part of a statement (DML) uses only some of them.
    """
    placeholders = [p for p in query.find_all(exp.Placeholder) if str(p.this).isdigit()]
    numbers = sorted({int(p.this) for p in placeholders})
    if numbers == list(range(1, len(params) + 1)):
        return query, [_exact(value) for value in params]
    new_number = {old: new for new, old in enumerate(numbers, start=1)}
    for placeholder in placeholders:
        placeholder.set("this", str(new_number[int(placeholder.this)]))
    return query, [_exact(params[old - 1]) for old in numbers]


def _exact(value: Any) -> Any:
    """``value`` as DuckDB binds it exactly: a value with nanoseconds as a nanosecond timestamp.

    DuckDB binds a ``pandas.Timestamp`` as a microsecond ``TIMESTAMP``,
    dropping its nanoseconds, and a ``numpy.datetime64`` as a ``BIGINT``;
    its ``TIMESTAMP_NS`` (``TIMESTAMPTZ_NS`` for a zoned value, in UTC) holds
    them, and the one conversion rule then stores them or refuses them.
    """
    if isinstance(value, (list, tuple)):
        items = [_exact(item) for item in value]
        return items if isinstance(value, list) else tuple(items)
    scalar = nanosecond_scalar(value)
    if scalar is None:
        return value
    from duckdb.value.constant import Value

    zoned = scalar.type.tz is not None
    text = temporal_text(pa.array([scalar]), 0)
    # duckdb.sqltype is DuckDB 1.4's name for what was duckdb.type.
    sqltype = getattr(duckdb, "sqltype", None) or duckdb.type
    return Value(text, sqltype("TIMESTAMPTZ_NS" if zoned else "TIMESTAMP_NS"))


def _unqualify_columns(
    query: exp.Expression,
    tables: set[tuple[str, str]],
    clashing: frozenset[tuple[str, str]] = frozenset(),
) -> None:
    """Make ``ns.t.col`` read ``t.col`` for the unaliased tables ``(ns, t)`` of ``query``.

    Standard SQL (and SQLAlchemy, for tables in a schema) may qualify a column
    with the namespace too; the rewritten query names each such table by its
    bare name only, which is what DuckDB resolves. A table ``(ns, t)`` that
    ``clashing`` holds (written ``ns.t``, unaliased, beside another
    namespace's ``t``: ``FROM a.t, b.t``) is the alias ``"ns.t"`` instead
    (see :func:`_rewrite`).
    """
    if not tables:
        return
    for column in query.find_all(exp.Column):
        if column.args.get("db") is not None and (column.db, column.table) in tables:
            if (column.db, column.table) in clashing:
                alias = f"{column.db}.{column.table}"
                column.set("table", exp.to_identifier(alias, quoted=True))
            column.set("db", None)
            column.set("catalog", None)


def _clashing_names(
    query: exp.Expression, refs: Sequence[TableRef], current: str
) -> frozenset[tuple[str, str]]:
    """The unaliased tables ``(ns, t)`` of ``query`` written ``ns.t`` whose bare name clashes.

    A bare name clashes when unaliased tables of more than one namespace
    have it. A table written without its namespace keeps its bare name as
    alias: columns name it ``t.col`` (``FROM t JOIN s.t``, as SQLAlchemy
    writes for a table of the default schema beside one of schema ``s``).
    """
    namespaces: dict[str, set[str]] = {}
    qualified: set[tuple[str, str]] = set()
    for node in query.find_all(exp.Table):
        index = node.meta.get(REF_KEY)
        if index is None or node.args.get("alias") is not None:
            continue
        table = refs[index].table
        namespaces.setdefault(table.name, set()).add(table.namespace or current)
        if table.namespace is not None:
            qualified.add((table.namespace, table.name))
    return frozenset(
        (namespace, name) for namespace, name in qualified if len(namespaces[name]) > 1
    )


def _rewrite(node: exp.Table, name: str, clashing_namespace: str | None = None) -> None:
    """Point ``node`` at the registered relation ``name``, keeping its alias.

    An unaliased reference whose bare name another namespace's table in the
    query shares (``clashing_namespace`` set) is aliased ``"ns.t"``: two
    aliases ``t`` would be ambiguous, and columns name it ``ns.t.col``.
    """
    alias = node.args.get("alias")
    if alias is None:
        # Unaliased references are qualified by their table name in the query
        # (``t.col``): keep that name working.
        shown = node.name if clashing_namespace is None else f"{clashing_namespace}.{node.name}"
        alias = exp.TableAlias(this=exp.to_identifier(shown, quoted=True))
    node.set("version", None)
    node.set("db", None)
    node.set("catalog", None)
    node.set("this", exp.to_identifier(name, quoted=True))
    node.set("alias", alias)


def _materialise(
    session: Session,
    namespace: str,
    table: str,
    as_of: AsOf | None,
    predicate: Any,
    files: QueryFiles,
) -> Any:
    """A catalog table built for ``predicate`` (a :class:`CatalogScope`), or a table's scan.

    For a user table ``predicate`` maps columns to their allowed values
    (see :func:`~trinity_dbapi.sql.engine.predicates.scan_predicate`).
    """
    view, snapshot = session.view_for(as_of)
    if namespace in catalog.RESERVED_NAMESPACES:
        return catalog.catalog_table(view, snapshot, namespace, table, predicate)
    paths: set[str] = set()
    storage = session.lakehouse.storage
    try:
        relation = table_scan(storage, view, namespace, table, predicate, paths)
    except CorruptFileError as exc:  # damage, or the version read was expired meanwhile
        snapshot.raise_explained(exc)
    files.add(snapshot, paths)
    if storage.local_root is None and paths:
        # Read from fetched bytes: an error names no file, so the files are
        # re-read one by one after a failure to name the damaged one.
        files.fetched.append(FetchedScan(storage, paths))
    return relation
