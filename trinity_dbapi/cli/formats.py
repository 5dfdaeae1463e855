"""Result formatting: values as text, and the ``table``, ``csv`` and ``json`` formats.

Each format (:data:`FORMATTERS`) is a pure function of the column names and
the rows.

Imports from cli/: nothing.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

# --- values -----------------------------------------------------------------------


def iso_duration(months: int, days: int, nanoseconds: int) -> str:
    """An ISO 8601 duration such as ``P1M2DT3H4M5.5S``; each part carries its sign."""
    date = "".join(f"{n}{unit}" for n, unit in ((months, "M"), (days, "D")) if n)
    sign = "-" if nanoseconds < 0 else ""
    seconds, nanos = divmod(abs(nanoseconds), 1_000_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    clock = "".join(f"{sign}{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n)
    if seconds or nanos:
        fraction = f".{nanos:09d}".rstrip("0") if nanos else ""
        clock += f"{sign}{seconds}{fraction}S"
    text = "P" + date + ("T" + clock if clock else "")
    return text if text != "P" else "PT0S"


def _timedelta_duration(value: datetime.timedelta) -> str:
    micros = value // datetime.timedelta(microseconds=1)
    sign = -1 if micros < 0 else 1
    days, nanos = divmod(abs(micros) * 1000, 86_400 * 1_000_000_000)
    return iso_duration(0, sign * days, sign * nanos)


def _is_interval(value: object) -> bool:
    """Whether ``value`` is pyarrow's ``MonthDayNano`` (a tuple with named fields)."""
    return isinstance(value, tuple) and all(
        hasattr(value, field) for field in ("months", "days", "nanoseconds")
    )


def _special_float(value: float) -> str | None:
    if math.isnan(value):
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return None


def json_safe(value: Any) -> Any:
    """``value`` as something :func:`json.dumps` writes as valid JSON.

    Decimals become strings (no precision lost), dates and times ISO 8601
    strings, intervals ISO 8601 durations, bytes base64 strings, UUIDs strings,
    NaN and infinities the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``;
    lists, tuples and dicts are converted item by item (dict keys become text).
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return _special_float(value) or value
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return _timedelta_duration(value)
    if _is_interval(value):
        return iso_duration(*value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dict):
        return {
            (k if isinstance(k, str) else text(k, binary="base64")): json_safe(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return str(value)


def text(value: Any, *, binary: str = "hex", null: str = "NULL") -> str:
    """``value`` as the text of a table or CSV cell.

    Args:
        value: a value of a result row.
        binary: ``"hex"`` to show bytes as ``\\x`` and hex digits (table), or
            ``"base64"`` (CSV).
        null: the text of None.
    """
    if value is None:
        return null
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return "\\x" + data.hex() if binary == "hex" else base64.b64encode(data).decode("ascii")
    if isinstance(value, datetime.timedelta):
        return _timedelta_duration(value)
    if _is_interval(value):
        return iso_duration(*value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(json_safe(value), ensure_ascii=False)
    return str(value)


# --- result formats ---------------------------------------------------------------

#: Characters escaped in table cells, so that every row stays on one line.
_CELL_ESCAPES = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _width(cell: str) -> int:
    """Terminal columns taken by ``cell`` (wide East Asian characters take two)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in cell
    )


def _pad(cell: str, width: int, right: bool) -> str:
    fill = " " * (width - _width(cell))
    return fill + cell if right else cell + fill


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)


def row_count(count: int) -> str:
    """The footer of a table: ``(1 row)``, ``(3 rows)``."""
    return f"({count} row{'' if count == 1 else 's'})"


def format_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """An aligned table, as psql draws it, ending with the row count.

    Numeric columns (every non-NULL value a number) are right-aligned, others
    left-aligned; NULL is shown as ``NULL``; line breaks and tabs in values
    are shown escaped (``\\n``); trailing spaces are trimmed.
    """
    cells = [[text(value).translate(_CELL_ESCAPES) for value in row] for row in rows]
    headers = [str(name).translate(_CELL_ESCAPES) for name in columns]
    right = [
        any(row[i] is not None for row in rows)
        and all(_is_number(row[i]) for row in rows if row[i] is not None)
        for i in range(len(headers))
    ]
    widths = [max([_width(h), *(_width(row[i]) for row in cells)]) for i, h in enumerate(headers)]

    def line(items: Sequence[str]) -> str:
        padded = (_pad(c, w, r) for c, w, r in zip(items, widths, right))
        return (" " + " | ".join(padded)).rstrip()

    lines = [line(headers), "-" + "-+-".join("-" * w for w in widths) + "-"]
    lines += [line(row) for row in cells]
    lines.append(row_count(len(rows)))
    return "\n".join(lines)


def _csv_field(value: Any) -> str:
    if value is None:
        return ""
    cell = text(value, binary="base64")
    if cell == "" or any(c in cell for c in ',"\r\n'):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def format_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """RFC 4180 CSV with a header line.

    NULL is an empty field and the empty string a quoted empty field (``""``),
    so the two stay apart; bytes are base64.
    """
    lines = [",".join(_csv_field(str(name)) for name in columns)]
    lines += [",".join(_csv_field(value) for value in row) for row in rows]
    return "\n".join(lines)


def _json_keys(columns: Sequence[str]) -> list[str]:
    """Column names as JSON keys, a repeated name suffixed ``_2``, ``_3``..."""
    keys: list[str] = []
    for name in map(str, columns):
        key, n = name, 1
        while key in keys:
            n += 1
            key = f"{name}_{n}"
        keys.append(key)
    return keys


def format_json(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """One JSON array of row objects, on one line (an empty result is ``[]``).

    Each result set of a run is one line, so the output is JSON Lines with
    one array per statement. Values go through :func:`json_safe`.
    """
    keys = _json_keys(columns)
    objects = [{k: json_safe(v) for k, v in zip(keys, row)} for row in rows]
    return json.dumps(objects, ensure_ascii=False)


#: The output formats (``--format``, ``.mode``) and their formatter.
FORMATTERS: dict[str, Callable[[Sequence[str], Sequence[Sequence[Any]]], str]] = {
    "table": format_table,
    "csv": format_csv,
    "json": format_json,
}


def format_status(rowcount: int) -> str:
    """What the table format prints for a statement without a result set."""
    if rowcount < 0:
        return "OK"
    return f"OK, {rowcount} row{'' if rowcount == 1 else 's'} affected"
