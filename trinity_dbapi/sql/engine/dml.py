"""Statements that change table data: INSERT, DELETE, UPDATE, TRUNCATE, CTAS, indices.

MERGE and UPDATE ... FROM build on :class:`Target` in :mod:`.merge` (the
front door, :mod:`.dispatch`, sends them there).

DuckDB computes every new row; this module only decides which files to
write and which to replace, writes them in the dataset layout, and stages
the change of the table's files as a merge of its key (see
:mod:`trinity_dbapi.tables.datasets`).

DELETE and UPDATE are copy-on-write at file granularity: one DuckDB query
over the candidate files (with each row's file label) finds the files that
hold affected rows; only those are rewritten, everything else is kept.

Every write of rows reports its progress (rows written) to the session's
progress handler as a task named after the statement and the table.

Imports from sql/engine/: ddl, duck_run, query, result, session.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
from sqlglot import exp

from trinity_dbapi.errors import (
    DataError,
    IntegrityError,
    NoSuchObjectError,
    NotSupportedError,
    ObjectExistsError,
    ProgrammingError,
)
from trinity_dbapi.format.names import check_new_name
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql import model
from trinity_dbapi.sql import statements as st
from trinity_dbapi.sql.engine import ddl
from trinity_dbapi.sql.engine.duck_run import result_columns
from trinity_dbapi.sql.engine.query import execute_marked, marked, run_query
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.sql.engine.session import Session
from trinity_dbapi.tables import datasets, managed

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.lakehouse.transaction import Transaction

#: The column that carries each row's file label through DELETE and UPDATE.
LABEL = "__trinity_label"


# -- the target table ---------------------------------------------------------------


class Target:
    """The table a statement writes: its names, definition and dataset."""

    def __init__(self, session: Session, table: model.TableName, *, blind: bool = False) -> None:
        self.session = session
        self.namespace, self.name = session.resolve(table)
        session.check_writable_namespace(self.namespace)
        if self.namespace in catalog.RESERVED_NAMESPACES:  # pragma: no cover - checked above
            raise ProgrammingError("catalog tables are read-only")
        self.txn: Transaction = session.writable()
        self.storage = session.lakehouse.storage
        # An append reads the definition blindly (its merge re-checks the
        # columns), so concurrent appends do not conflict even when SERIALIZABLE.
        load = self.txn.peek_table if blind else self.txn.load_table
        self.definition: TableDefinition = load(self.namespace, self.name)
        if not managed.has_dataset(self.definition):
            raise ProgrammingError(
                f"table {self.namespace}.{self.name} has no dataset to hold rows: it was "
                "created before this version stored data; recreate it (CREATE TABLE ... AS "
                "SELECT * FROM it) to give it one"
            )
        managed.require_own_files(
            self.definition, f"{self.namespace}.{self.name}", "writing rows or indices"
        )
        self.schema = managed.schema(self.definition)
        self.partition_by = self.definition.partition_columns
        self.meta = managed.metadata(self.storage, self.definition)

    @contextlib.contextmanager
    def naming(self) -> Iterator[None]:
        """Say which table a DataError or IntegrityError (NOT NULL) of the values written is about."""
        try:
            yield
        except DataError as exc:
            raise DataError(f"{self.namespace}.{self.name}: {exc}") from None
        except IntegrityError as exc:
            raise IntegrityError(f"{self.namespace}.{self.name}: {exc}") from None

    def write(self, rows: pa.Table, task: str) -> tuple[dict[str, str], int]:
        """Write ``rows`` as new data files; return their labels and paths, and the row count.

        Progress is reported as ``task`` (``"insert into"``...) followed by the table's name.
        """
        from trinity_dbapi.tables.writer import write_data

        progress = self.session.task(f"{task} {self.namespace}.{self.name}", "rows", rows.num_rows)
        progress.start()
        if rows.num_rows == 0:
            return {}, 0
        with self.naming():
            files = write_data(
                self.storage,
                self.meta,
                self.schema,
                self.partition_by,
                rows,
                progress=progress.update,
                background=True,  # this session's commit settles them
            )
        progress.finish(rows.num_rows)
        return files, rows.num_rows

    def stage(self, added: dict[str, str], removed: Sequence[str] = ()) -> None:
        """Stage the file changes in the transaction."""
        if not added and not removed:
            return
        if added:
            self.session.written_tables.add((self.namespace, self.name))
        datasets.change_files(
            self.txn,
            self.storage,
            self.namespace,
            self.name,
            added=added,
            removed=removed,
            columns=self.definition.columns,
        )

    def rows_with_labels(self, labels: Sequence[str]) -> pa.Table:
        """The rows of the given files, each with its file label."""
        rows, owners = self.rows_with_owners(labels)
        # Decoding a dictionary is one C++ pass; a Python list of one string
        # per row cost a quarter of a second per million rows.
        names = pa.DictionaryArray.from_arrays(owners, pa.array(list(labels), pa.string()))
        return rows.append_column(LABEL, names.cast(pa.string()))

    def rows_with_owners(self, labels: Sequence[str]) -> tuple[pa.Table, pa.Array]:
        """The rows of the given files and, per row, the position in ``labels`` of its file."""
        from trinity_dbapi.tables.reader import read_tables

        # All files at once: on object storage one round, not one per file.
        parts = read_tables(self.storage, self.meta, self.schema, self.partition_by, labels)
        owners = [np.full(part.num_rows, index, dtype=np.int32) for index, part in enumerate(parts)]
        if not parts:
            return self.schema.empty_table(), pa.array([], pa.int32())
        if len(parts) == 1:  # no copy of a million labels for one file
            return parts[0], pa.array(owners[0])
        return pa.concat_tables(parts), pa.array(np.concatenate(owners))


# -- INSERT ---------------------------------------------------------------------------


#: Clauses DuckDB's dialect parses on data statements that this executor does not run.
_REFUSED_CLAUSES = {
    "returning": "RETURNING",
    "conflict": "ON CONFLICT",
    "alternative": "INSERT OR ...",
    "by_name": "BY NAME",
    "using": "USING",
}


def dml(session: Session, stmt: model.Dml) -> Result:
    """INSERT, UPDATE or DELETE; MERGE and UPDATE ... FROM are :mod:`.merge`'s."""
    node = stmt.expression
    for arg, clause in _REFUSED_CLAUSES.items():
        if node.args.get(arg):
            raise NotSupportedError(
                f"{clause} is not supported on {type(node).__name__.upper()}; write the "
                "statement without it (a subquery can usually take its place)"
            )
    if node.args.get("with_") and not isinstance(node, exp.Insert):
        raise NotSupportedError(
            f"WITH before {type(node).__name__.upper()} is not supported; use a subquery"
        )
    if isinstance(node, exp.Insert):
        return _insert(session, stmt, node)
    if isinstance(node, exp.Delete):
        return _delete(session, stmt, node)
    if isinstance(node, exp.Update):
        return _update(session, stmt, node)
    raise ProgrammingError(f"unsupported data statement {type(node).__name__}")


def _insert(session: Session, stmt: model.Dml, node: exp.Insert) -> Result:
    target = Target(session, stmt.tables[0].table, blind=True)
    columns = _insert_columns(target, node)
    source = node.expression
    with marked(stmt.tables):
        query = source.copy()
        if node.args.get("with_"):  # WITH ... INSERT: the CTEs belong to the source query
            query.set("with_", node.args["with_"].copy())
    rows = execute_marked(session, query, stmt.tables, stmt.params)
    if rows.num_columns != len(columns):
        raise ProgrammingError(
            f"INSERT INTO {target.namespace}.{target.name} gives {rows.num_columns} values per "
            f"row for {len(columns)} columns ({', '.join(columns)}); make them match"
        )
    rows = rows.rename_columns(columns)
    added, count = target.write(rows, "insert into")
    target.stage(added)
    return Result(None, count)


def insert_arrow(session: Session, table: model.TableName, data: Any) -> Result:
    """Append Arrow data to ``table`` as one write (the DB-API's ``Cursor.ingest``).

    ``data`` is a ``pa.Table``, ``pa.RecordBatch``, ``pa.RecordBatchReader`` or
    any object exporting an Arrow stream (``__arrow_c_stream__``: pandas and
    polars frames, DuckDB relations); its columns are matched to the table's
    by name, missing nullable columns are NULL. A reader is written as it
    is read, so the data need not fit in memory.
    """
    from trinity_dbapi.tables.writer import write_data

    target = Target(session, table, blind=True)
    rows = _arrow_input(data)
    # A whole table's size is known; a reader's only once it is read.
    total = rows.num_rows if isinstance(rows, pa.Table) else None
    progress = session.task(f"insert into {target.namespace}.{target.name}", "rows", total)
    progress.start()
    with target.naming():
        files = write_data(
            target.storage,
            target.meta,
            target.schema,
            target.partition_by,
            rows,
            progress=progress.update,
            background=True,  # this session's commit settles them
        )
    progress.finish()  # before staging: a handler that raises still undoes it all
    target.stage(files)
    return Result(None, progress.done)


def _arrow_input(data: Any) -> pa.Table | pa.RecordBatchReader:
    if isinstance(data, (pa.Table, pa.RecordBatchReader)):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    try:
        if hasattr(data, "__arrow_c_stream__"):
            return pa.RecordBatchReader.from_stream(data)
        if type(data).__module__.startswith("pandas"):
            return pa.Table.from_pandas(data, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        # pandas object columns of mixed types or integers beyond int64.
        raise DataError(
            f"the {type(data).__name__} cannot be made Arrow data: {exc}; give each column "
            "values of one type (or insert the rows with executemany, which converts each "
            "value on its own)"
        ) from exc
    raise ProgrammingError(
        f"cannot insert a {type(data).__name__} as Arrow data; pass a pyarrow Table, "
        "RecordBatch or RecordBatchReader, or an object with __arrow_c_stream__ (pandas, "
        "polars, DuckDB relations)"
    )


def is_row_insert(parsed: st.Parsed) -> bool:
    """Whether ``parsed`` is ``INSERT INTO t [(cols)] VALUES (?, ?, ...)`` (one row of placeholders)."""
    node = parsed.expression
    if not isinstance(node, exp.Insert) or any(node.args.get(a) for a in _REFUSED_CLAUSES):
        return False
    values = node.expression
    if node.args.get("with_") or not isinstance(values, exp.Values):
        return False
    if len(values.expressions) != 1:
        return False
    row = values.expressions[0].expressions
    return bool(row) and all(isinstance(value, exp.Placeholder) for value in row)


def insert_rows(session: Session, parsed: st.Parsed, rows: Sequence[Sequence[Any]]) -> Result:
    """``executemany`` of a one-row INSERT: every parameter set is a row of one write."""
    if not rows:
        return Result(None, 0)
    stmt = st.to_statement(parsed, rows[0])
    assert isinstance(stmt, model.Dml) and isinstance(stmt.expression, exp.Insert)
    target = Target(session, stmt.tables[0].table, blind=True)
    columns = _insert_columns(target, stmt.expression)
    width = len(stmt.expression.expression.expressions[0].expressions)
    if width != len(columns):
        raise ProgrammingError(
            f"INSERT INTO {target.namespace}.{target.name} gives {width} values per row for "
            f"{len(columns)} columns ({', '.join(columns)}); make them match"
        )
    # A list comprehension per column: zip(*rows) would make an iterator per row
    # (a million objects for the garbage collector to walk).
    arrays = [
        _column_array(target, name, [row[i] for row in rows]) for i, name in enumerate(columns)
    ]
    added, count = target.write(pa.table(arrays, names=columns), "insert into")
    target.stage(added)
    return Result(None, count)


def _column_array(target: Target, name: str, values: list[Any]) -> pa.Array:
    """One column of an ``executemany``: the values by the one conversion rule, as INSERT does."""
    from trinity_dbapi.tables.convert import convert_python

    field = target.schema.field(name)
    sql_type = target.definition.column(name).type.to_sql()
    with target.naming():
        return convert_python(values, field.type, name, type_name=sql_type)


def _insert_columns(target: Target, node: exp.Insert) -> list[str]:
    names = [field.name for field in target.schema]
    this = node.this
    if not isinstance(this, exp.Schema):
        return names
    listed = [column.name for column in this.expressions]
    unknown = [c for c in listed if c not in names]
    if unknown:
        raise NoSuchObjectError(
            "column", f"{target.namespace}.{target.name}.{unknown[0]}", "check DESCRIBE"
        )
    if len(set(listed)) != len(listed):
        raise ProgrammingError(f"INSERT lists a column twice: {', '.join(listed)}")
    return listed


# -- DELETE and UPDATE ----------------------------------------------------------------


def _condition(node: exp.Expression) -> exp.Expr:
    where = node.args.get("where")
    condition = exp.true() if where is None else where.this.copy()
    # A NULL condition selects nothing, as in SQL.
    return exp.func("coalesce", exp.paren(condition), exp.false())


def _affected(
    session: Session, stmt: model.Dml, target: Target, condition: exp.Expr
) -> tuple[pa.Table, dict[str, int]]:
    """All candidate rows (with labels) and, per affected file, how many rows match."""
    candidates = target.rows_with_labels(sorted(target.meta.files()))
    with marked(stmt.tables):
        scan = stmt.tables[0].node.copy()
    hits = (
        exp.select(
            exp.column(LABEL),
            exp.alias_(exp.func("count_if", condition.copy()), "hits"),
        )
        .from_(scan)
        .group_by(exp.column(LABEL))
    )
    counted = execute_marked(session, hits, stmt.tables, stmt.params, overrides={0: candidates})
    affected = {
        label: hits
        for label, hits in zip(
            counted.column(LABEL).to_pylist(), counted.column("hits").to_pylist(), strict=True
        )
        if hits
    }
    return candidates, affected


def _rewrite(
    session: Session,
    stmt: model.Dml,
    target: Target,
    candidates: pa.Table,
    affected: dict[str, int],
    projection: list[exp.Expr],
    condition: exp.Expr | None,
    task: str,
    finish: Callable[[pa.Table], pa.Table] | None = None,
) -> None:
    """Write the new content of the affected files and stage the replacement.

    Progress counts the rows written: the rows the affected files keep.
    """
    if not affected:
        return
    import pyarrow.compute as pc

    in_affected = pc.is_in(candidates.column(LABEL), pa.array(sorted(affected), pa.string()))
    rows = candidates.filter(in_affected)
    with marked(stmt.tables):
        scan = stmt.tables[0].node.copy()
    query = exp.select(*projection).from_(scan)
    if condition is not None:
        query = query.where(exp.not_(condition))
    kept = execute_marked(session, query, stmt.tables, stmt.params, overrides={0: rows})
    if finish is not None:
        kept = finish(kept)
    added, _ = target.write(kept, task)
    target.stage(added, removed=sorted(affected))


def _delete(session: Session, stmt: model.Dml, node: exp.Delete) -> Result:
    target = Target(session, stmt.tables[0].table)
    with marked(stmt.tables):
        condition = _condition(node)
    candidates, affected = _affected(session, stmt, target, condition)
    columns = [exp.column(field.name, quoted=True) for field in target.schema]
    _rewrite(session, stmt, target, candidates, affected, list(columns), condition, "delete from")
    return Result(None, sum(affected.values()))


#: The column that tells UPDATE which rows its condition selects.
_HIT = "__trinity_hit"


def _update(session: Session, stmt: model.Dml, node: exp.Update) -> Result:
    target = Target(session, stmt.tables[0].table)
    with marked(stmt.tables):
        condition = _condition(node)
        assignments = {_assigned(target, a): a.expression.copy() for a in node.expressions}
    candidates, affected = _affected(session, stmt, target, condition)
    # DuckDB computes each new value as its own type (no CAST: DuckDB's casts
    # round); the one conversion rule then makes it the column's type.
    projection: list[exp.Expr] = [exp.column(field.name, quoted=True) for field in target.schema]
    projection.append(exp.alias_(condition.copy(), _HIT, quoted=True))
    new_names = {}
    for number, (name, value) in enumerate(assignments.items()):
        new_names[name] = f"__trinity_set_{number}"
        case = exp.Case(ifs=[exp.If(this=condition.copy(), true=exp.paren(value))])
        projection.append(exp.alias_(case, new_names[name], quoted=True))

    def assign(rows: pa.Table) -> pa.Table:
        import pyarrow.compute as pc

        from trinity_dbapi.tables.conform import relaxed
        from trinity_dbapi.tables.convert import convert

        hit = rows.column(_HIT)
        columns = []
        for field in target.schema:
            column = rows.column(field.name)
            if field.name in new_names:
                sql_type = target.definition.column(field.name).type.to_sql()
                with target.naming():
                    new = convert(
                        rows.column(new_names[field.name]),
                        relaxed(field.type),  # NOT NULL is the write's check (IntegrityError)
                        field.name,
                        type_name=sql_type,
                    )
                column = pc.if_else(hit, new, column.cast(new.type))
            columns.append(column)
        return pa.table(columns, names=target.schema.names)

    _rewrite(session, stmt, target, candidates, affected, projection, None, "update", finish=assign)
    return Result(None, sum(affected.values()))


def _assigned(target: Target, assignment: exp.Expression) -> str:
    if not isinstance(assignment, exp.EQ) or not isinstance(assignment.this, exp.Column):
        raise ProgrammingError(f"UPDATE SET needs column = value, not {assignment.sql()!r}")
    name = assignment.this.name
    if name not in target.schema.names:
        raise NoSuchObjectError(
            "column", f"{target.namespace}.{target.name}.{name}", "check DESCRIBE"
        )
    return name


# -- TRUNCATE, CTAS, indices ----------------------------------------------------------


def truncate(session: Session, stmt: Any) -> Result:
    """TRUNCATE TABLE: every file of the pinned version goes."""
    target = Target(session, stmt.table)
    labels = sorted(target.meta.files())
    target.stage({}, removed=labels)
    return Result(None, -1)


def create_table_as(session: Session, stmt: Any) -> Result:
    """CREATE TABLE ... AS query: the table takes the query's column names and types."""
    from trinity_dbapi.format.definitions import TableDefinition

    namespace, name = session.resolve(stmt.table)
    session.check_writable_namespace(namespace)
    txn = session.writable()
    if txn.table_exists(namespace, name):
        if stmt.if_not_exists:
            return Result(None, 0)
        raise ObjectExistsError("table", f"{namespace}.{name}")
    query = stmt.query
    rows = run_query(session, query.expression, query.tables, query.params)
    columns = result_columns(rows.schema)
    definition = TableDefinition(name, columns, table_format=managed.TABLE_FORMAT)
    ddl.create_table_definition(
        session,
        namespace,
        definition,
        stmt.partitioned_by,
        stmt.comment,
        stmt.properties,
        transforms=stmt.partition_transforms,
    )
    target = Target(session, model.TableName(namespace, name))
    added, count = target.write(rows, "create table")
    target.stage(added)
    return Result(None, count)


def create_index(session: Session, stmt: Any) -> Result:
    """CREATE INDEX name ON t (column): built from the data, maintained by later writes."""
    from trinity_dbapi.tables.indices import build_index

    target = Target(session, stmt.table)
    existing = managed.indexes(target.definition)
    if stmt.name in existing:
        if stmt.if_not_exists:
            return Result()
        raise ObjectExistsError("index", f"{stmt.name} on {target.namespace}.{target.name}")
    # Before the index file is built: the name is stored as a format property
    # key, which the table's definition would refuse only at the end.
    check_new_name(stmt.name, "index", f"on table {target.namespace}.{target.name}")
    if stmt.column not in target.schema.names:
        raise NoSuchObjectError(
            "column", f"{target.namespace}.{target.name}.{stmt.column}", "check DESCRIBE"
        )
    if stmt.column in existing.values():
        raise ProgrammingError(
            f"column {stmt.column!r} of {target.namespace}.{target.name} already has the index "
            f"{next(n for n, c in existing.items() if c == stmt.column)!r}; one index per column"
        )
    storage, column = target.storage, stmt.column

    def change(table: TableDefinition) -> TableDefinition:
        meta = managed.metadata(storage, table)
        schema, by = managed.schema(table), table.partition_columns
        meta = build_index(storage, meta, schema, by, column)
        properties = {**table.format_properties, managed.INDEX_PREFIX + stmt.name: column}
        return managed.with_metadata(storage, table.replace(format_properties=properties), meta)

    target.txn.merge_table(target.namespace, target.name, change)
    return Result()


def drop_index(session: Session, stmt: Any) -> Result:
    """DROP INDEX name ON t."""
    from trinity_dbapi.tables.indices import drop_index as drop

    target = Target(session, stmt.table)
    column = managed.indexes(target.definition).get(stmt.name)
    if column is None:
        if stmt.if_exists:
            return Result()
        raise NoSuchObjectError(
            "index", f"{stmt.name} on {target.namespace}.{target.name}", "check SHOW CREATE TABLE"
        )
    storage = target.storage

    def change(table: TableDefinition) -> TableDefinition:
        properties = dict(table.format_properties)
        properties.pop(managed.INDEX_PREFIX + stmt.name, None)
        meta = drop(managed.metadata(storage, table), column)
        return managed.with_metadata(storage, table.replace(format_properties=properties), meta)

    target.txn.merge_table(target.namespace, target.name, change)
    return Result()
