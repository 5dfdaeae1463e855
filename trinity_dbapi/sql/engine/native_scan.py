"""What DuckDB scans for a user table as a view of the lakehouse sees it.

:func:`table_scan` takes the scan :mod:`trinity_dbapi.tables.scan` plans
for the pinned version (the files that can hold matching rows, and how to
read them) and makes it something DuckDB reads: a :class:`NativeScan` of
local Parquet files spliced into the SQL text, a lazy Arrow dataset, or
rows read by column ID. A native scan can re-read its files one by one to
blame a damaged one (it is a :class:`~.duck_errors.Rereadable`).

Imports from sql/engine/: duck_errors, duck_run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import duckdb

from trinity_dbapi.errors import CorruptFileError, Error, InternalError
from trinity_dbapi.format import type_mapping
from trinity_dbapi.format.sql_text import quote_identifier, quote_string
from trinity_dbapi.sql.engine.duck_errors import (
    NOT_FILE_ERRORS,
    is_one_of,
    may_be_a_file,
    translate_duckdb_error,
)
from trinity_dbapi.sql.engine.duck_run import execute_duckdb
from trinity_dbapi.tables import managed, scan

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.objects import ObjectOperations
    from trinity_dbapi.lakehouse.transaction import Transaction
    from trinity_dbapi.storage import Storage

__all__ = ["NativeScan", "table_scan"]


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
    allowed values; see :mod:`~trinity_dbapi.sql.engine.predicates`) and how to read
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
