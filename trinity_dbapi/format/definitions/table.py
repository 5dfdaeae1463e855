"""Table definitions (schema ID 2).

Imports from format/definitions/: _common, types.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions._common import (
    EMPTY,
    UINT32_MAX,
    BinpbDefinition,
    check_int,
    check_new_keys,
    check_str,
    field_error,
    set_field,
    string_map,
)
from trinity_dbapi.format.definitions.types import (
    Column,
    check_new_relation,
    check_unique_names,
)
from trinity_dbapi.format.proto import trinity_pb2 as pb

TABLE_TYPES = ("MANAGED", "EXTERNAL", "FEDERATED")

#: Format property holding the partition columns, outermost directory first,
#: as a compact JSON list of strings (``["day","shop"]``), so any column name
#: (commas included) is stored as it is.
PARTITION_COLUMNS = "partition_columns"
#: Before :data:`PARTITION_COLUMNS`: the partition columns comma-joined. Read
#: as before; a definition that changes its partition list gets the new form.
PARTITIONED_BY = "partitioned_by"
#: Format property holding the transform partitions among the partition
#: columns: a compact JSON object ``{"ts_day":{"transform":"day","source":"ts"}}``
#: (``"width"`` for bucket and truncate). Absent: every partition is a column.
PARTITION_TRANSFORMS = "partition_transforms"

# --- table ----------------------------------------------------------------------

_KEY_FIELDS = ("distribution_keys", "sort_keys", "primary_key", "unique_columns")


@dataclass(frozen=True)
class TableDefinition(BinpbDefinition):
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
    format_properties: Mapping[str, str] = EMPTY
    properties: Mapping[str, str] = EMPTY

    schema_id: ClassVar[int] = keys.TABLE_SCHEMA_ID
    _message_type: ClassVar[type[pb.TableDef]] = pb.TableDef
    _what: ClassVar[str] = "table definition"

    def __post_init__(self) -> None:
        for name in ("columns", *_KEY_FIELDS):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise field_error(name, f"{name} must be a sequence, got {value!r}")
            set_field(self, name, tuple(value))
        set_field(
            self, "format_properties", string_map("format_properties", self.format_properties)
        )
        set_field(self, "properties", string_map("properties", self.properties))
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
            raise field_error(
                "table_type",
                f"table_type {self.table_type!r} is not one of {', '.join(TABLE_TYPES)}",
            )
        check_str("table_format", self.table_format, required=True)

    def check_new_names(
        self, previous: TableDefinition | None = None, *, namespace: str = ""
    ) -> None:
        """Check every name this definition introduces by the rule for new names.

        :meth:`validate` holds a definition to the rules every stored one
        obeys; this holds the names a write adds (the table's name, column and
        nested field names, property keys of the table, its columns and its
        format) to :func:`~trinity_dbapi.format.names.new_name_problem`.
        Names ``previous`` already has are not checked again, so a table an
        older release wrote stays writable.

        Args:
            previous: The definition this one replaces (None: a new table).
            namespace: The table's namespace, for messages.

        Raises:
            InvalidNameError: naming the name, the object, the rule and the fix.
        """
        where = check_new_relation(
            "table", self.name, self.columns, self.properties, previous, namespace
        )
        # System-written, but an index's name is part of one (index.<name>).
        check_new_keys(
            "format property key",
            where,
            self.format_properties,
            previous.format_properties if previous else {},
        )

    def _validate_columns(self) -> None:
        for col in self.columns:
            if not isinstance(col, Column):
                raise field_error("columns", f"columns must hold Column objects, got {col!r}")
        check_unique_names("columns", self.columns)
        seen: dict[int, str] = {}
        for col in self.all_columns():
            if col.id in seen:
                raise field_error(
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
                check_int(name, column_id, 0, UINT32_MAX)
                if column_id not in by_id:
                    raise field_error(
                        name,
                        f"{name} refers to column ID {column_id}, which is not a top-level "
                        "column of the table; use the ID of an existing top-level column",
                    )
            if len(set(ids)) != len(ids):
                raise field_error(name, f"{name} lists a column ID more than once: {list(ids)}")
        for column_id in self.primary_key:
            if by_id[column_id].nullable:
                raise field_error(
                    "primary_key",
                    f"primary_key column {by_id[column_id].name!r} (ID {column_id}) is nullable; "
                    "primary key columns must be declared NOT NULL (nullable=False)",
                )

    @property
    def partition_columns(self) -> list[str]:
        """The table's partition columns, in order: the one reading of partitioning.

        Raises:
            CorruptFileError: ``partition_columns`` is not a JSON list of strings.
        """
        text = self.format_properties.get(PARTITION_COLUMNS)
        if text is None:
            return self._legacy_partition_columns()
        try:
            names = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply for json
            names = None
        if not (isinstance(names, list) and all(isinstance(name, str) for name in names)):
            raise CorruptFileError(
                f"<definition of table {self.name}>",
                f"format property {PARTITION_COLUMNS!r} must be a JSON list of column names, "
                f"not {text[:60]!r}",
            )
        return names

    def _legacy_partition_columns(self) -> list[str]:
        """The comma-joined ``partitioned_by`` of older definitions, read as it always was.

        Writers joined the names with a bare ``,``, and the data path split on it
        exactly; a piece that names no column but does once stripped (a
        hand-written ``day, shop``) is read stripped, as the catalog read it.
        """
        names = {column.name for column in self.columns}
        pieces = self.format_properties.get(PARTITIONED_BY, "").split(",")
        return [
            piece if piece in names or piece.strip() not in names else piece.strip()
            for piece in pieces
            if piece
        ]

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

    @classmethod
    def from_proto(cls, message: pb.TableDef) -> TableDefinition:
        """Build a definition from a message.

        Raises:
            InvalidDefinitionError: If a field is invalid.
        """
        types = {value: name for name, value in pb.TableDef.TableType.items()}
        if message.table_type not in types:
            raise field_error("table_type", f"table type {message.table_type} is unknown")
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


def with_partition_columns(
    properties: Mapping[str, str], partition_by: Sequence[str], transforms: str | None = None
) -> dict[str, str]:
    """``properties`` recording ``partition_by`` (none: the property is left out).

    Always written in the structural form; the legacy comma-joined property is
    dropped, so a definition never holds two lists that could disagree.
    ``transforms``: the :data:`PARTITION_TRANSFORMS` JSON text of the transform
    partitions among ``partition_by`` (None: none).
    """
    result = {
        key: value
        for key, value in properties.items()
        if key not in (PARTITION_COLUMNS, PARTITIONED_BY, PARTITION_TRANSFORMS)
    }
    if transforms is not None and partition_by:
        result[PARTITION_TRANSFORMS] = transforms
    if partition_by:
        # The form of the dataset metadata's trinity.partition_by (ASCII-only JSON).
        result[PARTITION_COLUMNS] = json.dumps(list(partition_by), separators=(",", ":"))
    return result
