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

import contextlib
import itertools
import uuid
from collections.abc import Iterator, Mapping, Sequence
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
from trinity_dbapi.sql.pruning import point_predicates

if TYPE_CHECKING:
    from trinity_dbapi.objects import ObjectOperations
    from trinity_dbapi.sql.session import Session
    from trinity_dbapi.sql.statements import AsOf, TableRef
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.transaction import Transaction

_REF_KEY = "trinity_ref"
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
        ref.node.meta[_REF_KEY] = i
    try:
        yield
    finally:
        for ref in refs:
            ref.node.meta.pop(_REF_KEY, None)


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
    duck = session.duckdb().cursor() if stream else session.duckdb()
    registered: list[str] = []
    try:
        resolved: dict[Any, str] = {}
        for node in list(query.find_all(exp.Table)):
            index = node.meta.pop(_REF_KEY, None)
            if index is None:
                continue
            ref = refs[index]
            namespace = ref.table.namespace or session.namespace
            predicate = point_predicates(node, params)
            key: Any = ("override", index) if overrides and index in overrides else None
            key = key or (namespace, ref.table.name, ref.as_of, repr(sorted(predicate.items())))
            name = resolved.get(key)
            if name is None:
                name = f"__trinity_{next(_names)}_{uuid.uuid4().hex[:8]}"
                if key[0] == "override":
                    relation = overrides[index]  # type: ignore[index]
                else:
                    relation = _materialise(
                        session, namespace, ref.table.name, ref.as_of, predicate
                    )
                duck.register(name, relation)
                registered.append(name)
                resolved[key] = name
            _rewrite(node, name)
        query, used = _bind_used(query, params)
        if stream:
            return stream_duckdb(duck, query.sql(dialect="duckdb"), used)
        return execute_duckdb(duck, query.sql(dialect="duckdb"), used)
    finally:
        if not stream:
            for name in registered:
                duck.unregister(name)


def _bind_used(query: exp.Expression, params: Sequence[Any]) -> tuple[exp.Expression, list[Any]]:
    """Renumber the placeholders ``query`` holds to $1..$k; return their values in order.

    DuckDB refuses values for parameters a statement does not use, and a
    query built from part of a statement (DML) uses only some of them.
    """
    placeholders = [p for p in query.find_all(exp.Placeholder) if str(p.this).isdigit()]
    numbers = sorted({int(p.this) for p in placeholders})
    if numbers == list(range(1, len(params) + 1)):
        return query, list(params)
    new_number = {old: new for new, old in enumerate(numbers, start=1)}
    for placeholder in placeholders:
        placeholder.set("this", str(new_number[int(placeholder.this)]))
    return query, [params[old - 1] for old in numbers]


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


#: Rows per batch of a streamed result.
STREAM_BATCH_ROWS = 100_000


def stream_duckdb(
    duck: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any]
) -> pa.RecordBatchReader:
    """Run ``sql`` on ``duck`` (a cursor of its own) and stream its rows.

    The reader owns the cursor: it is closed when the last batch is read or
    the reader is dropped. DuckDB errors surface here or while reading.
    """
    try:
        relation = duck.sql(sql, params=list(params) or None)
        if relation is None:
            return pa.table({}).to_reader()
        to_reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
        reader: pa.RecordBatchReader = to_reader(STREAM_BATCH_ROWS)
    except duckdb.Error as exc:
        duck.close()
        raise translate_duckdb_error(exc) from exc

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            yield from reader
        except duckdb.Error as exc:
            raise translate_duckdb_error(exc) from exc
        finally:
            duck.close()

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


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


def _materialise(
    session: Session,
    namespace: str,
    table: str,
    as_of: AsOf | None,
    predicate: Mapping[str, Sequence[Any]],
) -> Any:
    view, snapshot = session.view_for(as_of)
    if namespace in catalog.RESERVED_NAMESPACES:
        return catalog.catalog_table(view, snapshot, namespace, table)
    return table_scan(session.lakehouse.storage, view, namespace, table, predicate)


def table_scan(
    storage: Storage,
    view: ObjectOperations | Transaction,
    namespace: str,
    table: str,
    predicate: Mapping[str, Sequence[Any]] | None = None,
) -> Any:
    """What DuckDB scans for a user table as this view sees it.

    A managed table is a lazy Arrow dataset over exactly the files of the
    pinned version that can hold rows matching ``predicate`` (column ->
    allowed values; see :mod:`~trinity_dbapi.sql.pruning`); DuckDB pushes
    projections and filters into it. A table without a dataset is an empty
    table with its exact schema.
    """
    from trinity_dbapi.tables import managed

    definition = view.load_table(namespace, table)  # NoSuchTableError names it
    schema = arrow_types.arrow_schema(definition)
    if not managed.has_dataset(definition):
        return schema.empty_table()
    from trinity_dbapi.tables.reader import arrow_dataset

    meta = managed.metadata(storage, definition)
    partition_by = managed.partition_columns(definition)
    labels = prune_labels(storage, definition, meta, predicate or {})
    return arrow_dataset(storage, meta, schema, partition_by, labels)


def prune_labels(
    storage: Storage, definition: Any, meta: Any, predicate: Mapping[str, Sequence[Any]]
) -> list[str] | None:
    """The files (labels) that can hold matching rows; None: all of them."""
    from trinity_dbapi.tables import managed
    from trinity_dbapi.tables.indices import lookup
    from trinity_dbapi.tables.partitions import prune

    if not predicate:
        return None
    partition_by = managed.partition_columns(definition)
    schema = arrow_types.arrow_schema(definition)
    labels: list[str] | None = None
    if any(column in partition_by for column in predicate):
        labels = prune(meta, schema, partition_by, predicate)
    indexed = set(managed.indexes(definition).values())
    for column, values in predicate.items():
        if column in indexed and column not in partition_by:
            found = lookup(storage, meta, column, values)
            if found is not None:
                labels = [
                    x for x in (labels if labels is not None else meta.partitions) if x in found
                ]
    return labels


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
