"""Statement splitting: where the statements of a text end.

sqlglot's tokenizer finds the semicolons that end statements, so a ``;``
inside a string, a quoted name, a dollar-quoted string or a comment never
splits one. sqlglot is imported on first use.

Imports from cli/: nothing.
"""

from __future__ import annotations

import re

#: The sqlglot dialect whose tokenizer splits statements.
SPLIT_DIALECT = "duckdb"


# --- statement splitting ----------------------------------------------------------


def split_complete(sql: str) -> tuple[list[str], str]:
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


def split_located(sql: str) -> list[tuple[str, int, int]]:
    """The statements of ``sql`` (as :func:`split_statements`), each with where it starts.

    Returns:
        ``(statement, line, column)`` for each statement: the 1-based line
        and column of its first character in ``sql``, so that a ``-f`` run
        can give an error's place in the file.

    Raises:
        sqlglot.errors.TokenError: ``sql`` ends inside a string, a quoted
            name or a comment.
    """
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.tokens import TokenType

    located: list[tuple[str, int, int]] = []
    start: int | None = None  # offset of the current statement's first token

    def add(end: int) -> None:
        assert start is not None  # only called with a pending statement
        # From the first token: a comment before it is not the statement's.
        text = sql[start:end].strip()
        line = sql.count("\n", 0, start) + 1
        located.append((text, line, start - (sql.rfind("\n", 0, start) + 1) + 1))

    for token in Dialect.get_or_raise(SPLIT_DIALECT).tokenize(sql):
        if token.token_type == TokenType.SEMICOLON:
            if start is not None:
                add(token.start)
            start = None
        elif start is None:
            start = token.start
    if start is not None:
        add(len(sql))
    return located


def split_statements(sql: str) -> list[str]:
    """Split ``sql`` into statements, without their terminating semicolons.

    Semicolons inside strings, quoted names, dollar-quoted strings and comments
    do not end statements; empty statements (``;;``, a lone comment) are
    dropped; the last statement needs no semicolon.

    Raises:
        sqlglot.errors.TokenError: ``sql`` ends inside a string, a quoted
            name or a comment.
    """
    statements, rest = split_complete(sql)
    return [*statements, rest] if rest else statements


def is_complete(sql: str) -> bool:
    """Whether ``sql`` ends a statement: the interactive shell then runs it.

    True when every statement in ``sql`` ends with a semicolon (or when it
    holds only whitespace and comments); False when text follows the last
    semicolon or ``sql`` stops inside a string, a quoted name or a comment.
    """
    from sqlglot.errors import TokenError

    try:
        return not split_complete(sql)[1]
    except TokenError:
        return False


def locate(message: str, name: str, first_line: int, first_column: int) -> str:
    """An error ``message`` of a statement of the file ``name``, placed in the file.

    Positions in messages (``line 2, column 5``) count from the start of the
    statement: the file's line is the statement's first line plus that line,
    less one, and on the statement's first line the column shifts too.

    Returns:
        ``name:LINE: message``, with the position shifted; LINE is the
        statement's first line when the message gives no position.
    """
    found = re.search(r"\bline (\d+), column (\d+)", message)
    if found is None:
        return f"{name}:{first_line}: {message}"
    line, column = int(found.group(1)), int(found.group(2))
    if line == 1:
        column += first_column - 1
    line += first_line - 1
    shifted = f"{message[: found.start()]}line {line}, column {column}{message[found.end() :]}"
    return f"{name}:{line}: {shifted}"
