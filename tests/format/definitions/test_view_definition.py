"""View objects in the format: their keys (schema ID 3) and definitions (``ViewDef``)."""

from __future__ import annotations

import pytest

from trinity_dbapi.errors import CorruptFileError, InvalidDefinitionError, InvalidNameError
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import (
    DEFINITION_TYPES,
    TRINITY_DIALECT,
    Column,
    DataType,
    ViewDefinition,
)
from trinity_dbapi.format.keys import KeyLimits, ObjectId
from trinity_dbapi.format.proto import trinity_pb2 as pb

SEED_LIMITS = KeyLimits(namespace_max_bytes=8, table_max_bytes=8)
PATH = "def/view.binpb"


def _view(**changes: object) -> ViewDefinition:
    fields: dict[str, object] = {
        "name": "recent",
        "columns": (
            Column(1, "id", DataType("int8")),
            Column(2, "tags", DataType.list_of(Column(3, "element", DataType.varchar(5)))),
        ),
        "sql": {TRINITY_DIALECT: "SELECT id, tags FROM sales.orders WHERE id > 3"},
        "referenced": (("sales", "orders"),),
        "properties": {"comment": "the newest orders"},
    }
    fields.update(changes)
    return ViewDefinition(**fields)  # type: ignore[arg-type]


# --- keys ---------------------------------------------------------------------


def test_a_view_key_is_laid_out_as_a_table_key_under_schema_id_3() -> None:
    assert keys.encode_schema_id(keys.VIEW_SCHEMA_ID) == "D==="
    key = keys.view_key("default", "v", SEED_LIMITS)
    assert key == "D=== default  v       "
    assert key.startswith(keys.namespace_views_prefix("default", SEED_LIMITS))
    assert keys.decode_key(key, SEED_LIMITS) == ObjectId("view", "default", "v")
    assert keys.object_key(ObjectId("view", "default", "v"), SEED_LIMITS) == key
    assert keys.is_view_key(key) and not keys.is_table_key(key)
    # Views sort after every table: a namespace's tables stay one key range.
    assert key > keys.table_key("zzzzzzzz", "zzzzzzzz", SEED_LIMITS)


def test_a_view_name_obeys_the_table_name_limit() -> None:
    with pytest.raises(InvalidNameError, match="view name"):
        keys.view_key("ns", "ninechars", SEED_LIMITS)
    with pytest.raises(InvalidNameError, match="view name"):
        keys.view_key("ns", "a view", SEED_LIMITS)
    with pytest.raises(InvalidNameError):
        keys.object_key(ObjectId("view", "ns"), SEED_LIMITS)


@pytest.mark.parametrize("bad", ["D=== default ", "D=== default v      ", "E=== default  v       "])
def test_malformed_view_keys_are_refused(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        keys.decode_key(bad, SEED_LIMITS)


# --- definitions -------------------------------------------------------------------


def test_a_view_definition_round_trips() -> None:
    view = _view()
    assert DEFINITION_TYPES[keys.VIEW_SCHEMA_ID] is ViewDefinition
    assert ViewDefinition.from_bytes(view.to_bytes(), PATH) == view
    message = pb.ViewDef.FromString(view.to_bytes())
    assert message.schema_binding is True
    assert [(r.dialect, r.sql) for r in message.sql_representations] == [
        ("trinity", "SELECT id, tags FROM sales.orders WHERE id > 3")
    ]
    assert [(r.namespace, r.name) for r in message.referenced_object_ids] == [("sales", "orders")]
    assert [c.name for c in view.all_columns()] == ["id", "tags", "element"]


def test_dialects_are_written_in_order_so_the_bytes_are_deterministic() -> None:
    one = _view(sql={"trinity": "SELECT 1 AS id", "duckdb": "SELECT 1 AS id"})
    two = _view(sql={"duckdb": "SELECT 1 AS id", "trinity": "SELECT 1 AS id"})
    assert one.to_bytes() == two.to_bytes()
    message = pb.ViewDef.FromString(one.to_bytes())
    assert [r.dialect for r in message.sql_representations] == ["duckdb", "trinity"]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"columns": ()}, "columns"),
        (
            {"columns": (Column(1, "a", DataType("int4")), Column(2, "a", DataType("int4")))},
            "columns",
        ),
        (
            {"columns": (Column(1, "a", DataType("int4")), Column(1, "b", DataType("int4")))},
            "columns",
        ),
        ({"sql": {}}, "sql"),
        ({"sql": {"trinity": ""}}, "sql['trinity']"),
        ({"referenced": (("ns",),)}, "referenced"),
        ({"schema_binding": 1}, "schema_binding"),
    ],
)
def test_invalid_view_definitions_name_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        _view(**changes)
    assert caught.value.field == field


def test_an_unbound_view_may_leave_its_columns_out() -> None:
    view = _view(columns=(), schema_binding=False)
    assert ViewDefinition.from_bytes(view.to_bytes(), PATH) == view


def test_bad_names_and_files() -> None:
    with pytest.raises(InvalidNameError):
        _view(name="a\tb")
    message = _view().to_proto()
    message.sql_representations.add(dialect="trinity", sql="SELECT 2 AS id")
    with pytest.raises(CorruptFileError, match="appears twice"):
        ViewDefinition.from_bytes(message.SerializeToString(), PATH)
    with pytest.raises(CorruptFileError, match=PATH):
        ViewDefinition.from_bytes(b"\xff\xff\xff", PATH)
