"""Parameter binding and literal values: from syntax tree leaves to Python values.

A statement's ``?`` placeholders are numbered 1..n in textual order by the
parser (``exp.Placeholder(this="1")``); a :class:`Binder` holds the values
given for them and hands out the value of each. :func:`literal_value`
converts a literal node (or a bound placeholder) to Python:

* strings -> ``str``; integers -> ``int``; other numbers -> ``decimal.Decimal``
  (``1.5``) or ``float`` (``1e3``); ``TRUE`` / ``FALSE`` -> ``bool``;
  ``NULL`` -> ``None``;
* ``TIMESTAMP '...'`` (and ``TIMESTAMPTZ``) -> an aware ``datetime`` in UTC
  (text without an offset is UTC); ``DATE '...'`` -> ``datetime.date``;
* a placeholder -> its parameter value, unchanged.

Imports from sql/: compat, expressions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

from sqlglot import exp

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql.compat import DType, meta_get

_TIMESTAMP_RE = re.compile(
    r"\s*(\d{4})-(\d{1,2})-(\d{1,2})"
    r"(?:[T ]\s*(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
    r"\s*(?P<zone>Z|UTC|(?P<sign>[+-])(?P<hours>\d{1,2})(?::?(?P<minutes>\d{2}))?)?\s*",
    re.IGNORECASE,
)
_TIMESTAMP_FORMAT = "'YYYY-MM-DD[ HH:MM[:SS[.ffffff]]][+HH:MM]'"


class Binder:
    """The parameter values of one execution of a statement."""

    def __init__(self, params: Sequence[object], expected: int) -> None:
        """Check the values against the statement's number of placeholders.

        Raises:
            ProgrammingError: ``params`` is not a sequence, or holds more or
                fewer values than the statement has ``?`` placeholders.
        """
        if isinstance(params, (str, bytes, Mapping)) or not isinstance(params, Sequence):
            raise ProgrammingError(
                f"statement parameters must be a sequence (list or tuple) of values, one per ?, "
                f"not {type(params).__name__}: trinity-dbapi's paramstyle is qmark"
            )
        if len(params) != expected:
            raise ProgrammingError(
                f"the statement has {expected} ? placeholder(s) but {len(params)} parameter(s) "
                f"were given; pass exactly {expected} value(s), in the order of the ?s"
            )
        self.params = tuple(params)

    def value(self, placeholder: exp.Placeholder) -> object:
        """The value of a numbered placeholder."""
        return self.params[int(placeholder.name) - 1]


def literal_value(node: exp.Expression, binder: Binder) -> object:
    """The Python value of a literal node or a bound placeholder.

    Raises:
        ProgrammingError: The node is not a literal, or its text is invalid.
    """
    if isinstance(node, exp.Placeholder):
        return binder.value(node)
    if isinstance(node, exp.Neg):
        value = literal_value(node.this, binder)
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
            raise ProgrammingError(f"-{value!r} is not a number; negate numbers only")
        return -value
    if isinstance(node, exp.Literal):
        return node.name if node.is_string else _number(node.name)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Cast) and meta_get(node, texp.TYPED_LITERAL):
        text = node.this.name
        if node.to.this == DType.DATE:
            return parse_timestamp(text, "DATE literal").date()
        if node.to.this in _TIMESTAMP_TYPES:
            return parse_timestamp(text, "TIMESTAMP literal")
    raise ProgrammingError(
        f"{node.sql(dialect='trinity')} is not a literal value; write a string, a number, TRUE, "
        "FALSE, NULL, TIMESTAMP '...' or ?"
    )


_TIMESTAMP_TYPES = frozenset(
    {DType.TIMESTAMP, DType.TIMESTAMPNTZ, DType.TIMESTAMPTZ, DType.TIMESTAMPLTZ}
)


def text_value(node: exp.Expression | None, binder: Binder, what: str) -> str | None:
    """The text of a string literal or bound ``?`` (``None`` when absent or bound to None).

    Raises:
        ProgrammingError: A parameter bound here is not a string.
    """
    if node is None:
        return None
    value = literal_value(node, binder)
    if value is not None and not isinstance(value, str):
        raise ProgrammingError(
            f"{what} must be a string, but its ? parameter is {value!r}; pass a str"
        )
    return value


def _number(text: str) -> int | float | Decimal:
    if text.isdigit():
        return int(text)
    if "e" in text.lower():
        return float(text)
    return Decimal(text)


def as_utc(value: datetime) -> datetime:
    """An aware UTC datetime: naive values are taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def parse_timestamp(text: str, what: str = "timestamp") -> datetime:
    """Parse ISO-8601-like text into an aware UTC datetime (no offset = UTC).

    Accepts ``YYYY-MM-DD``, a time after ``T`` or a space (seconds and up to
    nine fractional digits optional; digits past microseconds are dropped),
    and an offset ``Z``, ``UTC``, ``+HH``, ``+HHMM`` or ``+HH:MM``.

    Raises:
        ProgrammingError: The text is not such a timestamp.
    """
    match = _TIMESTAMP_RE.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        year, month, day, hour, minute, second, fraction = match.groups()[:7]
        micros = int((fraction or "0")[:6].ljust(6, "0"))
        value = datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0)
        ).replace(microsecond=micros, tzinfo=_zone(match))
    except ValueError:
        raise ProgrammingError(
            f"{what} {text!r} is not a valid timestamp; write {_TIMESTAMP_FORMAT} "
            "(text without an offset is UTC)"
        ) from None
    return as_utc(value)


def exact_timestamp(text: str, *, zoned: bool) -> datetime | None:
    """The instant DuckDB reads timestamp text as, in UTC, when that is certain; else None.

    The session's DuckDB runs in UTC (``TimeZone`` is fixed and locked), so
    text without an offset is UTC there too. None for text it could read
    otherwise: more than six fractional digits, an offset in the text of a
    zone-less ``TIMESTAMP`` (``zoned`` false), or anything
    :func:`parse_timestamp` refuses (a zone name, ``infinity``, ...).
    """
    match = _TIMESTAMP_RE.fullmatch(text)
    if match is None or len(match.group(7) or "") > 6 or (match["zone"] and not zoned):
        return None
    try:
        return parse_timestamp(text)
    except ProgrammingError:
        return None


def _zone(match: re.Match[str]) -> timezone:
    if match["sign"] is None:
        return timezone.utc
    delta = timedelta(hours=int(match["hours"]), minutes=int(match["minutes"] or 0))
    return timezone(-delta if match["sign"] == "-" else delta)


def value_node(value: object) -> exp.Expression:
    """A literal node for a bound value (the inverse of :func:`literal_value`)."""
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float, Decimal)):
        return exp.Literal.number(value)
    if isinstance(value, datetime):
        cast = exp.Cast(
            this=exp.Literal.string(as_utc(value).isoformat(sep=" ")),
            to=exp.DataType(this=DType.TIMESTAMPTZ),
        )
        cast.meta[texp.TYPED_LITERAL] = True
        return cast
    if isinstance(value, date):
        cast = exp.Cast(this=exp.Literal.string(value.isoformat()), to=exp.DataType.build("DATE"))
        cast.meta[texp.TYPED_LITERAL] = True
        return cast
    if value is None:
        return exp.Null()
    return exp.Literal.string(str(value))
