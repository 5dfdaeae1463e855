"""Checking and normalizing query parameters (paramstyle ``qmark``).

A statement's parameters are a sequence (list or tuple) whose items bind, in
order, to its ``?`` placeholders. Mappings are refused: the paramstyle is
``qmark``, not ``named``. Each value must have one of the accepted types of
:data:`ACCEPTED`: anything else is refused up front with a
:class:`~trinity_dbapi.errors.ProgrammingError` naming the parameter, rather
than failing later, deep inside the engine, or being bound as something
unexpected.

Normalization:
    - ``bytearray`` and ``memoryview`` become ``bytes``;
    - subclasses of ``int``, ``float`` and ``str`` (``IntEnum`` members,
      ``numpy.float64``...) become the base type; ``bool`` stays ``bool``;
    - nested lists and tuples keep their type, with their items normalized;
    - ``numpy.datetime64`` becomes a ``datetime.date`` (units of a day or
      more) or a ``datetime.datetime`` (finer units), and stays a
      ``numpy.datetime64`` of unit ``ns`` when it has digits below a
      microsecond, which the engine binds as a nanosecond timestamp;
      ``pandas.NaT`` and ``numpy.datetime64('NaT')`` become None (NULL);
    - every other accepted value is returned as is (a ``pandas.Timestamp``
      keeps its nanoseconds: the engine binds one that has them as a
      nanosecond timestamp, see docs/dbapi.md).

Decisions:
    - A value must reach the engine exactly (docs/datasets.md, "Converting
      values"). Integers may have up to 38 digits (``-(10**38 - 1)`` to
      ``10**38 - 1``, what ``DECIMAL(38, 0)``, the widest column, holds):
      DuckDB binds larger ones as ``HUGEINT`` / ``UHUGEINT``, which reach
      Arrow as ``decimal128(38, 0)``, wrapped to a negative number from
      ``2**127`` up. A ``Decimal`` is bound as DuckDB's ``DECIMAL(38, s)``
      when its digits fit (trailing zeros are dropped to make them fit, the
      value is the same); DuckDB would bind a longer one as a ``DOUBLE``,
      rounding it. A value beyond either raises
      :class:`~trinity_dbapi.errors.DataError`, the PEP 249 class for "numeric
      value out of range". A ``Decimal`` NaN or infinity is the ``float`` of
      the same meaning (DuckDB has no decimal NaN); a signalling NaN is
      refused. Storing a value into a column is checked by the one conversion
      rule when the statement runs.
    - Floats may be NaN or infinite (DuckDB's ``DOUBLE`` holds them).
    - A list or tuple binds as a SQL ``LIST``; nested lists make lists of
      lists. There is no way to bind a ``STRUCT`` or ``MAP`` (dicts are
      refused): build them in SQL (``{'a': ?}``, ``MAP([?], [?])``).

Imports from dbapi/: nothing.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from trinity_dbapi.errors import DataError, ProgrammingError

__all__ = [
    "ACCEPTED",
    "MAX_DIGITS",
    "MAX_INT",
    "MIN_INT",
    "check_params",
    "check_seq_of_params",
]

#: Most digits of a decimal or an integer parameter (DuckDB's ``DECIMAL(38, s)``).
MAX_DIGITS = 38
#: Smallest integer a parameter may hold (38 digits).
MIN_INT = -(10**MAX_DIGITS - 1)
#: Largest integer a parameter may hold (38 digits).
MAX_INT = 10**MAX_DIGITS - 1

#: Human-readable list of the accepted parameter types, used in error messages.
ACCEPTED = (
    "None, bool, int, float, decimal.Decimal, str, bytes, bytearray, memoryview, "
    "datetime.date, datetime.time, datetime.datetime, numpy.datetime64, or a list or tuple "
    "of these"
)


def _int(value: Any) -> int:
    return int(value)


def _float(value: Any) -> float:
    return float(value)


def _decimal(value: decimal.Decimal) -> decimal.Decimal | float | None:
    """The decimal as DuckDB binds it exactly, a float for NaN and infinities; None: cannot."""
    if value.is_snan():
        return None
    if not value.is_finite():
        return float(value)
    if _fits(value):
        return value
    if value.is_zero():
        return decimal.Decimal(0)
    # The same value with fewer digits: trailing zeros dropped, no exponent
    # (with enough precision that nothing is rounded: the default is 28 digits).
    compact = value.normalize(context=_WIDE)
    exponent = compact.as_tuple().exponent
    assert isinstance(exponent, int)  # finite
    if exponent > 0:
        if not _fits(compact):  # quantize would raise past _WIDE's digits (1E+400)
            return None
        compact = compact.quantize(decimal.Decimal(1), context=_WIDE)
    return compact if compact == value and _fits(compact) else None


#: Enough precision for every decimal that can fit DuckDB's DECIMAL(38, s).
_WIDE = decimal.Context(prec=2 * MAX_DIGITS + 2)


def _fits(value: decimal.Decimal) -> bool:
    """Whether DuckDB binds the finite ``value`` as a DECIMAL (it takes a DOUBLE otherwise)."""
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # finite
    if exponent >= 0:
        precision = len(digits) + exponent
    elif len(digits) >= -exponent:
        precision = len(digits)  # 0.111: DECIMAL(3, 3)
    else:
        # Fewer digits than the scale: DuckDB counts a leading zero (1E-37 is
        # DECIMAL(38, 37), 1E-38 a DOUBLE), so 9.9E-19 written with 38
        # decimal places would be a DOUBLE, and is bound normalized instead.
        precision = 1 - exponent
    return precision <= MAX_DIGITS


def _str(value: Any) -> str:
    return str.__str__(value)


def _same(value: Any) -> Any:
    return value


def _datetime(value: datetime.datetime) -> datetime.datetime | None:
    # pandas' NaT is a datetime subclass standing for a missing value.
    return None if type(value).__name__ == "NaTType" else value


def _is_datetime64(value: object) -> bool:
    kind = type(value)
    return kind.__name__ == "datetime64" and kind.__module__ == "numpy"


def _datetime64(value: Any, described: str) -> Any:
    """A ``numpy.datetime64`` as the value of the same meaning (the module docstring)."""
    import numpy as np

    if np.isnat(value):
        return None
    if np.datetime_data(value.dtype)[0] in ("Y", "M", "W", "D"):
        whole, kind = value.astype("datetime64[D]"), "date"
    else:
        whole, kind = value.astype("datetime64[us]"), "datetime"
        if whole != value:  # digits below a microsecond: kept, to the nanosecond
            nanos = value.astype("datetime64[ns]")
            if nanos != value:
                raise DataError(
                    f"{described} is the numpy.datetime64 {value}, which has digits below a "
                    "nanosecond: no column holds them (TIMESTAMP(9) holds nanoseconds); round "
                    "it to datetime64[ns] first"
                )
            return nanos
    converted = whole.astype(object)
    if not isinstance(converted, datetime.date):  # numpy gives an int past datetime's range
        raise DataError(
            f"{described} is the numpy.datetime64 {value}, outside years 1 to 9999: no column "
            "stores it, as Python's datetime cannot hold it (docs/dbapi.md); give a "
            f"{kind} in that range"
        )
    return converted


#: Accepted scalar types and how a value of each is normalized; looked up by
#: exact type first, then by ``isinstance`` in this order (``bool`` before
#: ``int``, ``datetime`` before ``date``).
_SCALARS: dict[type, Callable[[Any], Any]] = {
    bool: bool,
    int: _int,
    float: _float,
    decimal.Decimal: _decimal,
    str: _str,
    bytes: bytes,
    bytearray: bytes,
    memoryview: bytes,
    datetime.datetime: _datetime,
    datetime.date: _same,
    datetime.time: _same,
}

_CONTAINERS = (list, tuple)


def _describe(position: int, path: tuple[int, ...]) -> str:
    if not path:
        return f"parameter {position}"
    return f"parameter {position} at " + "".join(f"[{index}]" for index in path)


def _type_name(kind: type) -> str:
    return (
        kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    )


def _converter(value: object) -> Callable[[Any], Any] | None:
    """How to normalize scalar ``value``; None when its type is not accepted."""
    convert = _SCALARS.get(type(value))
    if convert is None:
        convert = next((fn for base, fn in _SCALARS.items() if isinstance(value, base)), None)
    return convert


def _normalize(
    value: Any, position: int, path: tuple[int, ...], open_containers: set[int], where: str
) -> Any:
    """The normalized value, or an error naming it by position and path."""
    if value is None:
        return None
    if isinstance(value, _CONTAINERS):
        return _normalize_items(value, position, path, open_containers, where)
    convert = _converter(value)
    if convert is None:
        if _is_datetime64(value):
            return _datetime64(value, f"{where}{_describe(position, path)}")
        raise ProgrammingError(
            f"{where}{_describe(position, path)} has unsupported type "
            f"{_type_name(type(value))}; accepted types are {ACCEPTED}"
        )
    if convert is _int and not MIN_INT <= value <= MAX_INT:
        shown = str(int(value)) if value.bit_length() <= 256 else f"of {value.bit_length()} bits"
        raise DataError(
            f"{where}{_describe(position, path)} is the integer {shown}, which has more than "
            f"{MAX_DIGITS} digits: no column holds it (DECIMAL(38, 0) is the widest) and the "
            "engine would not get it exactly; pass it as a str"
        )
    converted = convert(value)
    if converted is None and convert is _decimal:
        shown = str(value) if len(str(value)) <= 80 else str(value)[:77] + "..."
        raise DataError(
            f"{where}{_describe(position, path)} is the decimal {shown}, which needs more than "
            f"{MAX_DIGITS} digits (or is a signalling NaN): the engine would round it to a "
            "float; round it to 38 digits yourself (Decimal.quantize), or pass a float"
        )
    return converted


def _normalize_items(
    value: list[Any] | tuple[Any, ...],
    position: int,
    path: tuple[int, ...],
    open_containers: set[int],
    where: str,
) -> list[Any] | tuple[Any, ...]:
    """A list or tuple with its items normalized; a list holding itself is refused."""
    if id(value) in open_containers:
        raise ProgrammingError(
            f"{where}{_describe(position, path)} contains itself; nested lists must be finite"
        )
    open_containers.add(id(value))
    try:
        items = [
            _normalize(item, position, (*path, index), open_containers, where)
            for index, item in enumerate(value)
        ]
    finally:
        open_containers.discard(id(value))
    return items if isinstance(value, list) else tuple(items)


def _check(params: object, where: str) -> tuple[object, ...]:
    if isinstance(params, Mapping):
        raise ProgrammingError(
            f"{where}parameters are a {type(params).__name__}, but paramstyle is qmark: "
            "write ? placeholders and pass the values as a list or tuple, in order"
        )
    if isinstance(params, (str, bytes, bytearray, memoryview)) or not isinstance(params, Sequence):
        raise ProgrammingError(
            f"{where}parameters must be a list or tuple of values (paramstyle is qmark), "
            f"not {type(params).__name__}"
        )
    open_containers: set[int] = set()
    return tuple(
        _normalize(value, position, (), open_containers, where)
        for position, value in enumerate(params, start=1)
    )


def check_params(params: object) -> tuple[object, ...]:
    """Check the parameters of one statement and return them normalized.

    Args:
        params: None (no parameters) or a sequence of values, one per ``?``.

    Returns:
        The values as a tuple, normalized as described in the module docstring.

    Raises:
        ProgrammingError: ``params`` is a mapping, a str or bytes, or not a
            sequence; or a value has a type that is not accepted (the message
            names its 1-based position, its type and the accepted types).
        DataError: an integer is outside ``MIN_INT..MAX_INT``, or a decimal
            needs more than ``MAX_DIGITS`` digits.
    """
    if params is None:
        return ()
    return _check(params, "")


def check_seq_of_params(seq_of_params: object) -> list[Sequence[object]]:
    """Check the parameter sets of ``executemany`` and return them normalized.

    Args:
        seq_of_params: an iterable (a sequence or an iterator) of parameter
            sequences; it may be empty.

    Returns:
        The parameter sets in order: each as given (a tuple or a list) when
        all of them hold only values of plain types, else each normalized
        to a tuple as :func:`check_params` does.

    Raises:
        ProgrammingError: ``seq_of_params`` is a str, bytes, mapping or not
            iterable; or a parameter set is refused by :func:`check_params`
            (the message starts with ``parameter set N:``, 1-based; None is not
            a parameter set).
        DataError: an integer is out of range.
    """
    if isinstance(seq_of_params, (str, bytes, bytearray, memoryview, Mapping)) or not isinstance(
        seq_of_params, Iterable
    ):
        raise ProgrammingError(
            "executemany takes a sequence or iterator of parameter sequences, "
            f"not {type(seq_of_params).__name__}"
        )
    sets = seq_of_params if isinstance(seq_of_params, list) else list(seq_of_params)
    plain = _plain_sets(sets)
    if plain is not None:
        return plain
    return [
        _check(params, f"parameter set {number}: ") for number, params in enumerate(sets, start=1)
    ]


#: Types whose values need no normalization (exact types: subclasses take the slow path).
_PLAIN_TYPES = frozenset(
    {
        type(None),
        bool,
        int,
        float,
        str,
        bytes,
        decimal.Decimal,
        datetime.datetime,
        datetime.date,
        datetime.time,
    }
)


def _decimals_fit(values: list[decimal.Decimal]) -> bool:
    """Whether every decimal is finite and binds as it is (:func:`_fits`, inlined).

    The loop of a bulk insert: one ``as_tuple`` per value, nothing else.
    """
    for value in values:
        _, digits, exponent = value.as_tuple()
        if type(exponent) is not int:
            return False
        width = len(digits)
        if exponent >= 0:
            precision = width + exponent
        elif width >= -exponent:
            precision = width
        else:  # fewer digits than the scale: DuckDB counts a leading zero
            precision = 1 - exponent
        if precision > MAX_DIGITS:
            return False
    return True


def _plain_sets(sets: list[Any]) -> list[Sequence[object]] | None:
    """The parameter sets as given when every value is of a plain type; else None.

    A bulk insert binds millions of values: checking them a column at a time
    with C builtins (``zip``, ``map``, ``min``, ``max``) is an order of
    magnitude faster than normalizing each one, and any set that needs more
    (a subclass, a container, a bad value, a mapping, sets of different
    lengths) goes through the value-by-value check, which names the culprit.
    """
    if not set(map(type, sets)) <= {tuple, list}:
        return None
    widths = set(map(len, sets))
    if len(widths) > 1:
        return None
    # A list comprehension per column: zip(*sets) would make an iterator per
    # set (a million objects for the garbage collector to walk).
    for index in range(widths.pop() if widths else 0):
        column = [params[index] for params in sets]
        kinds = set(map(type, column))
        if not kinds <= _PLAIN_TYPES:
            return None
        if int in kinds:
            ints = column if len(kinds) == 1 else [v for v in column if type(v) is int]
            if min(ints) < MIN_INT or max(ints) > MAX_INT:
                return None
        if decimal.Decimal in kinds and not _decimals_fit(
            [value for value in column if type(value) is decimal.Decimal]
        ):
            return None
    # Lists stay lists: a tuple per set would cost more than the whole check.
    return sets
