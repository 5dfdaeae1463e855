"""``trinity``: the command-line SQL shell of trinity-dbapi.

``trinity URI`` opens an interactive shell on the lakehouse at ``URI``;
``trinity URI -c SQL`` and ``trinity URI -f FILE`` run statements and exit.
docs/cli.md is the user manual; this package is organized as the shell works:

- :mod:`.statements`, statement splitting (:func:`split_statements`): sqlglot's
  tokenizer finds the semicolons that end statements, so a ``;`` inside a
  string, a quoted name, a dollar-quoted string or a comment never splits one;
- :mod:`.formats`, result formatting (:data:`FORMATTERS`): ``table``, ``csv``,
  ``json``, ``markdown`` and ``line``, each a pure function of the column
  names and the rows, and the expanded display and plans;
- :mod:`.display`, :class:`~.display.Display`: what a person at a terminal
  sees of a result (a streamed screenful, ``\\x``, NULL dimmed, the pager);
- :mod:`.shell`, the :class:`Shell`: runs statements through the DB-API driver
  in autocommit mode, prints results, handles meta-commands (``.help``,
  ``.mode``...) and the interactive read loop;
- :mod:`.aliases`: other shells' spellings (``\\q``, ``\\dt``, ``help``,
  ``quit``) of the shell's commands, and the nearest command to a typo;
- :mod:`.completion`: tab completion of keywords, namespaces, tables,
  columns, procedures and dot-commands from the catalog;
- :mod:`.interactive`: what a person at a terminal gets: the banner, the
  starting namespace, readline's completion and history;
- :mod:`.command`, :func:`main`: options, connection, exit codes (0 success,
  1 SQL or connection error, 2 usage error);
- :mod:`.progress`, :class:`TerminalProgress`: the progress bars, drawn on
  stderr when it is a terminal;
- :mod:`.importer`: ``.import FILE TABLE`` (CSV, TSV, Parquet, NDJSON).

Importing this package is cheap: the driver, pyarrow and sqlglot are imported
on first use, so ``trinity --version`` and ``trinity --help`` start fast.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``aliases`` (other shells' commands, typos), ``completion`` (tab
   completion), ``formats`` (result formats), ``importer`` (``.import``),
   ``progress`` (the bar), ``statements`` (splitting input into statements)
2. ``display`` (results at a terminal: a screenful, ``\\x``, NULL, the pager)
3. ``shell`` (the interactive loop and dot-commands)
4. ``interactive`` (banner, starting namespace, readline)
5. ``command`` (the ``trinity`` program: arguments, ``-c``, ``-f``)
6. ``__main__`` (``python -m trinity_dbapi.cli``)
"""

from __future__ import annotations

from trinity_dbapi.cli.command import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    build_parser,
    main,
    run,
    storage_options,
)
from trinity_dbapi.cli.formats import (
    FORMATTERS,
    format_csv,
    format_expanded,
    format_json,
    format_line,
    format_markdown,
    format_status,
    format_table,
    iso_duration,
    json_safe,
    row_count,
    text,
)
from trinity_dbapi.cli.interactive import HISTORY_FILE, HISTORY_LENGTH
from trinity_dbapi.cli.progress import TerminalProgress
from trinity_dbapi.cli.shell import (
    CONTINUATION_PROMPT,
    META_COMMANDS,
    PROMPT,
    TRANSACTION_PROMPT,
    Shell,
)
from trinity_dbapi.cli.statements import SPLIT_DIALECT, is_complete, split_statements

__all__ = [
    "CONTINUATION_PROMPT",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "FORMATTERS",
    "HISTORY_FILE",
    "HISTORY_LENGTH",
    "META_COMMANDS",
    "PROMPT",
    "SPLIT_DIALECT",
    "TRANSACTION_PROMPT",
    "Shell",
    "TerminalProgress",
    "build_parser",
    "format_csv",
    "format_expanded",
    "format_json",
    "format_line",
    "format_markdown",
    "format_status",
    "format_table",
    "is_complete",
    "iso_duration",
    "json_safe",
    "main",
    "row_count",
    "run",
    "split_statements",
    "storage_options",
    "text",
]
