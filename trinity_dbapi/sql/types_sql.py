"""SQL column types and TrinityLake :class:`~trinity_dbapi.format.definitions.DataType`.

The trinity dialect parses a column type into a sqlglot ``exp.DataType`` whose
``this`` is the ``exp.DType`` of :data:`KIND_DTYPES` and whose parameters are
always explicit (the parser fills in the defaults below). :func:`data_type`
turns such a node, or one of sqlglot's own parsers, into a ``DataType``;
:func:`sql_type` goes back. A type's text, both ways, is the whole dialect's
work: :func:`~trinity_dbapi.sql.dialect.type_sql` and
:func:`~trinity_dbapi.sql.dialect.parse_type_sql`. The tables here are the single source of the type
names: the parser, the generator and ``docs/sql.md`` all follow them.

Defaults (see "Decisions" in ``docs/sql.md``):

* ``decimal`` without parameters is ``decimal(38, 0)``; ``decimal(p)`` is
  ``decimal(p, 0)``.
* ``char`` without a length is ``char(1)`` (the SQL standard's default).
* ``varchar`` / ``text`` and ``binary`` / ``varbinary`` without a length are
  unbounded: length :data:`UNBOUNDED_LENGTH` (2**32-1, the largest length the
  format stores), printed back without a length.
* ``time``, ``timetz``, ``timestamp`` and ``timestamptz`` without a precision
  have precision 6 (microseconds).

Imports from sql/: compat.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from sqlglot import exp

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.format.definitions import TYPE_KINDS, Column, DataType
from trinity_dbapi.sql.compat import DType

#: Length of ``varchar`` and ``binary`` written without one: the largest the format allows.
UNBOUNDED_LENGTH = 2**32 - 1
#: ``decimal`` without parameters.
DEFAULT_DECIMAL = (38, 0)
#: ``char`` without a length.
DEFAULT_CHAR_LENGTH = 1
#: Fractional second digits of ``time`` / ``timestamp`` types without a precision.
DEFAULT_TIME_PRECISION = 6

D = DType
_LOWER_PLAIN = re.compile(r"[a-z_][a-z0-9_]*")

#: Every type name of the grammar (upper case, words one space apart) and its kind.
#: ``BINARY VARYING`` and ``... WITH TIME ZONE`` are parsed as suffixes of these.
TYPE_NAMES: Mapping[str, str] = {
    "BOOLEAN": "boolean",
    "BOOL": "boolean",
    "INT2": "int2",
    "SMALLINT": "int2",
    "INT4": "int4",
    "INT": "int4",
    "INTEGER": "int4",
    "INT8": "int8",
    "BIGINT": "int8",
    "LONG": "int8",
    "DECIMAL": "decimal",
    "NUMERIC": "decimal",
    "FLOAT4": "float4",
    "REAL": "float4",
    "FLOAT8": "float8",
    "FLOAT": "float8",
    "DOUBLE": "float8",
    "DOUBLE PRECISION": "float8",
    "CHAR": "char",
    "CHARACTER": "char",
    "NCHAR": "char",
    "BPCHAR": "char",
    "VARCHAR": "varchar",
    "CHARACTER VARYING": "varchar",
    "NVARCHAR": "varchar",
    "TEXT": "varchar",
    "DATE": "date",
    "TIME": "time",
    "TIMETZ": "timetz",
    "TIMESTAMP": "timestamp",
    "TIMESTAMPTZ": "timestamptz",
    "FIXED": "fixed",
    "BINARY": "binary",
    "VARBINARY": "binary",
    "VARBYTE": "binary",
    "STRUCT": "struct",
    "ROW": "struct",
    "MAP": "map",
    "LIST": "list",
    "ARRAY": "list",
}

#: The ``exp.DType`` that stands for each kind in the dialect's syntax trees.
KIND_DTYPES: Mapping[str, DType] = {
    "boolean": D.BOOLEAN,
    "int2": D.SMALLINT,
    "int4": D.INT,
    "int8": D.BIGINT,
    "decimal": D.DECIMAL,
    "float4": D.FLOAT,
    "float8": D.DOUBLE,
    "char": D.CHAR,
    "varchar": D.VARCHAR,
    "date": D.DATE,
    "time": D.TIME,
    "timetz": D.TIMETZ,
    "timestamp": D.TIMESTAMP,
    "timestamptz": D.TIMESTAMPTZ,
    "fixed": D.BINARY,
    "binary": D.VARBINARY,
    "struct": D.STRUCT,
    "map": D.MAP,
    "list": D.ARRAY,
}

#: Kind of every ``exp.DType`` that has one (also the types sqlglot's DuckDB parser makes).
DTYPE_KINDS: Mapping[DType, str] = {
    **{dtype: kind for kind, dtype in KIND_DTYPES.items()},
    D.NCHAR: "char",
    D.NVARCHAR: "varchar",
    D.TEXT: "varchar",
    D.TIMESTAMPNTZ: "timestamp",
    D.BLOB: "binary",
    D.LIST: "list",
}

#: Canonical SQL spelling of each kind: what the trinity generator prints.
CANONICAL_NAMES: Mapping[str, str] = {kind: kind.upper() for kind in TYPE_KINDS}

#: Time zone variant of the kinds that take ``WITH TIME ZONE``.
WITH_TIME_ZONE: Mapping[str, str] = {"time": "timetz", "timestamp": "timestamptz"}


def name_of(identifier: exp.Expr) -> str:
    """The object name an identifier stands for: unquoted lower-cased, quoted as written."""
    if isinstance(identifier, exp.Identifier) and identifier.quoted:
        return identifier.name
    return identifier.name.lower()


def identifier(name: str) -> exp.Identifier:
    """The identifier node that parses back to ``name``: quoted unless lower-case and plain."""
    return exp.Identifier(this=name, quoted=_LOWER_PLAIN.fullmatch(name) is None)


def type_parameters(node: exp.DataType) -> list[int]:
    """The integer parameters of a type node, e.g. ``[10, 2]`` for ``DECIMAL(10, 2)``."""
    params = []
    for param in node.expressions:
        if isinstance(param, exp.DataTypeParam) and param.this.is_int:
            params.append(int(param.this.name))
    return params


def data_type(node: exp.DataType) -> DataType:
    """The TrinityLake type of a parsed SQL type; nested columns get ID 0.

    Raises:
        ProgrammingError: The type has no TrinityLake equivalent, or its
            parameters are out of range (:class:`InvalidDefinitionError`).
    """
    return convert_type(node, lambda: 0)


def convert_type(node: exp.DataType, next_id: Callable[[], int]) -> DataType:
    """Like :func:`data_type`, numbering nested columns with ``next_id`` depth first."""
    kind = DTYPE_KINDS.get(node.this)
    if kind is None:
        raise ProgrammingError(
            f"column type {node.sql(dialect='duckdb')} has no TrinityLake equivalent; use one "
            f"of {', '.join(CANONICAL_NAMES.values())} (see docs/sql.md, Types)"
        )
    return _BUILDERS[kind](kind, node, next_id)


def _plain(kind: str, node: exp.DataType, next_id: Callable[[], int]) -> DataType:
    return DataType(kind)


def _decimal(kind: str, node: exp.DataType, next_id: Callable[[], int]) -> DataType:
    params = type_parameters(node) or list(DEFAULT_DECIMAL)
    return DataType.decimal(params[0], params[1] if len(params) > 1 else 0)


def _length(default: int) -> Callable[[str, exp.DataType, Callable[[], int]], DataType]:
    def build(kind: str, node: exp.DataType, next_id: Callable[[], int]) -> DataType:
        params = type_parameters(node)
        return DataType(kind, length=params[0] if params else default)

    return build


def _precision(kind: str, node: exp.DataType, next_id: Callable[[], int]) -> DataType:
    params = type_parameters(node)
    return DataType(kind, precision=params[0] if params else DEFAULT_TIME_PRECISION)


def _struct(kind: str, node: exp.DataType, next_id: Callable[[], int]) -> DataType:
    fields = []
    for member in node.expressions:
        field_id = next_id()
        fields.append(
            Column(field_id, name_of(member.this), convert_type(member.args["kind"], next_id))
        )
    return DataType.struct_of(*fields)


def _map(kind: str, node: exp.DataType, next_id: Callable[[], int]) -> DataType:
    key_node, value_node = node.expressions
    key_id = next_id()
    key = Column(key_id, "key", convert_type(key_node, next_id), nullable=False)
    value_id = next_id()
    return DataType.map_of(key, Column(value_id, "value", convert_type(value_node, next_id)))


def _list(kind: str, node: exp.DataType, next_id: Callable[[], int]) -> DataType:
    element_id = next_id()
    return DataType.list_of(
        Column(element_id, "element", convert_type(node.expressions[0], next_id))
    )


_Builder = Callable[[str, exp.DataType, Callable[[], int]], DataType]
_BUILDERS: Mapping[str, _Builder] = {
    "boolean": _plain,
    "int2": _plain,
    "int4": _plain,
    "int8": _plain,
    "float4": _plain,
    "float8": _plain,
    "date": _plain,
    "decimal": _decimal,
    "char": _length(DEFAULT_CHAR_LENGTH),
    "varchar": _length(UNBOUNDED_LENGTH),
    "binary": _length(UNBOUNDED_LENGTH),
    "fixed": _length(UNBOUNDED_LENGTH),
    "time": _precision,
    "timetz": _precision,
    "timestamp": _precision,
    "timestamptz": _precision,
    "struct": _struct,
    "map": _map,
    "list": _list,
}


# -- DataType -> SQL ------------------------------------------------------------------


def sql_type(data_type: DataType) -> exp.DataType:
    """The dialect's syntax tree of a TrinityLake type (the inverse of :func:`data_type`)."""
    dtype = KIND_DTYPES[data_type.kind]
    if data_type.kind == "struct":
        members = [
            exp.ColumnDef(this=identifier(field.name), kind=sql_type(field.type))
            for field in data_type.fields
        ]
        return exp.DataType(this=dtype, expressions=members, nested=True)
    children = [child.type for child in data_type.children]
    if children:
        return exp.DataType(this=dtype, expressions=[sql_type(c) for c in children], nested=True)
    values = [data_type.precision, data_type.scale, data_type.length]
    params = [v for v in values if v is not None]
    if data_type.kind in ("varchar", "binary") and params == [UNBOUNDED_LENGTH]:
        params = []
    return exp.DataType(
        this=dtype,
        expressions=[exp.DataTypeParam(this=exp.Literal.number(p)) for p in params] or None,
    )
