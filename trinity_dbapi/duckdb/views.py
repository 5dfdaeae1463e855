"""The SQL text of the bridge's views: names, literals, empty views, the Parquet scan."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trinity_dbapi.errors import ProgrammingError

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import Column, TableDefinition

#: Largest column ID a Parquet field ID (int32) holds.
MAX_FIELD_ID = 2**31 - 1


def identifier(name: str) -> str:
    """``name`` as a quoted DuckDB identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """``text`` as a DuckDB string literal."""
    return "'" + text.replace("'", "''") + "'"


def duckdb_type_of(column: Column) -> str:
    """The DuckDB type a column reads as."""
    from trinity_dbapi.format.type_mapping import duckdb_type

    return duckdb_type(column.type)


def empty_select(columns: Sequence[Column]) -> str:
    """A SELECT of no rows with exactly the columns' names and types."""
    items = ", ".join(f"CAST(NULL AS {duckdb_type_of(c)}) AS {identifier(c.name)}" for c in columns)
    return f"SELECT {items} WHERE false"


def cast_items(columns: Sequence[Column]) -> str:
    """The fallback view's select list over the registered Arrow dataset.

    The casts are no-ops except for ``timetz``, which Arrow carries as a time.
    """
    return ", ".join(
        f"CAST({identifier(c.name)} AS {duckdb_type_of(c)}) AS {identifier(c.name)}"
        for c in columns
    )


def parquet_scan_reads(definition: TableDefinition, partition_by: Sequence[str]) -> bool:
    """Whether the Parquet scan reads this table exactly (else the Arrow fallback)."""
    for column in definition.columns:
        if column.name in partition_by:
            if column.type.kind in ("binary", "fixed"):
                return False  # raw bytes in the directory name: no text to URL-decode
        elif not 0 < column.id <= MAX_FIELD_ID:
            return False  # no Parquet field ID in the files to match it by
    return True


def check_labels(
    definition: TableDefinition, partition_by: Sequence[str], labels: Sequence[str], meta: Any
) -> None:
    """Decode each partition directory once, as the readers do, so a corrupt one fails here."""
    if not partition_by:
        return
    from trinity_dbapi.tables import managed
    from trinity_dbapi.tables.partitions import check_partition_by, partition_scalars

    schema = managed.schema(definition)
    check_partition_by(schema, partition_by, meta)
    seen: set[str] = set()
    for label in labels:
        directory = label.rpartition("/")[0]
        if directory not in seen:
            seen.add(directory)
            partition_scalars(label, schema, partition_by)


def parquet_select(columns: Sequence[Column], partition_by: Sequence[str], files: list[str]) -> str:
    """The view's SELECT: ``read_parquet`` over ``files``, partition columns from the paths."""
    from trinity_dbapi.tables import partition_sql

    file_column = partition_sql.file_column(c.name for c in columns)
    entries = ", ".join(
        f"{c.id}: {{name: {literal(c.name)}, type: {literal(duckdb_type_of(c))}, "
        "default_value: NULL}"
        for c in columns
        if c.name not in partition_by
    )
    items = []
    for column in columns:
        if column.name in partition_by:
            value = partition_sql.partition_value(
                file_column, partition_by, column.name, duckdb_type_of(column)
            )
            items.append(f"{value} AS {identifier(column.name)}")
        else:
            items.append(identifier(column.name))
    file_list = ", ".join(literal(f) for f in files)
    return (
        f"SELECT {', '.join(items)} FROM read_parquet([{file_list}], schema = MAP {{{entries}}}, "
        f"{partition_sql.SCAN_OPTIONS}, filename = {literal(file_column)})"
    )


def check_unique(names: Mapping[str, object], what: str, where: str) -> None:
    """DuckDB names are case-insensitive: refuse two names that differ only in case."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name.casefold(), name)
        if other != name:
            raise ProgrammingError(
                f"the {what}s {other!r} and {name!r} of the {where} differ only in case, and "
                f"DuckDB names are case-insensitive: they cannot both be exposed; rename one "
                "in the lakehouse"
            )
