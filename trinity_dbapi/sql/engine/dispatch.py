"""The engine's front door: a parsed statement in, a :class:`~.result.Result` out.

The driver (``dbapi/cursor.py``) runs everything through the functions of
this module, with the connection's session: :func:`execute` (one statement),
:func:`execute_many` (one statement, many parameter sets), :func:`ingest`
(Arrow data appended to a table) and :func:`arrow_schema` (the types
``ingest`` conforms data to). Each is one statement: interruptible and timed
(``session.control``) and atomic (:meth:`Session.atomically
<.session.Session.atomically>`: undone on failure, committed in autocommit
mode).

Which module runs a statement is chosen by the type of its model, one
``case`` each: transaction control and ``CALL`` run outside the statement's
savepoint, every other statement inside it. Each module's function receives
the session and the statement and returns a ``Result``. DDL (:mod:`.ddl`, :mod:`.views`)
stages changes in the session's transaction; SHOW and DESCRIBE (:mod:`.show`)
answer what the catalog tables show, straight from the tree; a query is
answered by :mod:`.catalog_answer` when it is a point query over one catalog
table, else by DuckDB (:mod:`.query`); a data statement is :mod:`.merge`'s
when :func:`.merge.handles` says so (MERGE, UPDATE ... FROM), else
:mod:`.dml`'s; ``CALL system.*`` is :mod:`.procedures`'.

Automatic compaction (:mod:`.auto_compact`) follows a commit that wrote data
files because this module registers it with the session, here and nowhere else.

Each statement imports what runs it, when it runs: SHOW, DESCRIBE and USE
are answered from the tree and import neither DuckDB nor tables/, so a new
``trinity DIR -c .tables`` process pays for neither (tests/cli/test_startup.py);
every other statement reaches tables' data, and first registers the table
format's hooks and automatic compaction (:func:`_with_tables`).

Imports from sql/engine/: result, session, show, suggest; inside functions: auto_compact,
catalog_answer, clones, copy, ddl, dml, merge, procedures, query, refs, saved, views.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from trinity_dbapi.errors import NoSuchNamespaceError, NotSupportedError, ProgrammingError
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql import model
from trinity_dbapi.sql import statements as st
from trinity_dbapi.sql.engine import show, suggest
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.sql.engine.session import Session, register_after_commit
from trinity_dbapi.sql.nesting import recursion_budget

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot

__all__ = ["arrow_schema", "execute", "execute_many", "ingest"]

#: Set once :func:`_with_tables` has registered (under the lock).
_REGISTERED = threading.Event()
_REGISTERING = threading.Lock()


def _with_tables() -> None:
    """The engine's registrations, here and nowhere else; before a statement that reaches tables.

    The session runs automatic compaction after a commit that wrote data
    files, and never names it; the lakehouse layer reaches a managed table's
    files, derived files and system.data_files rows through the table
    format's hooks (registered again here, which changes nothing, so that it
    shows). Here rather than in the session, and only for the statements
    that reach tables' data (every one but SHOW, DESCRIBE, USE and
    transaction control): a connection that only reflects, as SQLAlchemy's
    inspector does, and a ``trinity DIR -c .tables`` do not import tables/.
    Once per process, under a lock: two first statements in two threads
    register compaction once.
    """
    if _REGISTERED.is_set():
        return
    with _REGISTERING:
        from trinity_dbapi.tables import registration

        register_after_commit(_compact_after_write)
        registration.register()
        _REGISTERED.set()


def _compact_after_write(
    session: Session, tables: frozenset[tuple[str, str]], committed: Snapshot
) -> None:
    """Automatic compaction, imported by the first commit that wrote data files.

    :mod:`.auto_compact` imports DuckDB, which a catalog query answered
    without it (:mod:`.catalog_answer`) never needs.
    """
    from trinity_dbapi.sql.engine.auto_compact import compact_after_write

    compact_after_write(session, tables, committed)


# -- the front door ---------------------------------------------------------------------


def execute(session: Session, parsed: st.Parsed, params: Sequence[Any] = ()) -> Result:
    """Execute one parsed statement with its parameter values.

    Raises:
        Error: a subclass for every failure; the statement's own changes
            are undone, and in autocommit mode its transaction too.
    """
    session.require_open()
    with recursion_budget(), session.control.running(_what(parsed)):
        # What the store had served when this statement began (EXPLAIN ANALYZE).
        session.statement_stats = session.lakehouse.storage.stats.snapshot()
        statement = st.to_statement(parsed, params)
        if isinstance(statement, _CONTROL):
            return _control(session, statement)
        prefetch = () if session.in_transaction else _tables_named(parsed, session.namespace)
        return session.atomically(
            lambda: suggest.explaining(session, lambda: _handle(session, statement, parsed.sql)),
            prefetch,
        )


def execute_many(
    session: Session, parsed: st.Parsed, seq_of_params: Sequence[Sequence[Any]]
) -> Result:
    """Execute one statement once per parameter set, as one statement.

    ``INSERT INTO t [(cols)] VALUES (?, ...)`` takes every parameter set
    as a row of one write (one set of files, one commit in autocommit
    mode); other statements run once per set. Either way all sets apply
    or, on an error, none.
    """
    from trinity_dbapi.sql.engine import dml

    session.require_open()
    _with_tables()
    with recursion_budget(), session.control.running(_what(parsed)):
        if dml.is_row_insert(parsed):
            return session.atomically(
                lambda: suggest.explaining(
                    session, lambda: dml.insert_rows(session, parsed, seq_of_params)
                )
            )

        def each() -> Result:
            total = 0
            for params in seq_of_params:
                session.control.check()
                result = execute(session, parsed, params)
                total = -1 if total < 0 or result.rowcount < 0 else total + result.rowcount
            return Result(None, total)

        if not session.statement_scoped():
            return session.atomically(each)
        # Autocommit: the whole batch is one transaction, like one statement.
        session.begin(None)
        try:
            result = each()
            session.control.check()  # the last point to stop at: the commit is not interrupted
        except BaseException:
            session.rollback()
            raise
        session.commit()
        return result


def ingest(session: Session, table: model.TableName, data: Any) -> Result:
    """Append Arrow data to ``table`` as one statement (see ``Cursor.ingest``)."""
    from trinity_dbapi.sql.engine import dml

    session.require_open()
    _with_tables()
    what = f"the ingest into {'.'.join(filter(None, (table.namespace, table.name)))}"
    with session.control.running(what):
        return session.atomically(
            lambda: suggest.explaining(session, lambda: dml.insert_arrow(session, table, data))
        )


def arrow_schema(session: Session, table: model.TableName) -> pa.Schema:
    """The Arrow schema of ``table``'s rows: the types :func:`ingest` conforms data to.

    Read like a statement of its own (in autocommit mode the view it
    pinned is let go at once).

    Raises:
        NoSuchTableError: there is no such table.
    """
    from trinity_dbapi.tables import managed

    session.require_open()
    _with_tables()
    namespace, name = session.resolve(table)
    return session.atomically(
        lambda: managed.schema(session.transaction().peek_table(namespace, name))
    )


def _what(parsed: st.Parsed) -> str:
    """How errors name a statement: ``the SELECT statement``."""
    words = parsed.sql.split(None, 1)
    keyword = words[0].upper() if words and words[0].isalpha() else "SQL"
    return f"the {keyword} statement"


#: Tables a statement names whose definitions are read ahead, at most.
PREFETCH_TABLES = 16


def _tables_named(parsed: st.Parsed, namespace: str) -> list[tuple[str, str]]:
    """The user tables a statement's text names, as ``(namespace, table)``.

    A guess, not a resolution: a CTE's name or a view counts too, and costs
    a lookup that finds nothing. Only used to read ahead.
    """
    from sqlglot import exp

    found: dict[tuple[str, str], None] = {}
    for node in parsed.expression.find_all(exp.Table):
        if node.args.get("catalog") is not None or not node.name:
            continue
        where = node.db or namespace
        if where not in catalog.RESERVED_NAMESPACES:
            found[(where, node.name)] = None
            if len(found) == PREFETCH_TABLES:
                break
    return list(found)


# -- transaction control (no transaction of their own) -------------------------------

#: Statements that run outside the statement's savepoint: transaction control and CALL.
_CONTROL = (
    model.Begin,
    model.Commit,
    model.Rollback,
    model.SetTransaction,
    model.SetCommitMessage,
    model.SaveTransaction,
    model.LoadTransaction,
    model.Call,
    model.RefCommand,
)


def _control(session: Session, stmt: Any) -> Result:
    """Transaction control and ``CALL``: each ends or starts transactions itself."""
    match stmt:
        case model.Begin():
            session.begin(stmt.isolation)
        case model.Commit():
            session.commit()
        case model.Rollback():
            session.rollback()
        case model.SetTransaction():
            session.set_isolation(stmt.isolation)
        case model.SetCommitMessage():
            if session.statement_scoped():  # no transaction outlives the statement
                raise ProgrammingError(
                    "SET COMMIT MESSAGE outside a transaction: in autocommit mode it would name "
                    "no commit; run BEGIN, then SET COMMIT MESSAGE 'text', the changes and COMMIT"
                )
            session.transaction().message = stmt.message
        case model.SaveTransaction():
            from trinity_dbapi.sql.engine import saved

            return saved.save_transaction(session)
        case model.LoadTransaction():
            from trinity_dbapi.sql.engine import saved

            return saved.load_transaction(session, stmt)
        case model.RefCommand():
            from trinity_dbapi.sql.engine import refs

            if stmt.action == "MERGE BRANCH":
                _with_tables()  # a merge of tables' data asks their format
            return refs.run(session, stmt)
        case model.Call():
            from trinity_dbapi.sql.engine import procedures

            _with_tables()
            return procedures.call(session, stmt)
    return Result()


# -- statements in the session's transaction ----------------------------------------------


def _query(session: Session, stmt: model.Query) -> Result:
    """A query's rows stream from DuckDB: the cursor pulls batches as it is read.

    A point query over one catalog table is answered without DuckDB
    (:mod:`~trinity_dbapi.sql.engine.catalog_answer`).
    """
    from trinity_dbapi.sql.engine import catalog_answer

    _with_tables()
    table = catalog_answer.answer(session, stmt.expression, stmt.tables, stmt.params)
    if table is not None:
        return Result(table, -1)  # -1 as for every query: the rows are counted as read
    from trinity_dbapi.sql.engine.query import run_query  # DuckDB: only here

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


def _data(session: Session, stmt: model.Dml) -> Result:
    """INSERT, UPDATE, DELETE (:mod:`.dml`); MERGE and UPDATE ... FROM (:mod:`.merge`)."""
    from trinity_dbapi.sql.engine import dml, merge

    _with_tables()
    if merge.handles(stmt.expression):
        return merge.merge(session, stmt)
    return dml.dml(session, stmt)


def _handle(session: Session, stmt: Any, sql: str) -> Result:
    """Every other statement, run atomically in the session's transaction.

    One ``case`` a statement type, each calling the module that runs it, so
    a reader (and a tool) follows a statement from here to its module. Those
    answered from the tree come first; the modules of the others are
    imported when one of them runs.
    """
    match stmt:
        case model.Query():
            return _query(session, stmt)
        case model.Dml():
            return _data(session, stmt)
        case model.ShowNamespaces():
            return show.show_namespaces(session, stmt)
        case model.ShowTables():
            return show.show_tables(session, stmt)
        case model.DescribeNamespace():
            return show.describe_namespace(session, stmt)
        case model.DescribeTable():
            return show.describe_table(session, stmt)
        case model.Use():
            return _use(session, stmt)
    from trinity_dbapi.sql.engine import copy, ddl, dml, views

    _with_tables()
    match stmt:
        case model.ShowCreateTable():
            return ddl.show_create_table(session, stmt)
        case model.CreateNamespace():
            return ddl.create_namespace(session, stmt)
        case model.DropNamespace():
            return ddl.drop_namespace(session, stmt)
        case model.AlterNamespace():
            return ddl.alter_namespace(session, stmt)
        case model.CreateTable():
            return ddl.create_table(session, stmt)
        case model.DropTable():
            return ddl.drop_table(session, stmt)
        case model.AlterTable():
            return ddl.alter_table(session, stmt)
        case model.TruncateTable():
            return dml.truncate(session, stmt)
        case model.CreateTableAs():
            return dml.create_table_as(session, stmt)
        case model.CreateTableClone():
            from trinity_dbapi.sql.engine import clones

            return clones.create_table_clone(session, stmt)
        case model.CreateIndex():
            return dml.create_index(session, stmt)
        case model.DropIndex():
            return dml.drop_index(session, stmt)
        case model.CreateView():
            return views.create_view(session, stmt)
        case model.DropView():
            return views.drop_view(session, stmt)
        case model.ShowViews():
            return views.show_views(session, stmt)
        case model.CopyFrom():
            return copy.copy_from(session, stmt)
        case model.CopyTo():
            return copy.copy_to(session, stmt)
    raise NotSupportedError(f"{type(stmt).__name__} statements are not supported yet: {sql!r}")
