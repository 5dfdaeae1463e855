"""TrinityLake column types in SQLAlchemy: DDL rendering and reflection.

Two directions, kept in one table each:

* :class:`TrinityTypeCompiler` renders SQLAlchemy types as the column types of
  the trinity dialect for ``CREATE TABLE`` (``Integer`` is ``INT4``,
  ``String(20)`` is ``VARCHAR(20)``, ``DateTime(timezone=True)`` is
  ``TIMESTAMPTZ(6)``, ``ARRAY(Integer)`` is ``LIST<INT4>``);
* :func:`sqlalchemy_type` maps a reflected TrinityLake type back to the
  SQLAlchemy type that renders as the same TrinityLake type, so a table
  reflected and created again is identical.

Types with no TrinityLake equivalent (``JSON``, ``Interval``) raise
``CompileError`` naming the type, rather than silently becoming text.
:class:`TypeDialect` is the dialect's type side (its name, type compiler and
``colspecs``), which the dialect extends.

The type compiler sits here rather than beside the statement compilers
(:mod:`~trinity_dbapi.sqlalchemy.compiler`) because its inverse,
:func:`sqlalchemy_type`, must round-trip with it, and a STRUCT or MAP bind
renders its own type with it.

Imports from sqlalchemy/: compat.
"""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any

from sqlalchemy import exc
from sqlalchemy import types as sqltypes
from sqlalchemy.engine import default
from sqlalchemy.sql import compiler

from trinity_dbapi.format.definitions import DataType
from trinity_dbapi.format.sql_text import quote_identifier
from trinity_dbapi.sql.types_sql import UNBOUNDED_LENGTH
from trinity_dbapi.sqlalchemy.compat import DOUBLE, type_compiler

#: ``Numeric()`` without a precision: the widest decimal with room for fractions.
DEFAULT_NUMERIC = (38, 10)
#: Fractional second digits of ``Time`` and ``DateTime`` (microseconds, Python's precision).
TIME_PRECISION = 6


class _SQLText(sqltypes.UserDefinedType):  # type: ignore[type-arg]
    """A type spelled as given, for casts in bind expressions."""

    cache_ok = True

    def __init__(self, text: str) -> None:
        self.text = text

    def get_col_spec(self, **kw: Any) -> str:
        return self.text


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)  # DuckDB casts the text exactly; a JSON number would not be
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(
            "binary values inside STRUCT or MAP parameters cannot be bound; insert such "
            "rows with Cursor.ingest or DataFrame.to_sql(method=arrow_insert)"
        )
    return value


class _NestedValue(sqltypes.TypeEngine[dict]):  # type: ignore[type-arg]
    """Binds a dict as JSON text that DuckDB casts to the column's nested type.

    The driver binds scalars and lists only (docs/dbapi.md); DuckDB's cast
    from JSON builds the STRUCT or MAP with the declared member types.
    """

    def bind_processor(self, dialect: Any) -> Any:
        def process(value: Any) -> Any:
            return None if value is None else json.dumps(_jsonable(value))

        return process

    def bind_expression(self, bindvalue: Any) -> Any:
        from sqlalchemy import cast

        return cast(cast(bindvalue, _SQLText("JSON")), _SQLText(_duckdb_text(self)))

    @property
    def python_type(self) -> type:
        return dict


def _duckdb_text(type_: Any) -> str:
    # SQLAlchemy asks for a bind expression with no dialect at hand: the type
    # side of the trinity dialect (TypeDialect, below) renders the type.
    from trinity_dbapi.format.type_mapping import duckdb_type
    from trinity_dbapi.sql.dialect import parse_type_sql

    return duckdb_type(parse_type_sql(type_compiler(TypeDialect()).process(type_)))


class STRUCT(_NestedValue):
    """A TrinityLake ``STRUCT<name: type, ...>``; values are Python dicts.

    Args:
        fields: ``(name, SQLAlchemy type)`` pairs, in order.
    """

    __visit_name__ = "STRUCT"

    def __init__(self, *fields: tuple[str, Any]) -> None:
        self.fields = [(name, sqltypes.to_instance(type_)) for name, type_ in fields]

    def adapt(self, cls: Any, **kw: Any) -> Any:
        # SQLAlchemy copies types by their named __init__ arguments; fields are positional.
        return cls(*self.fields) if issubclass(cls, STRUCT) else super().adapt(cls, **kw)


class MAP(_NestedValue):
    """A TrinityLake ``MAP<key, value>``; values are Python dicts (keys never null)."""

    __visit_name__ = "MAP"

    def __init__(self, key_type: Any, value_type: Any) -> None:
        self.key_type = sqltypes.to_instance(key_type)
        self.value_type = sqltypes.to_instance(value_type)

    def adapt(self, cls: Any, **kw: Any) -> Any:
        if issubclass(cls, MAP):
            return cls(self.key_type, self.value_type)
        return super().adapt(cls, **kw)

    def result_processor(self, dialect: Any, coltype: Any) -> Any:
        # The driver reads a MAP as a list of (key, value) pairs.
        def process(value: Any) -> Any:
            return None if value is None else dict(value)

        return process


class FIXED(sqltypes.BINARY):
    """A TrinityLake ``FIXED(n)``: binary values of exactly ``n`` bytes."""

    __visit_name__ = "FIXED"


class TrinityTypeCompiler(compiler.GenericTypeCompiler):
    """SQLAlchemy types as trinity-dialect column types (``docs/sql.md``, Types)."""

    def visit_BOOLEAN(self, type_: Any, **kw: Any) -> str:
        return "BOOLEAN"

    def visit_SMALLINT(self, type_: Any, **kw: Any) -> str:
        return "INT2"

    def visit_INTEGER(self, type_: Any, **kw: Any) -> str:
        return "INT4"

    def visit_BIGINT(self, type_: Any, **kw: Any) -> str:
        return "INT8"

    def visit_REAL(self, type_: Any, **kw: Any) -> str:
        return "FLOAT4"

    def visit_FLOAT(self, type_: Any, **kw: Any) -> str:
        # FLOAT(p) with p <= 24 binary digits fits single precision (SQL standard).
        precision = getattr(type_, "precision", None)
        return "FLOAT4" if precision is not None and precision <= 24 else "FLOAT8"

    def visit_DOUBLE(self, type_: Any, **kw: Any) -> str:
        return "FLOAT8"

    visit_DOUBLE_PRECISION = visit_DOUBLE

    def visit_NUMERIC(self, type_: Any, **kw: Any) -> str:
        if type_.precision is None:
            return "DECIMAL({}, {})".format(*DEFAULT_NUMERIC)
        scale = type_.scale if type_.scale is not None else 0
        return f"DECIMAL({type_.precision}, {scale})"

    visit_DECIMAL = visit_NUMERIC

    def visit_CHAR(self, type_: Any, **kw: Any) -> str:
        return f"CHAR({type_.length})" if type_.length else "CHAR"

    visit_NCHAR = visit_CHAR

    def visit_VARCHAR(self, type_: Any, **kw: Any) -> str:
        return f"VARCHAR({type_.length})" if type_.length else "VARCHAR"

    visit_NVARCHAR = visit_VARCHAR
    visit_TEXT = visit_VARCHAR
    visit_CLOB = visit_VARCHAR

    def visit_DATE(self, type_: Any, **kw: Any) -> str:
        return "DATE"

    def visit_TIME(self, type_: Any, **kw: Any) -> str:
        return f"{'TIMETZ' if type_.timezone else 'TIME'}({TIME_PRECISION})"

    def visit_TIMESTAMP(self, type_: Any, **kw: Any) -> str:
        return f"{'TIMESTAMPTZ' if type_.timezone else 'TIMESTAMP'}({TIME_PRECISION})"

    visit_DATETIME = visit_TIMESTAMP

    def visit_BINARY(self, type_: Any, **kw: Any) -> str:
        # SQL's BINARY(n) pads to n bytes; TrinityLake's BINARY(n) holds at
        # most n, which keeps shorter values intact (FIXED(n) would refuse them).
        return f"BINARY({type_.length})" if type_.length else "BINARY"

    visit_VARBINARY = visit_BINARY

    def visit_BLOB(self, type_: Any, **kw: Any) -> str:
        return "BINARY"

    def visit_large_binary(self, type_: Any, **kw: Any) -> str:
        return "BINARY"

    def visit_ARRAY(self, type_: Any, **kw: Any) -> str:
        text = self.process(type_.item_type, **kw)
        for _ in range(type_.dimensions or 1):
            text = f"LIST<{text}>"
        return text

    def visit_FIXED(self, type_: Any, **kw: Any) -> str:
        return f"FIXED({type_.length})"

    def visit_STRUCT(self, type_: STRUCT, **kw: Any) -> str:
        fields = ", ".join(
            f"{_field_name(name)}: {self.process(member, **kw)}" for name, member in type_.fields
        )
        return f"STRUCT<{fields}>"

    def visit_MAP(self, type_: MAP, **kw: Any) -> str:
        return f"MAP<{self.process(type_.key_type, **kw)}, {self.process(type_.value_type, **kw)}>"

    def visit_JSON(self, type_: Any, **kw: Any) -> str:
        raise exc.CompileError(
            "TrinityLake has no JSON column type: store JSON text in a String column "
            "(VARCHAR), or its structure in STRUCT, MAP and ARRAY columns"
        )

    def visit_INTERVAL(self, type_: Any, **kw: Any) -> str:
        raise exc.CompileError(
            "TrinityLake has no INTERVAL column type: store a duration as a number "
            "(e.g. microseconds in a BigInteger column)"
        )

    visit_interval = visit_INTERVAL


def _field_name(name: str) -> str:
    plain = name.isidentifier() and name.lower() == name and name.isascii()
    return name if plain else quote_identifier(name)


_PLAIN: dict[str, Any] = {
    "boolean": sqltypes.BOOLEAN,
    "int2": sqltypes.SMALLINT,
    "int4": sqltypes.INTEGER,
    "int8": sqltypes.BIGINT,
    "float4": sqltypes.REAL,
    "float8": DOUBLE,
    "date": sqltypes.DATE,
}


def sqlalchemy_type(data_type: DataType) -> sqltypes.TypeEngine[Any]:
    """The SQLAlchemy type of a TrinityLake type (the inverse of the type compiler)."""
    kind = data_type.kind
    if kind in _PLAIN:
        return _PLAIN[kind]()  # type: ignore[no-any-return]
    if kind == "decimal":
        return sqltypes.DECIMAL(data_type.precision, data_type.scale)
    if kind in ("char", "varchar"):
        length = None if data_type.length == UNBOUNDED_LENGTH else data_type.length
        return sqltypes.CHAR(length) if kind == "char" else sqltypes.VARCHAR(length)
    if kind in ("time", "timetz"):
        return sqltypes.TIME(timezone=kind == "timetz")
    if kind in ("timestamp", "timestamptz"):
        return sqltypes.TIMESTAMP(timezone=kind == "timestamptz")
    if kind == "fixed":
        return FIXED(data_type.length)
    if kind == "binary":
        if data_type.length == UNBOUNDED_LENGTH:
            return sqltypes.LargeBinary()
        return sqltypes.VARBINARY(data_type.length)
    if kind == "list":
        assert data_type.element is not None
        return sqltypes.ARRAY(sqlalchemy_type(data_type.element.type))
    if kind == "map":
        assert data_type.key is not None and data_type.value is not None
        return MAP(sqlalchemy_type(data_type.key.type), sqlalchemy_type(data_type.value.type))
    if kind == "struct":
        return STRUCT(*((f.name, sqlalchemy_type(f.type)) for f in data_type.fields))
    raise exc.CompileError(f"no SQLAlchemy type for the TrinityLake type {kind!r}")


# -- literals --------------------------------------------------------------------------
# SQLAlchemy renders date and time literals as plain strings ('2024-01-01');
# typed literals keep their type wherever DuckDB cannot infer it (an INSERT
# ... SELECT of literals, a UNION), so they are written with their keyword.


class _Date(sqltypes.Date):
    def literal_processor(self, dialect: Any) -> Any:
        return lambda value: f"DATE '{value.isoformat()}'"


class _DateTime(sqltypes.DateTime):
    def literal_processor(self, dialect: Any) -> Any:
        def process(value: Any) -> str:
            kind = "TIMESTAMPTZ" if value.tzinfo is not None else "TIMESTAMP"
            return f"{kind} '{value.isoformat(sep=' ')}'"

        return process


class _Time(sqltypes.Time):
    def literal_processor(self, dialect: Any) -> Any:
        def process(value: Any) -> str:
            kind = "TIMETZ" if value.tzinfo is not None else "TIME"
            return f"{kind} '{value.isoformat()}'"

        return process


#: Generic types replaced by the dialect's versions (SQLAlchemy's ``colspecs``).
COLSPECS: dict[Any, Any] = {
    sqltypes.Date: _Date,
    sqltypes.DateTime: _DateTime,
    sqltypes.Time: _Time,
}


class TypeDialect(default.DefaultDialect):
    """The type side of the trinity dialect: its name, type compiler, colspecs and type flags.

    :class:`~trinity_dbapi.sqlalchemy.dialect.TrinityDialect` extends it. A
    STRUCT or MAP bind renders its cast through it, because SQLAlchemy asks
    for a bind expression without the statement's dialect; what the type
    compiler reads of a dialect is all here, so both render a type alike.
    """

    name = "trinity"
    type_compiler_cls = TrinityTypeCompiler
    # SQLAlchemy 1.4 reads the class here; 2.x takes it too (as a legacy name).
    type_compiler = TrinityTypeCompiler
    colspecs = COLSPECS
    supports_native_boolean = True
    supports_native_decimal = True
    supports_native_enum = False
    supports_native_uuid = False
