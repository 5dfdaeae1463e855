"""Object definitions: defaults, validation and .binpb round trips."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinity_dbapi.errors import (
    CorruptFileError,
    InvalidDefinitionError,
    InvalidNameError,
    UnsupportedFormatVersionError,
)
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import (
    DEFINITION_TYPES,
    Column,
    DataType,
    FrozenMap,
    LakehouseDefinition,
    NamespaceDefinition,
    TableDefinition,
)
from trinity_dbapi.format.proto import trinity_pb2 as pb

PATH = "_lakehouse_def_6fcb514b-b878-4c9d-95b7-8dc3a7ce6fd8.binpb"


# --- lakehouse --------------------------------------------------------------------


def test_lakehouse_defaults() -> None:
    lakehouse = LakehouseDefinition("lh")
    assert lakehouse.major_version == 0
    assert lakehouse.order == 128
    assert lakehouse.namespace_name_max_size_bytes == 100
    assert lakehouse.table_name_max_size_bytes == 100
    assert lakehouse.file_name_max_size_bytes == 200
    assert lakehouse.node_file_max_size_bytes == 1048576
    assert lakehouse.maximum_version_age_millis == 7 * 24 * 3600 * 1000
    assert lakehouse.minimum_versions_to_keep == 3
    assert lakehouse.properties == {}
    assert lakehouse.maximum_version_age_millis_overrides == {}
    assert lakehouse.exported_snapshots == {}
    assert lakehouse.key_limits == keys.KeyLimits(100, 100)
    assert lakehouse.node_key_table_size_estimate == 128 * 404


def test_defaults_applied_on_read() -> None:
    data = pb.LakehouseDef(name="only-name").SerializeToString()
    assert LakehouseDefinition.from_bytes(data, PATH) == LakehouseDefinition("only-name")


def test_explicit_values_survive_read() -> None:
    lakehouse = LakehouseDefinition(
        "lh",
        order=3,
        namespace_name_max_size_bytes=8,
        table_name_max_size_bytes=9,
        file_name_max_size_bytes=150,
        node_file_max_size_bytes=4096,
        properties={"owner": "me", "a": ""},
        maximum_version_age_millis=0,
        minimum_versions_to_keep=1,
        maximum_version_age_millis_overrides={7: 0, 2**64 - 1: 5},
        exported_snapshots={"daily": "s3://b/x/_0000.arrow"},
    )
    data = lakehouse.to_bytes()
    assert LakehouseDefinition.from_bytes(data, PATH) == lakehouse
    assert lakehouse.to_bytes() == data  # deterministic


def test_lakehouse_is_immutable_and_hashable() -> None:
    lakehouse = LakehouseDefinition("lh", properties={"b": "2", "a": "1"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        lakehouse.order = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        lakehouse.properties["c"] = "3"  # type: ignore[index]
    assert isinstance(lakehouse.properties, FrozenMap)
    assert hash(lakehouse) == hash(LakehouseDefinition("lh", properties={"a": "1", "b": "2"}))


def test_replace_validates() -> None:
    lakehouse = LakehouseDefinition("lh")
    assert lakehouse.replace(order=64).order == 64
    with pytest.raises(InvalidDefinitionError) as info:
        lakehouse.replace(order=2)
    assert info.value.field == "order"


def test_unsupported_major_version_on_read() -> None:
    data = pb.LakehouseDef(name="lh", major_version=1).SerializeToString()
    with pytest.raises(UnsupportedFormatVersionError) as info:
        LakehouseDefinition.from_bytes(data, PATH)
    assert info.value.found == 1
    assert info.value.supported == 0


def test_unsupported_major_version_in_code() -> None:
    with pytest.raises(UnsupportedFormatVersionError):
        LakehouseDefinition("lh", major_version=2)


@pytest.mark.parametrize("data", [b"\xff\xff\xff\xff", b"\x0a\x05ab", b"\x0a\x02\xff\xfe"])
def test_corrupt_bytes(data: bytes) -> None:
    with pytest.raises(CorruptFileError) as info:
        LakehouseDefinition.from_bytes(data, PATH)
    assert info.value.path == PATH
    assert PATH in str(info.value)


def test_invalid_values_on_read_are_corrupt() -> None:
    for message in (pb.LakehouseDef(), pb.LakehouseDef(name="lh", order=1)):
        with pytest.raises(CorruptFileError, match="lakehouse definition"):
            LakehouseDefinition.from_bytes(message.SerializeToString(), PATH)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": 5}, "name"),
        ({"order": 2}, "order"),
        ({"order": True}, "order"),
        ({"namespace_name_max_size_bytes": 0}, "namespace_name_max_size_bytes"),
        ({"table_name_max_size_bytes": 0}, "table_name_max_size_bytes"),
        ({"file_name_max_size_bytes": 100}, "file_name_max_size_bytes"),
        ({"node_file_max_size_bytes": 2**64}, "node_file_max_size_bytes"),
        ({"minimum_versions_to_keep": 0}, "minimum_versions_to_keep"),
        ({"maximum_version_age_millis": -1}, "maximum_version_age_millis"),
        ({"properties": {"a": 1}}, "properties"),
        ({"exported_snapshots": {"123": "x"}}, "exported_snapshots"),
        ({"exported_snapshots": {"s": ""}}, "exported_snapshots"),
        ({"maximum_version_age_millis_overrides": {1: -1}}, "maximum_version_age_millis_overrides"),
    ],
)
def test_invalid_lakehouse(changes: dict[str, Any], field: str) -> None:
    kwargs: dict[str, Any] = {"name": "lh", **changes}
    with pytest.raises(InvalidDefinitionError) as info:
        LakehouseDefinition(**kwargs)
    assert info.value.field == field
    assert field in str(info.value)


def test_node_file_too_small_message() -> None:
    with pytest.raises(InvalidDefinitionError) as info:
        LakehouseDefinition("lh", node_file_max_size_bytes=51712)
    assert info.value.field == "node_file_max_size_bytes"
    message = str(info.value)
    assert "128 * (100 + 100 + 200 + 4) = 51712" in message
    assert "raise node_file_max_size_bytes" in message
    assert LakehouseDefinition("lh", node_file_max_size_bytes=51713).node_file_max_size_bytes


# --- namespace ----------------------------------------------------------------------


def test_namespace_round_trip() -> None:
    namespace = NamespaceDefinition("ns/é", {"k": "v"})
    assert NamespaceDefinition.from_bytes(namespace.to_bytes(), "p") == namespace


def test_namespace_name_rules() -> None:
    with pytest.raises(InvalidNameError, match="U\\+0020"):
        NamespaceDefinition("a b")
    with pytest.raises(CorruptFileError):
        NamespaceDefinition.from_bytes(pb.NamespaceDef().SerializeToString(), "p")


# --- types and tables -----------------------------------------------------------------


def col(column_id: int, name: str, data_type: DataType, nullable: bool = True) -> Column:
    return Column(column_id, name, data_type, nullable)


ALL_TYPES = [
    DataType("boolean"),
    DataType("int2"),
    DataType("int4"),
    DataType("int8"),
    DataType.decimal(10, 2),
    DataType("float4"),
    DataType("float8"),
    DataType.char(3),
    DataType.varchar(20),
    DataType("date"),
    DataType.time(0),
    DataType.timetz(3),
    DataType.timestamp(6),
    DataType.timestamptz(9),
    DataType.fixed(16),
    DataType.binary(100),
]


def nested_types(first_id: int) -> list[DataType]:
    return [
        DataType.struct_of(
            col(first_id, "a", DataType("int4")),
            col(
                first_id + 1,
                "b",
                DataType.list_of(col(first_id + 2, "element", DataType.varchar(3))),
            ),
        ),
        DataType.map_of(
            col(first_id + 3, "key", DataType.varchar(10), nullable=False),
            col(first_id + 4, "value", DataType("int8")),
        ),
        DataType.list_of(
            col(
                first_id + 5,
                "element",
                DataType.map_of(
                    col(first_id + 6, "key", DataType("int4"), nullable=False),
                    col(
                        first_id + 7,
                        "value",
                        DataType.struct_of(col(first_id + 8, "x", DataType("date"))),
                    ),
                ),
            )
        ),
    ]


def full_table() -> TableDefinition:
    columns = [col(i + 1, f"c{i}", t, nullable=i != 0) for i, t in enumerate(ALL_TYPES)]
    columns += [col(100 + 10 * i, f"n{i}", t) for i, t in enumerate(nested_types(1000))]
    columns[1] = Column(2, "c1", DataType("int2"), properties={"k": "v"}, comment="a comment")
    return TableDefinition(
        "t1",
        columns,
        distribution_keys=[1],
        sort_keys=[2, 3],
        primary_key=[1],
        unique_columns=[4],
        table_type="EXTERNAL",
        table_format="parquet",
        format_properties={"compression": "zstd"},
        properties={"owner": "me"},
    )


def test_table_round_trip_every_type() -> None:
    table = full_table()
    data = table.to_bytes()
    assert TableDefinition.from_bytes(data, "p") == table
    assert TableDefinition.from_bytes(data, "p").to_bytes() == data
    assert {c.type.kind for c in table.all_columns()} == {
        *("boolean", "int2", "int4", "int8", "decimal", "float4", "float8", "char", "varchar"),
        *("date", "time", "timetz", "timestamp", "timestamptz", "fixed", "binary"),
        *("struct", "map", "list"),
    }
    assert hash(table) == hash(TableDefinition.from_bytes(data, "p"))


def test_table_defaults() -> None:
    table = TableDefinition("t", [col(1, "a", DataType("int4"))], table_format="parquet")
    assert table.table_type == "MANAGED"
    assert table.primary_key == ()
    restored = TableDefinition.from_bytes(table.to_bytes(), "p")
    assert restored == table
    assert restored.columns[0].comment is None


@pytest.mark.parametrize(
    ("data_type", "sql"),
    [
        (DataType.decimal(10, 2), "decimal(10,2)"),
        (DataType.varchar(20), "varchar(20)"),
        (DataType.timestamptz(6), "timestamptz(6)"),
        (DataType.time(0), "time(0)"),
        (DataType("boolean"), "boolean"),
        (DataType.fixed(4), "fixed(4)"),
        (nested_types(1)[0], "struct<a: int4, b: list<varchar(3)>>"),
        (nested_types(1)[1], "map<varchar(10), int8>"),
        (nested_types(1)[2], "list<map<int4, struct<x: date>>>"),
        (DataType.struct_of(col(1, "my col", DataType("int4"))), 'struct<"my col": int4>'),
    ],
)
def test_to_sql(data_type: DataType, sql: str) -> None:
    assert data_type.to_sql() == sql


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: DataType("int16"), "kind"),
        (lambda: DataType.decimal(0, 0), "precision"),
        (lambda: DataType.decimal(39, 0), "precision"),
        (lambda: DataType.decimal(5, 6), "scale"),
        (lambda: DataType("decimal", precision=5), "scale"),
        (lambda: DataType("int4", length=3), "length"),
        (lambda: DataType.varchar(0), "length"),
        (lambda: DataType("char"), "length"),
        (lambda: DataType.time(10), "precision"),
        (lambda: DataType.timestamp(-1), "precision"),
        (lambda: DataType("struct"), "fields"),
        (lambda: DataType("list"), "element"),
        (lambda: DataType("map", key=col(1, "k", DataType("int4"), False)), "value"),
        (lambda: DataType("int4", element=col(1, "e", DataType("int4"))), "element"),
        (
            lambda: DataType.map_of(col(1, "k", DataType("int4")), col(2, "v", DataType("int4"))),
            "key",
        ),
        (
            lambda: DataType.struct_of(
                col(1, "a", DataType("int4")), col(2, "a", DataType("int8"))
            ),
            "fields",
        ),
        (lambda: Column(-1, "a", DataType("int4")), "id"),
        (lambda: Column(1, "", DataType("int4")), "name"),
        (lambda: Column(1, "a", "int4"), "type"),  # type: ignore[arg-type]
        (lambda: Column(1, "a", DataType("int4"), nullable=1), "nullable"),  # type: ignore[arg-type]
    ],
)
def test_invalid_types(build: Any, field: str) -> None:
    with pytest.raises(InvalidDefinitionError) as info:
        build()
    assert info.value.field == field
    assert field in str(info.value)


def table_with(**changes: Any) -> TableDefinition:
    kwargs: dict[str, Any] = {
        "name": "t",
        "columns": [col(1, "a", DataType("int4"), False), col(2, "b", DataType("int4"))],
        "table_format": "parquet",
        **changes,
    }
    return TableDefinition(**kwargs)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"columns": [col(1, "a", DataType("int4")), col(2, "a", DataType("int4"))]}, "columns"),
        ({"columns": [col(1, "a", DataType("int4")), col(1, "b", DataType("int4"))]}, "columns"),
        ({"columns": [col(1, "a", DataType.list_of(col(1, "e", DataType("int4"))))]}, "columns"),
        ({"columns": ["a"]}, "columns"),
        ({"columns": "ab"}, "columns"),
        ({"primary_key": [3]}, "primary_key"),
        ({"primary_key": [2]}, "primary_key"),
        ({"sort_keys": [1, 1]}, "sort_keys"),
        ({"distribution_keys": [9]}, "distribution_keys"),
        ({"unique_columns": [-1]}, "unique_columns"),
        ({"table_type": "managed"}, "table_type"),
        ({"table_format": ""}, "table_format"),
        ({"properties": {"k": None}}, "properties"),
    ],
)
def test_invalid_tables(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidDefinitionError) as info:
        table_with(**changes)
    assert info.value.field == field
    assert field in str(info.value)


def test_table_format_is_required() -> None:
    with pytest.raises(TypeError):
        TableDefinition("t")  # type: ignore[call-arg]


def test_table_name_rules() -> None:
    with pytest.raises(InvalidNameError, match="table name"):
        table_with(name="bad\tname")


def test_table_corrupt_reads() -> None:
    unknown_kind = pb.TableDef(name="t", table_format="parquet")
    unknown_kind.schema.add(id=1, name="a", type=pb.DataType(kind=0))  # type: ignore[arg-type]
    missing_type = pb.TableDef(name="t", table_format="parquet")
    missing_type.schema.add(id=1, name="a")
    bad_table_type = pb.TableDef(name="t", table_format="parquet")
    bad_table_type.table_type = 9  # type: ignore[assignment]
    for message in (unknown_kind, missing_type, bad_table_type, pb.TableDef(name="t")):
        with pytest.raises(CorruptFileError) as info:
            TableDefinition.from_bytes(message.SerializeToString(), "some/path.binpb")
        assert info.value.path == "some/path.binpb"
    with pytest.raises(CorruptFileError):
        TableDefinition.from_bytes(b"\x12\x05\x08", "some/path.binpb")


def test_table_helpers() -> None:
    table = full_table()
    assert table.column("c3").id == 4
    with pytest.raises(KeyError):
        table.column("missing")
    assert table.replace(table_type="FEDERATED").table_type == "FEDERATED"


def test_definition_types() -> None:
    assert DEFINITION_TYPES[keys.LAKEHOUSE_SCHEMA_ID] is LakehouseDefinition
    assert DEFINITION_TYPES[keys.NAMESPACE_SCHEMA_ID] is NamespaceDefinition
    assert DEFINITION_TYPES[keys.TABLE_SCHEMA_ID] is TableDefinition


# --- property tests -----------------------------------------------------------------

strings = st.text(max_size=10)
string_maps = st.dictionaries(strings, strings, max_size=3)
primitive_types = st.one_of(
    st.sampled_from(["boolean", "int2", "int4", "int8", "float4", "float8", "date"]).map(DataType),
    st.integers(1, 38).flatmap(lambda p: st.integers(0, p).map(lambda s: DataType.decimal(p, s))),
    st.tuples(
        st.sampled_from(["char", "varchar", "fixed", "binary"]), st.integers(1, 2**32 - 1)
    ).map(lambda kl: DataType(kl[0], length=kl[1])),
    st.tuples(
        st.sampled_from(["time", "timetz", "timestamp", "timestamptz"]), st.integers(0, 9)
    ).map(lambda kp: DataType(kp[0], precision=kp[1])),
)


@st.composite
def data_types(draw: st.DrawFn, depth: int = 0) -> DataType:
    """Types whose nested column IDs are unique (drawn from a shared counter)."""
    kind = draw(
        st.sampled_from(["primitive"] * 3 + (["struct", "map", "list"] if depth < 3 else []))
    )
    if kind == "primitive":
        return draw(primitive_types)

    def child(name: str, nullable: bool | None = None) -> Column:
        return Column(
            draw(st.integers(0, 2**32 - 1)),
            name,
            draw(data_types(depth + 1)),
            draw(st.booleans()) if nullable is None else nullable,
            draw(string_maps),
            draw(st.none() | strings),
        )

    if kind == "struct":
        count = draw(st.integers(1, 3))
        return DataType.struct_of(*(child(f"f{i}") for i in range(count)))
    if kind == "map":
        return DataType.map_of(child("key", nullable=False), child("value"))
    return DataType.list_of(child("element"))


@given(data_types())
def test_data_type_proto_round_trip(data_type: DataType) -> None:
    assert DataType.from_proto(
        pb.DataType.FromString(data_type.to_proto().SerializeToString())
    ) == (data_type)


@given(
    st.lists(data_types(), min_size=1, max_size=4),
    st.sampled_from(["MANAGED", "EXTERNAL", "FEDERATED"]),
    string_maps,
)
def test_table_round_trip_property(
    types: list[DataType], table_type: str, props: dict[str, str]
) -> None:
    columns = [Column(i, f"c{i}", t) for i, t in enumerate(types)]
    # Renumber nested IDs so they are unique across the table.
    next_id = [len(columns)]

    def renumber(column: Column) -> Column:
        data_type = column.type
        children: dict[str, Any] = {
            "fields": tuple(renumber(c) for c in data_type.fields),
            "key": renumber(data_type.key) if data_type.key else None,
            "value": renumber(data_type.value) if data_type.value else None,
            "element": renumber(data_type.element) if data_type.element else None,
        }
        next_id[0] += 1
        return dataclasses.replace(
            column, id=next_id[0], type=dataclasses.replace(data_type, **children)
        )

    columns = [dataclasses.replace(renumber(c), id=i) for i, c in enumerate(columns)]
    table = TableDefinition(
        "t", columns, sort_keys=[0], table_type=table_type, table_format="parquet", properties=props
    )
    assert TableDefinition.from_bytes(table.to_bytes(), "p") == table


@given(
    st.text(min_size=1),
    st.integers(3, 1000),
    st.dictionaries(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1), max_size=3),
    string_maps,
)
def test_lakehouse_round_trip_property(
    name: str, order: int, overrides: dict[int, int], props: dict[str, str]
) -> None:
    lakehouse = LakehouseDefinition(
        name,
        order=order,
        node_file_max_size_bytes=2**40,
        maximum_version_age_millis_overrides=overrides,
        properties=props,
    )
    assert LakehouseDefinition.from_bytes(lakehouse.to_bytes(), PATH) == lakehouse
