"""The ``trinity`` command line: options, connection, exit codes.

Exit codes: 0 success, 1 SQL or connection error, 2 usage error. When
standard error is a terminal (and without ``--no-progress``) long statements
draw progress bars there (:class:`~trinity_dbapi.cli.progress.TerminalProgress`).

Imports from cli/: formats, progress, shell.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from trinity_dbapi import __version__
from trinity_dbapi.cli.formats import FORMATTERS
from trinity_dbapi.cli.progress import TerminalProgress
from trinity_dbapi.cli.shell import (
    Shell,
    enable_history,
    error_message,
    stream_reader,
    terminal_reader,
)

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


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


class _Version(argparse.Action):
    """``--version N`` opens version N; a bare ``--version`` prints the program's version."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values is None:
            sys.stdout.write(f"trinity {__version__}\n")  # as argparse's version action
            parser.exit()
        if not (str(values).isascii() and str(values).isdigit()):
            parser.error(f"--version takes a lakehouse version number, not {values!r}")
        setattr(namespace, self.dest, int(values))


def build_parser() -> argparse.ArgumentParser:
    """The ``trinity`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="trinity",
        description="SQL shell for a Trinity Lakehouse. Without -c or -f it reads "
        "statements interactively (or from standard input).",
        epilog="Exit status: 0 on success, 1 on a SQL or connection error, 2 on a usage error, "
        "130 when Ctrl-C stopped a script.",
    )
    parser.add_argument("uri", help="root URI of the lakehouse: a folder, s3://bucket/path, ...")
    parser.add_argument(
        "-c",
        "--command",
        dest="scripts",
        metavar="SQL",
        action=_AppendScript,
        const="sql",
        help="run SQL (one or more ;-separated statements), or one meta-command such as "
        "'.import FILE TABLE', and exit; repeatable",
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
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="draw no progress bars (by default long statements draw them on stderr "
        "when it is a terminal)",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs="?",
        metavar="N",
        dest="at_version",
        help="read lakehouse version N (read-only, except CALL system.rollback_to_version(N)): "
        "the way in when the latest version is damaged; without N, print the program's version",
    )
    return parser


def _read_scripts(
    parser: argparse.ArgumentParser, scripts: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``-c`` and ``-f`` in order as (kind, text): a file's text is read here."""
    texts = []
    for kind, value in scripts:
        if kind == "sql":
            texts.append((kind, value))
            continue
        try:
            if value == "-":
                texts.append((kind, sys.stdin.read()))
            else:
                with open(value, encoding="utf-8") as file:
                    texts.append((kind, file.read()))
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
    if args.at_version is not None:
        extra["version"] = args.at_version
    return trinity_dbapi.connect(
        args.uri,
        storage_options=options or None,
        create=not args.no_create,
        autocommit=True,
        **extra,
    )


def run(
    args: argparse.Namespace, scripts: Sequence[tuple[str, str]], options: dict[str, Any]
) -> int:
    """Connect, run the scripts (or the interactive shell) and return the exit code.

    Each script is ``("sql", text)`` (a ``-c``: SQL, or one meta-command line)
    or ``("file", text)`` (a ``-f``: SQL).
    """
    from trinity_dbapi import Error

    try:
        connection = _connect(args, options)
    except Error as exc:
        sys.stderr.write(f"Error: {error_message(exc)}\n")
        return EXIT_ERROR
    try:
        # Bars on stderr, only for a person watching it: never into a file or a pipe.
        progress = (
            None if args.no_progress else TerminalProgress.for_stream(sys.stderr, leave=False)
        )
        shell = Shell(connection, mode=args.format, timing=args.timing, progress=progress)
        if scripts:
            ok = all(
                shell.run_command(text) if kind == "sql" else shell.run_script(text)
                for kind, text in scripts
            )
            return EXIT_OK if ok else EXIT_ERROR
        if not sys.stdin.isatty():
            return EXIT_OK if shell.interact(stream_reader(sys.stdin)) else EXIT_ERROR
        save_history = enable_history()
        shell.exit_on_interrupt = False  # a person at the prompt: Ctrl-C returns to it
        try:
            shell.interact(terminal_reader)
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
        sys.stderr.write(f"Error: {error_message(exc)}\n")


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
