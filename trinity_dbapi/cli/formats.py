"""Result formatting: values as text, and the formats of results (:data:`FORMATTERS`).

Each format (:data:`FORMATTERS`) is a pure function of the column names and
the rows. The formats meant for people (``table``, ``markdown``, ``line``,
and the expanded display of :func:`format_expanded`) also take the text of
NULL and a style for it (the shell dims it on a terminal), and ``table`` and
the expanded display can mark a :class:`Gap`: rows left out of a screenful.
A result of ``EXPLAIN`` is a plan: :func:`format_plan` prints its lines.

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
from typing import Any, NamedTuple

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


def text_width(cell: str) -> int:
    """Terminal columns taken by ``cell`` (wide East Asian characters take two)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in cell
    )


def _pad(cell: str, width: int, right: bool) -> str:
    fill = " " * (width - text_width(cell))
    return fill + cell if right else cell + fill


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)


def row_count(count: int) -> str:
    """The footer of a table: ``(1 row)``, ``(3 rows)``."""
    return f"({count} row{'' if count == 1 else 's'})"


class Gap(NamedTuple):
    """Rows left out of a display: ``hidden`` rows after the first ``after`` rows shown."""

    after: int
    hidden: int


def footer(shown: int, gap: Gap | None) -> str:
    """``(3 rows)``, or with a gap duckdb's ``1000000 rows (40 shown)``."""
    if gap is None:
        return row_count(shown)
    return f"{shown + gap.hidden} rows ({shown} shown)"


#: The text of a row of a :class:`Gap` (duckdb draws a row of middle dots).
GAP_MARK = "\u00b7"


def _plain(cell: str) -> str:
    return cell


def _is_right(rows: Sequence[Sequence[Any]], i: int) -> bool:
    """Whether column ``i`` is numeric: every non-NULL value a number (right-aligned)."""
    return any(row[i] is not None for row in rows) and all(
        _is_number(row[i]) for row in rows if row[i] is not None
    )


def format_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    null: str = "NULL",
    style_null: Callable[[str], str] = _plain,
    gap: Gap | None = None,
) -> str:
    """An aligned table, as psql draws it, ending with the row count.

    Numeric columns (every non-NULL value a number) are right-aligned, others
    left-aligned; line breaks and tabs in values are shown escaped (``\\n``);
    trailing spaces are trimmed.

    Args:
        columns: the column names.
        rows: the rows shown.
        null: the text of NULL.
        style_null: what NULL's cells are wrapped in once aligned (the shell
            dims them on a terminal): it adds no width.
        gap: rows left out: a row of ``·`` stands at their place and the
            footer counts them (``1000000 rows (40 shown)``).
    """
    cells = [[text(value, null=null).translate(_CELL_ESCAPES) for value in row] for row in rows]
    headers = [str(name).translate(_CELL_ESCAPES) for name in columns]
    right = [_is_right(rows, i) for i in range(len(headers))]
    widths = [
        max([text_width(h), *(text_width(row[i]) for row in cells)]) for i, h in enumerate(headers)
    ]

    def line(items: Sequence[str], nulls: Sequence[bool] = ()) -> str:
        padded = []
        for i, (cell, width, r) in enumerate(zip(items, widths, right)):
            fill = " " * (width - text_width(cell))
            styled = style_null(cell) if i < len(nulls) and nulls[i] else cell
            padded.append(fill + styled if r else styled + fill)
        return (" " + " | ".join(padded)).rstrip()

    lines = [line(headers), "-" + "-+-".join("-" * w for w in widths) + "-"]
    lines += [line(cell, [v is None for v in row]) for cell, row in zip(cells, rows)]
    if gap is not None:
        mark = line([GAP_MARK.center(w) for w in widths])
        lines.insert(2 + gap.after, mark)
    lines.append(footer(len(rows), gap))
    return "\n".join(lines)


def _records_not_shown(gap: Gap) -> str:
    return f"-[ RECORDS {gap.after + 1} TO {gap.after + gap.hidden} NOT SHOWN ]"


def format_expanded(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    null: str = "NULL",
    style_null: Callable[[str], str] = _plain,
    gap: Gap | None = None,
) -> str:
    """Each row as a record, one line per column, as psql's expanded display (``\\x``).

    ``-[ RECORD 1 ]`` heads each record, then ``name | value`` lines (values
    escaped as in :func:`format_table`); the footer counts the rows. A gap
    is a line saying which records are left out.
    """
    headers = [str(name).translate(_CELL_ESCAPES) for name in columns]
    name_width = max((text_width(h) for h in headers), default=0)
    records: list[list[str]] = []
    widest = 0
    for row in rows:
        lines = []
        for header, value in zip(headers, row):
            cell = text(value, null=null).translate(_CELL_ESCAPES)
            widest = max(widest, name_width + 3 + text_width(cell))
            shown = style_null(cell) if value is None else cell
            lines.append(f"{_pad(header, name_width, False)} | {shown}".rstrip())
        records.append(lines)
    out = []
    for index, lines in enumerate(records):
        number = index + 1
        if gap is not None and index >= gap.after:
            if index == gap.after:
                out.append(_records_not_shown(gap))
            number += gap.hidden
        head = f"-[ RECORD {number} ]"
        out.append(head + "-" * max(1, widest - len(head)))
        out += lines
    if gap is not None and gap.after >= len(records):  # no record after the gap
        out.append(_records_not_shown(gap))
    out.append(footer(len(rows), gap))
    return "\n".join(out)


def _markdown_cell(cell: str) -> str:
    """A cell of a Markdown table: ``|`` escaped, line breaks as ``<br>``."""
    cell = cell.replace("\\", "\\\\").replace("|", "\\|")
    return "<br>".join(cell.splitlines()).translate(_CELL_ESCAPES) if cell else cell


def format_markdown(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    null: str = "NULL",
    style_null: Callable[[str], str] = _plain,
) -> str:
    """A GitHub-flavored Markdown table, numeric columns right-aligned (``---:``).

    ``|`` in values is escaped and line breaks become ``<br>``, so the table
    renders as it reads.
    """
    cells = [[_markdown_cell(text(value, null=null)) for value in row] for row in rows]
    headers = [_markdown_cell(str(name)) for name in columns]
    right = [_is_right(rows, i) for i in range(len(headers))]
    widths = [
        max([3, text_width(h), *(text_width(row[i]) for row in cells)])
        for i, h in enumerate(headers)
    ]

    def line(items: Sequence[str], nulls: Sequence[bool] = ()) -> str:
        padded = []
        for i, (cell, width, r) in enumerate(zip(items, widths, right)):
            fill = " " * (width - text_width(cell))
            styled = style_null(cell) if i < len(nulls) and nulls[i] else cell
            padded.append(fill + styled if r else styled + fill)
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        "-" * (w + 1) + ":" if r else "-" * (w + 2) for w, r in zip(widths, right)
    )
    lines = [line(headers), rule + "|"]
    lines += [line(cell, [v is None for v in row]) for cell, row in zip(cells, rows)]
    return "\n".join(lines)


def format_line(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    null: str = "NULL",
    style_null: Callable[[str], str] = _plain,
) -> str:
    """sqlite3's line mode: ``name = value``, one line per column, a blank line between rows.

    Names are right-aligned to the longest; values are printed as they are
    (a line break in a value starts a new line). No row: nothing.
    """
    headers = [str(name) for name in columns]
    name_width = max((text_width(h) for h in headers), default=0)
    records = [
        "\n".join(
            f"{_pad(header, name_width, True)} = "
            + (style_null(null) if value is None else text(value))
            for header, value in zip(headers, row)
        )
        for row in rows
    ]
    return "\n\n".join(records)


#: The column names of a plan: the result of ``EXPLAIN`` and ``EXPLAIN ANALYZE``.
PLAN_COLUMNS = ("explain_key", "explain_value")


def is_plan(columns: Sequence[str]) -> bool:
    """Whether a result with these columns is a plan (:data:`PLAN_COLUMNS`)."""
    return tuple(columns) == PLAN_COLUMNS


def format_plan(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plan as its lines: each multi-line value as it is, others as ``key: value``.

    DuckDB's plans are drawn in boxes, one text value per plan; the line
    ``trinity_storage: ...`` of ``EXPLAIN ANALYZE`` (what the statement cost
    the store) is a one-line value.
    """
    parts = []
    for key, value in rows:
        cell = text(value)
        parts.append(cell.rstrip("\n") if "\n" in cell else f"{text(key)}: {cell}")
    return "\n".join(parts)


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
    "markdown": format_markdown,
    "line": format_line,
}


def format_status(rowcount: int) -> str:
    """What the table format prints for a statement without a result set."""
    if rowcount < 0:
        return "OK"
    return f"OK, {rowcount} row{'' if rowcount == 1 else 's'} affected"
