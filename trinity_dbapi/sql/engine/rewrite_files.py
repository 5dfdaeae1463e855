"""``CALL system.rewrite_data_files(...)``: compact a managed table's small files.

The data work is :mod:`trinity_dbapi.tables.compaction`; this module names
the table, evaluates ``where`` on the partitions, reports progress (unit
``files``: input files rewritten) and commits once. The commit is a merge
(see ``tables/compaction.py``): an append committed while the rewrite runs
stays; a DELETE, UPDATE or TRUNCATE that committed a change to one of the
files read makes it fail with ``CommitConflictError`` and nothing is
committed. It is not retried on its own: run it again, it plans from the
new version. An interrupt or any error commits nothing (the files written so
far are left for garbage collection).

``where`` is a SQL boolean expression over the table's partition columns
only (``day >= DATE '2024-01-01' AND region = 'eu'``), evaluated by the
session's sandboxed DuckDB once per partition on its typed values; a
partition where it is not TRUE is left alone.

Imports from sql/engine/: duck_run, session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import sqlglot
from sqlglot import exp

from trinity_dbapi.errors import Error, NotSupportedError, ProgrammingError
from trinity_dbapi.sql.engine.duck_run import execute_duckdb
from trinity_dbapi.sql.engine.session import Session
from trinity_dbapi.tables import compaction, managed, scan
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.partitions import earlier_specs, partition_scalars

__all__ = ["rewrite_data_files"]

_PROCEDURE = "system.rewrite_data_files"


def _where_sql(text: str, partition_by: list[str], where: str) -> str:
    """``text`` checked to be a boolean expression over partition columns, as DuckDB SQL."""
    if not partition_by:
        raise NotSupportedError(
            f"{_PROCEDURE}: table {where} is not partitioned, so where => {text!r} has no "
            "partition to choose; omit where to rewrite the whole table"
        )
    try:
        node = sqlglot.parse_one(text, read="duckdb", into=exp.Condition)
    except sqlglot.errors.ParseError as exc:
        raise ProgrammingError(
            f"{_PROCEDURE}: where => {text!r} is not a SQL expression ({exc}); write a "
            f"condition on the partition columns {partition_by}, such as "
            f"where => '{partition_by[0]} = ...'"
        ) from exc
    forbidden = (exp.Query, exp.Subquery, exp.Table, exp.Star, exp.Placeholder, exp.AggFunc)
    found = next(node.find_all(*forbidden), None)
    if found is not None:
        raise NotSupportedError(
            f"{_PROCEDURE}: where => {text!r} may only compare the partition columns "
            f"{partition_by} with constants (no queries, tables, aggregates or parameters)"
        )
    for column in node.find_all(exp.Column):
        if column.table or column.name not in partition_by:
            raise ProgrammingError(
                f"{_PROCEDURE}: where => {text!r} names {column.sql()!r}, which is not a "
                f"partition column of table {where}; its partition columns are {partition_by}"
            )
    return node.sql(dialect="duckdb")


def _chosen_partitions(
    session: Session, table: Any, directories: list[str], condition: str
) -> set[str]:
    """The directories whose partition values make ``condition`` TRUE."""
    schema, by = managed.schema(table), table.partition_columns
    columns: dict[str, list[Any]] = {name: [] for name in by}
    for directory in directories:
        scalars = partition_scalars(f"{directory}/x", schema, by)
        for name in by:
            columns[name].append(scalars[name])
    values = pa.table(
        {name: pa.array([s.as_py() for s in columns[name]], schema.field(name).type) for name in by}
    ).append_column("__trinity_partition", pa.array(directories, pa.string()))
    duck = session.duckdb_cursor()
    try:
        relation = duck.from_arrow(values).filter(condition)
        kept = relation.select("__trinity_partition").fetchall()
    except Exception as exc:  # DuckDB's errors (types, names) are the user's input
        raise ProgrammingError(
            f"{_PROCEDURE}: where => condition cannot be evaluated on the partitions of "
            f"table {table.name!r}: {exc}"
        ) from exc
    finally:
        duck.close()
    return {row[0] for row in kept}


#: Column types DuckDB's ``read_parquet`` gives back exactly, as Arrow types that
#: cast to the stored ones without changing a value (see :func:`_duckdb_reader`).
_NATIVE_KINDS = frozenset(
    {"boolean", "int2", "int4", "int8", "float4", "float8", "date", "varchar", "decimal"}
)


def _duckdb_reader(
    session: Session, definition: Any, meta: DatasetMetadata
) -> Callable[[Sequence[str]], pa.Table | None] | None:
    """A reader of a group's files through the private DuckDB, or None where it cannot be exact.

    Compaction reads many small files: pyarrow opens each from Python (about
    0.17 ms a file), DuckDB's ``read_parquet`` opens a list of them in C++ on
    every core, matching columns by Parquet field ID as
    :func:`~trinity_dbapi.tables.reader.read_table` does (a column a file
    lacks reads as NULL; a promoted column is cast). Used only on a local
    root, for tables of plain column types with no files of an earlier
    partitioning or transform partitions; the group's partition values come
    from its directory, as the reader takes them. Any DuckDB error returns
    None, and the files are read again the usual way, which names a
    damaged file.
    """
    storage = session.lakehouse.storage
    by = definition.partition_columns
    if (
        storage.local_root is None
        or managed.data_storage(storage, definition) is not storage
        or earlier_specs(meta)
        or managed.partition_transforms(definition)
        or any(column.type.kind not in _NATIVE_KINDS for column in definition.columns)
        or not scan.parquet_scan_reads(definition, by)
    ):
        return None
    schema = managed.schema(definition)
    payload = [column for column in definition.columns if column.name not in by]
    payload_schema = pa.schema([schema.field(column.name) for column in payload])

    def read(labels: Sequence[str]) -> pa.Table | None:
        root = session.duckdb_root()
        if root is None or not payload:
            return None
        files = [f"{root}/{meta.partitions[label]['table']}" for label in labels]
        try:
            data = execute_duckdb(session.duckdb(), scan.parquet_select(payload, [], files), [])
            data = data.cast(payload_schema)
        except (Error, pa.ArrowException):
            return None
        values = partition_scalars(labels[0], schema, by) if by else {}
        arrays = [
            pa.repeat(values[field.name], data.num_rows)
            if field.name in values
            else data.column(field.name)
            for field in schema
        ]
        return pa.Table.from_arrays(arrays, schema=schema)

    return read


def rewrite_data_files(
    session: Session,
    namespace: str,
    name: str,
    target_file_size_bytes: int,
    where: str | None,
    min_input_files: int,
) -> pa.Table:
    """Rewrite the small files of table ``namespace.name`` per partition and commit; one row."""
    session.check_writable_namespace(namespace)
    txn = session.writable()
    try:
        # A blind read, as an append's: the rewrite changes no row, and its
        # merge checks again that the files it read are all still there and
        # the columns unchanged, so a concurrent append never conflicts with it.
        definition = txn.peek_table(namespace, name)
        where_name = f"{namespace}.{name}"
        managed.require_own_files(definition, where_name, "rewriting data files")
        if not managed.has_dataset(definition):
            raise NotSupportedError(
                f"{_PROCEDURE}: table {where_name} keeps no data files of its own "
                f"(table format {definition.table_format!r}); only managed tables are compacted"
            )
        storage = session.lakehouse.storage
        meta = managed.metadata(storage, definition)
        partitions = None
        if where is not None:
            condition = _where_sql(where, definition.partition_columns, where_name)
            directories = sorted({label.rpartition("/")[0] for label in meta.partitions})
            partitions = _chosen_partitions(session, definition, directories, condition)
        groups = compaction.plan(
            storage,
            meta,
            target_size=target_file_size_bytes,
            min_input_files=min_input_files,
            partitions=partitions,
        )
        total = sum(len(group.labels) for group in groups)
        task = session.task(f"rewrite data files of {where_name}", "files", total)
        task.start()
        done = compaction.rewrite(
            txn,
            storage,
            namespace,
            definition,
            groups,
            each_file=task.update,
            read=_duckdb_reader(session, definition, meta),
        )
        task.finish(total)
        snapshot = session.commit()
    except BaseException:
        session.rollback()
        raise
    return pa.table(
        {
            "table_name": [where_name],
            "files_rewritten": pa.array([done.files_rewritten], pa.int64()),
            "files_added": pa.array([done.files_added], pa.int64()),
            "rows": pa.array([done.rows], pa.int64()),
            "bytes_before": pa.array([done.bytes_before], pa.int64()),
            "bytes_after": pa.array([done.bytes_after], pa.int64()),
            "version": pa.array([None if snapshot is None else snapshot.version], pa.int64()),
        }
    )
