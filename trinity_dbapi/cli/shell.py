"""The :class:`Shell`: runs statements, prints results, handles meta-commands.

It runs statements through the DB-API driver in autocommit mode, prints
results, handles meta-commands (``.help``, ``.mode``, ``.import``...) and the
interactive read loop. Given a progress handler, it sets it on the connection
and finishes its bar when each statement ends, before anything is printed.

Ctrl-C while a statement runs interrupts it (``Connection.interrupt``).
Python runs a signal handler only between bytecodes, and a statement may be
inside DuckDB for minutes: so the C-level handler's wake-up byte
(``signal.set_wakeup_fd``) is read by a watcher thread, which interrupts the
connection at once, whatever the main thread is doing.

Imports from cli/: formats, progress, statements; inside functions: importer.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from trinity_dbapi.cli.formats import FORMATTERS, format_status
from trinity_dbapi.cli.statements import split_complete, split_statements

if TYPE_CHECKING:
    from trinity_dbapi.cli.progress import TerminalProgress

#: Prompt of a new statement, and of the following lines of an unfinished one.
PROMPT = "trinity> "
CONTINUATION_PROMPT = "     -> "
#: Where the interactive shell keeps its input history (``TRINITY_HISTORY`` overrides).
HISTORY_FILE = "~/.trinity_history"
HISTORY_LENGTH = 1000


# --- the shell --------------------------------------------------------------------

#: Meta-commands: name, arguments, help. ``.name`` runs ``Shell._meta_<name>``.
META_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("help", "", "show this help"),
    ("quit", "", "leave the shell (also Ctrl-D)"),
    ("exit", "", "leave the shell"),
    ("timing", "on|off", "print how long each statement takes"),
    ("mode", "table|csv|json", "choose the output format"),
    ("tables", "", "list the tables (SHOW TABLES)"),
    (
        "import",
        "[--format csv|tsv|parquet|json] FILE TABLE",
        "append a file's rows to a table (one commit)",
    ),
)


def error_message(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class Shell:
    """Runs statements on one connection and prints their results.

    Args:
        connection: an open DB-API connection, in autocommit mode.
        mode: the output format, a key of :data:`FORMATTERS`.
        timing: whether to print each statement's elapsed time (to ``err``).
        out: where results go.
        err: where errors and timings go.
        progress: a progress handler to set on the connection (None: none);
            its bar is finished when each statement ends.
        exit_on_interrupt: what Ctrl-C during a statement does: stop it and
            raise ``KeyboardInterrupt`` once it ended (scripts: ``-c``, ``-f``,
            piped input), or, when false (the interactive shell), stop it,
            print the error and carry on.
    """

    def __init__(
        self,
        connection: Any,
        *,
        mode: str = "table",
        timing: bool = False,
        out: IO[str] | None = None,
        err: IO[str] | None = None,
        progress: TerminalProgress | None = None,
        exit_on_interrupt: bool = True,
    ) -> None:
        self.connection = connection
        self.exit_on_interrupt = exit_on_interrupt
        self._sigint = False  # Ctrl-C came while the current statement ran
        self.mode = mode
        self.timing = timing
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self._cursor: Any = None
        self._failed = False
        self.progress = progress
        if progress is not None:
            connection.progress = progress

    # -- output

    def _print(self, message: str) -> None:
        self.out.write(message + "\n")
        self.out.flush()

    def error(self, message: str) -> None:
        """Print ``Error: message`` on the error stream."""
        self.out.flush()
        self.err.write(f"Error: {message}\n")
        self.err.flush()

    # -- statements

    def execute(self, sql: str) -> bool:
        """Run one statement and print its result; False if it failed."""
        return self._run(lambda: self._statement(sql))

    def _statement(self, sql: str) -> str | None:
        if self._cursor is None:
            self._cursor = self.connection.cursor()
        cursor = self._cursor
        cursor.execute(sql)
        if cursor.description is None:
            return format_status(cursor.rowcount) if self.mode == "table" else None
        columns = [column[0] for column in cursor.description]
        return FORMATTERS[self.mode](columns, cursor.fetchall())

    def _run(self, work: Callable[[], str | None]) -> bool:
        """Run ``work`` (a statement), print what it returns and the time; False if it failed."""
        from trinity_dbapi import Error

        started = time.perf_counter()
        served = self._storage_stats()
        self._sigint = False
        try:
            try:
                with self._ctrl_c_interrupts():
                    output = work()
            finally:
                # The bar ends with the statement: nothing else is printed under it.
                if self.progress is not None:
                    self.progress.close()
        except Error as exc:
            self.error(error_message(exc))
            self._stop_if_interrupted()
            return False
        except KeyboardInterrupt:
            self.error("interrupted")
            self._stop_if_interrupted(force=True)
            return False
        self._stop_if_interrupted()
        elapsed = time.perf_counter() - started
        if output is not None:
            self._print(output)
        if self.timing:
            self.out.flush()
            self.err.write(f"Time: {elapsed * 1000:.3f} ms{self._storage_cost(served)}\n")
            self.err.flush()
        return True

    def _storage_stats(self) -> Any:
        stats = getattr(self.connection, "storage_stats", None)
        return stats if self.timing else None

    def _storage_cost(self, served: Any) -> str:
        """What the statement cost the store, for the timer: requests, rounds, bytes, hits."""
        now = self._storage_stats()
        if served is None or now is None:
            return ""
        used = now.since(served)
        return (
            f" ({used.requests} requests in {used.rounds} rounds, "
            f"{used.bytes_read} bytes read, {used.cache_hits} cache hits)"
        )

    def _stop_if_interrupted(self, *, force: bool = False) -> None:
        """A script stops after Ctrl-C (``KeyboardInterrupt``: exit status 130)."""
        if (force or self._sigint) and self.exit_on_interrupt:
            raise KeyboardInterrupt

    def _on_ctrl_c(self, *args: object) -> None:
        """Ctrl-C while a statement runs: interrupt it (from a handler or the watcher)."""
        self._sigint = True
        self.connection.interrupt()

    @contextlib.contextmanager
    def _ctrl_c_interrupts(self) -> Iterator[None]:
        """While the body runs, Ctrl-C interrupts the connection instead of raising.

        Signals are delivered to the main thread only: elsewhere (a shell
        embedded in a thread) Ctrl-C keeps its usual effect. A process told
        to ignore SIGINT (started in the background by a shell) keeps
        ignoring it.
        """
        if (
            threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        ):
            yield
            return
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        stop = threading.Event()
        watcher = threading.Thread(
            target=self._watch, args=(read_end, stop), name="trinity-ctrl-c", daemon=True
        )
        previous_handler = signal.signal(signal.SIGINT, self._on_ctrl_c)
        previous_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        watcher.start()
        try:
            yield
        finally:
            signal.set_wakeup_fd(previous_fd)
            signal.signal(signal.SIGINT, previous_handler)
            stop.set()
            os.write(write_end, b"\0")  # wake the watcher up to see ``stop``
            watcher.join()
            os.close(read_end)
            os.close(write_end)

    def _watch(self, read_end: int, stop: threading.Event) -> None:
        """Read wake-up bytes (signal numbers) and interrupt on SIGINT, until ``stop``."""
        while not stop.is_set():
            select.select([read_end], [], [])
            data = os.read(read_end, 512)
            if signal.SIGINT in data and not stop.is_set():
                self._on_ctrl_c()

    def run_script(self, sql: str) -> bool:
        """Run every statement of ``sql`` in order, stopping at the first failure."""
        from sqlglot.errors import TokenError

        try:
            statements = split_statements(sql)
        except TokenError as exc:
            self.error(f"unterminated string, quoted name or comment: {exc}")
            return False
        return all(self.execute(statement) for statement in statements)

    def run_command(self, text: str) -> bool:
        """Run a ``-c`` argument: one meta-command line if it starts with ``.``, else SQL."""
        if not text.lstrip().startswith("."):
            return self.run_script(text)
        self._failed = False
        self.meta(text)  # .quit and .exit only end this command
        return not self._failed

    # -- meta-commands

    def meta(self, line: str) -> bool:
        """Run a meta-command line (``.mode csv``); False when the shell should stop."""
        name, *args = line.strip().rstrip(";").split()
        command = name[1:].lower()
        if command not in {n for n, _, _ in META_COMMANDS}:
            self.error(f"unknown command {name}; type .help for the list")
            self._failed = True
            return True
        if command == "import":  # file names may be quoted: 'my data.csv'
            try:
                args = shlex.split(line.strip().rstrip(";"))[1:]
            except ValueError:  # an unclosed quote
                return self._usage(command)
        result: bool = getattr(self, f"_meta_{command}")(args)
        return result

    def _usage(self, command: str) -> bool:
        usage = next(f".{n} {a}".strip() for n, a, _ in META_COMMANDS if n == command)
        self.error(f"usage: {usage}")
        self._failed = True
        return True

    def _meta_help(self, args: list[str]) -> bool:
        width = max(len(f".{n} {a}") for n, a, _ in META_COMMANDS)
        lines = [f"{f'.{n} {a}'.strip():<{width}}  {h}" for n, a, h in META_COMMANDS]
        lines.append("End SQL statements with ';'. Ctrl-C cancels the input, Ctrl-D exits.")
        self._print("\n".join(lines))
        return True

    def _meta_quit(self, args: list[str]) -> bool:
        return False

    _meta_exit = _meta_quit

    def _meta_timing(self, args: list[str]) -> bool:
        if not args:
            self._print(f"timing is {'on' if self.timing else 'off'}")
            return True
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            return self._usage("timing")
        self.timing = args[0].lower() == "on"
        return True

    def _meta_mode(self, args: list[str]) -> bool:
        if not args:
            self._print(f"mode is {self.mode}")
            return True
        if len(args) != 1 or args[0].lower() not in FORMATTERS:
            return self._usage("mode")
        self.mode = args[0].lower()
        return True

    def _meta_tables(self, args: list[str]) -> bool:
        if args:
            return self._usage("tables")
        self._failed |= not self.execute("SHOW TABLES")
        return True

    def _meta_import(self, args: list[str]) -> bool:
        from trinity_dbapi.cli.importer import import_file

        fmt = None
        if args and args[0].startswith("--format"):
            option, _, value = args.pop(0).partition("=")
            if option != "--format" or (not value and not args):
                return self._usage("import")
            fmt = value or args.pop(0)
        if len(args) != 2:
            return self._usage("import")
        path, table = args

        def load() -> str | None:
            rows = import_file(self.connection, path, table, fmt=fmt)
            return format_status(rows) if self.mode == "table" else None

        self._failed |= not self._run(load)
        return True

    # -- the read loop

    def interact(self, read_line: Callable[[str], str]) -> bool:
        """Read, run and print until ``.quit`` or end of input.

        Lines accumulate until they end a statement (:func:`is_complete`);
        a line starting with ``.`` at the start of a statement is a
        meta-command. Ctrl-C (KeyboardInterrupt) drops the unfinished input.
        Text left unfinished at end of input is run as it is.

        Args:
            read_line: reads one line without its line break, given the
                prompt; raises EOFError at end of input (``input`` does both).

        Returns:
            True if no statement or meta-command failed.
        """
        from sqlglot.errors import TokenError

        self._failed = False
        buffer = ""
        while True:
            try:
                line = read_line(CONTINUATION_PROMPT if buffer else PROMPT)
            except KeyboardInterrupt:
                buffer = ""
                self._print("")
                continue
            except EOFError:
                break
            if not buffer and line.lstrip().startswith("."):
                if not self.meta(line):
                    return not self._failed
                continue
            buffer = f"{buffer}\n{line}" if buffer else line
            try:
                statements, buffer = split_complete(buffer)
            except TokenError:  # inside a string, quoted name or comment
                continue
            for statement in statements:
                self._failed |= not self.execute(statement)
        if buffer.strip():
            self._failed |= not self.run_script(buffer)
        return not self._failed


def stream_reader(stream: IO[str]) -> Callable[[str], str]:
    """A ``read_line`` for :meth:`Shell.interact` over a non-interactive stream."""

    def read_line(prompt: str) -> str:
        line = stream.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n").rstrip("\r")

    return read_line


def terminal_reader(prompt: str) -> str:
    """``input`` (with readline editing and history), ending the line on Ctrl-D."""
    try:
        return input(prompt)
    except EOFError:
        sys.stdout.write("\n")
        raise


def enable_history() -> Callable[[], None] | None:
    """Load the readline history; returns the function that saves it, if any."""
    try:
        import readline
    except ImportError:  # not on every platform
        return None
    path = os.path.expanduser(os.environ.get("TRINITY_HISTORY", HISTORY_FILE))
    with contextlib.suppress(OSError):  # first run, or unreadable: start empty
        readline.read_history_file(path)
    readline.set_history_length(HISTORY_LENGTH)

    def save() -> None:
        with contextlib.suppress(OSError):
            readline.write_history_file(path)

    return save
