"""``information_schema.columns``: DuckDB's column layout, and what each type fills in.

``data_type`` is DuckDB type text
(:func:`~trinity_dbapi.format.type_mapping.duckdb_type`, e.g. ``DECIMAL(10,2)``,
``TIMESTAMP WITH TIME ZONE``), and ``udt_name`` is the TrinityLake type text
(``decimal(10,2)``, ``timestamptz(6)``). The numeric facts follow DuckDB
(``INTEGER`` has precision 32, radix 2); lengths and datetime precisions,
which DuckDB does not have, follow the SQL standard (``character_octet_length``
of ``varchar(n)`` is ``4 * n``, UTF-8), and are NULL beyond the int32 range
(unbounded). Which tables' columns are listed is
:mod:`~trinity_dbapi.lakehouse.catalog`'s business; this module only knows
one column's row.

Imports from lakehouse/: nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from trinity_dbapi.format.definitions import Column, DataType
from trinity_dbapi.format.type_mapping import duckdb_type

__all__ = ["INFO_COLUMNS_SCHEMA", "column_row"]

Row = Mapping[str, Any]

_INT32_MAX = 2**31 - 1
#: Bytes per character of the UTF-8 ``character_octet_length``.
_UTF8_MAX_BYTES = 4

_STRING = pa.string()
_INT = pa.int32()
#: DuckDB's information_schema.columns, column for column.
INFO_COLUMNS_SCHEMA = pa.schema(
    [
        pa.field("table_catalog", _STRING),
        pa.field("table_schema", _STRING),
        pa.field("table_name", _STRING),
        pa.field("column_name", _STRING),
        pa.field("ordinal_position", _INT),
        pa.field("column_default", _STRING),
        pa.field("is_nullable", _STRING),
        pa.field("data_type", _STRING),
        pa.field("character_maximum_length", _INT),
        pa.field("character_octet_length", _INT),
        pa.field("numeric_precision", _INT),
        pa.field("numeric_precision_radix", _INT),
        pa.field("numeric_scale", _INT),
        pa.field("datetime_precision", _INT),
        pa.field("interval_type", _STRING),
        pa.field("interval_precision", _INT),
        pa.field("character_set_catalog", _STRING),
        pa.field("character_set_schema", _STRING),
        pa.field("character_set_name", _STRING),
        pa.field("collation_catalog", _STRING),
        pa.field("collation_schema", _STRING),
        pa.field("collation_name", _STRING),
        pa.field("domain_catalog", _STRING),
        pa.field("domain_schema", _STRING),
        pa.field("domain_name", _STRING),
        pa.field("udt_catalog", _STRING),
        pa.field("udt_schema", _STRING),
        pa.field("udt_name", _STRING),
        pa.field("scope_catalog", _STRING),
        pa.field("scope_schema", _STRING),
        pa.field("scope_name", _STRING),
        pa.field("maximum_cardinality", pa.int64()),
        pa.field("dtd_identifier", _STRING),
        pa.field("is_self_referencing", pa.bool_()),
        pa.field("is_identity", pa.bool_()),
        pa.field("identity_generation", _STRING),
        pa.field("identity_start", _STRING),
        pa.field("identity_increment", _STRING),
        pa.field("identity_maximum", _STRING),
        pa.field("identity_minimum", _STRING),
        pa.field("identity_cycle", pa.bool_()),
        pa.field("is_generated", _STRING),
        pa.field("generation_expression", _STRING),
        pa.field("is_updatable", pa.bool_()),
        pa.field("COLUMN_COMMENT", _STRING),
    ]
)


def _int32(value: int | None) -> int | None:
    """An int32 column value; NULL (unbounded) when it does not fit."""
    return value if value is not None and value <= _INT32_MAX else None


def _binary_numeric(bits: int) -> Callable[[DataType], Row]:
    return lambda t: {"numeric_precision": bits, "numeric_precision_radix": 2, "numeric_scale": 0}


def _characters(t: DataType) -> Row:
    assert t.length is not None  # validated by DataType
    return {
        "character_maximum_length": _int32(t.length),
        "character_octet_length": _int32(t.length * _UTF8_MAX_BYTES),
    }


def _octets(t: DataType) -> Row:
    return {
        "character_maximum_length": _int32(t.length),
        "character_octet_length": _int32(t.length),
    }


def _datetime(t: DataType) -> Row:
    return {"datetime_precision": t.precision}


#: The length, precision and scale columns of each kind (other kinds: all NULL).
_TYPE_FACTS: Mapping[str, Callable[[DataType], Row]] = {
    "int2": _binary_numeric(16),
    "int4": _binary_numeric(32),
    "int8": _binary_numeric(64),
    "float4": _binary_numeric(24),
    "float8": _binary_numeric(53),
    "decimal": lambda t: {
        "numeric_precision": t.precision,
        "numeric_precision_radix": 10,
        "numeric_scale": t.scale,
    },
    "char": _characters,
    "varchar": _characters,
    "fixed": _octets,
    "binary": _octets,
    "date": lambda t: {"datetime_precision": 0},
    "time": _datetime,
    "timetz": _datetime,
    "timestamp": _datetime,
    "timestamptz": _datetime,
}


def column_row(
    catalog: str, namespace: str, table: str, position: int, column: Column, *, updatable: bool
) -> dict[str, Any]:
    """The ``information_schema.columns`` row of ``column``, column ``position`` (from 1) of a table.

    Args:
        catalog: the catalog name (the lakehouse's).
        namespace: the table's namespace.
        table: the table's name.
        position: the column's ordinal position, from 1.
        column: the column.
        updatable: whether the table takes writes (not a view or catalog table).
    """
    return {
        "table_catalog": catalog,
        "table_schema": namespace,
        "table_name": table,
        "column_name": column.name,
        "ordinal_position": position,
        "is_nullable": "YES" if column.nullable else "NO",
        "data_type": duckdb_type(column.type),
        **_TYPE_FACTS.get(column.type.kind, lambda t: {})(column.type),
        "udt_name": column.type.to_sql(),
        "is_self_referencing": False,
        "is_identity": False,
        "is_generated": "NEVER",
        "is_updatable": updatable,
        "COLUMN_COMMENT": column.comment,
    }
