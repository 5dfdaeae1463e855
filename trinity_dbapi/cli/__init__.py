"""``trinity``: the command-line SQL shell of trinity-dbapi.

``trinity URI`` opens an interactive shell on the lakehouse at ``URI``;
``trinity URI -c SQL`` and ``trinity URI -f FILE`` run statements and exit.
docs/cli.md is the user manual; this package is organized as the shell works:

- :mod:`.statements`, statement splitting (:func:`split_statements`): sqlglot's
  tokenizer finds the semicolons that end statements, so a ``;`` inside a
  string, a quoted name, a dollar-quoted string or a comment never splits one;
- :mod:`.formats`, result formatting (:data:`FORMATTERS`): ``table``, ``csv``
  and ``json``, each a pure function of the column names and the rows;
- :mod:`.shell`, the :class:`Shell`: runs statements through the DB-API driver
  in autocommit mode, prints results, handles meta-commands (``.help``,
  ``.mode``...) and the interactive read loop;
- :mod:`.command`, :func:`main`: options, connection, exit codes (0 success,
  1 SQL or connection error, 2 usage error);
- :mod:`.progress`, :class:`TerminalProgress`: the progress bars, drawn on
  stderr when it is a terminal;
- :mod:`.importer`: ``.import FILE TABLE`` (CSV, TSV, Parquet, NDJSON).

Importing this package is cheap: the driver, pyarrow and sqlglot are imported
on first use, so ``trinity --version`` and ``trinity --help`` start fast.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``formats`` (result formats), ``importer`` (``.import``), ``progress``
   (the bar), ``statements`` (splitting input into statements)
2. ``shell`` (the interactive loop and dot-commands)
3. ``command`` (the ``trinity`` program: arguments, ``-c``, ``-f``)
4. ``__main__`` (``python -m trinity_dbapi.cli``)
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
    format_json,
    format_status,
    format_table,
    iso_duration,
    json_safe,
    row_count,
    text,
)
from trinity_dbapi.cli.progress import TerminalProgress
from trinity_dbapi.cli.shell import (
    CONTINUATION_PROMPT,
    HISTORY_FILE,
    HISTORY_LENGTH,
    META_COMMANDS,
    PROMPT,
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
    "Shell",
    "TerminalProgress",
    "build_parser",
    "format_csv",
    "format_json",
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
