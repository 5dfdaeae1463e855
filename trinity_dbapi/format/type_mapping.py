"""TrinityLake column types as Arrow and DuckDB types, and back.

The SQL layer hands data to DuckDB and Parquet as Arrow, so every TrinityLake
type needs an Arrow type, and a schema read from Arrow (or Parquet) must come
back as the exact TrinityLake types it was written with.

Forward mapping (:func:`arrow_type`, :func:`duckdb_type`):

==================  ==================================  ===============================
TrinityLake         Arrow                               DuckDB
==================  ==================================  ===============================
``boolean``         ``bool``                            ``BOOLEAN``
``int2``            ``int16``                           ``SMALLINT``
``int4``            ``int32``                           ``INTEGER``
``int8``            ``int64``                           ``BIGINT``
``decimal(p,s)``    ``decimal128(p, s)``                ``DECIMAL(p,s)``
``float4``          ``float32``                         ``FLOAT`` (alias ``REAL``)
``float8``          ``float64``                         ``DOUBLE``
``char(n)``         ``string``                          ``VARCHAR``
``varchar(n)``      ``string``                          ``VARCHAR``
``date``            ``date32``                          ``DATE``
``time(p)``         ``time32``/``time64`` (unit of p)   ``TIME`` (``TIME_NS`` for p>6)
``timetz(p)``       ``time64``/``time32`` (unit of p)   ``TIME WITH TIME ZONE``
``timestamp(p)``    ``timestamp(unit of p)``            ``TIMESTAMP_S``/``_MS``/-/``_NS``
``timestamptz(p)``  ``timestamp(unit of p, "UTC")``     ``TIMESTAMP WITH TIME ZONE``
                                                        (``TIMESTAMPTZ_NS`` for p>6)
``fixed(n)``        ``fixed_size_binary(n)``            ``BLOB``
``binary(n)``       ``binary``                          ``BLOB``
``struct<...>``     ``struct`` (child nullability)      ``STRUCT("a" T, ...)``
``map<k, v>``       ``map_(key, value)`` (key not null) ``MAP(K, V)``
``list<e>``         ``list_(element)``                  ``E[]``
==================  ==================================  ===============================

The unit of a time precision ``p`` (fractional second digits) is the coarsest
Arrow unit that holds it: 0 -> ``s``, 1-3 -> ``ms``, 4-6 -> ``us``, 7-9 -> ``ns``.
Each DuckDB type is the one DuckDB itself gives the Arrow type (``from_arrow``),
spelled as DuckDB prints it, with one exception: Arrow has no time-with-zone
type, so ``timetz`` values travel as a plain Arrow time **normalized to UTC**
(the offset is not kept, as when DuckDB exports ``TIMETZ`` to Arrow) and DuckDB
reads that column as ``TIME``; cast it (``CAST(c AS TIMETZ)``, read as UTC) when
the zone matters. ``duckdb_type`` names the declared type, ``TIME WITH TIME
ZONE``. Struct member names are always double-quoted in DuckDB type text, which
is valid for any name (DuckDB drops the quotes it does not need when printing).

Field metadata makes the mapping lossless. :func:`arrow_field` writes on every
field, nested ones included:

* ``trinity.type``: the exact TrinityLake type text, :meth:`DataType.to_sql`;
* ``trinity.id``: the column ID, and ``PARQUET:field_id`` with the same value
  (when it fits Parquet's int32), so Parquet files carry the IDs;
* ``trinity.name``: on list elements and map keys and values only, whose names
  Parquet replaces with ``element``, ``key`` and ``value``;
* ``comment``: the column comment (the key Delta Lake uses), when set;
* ``trinity.property.<name>``: each column property.

Reading back (:func:`data_type_from_field`, :func:`columns_from_schema`), the
structure always comes from the Arrow type. ``trinity.type`` is used where the
Arrow type cannot tell: the length of ``char``/``varchar``/``binary``, the
precision of times and timestamps, and ``timetz``; it is ignored when it does
not fit the Arrow type (stale metadata after a cast), so the Arrow type wins.
Without metadata the type is inferred:

* ``string``, ``large_string``, ``string_view`` -> ``varchar(4294967295)``
  (:data:`DEFAULT_VARCHAR_LENGTH`, the largest length: Arrow strings are
  unbounded); ``binary``, ``large_binary``, ``binary_view`` ->
  ``binary(4294967295)`` (:data:`DEFAULT_BINARY_LENGTH`);
* ``int8`` and ``uint8`` -> ``int2``, ``uint16`` -> ``int4``, ``uint32`` ->
  ``int8`` (the next wider signed integer); ``uint64`` is not supported;
* ``float16`` -> ``float4``; ``date64`` -> ``date``; decimals of any width up
  to precision 38 -> ``decimal``;
* a time or timestamp unit -> its precision (``s`` 0, ``ms`` 3, ``us`` 6,
  ``ns`` 9); a timestamp with any time zone -> ``timestamptz``;
* ``large_list``, ``fixed_size_list`` and list views -> ``list``; a
  dictionary -> its value type;
* column IDs come from ``trinity.id``, else ``PARQUET:field_id``, else the
  next unused ID (depth first, after the largest ID present, from 1).

Any other Arrow type (unsigned 64-bit, durations, intervals, unions, null,
extension types, decimals wider than 38 digits) raises
:class:`~trinity_dbapi.errors.NotSupportedError` naming the field and type.

Imports from format/: definitions, sql_text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping

import pyarrow as pa

from trinity_dbapi.errors import InvalidDefinitionError, NotSupportedError
from trinity_dbapi.format.definitions import (
    MAX_DECIMAL_PRECISION,
    TYPE_KINDS,
    Column,
    DataType,
    TableDefinition,
)
from trinity_dbapi.format.sql_text import quote_identifier

__all__ = [
    "COMMENT_KEY",
    "DEFAULT_BINARY_LENGTH",
    "DEFAULT_VARCHAR_LENGTH",
    "ID_KEY",
    "NAME_KEY",
    "PARQUET_FIELD_ID_KEY",
    "PROPERTY_PREFIX",
    "TYPE_KEY",
    "arrow_field",
    "arrow_schema",
    "arrow_type",
    "columns_from_schema",
    "data_type_from_field",
    "duckdb_type",
    "time_unit",
]

#: Field metadata key holding the exact TrinityLake type text.
TYPE_KEY = "trinity.type"
#: Field metadata key holding the column ID.
ID_KEY = "trinity.id"
#: Field metadata key holding the column name of list elements and map keys/values.
NAME_KEY = "trinity.name"
#: Field metadata key holding the column comment.
COMMENT_KEY = "comment"
#: Prefix of the field metadata keys holding column properties.
PROPERTY_PREFIX = "trinity.property."
#: Field metadata key pyarrow turns into the Parquet field ID.
PARQUET_FIELD_ID_KEY = "PARQUET:field_id"

_UINT32_MAX = 2**32 - 1
_INT32_MAX = 2**31 - 1
#: Length given to an Arrow string column without ``trinity.type``: unbounded.
DEFAULT_VARCHAR_LENGTH = _UINT32_MAX
#: Length given to an Arrow binary column without ``trinity.type``: unbounded.
DEFAULT_BINARY_LENGTH = _UINT32_MAX

# Arrow time unit of each precision 0..9: the coarsest unit that holds it.
_UNITS = ("s", "ms", "ms", "ms", "us", "us", "us", "ns", "ns", "ns")
_UNIT_PRECISION: Mapping[str, int] = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def time_unit(precision: int) -> str:
    """The Arrow time unit (``s``, ``ms``, ``us``, ``ns``) of a time precision 0..9."""
    return _UNITS[precision]


# --- TrinityLake -> Arrow -------------------------------------------------------


def _unit(t: DataType) -> str:
    assert t.precision is not None  # validated by DataType
    return time_unit(t.precision)


def _arrow_time(t: DataType) -> pa.DataType:
    unit = _unit(t)
    return pa.time32(unit) if unit in ("s", "ms") else pa.time64(unit)


def _arrow_fixed(t: DataType) -> pa.DataType:
    assert t.length is not None  # validated by DataType
    if t.length > _INT32_MAX:
        raise NotSupportedError(
            f"type {t.to_sql()} is longer than Arrow's fixed_size_binary allows "
            f"({_INT32_MAX} bytes); use binary({t.length}) instead"
        )
    return pa.binary(t.length)


def _arrow_map(t: DataType) -> pa.DataType:
    assert t.key is not None and t.value is not None  # validated by DataType
    return pa.map_(_child_field(t.key), _child_field(t.value))


def _arrow_list(t: DataType) -> pa.DataType:
    assert t.element is not None  # validated by DataType
    return pa.list_(_child_field(t.element))


#: The Arrow type of each TrinityLake kind.
_ARROW_TYPES: Mapping[str, Callable[[DataType], pa.DataType]] = {
    "boolean": lambda t: pa.bool_(),
    "int2": lambda t: pa.int16(),
    "int4": lambda t: pa.int32(),
    "int8": lambda t: pa.int64(),
    "decimal": lambda t: pa.decimal128(t.precision, t.scale),
    "float4": lambda t: pa.float32(),
    "float8": lambda t: pa.float64(),
    "char": lambda t: pa.string(),
    "varchar": lambda t: pa.string(),
    "date": lambda t: pa.date32(),
    "time": _arrow_time,
    "timetz": _arrow_time,
    "timestamp": lambda t: pa.timestamp(_unit(t)),
    "timestamptz": lambda t: pa.timestamp(_unit(t), tz="UTC"),
    "fixed": _arrow_fixed,
    "binary": lambda t: pa.binary(),
    "struct": lambda t: pa.struct([arrow_field(col) for col in t.fields]),
    "map": _arrow_map,
    "list": _arrow_list,
}
assert set(_ARROW_TYPES) == set(TYPE_KINDS), "every TrinityLake kind needs an Arrow type"


def arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type of a TrinityLake type (see the module docstring's table).

    Nested members become fields built by :func:`arrow_field`, metadata included.

    Raises:
        NotSupportedError: a ``fixed`` length beyond Arrow's int32 limit.
    """
    return _ARROW_TYPES[t.kind](t)


def _metadata(column: Column) -> dict[str, str]:
    metadata = {TYPE_KEY: column.type.to_sql(), ID_KEY: str(column.id)}
    if column.id <= _INT32_MAX:
        metadata[PARQUET_FIELD_ID_KEY] = str(column.id)
    if column.comment is not None:
        metadata[COMMENT_KEY] = column.comment
    for name, value in column.properties.items():
        metadata[PROPERTY_PREFIX + name] = value
    return metadata


def arrow_field(column: Column) -> pa.Field:
    """The Arrow field of a column: name, type, nullability and metadata.

    The metadata (``trinity.type``, ``trinity.id``, ``PARQUET:field_id``,
    ``comment``, ``trinity.property.*``) lets :func:`columns_from_schema`
    rebuild the column exactly.
    """
    return pa.field(
        column.name,
        arrow_type(column.type),
        nullable=column.nullable,
        metadata=_metadata(column),
    )


def _child_field(column: Column) -> pa.Field:
    """A list element or map key/value field, which also records its name."""
    field = arrow_field(column)
    return field.with_metadata({**_decoded(field.metadata), NAME_KEY: column.name})


def arrow_schema(table: TableDefinition) -> pa.Schema:
    """The Arrow schema of a table: one :func:`arrow_field` per top-level column."""
    return pa.schema([arrow_field(col) for col in table.columns])


# --- TrinityLake -> DuckDB ------------------------------------------------------


def _duckdb_struct(t: DataType) -> str:
    members = ", ".join(f"{quote_identifier(col.name)} {duckdb_type(col.type)}" for col in t.fields)
    return f"STRUCT({members})"


def _duckdb_map(t: DataType) -> str:
    assert t.key is not None and t.value is not None  # validated by DataType
    return f"MAP({duckdb_type(t.key.type)}, {duckdb_type(t.value.type)})"


def _duckdb_list(t: DataType) -> str:
    assert t.element is not None  # validated by DataType
    return f"{duckdb_type(t.element.type)}[]"


_DUCKDB_TIMESTAMPS: Mapping[str, str] = {
    "s": "TIMESTAMP_S",
    "ms": "TIMESTAMP_MS",
    "us": "TIMESTAMP",
    "ns": "TIMESTAMP_NS",
}

#: The DuckDB type text of each TrinityLake kind.
_DUCKDB_TYPES: Mapping[str, Callable[[DataType], str]] = {
    "boolean": lambda t: "BOOLEAN",
    "int2": lambda t: "SMALLINT",
    "int4": lambda t: "INTEGER",
    "int8": lambda t: "BIGINT",
    "decimal": lambda t: f"DECIMAL({t.precision},{t.scale})",
    "float4": lambda t: "FLOAT",
    "float8": lambda t: "DOUBLE",
    "char": lambda t: "VARCHAR",
    "varchar": lambda t: "VARCHAR",
    "date": lambda t: "DATE",
    "time": lambda t: "TIME_NS" if _unit(t) == "ns" else "TIME",
    "timetz": lambda t: "TIME WITH TIME ZONE",
    "timestamp": lambda t: _DUCKDB_TIMESTAMPS[_unit(t)],
    "timestamptz": lambda t: "TIMESTAMPTZ_NS" if _unit(t) == "ns" else "TIMESTAMP WITH TIME ZONE",
    "fixed": lambda t: "BLOB",
    "binary": lambda t: "BLOB",
    "struct": _duckdb_struct,
    "map": _duckdb_map,
    "list": _duckdb_list,
}
assert set(_DUCKDB_TYPES) == set(TYPE_KINDS), "every TrinityLake kind needs a DuckDB type"


def duckdb_type(t: DataType) -> str:
    """The DuckDB type text of a TrinityLake type, e.g. ``DECIMAL(10,2)`` or ``INTEGER[]``.

    It is the type DuckDB gives the column's Arrow type, spelled as DuckDB
    prints it (``FLOAT`` for ``REAL``, ``TIMESTAMP WITH TIME ZONE`` for
    ``TIMESTAMPTZ``), except ``timetz``: see the module docstring.
    """
    return _DUCKDB_TYPES[t.kind](t)


# --- Arrow -> TrinityLake -------------------------------------------------------


def _decoded(metadata: Mapping[bytes, bytes] | None) -> dict[str, str]:
    return {k.decode(): v.decode() for k, v in (metadata or {}).items()}


def _optional(name: str) -> Callable[[], pa.DataType | None]:
    """A constructor of pyarrow that older versions lack (string_view, ...)."""
    return getattr(pa, name, lambda: None)


#: Arrow types that need no parameters to map, and their TrinityLake types.
_EXACT_TYPES: Mapping[pa.DataType, DataType] = {
    arrow: trinity
    for arrow, trinity in (
        (pa.bool_(), DataType("boolean")),
        (pa.int8(), DataType("int2")),
        (pa.int16(), DataType("int2")),
        (pa.int32(), DataType("int4")),
        (pa.int64(), DataType("int8")),
        (pa.uint8(), DataType("int2")),
        (pa.uint16(), DataType("int4")),
        (pa.uint32(), DataType("int8")),
        (pa.float16(), DataType("float4")),
        (pa.float32(), DataType("float4")),
        (pa.float64(), DataType("float8")),
        (pa.date32(), DataType("date")),
        (pa.date64(), DataType("date")),
        (pa.string(), DataType.varchar(DEFAULT_VARCHAR_LENGTH)),
        (pa.large_string(), DataType.varchar(DEFAULT_VARCHAR_LENGTH)),
        (_optional("string_view")(), DataType.varchar(DEFAULT_VARCHAR_LENGTH)),
        (pa.binary(), DataType.binary(DEFAULT_BINARY_LENGTH)),
        (pa.large_binary(), DataType.binary(DEFAULT_BINARY_LENGTH)),
        (_optional("binary_view")(), DataType.binary(DEFAULT_BINARY_LENGTH)),
    )
    if arrow is not None
}

#: The kinds ``trinity.type`` may refine an inferred kind to: what Arrow cannot say.
_REFINEMENTS: Mapping[str, frozenset[str]] = {
    "varchar": frozenset({"char", "varchar"}),
    "binary": frozenset({"binary"}),
    "time": frozenset({"time", "timetz"}),
    "timestamp": frozenset({"timestamp"}),
    "timestamptz": frozenset({"timestamptz"}),
}

#: Type text with one parameter, e.g. ``varchar(10)``: every refinement has one.
_TYPE_TEXT_RE = re.compile(r"([a-z]+)\((\d+)\)")


def _declared(text: str | None, inferred: DataType) -> DataType | None:
    """The type of ``trinity.type`` text when it refines ``inferred``, else None."""
    match = _TYPE_TEXT_RE.fullmatch(text or "")
    if match is None or match[1] not in _REFINEMENTS.get(inferred.kind, ()):
        return None
    kind, value = match[1], int(match[2])
    try:
        if TYPE_KINDS[kind] == ("length",):
            return DataType(kind, length=value)
        return DataType(kind, precision=value)
    except InvalidDefinitionError:  # e.g. a precision beyond 9: not ours to trust
        return None


def _unsupported(field: pa.Field, why: str = "") -> NotSupportedError:
    return NotSupportedError(
        f"column {field.name!r} has Arrow type {field.type}, which has no TrinityLake type"
        f"{why}; cast it to a supported type first (see trinity_dbapi.format.type_mapping)"
    )


#: Tests for the Arrow list types (the view ones are missing from older pyarrow).
_LIST_TESTS = tuple(
    getattr(pa.types, name)
    for name in (
        "is_list",
        "is_large_list",
        "is_fixed_size_list",
        "is_list_view",
        "is_large_list_view",
    )
    if hasattr(pa.types, name)
)


def _is_list(t: pa.DataType) -> bool:
    return any(test(t) for test in _LIST_TESTS)


class _Reader:
    """Turns Arrow fields into columns, handing out IDs to fields without one."""

    def __init__(self, fields: list[pa.Field]) -> None:
        used = [i for field in fields for i in _ids(field)]
        self._next_id = max(used, default=0) + 1

    def column(self, field: pa.Field) -> Column:
        metadata = _decoded(field.metadata)
        column_id = _metadata_id(metadata)
        if column_id is None:
            column_id, self._next_id = self._next_id, self._next_id + 1
        return Column(
            column_id,
            metadata.get(NAME_KEY, field.name),
            self.data_type(field),
            nullable=field.nullable,
            properties={
                k[len(PROPERTY_PREFIX) :]: v
                for k, v in metadata.items()
                if k.startswith(PROPERTY_PREFIX)
            },
            comment=metadata.get(COMMENT_KEY),
        )

    def data_type(self, field: pa.Field) -> DataType:
        inferred = self._infer(field)
        declared = _declared(_decoded(field.metadata).get(TYPE_KEY), inferred)
        return inferred if declared is None else declared

    def _infer(self, field: pa.Field) -> DataType:
        t = field.type
        exact = _EXACT_TYPES.get(t)
        if exact is not None:
            return exact
        for matches, infer in _INFERENCE:
            if matches(t):
                return infer(self, field)
        raise _unsupported(field)

    def _struct(self, field: pa.Field) -> DataType:
        return DataType.struct_of(*(self.column(child) for child in field.type))

    def _map(self, field: pa.Field) -> DataType:
        return DataType.map_of(
            self.column(field.type.key_field), self.column(field.type.item_field)
        )

    def _list(self, field: pa.Field) -> DataType:
        return DataType.list_of(self.column(field.type.value_field))

    def _dictionary(self, field: pa.Field) -> DataType:
        return self.data_type(field.with_type(field.type.value_type))


def _metadata_id(metadata: Mapping[str, str]) -> int | None:
    for key in (ID_KEY, PARQUET_FIELD_ID_KEY):
        text = metadata.get(key, "")
        if text.isdigit() and int(text) <= _UINT32_MAX:
            return int(text)
    return None


def _children(t: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(t):
        return list(t)
    if pa.types.is_map(t):
        return [t.key_field, t.item_field]
    if _is_list(t):
        return [t.value_field]
    if pa.types.is_dictionary(t):
        return _children(t.value_type)
    return []


def _ids(field: pa.Field) -> Iterator[int]:
    """Every column ID recorded in the metadata of ``field`` and its children."""
    column_id = _metadata_id(_decoded(field.metadata))
    if column_id is not None:
        yield column_id
    for child in _children(field.type):
        yield from _ids(child)


def _decimal(_: _Reader, field: pa.Field) -> DataType:
    t = field.type
    if not 1 <= t.precision <= MAX_DECIMAL_PRECISION or not 0 <= t.scale <= t.precision:
        raise _unsupported(
            field, f" (decimal precision must be 1..{MAX_DECIMAL_PRECISION}, scale 0..precision)"
        )
    return DataType.decimal(t.precision, t.scale)


def _time(_: _Reader, field: pa.Field) -> DataType:
    return DataType.time(_UNIT_PRECISION[field.type.unit])


def _timestamp(_: _Reader, field: pa.Field) -> DataType:
    precision = _UNIT_PRECISION[field.type.unit]
    if field.type.tz is None:
        return DataType.timestamp(precision)
    return DataType.timestamptz(precision)


#: Arrow type tests, in order, and how to build the TrinityLake type of a match.
#: Maps come before lists: a pyarrow map type is also a list type.
_INFERENCE: tuple[
    tuple[Callable[[pa.DataType], bool], Callable[[_Reader, pa.Field], DataType]], ...
] = (
    (pa.types.is_decimal, _decimal),
    (pa.types.is_time, _time),
    (pa.types.is_timestamp, _timestamp),
    (pa.types.is_fixed_size_binary, lambda _, field: DataType.fixed(field.type.byte_width)),
    (pa.types.is_struct, _Reader._struct),
    (pa.types.is_map, _Reader._map),
    (_is_list, _Reader._list),
    (pa.types.is_dictionary, _Reader._dictionary),
)


def data_type_from_field(field: pa.Field) -> DataType:
    """The TrinityLake type of an Arrow field (inverse of :func:`arrow_field`'s type).

    Nested columns without a recorded ID get new IDs after the largest one
    recorded in ``field``.

    Raises:
        NotSupportedError: an Arrow type without a TrinityLake type, naming the field.
    """
    return _Reader([field]).data_type(field)


def columns_from_schema(schema: pa.Schema) -> tuple[Column, ...]:
    """The TrinityLake columns of an Arrow schema (inverse of :func:`arrow_schema`).

    Raises:
        NotSupportedError: an Arrow type without a TrinityLake type, naming the field.
    """
    fields = list(schema)
    reader = _Reader(fields)
    return tuple(reader.column(field) for field in fields)
