"""Stopping a running statement: ``Connection.interrupt()`` and ``statement_timeout``.

A statement spends its time in two places: in DuckDB (queries, the rows
DML rewrites) and in Python (planning, writing Parquet files, staging).
:meth:`StatementControl.interrupt` reaches both:

* it interrupts every DuckDB connection the session is running work on
  (the private connection and the cursors of streamed results), which makes
  DuckDB's running query raise; DuckDB forgets an interrupt that arrives
  before its query starts, so while the statement runs the interrupt is
  repeated every :data:`REPEAT_SECONDS` until it ends;
* it sets a flag that the statement checks at safe points
  (:meth:`StatementControl.check`): each batch of rows written, each table a
  query plans, each row of ``executemany``, and once before a
  statement-scoped commit. A commit itself is never interrupted: it either
  finishes or (interrupted before it starts) never begins, so no version is
  ever left half-written.

It takes no lock the statement holds: another thread (or a signal handler
in the shell) may call it at any time. An interrupt with no statement
running is a no-op, as ``sqlite3_interrupt`` is.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from trinity_dbapi.errors import ProgrammingError, QueryInterruptedError, StatementTimeoutError

#: How often an interrupt is repeated on DuckDB while the statement still runs.
REPEAT_SECONDS = 0.05


def check_timeout(value: object) -> float | None:
    """A valid ``statement_timeout``: seconds > 0 as a float, or None (0 and None: no limit).

    Raises:
        ProgrammingError: not a number of seconds.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProgrammingError(
            f"statement_timeout must be a number of seconds (or None for no limit), not "
            f"{type(value).__name__} {value!r}"
        )
    seconds = float(value)
    if not 0 <= seconds < float("inf"):  # NaN fails every comparison
        raise ProgrammingError(
            f"statement_timeout must be 0 or more seconds (0 or None: no limit), not {value!r}"
        )
    return seconds or None


class StatementControl:
    """One session's running statements, and what stops them.

    Args:
        ducks: returns the DuckDB connections the session has open right now
            (without creating one).
        timeout: the statement timeout in seconds (None: none).
    """

    def __init__(self, ducks: Callable[[], list[Any]], timeout: float | None = None) -> None:
        self._ducks = ducks
        self.timeout = timeout
        self._lock = threading.Lock()  # guards the fields below; never held while waiting
        self._running = 0  # statements (and result reads) in progress
        self._generation = 0  # counts runs: a repeater stops when its run ends
        self._interrupted = False
        self._timed_out = False
        self._timer: threading.Timer | None = None
        self._cursors: dict[int, Any] = {}  # DuckDB cursors of streamed results

    # -- DuckDB cursors -------------------------------------------------------------

    def add_cursor(self, cursor: Any) -> None:
        """Interrupt ``cursor`` too (a streamed result's DuckDB cursor) until removed."""
        with self._lock:
            self._cursors[id(cursor)] = cursor

    def remove_cursor(self, cursor: Any) -> None:
        with self._lock:
            self._cursors.pop(id(cursor), None)

    # -- stopping ---------------------------------------------------------------------

    def interrupt(self, *, timed_out: bool = False) -> None:
        """Stop the running statement (a no-op when none runs); safe from any thread."""
        with self._lock:
            if self._running == 0:
                return
            self._interrupted = True
            self._timed_out = self._timed_out or timed_out
            generation = self._generation
        self._interrupt_ducks()
        threading.Thread(
            target=self._repeat, args=(generation,), name="trinity-interrupt", daemon=True
        ).start()

    def _repeat(self, generation: int) -> None:
        """Interrupt DuckDB again until the run ends: DuckDB forgets one that came too early."""
        while True:
            with self._lock:
                if self._running == 0 or self._generation != generation:
                    return
            self._interrupt_ducks()
            threading.Event().wait(REPEAT_SECONDS)

    def _interrupt_ducks(self) -> None:
        with self._lock:
            cursors = list(self._cursors.values())
        for duck in [*self._ducks(), *cursors]:
            with contextlib.suppress(Exception):  # closed meanwhile: nothing to stop
                duck.interrupt()

    def check(self) -> None:
        """A safe point: raise if the running statement was interrupted.

        Raises:
            QueryInterruptedError: it was (``StatementTimeoutError`` for the timeout).
        """
        if self._interrupted and self._running:
            raise QueryInterruptedError("the statement")

    # -- running --------------------------------------------------------------------

    @contextlib.contextmanager
    def running(self, what: str) -> Iterator[None]:
        """Run one statement (``what`` names it in errors) under interrupt and timeout.

        Runs nest (``executemany`` executes its statement once per row) and
        may overlap (a streamed result read while another statement runs):
        the first to start clears the previous interrupt and arms the timer,
        the last to end disarms it. An interrupt raised inside becomes
        :class:`QueryInterruptedError` (or :class:`StatementTimeoutError`)
        naming ``what``.
        """
        self._enter()
        try:
            yield
        except Exception as exc:
            if isinstance(exc, StatementTimeoutError) or not self._interrupted:
                raise
            # Our safe points raise QueryInterruptedError; DuckDB calls made
            # outside a query's error translation (registering a relation,
            # binding a scan) raise DuckDB's own InterruptException.
            if not isinstance(exc, QueryInterruptedError) and not _duckdb_interrupt(exc):
                raise
            timeout = self.timeout
            if self._timed_out and timeout is not None:
                raise StatementTimeoutError(what, timeout) from None
            raise QueryInterruptedError(what) from None
        finally:
            self._leave()

    def _enter(self) -> None:
        with self._lock:
            self._running += 1
            if self._running > 1:
                return
            self._generation += 1
            self._interrupted = self._timed_out = False
            if self.timeout is not None:
                timer = threading.Timer(self.timeout, self.interrupt, kwargs={"timed_out": True})
                timer.daemon = True
                self._timer = timer
                timer.start()

    def _leave(self) -> None:
        with self._lock:
            self._running -= 1
            if self._running > 0:
                return
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()


def _duckdb_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` is DuckDB's error for an interrupted query."""
    import duckdb

    return isinstance(exc, duckdb.InterruptException)
