"""Progress bars on a terminal: a progress handler drawing tqdm bars.

:class:`TerminalProgress` is a connection's progress handler (see
``Connection.progress`` in docs/dbapi.md): it draws one tqdm bar per task
(``insert into shop.orders``, ``commit``, ``collect garbage``...) on a
stream, finishes it when the task's last event arrives (done == total), and
closes a bar left unfinished when :meth:`TerminalProgress.close` is called
(the shell does at the end of every statement, success or error).

tqdm is imported when the first bar is drawn, not before: importing this
module (and starting ``trinity``) stays cheap.

Imports from cli/: nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self is Python 3.11+

    from trinity_dbapi.sql.engine.progress import ProgressEvent

__all__ = ["TerminalProgress"]

#: The bar's width and the screen's height when the terminal does not say
#: (a pseudo-terminal nobody sized reports 0 x 0, and tqdm then draws nothing).
FALLBACK_SIZE = (80, 24)


class TerminalProgress:
    """A progress handler drawing one tqdm bar per task on ``stream``.

    Set it as a connection's handler (``conn.progress = TerminalProgress(sys.stderr)``);
    each bar shows the task, the count in its unit, and once the total is
    known a percentage, the rate and the time left. Drawing never stops a
    statement: if the stream fails (closed, a broken pipe), the bars stop.
    Used as a context manager, it closes the bar in progress on exit.

    Args:
        stream: where the bars are drawn: a terminal (see :meth:`for_stream`).
        leave: keep each finished bar on screen; False erases it when done
            (the shell does, so only results stay).
    """

    def __init__(self, stream: TextIO, *, leave: bool = True) -> None:
        self.stream = stream
        self.leave = leave
        self._bar: Any = None  # the tqdm bar of the task in progress
        self._task: tuple[str, str] | None = None
        self._broken = False

    @classmethod
    def for_stream(cls, stream: TextIO, *, leave: bool = True) -> TerminalProgress | None:
        """A handler drawing on ``stream`` if it is a terminal, else None (no bars in files or pipes)."""
        try:
            interactive = stream.isatty()
        except (AttributeError, ValueError, OSError):  # no isatty, or closed
            return None
        return cls(stream, leave=leave) if interactive else None

    def __call__(self, event: ProgressEvent) -> None:
        """Draw ``event``: advance the bar of its task, starting a new one for a new task."""
        if self._broken:
            return
        try:
            self._draw(event)
        except (OSError, ValueError):  # the stream is gone: stop drawing, not the statement
            self._broken = True
            self._bar = self._task = None

    def _draw(self, event: ProgressEvent) -> None:
        bar = self._bar
        # Events of one task never go backwards: a count that does is a new task of the same name.
        if bar is None or self._task != (event.task, event.unit) or event.done < bar.n:
            self.close()
            bar = self._open(event)
        if event.total != bar.total:
            bar.total = event.total
        if event.done > bar.n:
            bar.update(event.done - bar.n)
        if event.total is not None and event.done >= event.total:
            self.close()  # the task is complete: the bar shows 100%

    def _open(self, event: ProgressEvent) -> Any:
        from tqdm import tqdm

        if _has_size(self.stream):
            size: dict[str, Any] = {"dynamic_ncols": True}  # follows the terminal when resized
        else:
            size = dict(zip(("ncols", "nrows"), FALLBACK_SIZE))
        self._bar = tqdm(
            desc=event.task,
            total=event.total,
            initial=event.done,
            # A leading space: "1000 rows", "12 node files/s", not "1000rows".
            unit=f" {event.unit}",
            file=self.stream,
            leave=self.leave,
            **size,
        )
        self._task = (event.task, event.unit)
        return self._bar

    def close(self) -> None:
        """Finish the bar in progress, if any (it stays on screen as it is, with ``leave``)."""
        bar, self._bar, self._task = self._bar, None, None
        if bar is None:
            return
        try:
            bar.close()
        except (OSError, ValueError):
            self._broken = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _has_size(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that knows its size."""
    try:
        columns, lines = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):  # no file descriptor, or not a terminal
        return False
    return columns > 0 and lines > 0
