"""The lakehouse definition's required features and the fields this release does not know."""

from __future__ import annotations

import pytest

from trinity_dbapi.errors import (
    CorruptFileError,
    InvalidDefinitionError,
    UnsupportedFeatureError,
)
from trinity_dbapi.format import features
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.proto import trinity_pb2 as pb

#: Two fields a newer release might add: 40 (a string) and 41 (a varint).
FUTURE_FIELDS = b"\xc2\x02\x05hello" + b"\xc8\x02\x07"


def test_required_features_round_trip() -> None:
    definition = LakehouseDefinition(
        name="lake",
        required_writer_features={"row-lineage": "trinity-dbapi 0.4", "tags": ""},
    )
    data = definition.to_bytes()
    message = pb.LakehouseDef()
    message.ParseFromString(data)
    assert dict(message.required_writer_features) == {
        "row-lineage": "trinity-dbapi 0.4",
        "tags": "",
    }
    assert dict(message.required_reader_features) == {}
    assert LakehouseDefinition.from_bytes(data, "d") == definition


def test_fields_this_release_does_not_know_survive_a_change() -> None:
    data = LakehouseDefinition(name="lake").to_bytes() + FUTURE_FIELDS
    read = LakehouseDefinition.from_bytes(data, "d")
    assert read.unknown_fields == FUTURE_FIELDS
    changed = read.replace(exported_snapshots={"keep": "_0.arrow"})
    written = changed.to_bytes()
    assert written.endswith(FUTURE_FIELDS)
    again = LakehouseDefinition.from_bytes(written, "d")
    assert again.unknown_fields == FUTURE_FIELDS
    assert again.exported_snapshots == {"keep": "_0.arrow"}
    # A definition made by this release has none.
    assert LakehouseDefinition(name="lake").unknown_fields == b""


def test_an_empty_feature_name_is_invalid() -> None:
    with pytest.raises(InvalidDefinitionError, match="holds an empty feature name") as caught:
        LakehouseDefinition(name="lake", required_writer_features={"": "x"})
    assert caught.value.field == "required_writer_features"
    message = LakehouseDefinition(name="lake").to_proto()
    message.required_writer_features[""] = "x"
    with pytest.raises(CorruptFileError, match="empty feature name"):
        LakehouseDefinition.from_bytes(message.SerializeToString(), "d")


def test_an_unknown_reader_feature_refuses_the_definition() -> None:
    message = LakehouseDefinition(name="lake").to_proto()
    message.required_reader_features["deletion_vectors"] = "trinity-dbapi 2.0"
    with pytest.raises(UnsupportedFeatureError) as caught:
        LakehouseDefinition.from_bytes(message.SerializeToString(), "d")
    assert caught.value.reading and caught.value.feature == "deletion_vectors"
    assert caught.value.release == "trinity-dbapi 2.0"
    assert caught.value.operation == "reading this lakehouse"


def test_an_unknown_writer_feature_is_read_but_refuses_changes() -> None:
    definition = LakehouseDefinition(name="lake", required_writer_features={"tags": "r2", "b": ""})
    assert LakehouseDefinition.from_bytes(definition.to_bytes(), "d") == definition
    with pytest.raises(UnsupportedFeatureError) as caught:
        features.check_writable(definition, "a commit")
    assert (caught.value.feature, caught.value.release) == ("b", "")  # the first, sorted
    assert not caught.value.reading
    # A reader feature is needed to write too.
    reader_only = LakehouseDefinition(name="lake", required_reader_features={"dv": "r3"})
    with pytest.raises(UnsupportedFeatureError, match="'dv'"):
        features.check_writable(reader_only, "a commit")
    features.check_writable(LakehouseDefinition(name="lake"), "a commit")  # nothing required


def test_this_release_knows_branches_only() -> None:
    known = {"branches", "saved_transactions"}
    assert features.KNOWN_FEATURES == frozenset(features.FIRST_RELEASE) == known
    assert features.unknown_features({"branches": "trinity-dbapi 0.2.0"}) == []
    assert features.unknown_features({"row-lineage": "r"}) == [("row-lineage", "r")]
    assert features.this_release().startswith("trinity-dbapi ")
