"""What a person at a terminal gets: banner, starting namespace, completion, history.

None of it applies to ``-c``, ``-f`` or piped input, so that scripts do not
change meaning when, say, a second namespace appears.

- :func:`banner`: the program's version, where the shell is connected, the
  ``.help`` hint, as sqlite3 and duckdb print;
- :func:`start_namespace`: a session starts in the only user namespace when
  there is exactly one, or says which exist when the current one does not;
- :class:`TerminalReader`: ``input`` with readline's editing, tab completion
  (:func:`~trinity_dbapi.cli.completion.complete`) and a history that keeps
  a statement typed over several lines as one entry (stored with ``\\x01``
  for its line breaks, as psql stores them).

readline is the standard library's (as sqlite3 and psql use GNU readline):
no dependency, nothing to import until the prompt shows.

Imports from cli/: aliases, completion, shell.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from trinity_dbapi.cli.aliases import command_names
from trinity_dbapi.cli.completion import Catalog, complete, quote
from trinity_dbapi.cli.shell import META_COMMANDS, Shell

#: Where the interactive shell keeps its input history (``TRINITY_HISTORY`` overrides).
HISTORY_FILE = "~/.trinity_history"
HISTORY_LENGTH = 1000
#: What stands for a line break inside a history entry in the history file.
HISTORY_LINE_BREAK = "\x01"
#: Characters that end the word being completed: dots and quotes do not
#: (``shop.or``, ``"Order``), nor backslashes (``\\dt``).
WORD_BREAKS = " \t\n`~!@#$%^&*()-=+[{]}|;:',<>/?"
#: Namespaces every lakehouse has: not counted as the user's.
BUILT_IN_NAMESPACES = ("information_schema", "system")


def banner(
    version: str,
    location: str,
    *,
    in_memory: bool,
    at_version: int | None = None,
    read_only: bool = False,
    branch: str | None = None,
) -> str:
    """The lines shown when an interactive session starts (``branch``: the one opened, None for main)."""
    if in_memory:
        where = (
            f"Connected to a transient in-memory lakehouse ({location}): it is gone when "
            'the shell ends; ".open URI" opens one that persists.'
        )
    elif at_version is not None:
        where = f"Connected to {location} at version {at_version} (read-only)."
    else:
        on = f" on branch {branch}" if branch is not None else ""
        where = f"Connected to {location}{on}{' (read-only)' if read_only else ''}."
    return f'trinity {version}\n{where}\nEnter ".help" for usage hints, ".quit" or Ctrl-D to leave.'


def start_namespace(connection: Any) -> str | None:
    """Settle the session's namespace; returns what to tell the user, if anything.

    With exactly one user namespace that is not the current one, ``USE`` it
    (``using namespace shop``); when the current one does not exist and
    there are several, name them.
    """
    names = [
        str(row[0])
        for row in connection.cursor().execute("SHOW NAMESPACES").fetchall()
        if row[0] not in BUILT_IN_NAMESPACES
    ]
    current = connection.namespace
    if current in names or not names:
        return None
    if len(names) == 1:
        connection.cursor().execute(f"USE {quote(names[0])}")
        return f"using namespace {names[0]}"
    return (
        f"namespace {current!r} does not exist; the namespaces are {', '.join(names)}: "
        "USE one, or write namespace.table"
    )


class TerminalReader:
    """``input`` with readline editing, tab completion and history, ending the line on Ctrl-D.

    Args:
        shell: the shell it reads for: completion reads its connection,
            its unfinished statement and its ``catalog_epoch``.
    """

    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self.catalog = Catalog(lambda: (shell.connection, shell.catalog_epoch))
        self._matches: list[str] = []
        self._readline: Any = None
        try:
            import readline
        except ImportError:  # not on every platform: plain input()
            return
        self._readline = readline
        readline.set_completer(self._complete)
        readline.set_completer_delims(WORD_BREAKS)
        if "libedit" in (readline.__doc__ or ""):  # macOS's readline
            readline.parse_and_bind("bind ^I rl_complete")
        else:
            readline.parse_and_bind("tab: complete")

    def __call__(self, prompt: str) -> str:
        try:
            return input(prompt)
        except EOFError:
            sys.stdout.write("\n")
            raise

    def _complete(self, text: str, state: int) -> str | None:
        """readline's completer: the ``state``-th candidate for ``text``."""
        if state == 0:
            readline = self._readline
            line = readline.get_line_buffer()[: readline.get_begidx()]
            before = f"{self.shell.pending}\n{line}" if self.shell.pending else line
            try:
                self._matches = complete(
                    text,
                    before,
                    catalog=self.catalog,
                    current=self.shell.connection.namespace,
                    commands=command_names(name for name, _, _ in META_COMMANDS),
                )
            except Exception:  # noqa: BLE001 - a completion never breaks the prompt
                self._matches = []
        return self._matches[state] if state < len(self._matches) else None

    def remember(self, lines: list[str]) -> None:
        """Replace the history entries of ``lines``, one statement, with one entry."""
        readline = self._readline
        if readline is None:
            return
        typed = [line for line in lines if line]
        length = readline.get_current_history_length()
        # input() added each non-empty line unless it repeated the entry before.
        while typed and length > 0 and readline.get_history_item(length) == typed[-1]:
            readline.remove_history_item(length - 1)
            length -= 1
            last = typed.pop()
            while typed and typed[-1] == last:
                typed.pop()
        readline.add_history("\n".join(lines).strip())


def enable_history() -> Callable[[], None] | None:
    """Load the readline history; returns the function that saves it, if any."""
    try:
        import readline
    except ImportError:  # not on every platform
        return None
    path = os.path.expanduser(os.environ.get("TRINITY_HISTORY", HISTORY_FILE))
    with contextlib.suppress(OSError):  # first run, or unreadable: start empty
        readline.read_history_file(path)
    _recode_history(readline, HISTORY_LINE_BREAK, "\n")
    readline.set_history_length(HISTORY_LENGTH)

    def save() -> None:
        _recode_history(readline, "\n", HISTORY_LINE_BREAK)  # one entry, one line
        with contextlib.suppress(OSError):
            readline.write_history_file(path)

    return save


def _recode_history(readline: Any, old: str, new: str) -> None:
    """Replace ``old`` with ``new`` in every history entry."""
    for index in range(readline.get_current_history_length()):
        item = readline.get_history_item(index + 1)
        if item is not None and old in item:
            readline.replace_history_item(index, item.replace(old, new))
