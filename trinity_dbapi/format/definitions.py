"""Object definitions: the lakehouse, namespaces and tables (``.binpb`` files).

Each definition is a frozen dataclass that validates itself on construction
and converts to and from the protobuf messages of ``proto/trinity.proto``:

* :class:`LakehouseDefinition` -- schema ID 0, the tree's global settings.
* :class:`NamespaceDefinition` -- schema ID 1.
* :class:`TableDefinition` -- schema ID 2, with :class:`Column` and
  :class:`DataType` describing its schema.

Reading (``from_bytes``) applies the format defaults to unset fields and turns
every problem with the file into :class:`~trinity_dbapi.errors.CorruptFileError`
naming the file; constructing an invalid definition in code raises
:class:`~trinity_dbapi.errors.InvalidDefinitionError` naming the field (or
:class:`~trinity_dbapi.errors.InvalidNameError` for an object name).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

from google.protobuf.message import DecodeError

from trinity_dbapi import FORMAT_MAJOR_VERSION
from trinity_dbapi.errors import (
    CorruptFileError,
    InvalidDefinitionError,
    InvalidNameError,
    UnsupportedFormatVersionError,
)
from trinity_dbapi.format import keys
from trinity_dbapi.format.paths import MAX_WRITTEN_PATH_BYTES
from trinity_dbapi.format.proto import trinity_pb2 as pb

__all__ = [
    "DEFAULT_FILE_NAME_MAX_SIZE_BYTES",
    "DEFAULT_MAXIMUM_VERSION_AGE_MILLIS",
    "DEFAULT_MINIMUM_VERSIONS_TO_KEEP",
    "DEFAULT_NAMESPACE_NAME_MAX_SIZE_BYTES",
    "DEFAULT_NODE_FILE_MAX_SIZE_BYTES",
    "DEFAULT_ORDER",
    "DEFAULT_TABLE_NAME_MAX_SIZE_BYTES",
    "DEFINITION_TYPES",
    "MAX_DECIMAL_PRECISION",
    "MAX_TIME_PRECISION",
    "MIN_ORDER",
    "NODE_KEY_ROW_OVERHEAD_BYTES",
    "TABLE_TYPES",
    "TYPE_KINDS",
    "Column",
    "DataType",
    "FrozenMap",
    "LakehouseDefinition",
    "NamespaceDefinition",
    "TableDefinition",
]

_UINT32_MAX = 2**32 - 1
_UINT64_MAX = 2**64 - 1

DEFAULT_ORDER = 128
DEFAULT_NAMESPACE_NAME_MAX_SIZE_BYTES = 100
DEFAULT_TABLE_NAME_MAX_SIZE_BYTES = 100
DEFAULT_FILE_NAME_MAX_SIZE_BYTES = 200
DEFAULT_NODE_FILE_MAX_SIZE_BYTES = 1048576
DEFAULT_MAXIMUM_VERSION_AGE_MILLIS = 7 * 24 * 60 * 60 * 1000
DEFAULT_MINIMUM_VERSIONS_TO_KEEP = 3

#: The smallest B-tree order that still splits nodes into two non-empty halves.
MIN_ORDER = 3
#: Per-row bytes of the node key table on top of the names and the file path.
NODE_KEY_ROW_OVERHEAD_BYTES = 4

#: Decimal precision is 1..38 digits (what a 128-bit decimal holds).
MAX_DECIMAL_PRECISION = 38
#: Time and timestamp precision is 0..9 fractional second digits (nanoseconds).
MAX_TIME_PRECISION = 9

TABLE_TYPES = ("MANAGED", "EXTERNAL", "FEDERATED")

# A snapshot name that is all digits would read as a version number in
# FOR SYSTEM_VERSION AS OF, so exported snapshot names must not be numeric.
_NUMERIC_RE = re.compile(r"[0-9]+")
_PLAIN_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

K = TypeVar("K")
V = TypeVar("V")


# --- immutable mapping ----------------------------------------------------------


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """An immutable, hashable mapping with keys kept in sorted order.

    Equal to any mapping with the same items (including plain dicts), so
    definitions compare equal regardless of how their maps were built.
    """

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[K, V] | None = None) -> None:
        source = dict(items) if items is not None else {}
        self._items: dict[K, V] = {key: source[key] for key in sorted(source)}  # type: ignore[type-var]
        self._hash: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._items == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"


_EMPTY: FrozenMap[Any, Any] = FrozenMap()


# --- field checks ---------------------------------------------------------------


def _fail(field_name: str, message: str) -> InvalidDefinitionError:
    return InvalidDefinitionError(field_name, message)


def _check_int(
    field_name: str, value: object, minimum: int, maximum: int, *, label: str | None = None
) -> int:
    """Return ``value`` if it is an int (not bool) in ``minimum..maximum``.

    ``label`` names the checked item in the message when it is a part of the
    field (a map key or entry); the error always carries ``field_name``.
    """
    what = label or field_name
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(field_name, f"{what} must be an int, got {value!r}")
    if not minimum <= value <= maximum:
        raise _fail(
            field_name,
            f"{what} is {value} but must be between {minimum} and {maximum}; "
            "choose a value in that range",
        )
    return value


def _check_str(field_name: str, value: object, *, required: bool) -> str:
    """Return ``value`` if it is a UTF-8 encodable str (non-empty when ``required``)."""
    if not isinstance(value, str):
        raise _fail(field_name, f"{field_name} must be a str, got {value!r}")
    if required and not value:
        raise _fail(field_name, f"{field_name} is required and must not be empty")
    _check_utf8(field_name, value)
    return value


def _check_utf8(field_name: str, value: str) -> None:
    """Protobuf strings must be valid UTF-8, so lone surrogates are refused early."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(
            field_name, f"{field_name} value {value!r} is not valid Unicode (lone surrogate)"
        ) from None


def _string_map(field_name: str, value: object) -> FrozenMap[str, str]:
    """Freeze a ``str -> str`` mapping, checking its types."""
    if not isinstance(value, Mapping):
        raise _fail(field_name, f"{field_name} must be a mapping of str to str, got {value!r}")
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise _fail(
                field_name,
                f"{field_name} must map str to str, but has {key!r}: {item!r}; "
                "convert keys and values to strings",
            )
        _check_utf8(field_name, key)
        _check_utf8(field_name, item)
    return value if isinstance(value, FrozenMap) else FrozenMap(value)


def _uint64_map(field_name: str, value: object) -> FrozenMap[int, int]:
    """Freeze an ``int -> int`` mapping of uint64 values."""
    if not isinstance(value, Mapping):
        raise _fail(field_name, f"{field_name} must be a mapping of int to int, got {value!r}")
    for key, item in value.items():
        _check_int(field_name, key, 0, _UINT64_MAX, label=f"{field_name} key")
        _check_int(field_name, item, 0, _UINT64_MAX, label=f"{field_name}[{key!r}]")
    return value if isinstance(value, FrozenMap) else FrozenMap(value)


def _set(obj: object, name: str, value: object) -> None:
    """Normalize a field of a frozen dataclass during __post_init__."""
    object.__setattr__(obj, name, value)


def _parse(message: Any, data: bytes, path: str, what: str) -> None:
    """Parse ``data`` into ``message`` or raise CorruptFileError naming ``path``."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what} data must be bytes, got {type(data).__name__}")
    try:
        message.ParseFromString(bytes(data))
    except DecodeError as exc:
        raise CorruptFileError(path, f"it is not a valid {what} protobuf message ({exc})") from None


def _corrupt(path: str, what: str, exc: Exception) -> CorruptFileError:
    return CorruptFileError(path, f"it holds an invalid {what}: {exc}")


# --- lakehouse ------------------------------------------------------------------


@dataclass(frozen=True)
class LakehouseDefinition:
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
    """

    name: str
    major_version: int = FORMAT_MAJOR_VERSION
    order: int = DEFAULT_ORDER
    namespace_name_max_size_bytes: int = DEFAULT_NAMESPACE_NAME_MAX_SIZE_BYTES
    table_name_max_size_bytes: int = DEFAULT_TABLE_NAME_MAX_SIZE_BYTES
    file_name_max_size_bytes: int = DEFAULT_FILE_NAME_MAX_SIZE_BYTES
    node_file_max_size_bytes: int = DEFAULT_NODE_FILE_MAX_SIZE_BYTES
    properties: Mapping[str, str] = _EMPTY
    maximum_version_age_millis: int = DEFAULT_MAXIMUM_VERSION_AGE_MILLIS
    minimum_versions_to_keep: int = DEFAULT_MINIMUM_VERSIONS_TO_KEEP
    maximum_version_age_millis_overrides: Mapping[int, int] = _EMPTY
    exported_snapshots: Mapping[str, str] = _EMPTY

    schema_id: ClassVar[int] = keys.LAKEHOUSE_SCHEMA_ID

    def __post_init__(self) -> None:
        _set(self, "properties", _string_map("properties", self.properties))
        _set(
            self,
            "maximum_version_age_millis_overrides",
            _uint64_map(
                "maximum_version_age_millis_overrides", self.maximum_version_age_millis_overrides
            ),
        )
        _set(self, "exported_snapshots", _string_map("exported_snapshots", self.exported_snapshots))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidDefinitionError: Naming the first invalid field.
            UnsupportedFormatVersionError: If ``major_version`` is not the one
                this implementation supports.
        """
        _check_str("name", self.name, required=True)
        _check_int("major_version", self.major_version, 0, _UINT32_MAX)
        if self.major_version != FORMAT_MAJOR_VERSION:
            raise UnsupportedFormatVersionError(self.major_version, FORMAT_MAJOR_VERSION)
        _check_int("order", self.order, MIN_ORDER, _UINT32_MAX)
        _check_int(
            "namespace_name_max_size_bytes", self.namespace_name_max_size_bytes, 1, _UINT32_MAX
        )
        _check_int("table_name_max_size_bytes", self.table_name_max_size_bytes, 1, _UINT32_MAX)
        _check_int(
            "file_name_max_size_bytes",
            self.file_name_max_size_bytes,
            MAX_WRITTEN_PATH_BYTES,
            _UINT32_MAX,
        )
        _check_int("node_file_max_size_bytes", self.node_file_max_size_bytes, 1, _UINT64_MAX)
        _check_int("maximum_version_age_millis", self.maximum_version_age_millis, 0, _UINT64_MAX)
        # At least the latest version must survive expiration.
        _check_int("minimum_versions_to_keep", self.minimum_versions_to_keep, 1, _UINT32_MAX)
        self._validate_node_size()
        self._validate_snapshots()

    def _validate_node_size(self) -> None:
        estimate = self.node_key_table_size_estimate
        if estimate >= self.node_file_max_size_bytes:
            raise _fail(
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
                raise _fail(
                    "exported_snapshots",
                    f"exported_snapshots: snapshot name {snapshot!r} must be non-empty and not all digits "
                    "(a number means a version in FOR SYSTEM_VERSION AS OF); choose another name",
                )
            if not location:
                raise _fail(
                    "exported_snapshots",
                    f"exported_snapshots: snapshot {snapshot!r} has an empty root node file "
                    "location; record where the exported root node file is",
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
        return pb.LakehouseDef(
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
        )

    def to_bytes(self) -> bytes:
        """Serialize to the ``.binpb`` bytes (deterministic map order)."""
        return self.to_proto().SerializeToString(deterministic=True)

    @classmethod
    def from_proto(cls, message: pb.LakehouseDef) -> LakehouseDefinition:
        """Build a definition from a message, applying defaults to unset fields.

        Raises:
            UnsupportedFormatVersionError: For another format major version.
            InvalidDefinitionError: If a field is invalid.
        """
        if message.major_version != FORMAT_MAJOR_VERSION:
            raise UnsupportedFormatVersionError(message.major_version, FORMAT_MAJOR_VERSION)

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
        )

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> LakehouseDefinition:
        """Parse a lakehouse definition file.

        Args:
            data: The file content.
            path: The file's path, for error messages.

        Returns:
            The definition, with defaults applied to unset fields.

        Raises:
            CorruptFileError: If the bytes do not parse or hold invalid values.
            UnsupportedFormatVersionError: For another format major version.
        """
        message = pb.LakehouseDef()
        _parse(message, data, path, "lakehouse definition")
        try:
            return cls.from_proto(message)
        except (InvalidDefinitionError, InvalidNameError) as exc:
            raise _corrupt(path, "lakehouse definition", exc) from None


# --- namespace ------------------------------------------------------------------


@dataclass(frozen=True)
class NamespaceDefinition:
    """A namespace definition (schema ID 1).

    Attributes:
        name: The namespace name (object name rules; size checked at key encoding).
        properties: Free-form user properties.
    """

    name: str
    properties: Mapping[str, str] = _EMPTY

    schema_id: ClassVar[int] = keys.NAMESPACE_SCHEMA_ID

    def __post_init__(self) -> None:
        _set(self, "properties", _string_map("properties", self.properties))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidNameError: If the name breaks the object name rules.
            InvalidDefinitionError: Naming another invalid field.
        """
        keys.check_name_characters(self.name, "namespace")

    def replace(self, **changes: Any) -> NamespaceDefinition:
        """Return a copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_proto(self) -> pb.NamespaceDef:
        """Return the protobuf message."""
        return pb.NamespaceDef(name=self.name, properties=dict(self.properties))

    def to_bytes(self) -> bytes:
        """Serialize to the ``.binpb`` bytes (deterministic map order)."""
        return self.to_proto().SerializeToString(deterministic=True)

    @classmethod
    def from_proto(cls, message: pb.NamespaceDef) -> NamespaceDefinition:
        """Build a definition from a message."""
        return cls(name=message.name, properties=dict(message.properties))

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> NamespaceDefinition:
        """Parse a namespace definition file.

        Raises:
            CorruptFileError: If the bytes do not parse or hold invalid values.
        """
        message = pb.NamespaceDef()
        _parse(message, data, path, "namespace definition")
        try:
            return cls.from_proto(message)
        except (InvalidDefinitionError, InvalidNameError) as exc:
            raise _corrupt(path, "namespace definition", exc) from None


# --- column types ---------------------------------------------------------------

# Parameters each kind takes; a table rather than if-chains (see STYLE.md).
_PRECISION_SCALE = ("precision", "scale")
_PRECISION = ("precision",)
_LENGTH = ("length",)
#: Every type kind and the parameters it requires.
TYPE_KINDS: Mapping[str, tuple[str, ...]] = FrozenMap(
    {
        "boolean": (),
        "int2": (),
        "int4": (),
        "int8": (),
        "decimal": _PRECISION_SCALE,
        "float4": (),
        "float8": (),
        "char": _LENGTH,
        "varchar": _LENGTH,
        "date": (),
        "time": _PRECISION,
        "timetz": _PRECISION,
        "timestamp": _PRECISION,
        "timestamptz": _PRECISION,
        "fixed": _LENGTH,
        "binary": _LENGTH,
        "struct": (),
        "map": (),
        "list": (),
    }
)
_NESTED_KINDS = frozenset({"struct", "map", "list"})
_PARAMETERS = ("precision", "scale", "length")


@dataclass(frozen=True)
class DataType:
    """A column type: a primitive with its parameters, or a nested type.

    Use the constructors (``DataType("int4")``, :meth:`decimal`,
    :meth:`varchar`, :meth:`timestamptz`, :meth:`struct_of`, :meth:`map_of`,
    :meth:`list_of`) rather than setting fields by hand.

    Attributes:
        kind: One of :data:`TYPE_KINDS` (lower-case canonical name).
        precision: decimal digits (1..38), or fractional second digits (0..9)
            for time, timetz, timestamp and timestamptz.
        scale: decimal scale, 0..precision.
        length: char, varchar, fixed and binary length, 1..2**32-1.
        fields: struct members (at least one, unique names).
        key: map key column (must not be nullable).
        value: map value column.
        element: list element column.
    """

    kind: str
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    fields: Sequence[Column] = ()
    key: Column | None = None
    value: Column | None = None
    element: Column | None = None

    def __post_init__(self) -> None:
        _set(self, "fields", tuple(self.fields))
        self.validate()

    # -- constructors --

    @classmethod
    def decimal(cls, precision: int, scale: int = 0) -> DataType:
        """``decimal(precision, scale)``."""
        return cls("decimal", precision=precision, scale=scale)

    @classmethod
    def char(cls, length: int) -> DataType:
        """``char(length)``."""
        return cls("char", length=length)

    @classmethod
    def varchar(cls, length: int) -> DataType:
        """``varchar(length)``."""
        return cls("varchar", length=length)

    @classmethod
    def fixed(cls, length: int) -> DataType:
        """``fixed(length)``: binary of exactly ``length`` bytes."""
        return cls("fixed", length=length)

    @classmethod
    def binary(cls, length: int) -> DataType:
        """``binary(length)``: binary of at most ``length`` bytes."""
        return cls("binary", length=length)

    @classmethod
    def time(cls, precision: int = 6) -> DataType:
        """``time(precision)``."""
        return cls("time", precision=precision)

    @classmethod
    def timetz(cls, precision: int = 6) -> DataType:
        """``timetz(precision)``."""
        return cls("timetz", precision=precision)

    @classmethod
    def timestamp(cls, precision: int = 6) -> DataType:
        """``timestamp(precision)``."""
        return cls("timestamp", precision=precision)

    @classmethod
    def timestamptz(cls, precision: int = 6) -> DataType:
        """``timestamptz(precision)``."""
        return cls("timestamptz", precision=precision)

    @classmethod
    def struct_of(cls, *fields: Column) -> DataType:
        """``struct<...>`` with the given member columns."""
        return cls("struct", fields=fields)

    @classmethod
    def map_of(cls, key: Column, value: Column) -> DataType:
        """``map<key, value>``."""
        return cls("map", key=key, value=value)

    @classmethod
    def list_of(cls, element: Column) -> DataType:
        """``list<element>``."""
        return cls("list", element=element)

    # -- validation --

    def validate(self) -> None:
        """Check the kind, its parameters and its children.

        Raises:
            InvalidDefinitionError: Naming the invalid field.
        """
        if self.kind not in TYPE_KINDS:
            raise _fail(
                "kind",
                f"unknown data type kind {self.kind!r}; use one of {', '.join(TYPE_KINDS)}",
            )
        wanted = TYPE_KINDS[self.kind]
        for name in _PARAMETERS:
            present = getattr(self, name) is not None
            if present != (name in wanted):
                rule = "requires" if name in wanted else "does not take"
                raise _fail(name, f"data type {self.kind} {rule} a {name}")
        self._validate_parameters()
        self._validate_children()

    def _validate_parameters(self) -> None:
        if self.kind == "decimal":
            precision = _check_int("precision", self.precision, 1, MAX_DECIMAL_PRECISION)
            _check_int("scale", self.scale, 0, precision)
        elif self.precision is not None:
            _check_int("precision", self.precision, 0, MAX_TIME_PRECISION)
        if self.length is not None:
            _check_int("length", self.length, 1, _UINT32_MAX)

    def _validate_children(self) -> None:
        expected = {
            "fields": self.kind == "struct",
            "key": self.kind == "map",
            "value": self.kind == "map",
            "element": self.kind == "list",
        }
        for name, wanted in expected.items():
            present = bool(getattr(self, name))
            if present != wanted:
                rule = "requires" if wanted else "does not take"
                raise _fail(name, f"data type {self.kind} {rule} {name}")
            for child in _as_columns(getattr(self, name)):
                if not isinstance(child, Column):
                    raise _fail(
                        name, f"data type {self.kind} {name} must be Columns, got {child!r}"
                    )
        if self.kind == "struct":
            _check_unique_names("fields", self.fields)
        if self.key is not None and self.key.nullable:
            raise _fail("key", "a map key column must not be nullable; set nullable=False")

    @property
    def children(self) -> tuple[Column, ...]:
        """The nested columns: struct fields, map key and value, or list element."""
        return (
            tuple(self.fields)
            + _as_columns(self.key)
            + _as_columns(self.value)
            + _as_columns(self.element)
        )

    # -- SQL text --

    def to_sql(self) -> str:
        """Return the canonical type text, e.g. ``decimal(10,2)`` or ``map<varchar(10), int8>``.

        Only the type is rendered: nullability, IDs and properties of nested
        columns are not part of the type text.
        """
        if self.kind == "decimal":
            return f"decimal({self.precision},{self.scale})"
        if self.precision is not None:
            return f"{self.kind}({self.precision})"
        if self.length is not None:
            return f"{self.kind}({self.length})"
        if self.kind == "struct":
            members = ", ".join(
                f"{_sql_name(col.name)}: {col.type.to_sql()}" for col in self.fields
            )
            return f"struct<{members}>"
        if self.kind == "map":
            assert self.key is not None and self.value is not None  # validated
            return f"map<{self.key.type.to_sql()}, {self.value.type.to_sql()}>"
        if self.kind == "list":
            assert self.element is not None  # validated
            return f"list<{self.element.type.to_sql()}>"
        return self.kind

    # -- protobuf --

    def to_proto(self) -> pb.DataType:
        """Return the protobuf message."""
        message = pb.DataType(
            kind=cast("pb.DataType.Kind", pb.DataType.Kind.Value(self.kind.upper()))
        )
        for name in _PARAMETERS:
            if getattr(self, name) is not None:
                setattr(message, name, getattr(self, name))
        message.fields.extend(col.to_proto() for col in self.fields)
        if self.key is not None and self.value is not None:
            message.key.CopyFrom(self.key.to_proto())
            message.value.CopyFrom(self.value.to_proto())
        if self.element is not None:
            message.element.CopyFrom(self.element.to_proto())
        return message

    @classmethod
    def from_proto(cls, message: pb.DataType) -> DataType:
        """Build a type from a message.

        Raises:
            InvalidDefinitionError: For an unknown kind or invalid parameters.
        """
        names = {value: name.lower() for name, value in pb.DataType.Kind.items()}
        kind = names.get(message.kind, "kind_unspecified")
        if kind == "kind_unspecified":
            raise _fail("kind", f"data type kind {message.kind} is unspecified or unknown")
        params = {name: getattr(message, name) for name in _PARAMETERS if message.HasField(name)}
        return cls(
            kind,
            fields=tuple(Column.from_proto(col) for col in message.fields),
            key=Column.from_proto(message.key) if message.HasField("key") else None,
            value=Column.from_proto(message.value) if message.HasField("value") else None,
            element=Column.from_proto(message.element) if message.HasField("element") else None,
            **params,
        )


def _as_columns(value: object) -> tuple[Any, ...]:
    """Normalize a child slot (None, one Column, or a sequence) to a tuple."""
    if value is None:
        return ()
    if isinstance(value, tuple):
        return value
    return (value,)


def _sql_name(name: str) -> str:
    """Quote a struct member name unless it is a plain identifier."""
    if _PLAIN_IDENTIFIER_RE.fullmatch(name):
        return name
    return '"' + name.replace('"', '""') + '"'


def _check_unique_names(field_name: str, columns: Sequence[Column]) -> None:
    seen: set[str] = set()
    for col in columns:
        if col.name in seen:
            raise _fail(
                field_name,
                f"column name {col.name!r} appears twice in {field_name}; give each column a "
                "unique name",
            )
        seen.add(col.name)


@dataclass(frozen=True)
class Column:
    """A table column, or a nested struct member, map key/value or list element.

    Attributes:
        id: Numeric column ID, unique across the whole table (uint32).
        name: Column name, non-empty (any characters; SQL quoting is the SQL
            layer's business).
        type: The column type.
        nullable: Whether the column accepts NULL.
        properties: Free-form properties.
        comment: Optional comment.
    """

    id: int
    name: str
    type: DataType
    nullable: bool = True
    properties: Mapping[str, str] = _EMPTY
    comment: str | None = None

    def __post_init__(self) -> None:
        _set(self, "properties", _string_map("properties", self.properties))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidDefinitionError: Naming the invalid field.
        """
        _check_int("id", self.id, 0, _UINT32_MAX)
        _check_str("name", self.name, required=True)
        if not isinstance(self.type, DataType):
            raise _fail("type", f"column {self.name!r} type must be a DataType, got {self.type!r}")
        if not isinstance(self.nullable, bool):
            raise _fail("nullable", f"column {self.name!r} nullable must be a bool")
        if self.comment is not None:
            _check_str("comment", self.comment, required=False)

    def walk(self) -> Iterator[Column]:
        """Yield this column and every nested column, depth first."""
        yield self
        for child in self.type.children:
            yield from child.walk()

    def to_proto(self) -> pb.Column:
        """Return the protobuf message."""
        message = pb.Column(
            id=self.id,
            name=self.name,
            type=self.type.to_proto(),
            nullable=self.nullable,
            properties=dict(self.properties),
        )
        if self.comment is not None:
            message.comment = self.comment
        return message

    @classmethod
    def from_proto(cls, message: pb.Column) -> Column:
        """Build a column from a message.

        Raises:
            InvalidDefinitionError: If a field is invalid.
        """
        if not message.HasField("type"):
            raise _fail("type", f"column {message.name!r} has no type")
        return cls(
            id=message.id,
            name=message.name,
            type=DataType.from_proto(message.type),
            nullable=message.nullable,
            properties=dict(message.properties),
            comment=message.comment if message.HasField("comment") else None,
        )


# --- table ----------------------------------------------------------------------

_KEY_FIELDS = ("distribution_keys", "sort_keys", "primary_key", "unique_columns")


@dataclass(frozen=True)
class TableDefinition:
    """A table definition (schema ID 2).

    Attributes:
        name: The table name (object name rules; size checked at key encoding).
        columns: Top-level columns; IDs unique across all nesting levels,
            names unique per level.
        distribution_keys: IDs of top-level columns data is distributed by.
        sort_keys: IDs of top-level columns data is sorted by.
        primary_key: IDs of top-level, non-nullable primary key columns.
        unique_columns: IDs of top-level columns that each hold unique values.
        table_type: ``MANAGED`` (default), ``EXTERNAL`` or ``FEDERATED``.
        table_format: Data format of the table, e.g. ``parquet``. Required,
            keyword-only.
        format_properties: Properties of the table format.
        properties: Free-form user properties.
    """

    name: str
    columns: Sequence[Column] = ()
    distribution_keys: Sequence[int] = ()
    sort_keys: Sequence[int] = ()
    primary_key: Sequence[int] = ()
    unique_columns: Sequence[int] = ()
    table_type: str = "MANAGED"
    table_format: str = field(kw_only=True)
    format_properties: Mapping[str, str] = _EMPTY
    properties: Mapping[str, str] = _EMPTY

    schema_id: ClassVar[int] = keys.TABLE_SCHEMA_ID

    def __post_init__(self) -> None:
        for name in ("columns", *_KEY_FIELDS):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise _fail(name, f"{name} must be a sequence, got {value!r}")
            _set(self, name, tuple(value))
        _set(self, "format_properties", _string_map("format_properties", self.format_properties))
        _set(self, "properties", _string_map("properties", self.properties))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidNameError: If the name breaks the object name rules.
            InvalidDefinitionError: Naming another invalid field.
        """
        keys.check_name_characters(self.name, "table")
        self._validate_columns()
        self._validate_keys()
        if self.table_type not in TABLE_TYPES:
            raise _fail(
                "table_type",
                f"table_type {self.table_type!r} is not one of {', '.join(TABLE_TYPES)}",
            )
        _check_str("table_format", self.table_format, required=True)

    def _validate_columns(self) -> None:
        for col in self.columns:
            if not isinstance(col, Column):
                raise _fail("columns", f"columns must hold Column objects, got {col!r}")
        _check_unique_names("columns", self.columns)
        seen: dict[int, str] = {}
        for col in self.all_columns():
            if col.id in seen:
                raise _fail(
                    "columns",
                    f"column ID {col.id} is used by both {seen[col.id]!r} and {col.name!r}; "
                    "column IDs must be unique across the table, nested columns included",
                )
            seen[col.id] = col.name

    def _validate_keys(self) -> None:
        by_id = {col.id: col for col in self.columns}
        for name in _KEY_FIELDS:
            ids = getattr(self, name)
            for column_id in ids:
                _check_int(name, column_id, 0, _UINT32_MAX)
                if column_id not in by_id:
                    raise _fail(
                        name,
                        f"{name} refers to column ID {column_id}, which is not a top-level "
                        "column of the table; use the ID of an existing top-level column",
                    )
            if len(set(ids)) != len(ids):
                raise _fail(name, f"{name} lists a column ID more than once: {list(ids)}")
        for column_id in self.primary_key:
            if by_id[column_id].nullable:
                raise _fail(
                    "primary_key",
                    f"primary_key column {by_id[column_id].name!r} (ID {column_id}) is nullable; "
                    "primary key columns must be declared NOT NULL (nullable=False)",
                )

    def all_columns(self) -> Iterator[Column]:
        """Yield every column, nested ones included, depth first."""
        for col in self.columns:
            yield from col.walk()

    def column(self, name: str) -> Column:
        """Return the top-level column called ``name``.

        Raises:
            KeyError: If there is no such column.
        """
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(name)

    def replace(self, **changes: Any) -> TableDefinition:
        """Return a copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_proto(self) -> pb.TableDef:
        """Return the protobuf message."""
        return pb.TableDef(
            name=self.name,
            schema=[col.to_proto() for col in self.columns],
            distribution_keys=self.distribution_keys,
            sort_keys=self.sort_keys,
            primary_key=self.primary_key,
            unique_columns=self.unique_columns,
            table_type=cast("pb.TableDef.TableType", pb.TableDef.TableType.Value(self.table_type)),
            table_format=self.table_format,
            format_properties=dict(self.format_properties),
            properties=dict(self.properties),
        )

    def to_bytes(self) -> bytes:
        """Serialize to the ``.binpb`` bytes (deterministic map order)."""
        return self.to_proto().SerializeToString(deterministic=True)

    @classmethod
    def from_proto(cls, message: pb.TableDef) -> TableDefinition:
        """Build a definition from a message.

        Raises:
            InvalidDefinitionError: If a field is invalid.
        """
        types = {value: name for name, value in pb.TableDef.TableType.items()}
        if message.table_type not in types:
            raise _fail("table_type", f"table type {message.table_type} is unknown")
        return cls(
            name=message.name,
            columns=tuple(Column.from_proto(col) for col in message.schema),
            distribution_keys=tuple(message.distribution_keys),
            sort_keys=tuple(message.sort_keys),
            primary_key=tuple(message.primary_key),
            unique_columns=tuple(message.unique_columns),
            table_type=types[message.table_type],
            table_format=message.table_format,
            format_properties=dict(message.format_properties),
            properties=dict(message.properties),
        )

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> TableDefinition:
        """Parse a table definition file.

        Raises:
            CorruptFileError: If the bytes do not parse or hold invalid values.
        """
        message = pb.TableDef()
        _parse(message, data, path, "table definition")
        try:
            return cls.from_proto(message)
        except (InvalidDefinitionError, InvalidNameError) as exc:
            raise _corrupt(path, "table definition", exc) from None


#: Definition class of each object schema ID (lakehouse, namespace, table).
DEFINITION_TYPES: Mapping[
    int, type[LakehouseDefinition | NamespaceDefinition | TableDefinition]
] = FrozenMap(
    {
        keys.LAKEHOUSE_SCHEMA_ID: LakehouseDefinition,
        keys.NAMESPACE_SCHEMA_ID: NamespaceDefinition,
        keys.TABLE_SCHEMA_ID: TableDefinition,
    }
)
