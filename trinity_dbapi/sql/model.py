"""The statement model: what a SQL statement asks for, as frozen dataclasses.

:func:`trinity_dbapi.sql.statements.to_statement` builds these from parsed
SQL text, and the executor (:mod:`trinity_dbapi.sql.engine`) runs them. Names
are plain ``str`` after identifier
normalisation: unquoted identifiers are case-insensitive and lower-cased,
quoted ones keep their case; a namespace of ``None`` means the connection's
current namespace.

Imports from sql/: nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from sqlglot import exp

from trinity_dbapi.format.definitions import Column, DataType

__all__ = [
    "AddColumn",
    "AlterAction",
    "AlterColumnType",
    "AlterNamespace",
    "AlterTable",
    "AsOf",
    "Begin",
    "Call",
    "Commit",
    "CopyFrom",
    "CopyOptions",
    "CopyTo",
    "CreateIndex",
    "CreateNamespace",
    "CreateTable",
    "CreateTableAs",
    "CreateTableClone",
    "CreateView",
    "DescribeNamespace",
    "DescribeTable",
    "Dml",
    "DropColumn",
    "DropIndex",
    "DropNamespace",
    "DropTable",
    "DropView",
    "LoadTransaction",
    "PartitionTransform",
    "Query",
    "RefCommand",
    "RenameColumn",
    "RenameTable",
    "Rollback",
    "SaveTransaction",
    "SetCommitMessage",
    "SetPartitioning",
    "SetTableProperties",
    "SetTransaction",
    "ShowCreateTable",
    "ShowNamespaces",
    "ShowTables",
    "ShowViews",
    "Statement",
    "TableName",
    "TableRef",
    "TruncateTable",
    "UnsetTableProperties",
    "Use",
]


@dataclass(frozen=True)
class TableName:
    """A table (or procedure) name; ``namespace`` None is the current namespace."""

    namespace: str | None
    name: str


@dataclass(frozen=True)
class AsOf:
    """A time travel target: a version number, an export name or a point in time (UTC)."""

    kind: Literal["version", "export", "timestamp"]
    value: int | str | datetime


@dataclass(frozen=True)
class TableRef:
    """A real table a statement reads (or writes), its node in the tree, its time travel target."""

    node: exp.Table
    table: TableName
    as_of: AsOf | None
    #: On a call of the lakehouse's own table function ``system.table_changes(...)``
    #: (``table`` names it): its argument values, bound. None on every table.
    arguments: tuple[object, ...] | None = None


@dataclass(frozen=True)
class CreateNamespace:
    """``CREATE NAMESPACE``."""

    name: str
    if_not_exists: bool
    comment: str | None
    properties: dict[str, str]


@dataclass(frozen=True)
class DropNamespace:
    """``DROP NAMESPACE``; ``cascade`` also drops the namespace's tables."""

    name: str
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class AlterNamespace:
    """``ALTER NAMESPACE ... SET | UNSET PROPERTIES``."""

    name: str
    set_properties: dict[str, str]
    unset_properties: tuple[str, ...]


@dataclass(frozen=True)
class ShowNamespaces:
    """``SHOW NAMESPACES [LIKE pattern]``."""

    like: str | None


@dataclass(frozen=True)
class DescribeNamespace:
    """``DESCRIBE NAMESPACE``."""

    name: str


@dataclass(frozen=True)
class PartitionTransform:
    """``day(ts)`` in PARTITIONED BY: its directory ``name`` is in ``partitioned_by``."""

    name: str
    kind: str
    source: str
    width: int | None = None


@dataclass(frozen=True)
class CreateTable:
    """``CREATE TABLE``: columns numbered 1..n depth first, nested columns included."""

    table: TableName
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    partitioned_by: tuple[str, ...]
    comment: str | None
    properties: dict[str, str]
    if_not_exists: bool
    #: The transforms among ``partitioned_by`` (their directory names).
    partition_transforms: tuple[PartitionTransform, ...] = ()


@dataclass(frozen=True)
class DropTable:
    """``DROP TABLE``."""

    table: TableName
    if_exists: bool


@dataclass(frozen=True)
class TruncateTable:
    """``TRUNCATE [TABLE]``: remove every row of a table, keeping its definition."""

    table: TableName


@dataclass(frozen=True)
class CreateIndex:
    """``CREATE INDEX``: a secondary index of one column of a table."""

    name: str
    table: TableName
    column: str
    if_not_exists: bool


@dataclass(frozen=True)
class DropIndex:
    """``DROP INDEX name ON table``."""

    name: str
    table: TableName
    if_exists: bool


@dataclass(frozen=True)
class AddColumn:
    """``ADD COLUMN``: the column and its nested columns have ID 0 (the executor numbers them)."""

    column: Column


@dataclass(frozen=True)
class DropColumn:
    """``DROP COLUMN``."""

    name: str


@dataclass(frozen=True)
class RenameColumn:
    """``RENAME COLUMN old TO new``."""

    old: str
    new: str


@dataclass(frozen=True)
class SetTableProperties:
    """``SET PROPERTIES`` of a table."""

    properties: dict[str, str]


@dataclass(frozen=True)
class UnsetTableProperties:
    """``UNSET PROPERTIES`` of a table."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class RenameTable:
    """``RENAME TO``; ``new.namespace`` None keeps the table in the current namespace."""

    new: TableName


@dataclass(frozen=True)
class AlterColumnType:
    """``ALTER COLUMN c [SET DATA] TYPE t``: a promotion the data files need not follow."""

    name: str
    type: DataType


@dataclass(frozen=True)
class SetPartitioning:
    """``SET PARTITIONED BY (...)``: the partitioning of data written from now on (none: ``()``)."""

    partitioned_by: tuple[str, ...]
    partition_transforms: tuple[PartitionTransform, ...] = ()


AlterAction = (
    AddColumn
    | DropColumn
    | RenameColumn
    | SetTableProperties
    | UnsetTableProperties
    | RenameTable
    | AlterColumnType
    | SetPartitioning
)


@dataclass(frozen=True)
class AlterTable:
    """``ALTER TABLE`` with one action."""

    table: TableName
    action: AlterAction


@dataclass(frozen=True)
class ShowTables:
    """``SHOW TABLES [IN ns] [LIKE pattern]``."""

    namespace: str | None
    like: str | None


@dataclass(frozen=True)
class DescribeTable:
    """``DESCRIBE [TABLE]``."""

    table: TableName


@dataclass(frozen=True)
class ShowCreateTable:
    """``SHOW CREATE TABLE``."""

    table: TableName


@dataclass(frozen=True)
class RefCommand:
    """A branch or tag statement: CREATE, DROP, USE or MERGE BRANCH, CREATE or DROP TAG, SHOW."""

    # action: "CREATE BRANCH", ..., "SHOW TAGS"; name: the ref (None for SHOW);
    # if_exists: IF [NOT] EXISTS; source_kind ("BRANCH", "TAG", "VERSION") and
    # source: the FROM clause (None: the default); target: MERGE's INTO (None: main).
    action: str
    name: str | None = None
    if_exists: bool = False
    source_kind: str | None = None
    source: str | int | None = None
    target: str | None = None


@dataclass(frozen=True)
class Begin:
    """``BEGIN`` / ``START TRANSACTION``; ``isolation`` "SERIALIZABLE", "SNAPSHOT" or None."""

    isolation: str | None


@dataclass(frozen=True)
class Commit:
    """``COMMIT``."""


@dataclass(frozen=True)
class Rollback:
    """``ROLLBACK``."""


@dataclass(frozen=True)
class SaveTransaction:
    """``SAVE TRANSACTION``: save the open transaction for another session; one row, its id."""


@dataclass(frozen=True)
class LoadTransaction:
    """``LOAD TRANSACTION 'id'``: continue a saved transaction in this session."""

    txn_id: str


@dataclass(frozen=True)
class SetCommitMessage:
    """``SET COMMIT MESSAGE 'text'``: the open transaction's commit message (None: none)."""

    message: str | None


@dataclass(frozen=True)
class SetTransaction:
    """``SET TRANSACTION ISOLATION LEVEL``: "SERIALIZABLE" or "SNAPSHOT"."""

    isolation: str


@dataclass(frozen=True)
class Use:
    """``USE ns``: make ``ns`` the current namespace."""

    namespace: str


@dataclass(frozen=True)
class Call:
    """``CALL procedure(args)`` with arguments as Python values."""

    procedure: TableName
    args: tuple[object, ...]
    kwargs: dict[str, object]


@dataclass(frozen=True)
class Query:
    """A query for DuckDB: placeholders renumbered $1..$n, ``params`` their values in order."""

    expression: exp.Expression
    tables: tuple[TableRef, ...]
    param_count: int
    params: tuple[object, ...] = field(default=())


@dataclass(frozen=True)
class Dml:
    """``INSERT`` / ``UPDATE`` / ``DELETE`` / ``MERGE`` like :class:`Query`; ``tables[0]`` is the target."""

    expression: exp.Expression
    tables: tuple[TableRef, ...]
    param_count: int
    params: tuple[object, ...] = field(default=())


@dataclass(frozen=True)
class CreateTableAs:
    """``CREATE TABLE ... AS query``: the columns are the query's, which runs as a Query."""

    table: TableName
    query: Query
    partitioned_by: tuple[str, ...]
    comment: str | None
    properties: dict[str, str]
    if_not_exists: bool
    #: The transforms among ``partitioned_by`` (their directory names).
    partition_transforms: tuple[PartitionTransform, ...] = ()


@dataclass(frozen=True)
class CreateTableClone:
    """``CREATE TABLE t CLONE source [FOR SYSTEM_VERSION AS OF ...]``: shares the source's files."""

    table: TableName
    source: TableName
    as_of: AsOf | None
    if_not_exists: bool


@dataclass(frozen=True)
class CreateView:
    """``CREATE [OR REPLACE] VIEW``: ``sql`` is the query's text as stored (trinity dialect)."""

    view: TableName
    columns: tuple[str, ...]
    comment: str | None
    query: Query
    or_replace: bool
    if_not_exists: bool


@dataclass(frozen=True)
class DropView:
    """``DROP VIEW``."""

    view: TableName
    if_exists: bool


@dataclass(frozen=True)
class ShowViews:
    """``SHOW VIEWS [IN ns]``."""

    namespace: str | None


@dataclass(frozen=True)
class CopyOptions:
    """The options of COPY; None where the statement left one out (the file decides)."""

    format: str | None = None  # "csv", "parquet" or "json" (NDJSON)
    header: bool | None = None
    delimiter: str | None = None
    overwrite: bool = False


@dataclass(frozen=True)
class CopyFrom:
    """``COPY t FROM 'file'``: the file's rows appended to ``table``."""

    table: TableName
    path: str
    options: CopyOptions


@dataclass(frozen=True)
class CopyTo:
    """``COPY (query) TO 'file'`` (``COPY t TO`` is ``SELECT * FROM t``)."""

    query: Query
    path: str
    options: CopyOptions


Statement = (
    CreateNamespace
    | DropNamespace
    | AlterNamespace
    | ShowNamespaces
    | DescribeNamespace
    | CreateTable
    | CreateTableAs
    | CreateTableClone
    | DropTable
    | TruncateTable
    | CreateIndex
    | DropIndex
    | AlterTable
    | ShowTables
    | DescribeTable
    | ShowCreateTable
    | Begin
    | RefCommand
    | Commit
    | Rollback
    | SetTransaction
    | SetCommitMessage
    | SaveTransaction
    | LoadTransaction
    | Use
    | Call
    | Query
    | Dml
    | CreateView
    | DropView
    | ShowViews
    | CopyFrom
    | CopyTo
)
