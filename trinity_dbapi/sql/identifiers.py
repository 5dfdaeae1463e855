"""No identifier of a statement holds U+0000 (NUL), or the statement is refused.

DuckDB keeps a NUL in a quoted name, but its results reach us through
Arrow's C data interface, whose field names are C strings: a result column
``"a\\x00b"`` arrives as ``a``. A query's ``description`` would then show
another name than the one written, and ``CREATE TABLE ... AS SELECT 1 AS
"a\\x00b"`` or a view would store a column named ``a`` without a word. Stored
names already refuse NUL (:mod:`trinity_dbapi.format.names`); this refuses
it in every identifier a statement writes, before the statement runs, so no
name is ever silently cut short. :func:`check_identifiers` runs as a text is
parsed, before its tree is cached, so a text is checked once.

Imports from sql/: expressions.
"""

from __future__ import annotations

from sqlglot import exp

from trinity_dbapi.errors import InvalidNameError
from trinity_dbapi.sql import expressions as texp

__all__ = ["check_identifiers"]

#: What an identifier names, by the node it belongs to, for messages.
_KINDS: dict[type, str] = {
    exp.ColumnDef: "column name",
    texp.ColumnDefinition: "column name",
    exp.Column: "column name",
    exp.Table: "table name",
    exp.Alias: "alias",
    exp.TableAlias: "alias",
}


def check_identifiers(expression: exp.Expression, sql: str) -> None:
    """Refuse a statement with an identifier holding U+0000.

    Args:
        expression: The parsed statement.
        sql: Its text (a text without NUL is not walked).

    Raises:
        InvalidNameError: naming the identifier, the position of the NUL,
            the rule and the fix.
    """
    if "\x00" not in sql:
        return
    for identifier in expression.find_all(exp.Identifier):
        name = identifier.this
        if isinstance(name, str) and "\x00" in name:
            kind = _KINDS.get(type(identifier.parent), "name")
            raise InvalidNameError(
                name,
                f"invalid {kind} {name!r} in {sql.strip()[:60]!r}: character U+0000 at position "
                f"{name.index(chr(0))} is a "
                "control character, which no name may hold (results carry names as C strings, "
                "which end at a NUL, so the name would lose its end; docs/format.md, Object "
                "names); remove that character",
            )
