"""The conversion rule for ``float4`` and ``float8`` columns (docs/datasets.md, "Converting values").

:mod:`~trinity_dbapi.tables.convert` hands every value bound for a floating
column here. What a value may become depends on what kind of number it is:

* **A binary float** (a Python ``float``, an Arrow or DuckDB ``float`` /
  ``double``) is approximate already. Into a type at least as wide it is kept
  bit for bit (``-0.0``, NaN and the infinities included). Into a narrower
  type (a ``double`` into a ``float4``) it is rounded to the nearest value
  of that type, as ``CAST(x AS REAL)`` does, unless it would leave the
  type's range: a finite value that would become an infinity (``1e300``), or
  a non-zero value that would become zero (``1e-50``), is refused, as
  PostgreSQL refuses both ("value out of range: overflow / underflow").
* **An exact number** (an integer, a decimal, or text that is a number) is
  stored only if the float **names** it: the float is the number exactly, or
  the float's shortest round-trip text (what Python's ``repr`` or Arrow
  shows, read in the column's own type) is the number. So ``0.1``,
  ``'0.1'`` and ``10**30`` are taken (their floats read back as ``0.1`` and
  ``1e+30``); ``2**53 + 1`` and ``'9007199254740993'`` are refused (their
  float8 reads back as ``9007199254740992``), as are ``'1e400'`` (it would be
  an infinity) and ``'1e-400'`` (it would be zero). Text that spells a
  non-finite value (``'inf'``, ``'-Infinity'``, ``'nan'``) is that value.

Both kinds are read correctly rounded: text and decimals are parsed by
Arrow straight into the column's type (a decimal through its exact text:
Arrow's own decimal-to-float cast is off by an ulp for about one value in
ten, and text parsed into a ``double`` first and then narrowed to a
``float4`` can be rounded twice).

Exactness is decided without Python for nearly every value: an integer of at
most 2**53 (2**24 for ``float4``) is exact, and a number of at most 15
significant digits (6 for ``float4``, C's ``DBL_DIG`` / ``FLT_DIG``) that
lands on a normal float is always named by it. Only the rest is compared in
Python, with ``decimal.Decimal``'s exact arithmetic.

Imports from tables/: nothing.
"""

from __future__ import annotations

import decimal

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Refused", "to_floating"]


class Refused(ValueError):
    """A value the floating type cannot take; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


#: Per float width: (the largest integer up to which every integer is exact,
#: significant digits every decimal survives, the smallest normal value).
_LIMITS = {
    32: (2**24, 6, 1.1754943508222875e-38),
    64: (2**53, 15, 2.2250738585072014e-308),
}

_OVERFLOW = "it is beyond the range of the type and would become an infinity"
_UNDERFLOW = "it is too small for the type and would become zero"


def to_floating(values: pa.Array, target: pa.DataType) -> pa.Array:
    """``values`` as the floating type ``target`` by the rule above.

    Raises:
        Refused: a value the rule refuses, or values that are not numbers.
        pyarrow.ArrowInvalid: text that is not a number.
    """
    source = values.type
    if pa.types.is_floating(source):
        return _narrowed(values, target)
    textual = pa.types.is_string(source) or pa.types.is_large_string(source)
    textual = textual or pa.types.is_string_view(source)
    if textual or pa.types.is_integer(source) or pa.types.is_decimal(source):
        return _named(values, target, textual)
    raise Refused(f"a {source} value is not a number")


def _narrowed(values: pa.Array, target: pa.DataType) -> pa.Array:
    """A binary float: kept when the type is as wide, else rounded within the type's range."""
    if values.type.bit_width <= target.bit_width:
        return values.cast(target)  # widening is exact
    result = values.cast(target, safe=False)  # rounds to nearest (IEEE)
    if _any(pc.and_(pc.is_finite(values), pc.invert(pc.is_finite(result)))):
        raise Refused(_OVERFLOW)
    if _any(pc.and_(pc.not_equal(values, 0), pc.equal(result, 0))):
        raise Refused(_UNDERFLOW)
    return result


def _named(values: pa.Array, target: pa.DataType, textual: bool) -> pa.Array:
    """An exact number: stored only if the float it becomes names it."""
    integer = pa.types.is_integer(values.type)
    # A decimal reaches the float through its exact text (see the module docstring).
    text = values if textual or integer else values.cast(pa.string())
    result = values.cast(target, safe=False) if integer else text.cast(target, safe=True)
    finite = pc.is_finite(result)
    if not integer:
        # Non-finite only as spelled ('inf', 'nan'): text with a digit overflowed.
        spelled = pc.invert(pc.match_substring_regex(text, "[0-9]"))
        finite = pc.or_(finite, spelled)
    if _any(pc.invert(finite)):
        raise Refused(_OVERFLOW)
    limit, digits, smallest = _LIMITS[target.bit_width]
    if integer:
        # Compared as the values' own type (an unsigned one has no -limit).
        sure = pc.less_equal(values, pa.scalar(limit, pa.uint64()))
        if pa.types.is_signed_integer(values.type):
            sure = pc.and_(sure, pc.greater_equal(values, pa.scalar(-limit, pa.int64())))
    else:
        mantissa = pc.replace_substring_regex(text, r"[eE].*", "")
        significant = pc.utf8_length(
            pc.utf8_trim(pc.replace_substring_regex(mantissa, "[^0-9]", ""), "0")
        )
        normal = pc.greater_equal(pc.abs(result), smallest)
        zero = pc.and_(pc.equal(significant, 0), pc.equal(result, 0))
        sure = pc.or_(pc.and_(pc.less_equal(significant, digits), normal), zero)
        sure = pc.or_(sure, pc.invert(pc.is_finite(result)))  # spelled out: checked above
    doubtful = pc.indices_nonzero(pc.invert(pc.fill_null(sure, True)))
    if len(doubtful):
        _check_named(text.take(doubtful), result.take(doubtful))
    return result


def _check_named(numbers: pa.Array, floats: pa.Array) -> None:
    """Compare each number with its float exactly, in Python; raise at the first not named."""
    shortest = floats.cast(pa.string())  # Arrow's shortest round-trip text in the float's type
    for number, value, text in zip(
        numbers.to_pylist(), floats.to_pylist(), shortest.to_pylist(), strict=True
    ):
        exact = decimal.Decimal(number)
        if exact == decimal.Decimal(value) or exact == decimal.Decimal(text):
            continue
        if value == 0:
            raise Refused(_UNDERFLOW)
        raise Refused(
            f"the nearest value of the type is {text}, a different number (the type holds "
            f"{'about 7' if floats.type.bit_width == 32 else '15 to 17'} significant digits)"
        )


def _any(mask: pa.Array) -> bool:
    return bool(pc.any(mask).as_py())
