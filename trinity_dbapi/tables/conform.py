"""Make incoming Arrow data fit a table's schema, or say exactly why it cannot.

:func:`conform` matches columns by name, fills missing nullable columns with
NULLs, converts every column to its declared Arrow type by the one conversion
rule of :mod:`~trinity_dbapi.tables.convert` (a value is stored only if the
type holds it exactly) and checks what
Arrow types cannot express: NOT NULL, nested members included, the length
of ``char(n)``, ``varchar(n)`` and ``binary(n)`` values (read from the
``trinity.type`` field metadata), and the range of dates, times and
timestamps (:mod:`~trinity_dbapi.tables.temporal`: years 1 to 9999, what
Python's ``datetime`` holds). The range is checked even where a value
already has the column's type: DuckDB computes such values
(``DATE '9999-12-31' + 1``), and a value stored is one every reader must be
able to fetch.

Errors: an unknown or repeated input column is a
:class:`~trinity_dbapi.errors.ProgrammingError`; a NULL in a NOT NULL column an
:class:`~trinity_dbapi.errors.IntegrityError`; a value that does not fit its
type a :class:`~trinity_dbapi.errors.DataError`. Each names the column
(``outer.inner`` for nested members).

Imports from tables/: convert, temporal.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from trinity_dbapi.errors import DataError, IntegrityError, ProgrammingError
from trinity_dbapi.format.definitions import DataType
from trinity_dbapi.format.definitions.types import UNBOUNDED_LENGTH
from trinity_dbapi.format.type_mapping import data_type_from_field
from trinity_dbapi.tables import temporal
from trinity_dbapi.tables.convert import convert

__all__ = ["Conformer", "null_column", "relaxed", "safe_cast"]

#: Length functions of the kinds whose values have a declared maximum length.
_LENGTHS: dict[str, tuple[Callable[[pa.Array], pa.Array], str]] = {
    "char": (pc.utf8_length, "characters"),
    "varchar": (pc.utf8_length, "characters"),
    "binary": (pc.binary_length, "bytes"),
}


class Conformer:
    """Conforms tables to one schema; built once per write, used per batch.

    Args:
        schema: the table's Arrow schema (``type_mapping.arrow_schema``).
    """

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self._types = [data_type_from_field(field) for field in schema]

    def __call__(self, data: pa.Table) -> pa.Table:
        """Return ``data`` as a table of exactly ``self.schema``.

        Raises:
            ProgrammingError: a column of ``data`` is not in the schema, or repeats.
            IntegrityError: a NULL in a NOT NULL column or member.
            DataError: a value that does not fit its column's type.
        """
        names = data.column_names
        if len(set(names)) != len(names):
            raise ProgrammingError(f"the data names a column twice: {names}")
        unknown = [name for name in names if self.schema.get_field_index(name) < 0]
        if unknown:
            raise ProgrammingError(
                f"the data has columns {unknown} that the table does not have; the table's "
                f"columns are {self.schema.names}"
            )
        columns = []
        for field, declared in zip(self.schema, self._types, strict=True):
            if field.name in names:
                column = _cast(
                    data.column(field.name), relaxed(field.type), field.name, declared.to_sql()
                )
            elif field.nullable:
                column = null_column(data.num_rows, field.type)
            else:
                raise IntegrityError(
                    f"column {field.name!r} is NOT NULL but the data does not provide it"
                )
            for chunk in column.chunks:
                _check(chunk, field.nullable, declared, field.name)
            if column.type != field.type:
                column = pa.chunked_array(
                    [_tighten(c, field.type) for c in column.chunks], field.type
                )
            columns.append(column)
        return pa.Table.from_arrays(columns, schema=self.schema)


def relaxed(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested member nullable (map keys stay NOT NULL, as Arrow requires).

    Data is cast to this first, so NOT NULL members are checked by :func:`_check`
    (an IntegrityError naming the member) rather than failing inside Arrow's cast.
    """
    if pa.types.is_struct(t):
        return pa.struct([_loose(field) for field in t])
    if pa.types.is_map(t):
        key = t.key_field.with_type(relaxed(t.key_field.type))
        return pa.map_(key, _loose(t.item_field))
    if pa.types.is_list(t):
        return pa.list_(_loose(t.value_field))
    return t


def _loose(field: pa.Field) -> pa.Field:
    return field.with_type(relaxed(field.type)).with_nullable(True)


def _zero(t: pa.DataType) -> pa.Array:
    """A one-element array holding a valid placeholder value of ``t``."""
    if pa.types.is_struct(t):
        return pa.StructArray.from_arrays([_zero(f.type) for f in t], fields=list(t))
    if pa.types.is_map(t) or pa.types.is_list(t):
        return pa.array([[]], t)
    if pa.types.is_fixed_size_binary(t):
        return pa.array([bytes(t.byte_width)], t)
    placeholders = (
        (pa.types.is_boolean, False),
        (pa.types.is_string, ""),
        (pa.types.is_binary, b""),
        (pa.types.is_decimal, decimal.Decimal(0)),
    )
    return pa.array([next((v for test, v in placeholders if test(t)), 0)], t)


def _tighten(array: pa.Array, strict: pa.DataType) -> pa.Array:
    """``array`` (of the :func:`relaxed` type) as ``strict``, after :func:`_check` passed.

    Arrow's cast and the Parquet writer refuse NULLs in a NOT NULL member even
    where the parent is NULL, so those are replaced by a placeholder value
    (invisible: the parent is NULL).
    """
    mask = array.is_null() if array.null_count else None
    if pa.types.is_struct(strict):
        children = [_member(array.field(i), field) for i, field in enumerate(strict)]
        return pa.StructArray.from_arrays(children, fields=list(strict), mask=mask)
    if not (pa.types.is_map(strict) or pa.types.is_list(strict)):
        return array
    # Rebase the offsets on this slice: from_arrays takes no sliced offsets with a mask.
    start, end = array.offsets[0].as_py(), array.offsets[-1].as_py()
    offsets = pc.subtract(array.offsets, pa.scalar(start, array.offsets.type))
    if pa.types.is_map(strict):
        keys = _member(array.keys.slice(start, end - start), strict.key_field)
        items = _member(array.items.slice(start, end - start), strict.item_field)
        return pa.MapArray.from_arrays(offsets, keys, items, type=strict, mask=mask)
    values = _member(array.values.slice(start, end - start), strict.value_field)
    return pa.ListArray.from_arrays(offsets, values, type=strict, mask=mask)


def _member(child: pa.Array, field: pa.Field) -> pa.Array:
    if not field.nullable and child.null_count:
        child = pc.fill_null(child, _zero(child.type)[0])
    return _tighten(child, field.type)


def null_column(rows: int, t: pa.DataType) -> pa.ChunkedArray:
    """``rows`` NULLs of type ``t`` that Arrow casts and the Parquet writer accept."""
    return pa.chunked_array([_tighten(pa.nulls(rows, relaxed(t)), t)], t)


def safe_cast(values: Any, type_: pa.DataType) -> Any:
    """Cast an Arrow array, chunked array or scalar to ``type_``, refusing any loss.

    Raises:
        pyarrow.ArrowInvalid: a value does not fit ``type_``.
        pyarrow.ArrowNotImplementedError: Arrow has no such cast.
    """
    if pa.types.is_decimal(type_) and pa.types.is_integer(values.type):
        # Arrow sizes integer -> decimal casts for the integer type's whole
        # range; go through the widest decimal so values that fit succeed.
        values = values.cast(pa.decimal256(76, type_.scale))
    return values.cast(type_, safe=True)


def _cast(column: pa.ChunkedArray, type_: pa.DataType, name: str, sql: str) -> pa.ChunkedArray:
    if column.type == type_ and not pa.types.is_decimal(type_):
        return column
    # Decimals are checked even when the type matches: DuckDB exports HUGEINT
    # results as decimal128(38, 0) holding values of up to 39 digits.
    return convert(column, type_, name, type_name=sql)


def _check(array: pa.Array, nullable: bool, declared: DataType, name: str) -> None:
    """Check NOT NULL and lengths of ``array`` and, recursively, of its members."""
    if not nullable and array.null_count:
        raise IntegrityError(
            f"column {name!r} is NOT NULL but {array.null_count} value(s) are NULL"
        )
    length = _LENGTHS.get(declared.kind)
    if length is not None and declared.length not in (None, UNBOUNDED_LENGTH):
        longest = pc.max(length[0](array)).as_py()
        if longest is not None and longest > declared.length:
            raise DataError(
                f"a value of column {name!r} is {longest} {length[1]} long; its type "
                f"{declared.to_sql()} allows at most {declared.length}"
            )
    what = temporal.kind_of(array.type)
    if what is not None:
        beyond = temporal.outside(array)
        if beyond is not None:
            shown = temporal.text(array, pc.index(beyond, True).as_py())
            raise DataError(
                f"column {name!r} cannot hold the {what} {shown}: a table stores only the "
                f"{what}s Python can hand back ({temporal.rule(what)}), so that every row can "
                "be fetched; give a value in that range (NULL for an unknown one), or keep such "
                "values as text in a VARCHAR column"
            )
    if declared.kind == "struct":
        flat = array.flatten()  # members NULL where the struct is NULL
        for child, column in zip(flat, declared.fields, strict=True):
            if not column.nullable and child.null_count > array.null_count:
                raise IntegrityError(
                    f"member {name}.{column.name} is NOT NULL but a non-NULL {name!r} has it NULL"
                )
            _check(child, True, column.type, f"{name}.{column.name}")
    elif declared.kind == "list":
        assert declared.element is not None  # validated by DataType
        element = declared.element
        _check(array.flatten(), element.nullable, element.type, f"{name}.{element.name}")
    elif declared.kind == "map":
        assert declared.key is not None and declared.value is not None  # validated
        # MapArray.keys/items ignore slicing: cut them to this slice's offsets.
        start, end = array.offsets[0].as_py(), array.offsets[-1].as_py()
        for child, column in ((array.keys, declared.key), (array.items, declared.value)):
            part = child.slice(start, end - start)
            _check(part, column.nullable, column.type, f"{name}.{column.name}")
