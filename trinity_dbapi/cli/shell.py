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

Imports from cli/: aliases, completion, display, formats, progress, statements; inside functions: importer.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any

from trinity_dbapi.cli.aliases import command_names, is_command, nearest, translate
from trinity_dbapi.cli.completion import create_statements
from trinity_dbapi.cli.display import EXPANDED, Display
from trinity_dbapi.cli.formats import FORMATTERS, format_status
from trinity_dbapi.cli.statements import locate, split_complete, split_located

if TYPE_CHECKING:
    from trinity_dbapi.cli.progress import TerminalProgress

#: Prompt of a new statement, and of the following lines of an unfinished one.
PROMPT = "trinity> "
CONTINUATION_PROMPT = "     -> "
#: The prompt while a transaction is open (``BEGIN`` until ``COMMIT`` or ``ROLLBACK``), as psql's ``=*>``.
TRANSACTION_PROMPT = "trinity*> "
#: Statements after which the names the completer offers are read again: those
#: that may create, drop or rename something (a ROLLBACK may undo a CREATE).
#: Every other statement leaves them as they were.
_CATALOG_KEEPING = frozenset(
    {"select", "with", "from", "values", "table", "insert", "update", "delete", "merge"}
    | {"show", "describe", "explain", "summarize", "set", "use", "begin", "start"}
)
#: ``USE BRANCH`` and ``MERGE BRANCH`` start with keeping words but change the names seen.
_BRANCH_STATEMENT = re.compile(r"\s*\(*\s*(?:use|merge)\s+branch\b", re.IGNORECASE)


# --- the shell --------------------------------------------------------------------

#: Meta-commands: name, arguments, help. ``.name`` runs ``Shell._meta_<name>``.
META_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("help", "", "show this help"),
    ("quit", "", "leave the shell (also Ctrl-D)"),
    ("exit", "", "leave the shell"),
    ("timing", "on|off", "print how long each statement takes"),
    ("timer", "on|off", "the same as .timing"),
    ("mode", "|".join(FORMATTERS), "choose the output format"),
    ("maxrows", "[N|auto]", "rows of a table at a terminal: auto a screenful, 0 all"),
    ("pager", "[on|off]", "send results taller or wider than the screen to $PAGER"),
    ("expanded", "[on|off|auto]", "one line per column (also \\x); auto: when too wide"),
    ("nullvalue", "[TEXT]", "the text of NULL (at a terminal: NULL, dimmed)"),
    ("tables", "", "list the tables (SHOW TABLES)"),
    ("schema", "[TABLE]", "show the CREATE TABLE statement of TABLE, or of every table"),
    ("open", "URI", "close this lakehouse and open the one at URI"),
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
        interactive: whether a person reads ``out`` at a terminal: tables
            show a screenful, NULL is dimmed, ``.pager on`` pages
            (:class:`~trinity_dbapi.cli.display.Display`); otherwise results
            are printed whole, as they always were.
        connect: opens the lakehouse at a URI as the shell's connections are
            opened (``.open``); None: ``.open`` is refused.
        location: how to name the lakehouse to the user (its URI, without
            credentials), in ``created a new lakehouse at ...``.
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
        interactive: bool = False,
        connect: Callable[[str], Any] | None = None,
        location: str = "",
    ) -> None:
        self.connection = connection
        self.connect = connect
        self.location = location
        self._created_said = False
        #: Whether to say ``created a new lakehouse at ...`` (to a person watching ``err``).
        self.tell_creation = False
        #: Bumped by each statement that may change the catalog: the completer's cache key.
        self.catalog_epoch = 0
        #: The unfinished statement being typed (the completer reads it).
        self.pending = ""
        #: ``(file name, line, column)`` where the running statement starts in a ``-f`` file.
        self._where: tuple[str, int, int] | None = None
        self.exit_on_interrupt = exit_on_interrupt
        self._sigint = False  # Ctrl-C came while the current statement ran
        self.mode = mode
        self.timing = timing
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        #: How results are shown: a screenful, the pager, ``\x``, NULL (``.maxrows``...).
        self.display = Display(self.out, interactive=interactive)
        self._cursor: Any = None
        self._failed = False
        self.progress = progress
        if progress is not None:
            connection.progress = progress

    # -- output

    def _print(self, message: str) -> None:
        self.out.write(message + "\n")
        self.out.flush()

    def _note(self, message: str) -> None:
        """Print a line about what a command did besides its result (on the error stream)."""
        self.out.flush()
        self.err.write(f"{message}\n")
        self.err.flush()

    def error(self, message: str) -> None:
        """Print ``Error: message`` on the error stream."""
        self.out.flush()
        self.err.write(f"Error: {message}\n")
        self.err.flush()

    # -- statements

    def execute(self, sql: str) -> bool:
        """Run one statement and print its result; False if it failed."""
        words = sql.split(None, 1)
        if (
            not words
            or words[0].lower().lstrip("(") not in _CATALOG_KEEPING
            or _BRANCH_STATEMENT.match(sql)
        ):
            self.catalog_epoch += 1
        return self._run(lambda: self._statement(sql))

    def _statement(self, sql: str) -> str | None:
        if self._cursor is None:
            self._cursor = self.connection.cursor()
        cursor = self._cursor
        cursor.execute(sql)
        if cursor.description is None:
            return format_status(cursor.rowcount) if self.mode == "table" else None
        return self.display.render(cursor, self.mode)

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
            self._say_created()
            self.error(self._located(error_message(exc)))
            self._stop_if_interrupted()
            return False
        except KeyboardInterrupt:
            self.error("interrupted")
            self._stop_if_interrupted(force=True)
            return False
        self._say_created()
        self._stop_if_interrupted()
        elapsed = time.perf_counter() - started
        if output is not None:
            self.display.show(output)  # through the pager when it is on and needed
        if self.timing:
            self.out.flush()
            self.err.write(f"Time: {elapsed * 1000:.3f} ms{self._storage_cost(served)}\n")
            self.err.flush()
        return True

    def _say_created(self) -> None:
        """``created a new lakehouse at URI``, once, when a write of this shell created it."""
        if (
            self.tell_creation
            and not self._created_said
            and getattr(self.connection, "created_lakehouse", False)
        ):
            self._created_said = True
            self._note(f"created a new lakehouse at {self.location}")

    def _located(self, message: str) -> str:
        """``message``, placed in the ``-f`` file when a statement of one runs."""
        return message if self._where is None else locate(message, *self._where)

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

    def run_script(self, sql: str, *, name: str | None = None) -> bool:
        """Run every statement of ``sql`` in order, stopping at the first failure.

        Args:
            sql: the statements.
            name: the file they come from (``-f``): an error then starts with
                ``name:LINE:``, and its position is the file's line and column.
        """
        from sqlglot.errors import TokenError

        try:
            statements = split_located(sql)
        except TokenError as exc:
            where = f"{name}: " if name is not None else ""
            self.error(f"{where}unterminated string, quoted name or comment: {exc}")
            return False
        try:
            for statement, line, column in statements:
                self._where = None if name is None else (name, line, column)
                if not self.execute(statement):
                    return False
        finally:
            self._where = None
        return True

    def run_command(self, text: str) -> bool:
        """Run a ``-c`` argument: one command line (``.tables``, ``\\d orders``), else SQL."""
        if not is_command(text):
            return self.run_script(text)
        self._failed = False
        self.meta(text)  # .quit and .exit only end this command
        return not self._failed

    # -- meta-commands

    def meta(self, line: str) -> bool:
        """Run a command line; False when the shell should stop.

        A dot-command (``.mode csv``), or another shell's spelling of one
        (``\\q``, ``\\dt``, ``\\d orders``, ``help``, ``quit``: see
        :func:`~trinity_dbapi.cli.aliases.translate`).
        """
        names = [n for n, _, _ in META_COMMANDS]
        line = translate(line, names)
        if not line.startswith((".", "\\")):  # \d orders: DESCRIBE orders
            self._failed |= not self.execute(line)
            return True
        name, *args = line.strip().rstrip(";").split()
        command = name[1:].lower()
        if name.startswith("\\") or command not in names:
            typed = line.split()[0]
            meant = nearest(typed, command_names(names))
            hint = f"did you mean {meant}?" if meant else "type .help for the list"
            self.error(f"unknown command {typed}; {hint}")
            self._failed = True
            return True

        if command in ("import", "nullvalue"):  # quoted: 'my data.csv', .nullvalue ''
            try:
                args = shlex.split(line.strip().rstrip(";"))[1:]
            except ValueError:  # an unclosed quote
                return self._usage(command)
        result: bool = getattr(self, f"_meta_{command}")(args)
        self.catalog_epoch += 1  # .import may create a table, .open opens another lakehouse
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

    def _meta_timer(self, args: list[str]) -> bool:
        if len(args) > 1 or (args and args[0].lower() not in ("on", "off")):
            return self._usage("timer")
        return self._meta_timing(args)

    def _meta_schema(self, args: list[str]) -> bool:
        if len(args) > 1:
            return self._usage("schema")
        self._failed |= not self._run(lambda: create_statements(self.connection, *args))
        return True

    def _meta_open(self, args: list[str]) -> bool:
        from trinity_dbapi import Error
        from trinity_dbapi.storage.redact import redact_userinfo

        if len(args) != 1:
            return self._usage("open")
        if self.connect is None:
            self.error(".open is not available here; start trinity with the lakehouse's URI")
            self._failed = True
            return True
        try:
            connection = self.connect(args[0])
        except Error as exc:  # the current lakehouse stays open
            self.error(error_message(exc))
            self._failed = True
            return True
        self.finish()
        self.connection.close()
        self.connection, self._cursor = connection, None
        self.location = redact_userinfo(args[0])  # never a password on the screen
        self._created_said = False
        self.catalog_epoch += 1
        if self.progress is not None:
            connection.progress = self.progress
        self._print(f"connected to {self.location}")
        return True

    def finish(self) -> None:
        """Roll back a transaction left open (the shell is leaving), saying so on ``err``."""
        from trinity_dbapi import Error

        if not getattr(self.connection, "in_transaction", False):
            return
        try:
            self.connection.rollback()
        except Error as exc:
            self.error(error_message(exc))
            return
        self._note("rolled back the open transaction: end it with COMMIT to keep its changes")

    def _meta_maxrows(self, args: list[str]) -> bool:
        display = self.display
        if not args:
            limit = "auto (a screenful)" if display.max_rows is None else display.max_rows
            self._print(f"maxrows is {limit}")
            return True
        value = args[0].lower()
        if len(args) != 1 or not (value == "auto" or value.lstrip("-").isdigit()):
            return self._usage("maxrows")
        # 0 and -1 show every row, as duckdb's .maxrows -1 does.
        display.max_rows = None if value == "auto" else max(int(value), 0)
        return True

    def _meta_pager(self, args: list[str]) -> bool:
        if not args:
            self._print(f"pager is {'on' if self.display.pager else 'off'}")
            return True
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            return self._usage("pager")
        self.display.pager = args[0].lower() == "on"
        return True

    def _meta_expanded(self, args: list[str]) -> bool:
        display = self.display
        if len(args) > 1 or (args and args[0].lower() not in EXPANDED):
            return self._usage("expanded")
        # Without an argument it toggles, as psql's \x does.
        display.expanded = args[0].lower() if args else "on" if display.expanded == "off" else "off"
        setting = "used automatically" if display.expanded == "auto" else display.expanded
        self._print(f"Expanded display is {setting}.")
        return True

    def _meta_nullvalue(self, args: list[str]) -> bool:
        if not args:
            null = self.display.null
            self._print("nullvalue is " + ("NULL (the default)" if null is None else repr(null)))
            return True
        if len(args) != 1:
            return self._usage("nullvalue")
        self.display.null = args[0]
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
            rows = import_file(self.connection, path, table, fmt=fmt, created=self._note)
            return format_status(rows) if self.mode == "table" else None

        self._failed |= not self._run(load)
        return True

    # -- the read loop

    def interact(self, read_line: Callable[[str], str]) -> bool:
        """Read, run and print until ``.quit`` or end of input.

        Lines accumulate until they end a statement (:func:`is_complete`);
        a line starting with ``.`` or ``\\`` at the start of a statement is a
        command, and so are ``help``, ``quit`` and ``exit`` alone on it.
        Ctrl-C (KeyboardInterrupt) drops the unfinished input. Text left
        unfinished at end of input is run as it is. The prompt shows an
        open transaction (:data:`TRANSACTION_PROMPT`).

        Args:
            read_line: reads one line without its line break, given the
                prompt; raises EOFError at end of input (``input`` does both).
                If it has a ``remember(lines)`` method, it is given the lines
                of each statement typed over several lines (the history keeps
                them as one entry).

        Returns:
            True if no statement or meta-command failed.
        """
        from sqlglot.errors import TokenError

        self._failed = False
        remember = getattr(read_line, "remember", None)
        buffer = ""
        typed: list[str] = []  # the lines of the statement being typed
        while True:
            self.pending = buffer
            try:
                line = read_line(self.prompt(continued=bool(buffer)))
            except KeyboardInterrupt:
                buffer, typed = "", []
                self._print("")
                continue
            except EOFError:
                break
            if not buffer and is_command(line):
                if not self.meta(line):
                    return not self._failed
                continue
            buffer = f"{buffer}\n{line}" if buffer else line
            typed.append(line)
            try:
                statements, buffer = split_complete(buffer)
            except TokenError:  # inside a string, quoted name or comment
                continue
            if not buffer:
                if len(typed) > 1 and remember is not None:
                    remember(typed)
                typed = []
            for statement in statements:
                self._failed |= not self.execute(statement)
        if buffer.strip():
            self._failed |= not self.run_script(buffer)
        return not self._failed

    def prompt(self, *, continued: bool = False) -> str:
        """The prompt: :data:`TRANSACTION_PROMPT` while a transaction is open.

        On a branch other than main it names the branch: ``trinity(dev)> ``,
        ``trinity(dev)*> ``.
        """
        if continued:
            return CONTINUATION_PROMPT
        shown = TRANSACTION_PROMPT if getattr(self.connection, "in_transaction", False) else PROMPT
        branch = self.branch
        return shown if branch is None else shown.replace("trinity", f"trinity({branch})", 1)

    @property
    def branch(self) -> str | None:
        """The branch the connection reads and writes (``USE BRANCH``), None on main."""
        lakehouse = getattr(getattr(self.connection, "session", None), "lakehouse", None)
        branch = getattr(lakehouse, "branch", None)
        return branch if isinstance(branch, str) else None


def stream_reader(stream: IO[str]) -> Callable[[str], str]:
    """A ``read_line`` for :meth:`Shell.interact` over a non-interactive stream."""

    def read_line(prompt: str) -> str:
        line = stream.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n").rstrip("\r")

    return read_line
