"""TrinityLake <-> Arrow / Parquet / DuckDB type mapping: every kind, round-tripped."""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trinity_dbapi.errors import NotSupportedError
from trinity_dbapi.format.definitions import (
    MAX_TIME_PRECISION,
    TYPE_KINDS,
    Column,
    DataType,
    TableDefinition,
)
from trinity_dbapi.format.type_mapping import (
    DEFAULT_BINARY_LENGTH,
    DEFAULT_VARCHAR_LENGTH,
    arrow_field,
    arrow_schema,
    arrow_type,
    columns_from_schema,
    data_type_from_field,
    duckdb_type,
)

D = DataType
PRECISIONS = range(MAX_TIME_PRECISION + 1)


class _Ids:
    """Hands out the column IDs of one table."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def col(self, name: str, t: DataType, nullable: bool = True, **kw: object) -> Column:
        return Column(next(self._ids), name, t, nullable, **kw)  # type: ignore[arg-type]


def _types(ids: _Ids) -> Iterator[tuple[str, DataType]]:
    """Every kind, every time precision, several decimals and nested combinations."""
    for kind in ("boolean", "int2", "int4", "int8", "float4", "float8", "date"):
        yield kind, D(kind)
    for p, s in ((1, 0), (9, 4), (18, 18), (19, 2), (38, 0), (38, 37)):
        yield f"decimal_{p}_{s}", D.decimal(p, s)
    for kind in ("time", "timetz", "timestamp", "timestamptz"):
        for p in PRECISIONS:
            yield f"{kind}_{p}", D(kind, precision=p)
    for kind, length in (("char", 1), ("char", 3), ("varchar", 10), ("varchar", 2**32 - 1)):
        yield f"{kind}_{length}", D(kind, length=length)
    yield "fixed_16", D.fixed(16)
    yield "binary_100", D.binary(100)
    # struct of list of map, with a struct value, odd member names and comments
    mapped = D.map_of(
        ids.col("k", D.varchar(8), nullable=False),
        ids.col("v", D.struct_of(ids.col("x", D.timetz(3)), ids.col("order", D.decimal(5, 2)))),
    )
    yield (
        "nested",
        D.struct_of(
            ids.col("items", D.list_of(ids.col("entry", mapped, comment="an entry"))),
            ids.col("a b", D.fixed(4), nullable=False, properties={"p": "q"}),
            ids.col('quo"te', D.timestamp(0)),
        ),
    )
    yield "list_of_list", D.list_of(ids.col("e", D.list_of(ids.col("e2", D("int2"), False))))
    yield (
        "map_of_lists",
        D.map_of(
            ids.col("key", D("date"), nullable=False),
            ids.col("val", D.list_of(ids.col("i", D("int8")))),
        ),
    )


def _table() -> TableDefinition:
    ids = _Ids()
    columns = [ids.col(name, t) for name, t in list(_types(ids))]
    columns[0] = Column(columns[0].id, columns[0].name, columns[0].type, False, comment="first")
    return TableDefinition("every_type", columns, table_format="parquet")


TABLE = _table()


def test_the_table_covers_every_kind() -> None:
    kinds = {col.type.kind for col in TABLE.all_columns()}
    assert kinds == set(TYPE_KINDS)


@pytest.mark.parametrize("column", TABLE.columns, ids=lambda col: col.name)
def test_field_round_trip(column: Column) -> None:
    field = arrow_field(column)
    assert field.name == column.name
    assert field.nullable == column.nullable
    assert field.metadata[b"trinity.type"] == column.type.to_sql().encode()
    assert field.metadata[b"trinity.id"] == str(column.id).encode()
    assert data_type_from_field(field) == column.type


def test_schema_round_trip_keeps_ids_names_comments_and_properties() -> None:
    assert columns_from_schema(arrow_schema(TABLE)) == tuple(TABLE.columns)


def test_parquet_round_trip(tmp_path: pytest.TempPathFactory) -> None:
    path = f"{tmp_path}/t.parquet"
    schema = arrow_schema(TABLE)
    pq.write_table(schema.empty_table(), path)
    read = pq.read_schema(path)
    # Parquet renames list elements and map entries, and stores s-unit times as ms...
    assert read.field("time_0").type == pa.time32("ms")
    assert read.field("timestamp_0").type == pa.timestamp("ms")
    # ...yet the columns come back exactly.
    assert columns_from_schema(read) == tuple(TABLE.columns)


def test_parquet_without_arrow_schema_keeps_ids_and_infers_types(tmp_path: object) -> None:
    ids = _Ids()
    table = TableDefinition(
        "t",
        [
            ids.col("id", D("int8"), nullable=False),
            ids.col("name", D.varchar(20)),
            ids.col("at", D.timestamptz(6)),
            ids.col("tags", D.list_of(ids.col("tag", D.char(2)))),
        ],
        table_format="parquet",
    )
    path = f"{tmp_path}/t.parquet"
    pq.write_table(arrow_schema(table).empty_table(), path, store_schema=False)
    assert columns_from_schema(pq.read_schema(path)) == (
        Column(1, "id", D("int8"), nullable=False),
        Column(2, "name", D.varchar(DEFAULT_VARCHAR_LENGTH)),
        Column(3, "at", D.timestamptz(6)),
        Column(5, "tags", D.list_of(Column(4, "element", D.varchar(DEFAULT_VARCHAR_LENGTH)))),
    )


# --- DuckDB --------------------------------------------------------------------

EXPECTED_DUCKDB = {
    D("boolean"): "BOOLEAN",
    D("int2"): "SMALLINT",
    D("int4"): "INTEGER",
    D("int8"): "BIGINT",
    D.decimal(38, 37): "DECIMAL(38,37)",
    D("float4"): "FLOAT",
    D("float8"): "DOUBLE",
    D.char(3): "VARCHAR",
    D.varchar(3): "VARCHAR",
    D("date"): "DATE",
    D.time(0): "TIME",
    D.time(6): "TIME",
    D.time(7): "TIME_NS",
    D.timetz(9): "TIME WITH TIME ZONE",
    D.timestamp(0): "TIMESTAMP_S",
    D.timestamp(3): "TIMESTAMP_MS",
    D.timestamp(6): "TIMESTAMP",
    D.timestamp(9): "TIMESTAMP_NS",
    D.timestamptz(3): "TIMESTAMP WITH TIME ZONE",
    D.timestamptz(9): "TIMESTAMPTZ_NS",
    D.fixed(4): "BLOB",
    D.binary(4): "BLOB",
    D.list_of(Column(1, "e", D("int4"))): "INTEGER[]",
    D.map_of(
        Column(1, "k", D.varchar(1), False), Column(2, "v", D("int8"))
    ): "MAP(VARCHAR, BIGINT)",
    D.struct_of(
        Column(1, "a", D("int2")), Column(2, "b c", D("date"))
    ): 'STRUCT("a" SMALLINT, "b c" DATE)',
}


@pytest.mark.parametrize("t", EXPECTED_DUCKDB, ids=lambda t: t.to_sql())
def test_duckdb_type_text(t: DataType) -> None:
    assert duckdb_type(t) == EXPECTED_DUCKDB[t]


def _as_arrow_carries_it(t: DataType) -> DataType:
    """``t`` with every timetz a time: Arrow carries timetz as a plain (UTC) time."""
    if t.kind == "timetz":
        return D.time(t.precision if t.precision is not None else 6)

    def child(col: Column | None) -> Column | None:
        return (
            None if col is None else dataclasses.replace(col, type=_as_arrow_carries_it(col.type))
        )

    return dataclasses.replace(
        t,
        fields=tuple(
            dataclasses.replace(col, type=_as_arrow_carries_it(col.type)) for col in t.fields
        ),
        key=child(t.key),
        value=child(t.value),
        element=child(t.element),
    )


def test_duckdb_reads_the_arrow_types_as_duckdb_type_says() -> None:
    rel = duckdb.connect().from_arrow(arrow_schema(TABLE).empty_table())
    assert rel.columns == [col.name for col in TABLE.columns]
    got = {name: str(t) for name, t in zip(rel.columns, rel.types)}
    expected = {
        col.name: str(duckdb.sqltype(duckdb_type(_as_arrow_carries_it(col.type))))
        for col in TABLE.columns
    }
    assert got == expected
    assert (got["timetz_3"], got["timetz_9"]) == ("TIME", "TIME_NS")
    assert got["timestamptz_0"] == "TIMESTAMP WITH TIME ZONE"


def test_duckdb_type_is_valid_ddl_with_the_same_types() -> None:
    con = duckdb.connect()
    ddl = ", ".join(
        f'"{col.name.replace(chr(34), 2 * chr(34))}" {duckdb_type(col.type)}'
        for col in TABLE.columns
    )
    con.execute(f"CREATE TABLE t ({ddl})")
    described = {row[0]: row[1] for row in con.sql("DESCRIBE t").fetchall()}
    assert described == {
        col.name: str(duckdb.sqltype(duckdb_type(col.type))) for col in TABLE.columns
    }
    assert described["timetz_3"] == "TIME WITH TIME ZONE"
    assert described["nested"] == (
        'STRUCT(items MAP(VARCHAR, STRUCT(x TIME WITH TIME ZONE, "order" DECIMAL(5,2)))[], '
        '"a b" BLOB, "quo""te" TIMESTAMP_S)'
    )


# --- inference without metadata --------------------------------------------------

INFERRED = [
    (pa.bool_(), D("boolean")),
    (pa.int8(), D("int2")),
    (pa.uint8(), D("int2")),
    (pa.int16(), D("int2")),
    (pa.uint16(), D("int4")),
    (pa.int32(), D("int4")),
    (pa.uint32(), D("int8")),
    (pa.int64(), D("int8")),
    (pa.float16(), D("float4")),
    (pa.float32(), D("float4")),
    (pa.float64(), D("float8")),
    (pa.decimal128(7, 3), D.decimal(7, 3)),
    (pa.decimal256(38, 2), D.decimal(38, 2)),
    (pa.string(), D.varchar(DEFAULT_VARCHAR_LENGTH)),
    (pa.large_string(), D.varchar(DEFAULT_VARCHAR_LENGTH)),
    (pa.binary(), D.binary(DEFAULT_BINARY_LENGTH)),
    (pa.large_binary(), D.binary(DEFAULT_BINARY_LENGTH)),
    (pa.binary(5), D.fixed(5)),
    (pa.date32(), D("date")),
    (pa.date64(), D("date")),
    (pa.time32("s"), D.time(0)),
    (pa.time32("ms"), D.time(3)),
    (pa.time64("us"), D.time(6)),
    (pa.time64("ns"), D.time(9)),
    (pa.timestamp("ms"), D.timestamp(3)),
    (pa.timestamp("ns", tz="Europe/Paris"), D.timestamptz(9)),
    (pa.dictionary(pa.int32(), pa.string()), D.varchar(DEFAULT_VARCHAR_LENGTH)),
    (pa.large_list(pa.int16()), D.list_of(Column(1, "item", D("int2")))),
    (pa.list_(pa.int16(), 3), D.list_of(Column(1, "item", D("int2")))),
    (
        pa.map_(pa.string(), pa.struct([("a", pa.int32())])),
        D.map_of(
            Column(1, "key", D.varchar(DEFAULT_VARCHAR_LENGTH), nullable=False),
            Column(2, "value", D.struct_of(Column(3, "a", D("int4")))),
        ),
    ),
]


@pytest.mark.parametrize(("arrow", "expected"), INFERRED, ids=lambda x: str(x))
def test_inference_without_metadata(arrow: pa.DataType, expected: DataType) -> None:
    assert data_type_from_field(pa.field("c", arrow)) == expected


@pytest.mark.parametrize(
    "arrow",
    [pa.uint64(), pa.null(), pa.duration("s"), pa.month_day_nano_interval(), pa.decimal256(40, 2)],
    ids=str,
)
def test_unsupported_arrow_types_name_the_field_and_type(arrow: pa.DataType) -> None:
    with pytest.raises(NotSupportedError, match=re.escape(f"column 'odd' has Arrow type {arrow},")):
        columns_from_schema(pa.schema([pa.field("ok", pa.int32()), pa.field("odd", arrow)]))


def test_metadata_refines_but_never_contradicts_the_arrow_type() -> None:
    def typed(arrow: pa.DataType, text: str) -> DataType:
        return data_type_from_field(pa.field("c", arrow, metadata={"trinity.type": text}))

    assert typed(pa.large_string(), "char(3)") == D.char(3)
    assert typed(pa.time64("us"), "timetz(5)") == D.timetz(5)
    assert typed(pa.timestamp("ms", tz="UTC"), "timestamptz(1)") == D.timestamptz(1)
    # stale or bogus metadata loses against the Arrow type
    assert typed(pa.int32(), "varchar(10)") == D("int4")
    assert typed(pa.timestamp("ms"), "timestamptz(3)") == D.timestamp(3)
    assert typed(pa.string(), "varchar(0)") == D.varchar(DEFAULT_VARCHAR_LENGTH)
    assert typed(pa.time32("ms"), "time(12)") == D.time(3)
    assert typed(pa.decimal128(5, 1), "decimal(7,2)") == D.decimal(5, 1)


def test_ids_fill_in_after_the_largest_recorded_id() -> None:
    schema = pa.schema(
        [
            pa.field("a", pa.int32()),
            pa.field("b", pa.list_(pa.int32()), metadata={"trinity.id": "7"}),
            pa.field("c", pa.struct([("d", pa.int32())]), metadata={"PARQUET:field_id": "3"}),
        ]
    )
    columns = columns_from_schema(schema)
    assert [col.id for table_col in columns for col in table_col.walk()] == [8, 7, 9, 3, 10]


def test_arrow_type_of_each_kind() -> None:
    assert arrow_type(D.decimal(12, 2)) == pa.decimal128(12, 2)
    assert arrow_type(D.time(0)) == pa.time32("s")
    assert arrow_type(D.timetz(4)) == pa.time64("us")
    assert arrow_type(D.timestamptz(7)) == pa.timestamp("ns", tz="UTC")
    assert arrow_type(D.fixed(3)) == pa.binary(3)
    assert arrow_type(D.binary(3)) == pa.binary()
    key = arrow_type(
        D.map_of(Column(1, "k", D("int4"), False), Column(2, "v", D("int4")))
    ).key_field
    assert not key.nullable
    assert key.metadata[b"trinity.name"] == b"k"
