"""Which table functions user SQL may call: those that read no file and run no SQL text.

Queries read lakehouse tables. DuckDB's file-reading table functions
(``read_csv``, ``read_text``, ``glob``, ``parquet_metadata``, ...) are refused
before the query reaches the private DuckDB, by a whitelist: a function in a
table position (``FROM f(...)``, ``JOIN f(...)``, ``LATERAL f(...)``,
``ROWS FROM (f(...))``, in any subquery or common table expression) must be one
of :data:`ALLOWED_TABLE_FUNCTIONS`. A whitelist rather than a list of file
readers, because DuckDB (and every extension) keeps adding readers, and because
the sandbox of :mod:`trinity_dbapi.sql.engine.sandbox` checks a file's path as text:
``<root>/link/../x`` with ``link`` a symbolic link inside the root passes it.
Refusing every path-taking function closes that at the statement, and the
sandbox stays as a second wall for the scans trinity itself generates.

Elsewhere in a statement a name that DuckDB knows only as a table function (or
pragma) and that is not whitelisted is refused too: DuckDB would reject it
there anyway, so this costs nothing and keeps the rule independent of where
sqlglot happens to put a function node.

Imports from sql/: nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading

from sqlglot import exp

from trinity_dbapi.errors import NotSupportedError

#: Table functions that read no file, list no directory, run no SQL text,
#: change no state of the private DuckDB and show none of its internals.
#: ``duckdb_functions``/``duckdb_keywords``/``duckdb_types`` describe the SQL
#: language itself (Superset's autocompletion lists ``duckdb_functions()``);
#: the other ``duckdb_*`` and ``pragma_*`` functions describe the private
#: engine (its settings, with the sandbox's private path, its registered scans,
#: memory, logs, secrets, temporary files), which the lakehouse's own
#: ``system.*`` tables replace.
ALLOWED_TABLE_FUNCTIONS = frozenset(
    {
        "range",
        "generate_series",
        "unnest",
        "repeat",
        "repeat_row",
        "json_each",
        "json_tree",
        "pg_timezone_names",
        "icu_calendar_names",
        "duckdb_functions",
        "duckdb_keywords",
        "duckdb_types",
    }
)

#: The lakehouse's own table functions, called as ``system.<name>(...)``. The
#: engine computes them from the lakehouse (DuckDB never sees the call), so
#: they read only what every query may read.
LAKEHOUSE_TABLE_FUNCTIONS = frozenset({"table_changes"})

_RULE = (
    "queries read lakehouse tables only; table functions that read files or run SQL text "
    "are not allowed (allowed: {allowed}, and the lakehouse's system.table_changes)"
)
_FIX = (
    "to query a file, load it into a table first with Cursor.ingest or the trinity shell's "
    ".import, then select from that table"
)
_HEAD = re.compile(r'\s*("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)\s*\(')


def check_table_functions(expression: exp.Expression) -> None:
    """Refuse every table function of ``expression`` outside the whitelist.

    Raises:
        NotSupportedError: A table function that is not in
            :data:`ALLOWED_TABLE_FUNCTIONS` (named, with the rule and the fix).
    """
    for node in expression.find_all(exp.Func):
        if lakehouse_function(node) is not None:
            continue
        if isinstance(node.parent, (exp.Table, exp.Lateral)):
            name = _duckdb_name(node)
            if name not in ALLOWED_TABLE_FUNCTIONS:
                raise _refusal(name)
        else:
            for name in _plain_names(node):
                if name in _table_only_names():
                    raise _refusal(name)


def lakehouse_function(node: object) -> str | None:
    """The name of the lakehouse table function ``node`` calls in a FROM clause, or None.

    Only a call written ``system.<name>(...)`` as a table (``FROM``,
    ``JOIN``) is one: the name alone is DuckDB's to resolve, and refused.
    """
    if not isinstance(node, exp.Anonymous):
        return None
    parent = node.parent
    if not isinstance(parent, exp.Table):
        return None
    if parent.this is not node or parent.args.get("catalog") is not None:
        return None
    db = parent.args.get("db")
    name = node.name.lower()
    if isinstance(db, exp.Identifier) and db.name == "system" and name in LAKEHOUSE_TABLE_FUNCTIONS:
        return name
    return None


def refuse_file_name(name: str) -> NotSupportedError:
    """The error for a string used as a table (DuckDB would read it as a file)."""
    return NotSupportedError(
        f"{name!r} is a string in a table position, which DuckDB reads as a file: "
        f"{_RULE.format(allowed=', '.join(sorted(ALLOWED_TABLE_FUNCTIONS)))}; name a lakehouse "
        f'table as [namespace.]table (quote it as "name" if it must be quoted); {_FIX}'
    )


def _refusal(name: str) -> NotSupportedError:
    return NotSupportedError(
        f"table function {name!r} is not allowed: "
        f"{_RULE.format(allowed=', '.join(sorted(ALLOWED_TABLE_FUNCTIONS)))}; {_FIX}"
    )


def _duckdb_name(node: exp.Func) -> str:
    """The function's name as DuckDB will see it (lower-cased: DuckDB ignores case)."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    # A typed node: sqlglot may rename it when generating DuckDB's SQL
    # (GenerateSeries becomes RANGE), and that text is what DuckDB runs.
    match = _HEAD.match(node.sql(dialect="duckdb"))
    if match is None:
        return type(node).__name__.lower()  # no call syntax: not a table function
    head = match.group(1)
    if head.startswith('"'):
        head = head[1:-1].replace('""', '"')
    return head.lower()


def _plain_names(node: exp.Func) -> list[str]:
    # Cheap (no SQL generation): a function outside a table position is only
    # checked against DuckDB's table-only names.
    if isinstance(node, exp.Anonymous):
        return [node.name.lower()]
    return [name.lower() for name in node.sql_names()]


_names: frozenset[str] | None = None
_names_lock = threading.Lock()
_learning = False


def _table_only_names() -> frozenset[str]:
    """DuckDB's names that are only table functions or pragmas, less the whitelist.

    Asked of DuckDB once per process (about 40 ms: a database and a catalog
    query); a caller arriving while :func:`learn_ahead`'s thread asks waits
    for its answer instead of asking again.
    """
    global _names
    if _names is not None:
        return _names
    with _names_lock:
        if _names is None:
            import duckdb  # the sql layer's engine; imported on the first check only

            with duckdb.connect() as duck:
                rows = duck.execute(
                    "SELECT function_name FROM duckdb_functions() GROUP BY function_name "
                    "HAVING bool_and(function_type IN ('table', 'table_macro', 'pragma'))"
                ).fetchall()
            _names = frozenset(str(name).lower() for (name,) in rows) - ALLOWED_TABLE_FUNCTIONS
        return _names


def learn_ahead() -> None:
    """Ask DuckDB for its table-only names on a background thread, if not known yet.

    A connection to a remote root calls this before its first requests: the
    question then overlaps the round trips of opening, instead of adding its
    time to the first statement. Errors are left to the first statement
    that needs the names (it asks again).
    """
    global _learning
    if _names is not None or _learning:
        return
    _learning = True

    def learn() -> None:
        with contextlib.suppress(Exception):
            _table_only_names()

    # Not a daemon: the interpreter joins it before it finalizes, so DuckDB is
    # never torn down under it (a daemon thread there aborted the process).
    threading.Thread(target=learn, name="trinity-sql-names").start()


def _after_fork() -> None:
    # A thread of the parent that held the lock does not exist in the child.
    global _names_lock, _learning
    _names_lock = threading.Lock()
    _learning = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
