"""Statement splitting: where the statements of a text end.

sqlglot's tokenizer finds the semicolons that end statements, so a ``;``
inside a string, a quoted name, a dollar-quoted string or a comment never
splits one. sqlglot is imported on first use.

Imports from cli/: nothing.
"""

from __future__ import annotations

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
