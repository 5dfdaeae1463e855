"""View definitions (schema ID 3).

A view is upstream TrinityLake's view object: its query as SQL text in one or
more dialects, the columns the query gave when the view was made (schema
binding), the tabular objects it names, and free-form properties (its
``comment`` among them, as a table's). docs/format.md describes every field.

Imports from format/definitions/: _common, types.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions._common import (
    EMPTY,
    BinpbDefinition,
    check_str,
    field_error,
    set_field,
    string_map,
)
from trinity_dbapi.format.definitions.types import Column, check_new_relation, check_unique_names
from trinity_dbapi.format.proto import trinity_pb2 as pb

__all__ = ["TRINITY_DIALECT", "ViewDefinition"]

#: The dialect name of SQL written as docs/sql.md describes it.
TRINITY_DIALECT = "trinity"


@dataclass(frozen=True)
class ViewDefinition(BinpbDefinition):
    """A view definition (schema ID 3).

    Attributes:
        name: The view name (object name rules; size checked at key encoding,
            against the table name limit: views and tables share names).
        columns: The view's columns as its query gave them at creation; IDs
            unique across all nesting levels, names unique per level.
        sql: Dialect -> the view's query in that dialect (at least one;
            :data:`TRINITY_DIALECT` is the one this package runs).
        referenced: ``(namespace, name)`` of each table or view the query names.
        schema_binding: Whether ``columns`` bind the view's result (always
            true for views this package makes).
        properties: Free-form user properties.
    """

    name: str
    columns: Sequence[Column] = ()
    sql: Mapping[str, str] = EMPTY
    referenced: Sequence[tuple[str, str]] = ()
    schema_binding: bool = True
    properties: Mapping[str, str] = EMPTY

    schema_id: ClassVar[int] = keys.VIEW_SCHEMA_ID
    _message_type: ClassVar[type[pb.ViewDef]] = pb.ViewDef
    _what: ClassVar[str] = "view definition"

    def __post_init__(self) -> None:
        for name in ("columns", "referenced"):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise field_error(name, f"{name} must be a sequence, got {value!r}")
            set_field(self, name, tuple(value))
        set_field(self, "referenced", tuple(tuple(ref) for ref in self.referenced))
        set_field(self, "sql", string_map("sql", self.sql))
        set_field(self, "properties", string_map("properties", self.properties))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidNameError: If the name breaks the object name rules.
            InvalidDefinitionError: Naming another invalid field.
        """
        keys.check_name_characters(self.name, "view")
        for col in self.columns:
            if not isinstance(col, Column):
                raise field_error("columns", f"columns must hold Column objects, got {col!r}")
        if self.schema_binding and not self.columns:
            raise field_error("columns", "a schema-bound view needs at least one column")
        check_unique_names("columns", self.columns)
        seen: dict[int, str] = {}
        for col in self.all_columns():
            if col.id in seen:
                raise field_error(
                    "columns",
                    f"column ID {col.id} is used by both {seen[col.id]!r} and {col.name!r}; "
                    "column IDs must be unique across the view, nested columns included",
                )
            seen[col.id] = col.name
        if not self.sql:
            raise field_error("sql", "a view needs its query in at least one dialect")
        for dialect, text in self.sql.items():
            check_str("sql", dialect, required=True)
            check_str(f"sql[{dialect!r}]", text, required=True)
        for ref in self.referenced:
            if len(ref) != 2:
                raise field_error(
                    "referenced", f"a referenced object is (namespace, name), got {ref!r}"
                )
            keys.check_name_characters(ref[0], "namespace")
            keys.check_name_characters(ref[1], "table")
        if not isinstance(self.schema_binding, bool):
            raise field_error(
                "schema_binding", f"schema_binding must be a bool, got {self.schema_binding!r}"
            )

    def check_new_names(
        self, previous: ViewDefinition | None = None, *, namespace: str = ""
    ) -> None:
        """Check every name this view introduces by the rule for new names.

        As :meth:`TableDefinition.check_new_names
        <trinity_dbapi.format.definitions.TableDefinition.check_new_names>`:
        the view's name, its column names and property keys, except those
        ``previous`` (the view this one replaces) already has.

        Raises:
            InvalidNameError: naming the name, the view, the rule and the fix.
        """
        check_new_relation("view", self.name, self.columns, self.properties, previous, namespace)

    def all_columns(self) -> Iterator[Column]:
        """Yield every column, nested ones included, depth first."""
        for col in self.columns:
            yield from col.walk()

    def replace(self, **changes: Any) -> ViewDefinition:
        """Return a copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_proto(self) -> pb.ViewDef:
        """Return the protobuf message; SQL texts in dialect order (deterministic bytes)."""
        return pb.ViewDef(
            name=self.name,
            schema_binding=self.schema_binding,
            schema=[col.to_proto() for col in self.columns],
            sql_representations=[
                pb.ViewDef.SqlRepresentation(dialect=dialect, sql=self.sql[dialect])
                for dialect in sorted(self.sql)
            ],
            referenced_object_ids=[
                pb.ViewDef.ObjectIdentifier(namespace=namespace, name=name)
                for namespace, name in self.referenced
            ],
            properties=dict(self.properties),
        )

    @classmethod
    def from_proto(cls, message: pb.ViewDef) -> ViewDefinition:
        """Build a definition from a message.

        Raises:
            InvalidDefinitionError: If a field is invalid (a dialect given twice included).
        """
        sql: dict[str, str] = {}
        for representation in message.sql_representations:
            if representation.dialect in sql:
                raise field_error("sql", f"dialect {representation.dialect!r} appears twice")
            sql[representation.dialect] = representation.sql
        return cls(
            name=message.name,
            columns=tuple(Column.from_proto(col) for col in message.schema),
            sql=sql,
            referenced=tuple((ref.namespace, ref.name) for ref in message.referenced_object_ids),
            schema_binding=message.schema_binding,
            properties=dict(message.properties),
        )
