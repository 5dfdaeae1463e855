"""Reflection on the tree's point-lookup path: what the dialect reads, and how.

SQLAlchemy's reflection asks about one table (``get_columns``,
``has_table``, ...) or one namespace (``get_table_names``,
``MetaData.reflect(schema=...)``). Building a catalog table to answer would
read every definition in the lakehouse; instead each answer is read from the
DB-API connection's own transaction, as a statement would read it:

* one table: a point lookup of its key and one definition file
  (:func:`table_facts`), depth + 2 storage reads at most;
* names: a key-range scan of a namespace's keys (:func:`table_names`) or of
  the namespace keys (:func:`namespace_names`), reading no definition file;
* a namespace's tables for the ``get_multi_*`` methods: one scan, then each
  definition once (:func:`namespace_facts`).

What a definition turns into is the catalog's own row-building code (the
rows of ``system.tables`` and ``system.columns``), so reflection shows
exactly what the catalog tables show.

Imports from sqlalchemy/: compat, types.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import exc

from trinity_dbapi.errors import (
    Error,
    InterfaceError,
    InvalidNameError,
    NoSuchNamespaceError,
    NoSuchTableError,
)
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sqlalchemy.compat import (
    ReflectedColumn,
    ReflectedIndex,
    ReflectedPrimaryKeyConstraint,
    ReflectedTableComment,
    driver_connection,
)
from trinity_dbapi.sqlalchemy.types import sqlalchemy_type

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import DataType, TableDefinition
    from trinity_dbapi.lakehouse.transaction import Transaction

T = TypeVar("T")

#: The columns of a ``system.tables`` row that reflection uses.
TABLE_FIELDS = ("primary_key", "format_properties", "comment", "partition_columns", "properties")


@dataclass(frozen=True)
class TableFacts:
    """What reflection reports of one table, as the catalog tables show it.

    Attributes:
        columns: ``(name, type, nullable, comment)`` of each column, in order.
        table: the ``system.tables`` values of :data:`TABLE_FIELDS`, maps as
            lists of ``(key, value)`` pairs (as the driver returns them).
    """

    columns: tuple[tuple[str, DataType, bool, str | None], ...]
    table: Mapping[str, Any]


@dataclass(frozen=True)
class _OneTable:
    """Stands in for the catalog's read view: the one table the rows are built from."""

    tables: list[tuple[str, TableDefinition]]
    views: tuple[()] = ()  # system.tables lists views too: none here


def _pairs(value: Any) -> Any:
    # Arrow maps come back from the driver as lists of pairs.
    return list(value.items()) if isinstance(value, Mapping) else value


def facts(namespace: str, definition: TableDefinition) -> TableFacts:
    """The facts of one table definition, built by the catalog's row code."""
    from trinity_dbapi.sql.dialect import parse_type_sql

    one = cast(Any, _OneTable([(namespace, definition)]))
    table_row = next(iter(catalog.CATALOG_TABLES[catalog.SYSTEM, "tables"].rows(one)))
    column_rows = catalog.CATALOG_TABLES[catalog.SYSTEM, "columns"].rows(one)
    return TableFacts(
        columns=tuple(
            (
                row["column_name"],
                parse_type_sql(row["data_type"]),
                bool(row["is_nullable"]),
                row["comment"],
            )
            for row in column_rows
        ),
        table={name: _pairs(table_row[name]) for name in TABLE_FIELDS},
    )


def read(connection: Any, work: Callable[[Transaction], T], what: str) -> T:
    """Run ``work`` on the transaction of a SQLAlchemy connection's DB-API connection.

    It reads as a statement would: SQLAlchemy's transaction begins as it does
    for a statement, the DB-API connection's transaction is the view (one
    begins when none is open, pinned to the latest version), and in
    autocommit mode a transaction begun for the read ends with it.

    Args:
        connection: the SQLAlchemy ``Connection`` reflection runs on.
        work: reads through the transaction.
        what: the read, for error messages (``"reflect ns.t"``).

    Raises:
        sqlalchemy.exc.DBAPIError: the read failed (a storage error, a
            closed connection), wrapping the driver's error as a statement's is.
    """
    from trinity_dbapi.dbapi.cursor import guard

    if not connection.in_transaction():
        connection.begin()  # as executing a statement autobegins
    dbapi_connection = driver_connection(connection)
    session = dbapi_connection.session
    try:
        with dbapi_connection.lock:
            if dbapi_connection.closed:
                raise InterfaceError("the connection is closed: open a new one with connect()")
            scoped = session.autocommit and not session.in_transaction
            try:
                return cast(T, guard(lambda: work(session.transaction())))
            finally:
                if scoped:
                    session.rollback()  # a read-only transaction: nothing to keep
    except Error as error:
        raise exc.DBAPIError.instance(what, None, error, Error) from error


def namespace_names(txn: Transaction) -> list[str]:
    """Every namespace, sorted: one scan of the namespace keys."""
    return sorted(txn.list_namespaces())


def namespace_exists(txn: Transaction, namespace: str) -> bool:
    """Whether ``namespace`` exists: one key lookup."""
    try:
        return txn.namespace_exists(namespace)
    except InvalidNameError:
        return False


def table_names(txn: Transaction, namespace: str) -> list[str]:
    """The sorted tables of ``namespace`` (none when it does not exist): one key-range scan."""
    try:
        return sorted(txn.list_tables(namespace))
    except (InvalidNameError, NoSuchNamespaceError):
        return []


def table_exists(txn: Transaction, namespace: str, table: str) -> bool:
    """Whether table (or, as SQLAlchemy asks, view) ``namespace.table`` exists: key lookups."""
    try:
        return txn.table_exists(namespace, table) or txn.view_exists(namespace, table)
    except InvalidNameError:
        return False


def table_facts(txn: Transaction, namespace: str, table: str) -> TableFacts | None:
    """The facts of ``namespace.table``, or None when there is no such table.

    One key lookup and one definition file.
    """
    try:
        return facts(namespace, txn.load_table(namespace, table))
    except (InvalidNameError, NoSuchTableError):
        return None


def namespace_facts(
    txn: Transaction, namespace: str, names: Iterable[str] | None
) -> dict[str, TableFacts]:
    """The facts of each table of ``namespace``, or of those of ``names`` that exist.

    Without ``names``: one key-range scan, then each definition once. With
    them: one point lookup each (the namespace's other tables are not read).
    """
    wanted = table_names(txn, namespace) if names is None else list(dict.fromkeys(names))
    found: dict[str, TableFacts] = {}
    for name in wanted:
        table = table_facts(txn, namespace, name)
        if table is not None:
            found[name] = table
    return found


# -- what reflection reports of one table's facts ----------------------------------------


@cache
def catalog_table_facts(namespace: str, table_name: str) -> TableFacts:
    """The facts of a catalog table (``system.tables``): no file is read."""
    from trinity_dbapi.format.type_mapping import data_type_from_field

    # Catalog tables have fixed schemas: typed from them, with no key, index or comment.
    columns = tuple(
        (field.name, data_type_from_field(field), field.nullable, None)
        for field in catalog.catalog_schema(namespace, table_name)
    )
    table: dict[str, Any] = {name: [] for name in TABLE_FIELDS}
    return TableFacts(columns, {**table, "comment": None})


def columns(table: TableFacts) -> list[ReflectedColumn]:
    """What ``get_columns`` reports."""
    return [
        {
            "name": name,
            "type": sqlalchemy_type(data_type),
            "nullable": nullable,
            "default": None,
            "comment": comment,
        }
        for name, data_type, nullable, comment in table.columns
    ]


def pk_constraint(table: TableFacts) -> ReflectedPrimaryKeyConstraint:
    """What ``get_pk_constraint`` reports: the key's columns; keys are unnamed."""
    return {"constrained_columns": list(table.table["primary_key"] or ()), "name": None}


def nothing(table: TableFacts) -> list[Any]:
    """Foreign keys, unique and check constraints: the format records none."""
    return []


def indexes(table: TableFacts) -> list[ReflectedIndex]:
    """What ``get_indexes`` reports: one single-column, non-unique index each."""
    # Secondary indices are the format properties "index.<name>" = column.
    found = sorted(
        (key[len("index.") :], column)
        for key, column in table.table["format_properties"] or ()
        if key.startswith("index.")
    )
    return [
        ReflectedIndex(name=name, column_names=[column], unique=False, dialect_options={})
        for name, column in found
    ]


def table_comment(table: TableFacts) -> ReflectedTableComment:
    """What ``get_table_comment`` reports."""
    return {"text": table.table["comment"]}


def table_options(table: TableFacts) -> dict[str, Any]:
    """What ``get_table_options`` reports: partitioning and properties, when set."""
    options: dict[str, Any] = {}
    # Only columns: a transform's directory (``ts_day`` of ``day(ts)``) is no
    # column, and Superset queries these names (docs/datasets.md).
    transforms = json.loads(
        dict(table.table["format_properties"] or {}).get("partition_transforms") or "{}"
    )
    columns = [name for name in table.table["partition_columns"] or () if name not in transforms]
    if columns:
        options["trinity_partitioned_by"] = columns
    if table.table["properties"]:
        options["trinity_properties"] = dict(table.table["properties"])
    return options


#: What reflection reports of one table, by SQLAlchemy's reflection kind: the
#: one place that says it. The dialect's ``get_<kind>`` (one table) and
#: ``get_multi_<kind>`` (a namespace's tables) are made from each entry
#: (:mod:`~trinity_dbapi.sqlalchemy.dialect`).
FACETS: Mapping[str, Callable[[TableFacts], Any]] = {
    "columns": columns,
    "pk_constraint": pk_constraint,
    "foreign_keys": nothing,
    "indexes": indexes,
    "unique_constraints": nothing,
    "check_constraints": nothing,
    "table_comment": table_comment,
    "table_options": table_options,
}


__all__ = [
    "FACETS",
    "TABLE_FIELDS",
    "TableFacts",
    "catalog_table_facts",
    "columns",
    "facts",
    "indexes",
    "namespace_exists",
    "namespace_facts",
    "namespace_names",
    "nothing",
    "pk_constraint",
    "read",
    "table_comment",
    "table_exists",
    "table_facts",
    "table_names",
    "table_options",
]
