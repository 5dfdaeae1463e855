"""A cursor's pending rows shown without taking them: its ``repr`` and ``_repr_html_``.

A notebook prints the cursor an expression leaves (``cur.execute(...)``) and
Python's prompt its ``repr``: both show the first rows of the pending result
and what is known of its size, as a duckdb relation prints itself. The
cursor peeks at those rows (:meth:`~.cursor.Cursor.preview`) and hands them
here; these functions only lay them out, as plain text and as an HTML table.

Imports from dbapi/: nothing.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

#: Rows a preview shows at most.
PREVIEW_ROWS = 10
#: Characters of one value a preview shows at most (the rest is cut to "…").
VALUE_WIDTH = 40


@dataclass(frozen=True)
class Preview:
    """The next rows of a cursor's result, peeked at, and what is known of the rest.

    Attributes:
        names: the result's column names.
        rows: the next rows (at most :data:`PREVIEW_ROWS`), as ``fetchall`` gives them.
        first: the 0-based index of the first of them in the result (``rownumber``).
        more: whether rows follow those shown.
        total: the result's row count when known (the result was read to its
            end, or was whole from the start), else None: a query's rows
            stream, and are counted as they are read.
    """

    names: Sequence[str]
    rows: Sequence[Sequence[Any]]
    first: int
    more: bool
    total: int | None

    def summary(self) -> str:
        """One line: which rows are shown, of how many."""
        columns = f"{len(self.names)} column{'' if len(self.names) == 1 else 's'}"
        shown = len(self.rows)
        if shown == 0:
            return f"{columns}, no rows left to fetch" if self.first else f"{columns}, no rows"
        rows = (
            f"rows {self.first + 1} to {self.first + shown}"
            if shown > 1
            else f"row {self.first + 1}"
        )
        if self.total is not None:
            if self.first == 0 and not self.more:
                return f"{columns}, {self.total} row{'' if self.total == 1 else 's'}"
            return f"{columns}, {rows} of {self.total}"
        return f"{columns}, {rows} shown, more follow (counted as they are fetched)"


def text(preview: Preview) -> str:
    """The preview as a text table under a summary line (``repr``)."""
    cells = [[_cell(value) for value in row] for row in preview.rows]
    widths = [
        max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(preview.names)
    ]
    # Numbers right-aligned, as every SQL shell prints them.
    right = [_numeric([row[i] for row in preview.rows]) for i in range(len(preview.names))]
    lines = [f"<trinity_dbapi Cursor: {preview.summary()}>"]
    if preview.rows:
        header = " | ".join(n.ljust(w) for n, w in zip(preview.names, widths, strict=True))
        lines.append(header.rstrip())
        lines.append("-+-".join("-" * w for w in widths))
        lines.extend(
            " | ".join(
                c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right, strict=True)
            ).rstrip()
            for row in cells
        )
        if preview.more:
            lines.append("…")
    return "\n".join(lines)


def html_table(preview: Preview) -> str:
    """The preview as an HTML table with the summary as its caption (``_repr_html_``)."""
    head = "".join(f"<th>{html.escape(name)}</th>" for name in preview.names)
    body = "".join(
        "<tr>" + "".join(f"<td>{_html_cell(value)}</td>" for value in row) + "</tr>"
        for row in preview.rows
    )
    if preview.more:
        body += f'<tr><td colspan="{max(len(preview.names), 1)}">…</td></tr>'
    caption = html.escape(f"trinity_dbapi Cursor: {preview.summary()}")
    return (
        f"<table><caption>{caption}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def _numeric(values: Sequence[Any]) -> bool:
    present = [value for value in values if value is not None]
    return bool(present) and all(
        isinstance(value, int | float | Decimal) and not isinstance(value, bool)
        for value in present
    )


def _cell(value: Any) -> str:
    shown = "NULL" if value is None else str(value)
    shown = shown.replace("\n", "\\n")
    return shown if len(shown) <= VALUE_WIDTH else shown[: VALUE_WIDTH - 1] + "…"


def _html_cell(value: Any) -> str:
    # NULL in italics: the string 'NULL' is then told apart from a missing value.
    return "<em>NULL</em>" if value is None else html.escape(_cell(value))
