"""Syntax errors a user can act on: position, offending text, underlined snippet, hint.

A statement that does not parse and holds a placeholder of another
paramstyle (``%s``, ``%(name)s``, ``:name``: psycopg's, sqlite3's named) is
told the paramstyle (``qmark``: ``?``) instead of what the parser met there.

Imports from sql/: parser_base.
"""

from __future__ import annotations

import re

from sqlglot.errors import ParseError, TokenError

from trinity_dbapi.errors import SQLSyntaxError
from trinity_dbapi.sql.parser_base import DEFAULT_HINT


def _position(sql: str, offset: int) -> tuple[int, int]:
    line = sql.count("\n", 0, offset) + 1
    return line, offset - (sql.rfind("\n", 0, offset) + 1) + 1


def _snippet(sql: str, start: int, end: int) -> str:
    """The line holding ``start`` with the range underlined (at most ~100 characters)."""
    line_start = sql.rfind("\n", 0, start) + 1
    line_end = sql.find("\n", start)
    line_end = len(sql) if line_end < 0 else line_end
    left = max(line_start, start - 60)
    right = min(line_end, max(end + 1, start + 1) + 40)
    text = sql[left:right].replace("\t", " ")
    width = max(1, min(end, right - 1) - start + 1)
    return f"  {text}\n  {' ' * (start - left)}{'^' * width}"


#: What cannot hold a placeholder: strings, quoted names, comments (blanked out first).
_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.DOTALL)

#: Placeholders of the other paramstyles: format, pyformat, named.
_FOREIGN = re.compile(r"%s|%\([A-Za-z_]\w*\)s|(?<=[\s(,=<>])(?<!::):[A-Za-z_]\w*")

_STYLES = {"%s": "format", "%(": "pyformat", ":": "named"}


def foreign_placeholder(sql: str) -> SQLSyntaxError | None:
    """The error of a placeholder of another paramstyle in ``sql``, if it holds one."""
    blanked = _QUOTED.sub(lambda m: " " * len(m.group(0)), sql)
    match = _FOREIGN.search(blanked)
    if match is None:
        return None
    text = match.group(0)
    style = _STYLES[text[:2] if text.startswith("%") else ":"]
    line, column = _position(sql, match.start())
    return SQLSyntaxError(
        f"SQL syntax error at line {line}, column {column} near {text!r}: {text} is a "
        f"placeholder of the {style} paramstyle, but paramstyle is qmark: write ? for each "
        "value and pass the values as a list or tuple, in the order of the ?s\n"
        f"{_snippet(sql, match.start(), match.end() - 1)}\n"
        "hint: cursor.execute(\"SELECT * FROM t WHERE id = ? AND name = ?\", (42, 'x'))",
        line=line,
        column=column,
        text=text,
    )


def syntax_error(sql: str, error: ParseError) -> SQLSyntaxError:
    """The :class:`SQLSyntaxError` of a sqlglot parse error of ``sql``."""
    foreign = foreign_placeholder(sql)
    if foreign is not None:
        return foreign
    info = error.errors[0] if error.errors else {}
    description = info.get("description") or str(error)
    start = info.get("start")
    if start is None or start > len(sql):
        line, column, text, snippet = int(info.get("line") or 0), 0, "", ""
    else:
        end = max(start, int(info.get("end") or start))
        line, column = _position(sql, start)
        text = sql[start : end + 1]
        snippet = "\n" + _snippet(sql, start, end)
    hint = info.get("hint") or DEFAULT_HINT
    near = f" near {text!r}" if text else ""
    return SQLSyntaxError(
        f"SQL syntax error at line {line}, column {column}{near}: {description}{snippet}\n"
        f"hint: {hint}",
        line=line,
        column=column,
        text=text,
    )


def token_error(sql: str, start: int | None, error: TokenError) -> SQLSyntaxError:
    """The :class:`SQLSyntaxError` of text that does not tokenize from offset ``start`` on."""
    start = start if isinstance(start, int) and 0 <= start < len(sql) else 0
    line, column = _position(sql, start)
    text = sql[start : start + 20]
    return SQLSyntaxError(
        f"SQL syntax error at line {line}, column {column} near {text!r}: the text cannot be "
        f"split into tokens from here on ({error.__cause__ or error})\n"
        f"{_snippet(sql, start, start)}\n"
        "hint: close every 'string', \"quoted name\" and /* comment */",
        line=line,
        column=column,
        text=text,
    )
