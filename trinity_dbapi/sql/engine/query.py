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
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from trinity_dbapi.errors import (
    CorruptFileError,
    Error,
    InternalError,
)
from trinity_dbapi.format import type_mapping
from trinity_dbapi.format.sql_text import quote_identifier, quote_string
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql.compat import duckdb_sql
from trinity_dbapi.sql.engine import catalog_pushdown, row_count
from trinity_dbapi.sql.engine.duck_errors import (
    NOT_FILE_ERRORS,
    FetchedScan,
    QueryFiles,
    arrow_error,
    is_one_of,
    may_be_a_file,
    stream_error,
    translate_duckdb_error,
)
from trinity_dbapi.tables import managed, scan
from trinity_dbapi.tables.pruning import point_predicates, range_predicates
from trinity_dbapi.tables.temporal import nanosecond_scalar
from trinity_dbapi.tables.temporal import text as temporal_text

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.objects import ObjectOperations
    from trinity_dbapi.lakehouse.transaction import Transaction
    from trinity_dbapi.sql.engine.session import Session
    from trinity_dbapi.sql.model import AsOf, TableRef
    from trinity_dbapi.storage import Storage

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
        from trinity_dbapi.sql.engine.views import expand_views

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
            if node.args.get("alias") is None:
                unaliased.add((namespace, ref.table.name))
            predicate: Any = {**range_predicates(node, params), **point_predicates(node, params)}
            if namespace in catalog.RESERVED_NAMESPACES:
                predicate = catalog_pushdown.catalog_scope(node, params, namespace, ref.table.name)
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


def unregister(duck: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop a registered relation, even while ``Connection.interrupt`` keeps interrupting DuckDB.

    The interrupt is repeated until the statement ends, and dropping the
    relation runs a (tiny) DuckDB query it may hit.
    """
    for _ in range(1000):
        try:
            duck.unregister(name)
            return
        except duckdb.InterruptException:
            continue


def drop_temporary(duck: duckdb.DuckDBPyConnection, name: str) -> None:
    """Drop the temporary table ``name``, even while ``Connection.interrupt`` keeps interrupting."""
    for _ in range(1000):
        try:
            duck.execute(f"DROP TABLE IF EXISTS {quote_identifier(name)}")
            return
        except duckdb.InterruptException:
            continue


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


def execute_duckdb(
    duck: duckdb.DuckDBPyConnection,
    sql: str,
    params: Sequence[Any],
    *,
    translate: Callable[[duckdb.Error], Error] | None = None,
) -> pa.Table:
    """Run ``sql`` in DuckDB with positional ``params``; DuckDB errors become ours.

    ``translate`` turns a DuckDB error into ours (:meth:`QueryFiles.translate`
    for a query over lakehouse files).
    """
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
        raise (translate or translate_duckdb_error)(exc) from exc
    except pa.ArrowException as exc:
        raise arrow_error(exc) from exc


#: Rows per batch of a streamed result.
STREAM_BATCH_ROWS = 100_000


def stream_duckdb(
    duck: duckdb.DuckDBPyConnection,
    sql: str,
    params: Sequence[Any],
    *,
    track: Callable[[Generator[pa.RecordBatch, None, None]], None] | None = None,
    on_close: Callable[[], None] | None = None,
    translate: Callable[[duckdb.Error], Error] | None = None,
    translate_stream: Callable[[OSError], Error] | None = None,
) -> pa.RecordBatchReader:
    """Run ``sql`` on ``duck`` (a cursor of its own) and stream its rows.

    The reader owns the cursor: it is closed when the last batch is read or
    the reader is dropped, or by whoever ``track`` hands the generator of
    batches to (the session closes it when the connection closes); then
    ``on_close`` is called. DuckDB errors surface here or while reading;
    ``translate_stream`` turns one met while reading (which Arrow's C stream
    hands over as ``OSError``) into ours (:meth:`QueryFiles.translate_stream`).
    """
    translate = translate or translate_duckdb_error
    translate_stream = translate_stream or stream_error

    def close() -> None:
        if on_close is not None:
            on_close()
        duck.close()

    try:
        relation = duck.sql(sql, params=list(params) or None)
        if relation is None:
            close()
            return pa.table({}).to_reader()
        to_reader = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
        reader: pa.RecordBatchReader = to_reader(STREAM_BATCH_ROWS)
    except duckdb.Error as exc:
        error = translate(exc)
        close()
        raise error from exc
    except pa.ArrowException as exc:
        close()
        raise arrow_error(exc) from exc

    def batches() -> Generator[pa.RecordBatch, None, None]:
        try:
            yield from reader
        except duckdb.Error as exc:
            raise translate(exc) from exc
        except OSError as exc:
            # Arrow's C stream reports DuckDB's errors while reading as OSError
            # carrying DuckDB's message ("INTERRUPT Error: Interrupted!").
            raise translate_stream(exc) from exc
        finally:
            close()

    stream = batches()
    if track is not None:
        track(stream)
    return pa.RecordBatchReader.from_batches(reader.schema, stream)


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
    (see :func:`~trinity_dbapi.tables.pruning.point_predicates`).
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


def table_scan(
    storage: Storage,
    view: ObjectOperations | Transaction,
    namespace: str,
    table: str,
    predicate: Mapping[str, Sequence[Any]] | None = None,
    files: set[str] | None = None,
) -> Any:
    """What DuckDB scans for a user table as this view sees it.

    :func:`~trinity_dbapi.tables.scan.plan_query_scan` chooses the files of
    the pinned version that can hold rows matching ``predicate`` (column ->
    allowed values; see :mod:`~trinity_dbapi.tables.pruning`) and how to read
    them: a :class:`NativeScan` of local files, a lazy Arrow dataset DuckDB
    pushes projections and filters into, or the rows read by column ID. A
    table without a dataset is an empty table with its exact schema. The
    data files the scan may read are added to ``files`` (relative paths), so
    a DuckDB error naming one is reported as that file's damage.
    """
    definition = view.load_table(namespace, table)  # NoSuchTableError names it
    plan = scan.plan_query_scan(storage, definition, predicate or {})
    if plan.form is scan.ScanForm.EMPTY:
        return plan.schema.empty_table()
    if plan.form is scan.ScanForm.BY_COLUMN_ID:
        return plan.read_table(storage)
    if files is not None:
        files.update(plan.files)
    if plan.form is scan.ScanForm.READ_PARQUET:
        assert plan.local_root is not None
        return NativeScan(definition, list(plan.files), plan.partition_by, plan.local_root)
    return plan.arrow_dataset(storage)


class NativeScan:
    """Local Parquet files DuckDB reads itself (``read_parquet``): its fastest path.

    Partition columns come from each file's path, decoded as the layout
    encodes them (:mod:`~trinity_dbapi.tables.partition_sql`; not DuckDB's
    hive partitioning, which does not decode column names), with their
    declared types; a column no file holds yet (added by ALTER TABLE) reads
    as NULL; columns are projected in the table's order and cast to their
    declared DuckDB types.

    Args:
        definition: the table's definition.
        paths: the files to scan, relative to the root (``/``-separated).
        partition_by: the table's partition columns.
        root: the local root directory the paths are relative to.
    """

    def __init__(
        self, definition: Any, paths: list[str], partition_by: list[str], root: str
    ) -> None:
        self.definition = definition
        self.paths = paths
        self.partition_by = partition_by
        self.root = root
        #: The visible root of the last subquery (see :meth:`subquery`).
        self._visible_root = ""
        self._options: list[str] = []

    def subquery(self, duck: duckdb.DuckDBPyConnection, visible_root: str | None) -> str:
        """A parenthesised DuckDB query over the files, with the table's exact columns.

        The files are named under ``visible_root``, the path the session's
        sandbox lets DuckDB read the root through (never the root's own
        name, which DuckDB may read as other paths or globs).
        """
        from trinity_dbapi.tables import partition_sql

        if visible_root is None:
            raise InternalError("a native scan of local files in a DuckDB without a local root")
        options = [partition_sql.SCAN_OPTIONS]
        if self.definition.format_properties.get(managed.MIXED_FILE_SCHEMAS) == "true":
            options.append("union_by_name = true")  # match columns by name, file by file
        file_column = partition_sql.file_column(c.name for c in self.definition.columns)
        if self.partition_by:
            options.append(f"filename = {quote_string(file_column)}")
        self._options, self._visible_root = options, visible_root
        source = self._source(self.paths)
        present = self._file_types(duck, source)
        projection = []
        for column in self.definition.columns:
            quoted = quote_identifier(column.name)
            duck_type = type_mapping.duckdb_type(column.type)
            found = present.get(column.name)
            if column.name in self.partition_by:
                value = partition_sql.partition_value(
                    file_column, self.partition_by, column.name, duck_type
                )
                projection.append(f"{value} AS {quoted}")
            elif found == duck_type:
                projection.append(quoted)  # a bare column: filters push into the scan
            else:
                value = quoted if found is not None else "NULL"
                projection.append(f"CAST({value} AS {duck_type}) AS {quoted}")
        return f"(SELECT {', '.join(projection)} FROM {source})"

    def _source(self, paths: Sequence[str]) -> str:
        files = [f"{self._visible_root}/{path}" for path in paths]
        return scan.read_parquet(files, self._options)

    def damaged_file(self, duck: duckdb.DuckDBPyConnection) -> CorruptFileError | None:
        """The first of the files that DuckDB cannot read on its own, or None.

        Some damage (a changed byte in a footer) fails with a message that names
        no file ("don't know what type"). The files are immutable, so reading
        each alone finds the one that fails; it is only ever done after a
        failure, and costs one full read of the files.
        """
        for path in self.paths:
            try:
                execute_duckdb(duck, f"SELECT * FROM {self._source([path])}", [])
            except Error as error:
                cause = error.__cause__
                if isinstance(cause, duckdb.Error) and not is_one_of(cause, NOT_FILE_ERRORS):
                    return CorruptFileError(path, f"reading it failed: {cause}")
        return None

    def _file_types(self, duck: duckdb.DuckDBPyConnection, source: str) -> dict[str, str]:
        """Column -> DuckDB type of what the files hold (an added column may be in none yet).

        Cached by root and file list: the files are immutable.
        """
        key = (self.root, *self.paths)
        types = _FILE_TYPES.get(key)
        if types is None:
            try:
                relation = duck.sql(f"SELECT * FROM {source}")
            except duckdb.Error as exc:  # reading the footers: a file may be damaged
                error = translate_duckdb_error(exc, self.paths)
                if not isinstance(error, CorruptFileError) and may_be_a_file(exc):
                    error = self.damaged_file(duck) or error
                raise error from exc
            types = {name: str(t) for name, t in zip(relation.columns, relation.types, strict=True)}
            if len(_FILE_TYPES) > 1024:
                _FILE_TYPES.clear()
            _FILE_TYPES[key] = types
        return types


_FILE_TYPES: dict[tuple[str, ...], dict[str, str]] = {}


# -- DuckDB errors ------------------------------------------------------------------
