"""Syntax errors a user can act on: position, offending text, underlined snippet, hint.

Imports from sql/: parser_base.
"""

from __future__ import annotations

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


def syntax_error(sql: str, error: ParseError) -> SQLSyntaxError:
    """The :class:`SQLSyntaxError` of a sqlglot parse error of ``sql``."""
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
