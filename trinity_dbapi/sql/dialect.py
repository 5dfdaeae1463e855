"""The ``trinity`` sqlglot dialect: DuckDB's SQL plus TrinityLake's statements.

Importing this module registers the dialect with sqlglot under the name
``trinity``; the ``sqlglot.dialects`` entry point of the package does the same
without the import::

    import sqlglot

    sqlglot.parse_one("CREATE NAMESPACE sales", read="trinity")
    sqlglot.parse_one("SELECT * FROM t FOR SYSTEM_VERSION AS OF 3", read="trinity")

Queries are DuckDB's syntax, parsed into sqlglot's own nodes, so
``expression.sql(dialect="duckdb")`` is SQL DuckDB runs (``?`` placeholders
print as ``$1``, ``$2``, ...). The layout follows sqlglot 30's dialects:

* :mod:`trinity_dbapi.sql.expressions` -- the node classes of the statements
  the dialect adds;
* :mod:`trinity_dbapi.sql.parser_base`, :mod:`trinity_dbapi.sql.parser_ddl` and
  :mod:`trinity_dbapi.sql.parser` -- :class:`~trinity_dbapi.sql.parser.TrinityParser`;
* :mod:`trinity_dbapi.sql.generator` --
  :class:`~trinity_dbapi.sql.generator.TrinityGenerator`;
* :mod:`trinity_dbapi.sql.types_sql` -- column types and their aliases;
* this module -- the tokenizer and the :class:`Trinity` dialect itself, and
  a column type's text both ways (:func:`type_sql`, :func:`parse_type_sql`),
  which needs the whole dialect.

On top of the dialect, :mod:`trinity_dbapi.sql.statements` turns SQL text into
the statement model (:mod:`trinity_dbapi.sql.model`), binding parameters with
:mod:`trinity_dbapi.sql.binding` and reporting errors with
:mod:`trinity_dbapi.sql.diagnostics`.

``docs/sql.md`` is the reference of the language; ``grammar/trinity.ebnf`` its
grammar and ``grammar/identity.sql`` the corpus every change must keep
round-tripping.

Imports from sql/: generator, parser, types_sql.
"""

from __future__ import annotations

from typing import ClassVar

import sqlglot
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.tokens import TokenType

from trinity_dbapi.format.definitions import DataType
from trinity_dbapi.sql import types_sql
from trinity_dbapi.sql.generator import TrinityGenerator
from trinity_dbapi.sql.parser import TrinityParser

#: Keywords of DuckDB's tokenizer the trinity tokenizer drops: statements it would turn
#: into opaque commands, operators that would swallow a ``?`` placeholder, and the
#: two-word time travel tokens of sqlglot 28 (``FOR VERSION`` / ``FOR TIMESTAMP`` as one
#: token each, newer releases have none): the parser reads time travel word by word.
_DROPPED_KEYWORDS = frozenset({"CALL", "EXPLAIN", "?::", "??", "FOR VERSION", "FOR TIMESTAMP"})


class Trinity(DuckDB):
    """DuckDB's SQL plus namespaces, TrinityLake DDL, time travel and procedures."""

    class Tokenizer(DuckDB.Tokenizer):
        """DuckDB's tokenizer: no opaque commands, and ``?`` is always a placeholder."""

        KEYWORDS: ClassVar[dict[str, TokenType]] = {
            word: token
            for word, token in DuckDB.Tokenizer.KEYWORDS.items()
            if word not in _DROPPED_KEYWORDS
        }
        COMMANDS: ClassVar[set[TokenType]] = set()

    Parser = TrinityParser
    Generator = TrinityGenerator


def type_sql(data_type: DataType) -> str:
    """The canonical trinity-dialect text of a type, e.g. ``DECIMAL(10, 2)``."""
    generator = Trinity().generator()
    return generator.column_type_sql(types_sql.sql_type(data_type))  # type: ignore[attr-defined,no-any-return]


def parse_type_sql(text: str) -> DataType:
    """The TrinityLake type of its SQL text, e.g. ``"decimal(10,2)"`` (as ``system.columns`` shows).

    Raises:
        ProgrammingError: ``text`` is not a column type of the dialect.
    """
    # Column types parse only inside a column definition: the dialect's
    # query types are DuckDB's.
    statement = sqlglot.parse_one(f"CREATE TABLE t (c {text})", read=Trinity)
    return types_sql.data_type(statement.expressions[0].args["kind"])
