"""The ``trinity`` command line: options, connection, exit codes.

Exit codes: 0 success, 1 SQL or connection error, 2 usage error. When
standard error is a terminal (and without ``--no-progress``) long statements
draw progress bars there (:class:`~trinity_dbapi.cli.progress.TerminalProgress`).

Imports from cli/: formats, interactive, progress, shell.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from trinity_dbapi import __version__
from trinity_dbapi.cli.formats import FORMATTERS
from trinity_dbapi.cli.interactive import (
    TerminalReader,
    banner,
    enable_history,
    start_namespace,
)
from trinity_dbapi.cli.progress import TerminalProgress
from trinity_dbapi.cli.shell import Shell, error_message, stream_reader

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
    """``--version`` prints the program's version; ``--at-version N`` opens version N.

    ``--version N``, the old spelling of ``--at-version N``, still opens
    version N, with a note on standard error.
    """

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
            parser.error(f"{option_string} takes a lakehouse version number, not {values!r}")
        if option_string == "--version":
            sys.stderr.write(
                f"trinity: note: --version {values} is deprecated; write --at-version {values} "
                "(--version alone prints the program's version)\n"
            )
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
    parser.add_argument(
        "uri",
        nargs="?",
        help="root URI of the lakehouse: a folder, s3://bucket/path, ...; without it, "
        "a new in-memory lakehouse that is gone when trinity ends",
    )
    parser.add_argument(
        "-c",
        "--command",
        dest="scripts",
        metavar="SQL",
        action=_AppendScript,
        const="sql",
        help="run SQL (one or more ;-separated statements), or one command such as "
        "'.import FILE TABLE' or '\\d TABLE', and exit; repeatable",
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
    parser.add_argument(
        "--create",
        action="store_true",
        help="create the lakehouse at URI now, even in a folder that holds other files "
        "(by default a new lakehouse is created by the first write, and only where "
        "the folder is absent or empty)",
    )
    parser.add_argument("-n", "--namespace", help="default namespace of unqualified table names")
    parser.add_argument(
        "--branch",
        metavar="NAME",
        help="read and write branch NAME instead of main (the prompt shows it; "
        "USE BRANCH switches later, SHOW BRANCHES lists them)",
    )
    parser.add_argument("--read-only", action="store_true", help="refuse every write")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="draw no progress bars (by default long statements draw them on stderr "
        "when it is a terminal)",
    )
    parser.add_argument(
        "--at-version",
        action=_Version,
        metavar="N",
        dest="at_version",
        help="read lakehouse version N (read-only, except CALL system.rollback_to_version(N)): "
        "the way in when the latest version is damaged",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs="?",
        metavar="N",
        dest="at_version",
        help="print the program's version and exit (--version N: the old spelling of "
        "--at-version N)",
    )
    return parser


def memory_uri() -> str:
    """The root of the in-memory lakehouse ``trinity`` opens without a URI: this process's own."""
    return f"memory://trinity-{os.getpid()}"


def _read_scripts(
    parser: argparse.ArgumentParser, scripts: Sequence[tuple[str, str]]
) -> list[tuple[str, str, str]]:
    """``-c`` and ``-f`` in order as (kind, text, name): a file's text is read here.

    ``name`` is the file's name as given (``stdin`` for ``-f -``), which its
    errors start with; ``-c`` has none ("").
    """
    texts = []
    for kind, value in scripts:
        if kind == "sql":
            texts.append((kind, value, ""))
            continue
        try:
            if value == "-":
                texts.append((kind, sys.stdin.read(), "stdin"))
            else:
                with open(value, encoding="utf-8") as file:
                    texts.append((kind, file.read(), value))
        except (OSError, UnicodeDecodeError) as exc:
            parser.error(f"cannot read -f {value}: {exc}")
    return texts


def _connect(args: argparse.Namespace, options: dict[str, Any], uri: str | None = None) -> Any:
    """Open the lakehouse at ``uri`` (by default the command line's) with the command line's options.

    ``--branch`` applies to the command line's lakehouse only: ``.open`` of
    another one opens its main, where every lakehouse's work starts.
    """
    import trinity_dbapi

    extra: dict[str, Any] = {}
    if args.namespace is not None:
        extra["namespace"] = args.namespace
    if args.branch is not None and uri is None:
        extra["branch"] = args.branch
    if args.read_only:
        extra["read_only"] = True
    if args.at_version is not None:
        extra["version"] = args.at_version
    return trinity_dbapi.connect(
        uri if uri is not None else args.uri,
        storage_options=options or None,
        # None: the driver's rule (nothing is written before the first write,
        # and a folder holding other files is refused); --create: now, anywhere.
        create=False if args.no_create else (True if args.create else None),
        autocommit=True,
        # The shell's user is a local user: COPY reads and writes their files.
        file_access=[os.path.abspath(os.sep)],
        **extra,
    )


def run(
    args: argparse.Namespace, scripts: Sequence[tuple[str, str, str]], options: dict[str, Any]
) -> int:
    """Connect, run the scripts (or the interactive shell) and return the exit code.

    Each script is ``("sql", text, "")`` (a ``-c``: SQL, or one meta-command
    line) or ``("file", text, name)`` (a ``-f``: SQL, from the file ``name``).
    Without ``args.uri``, the lakehouse is a new in-memory one.
    """
    from trinity_dbapi import Error
    from trinity_dbapi.storage.redact import redact_userinfo

    in_memory = args.uri is None
    if in_memory:
        args.uri = memory_uri()
    try:
        connection = _connect(args, options)
    except Error as exc:
        from trinity_dbapi.errors import NotALakehouseError

        hint = ""
        if isinstance(exc, NotALakehouseError):  # the driver's fix, spelled for this program
            hint = f" (with trinity: trinity --create {args.uri})"
        sys.stderr.write(f"Error: {error_message(exc)}{hint}\n")
        return EXIT_ERROR
    shell: Shell | None = None
    try:
        # Bars on stderr, only for a person watching it: never into a file or a pipe.
        progress = (
            None if args.no_progress else TerminalProgress.for_stream(sys.stderr, leave=False)
        )
        shell = Shell(
            connection,
            mode=args.format,
            timing=args.timing,
            progress=progress,
            connect=lambda uri: _connect(args, options, uri),
            location=redact_userinfo(args.uri),
        )
        # Said to a person (a terminal), not into logs: scripts that make
        # lakehouses on purpose stay quiet.
        shell.tell_creation = sys.stdin.isatty() or sys.stderr.isatty()

        try:
            return _run_shell(shell, scripts, args, in_memory=in_memory)
        finally:
            shell.finish()  # a transaction left open is rolled back, and said so
    finally:
        _close(connection if shell is None else shell.connection)  # .open may have changed it


def _run_shell(
    shell: Shell,
    scripts: Sequence[tuple[str, str, str]],
    args: argparse.Namespace,
    *,
    in_memory: bool,
) -> int:
    """Run the scripts, the statements piped in, or the interactive session."""
    from trinity_dbapi import Error

    if scripts:
        ok = all(
            shell.run_command(text) if kind == "sql" else shell.run_script(text, name=name)
            for kind, text, name in scripts
        )
        return EXIT_OK if ok else EXIT_ERROR
    if not sys.stdin.isatty():
        return EXIT_OK if shell.interact(stream_reader(sys.stdin)) else EXIT_ERROR
    shell.out.write(
        banner(
            __version__,
            shell.location,
            in_memory=in_memory,
            at_version=args.at_version,
            read_only=args.read_only,
            branch=shell.branch,
        )
        + "\n"
    )
    if args.namespace is None and not in_memory:
        try:
            said = start_namespace(shell.connection)
        except Error as exc:  # the session still starts: the user may fix things there
            shell.error(error_message(exc))
        else:
            if said:
                shell.out.write(said + "\n")
    save_history = enable_history()
    shell.exit_on_interrupt = False  # a person at the prompt: Ctrl-C returns to it
    # ... and reading the results there: a screenful, the pager (output to a file stays whole).
    shell.display.interactive = sys.stdout.isatty()
    try:
        shell.interact(TerminalReader(shell))
    finally:
        if save_history is not None:
            save_history()
    return EXIT_OK


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
