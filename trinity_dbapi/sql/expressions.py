"""Syntax tree nodes of the trinity dialect's own statements.

Queries and ``INSERT`` / ``UPDATE`` / ``DELETE`` / ``MERGE`` use sqlglot's nodes unchanged
(``exp.Select``, ``exp.Insert``, ``exp.Merge``, ...), and so do ``COMMIT`` (``exp.Commit``)
and ``ROLLBACK`` (``exp.Rollback``). Everything else the grammar adds is one node class here,
declared the sqlglot way: an :class:`~sqlglot.exp.Expression` subclass whose
``arg_types`` name its children (``True`` = required). The generator renders
each with a ``<key>_sql`` method (``key`` is the lower-cased class name).

Statements that change the lakehouse subclass the sqlglot node of their kind
(``exp.Create``, ``exp.Drop``, ``exp.Alter``, ``exp.TruncateTable``), so tools
that classify sqlglot trees see them for what they are: Superset's
``is_mutating`` (which refuses DDL and DML where a database does not allow
them) looks for exactly those classes. ``CALL`` is an ``exp.Alter``: sqlglot
has no procedure call node, most procedures change the lakehouse, and the
syntax cannot tell which do. ``DESCRIBE TABLE`` and ``SHOW CREATE TABLE`` are
``exp.Describe``, whose table a reader of the tree finds. Keys and generator
dispatch stay by class name, and every node declares its own ``arg_types``.

Conventions shared by the nodes:

* ``this`` is the object the statement acts on: an ``exp.Identifier`` for a
  namespace or an index, an ``exp.Table`` for a table or a procedure.
* ``kind`` keeps the spelling the user wrote where the grammar has synonyms
  that must round-trip: ``"NAMESPACE"`` / ``"SCHEMA"`` (and ``"NAMESPACES"`` /
  ``"SCHEMAS"``).
* ``exists`` is ``IF [NOT] EXISTS``; ``comment`` and property values are an
  ``exp.Literal`` string or an ``exp.Placeholder``; ``properties`` is a list of
  :class:`PropertyItem`.
* Time travel is sqlglot's own ``exp.Version`` on ``exp.Table`` (arg
  ``version``), with ``this`` holding the spelling (``SYSTEM_VERSION``,
  ``VERSION``, ``SYSTEM_TIME`` or ``TIMESTAMP``).
* A typed literal such as ``TIMESTAMP '2026-01-01'`` is an ``exp.Cast`` whose
  ``meta["typed_literal"]`` is true, so that it prints back as written.

Imports from sql/: nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

if TYPE_CHECKING:
    from sqlglot.dialects.dialect import DialectType

#: ``meta`` key marking an ``exp.Cast`` written as a typed literal (``DATE '...'``).
TYPED_LITERAL = "typed_literal"

#: Meta key marking an identifier written as a string (``FROM 'x.csv'``), which
#: DuckDB would read as a file name: a table position refuses it.
STRING_NAME = "string_name"


class PropertyItem(exp.Expression):
    """``key = 'value'``: ``this`` is an identifier, a dotted name or a string key."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "value": True}


class PartitionTransform(exp.Expression):
    """``day(ts)``, ``bucket(16, id)`` in PARTITIONED BY: ``this`` the transform name,
    ``expression`` the column, ``width`` the number literal (bucket, truncate)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expression": True, "width": False}


class CreateNamespace(exp.Create):
    """``CREATE NAMESPACE|SCHEMA [IF NOT EXISTS] ns [COMMENT c] [WITH (...)]``."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "kind": True,
        "exists": False,
        "comment": False,
        "properties": False,
    }


class DropNamespace(exp.Drop):
    """``DROP NAMESPACE|SCHEMA [IF EXISTS] ns [RESTRICT|CASCADE]`` (``mode``)."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "kind": True,
        "exists": False,
        "mode": False,
    }


class AlterNamespace(exp.Alter):
    """``ALTER NAMESPACE|SCHEMA ns <action>``: ``SetProperties`` or ``UnsetProperties``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "kind": True, "action": True}


class ShowNamespaces(exp.Expression):
    """``SHOW NAMESPACES|SCHEMAS [LIKE pattern]``."""

    arg_types: ClassVar[dict[str, bool]] = {"kind": True, "like": False}


class DescribeNamespace(exp.Expression):
    """``DESCRIBE NAMESPACE|SCHEMA ns``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "kind": True}


class ColumnDefinition(exp.Expression):
    """``name type [NOT NULL] [COMMENT c]`` in ``CREATE TABLE`` and ``ADD COLUMN``."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "kind": True,
        "not_null": False,
        "comment": False,
    }


class CreateTable(exp.Create):
    """``CREATE TABLE [IF NOT EXISTS] t (columns [, PRIMARY KEY (...)]) ...``."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "exists": False,
        "expressions": True,
        "primary_key": False,
        "partitioned_by": False,
        "comment": False,
        "properties": False,
    }


class CreateTableClone(exp.Create):
    """``CREATE TABLE [IF NOT EXISTS] t CLONE source [FOR SYSTEM_VERSION AS OF v]``.

    ``expression`` is the source, an ``exp.Table`` whose ``version`` is the time travel.
    """

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "exists": False, "expression": True}


class CreateTableAs(exp.Create):
    """``CREATE TABLE [IF NOT EXISTS] t [PARTITIONED BY (...)] ... AS query`` (``expression``)."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "exists": False,
        "partitioned_by": False,
        "comment": False,
        "properties": False,
        "expression": True,
    }


class DropTable(exp.Drop):
    """``DROP TABLE [IF EXISTS] t``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "exists": False}


class AlterTable(exp.Alter):
    """``ALTER TABLE t <action>``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "action": True}


class AddColumn(exp.Expression):
    """``ADD COLUMN <column definition>``."""


class DropColumn(exp.Expression):
    """``DROP COLUMN name``."""


class RenameColumnTo(exp.Expression):
    """``RENAME COLUMN old TO new`` (``this`` -> ``to``)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "to": True}


class RenameTable(exp.Expression):
    """``RENAME TO [ns.]t``."""


class AlterColumnType(exp.Expression):
    """``ALTER [COLUMN] c [SET DATA] TYPE t`` (``this``: the column, ``kind``: the new type)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "kind": True}


class SetPartitioning(exp.Expression):
    """``SET PARTITIONED BY (...)`` of ALTER TABLE: columns and PartitionTransforms, or none."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": False}


class SetProperties(exp.Expression):
    """``SET PROPERTIES (key = value, ...)``."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True}


class UnsetProperties(exp.Expression):
    """``UNSET PROPERTIES (key, ...)``."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True}


class Truncate(exp.TruncateTable):
    """``TRUNCATE [TABLE] t``: one table, where sqlglot's ``exp.TruncateTable`` takes many."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class CreateIndex(exp.Create):
    """``CREATE INDEX [IF NOT EXISTS] name ON t (column)``: ``table`` and ``column`` args."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "table": True,
        "column": True,
        "exists": False,
    }


class DropIndex(exp.Drop):
    """``DROP INDEX [IF EXISTS] name ON t``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "table": True, "exists": False}


class ShowTables(exp.Expression):
    """``SHOW TABLES [IN ns] [LIKE pattern]``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "like": False}


class DescribeTable(exp.Describe):
    """``DESCRIBE TABLE t``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class ShowCreateTable(exp.Describe):
    """``SHOW CREATE TABLE t``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class Begin(exp.Expression):
    """``BEGIN [ISOLATION LEVEL SERIALIZABLE|SNAPSHOT]`` (``isolation`` is an upper-case str)."""

    arg_types: ClassVar[dict[str, bool]] = {"isolation": False}


class SetTransaction(exp.Expression):
    """``SET TRANSACTION ISOLATION LEVEL SERIALIZABLE|SNAPSHOT``."""

    arg_types: ClassVar[dict[str, bool]] = {"isolation": True}


class SaveTransaction(exp.Alter):
    """``SAVE TRANSACTION``: hand the open transaction to another session.

    An ``exp.Alter``, as ``CALL`` is: it writes to the lakehouse, so Superset
    refuses it in a database without *Allow DML*.
    """

    arg_types: ClassVar[dict[str, bool]] = {}


class LoadTransaction(exp.Alter):
    """``LOAD TRANSACTION 'id'`` (``this``: a string literal or ``?``).

    An ``exp.Alter`` like :class:`SaveTransaction`: its ``COMMIT`` commits changes.
    """

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class SetCommitMessage(exp.Expression):
    """``SET COMMIT MESSAGE 'text'`` (``this``: a string literal or ``?``)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class UseNamespace(exp.Expression):
    """``USE ns``."""


class Call(exp.Alter):
    """``CALL [ns.]procedure(args)``: positional args, then ``exp.Kwarg`` named ones."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": False}


class Explain(exp.Expression):
    """``EXPLAIN [ANALYZE] query``; prints in every dialect, DuckDB's included."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "analyze": False}

    def sql(self, dialect: DialectType = None, copy: bool = True, **opts: Any) -> str:
        """The statement's text; a dialect without a handler for it gets ``EXPLAIN <query>``."""
        from sqlglot.dialects.dialect import Dialect

        if type(self) in Dialect.get_or_raise(dialect).generator_class.TRANSFORMS:
            return super().sql(dialect, copy=copy, **opts)
        analyze = "ANALYZE " if self.args.get("analyze") else ""
        return f"EXPLAIN {analyze}{self.this.sql(dialect, copy=copy, **opts)}"


class RefStatement(exp.Expression):
    """A branch or tag statement (``action``: "CREATE BRANCH", "DROP BRANCH", "USE BRANCH",
    "MERGE BRANCH", "CREATE TAG", "DROP TAG", "SHOW BRANCHES", "SHOW TAGS").

    ``this`` is the ref's name; ``exists`` IF [NOT] EXISTS; ``source_kind``
    ("BRANCH", "TAG", "VERSION") and ``source`` the FROM clause; ``target``
    MERGE's INTO.
    """

    arg_types: ClassVar[dict[str, bool]] = {
        "action": True,
        "this": False,
        "exists": False,
        "source_kind": False,
        "source": False,
        "target": False,
    }


class RefChange(exp.Alter):
    """CREATE or DROP BRANCH or TAG, MERGE BRANCH: a :class:`RefStatement` that commits.

    An ``exp.Alter``, as ``CALL`` is: it changes the lakehouse, so Superset
    refuses it in a database without *Allow DML*.
    """

    arg_types: ClassVar[dict[str, bool]] = RefStatement.arg_types


#: Every node class of this module, for the generator's dispatch table.
NODES: tuple[type[exp.Expression], ...] = (
    PropertyItem,
    CreateNamespace,
    DropNamespace,
    AlterNamespace,
    ShowNamespaces,
    DescribeNamespace,
    ColumnDefinition,
    CreateTable,
    CreateTableAs,
    CreateTableClone,
    DropTable,
    AlterTable,
    AddColumn,
    DropColumn,
    RenameColumnTo,
    RenameTable,
    SetProperties,
    UnsetProperties,
    Truncate,
    AlterColumnType,
    CreateIndex,
    DropIndex,
    ShowTables,
    DescribeTable,
    ShowCreateTable,
    Begin,
    SetTransaction,
    SetCommitMessage,
    SaveTransaction,
    LoadTransaction,
    UseNamespace,
    Call,
    Explain,
    RefStatement,
    RefChange,
)


class CreateView(exp.Create):
    """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(col, ...)] [COMMENT c] AS query``."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "replace": False,
        "exists": False,
        "columns": False,
        "comment": False,
        "expression": True,
    }


class DropView(exp.Drop):
    """``DROP VIEW [IF EXISTS] v``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "exists": False}


class ShowViews(exp.Expression):
    """``SHOW VIEWS [IN ns]``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False}


class CopyOption(exp.Expression):
    """One option of COPY: ``this`` the upper-case word, ``value`` its value or None.

    ``FORMAT`` takes an ``exp.Var`` (``csv``, ``parquet``, ``json``),
    ``HEADER`` and ``OVERWRITE`` an ``exp.Boolean`` (or nothing: true),
    ``DELIMITER`` a string literal or ``?``.
    """

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "value": False}


class CopyFrom(exp.Expression):
    """``COPY t FROM 'file' [(options)]``: the file's rows appended to table ``this``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "file": True, "options": False}


class CopyTo(exp.Expression):
    """``COPY (query) TO 'file' [(options)]`` or ``COPY t TO 'file'``.

    ``this`` is the query; ``COPY t TO`` holds ``SELECT * FROM t`` with
    ``table`` set, so that it prints back as written and runs as that query.
    """

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,
        "file": True,
        "options": False,
        "table": False,
    }


class _QueryWrapper(exp.Expression):
    """A statement DuckDB runs on a query: prints in every dialect, DuckDB's included."""

    #: The statement's leading word.
    word: ClassVar[str] = ""

    def sql(self, dialect: DialectType = None, copy: bool = True, **opts: Any) -> str:
        """The statement's text; a dialect without a handler for it gets ``WORD <query>``."""
        from sqlglot.dialects.dialect import Dialect

        if type(self) in Dialect.get_or_raise(dialect).generator_class.TRANSFORMS:
            return super().sql(dialect, copy=copy, **opts)
        return f"{self.word} {self.this.sql(dialect, copy=copy, **opts)}"


class SummarizeQuery(_QueryWrapper):
    """``SUMMARIZE t`` or ``SUMMARIZE query``: DuckDB's statistics of each column.

    ``SUMMARIZE t`` holds ``SELECT * FROM t`` with ``table`` set (so that it
    prints back as written, and DuckDB runs ``SUMMARIZE SELECT * FROM <scan>``).
    """

    word: ClassVar[str] = "SUMMARIZE"
    arg_types: ClassVar[dict[str, bool]] = {"this": True, "table": False}


class DescribeQuery(_QueryWrapper):
    """``DESCRIBE query``: the names and types of the query's columns, as DuckDB reports them."""

    word: ClassVar[str] = "DESCRIBE"
    arg_types: ClassVar[dict[str, bool]] = {"this": True}
