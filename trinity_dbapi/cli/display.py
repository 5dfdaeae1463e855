"""What the interactive shell shows of a result: a screenful, expanded rows, NULL, the pager.

:class:`Display` turns a cursor's result into text in the shell's mode
(:data:`~trinity_dbapi.cli.formats.FORMATTERS`). Not at a terminal (``-c``,
``-f``, piped input or output) the result is printed whole, as it always
was. At a terminal, as duckdb's ``.maxrows``, a table shows at most a
screenful: its first and last rows around a row of ``·``, and a footer
``1000000 rows (40 shown)``. That result is streamed: :func:`sample_rows`
keeps the first rows and a bounded tail of Arrow record batches and counts
the rest, converting only what it shows to Python, so a big result costs
neither its memory nor its conversion. ``.pager on`` sends complete results
taller or wider than the screen to ``$PAGER``, as psql does.

Imports from cli/: formats.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
from collections import deque
from collections.abc import Sequence
from typing import IO, Any

from trinity_dbapi.cli.formats import (
    FORMATTERS,
    Gap,
    format_expanded,
    format_line,
    format_markdown,
    format_plan,
    format_table,
    is_plan,
    text_width,
)

__all__ = [
    "DEFAULT_PAGER",
    "Display",
    "PagedText",
    "pager_command",
    "sample_rows",
    "select_rows",
    "split_limit",
]

#: The pager when ``$PAGER`` is unset: ``less`` quitting at once if the text
#: fits (-F), keeping it on screen (-X), wide lines cut not folded (-S),
#: colours shown (-R); ``more`` where there is no ``less``.
DEFAULT_PAGER = "less -S -F -R -X"
#: The screen's size when the terminal does not say (columns, lines).
FALLBACK_SIZE = (80, 24)
#: Lines a screenful of a table keeps for itself: its header and rule, the
#: row of ``·``, the footer and the next prompt.
TABLE_OVERHEAD = 5
#: Dim and back to normal intensity (ANSI SGR 2 and 22): NULL on a terminal.
DIM, NORMAL = "\x1b[2m", "\x1b[22m"
#: The exit status of a command line whose command ``sh`` cannot find (a ``$PAGER`` typo).
COMMAND_NOT_FOUND = 127
#: Settings of ``\x`` (psql's expanded display).
EXPANDED = ("off", "on", "auto")


class PagedText(str):
    """A result's text that goes to the pager (:meth:`Display.show`)."""

    __slots__ = ()


def split_limit(limit: int) -> tuple[int, int]:
    """How many of ``limit`` rows shown come from the top and from the bottom (as duckdb)."""
    top = (limit + 1) // 2
    return top, limit - top


def select_rows(
    rows: Sequence[tuple[Any, ...]], limit: int, gap: Gap | None = None
) -> tuple[list[tuple[Any, ...]], Gap | None]:
    """At most ``limit`` of ``rows``: the first and last ones and the :class:`Gap` between.

    A single hidden row is shown instead (the row of ``·`` would take its
    line). ``rows`` may already have a gap, of a larger limit: the result
    then narrows it.
    """
    total = len(rows) + (gap.hidden if gap else 0)
    if limit <= 0 or total <= limit + 1:
        return list(rows), gap
    top, bottom = split_limit(limit)
    after = gap.after if gap else top  # where the rows after the head start
    head, tail = rows[: min(top, after)], rows[after:]
    tail = tail[len(tail) - bottom :] if bottom else []
    return [*head, *tail], Gap(len(head), total - len(head) - len(tail))


def sample_rows(cursor: Any, limit: int) -> tuple[list[tuple[Any, ...]], Gap | None]:
    """The first and last rows of ``cursor``'s result (at most ``limit``) and the gap between.

    The head is fetched as rows; the rest is read as Arrow record batches
    (``cursor.fetch_record_batch``), keeping only a tail one row longer than
    shown, and counted: nothing else is converted to Python or kept. A
    cursor without ``fetch_record_batch`` has its rows fetched and selected.
    """
    top, bottom = split_limit(limit)
    head: list[tuple[Any, ...]] = cursor.fetchmany(top)
    if len(head) < top:
        return head, None
    if not hasattr(cursor, "fetch_record_batch"):
        return select_rows([*head, *cursor.fetchall()], limit)
    import pyarrow as pa

    from trinity_dbapi.dbapi import pyvalues

    keep = bottom + 1  # one more than shown: a single hidden row is shown instead
    reader = cursor.fetch_record_batch()
    tail: deque[pa.RecordBatch] = deque()
    held = rest = 0
    for batch in reader:
        rest += batch.num_rows
        tail.append(batch.slice(max(0, batch.num_rows - keep)))
        held += tail[-1].num_rows
        while held - tail[0].num_rows >= keep:
            held -= tail.popleft().num_rows
    table = pa.Table.from_batches(list(tail), schema=reader.schema)
    table = table.slice(max(0, held - keep))
    last = pyvalues.rows(table, top + rest - table.num_rows)
    return select_rows([*head, *last], limit, Gap(top, rest - len(last)) if rest > keep else None)


def pager_command() -> str:
    """The pager: ``$PAGER``, else :data:`DEFAULT_PAGER` (``more`` without ``less``)."""
    command = os.environ.get("PAGER", "").strip()
    if command:
        return command
    return DEFAULT_PAGER if shutil.which("less") else "more"


def _supports_color() -> bool:
    """Whether the terminal takes ANSI styles (https://no-color.org: ``NO_COLOR`` says no)."""
    return "NO_COLOR" not in os.environ and os.environ.get("TERM", "dumb") != "dumb"


def _dim(cell: str) -> str:
    return f"{DIM}{cell}{NORMAL}"


class Display:
    """How the shell shows results: the settings of ``.maxrows``, ``.pager``, ``\\x``, ``.nullvalue``.

    Args:
        out: where results are printed (the pager writes to the terminal itself).
        interactive: whether a person reads ``out`` at a terminal: a screenful
            by default, NULL dimmed, the pager when it is on. Otherwise
            results are printed whole and as they always were.
    """

    def __init__(self, out: IO[str], *, interactive: bool = False) -> None:
        self.out = out
        self.interactive = interactive
        #: Rows of a table at a terminal: None a screenful, 0 all.
        self.max_rows: int | None = None
        #: Whether results at a terminal taller or wider than the screen go to the pager.
        self.pager = False
        #: psql's expanded display of a table (:data:`EXPANDED`): "auto" when too wide.
        self.expanded = "off"
        #: The text of NULL (``.nullvalue``): None is ``NULL``, dimmed at a terminal.
        self.null: str | None = None

    # -- rendering

    def render(self, cursor: Any, mode: str) -> str | None:
        """The text of ``cursor``'s result in ``mode``; None when there is nothing to print.

        A :class:`PagedText` is for the pager (:meth:`show`).
        """
        columns = [column[0] for column in cursor.description]
        if mode == "table" and is_plan(columns):
            return format_plan(columns, cursor.fetchall())
        size = shutil.get_terminal_size(FALLBACK_SIZE)
        screenful = self.interactive and not self.pager and mode == "table"
        limit = self._limit(len(columns), size) if screenful else 0
        if limit > 0:
            rows, gap = sample_rows(cursor, limit)
        else:
            rows, gap = cursor.fetchall(), None
        if mode == "table" and self._expand(columns, rows, gap, size):
            if screenful and self.max_rows is None:  # a screenful of records, not of rows
                rows, gap = select_rows(rows, _records(len(columns), size), gap)
            mode = "expanded"
        paging = self.interactive and self.pager
        text = self._format(mode, columns, rows, gap, color=not paging)
        if paging and not _fits(text, size):
            return PagedText(text)
        if paging and self._color:  # it fits: on the screen, NULL dimmed
            text = self._format(mode, columns, rows, gap, color=True)
        return text or None  # line mode prints nothing of no rows

    @property
    def _color(self) -> bool:
        return self.interactive and _supports_color()

    def _limit(self, width: int, size: os.terminal_size) -> int:
        """Rows of a table shown at a terminal (0: all)."""
        if self.max_rows is not None:
            return max(self.max_rows, 0)
        if self.expanded == "on":
            return _records(width, size)
        return max(2, size.lines - TABLE_OVERHEAD)

    def _expand(
        self,
        columns: Sequence[str],
        rows: Sequence[tuple[Any, ...]],
        gap: Gap | None,
        size: os.terminal_size,
    ) -> bool:
        """Whether a table is shown expanded: ``\\x on``, or ``auto`` and wider than the screen."""
        if self.expanded != "auto" or not self.interactive:
            return self.expanded == "on"
        return not _fits_width(format_table(columns, rows, gap=gap), size)

    def _format(
        self,
        mode: str,
        columns: Sequence[str],
        rows: list[tuple[Any, ...]],
        gap: Gap | None,
        *,
        color: bool,
    ) -> str:
        """``rows`` in ``mode`` (or ``"expanded"``), with NULL's text and style."""
        style: dict[str, Any] = {}
        if self.null is not None:
            style["null"] = self.null
        if color and self._color:
            style["style_null"] = _dim
        if mode in ("table", "expanded"):
            fmt = format_table if mode == "table" else format_expanded
            return fmt(columns, rows, gap=gap, **style)
        if mode in ("markdown", "line"):
            return (format_markdown if mode == "markdown" else format_line)(columns, rows, **style)
        return FORMATTERS[mode](columns, rows)  # csv and json: NULL is theirs

    # -- output

    def show(self, text: str) -> None:
        """Print ``text``, through the pager if it is a :class:`PagedText`."""
        if isinstance(text, PagedText):
            self.page(text)
            return
        self.out.write(text + "\n")
        self.out.flush()

    def page(self, text: str) -> None:
        """Send ``text`` to the pager (:func:`pager_command`), which shows it on the terminal.

        While the pager runs, Ctrl-C is the pager's (less stops searching),
        not the shell's: the shell ignores it, as psql does.
        """
        import subprocess  # only to page: starting the shell stays cheap

        self.out.flush()
        encoding = getattr(self.out, "encoding", None) or "utf-8"
        with _sigint_ignored():
            try:
                pager = subprocess.Popen(
                    pager_command(),
                    shell=True,  # $PAGER is a command line ("less -R"), as psql runs it
                    stdin=subprocess.PIPE,
                    text=True,
                    encoding=encoding,
                    errors="replace",
                )
            except OSError:  # no shell to run it: print instead
                self.out.write(text + "\n")
                self.out.flush()
                return
            assert pager.stdin is not None
            with contextlib.suppress(BrokenPipeError):  # the user left the pager early
                pager.stdin.write(text + "\n")
            with contextlib.suppress(BrokenPipeError):
                pager.stdin.close()
            if pager.wait() == COMMAND_NOT_FOUND:  # sh said so on stderr; show the text here
                self.out.write(text + "\n")
                self.out.flush()


def _records(width: int, size: os.terminal_size) -> int:
    """Records of the expanded display in a screenful: a line per column and the head."""
    return max(1, (size.lines - 3) // (width + 1))


def _columns(line: str) -> int:
    """Columns ``line`` takes on the screen: styles take none."""
    return text_width(line.replace(DIM, "").replace(NORMAL, ""))


def _fits_width(text: str, size: os.terminal_size) -> bool:
    return all(_columns(line) <= size.columns for line in text.split("\n"))


def _fits(text: str, size: os.terminal_size) -> bool:
    """Whether ``text`` fits the screen, leaving a line for the next prompt."""
    return text.count("\n") + 1 < size.lines and _fits_width(text, size)


@contextlib.contextmanager
def _sigint_ignored() -> Any:
    """Ignore Ctrl-C in the body (where signals can be handled: the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
