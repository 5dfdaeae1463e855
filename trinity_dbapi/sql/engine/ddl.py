"""Namespace and table DDL: statements staged in the session's transaction.

Comments are stored as the ``comment`` property of a namespace or table
(the definitions have no comment field of their own); partition columns as
the ``partition_columns`` format property, a JSON list of column names
(:attr:`~trinity_dbapi.format.definitions.TableDefinition.partition_columns` also reads the
comma-joined ``partitioned_by`` of older definitions). ``docs/sql.md``
documents both.

Imports from sql/engine/: result, session.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa

from trinity_dbapi.errors import (
    NoSuchObjectError,
    NotSupportedError,
    ObjectExistsError,
    ProgrammingError,
)
from trinity_dbapi.format.definitions import Column, TableDefinition, with_partition_columns
from trinity_dbapi.format.sql_text import qualified_name, quote_identifier, quote_string
from trinity_dbapi.format.type_mapping import arrow_type
from trinity_dbapi.sql import model
from trinity_dbapi.sql.dialect import type_sql
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.sql.engine.session import DEFAULT_NAMESPACE, Session
from trinity_dbapi.tables import datasets, managed
from trinity_dbapi.tables.promotion import PROMOTIONS, is_promotion
from trinity_dbapi.tables.transforms import Transform, dumps

COMMENT = "comment"
#: The highest column ID the table ever had (IDs of dropped columns are not reused).
LAST_COLUMN_ID = "last_column_id"


def _properties(properties: dict[str, str], comment: str | None) -> dict[str, str]:
    merged = dict(properties)
    if comment is not None:
        merged[COMMENT] = comment
    return merged


# -- namespaces ---------------------------------------------------------------------


def create_namespace(session: Session, stmt: model.CreateNamespace) -> Result:
    session.check_writable_namespace(stmt.name)
    session.writable().create_namespace(
        stmt.name, _properties(stmt.properties, stmt.comment), if_not_exists=stmt.if_not_exists
    )
    return Result()


def drop_namespace(session: Session, stmt: model.DropNamespace) -> Result:
    session.check_writable_namespace(stmt.name)
    session.writable().drop_namespace(stmt.name, cascade=stmt.cascade, if_exists=stmt.if_exists)
    return Result()


def alter_namespace(session: Session, stmt: model.AlterNamespace) -> Result:
    session.check_writable_namespace(stmt.name)
    session.writable().alter_namespace(
        stmt.name,
        set_properties=stmt.set_properties,
        unset_properties=list(stmt.unset_properties),
    )
    return Result()


# -- tables -------------------------------------------------------------------------


def create_table(session: Session, stmt: model.CreateTable) -> Result:
    namespace, name = session.resolve(stmt.table)
    by_name = {column.name: column for column in stmt.columns}
    definition = TableDefinition(
        name,
        stmt.columns,
        primary_key=[_column(namespace, name, by_name, c).id for c in stmt.primary_key],
        table_format=managed.TABLE_FORMAT,
    )
    create_table_definition(
        session,
        namespace,
        definition,
        stmt.partitioned_by,
        stmt.comment,
        stmt.properties,
        if_not_exists=stmt.if_not_exists,
        transforms=stmt.partition_transforms,
    )
    return Result()


def create_table_definition(
    session: Session,
    namespace: str,
    definition: TableDefinition,
    partitioned_by: tuple[str, ...],
    comment: str | None,
    properties: dict[str, str],
    *,
    if_not_exists: bool = False,
    dataset: dict[str, str] | None = None,
    transforms: tuple[model.PartitionTransform, ...] = (),
) -> bool:
    """Create a managed table (and its empty dataset); False if it existed and ``if_not_exists``.

    ``dataset``: the format properties of a dataset that already exists (a
    referenced Kartothek dataset); then no new one is written. ``transforms``:
    the transform partitions among ``partitioned_by`` (by directory name).
    """
    session.check_writable_namespace(namespace)
    txn = session.writable()
    if namespace == DEFAULT_NAMESPACE and not txn.namespace_exists(namespace):
        txn.create_namespace(namespace)  # "default" is created on first use
    name = definition.name
    if txn.table_exists(namespace, name):  # before writing a dataset nobody would use
        if if_not_exists:
            return False
        raise ObjectExistsError("table", f"{namespace}.{name}")
    _check_case_distinct(f"{namespace}.{name}", [c.name for c in definition.columns])
    by_name = {column.name: column for column in definition.columns}
    transformed = {t.name: Transform(t.name, t.kind, t.source, t.width) for t in transforms}
    for column in partitioned_by:
        if column not in transformed:
            _check_partition_column(namespace, name, by_name, column)
    for transform in transformed.values():
        if transform.name in by_name:  # CTAS: the query's columns are only known now
            raise ProgrammingError(
                f"partition {transform.sql()} of table {namespace}.{name} would have the "
                f"directory name {transform.name!r}, which is a column of the table; rename "
                "that column in the query"
            )
        source = _column(namespace, name, by_name, transform.source)
        transform.check(arrow_type(source.type))
    recorded = dumps(list(transformed.values())) if transformed else None
    definition = definition.replace(
        format_properties=with_partition_columns(dataset or {}, partitioned_by, recorded),
        properties=_properties(properties, comment),
    )
    # txn.create_table checks this too; here it fails before a dataset is written.
    definition.check_new_names(namespace=namespace)
    if dataset is None:
        definition = datasets.create_dataset(session.lakehouse.storage, definition, background=True)
    txn.create_table(namespace, definition)
    return True


def _column(namespace: str, table: str, by_name: dict[str, Column], name: str) -> Column:
    column = by_name.get(name)
    if column is None:
        raise ProgrammingError(
            f"column {name!r} of table {namespace}.{table} does not exist: keys and partition "
            f"columns must name declared columns ({', '.join(by_name)})"
        )
    return column


def _check_case_distinct(where: str, names: list[str]) -> None:
    """Refuse two columns whose names differ only in case.

    The definition could hold them, but DuckDB, which runs every query,
    matches names case-insensitively: it would read one column's values
    for the other.
    """
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name.casefold(), name)
        if other != name:
            raise ProgrammingError(
                f"columns {other!r} and {name!r} of table {where} differ only in case, and SQL "
                "names are matched case-insensitively, so queries could not tell them apart; "
                "give one of them another name"
            )


def _check_partition_column(
    namespace: str, table: str, by_name: dict[str, Column], name: str
) -> None:
    column = _column(namespace, table, by_name, name)
    if column.type.kind in ("struct", "map", "list"):
        raise ProgrammingError(
            f"column {name!r} of table {namespace}.{table} cannot partition the table: it has "
            f"the nested type {column.type.to_sql()}; partition by a column of a primitive type"
        )


def drop_table(session: Session, stmt: model.DropTable) -> Result:
    namespace, name = session.resolve(stmt.table)
    session.check_writable_namespace(namespace)
    if session.transaction().view_exists(namespace, name):
        raise ProgrammingError(
            f"{namespace}.{name} is a view, not a table; drop it with DROP VIEW {namespace}.{name}"
        )
    session.writable().drop_table(namespace, name, if_exists=stmt.if_exists)
    return Result()


def alter_table(session: Session, stmt: model.AlterTable) -> Result:
    namespace, name = session.resolve(stmt.table)
    session.check_writable_namespace(namespace)
    txn = session.writable()
    action = stmt.action
    if isinstance(action, model.RenameTable):
        new_namespace, new_name = session.resolve(action.new)
        session.check_writable_namespace(new_namespace)
        txn.rename_table(namespace, name, new_namespace, new_name)
        return Result()
    current = txn.load_table(namespace, name)
    if isinstance(action, model.SetPartitioning):
        txn.replace_table(namespace, _repartitioned(session, namespace, current, action))
        return Result()
    if isinstance(action, model.DropColumn | model.RenameColumn):
        _check_not_in_earlier_partitionings(session, namespace, current, action)
    altered = _altered(namespace, current, action)
    if altered == current:
        return Result()  # ALTER COLUMN to the type it has: nothing to commit
    if _holds_rows(session, current):
        _check_alter_with_rows(namespace, current, action)
        if isinstance(action, model.AddColumn | model.DropColumn | model.AlterColumnType):
            # Older files now lack (or still hold) a column, or hold it as
            # its narrower type: readers must match the files' columns by ID
            # and cast each file's values (see scan.plan_query_scan).
            properties = {**altered.format_properties, managed.MIXED_FILE_SCHEMAS: "true"}
            altered = altered.replace(format_properties=properties)
    txn.replace_table(namespace, altered)
    return Result()


def _check_not_in_earlier_partitionings(
    session: Session,
    namespace: str,
    table: TableDefinition,
    action: model.DropColumn | model.RenameColumn,
) -> None:
    """Refuse to drop or rename a column that files of an earlier partitioning hold in their paths.

    Their directories are named by it: renamed, its values would no longer
    be found; dropped and added again, the new column would read them.
    """
    if not managed.has_dataset(table):
        return
    from trinity_dbapi.tables.partitions import earlier_specs

    meta = managed.metadata(session.lakehouse.storage, table)
    column = action.name if isinstance(action, model.DropColumn) else action.old
    if any(column in spec for spec in earlier_specs(meta)):
        raise NotSupportedError(
            f"column {column!r} of table {namespace}.{table.name} cannot be dropped or renamed: "
            "files written before ALTER TABLE ... SET PARTITIONED BY hold its values in their "
            "directory names; rewrite them first (UPDATE or INSERT ... SELECT into a new table)"
        )


def _repartitioned(
    session: Session, namespace: str, table: TableDefinition, action: model.SetPartitioning
) -> TableDefinition:
    """``ALTER TABLE ... SET PARTITIONED BY``: new data only; every file keeps its directories."""
    where = f"{namespace}.{table.name}"
    if managed.files_elsewhere(table):
        managed.require_own_files(table, where, "changing the partitioning")
    if not managed.has_dataset(table):
        raise NotSupportedError(
            f"table {where} cannot change its partitioning: it has no dataset (it was created "
            "before this version stored data); recreate it with CREATE TABLE ... AS SELECT"
        )
    by_name = {column.name: column for column in table.columns}
    transformed = {
        t.name: Transform(t.name, t.kind, t.source, t.width) for t in action.partition_transforms
    }
    for column in action.partitioned_by:
        if column not in transformed:
            _check_partition_column(namespace, table.name, by_name, column)
    for transform in transformed.values():
        if transform.name in by_name:
            raise ProgrammingError(
                f"partition {transform.sql()} of table {where} would have the directory name "
                f"{transform.name!r}, which is a column of the table; rename that column first"
            )
        transform.check(arrow_type(_column(namespace, table.name, by_name, transform.source).type))
    return datasets.repartitioned(
        session.lakehouse.storage, table, action.partitioned_by, list(transformed.values())
    )


def _holds_rows(session: Session, table: TableDefinition) -> bool:
    if not managed.has_dataset(table):
        return False
    return bool(managed.metadata(session.lakehouse.storage, table).files())


def _check_alter_with_rows(namespace: str, table: TableDefinition, action: object) -> None:
    """Schema changes the existing data files can follow without being rewritten.

    Files are read by column name: an added nullable column reads as NULL in
    older files and a dropped one is ignored, but a renamed column would lose
    its values and a new NOT NULL column would have none.
    """
    where = f"{namespace}.{table.name}"
    if isinstance(action, model.RenameColumn):
        raise NotSupportedError(
            f"RENAME COLUMN on table {where}, which holds rows, is not supported: its data "
            "files name the column; create a new table with CREATE TABLE ... AS SELECT "
            f"{action.old} AS {action.new}, ... instead"
        )
    if isinstance(action, model.AddColumn) and not action.column.nullable:
        raise NotSupportedError(
            f"ADD COLUMN {action.column.name} NOT NULL on table {where}, which holds rows: "
            "the existing rows would have no value; add it as a nullable column"
        )


def _altered(namespace: str, table: TableDefinition, action: object) -> TableDefinition:
    where = f"{namespace}.{table.name}"
    names = [c.name for c in table.columns]
    if isinstance(action, model.AddColumn):
        if action.column.name in names:
            raise ObjectExistsError("column", f"{where}.{action.column.name}")
        _check_case_distinct(where, [*names, action.column.name])
        # IDs are never reused: a dropped column's ID may still name data in
        # older files, so the highest ID ever given is kept with the table.
        highest = max((c.id for c in table.all_columns()), default=0)
        highest = max(highest, int(table.format_properties.get(LAST_COLUMN_ID, "0")))
        column = renumber(action.column, highest + 1)
        last = max(c.id for c in column.walk())
        properties = {**table.format_properties, LAST_COLUMN_ID: str(last)}
        return table.replace(columns=(*table.columns, column), format_properties=properties)
    if isinstance(action, model.DropColumn):
        column = _existing(where, table, action.name)
        sources = {t.source for t in managed.partition_transforms(table).values()}
        partitioning = action.name in table.partition_columns or action.name in sources
        if column.id in table.primary_key or partitioning:
            raise ProgrammingError(
                f"column {action.name!r} of table {where} cannot be dropped: it is part of the "
                "primary key or the partitioning; recreate the table without it instead"
            )
        if len(table.columns) == 1:
            raise ProgrammingError(
                f"column {action.name!r} is the last column of table {where}: a table needs at "
                "least one column; drop the table instead"
            )
        highest = max((c.id for c in table.all_columns()), default=0)
        highest = max(highest, int(table.format_properties.get(LAST_COLUMN_ID, "0")))
        properties = {**table.format_properties, LAST_COLUMN_ID: str(highest)}
        return table.replace(
            columns=tuple(c for c in table.columns if c.name != action.name),
            format_properties=properties,
        )
    if isinstance(action, model.RenameColumn):
        _existing(where, table, action.old)
        for transform in managed.partition_transforms(table).values():
            if transform.source == action.old:
                raise NotSupportedError(
                    f"column {action.old!r} of table {where} cannot be renamed: the table is "
                    f"partitioned by {transform.sql()}; recreate the table instead"
                )
        if action.new in names:
            raise ObjectExistsError("column", f"{where}.{action.new}")
        _check_case_distinct(where, [*(n for n in names if n != action.old), action.new])
        partitions = [action.new if p == action.old else p for p in table.partition_columns]
        format_properties = with_partition_columns(table.format_properties, partitions)
        columns = tuple(
            replace(c, name=action.new) if c.name == action.old else c for c in table.columns
        )
        return table.replace(columns=columns, format_properties=format_properties)
    if isinstance(action, model.AlterColumnType):
        return _retyped(where, table, action)
    if isinstance(action, model.SetTableProperties):
        return table.replace(properties={**table.properties, **action.properties})
    if isinstance(action, model.UnsetTableProperties):
        properties = {k: v for k, v in table.properties.items() if k not in action.names}
        return table.replace(properties=properties)
    raise ProgrammingError(f"unknown ALTER TABLE action {type(action).__name__}")


def _retyped(where: str, table: TableDefinition, action: model.AlterColumnType) -> TableDefinition:
    """``table`` with column ``action.name`` of ``action.type``, if no data file must change."""
    column = _existing(where, table, action.name)
    if not is_promotion(column.type, action.type):
        old, new = type_sql(column.type), type_sql(action.type)
        quoted = quote_identifier(action.name)
        raise NotSupportedError(
            f"ALTER COLUMN {action.name} TYPE {new} on table {where} is not supported: changing "
            f"{old} to {new} would need its data files rewritten; only widenings are ("
            f"{'; '.join(PROMOTIONS)}). Create a new table with CREATE TABLE ... AS SELECT "
            f"CAST({quoted} AS {new}) AS {quoted}, ... FROM {where} instead"
        )
    columns = tuple(
        replace(c, type=action.type) if c.name == action.name else c for c in table.columns
    )
    return table.replace(columns=columns)


def _existing(where: str, table: TableDefinition, name: str) -> Column:
    for column in table.columns:
        if column.name == name:
            return column
    raise NoSuchObjectError("column", f"{where}.{name}", "check the name with DESCRIBE")


def renumber(column: Column, first_id: int) -> Column:
    """``column`` with its ID and its nested columns' IDs assigned from ``first_id`` on.

    IDs are given depth first, the column before its children, as CREATE
    TABLE numbers them.
    """
    counter = iter(range(first_id, first_id + 1_000_000))

    def walk(col: Column) -> Column:
        new_id = next(counter)
        t = col.type
        changes: dict[str, Any] = {}
        if t.fields:
            changes["fields"] = tuple(walk(f) for f in t.fields)
        for name in ("key", "value", "element"):
            child = getattr(t, name)
            if child is not None:
                changes[name] = walk(child)
        return replace(col, id=new_id, type=replace(t, **changes) if changes else t)

    return walk(column)


# -- SHOW CREATE TABLE --------------------------------------------------------------


def show_create_table(session: Session, stmt: model.ShowCreateTable) -> Result:
    namespace, name = session.resolve(stmt.table)
    table = session.transaction().load_table(namespace, name)
    text = create_table_sql(namespace, table)
    return Result(pa.table({"create_statement": pa.array([text], pa.string())}), 1)


def create_table_sql(namespace: str, table: TableDefinition) -> str:
    """The CREATE TABLE statement that recreates ``table`` (in the trinity dialect)."""
    parts = []
    for column in table.columns:
        text = f"{quote_identifier(column.name)} {type_sql(column.type)}"
        if not column.nullable:
            text += " NOT NULL"
        if column.comment is not None:
            text += f" COMMENT {quote_string(column.comment)}"
        parts.append(text)
    if table.primary_key:
        ids = {c.id: c.name for c in table.columns}
        keys = ", ".join(quote_identifier(ids[i]) for i in table.primary_key)
        parts.append(f"PRIMARY KEY ({keys})")
    sql = f"CREATE TABLE {qualified_name(namespace, table.name)} ({', '.join(parts)})"
    partitions = table.partition_columns
    if partitions:
        transforms = managed.partition_transforms(table)
        items = []
        for p in partitions:
            t = transforms.get(p)
            if t is None:
                items.append(quote_identifier(p))
            else:
                width = "" if t.width is None else f"{t.width}, "
                items.append(f"{t.kind}({width}{quote_identifier(t.source)})")
        sql += f" PARTITIONED BY ({', '.join(items)})"
    properties = dict(table.properties)
    comment = properties.pop(COMMENT, None)
    if comment is not None:
        sql += f" COMMENT {quote_string(comment)}"
    if properties:
        pairs = ", ".join(
            f"{quote_identifier(k)} = {quote_string(v)}" for k, v in properties.items()
        )
        sql += f" WITH ({pairs})"
    return sql
