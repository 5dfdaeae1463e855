"""Saved transaction definitions (schema ID 4) and the lakehouse's transaction settings."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from trinity_dbapi.errors import CorruptFileError, InvalidDefinitionError
from trinity_dbapi.format.definitions import LakehouseDefinition, TransactionDefinition
from trinity_dbapi.format.definitions.transaction import (
    is_transaction_file,
    running_root_path,
    transaction_id_problem,
)
from trinity_dbapi.format.paths import root_node_file_name, table_definition_path
from trinity_dbapi.format.proto import trinity_pb2 as pb

TXN = str(uuid.uuid4())


def _fields(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": TXN,
        "isolation_level": "SERIALIZABLE",
        "beginning_root_node_file_path": root_node_file_name(7),
        "running_root_node_file_path": running_root_path(TXN),
        "began_at_millis": 1_000,
        "expire_at_millis": 2_000,
        "writes": {"k1": "v1"},
        "deleted_keys": ["k2"],
        "read_keys": ["k0", "k1"],
        "read_ranges": [("a", "b"), (None, "c"), ("d", None)],
        "required_keys": ["ns"],
        "required_ranges": [("t", "u")],
        "staged_files": [table_definition_path("ns", "t")],
        "beginning_version": 7,
        "saved_at_millis": 1_500,
        "commit_message": "nightly load",
    }
    fields.update(changes)
    return fields


def test_round_trip_keeps_every_field() -> None:
    definition = TransactionDefinition(**_fields())
    again = TransactionDefinition.from_bytes(definition.to_bytes(), "t.binpb")
    assert again == definition
    assert again.read_ranges == (("a", "b"), (None, "c"), ("d", None))
    assert again.branch == ""  # main


def test_upstream_fields_are_fields_1_to_6() -> None:
    """An upstream reader finds its six fields at their numbers."""
    numbers = {f.name: f.number for f in pb.TransactionDef.DESCRIPTOR.fields}
    assert [numbers[n] for n in (
        "id",
        "isolation_level",
        "beginning_root_node_file_path",
        "running_root_node_file_path",
        "began_at_millis",
        "expire_at_millis",
    )] == [1, 2, 3, 4, 5, 6]  # fmt: skip
    assert min(n for name, n in numbers.items() if n > 6) == 16


def test_upstream_default_isolation_is_snapshot() -> None:
    message = TransactionDefinition(**_fields()).to_proto()
    message.ClearField("isolation_level")
    read = TransactionDefinition.from_bytes(message.SerializeToString(), "t.binpb")
    assert read.isolation_level == "SNAPSHOT"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"id": "../../etc/passwd"}, "id"),
        ({"id": TXN.upper()}, "id"),
        ({"isolation_level": "READ COMMITTED"}, "isolation_level"),
        ({"began_at_millis": 0}, "began_at_millis"),
        ({"expire_at_millis": 1_000}, "expire_at_millis"),  # not after began_at
        ({"beginning_root_node_file_path": "node-x.arrow"}, "beginning_root_node_file_path"),
        ({"beginning_version": 8}, "beginning_root_node_file_path"),  # the path says 7
        (
            {"running_root_node_file_path": "_transactions/other.arrow"},
            "running_root_node_file_path",
        ),
        ({"running_root_node_file_path": "s3://elsewhere/_x.arrow"}, "running_root_node_file_path"),
        ({"staged_files": ["../outside.binpb"]}, "staged_files"),
        ({"staged_files": ["0000/0000/0000/00000000-table-x.binpb"]}, "staged_files"),
        ({"deleted_keys": ["k1"]}, "deleted_keys"),  # written and deleted
        ({"read_ranges": [("b", "a")]}, "read_ranges"),
        ({"writes": {"": "v"}}, "writes"),
        ({"branch": "main"}, "branch"),
    ],
)
def test_hostile_content_is_refused(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidDefinitionError) as raised:
        TransactionDefinition(**_fields(**changes))
    assert raised.value.field == field
    # Read from a file, the same content is a corrupt file naming it.
    message = TransactionDefinition(**_fields()).to_proto()
    for name, value in changes.items():
        if name in ("read_ranges",):
            continue
        if name == "writes":
            message.writes.clear()
            message.writes.update(value)
        elif name in ("deleted_keys", "staged_files"):
            getattr(message, name)[:] = value
        else:
            setattr(message, name, value)
    if "read_ranges" not in changes:
        with pytest.raises(CorruptFileError, match=r"_transactions/x\.binpb"):
            TransactionDefinition.from_bytes(message.SerializeToString(), "_transactions/x.binpb")


def test_garbage_bytes_are_a_corrupt_file() -> None:
    with pytest.raises(CorruptFileError, match="saved transaction definition"):
        TransactionDefinition.from_bytes(b"\xff\xff\xff", "_transactions/x.binpb")


def test_transaction_files_and_ids() -> None:
    assert transaction_id_problem(TXN) is None
    assert transaction_id_problem("x") is not None
    for suffix in ("binpb", "arrow", "loaded", "committed"):
        assert is_transaction_file(f"_transactions/{TXN}.{suffix}")
    assert not is_transaction_file(f"_transactions/{TXN}.tmp")
    assert not is_transaction_file(f"x/_transactions/{TXN}.binpb")


def test_lakehouse_transaction_settings() -> None:
    default = LakehouseDefinition(name="lh")
    assert default.txn_ttl_millis == 7 * 24 * 3600 * 1000
    assert default.txn_isolation_level == "SERIALIZABLE"
    set_ = LakehouseDefinition(name="lh", txn_ttl_millis=5, txn_isolation_level="SNAPSHOT")
    again = LakehouseDefinition.from_bytes(set_.to_bytes(), "d.binpb")
    assert (again.txn_ttl_millis, again.txn_isolation_level) == (5, "SNAPSHOT")
    # Unset in the file: the defaults.
    bare = LakehouseDefinition.from_bytes(pb.LakehouseDef(name="lh").SerializeToString(), "d")
    assert (bare.txn_ttl_millis, bare.txn_isolation_level) == (7 * 24 * 3600 * 1000, "SERIALIZABLE")
    with pytest.raises(InvalidDefinitionError, match="txn_ttl_millis"):
        LakehouseDefinition(name="lh", txn_ttl_millis=0)
    with pytest.raises(InvalidDefinitionError, match="txn_isolation_level"):
        LakehouseDefinition(name="lh", txn_isolation_level="READ UNCOMMITTED")
