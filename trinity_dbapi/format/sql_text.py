"""Names and strings written into SQL text: the one place that quotes them.

Every layer that writes SQL text for DuckDB or for the ``trinity`` dialect
(both follow standard SQL here) quotes through these functions: the column
types' SQL spelling and their DuckDB types (this layer), the ``read_parquet``
scans of the tables layer, the SQL engine, the DuckDB bridge, the SQLAlchemy
dialect. It lives in ``format/`` because that is the lowest layer that writes
SQL text (``DataType.to_sql`` and :mod:`~trinity_dbapi.format.type_mapping`
name struct members), so every layer above may import it;
``tests/test_code_rules.py`` fails on an escaping ``replace`` anywhere
else.

The rules are SQL's own: a quoted identifier is wrapped in double quotes with
each ``"`` doubled, a string literal in single quotes with each ``'``
doubled. Nothing else is escaped, because neither DuckDB nor the dialect
reads backslash escapes in these forms, and any other character (newlines,
non-ASCII letters) stands for itself. Whether a name may go unquoted is the
caller's rule (a column type's spelling and SQLAlchemy's differ), so these
functions always quote.

Imports from format/: nothing.
"""

from __future__ import annotations

__all__ = ["qualified_name", "quote_identifier", "quote_string"]


def quote_identifier(name: str) -> str:
    """``name`` as a double-quoted SQL identifier: exact case, any characters.

    Args:
        name: the identifier as it should be read back.

    Returns:
        The quoted text, e.g. ``"a""b"`` for ``a"b``.

    Example:
        >>> quote_identifier('a"b')
        '"a""b"'
    """
    return '"' + name.replace('"', '""') + '"'


def quote_string(text: str) -> str:
    """``text`` as a single-quoted SQL string literal.

    Args:
        text: the string the literal should read as.

    Returns:
        The literal, e.g. ``'it''s'`` for ``it's``.

    Example:
        >>> quote_string("it's")
        "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def qualified_name(*parts: str) -> str:
    """A dotted name whose every part is quoted (``"db"."schema"."table"``).

    Args:
        *parts: the name's parts, outermost first.

    Returns:
        The parts quoted with :func:`quote_identifier`, joined by ``.``.

    Example:
        >>> qualified_name("sales", "orders")
        '"sales"."orders"'
    """
    return ".".join(quote_identifier(part) for part in parts)
