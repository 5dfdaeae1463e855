"""Number literals reach DuckDB exactly, as parameters do, or the statement is refused.

DuckDB reads a number written in a statement by its form: digits only are
an integer (a ``BIGNUM`` past ``HUGEINT``, which no column holds); digits
with a point are a ``DECIMAL`` when at most 38 digits are written (leading
and trailing zeros count), else a ``DOUBLE``; a number with an exponent is
a ``DOUBLE``. A ``DOUBLE`` can silently be another number (``1e400`` is an
infinity, ``1e-400`` zero, ``9007199254740993e0`` is ``9007199254740992``).
So :func:`check_numbers`, run on every statement as it is parsed, holds each
literal to the rule its parameter twin meets (docs/dbapi.md, "Parameters";
docs/datasets.md, "Converting values"):

* an integer has at most 38 significant digits, as an ``int`` parameter;
* a number with a point and more than 38 digits written is written anew
  without its trailing zeros (the same number, which DuckDB then reads as
  an exact ``DECIMAL``) when that leaves at most 38 digits, as a ``Decimal``
  parameter is bound; else it is refused;
* a number with an exponent is a ``DOUBLE`` (docs/sql.md: "numbers with an
  exponent are floats"), and that double must name it by the rule for text
  stored in a ``float8`` column (:mod:`trinity_dbapi.tables.floats`): not an
  infinity, not zero for a non-zero number, not another number.

Each refusal is a :class:`~trinity_dbapi.errors.DataError` naming the
literal, the rule and the fix. The check runs before the parsed statement
is cached, so a text is checked once.

Imports from sql/: nothing.
"""

from __future__ import annotations

import decimal
import re

import pyarrow as pa
from sqlglot import exp

from trinity_dbapi.errors import DataError

__all__ = ["check_numbers"]

#: Most digits of a DECIMAL, and of an integer parameter (docs/dbapi.md).
MAX_DIGITS = 38

_INTEGER = re.compile(r"\d+")
_POINT = re.compile(r"\d*\.\d*")
_EXPONENT = re.compile(r"\d*\.?\d*[eE][+-]?\d+")


def check_numbers(expression: exp.Expression) -> None:
    """Check (and where needed rewrite in place) the number literals of a new parse tree.

    Raises:
        DataError: a literal DuckDB would not read as the number written.
    """
    for literal in expression.find_all(exp.Literal):
        if literal.is_string:
            continue
        text = literal.this
        if not isinstance(text, str):
            continue
        if _INTEGER.fullmatch(text):
            if len(text.lstrip("0")) > MAX_DIGITS:
                raise DataError(
                    f"the integer {_shown(text)} in the statement has more than {MAX_DIGITS} "
                    "digits: no column holds it (DECIMAL(38, 0) is the widest) and DuckDB would "
                    "not read it exactly; write it as a string ('...') or with an exponent "
                    "(a DOUBLE) if an approximate number is meant"
                )
        elif _POINT.fullmatch(text):
            if sum(c.isdigit() for c in text) > MAX_DIGITS:
                literal.set("this", _compact(text))
        elif _EXPONENT.fullmatch(text):
            _check_double(text)


def _shown(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _compact(text: str) -> str:
    """``text`` without its trailing zeros, in at most 38 digits, as DuckDB reads a DECIMAL.

    The same steps as a ``Decimal`` parameter (``dbapi/params.py``) takes.

    Raises:
        DataError: the number needs more than 38 digits.
    """
    value = decimal.Decimal(text)
    wide = decimal.Context(prec=len(text) + 2)  # nothing is rounded
    compact = value.normalize(context=wide)
    _, digits, exponent = compact.as_tuple()
    assert isinstance(exponent, int)  # a finite literal
    needed = len(digits) + exponent if exponent >= 0 else max(len(digits), -exponent)
    if needed > MAX_DIGITS:
        raise DataError(
            f"the number {_shown(text)} in the statement needs more than {MAX_DIGITS} digits: a "
            f"DECIMAL holds at most {MAX_DIGITS} and DuckDB would round it to a DOUBLE; write "
            "at most 38 digits, or the number with an exponent (a DOUBLE) if an approximate "
            "number is meant"
        )
    plain = format(compact, "f")
    if "." not in plain:
        return plain + "."  # still a DECIMAL: '1.' is DECIMAL(1, 0)
    # DuckDB counts the 0 before the point as a digit: '.5' is DECIMAL(1, 1).
    return plain[1:] if plain.startswith("0.") else plain


def _check_double(text: str) -> None:
    """Refuse a number with an exponent that the DOUBLE DuckDB reads it as does not name."""
    # Here, not at the top: the check needs pyarrow.compute, which costs a
    # statement without such a number (SHOW TABLES, most queries) ~50 ms to import.
    from trinity_dbapi.tables import floats

    try:
        floats.to_floating(pa.array([text]), pa.float64())
    except floats.Refused as exc:
        raise DataError(
            f"the number {_shown(text)} in the statement has an exponent, so it is a DOUBLE, "
            f"and {exc.reason}; write a number a DOUBLE holds (at most 17 significant "
            "digits, within about 1e-308 to 1e308), or the number without an exponent (an "
            "exact DECIMAL of up to 38 digits)"
        ) from None
