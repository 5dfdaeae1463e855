"""Progress of long work: what a connection's progress handler receives, and the adapters.

A statement's long work (inserts, CTAS, UPDATE and DELETE rewrites, commits
that write node files, the procedures) reports to the session's handler
(``Connection.progress``) as :class:`ProgressEvent` values. The layers below
SQL take plain integer callbacks; :class:`Task` and :class:`NodeFileProgress`
adapt them, keep each task's events monotonic, and turn a failing handler
into :class:`~trinity_dbapi.errors.ProgressHandlerError`.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from trinity_dbapi.errors import ProgressHandlerError

__all__ = ["NodeFileProgress", "ProgressEvent", "ProgressHandler", "Task"]


@dataclass(frozen=True)
class ProgressEvent:
    """How far one task of a running statement has come: what a progress handler receives.

    Attributes:
        task: what is being done, naming its object: ``"insert into shop.orders"``,
            ``"create table shop.copy"``, ``"commit"``, ``"collect garbage"``,
            ``"export snapshot eod"``...
        unit: what ``done`` and ``total`` count: ``"rows"``, ``"files"``,
            ``"node files"`` or ``"versions"``.
        done: units done so far; it never decreases within a task.
        total: units the task does in all, or None while unknown. The last
            event of a task that completes has ``done == total``.
    """

    task: str
    unit: str
    done: int
    total: int | None = None


#: A progress handler: called with each :class:`ProgressEvent` (``Connection.progress``).
ProgressHandler = Callable[[ProgressEvent], None]


class Task:
    """Reports one task's progress to a handler; does nothing without one.

    It keeps the events of its task monotonic (``done`` never decreases),
    drops repeats, and turns an exception of the handler into
    :class:`~trinity_dbapi.errors.ProgressHandlerError`, which stops the
    statement like any other error (so it is undone).
    """

    def __init__(
        self,
        handler: ProgressHandler | None,
        task: str,
        unit: str,
        total: int | None = None,
        *,
        check: Callable[[], None] | None = None,
    ) -> None:
        self.handler = handler
        #: Called at every report, with or without a handler: it raises to stop
        #: the statement (``Connection.interrupt``).
        self.check = check
        self.task = task
        self.unit = unit
        self.done = 0
        self.total = total
        self._sent: tuple[int, int | None] | None = None

    def start(self) -> None:
        """Report that the task has begun (done 0)."""
        self._send()

    def update(self, done: int, total: int | None = None) -> None:
        """Report ``done`` units (and the total, once known)."""
        self.done = max(self.done, done)
        if total is not None:
            self.total = total
        self._send()

    def counter(self, done: int, total: int) -> None:
        """:meth:`update` for the lower layers' ``(done, total)`` callbacks (total -1: unknown)."""
        self.update(done, None if total < 0 else total)

    def finish(self, done: int | None = None) -> None:
        """Report the end: ``done`` (by default the last count) becomes the total too."""
        if done is not None:
            self.done = max(self.done, done)
        self.total = self.done
        self._send()

    def _send(self) -> None:
        if self.check is not None:
            self.check()
        if self.handler is None or self._sent == (self.done, self.total):
            return
        self._sent = (self.done, self.total)
        event = ProgressEvent(self.task, self.unit, self.done, self.total)
        try:
            self.handler(event)
        except Exception as exc:  # the handler's own failure: it stops the statement
            raise ProgressHandlerError(self.task, self.done, self.unit, exc) from exc


class NodeFileProgress:
    """Adapts a commit's ``(node files written, total)`` reports to tasks, one per attempt.

    An attempt that loses the race for the next version is followed by
    another that writes its node files again; it is reported as a task of its
    own (``"commit, attempt 2"``), so each task's events stay monotonic and
    end with ``done == total``.

    Args:
        handler: the progress handler that receives the events.
        task: the task's name (``"commit"``, ``"compact"``).
        quiet: report an attempt only once it writes a node file (a commit
            of a small tree writes only the root: no task for it).
    """

    def __init__(self, handler: ProgressHandler, task: str, *, quiet: bool) -> None:
        self.handler = handler
        self.name = task
        self.quiet = quiet
        self.attempt = 1
        self.task: Task | None = None

    def start(self) -> None:
        """Report the first attempt's start now, before any node file is written."""
        self.task = self._new_task()
        self.task.start()

    def _new_task(self) -> Task:
        name = self.name if self.attempt == 1 else f"{self.name}, attempt {self.attempt}"
        return Task(self.handler, name, "node files")

    def __call__(self, written: int, total: int) -> None:
        if self.task is None and (written > 0 or not self.quiet):
            self.task = self._new_task()
        if total < 0:
            if self.task is not None:
                self.task.update(written)
            return
        task, self.task = self.task, None  # the attempt is complete
        self.attempt += 1
        if task is not None:
            task.finish(written)
