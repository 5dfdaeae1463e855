"""Column types and columns of table definitions: :class:`DataType` and :class:`Column`.

Imports from format/definitions/: _common.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from trinity_dbapi.format import names
from trinity_dbapi.format.definitions._common import (
    EMPTY,
    UINT32_MAX,
    FrozenMap,
    check_int,
    check_new_keys,
    check_str,
    field_error,
    set_field,
    string_map,
)
from trinity_dbapi.format.proto import trinity_pb2 as pb
from trinity_dbapi.format.sql_text import quote_identifier

#: Decimal precision is 1..38 digits (what a 128-bit decimal holds).
MAX_DECIMAL_PRECISION = 38
#: The largest length, which SQL writes as ``varchar`` / ``binary`` without one:
#: "unbounded" in practice (a uint32 in the definition).
UNBOUNDED_LENGTH = 2**32 - 1
#: Time and timestamp precision is 0..9 fractional second digits (nanoseconds).
MAX_TIME_PRECISION = 9

_PLAIN_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
        set_field(self, "fields", tuple(self.fields))
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
            raise field_error(
                "kind",
                f"unknown data type kind {self.kind!r}; use one of {', '.join(TYPE_KINDS)}",
            )
        wanted = TYPE_KINDS[self.kind]
        for name in _PARAMETERS:
            present = getattr(self, name) is not None
            if present != (name in wanted):
                rule = "requires" if name in wanted else "does not take"
                raise field_error(name, f"data type {self.kind} {rule} a {name}")
        self._validate_parameters()
        self._validate_children()

    def _validate_parameters(self) -> None:
        if self.kind == "decimal":
            precision = check_int("precision", self.precision, 1, MAX_DECIMAL_PRECISION)
            check_int("scale", self.scale, 0, precision)
        elif self.precision is not None:
            check_int("precision", self.precision, 0, MAX_TIME_PRECISION)
        if self.length is not None:
            check_int("length", self.length, 1, UINT32_MAX)

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
                raise field_error(name, f"data type {self.kind} {rule} {name}")
            for child in _as_columns(getattr(self, name)):
                if not isinstance(child, Column):
                    raise field_error(
                        name, f"data type {self.kind} {name} must be Columns, got {child!r}"
                    )
        if self.kind == "struct":
            check_unique_names("fields", self.fields)
        if self.key is not None and self.key.nullable:
            raise field_error("key", "a map key column must not be nullable; set nullable=False")

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
            if self.length == UNBOUNDED_LENGTH and self.kind in ("varchar", "binary"):
                return self.kind  # unbounded, as SQL writes it
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
            raise field_error("kind", f"data type kind {message.kind} is unspecified or unknown")
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
    return quote_identifier(name)


def check_new_relation(
    kind: str,
    name: str,
    columns: Sequence[Column],
    properties: Mapping[str, str],
    previous: Any,
    namespace: str,
) -> str:
    """Check what a new table or view (``kind``) definition introduces; return its ``where``.

    Its name (unless ``previous`` has it), its columns' names and property
    keys (:func:`_check_new_columns`) and its own property keys. ``previous``
    is the definition it replaces, or None.
    """
    where = f"of {kind} {namespace}.{name}" if namespace else f"of {kind} {name}"
    if previous is None or previous.name != name:
        home = f"in namespace {namespace}" if namespace else ""
        names.check_new_object_name(name, kind, home)
    _check_new_columns(columns, previous.columns if previous else (), where)
    check_new_keys("property key", where, properties, previous.properties if previous else {})
    return where


def _check_new_columns(
    columns: Sequence[Column], previous: Sequence[Column], where: str, parent: str = ""
) -> None:
    """Check the names and property keys ``columns`` introduce by the rule for new names.

    A column is matched to its earlier self by ID (IDs are never reused), so
    a renamed column's new name is checked and a name stored before the rule
    is not. ``where`` names the table or view, for messages; ``parent`` the
    column a nested field belongs to.
    """
    before = {column.id: column for top in previous for column in top.walk()}
    _check_new_level(columns, before, where, parent)


def _check_new_level(
    columns: Sequence[Column], before: Mapping[int, Column], where: str, parent: str
) -> None:
    for column in columns:
        old = before.get(column.id)
        label = f"{parent}.{column.name}" if parent else column.name
        owner = f"of column {parent!r} {where}" if parent else where
        if old is None or old.name != column.name:
            names.check_new_name(column.name, "field" if parent else "column", owner)
        previous_keys = old.properties if old is not None else {}
        check_new_keys(
            "property key", f"of column {label!r} {where}", column.properties, previous_keys
        )
        _check_new_level(column.type.children, before, where, label)


def check_unique_names(field_name: str, columns: Sequence[Column]) -> None:
    seen: set[str] = set()
    for col in columns:
        if col.name in seen:
            raise field_error(
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
    properties: Mapping[str, str] = EMPTY
    comment: str | None = None

    def __post_init__(self) -> None:
        set_field(self, "properties", string_map("properties", self.properties))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidDefinitionError: Naming the invalid field.
        """
        check_int("id", self.id, 0, UINT32_MAX)
        check_str("name", self.name, required=True)
        if not isinstance(self.type, DataType):
            raise field_error(
                "type", f"column {self.name!r} type must be a DataType, got {self.type!r}"
            )
        if not isinstance(self.nullable, bool):
            raise field_error("nullable", f"column {self.name!r} nullable must be a bool")
        if self.comment is not None:
            check_str("comment", self.comment, required=False)

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
            raise field_error("type", f"column {message.name!r} has no type")
        return cls(
            id=message.id,
            name=message.name,
            type=DataType.from_proto(message.type),
            nullable=message.nullable,
            properties=dict(message.properties),
            comment=message.comment if message.HasField("comment") else None,
        )
