"""The lakehouse definition (schema ID 0) and namespace definitions (schema ID 1).

Imports from format/definitions/: _common, branches.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from trinity_dbapi.errors import UnsupportedFormatVersionError
from trinity_dbapi.format import keys, names
from trinity_dbapi.format.definitions._common import (
    EMPTY,
    UINT32_MAX,
    UINT64_MAX,
    BinpbDefinition,
    FrozenMap,
    check_int,
    check_new_keys,
    check_str,
    field_error,
    set_field,
    string_map,
    uint64_map,
)
from trinity_dbapi.format.definitions.branches import MAIN, BranchRecord
from trinity_dbapi.format.features import check_readable
from trinity_dbapi.format.paths import MAX_WRITTEN_PATH_BYTES
from trinity_dbapi.format.proto import trinity_pb2 as pb
from trinity_dbapi.format.version import FORMAT_MAJOR_VERSION

DEFAULT_ORDER = 128
DEFAULT_NAMESPACE_NAME_MAX_SIZE_BYTES = 100
DEFAULT_TABLE_NAME_MAX_SIZE_BYTES = 100
DEFAULT_FILE_NAME_MAX_SIZE_BYTES = 200
DEFAULT_NODE_FILE_MAX_SIZE_BYTES = 1048576
DEFAULT_MAXIMUM_VERSION_AGE_MILLIS = 7 * 24 * 60 * 60 * 1000
DEFAULT_MINIMUM_VERSIONS_TO_KEEP = 3
#: How long a saved transaction stays loadable (upstream's ``txn_ttl_millis``).
DEFAULT_TXN_TTL_MILLIS = 7 * 24 * 60 * 60 * 1000
#: The isolation level of a transaction that names none (``txn_isolation_level``).
DEFAULT_TXN_ISOLATION_LEVEL = "SERIALIZABLE"
#: The values ``txn_isolation_level`` may hold (upstream's spellings).
TXN_ISOLATION_LEVELS = ("SERIALIZABLE", "SNAPSHOT")

#: The smallest B-tree order that still splits nodes into two non-empty halves.
MIN_ORDER = 3
#: Per-row bytes of the node key table on top of the names and the file path.
NODE_KEY_ROW_OVERHEAD_BYTES = 4

# A snapshot name that is all digits would read as a version number in
# FOR SYSTEM_VERSION AS OF, so exported snapshot names must not be numeric.
_NUMERIC_RE = re.compile(r"[0-9]+")


# --- lakehouse ------------------------------------------------------------------


@dataclass(frozen=True)
class LakehouseDefinition(BinpbDefinition):
    """The lakehouse definition (schema ID 0): global settings of the tree.

    Attributes:
        name: A user-friendly name of the lakehouse (required, non-empty).
        major_version: Format major version; must be ``FORMAT_MAJOR_VERSION``.
        order: Order N of the B-epsilon tree (children per node), >= 3.
        namespace_name_max_size_bytes: Maximum namespace name size (UTF-8).
        table_name_max_size_bytes: Maximum table name size (UTF-8).
        file_name_max_size_bytes: Maximum size of a file path stored in the
            tree; at least ``paths.MAX_WRITTEN_PATH_BYTES``.
        node_file_max_size_bytes: Target size of a node file; must exceed the
            node key table estimate.
        properties: Free-form user properties.
        maximum_version_age_millis: Versions older than this may expire.
        minimum_versions_to_keep: Expiration always keeps this many versions.
        maximum_version_age_millis_overrides: Per-version maximum ages.
        exported_snapshots: Exported snapshot name -> root node file location.
        required_writer_features: Features a release must know to change the
            lakehouse -> the first release that knows each ("" when not
            recorded); see :mod:`trinity_dbapi.format.features`.
        required_reader_features: Features a release must know to read it at
            all (and so to change it), likewise.
        txn_ttl_millis: How long a saved transaction stays loadable after it
            began (upstream's field; its ``expire_at_millis`` is ``began_at_millis``
            plus this), at least 1.
        txn_isolation_level: The isolation level of a transaction that names
            none: ``SERIALIZABLE`` or ``SNAPSHOT`` (upstream's field).
        unknown_fields: The encoded protobuf fields this release does not
            know, as read: written back unchanged, so a newer release's
            fields survive this release's change of the definition.
    """

    name: str
    major_version: int = FORMAT_MAJOR_VERSION
    order: int = DEFAULT_ORDER
    namespace_name_max_size_bytes: int = DEFAULT_NAMESPACE_NAME_MAX_SIZE_BYTES
    table_name_max_size_bytes: int = DEFAULT_TABLE_NAME_MAX_SIZE_BYTES
    file_name_max_size_bytes: int = DEFAULT_FILE_NAME_MAX_SIZE_BYTES
    node_file_max_size_bytes: int = DEFAULT_NODE_FILE_MAX_SIZE_BYTES
    properties: Mapping[str, str] = EMPTY
    maximum_version_age_millis: int = DEFAULT_MAXIMUM_VERSION_AGE_MILLIS
    minimum_versions_to_keep: int = DEFAULT_MINIMUM_VERSIONS_TO_KEEP
    maximum_version_age_millis_overrides: Mapping[int, int] = EMPTY
    exported_snapshots: Mapping[str, str] = EMPTY
    required_writer_features: Mapping[str, str] = EMPTY
    required_reader_features: Mapping[str, str] = EMPTY
    txn_ttl_millis: int = DEFAULT_TXN_TTL_MILLIS
    txn_isolation_level: str = DEFAULT_TXN_ISOLATION_LEVEL
    branches: Mapping[str, BranchRecord] = EMPTY
    unknown_fields: bytes = dataclasses.field(default=b"", repr=False)

    schema_id: ClassVar[int] = keys.LAKEHOUSE_SCHEMA_ID
    _message_type: ClassVar[type[pb.LakehouseDef]] = pb.LakehouseDef
    _what: ClassVar[str] = "lakehouse definition"

    def __post_init__(self) -> None:
        set_field(self, "properties", string_map("properties", self.properties))
        set_field(
            self,
            "maximum_version_age_millis_overrides",
            uint64_map(
                "maximum_version_age_millis_overrides", self.maximum_version_age_millis_overrides
            ),
        )
        set_field(
            self, "exported_snapshots", string_map("exported_snapshots", self.exported_snapshots)
        )
        for field in ("required_writer_features", "required_reader_features"):
            set_field(self, field, string_map(field, getattr(self, field)))
        set_field(self, "branches", _branch_map(self.branches))
        if not isinstance(self.unknown_fields, bytes):
            raise field_error(
                "unknown_fields", "unknown_fields must be bytes (protobuf fields as read)"
            )
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidDefinitionError: Naming the first invalid field.
            UnsupportedFormatVersionError: If ``major_version`` is not the one
                this implementation supports.
        """
        check_str("name", self.name, required=True)
        check_int("major_version", self.major_version, 0, UINT32_MAX)
        if self.major_version != FORMAT_MAJOR_VERSION:
            raise UnsupportedFormatVersionError(self.major_version, FORMAT_MAJOR_VERSION)
        check_int("order", self.order, MIN_ORDER, UINT32_MAX)
        check_int(
            "namespace_name_max_size_bytes", self.namespace_name_max_size_bytes, 1, UINT32_MAX
        )
        check_int("table_name_max_size_bytes", self.table_name_max_size_bytes, 1, UINT32_MAX)
        check_int(
            "file_name_max_size_bytes",
            self.file_name_max_size_bytes,
            MAX_WRITTEN_PATH_BYTES,
            UINT32_MAX,
        )
        check_int("node_file_max_size_bytes", self.node_file_max_size_bytes, 1, UINT64_MAX)
        check_int("maximum_version_age_millis", self.maximum_version_age_millis, 0, UINT64_MAX)
        # At least the latest version must survive expiration.
        check_int("minimum_versions_to_keep", self.minimum_versions_to_keep, 1, UINT32_MAX)
        # A saved transaction must live a moment at least: expire_at > began_at.
        check_int("txn_ttl_millis", self.txn_ttl_millis, 1, UINT64_MAX)
        if self.txn_isolation_level not in TXN_ISOLATION_LEVELS:
            raise field_error(
                "txn_isolation_level",
                f"txn_isolation_level is {self.txn_isolation_level!r} but must be one of "
                f"{', '.join(TXN_ISOLATION_LEVELS)}",
            )
        self._validate_node_size()
        self._validate_snapshots()
        self._validate_branches()
        for field in ("required_writer_features", "required_reader_features"):
            if "" in getattr(self, field):
                raise field_error(field, f"{field} holds an empty feature name; name every feature")

    def check_new_names(self, previous: LakehouseDefinition | None = None) -> None:
        """Check the names this definition introduces by the rule for new names.

        Property keys and exported snapshot names that ``previous`` (the
        definition this one replaces; None: a new lakehouse) lacks, by
        :func:`~trinity_dbapi.format.names.new_name_problem`. The lakehouse's
        own name is free text, as before.

        Raises:
            InvalidNameError: naming the name, the rule and the fix.
        """
        where = f"of lakehouse {self.name!r}"
        check_new_keys(
            "property key", where, self.properties, previous.properties if previous else {}
        )
        check_new_keys(
            "exported snapshot",
            where,
            self.exported_snapshots,
            previous.exported_snapshots if previous else {},
        )
        check_new_keys("branch", where, self.branches, previous.branches if previous else {})

    def _validate_node_size(self) -> None:
        estimate = self.node_key_table_size_estimate
        if estimate >= self.node_file_max_size_bytes:
            raise field_error(
                "node_file_max_size_bytes",
                f"node_file_max_size_bytes is {self.node_file_max_size_bytes} but the node key "
                f"table alone takes about order * (namespace_name_max_size_bytes + "
                f"table_name_max_size_bytes + file_name_max_size_bytes + "
                f"{NODE_KEY_ROW_OVERHEAD_BYTES}) = {self.order} * "
                f"({self.namespace_name_max_size_bytes} + {self.table_name_max_size_bytes} + "
                f"{self.file_name_max_size_bytes} + {NODE_KEY_ROW_OVERHEAD_BYTES}) = {estimate} "
                "bytes, which must be less than node_file_max_size_bytes to leave room for the "
                f"write buffer; raise node_file_max_size_bytes above {estimate} or lower the "
                "order or the name sizes",
            )

    def _validate_snapshots(self) -> None:
        for snapshot, location in self.exported_snapshots.items():
            if not snapshot or _NUMERIC_RE.fullmatch(snapshot):
                raise field_error(
                    "exported_snapshots",
                    f"exported_snapshots: snapshot name {snapshot!r} must be non-empty and not all digits "
                    "(a number means a version in FOR SYSTEM_VERSION AS OF); choose another name",
                )
            if not location:
                raise field_error(
                    "exported_snapshots",
                    f"exported_snapshots: snapshot {snapshot!r} has an empty root node file "
                    "location; record where the exported root node file is",
                )

    def _validate_branches(self) -> None:
        # One namespace for every ref name: a name read in FOR SYSTEM_VERSION
        # AS OF, USE BRANCH or MERGE BRANCH must mean one thing.
        for name in self.branches:
            problem = None
            if not name or _NUMERIC_RE.fullmatch(name):
                problem = "must be non-empty and not all digits (a number means a version)"
            elif name.lower() == MAIN:
                problem = f"is {MAIN!r}, the lakehouse's own chain"
            elif name in self.exported_snapshots:
                problem = "is also a tag (an exported snapshot); ref names share one namespace"
            if problem is not None:
                raise field_error(
                    "branches",
                    f"branches: branch name {name!r} {problem}; choose another name",
                )

    @property
    def node_key_table_size_estimate(self) -> int:
        """Approximate bytes of a node key table: order * (name sizes + path + 4)."""
        row = (
            self.namespace_name_max_size_bytes
            + self.table_name_max_size_bytes
            + self.file_name_max_size_bytes
            + NODE_KEY_ROW_OVERHEAD_BYTES
        )
        return self.order * row

    @property
    def key_limits(self) -> keys.KeyLimits:
        """The name size limits used to encode object keys."""
        return keys.KeyLimits(self.namespace_name_max_size_bytes, self.table_name_max_size_bytes)

    def replace(self, **changes: Any) -> LakehouseDefinition:
        """Return a copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_proto(self) -> pb.LakehouseDef:
        """Return the protobuf message, with every field written explicitly."""
        message = pb.LakehouseDef(
            name=self.name,
            major_version=self.major_version,
            order=self.order,
            namespace_name_max_size_bytes=self.namespace_name_max_size_bytes,
            table_name_max_size_bytes=self.table_name_max_size_bytes,
            file_name_max_size_bytes=self.file_name_max_size_bytes,
            node_file_max_size_bytes=self.node_file_max_size_bytes,
            properties=dict(self.properties),
            maximum_version_age_millis=self.maximum_version_age_millis,
            minimum_versions_to_keep=self.minimum_versions_to_keep,
            maximum_version_age_millis_overrides=dict(self.maximum_version_age_millis_overrides),
            exported_snapshots=dict(self.exported_snapshots),
            required_writer_features=dict(self.required_writer_features),
            required_reader_features=dict(self.required_reader_features),
            txn_ttl_millis=self.txn_ttl_millis,
            txn_isolation_level=self.txn_isolation_level,
            branches={name: record.to_proto() for name, record in self.branches.items()},
        )
        # Fields a newer release wrote go back as they came: unknown numbers
        # are kept as unknown fields when parsed.
        message.MergeFromString(self.unknown_fields)
        return message

    @classmethod
    def from_proto(cls, message: pb.LakehouseDef) -> LakehouseDefinition:
        """Build a definition from a message, applying defaults to unset fields.

        Raises:
            UnsupportedFormatVersionError: For another format major version.
            UnsupportedFeatureError: It requires a feature to be read that this
                release does not know.
            InvalidDefinitionError: If a field is invalid.
        """
        if message.major_version != FORMAT_MAJOR_VERSION:
            raise UnsupportedFormatVersionError(message.major_version, FORMAT_MAJOR_VERSION)
        check_readable(message.required_reader_features)

        def opt(name: str, default: int) -> int:
            return int(getattr(message, name)) if message.HasField(name) else default

        return cls(
            name=message.name,
            major_version=message.major_version,
            order=opt("order", DEFAULT_ORDER),
            namespace_name_max_size_bytes=opt(
                "namespace_name_max_size_bytes", DEFAULT_NAMESPACE_NAME_MAX_SIZE_BYTES
            ),
            table_name_max_size_bytes=opt(
                "table_name_max_size_bytes", DEFAULT_TABLE_NAME_MAX_SIZE_BYTES
            ),
            file_name_max_size_bytes=opt(
                "file_name_max_size_bytes", DEFAULT_FILE_NAME_MAX_SIZE_BYTES
            ),
            node_file_max_size_bytes=opt(
                "node_file_max_size_bytes", DEFAULT_NODE_FILE_MAX_SIZE_BYTES
            ),
            properties=dict(message.properties),
            maximum_version_age_millis=opt(
                "maximum_version_age_millis", DEFAULT_MAXIMUM_VERSION_AGE_MILLIS
            ),
            minimum_versions_to_keep=opt(
                "minimum_versions_to_keep", DEFAULT_MINIMUM_VERSIONS_TO_KEEP
            ),
            maximum_version_age_millis_overrides=dict(message.maximum_version_age_millis_overrides),
            exported_snapshots=dict(message.exported_snapshots),
            required_writer_features=dict(message.required_writer_features),
            required_reader_features=dict(message.required_reader_features),
            txn_ttl_millis=opt("txn_ttl_millis", DEFAULT_TXN_TTL_MILLIS),
            txn_isolation_level=(
                message.txn_isolation_level
                if message.HasField("txn_isolation_level")
                else DEFAULT_TXN_ISOLATION_LEVEL
            ),
            branches={
                name: BranchRecord.from_proto(record) for name, record in message.branches.items()
            },
            unknown_fields=_unknown_fields(message),
        )


def _branch_map(value: object) -> FrozenMap[str, BranchRecord]:
    """Freeze the ``branches`` map, checking its types (names are checked by
    :meth:`LakehouseDefinition.check_new_names` and the validation)."""
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, BranchRecord) for k, v in value.items()
    ):
        raise field_error("branches", "branches must map branch names to BranchRecord")
    return FrozenMap(value)


def _unknown_fields(message: pb.LakehouseDef) -> bytes:
    """The encoded fields of ``message`` that this release's schema does not have."""
    unknown = pb.LakehouseDef()
    unknown.CopyFrom(message)
    for field in pb.LakehouseDef.DESCRIPTOR.fields:
        unknown.ClearField(field.name)
    return unknown.SerializeToString(deterministic=True)


# --- namespace ------------------------------------------------------------------


@dataclass(frozen=True)
class NamespaceDefinition(BinpbDefinition):
    """A namespace definition (schema ID 1).

    Attributes:
        name: The namespace name (object name rules; size checked at key encoding).
        properties: Free-form user properties.
    """

    name: str
    properties: Mapping[str, str] = EMPTY

    schema_id: ClassVar[int] = keys.NAMESPACE_SCHEMA_ID
    _message_type: ClassVar[type[pb.NamespaceDef]] = pb.NamespaceDef
    _what: ClassVar[str] = "namespace definition"

    def __post_init__(self) -> None:
        set_field(self, "properties", string_map("properties", self.properties))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidNameError: If the name breaks the object name rules.
            InvalidDefinitionError: Naming another invalid field.
        """
        keys.check_name_characters(self.name, "namespace")

    def check_new_names(self, previous: NamespaceDefinition | None = None) -> None:
        """Check the names this definition introduces by the rule for new names.

        The namespace's name (unless ``previous``, the definition this one
        replaces, has it) and the property keys ``previous`` lacks, by
        :func:`~trinity_dbapi.format.names.new_name_problem`.

        Raises:
            InvalidNameError: naming the name, the namespace, the rule and the fix.
        """
        if previous is None or previous.name != self.name:
            names.check_new_object_name(self.name, "namespace")
        check_new_keys(
            "property key",
            f"of namespace {self.name}",
            self.properties,
            previous.properties if previous else {},
        )

    def replace(self, **changes: Any) -> NamespaceDefinition:
        """Return a copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_proto(self) -> pb.NamespaceDef:
        """Return the protobuf message."""
        return pb.NamespaceDef(name=self.name, properties=dict(self.properties))

    @classmethod
    def from_proto(cls, message: pb.NamespaceDef) -> NamespaceDefinition:
        """Build a definition from a message."""
        return cls(name=message.name, properties=dict(message.properties))
