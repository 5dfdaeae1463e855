"""``trinity``: the command-line SQL shell of trinity-dbapi.

``trinity URI`` opens an interactive shell on the lakehouse at ``URI``;
``trinity URI -c SQL`` and ``trinity URI -f FILE`` run statements and exit.
docs/cli.md is the user manual; this module is organized as the shell works:

- statement splitting (:func:`split_statements`): sqlglot's tokenizer finds the
  semicolons that end statements, so a ``;`` inside a string, a quoted name, a
  dollar-quoted string or a comment never splits one;
- result formatting (:data:`FORMATTERS`): ``table``, ``csv`` and ``json``, each a
  pure function of the column names and the rows;
- the :class:`Shell`: runs statements through the DB-API driver in autocommit
  mode, prints results, handles meta-commands (``.help``, ``.mode``...) and
  the interactive read loop;
- :func:`main`: options, connection, exit codes (0 success, 1 SQL or
  connection error, 2 usage error).

Importing this module is cheap: the driver, pyarrow and sqlglot are imported
on first use, so ``trinity --version`` and ``trinity --help`` start fast.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import datetime
import decimal
import json
import math
import os
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from typing import IO, Any

from trinity_dbapi import __version__

#: Prompt of a new statement, and of the following lines of an unfinished one.
PROMPT = "trinity> "
CONTINUATION_PROMPT = "     -> "
#: Where the interactive shell keeps its input history (``TRINITY_HISTORY`` overrides).
HISTORY_FILE = "~/.trinity_history"
HISTORY_LENGTH = 1000
#: The sqlglot dialect whose tokenizer splits statements.
SPLIT_DIALECT = "duckdb"

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


# --- statement splitting ----------------------------------------------------------


def _split(sql: str) -> tuple[list[str], str]:
    """The complete statements of ``sql`` and the unfinished text after them.

    Raises:
        sqlglot.errors.TokenError: ``sql`` ends inside a string, a quoted
            name or a comment (or holds text sqlglot cannot tokenize).
    """
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.tokens import TokenType

    statements: list[str] = []
    start = 0
    pending = False
    for token in Dialect.get_or_raise(SPLIT_DIALECT).tokenize(sql):
        if token.token_type == TokenType.SEMICOLON:
            if pending:
                statements.append(sql[start : token.start].strip())
            start, pending = token.end + 1, False
        else:
            pending = True
    return statements, sql[start:].strip() if pending else ""


def split_statements(sql: str) -> list[str]:
    """Split ``sql`` into statements, without their terminating semicolons.

    Semicolons inside strings, quoted names, dollar-quoted strings and comments
    do not end statements; empty statements (``;;``, a lone comment) are
    dropped; the last statement needs no semicolon.

    Raises:
        sqlglot.errors.TokenError: ``sql`` ends inside a string, a quoted
            name or a comment.
    """
    statements, rest = _split(sql)
    return [*statements, rest] if rest else statements


def is_complete(sql: str) -> bool:
    """Whether ``sql`` ends a statement: the interactive shell then runs it.

    True when every statement in ``sql`` ends with a semicolon (or when it
    holds only whitespace and comments); False when text follows the last
    semicolon or ``sql`` stops inside a string, a quoted name or a comment.
    """
    from sqlglot.errors import TokenError

    try:
        return not _split(sql)[1]
    except TokenError:
        return False


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


# --- the shell --------------------------------------------------------------------

#: Meta-commands: name, arguments, help. ``.name`` runs ``Shell._meta_<name>``.
META_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("help", "", "show this help"),
    ("quit", "", "leave the shell (also Ctrl-D)"),
    ("exit", "", "leave the shell"),
    ("timing", "on|off", "print how long each statement takes"),
    ("mode", "table|csv|json", "choose the output format"),
    ("tables", "", "list the tables (SHOW TABLES)"),
)


def _error_message(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class Shell:
    """Runs statements on one connection and prints their results.

    Args:
        connection: an open DB-API connection, in autocommit mode.
        mode: the output format, a key of :data:`FORMATTERS`.
        timing: whether to print each statement's elapsed time (to ``err``).
        out: where results go.
        err: where errors and timings go.
    """

    def __init__(
        self,
        connection: Any,
        *,
        mode: str = "table",
        timing: bool = False,
        out: IO[str] | None = None,
        err: IO[str] | None = None,
    ) -> None:
        self.connection = connection
        self.mode = mode
        self.timing = timing
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self._cursor: Any = None
        self._failed = False

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
        from trinity_dbapi import Error

        started = time.perf_counter()
        try:
            if self._cursor is None:
                self._cursor = self.connection.cursor()
            cursor = self._cursor
            cursor.execute(sql)
            if cursor.description is None:
                output = format_status(cursor.rowcount) if self.mode == "table" else None
            else:
                columns = [column[0] for column in cursor.description]
                output = FORMATTERS[self.mode](columns, cursor.fetchall())
        except Error as exc:
            self.error(_error_message(exc))
            return False
        except KeyboardInterrupt:
            self.error("interrupted")
            return False
        elapsed = time.perf_counter() - started
        if output is not None:
            self._print(output)
        if self.timing:
            self.out.flush()
            self.err.write(f"Time: {elapsed * 1000:.3f} ms\n")
            self.err.flush()
        return True

    def run_script(self, sql: str) -> bool:
        """Run every statement of ``sql`` in order, stopping at the first failure."""
        from sqlglot.errors import TokenError

        try:
            statements = split_statements(sql)
        except TokenError as exc:
            self.error(f"unterminated string, quoted name or comment: {exc}")
            return False
        return all(self.execute(statement) for statement in statements)

    # -- meta-commands

    def meta(self, line: str) -> bool:
        """Run a meta-command line (``.mode csv``); False when the shell should stop."""
        name, *args = line.strip().rstrip(";").split()
        command = name[1:].lower()
        if command not in {n for n, _, _ in META_COMMANDS}:
            self.error(f"unknown command {name}; type .help for the list")
            self._failed = True
            return True
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
                statements, buffer = _split(buffer)
            except TokenError:  # inside a string, quoted name or comment
                continue
            for statement in statements:
                self._failed |= not self.execute(statement)
        if buffer.strip():
            self._failed |= not self.run_script(buffer)
        return not self._failed


def _stream_reader(stream: IO[str]) -> Callable[[str], str]:
    """A ``read_line`` for :meth:`Shell.interact` over a non-interactive stream."""

    def read_line(prompt: str) -> str:
        line = stream.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n").rstrip("\r")

    return read_line


def _terminal_reader(prompt: str) -> str:
    """``input`` (with readline editing and history), ending the line on Ctrl-D."""
    try:
        return input(prompt)
    except EOFError:
        sys.stdout.write("\n")
        raise


def _enable_history() -> Callable[[], None] | None:
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


# --- command line -----------------------------------------------------------------


def _storage_option(item: str) -> tuple[list[str], Any]:
    """Parse ``KEY=VALUE``: dotted keys nest, ``true``/``false`` are booleans."""
    key, sep, value = item.partition("=")
    path = key.strip().split(".")
    if not sep or not all(path):
        raise argparse.ArgumentTypeError(
            f"{item!r} is not KEY=VALUE (for example client_kwargs.endpoint_url=http://host:9000)"
        )
    flags = {"true": True, "false": False}
    return path, flags.get(value.lower(), value)


def storage_options(items: Sequence[tuple[list[str], Any]]) -> dict[str, Any]:
    """Nest parsed ``--storage-option`` items into one dict.

    Raises:
        ValueError: a key is given both a value and nested keys.
    """
    leaves = {tuple(path) for path, _ in items}
    groups = {tuple(path[:depth]) for path, _ in items for depth in range(1, len(path))}
    clash = sorted(leaves & groups)
    if clash:
        name = ".".join(clash[0])
        raise ValueError(f"storage option {name} is given both a value and nested options")
    options: dict[str, Any] = {}
    for path, value in items:
        node = options
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return options


class _AppendScript(argparse.Action):
    """Collects ``-c`` and ``-f`` in command-line order as ``(kind, text)``."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        scripts = list(getattr(namespace, self.dest) or [])
        scripts.append((self.const, values))
        setattr(namespace, self.dest, scripts)


def build_parser() -> argparse.ArgumentParser:
    """The ``trinity`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="trinity",
        description="SQL shell for a Trinity Lakehouse. Without -c or -f it reads "
        "statements interactively (or from standard input).",
        epilog="Exit status: 0 on success, 1 on a SQL or connection error, 2 on a usage error.",
    )
    parser.add_argument("uri", help="root URI of the lakehouse: a folder, s3://bucket/path, ...")
    parser.add_argument(
        "-c",
        "--command",
        dest="scripts",
        metavar="SQL",
        action=_AppendScript,
        const="sql",
        help="run SQL (one or more ;-separated statements) and exit; repeatable",
    )
    parser.add_argument(
        "-f",
        "--file",
        dest="scripts",
        metavar="FILE",
        action=_AppendScript,
        const="file",
        help="run the statements of FILE ('-' for standard input) and exit; repeatable",
    )
    parser.add_argument(
        "--format",
        choices=sorted(FORMATTERS),
        default="table",
        help="output format (default: table)",
    )
    parser.add_argument(
        "--timing", action="store_true", help="print each statement's elapsed time on stderr"
    )
    parser.add_argument(
        "--storage-option",
        dest="storage_options",
        metavar="KEY=VALUE",
        type=_storage_option,
        action="append",
        default=[],
        help="storage (fsspec) option, repeatable; dotted keys nest "
        "(client_kwargs.endpoint_url=...), true/false are booleans",
    )
    parser.add_argument(
        "--no-create",
        action="store_true",
        help="fail if there is no lakehouse at URI instead of creating one",
    )
    parser.add_argument("-n", "--namespace", help="default namespace of unqualified table names")
    parser.add_argument("--read-only", action="store_true", help="refuse every write")
    parser.add_argument("--version", action="version", version=f"trinity {__version__}")
    return parser


def _read_scripts(parser: argparse.ArgumentParser, scripts: Sequence[tuple[str, str]]) -> list[str]:
    texts = []
    for kind, value in scripts:
        if kind == "sql":
            texts.append(value)
            continue
        try:
            if value == "-":
                texts.append(sys.stdin.read())
            else:
                with open(value, encoding="utf-8") as file:
                    texts.append(file.read())
        except (OSError, UnicodeDecodeError) as exc:
            parser.error(f"cannot read -f {value}: {exc}")
    return texts


def _connect(args: argparse.Namespace, options: dict[str, Any]) -> Any:
    import trinity_dbapi

    extra: dict[str, Any] = {}
    if args.namespace is not None:
        extra["namespace"] = args.namespace
    if args.read_only:
        extra["read_only"] = True
    return trinity_dbapi.connect(
        args.uri,
        storage_options=options or None,
        create=not args.no_create,
        autocommit=True,
        **extra,
    )


def run(args: argparse.Namespace, scripts: Sequence[str], options: dict[str, Any]) -> int:
    """Connect, run the scripts (or the interactive shell) and return the exit code."""
    from trinity_dbapi import Error

    try:
        connection = _connect(args, options)
    except Error as exc:
        sys.stderr.write(f"Error: {_error_message(exc)}\n")
        return EXIT_ERROR
    try:
        shell = Shell(connection, mode=args.format, timing=args.timing)
        if scripts:
            ok = all(shell.run_script(script) for script in scripts)
            return EXIT_OK if ok else EXIT_ERROR
        if not sys.stdin.isatty():
            return EXIT_OK if shell.interact(_stream_reader(sys.stdin)) else EXIT_ERROR
        save_history = _enable_history()
        try:
            shell.interact(_terminal_reader)
        finally:
            if save_history is not None:
                save_history()
        return EXIT_OK
    finally:
        _close(connection)


def _close(connection: Any) -> None:
    from trinity_dbapi import Error

    try:
        connection.close()
    except Error as exc:
        sys.stderr.write(f"Error: {_error_message(exc)}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``trinity`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        options = storage_options(args.storage_options)
    except ValueError as exc:
        parser.error(str(exc))
    scripts = _read_scripts(parser, args.scripts or [])
    try:
        return run(args, scripts, options)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into a command that stopped reading
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
