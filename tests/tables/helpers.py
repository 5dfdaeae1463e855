"""Shared pieces of the dataset tests: table schemas and sample rows of every type."""

from __future__ import annotations

import decimal
import itertools
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.format.definitions.types import UNBOUNDED_LENGTH
from trinity_dbapi.format.type_mapping import arrow_schema

D = DataType
ROWS = 4


class Ids:
    """Hands out the column IDs of one table."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def col(self, name: str, t: DataType, nullable: bool = True) -> Column:
        return Column(next(self._ids), name, t, nullable)


def table_schema(*columns: Column) -> pa.Schema:
    """The Arrow schema of a table with these columns (``type_mapping.arrow_schema``)."""
    return arrow_schema(TableDefinition("t", columns, table_format="parquet"))


def simple_schema(**kinds: str) -> pa.Schema:
    """A schema from ``name=kind`` pairs of parameterless kinds (``varchar`` unbounded)."""
    ids = Ids()
    cols = [
        ids.col(name, D.varchar(UNBOUNDED_LENGTH) if kind == "varchar" else D(kind))
        for name, kind in kinds.items()
    ]
    return table_schema(*cols)


def every_type_columns() -> list[Column]:
    """One column per TrinityLake kind and precision, nested combinations included."""
    ids = Ids()
    cols = [ids.col(k, D(k)) for k in ("boolean", "int2", "int4", "int8", "float4", "float8")]
    cols += [
        ids.col(f"dec_{p}_{s}", D.decimal(p, s)) for p, s in ((1, 0), (5, 2), (18, 18), (38, 10))
    ]
    cols += [ids.col("date", D("date"))]
    for kind in ("time", "timetz", "timestamp", "timestamptz"):
        cols += [ids.col(f"{kind}_{p}", D(kind, precision=p)) for p in (0, 3, 6, 9)]
    cols += [
        ids.col("char_3", D.char(3)),
        ids.col("varchar_10", D.varchar(10)),
        ids.col("text", D.varchar(UNBOUNDED_LENGTH)),
        ids.col("fixed_4", D.fixed(4)),
        ids.col("binary_8", D.binary(8)),
        ids.col("blob", D.binary(UNBOUNDED_LENGTH)),
        ids.col("not_null", D("int8"), nullable=False),
    ]
    member = ids.col("a", D("int4"))
    strict = ids.col("b", D.varchar(5), nullable=False)
    cols.append(ids.col("struct", D.struct_of(member, strict)))
    key = ids.col("k", D.varchar(10), nullable=False)
    value = ids.col("v", D.decimal(10, 2))
    cols.append(ids.col("map", D.map_of(key, value)))
    cols.append(ids.col("list", D.list_of(ids.col("e", D.timestamptz(9)))))
    inner = ids.col("x", D.list_of(ids.col("xe", D("float8"))))
    cols.append(ids.col("list_struct", D.list_of(ids.col("s", D.struct_of(inner)))))
    mkey = ids.col("mk", D("int4"), nullable=False)
    mval = ids.col("mv", D.list_of(ids.col("mve", D("date"))))
    cols.append(ids.col("map_list", D.map_of(mkey, mval)))
    return cols


_PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


def _decimal(t: pa.Decimal128Type) -> list[Any]:
    # String construction is exact; context arithmetic would round 38 digits.
    return [decimal.Decimal(f"{n}E-{t.scale}") for n in (10**t.precision - 1, -1, 0)]


def _temporal(t: pa.DataType) -> list[int]:
    if pa.types.is_date(t):
        return [0, 19723, -1000]
    per = _PER_SECOND[t.unit]
    if pa.types.is_time(t):
        return [0, 86400 * per - 1, 3600 * per + (per - 1)]
    return [0, 1_700_000_000 * per + per - 1, -per - 1]


def _values(field: pa.Field) -> list[Any]:
    """Three distinct non-NULL values of ``field``'s type."""
    t = field.type
    if pa.types.is_boolean(t):
        return [True, False, True]
    if pa.types.is_integer(t):
        return [0, -5, 2 ** (t.bit_width - 1) - 1]
    if pa.types.is_floating(t):
        return [0.5, -1.25, 3.0e10]
    if pa.types.is_decimal(t):
        return _decimal(t)
    if pa.types.is_string(t):
        return ["a", "ü", ""]
    if pa.types.is_fixed_size_binary(t):
        return [bytes(t.byte_width), b"\xff" * t.byte_width, b"\x01" * t.byte_width]
    if pa.types.is_binary(t):
        return [b"\x00\xff", b"", b"x"]
    if pa.types.is_temporal(t):
        return _temporal(t)
    if pa.types.is_struct(t):
        children = [_column(child) for child in t]
        return [{c.name: vals[i] for c, vals in zip(t, children)} for i in range(3)]
    if pa.types.is_map(t):
        keys, items = _values(t.key_field), _column(t.item_field)
        return [[(keys[0], items[0])], [], [(keys[1], items[1]), (keys[2], items[2])]]
    if pa.types.is_list(t):
        elements = _column(t.value_field)
        return [[elements[0], elements[1]], [], [elements[2]]]
    raise AssertionError(f"no sample values for {t}")


def _column(field: pa.Field) -> list[Any]:
    values = _values(field)
    return [*values, None if field.nullable else values[0]]


def sample_table(schema: pa.Schema) -> pa.Table:
    """:data:`ROWS` rows of every column of ``schema``: three values, then NULL if nullable."""
    return pa.Table.from_arrays(
        [pa.array(_column(field), field.type) for field in schema], schema=schema
    )


def reader_of(table: pa.Table, batch_rows: int) -> tuple[pa.RecordBatchReader, list[int]]:
    """A lazy reader over ``table`` in batches, and a list counting the batches pulled."""
    pulled: list[int] = []

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in table.to_batches(max_chunksize=batch_rows):
            pulled.append(batch.num_rows)
            yield batch

    return pa.RecordBatchReader.from_batches(table.schema, batches()), pulled
