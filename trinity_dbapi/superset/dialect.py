"""The sqlglot dialect Superset parses ``trinity`` databases' SQL with.

Superset parses two kinds of text with the dialect its ``SQLGLOT_DIALECTS``
names for an engine: whole statements (SQL Lab, virtual datasets, chart
queries) and bare clauses (a chart's SQL metric ``SUM(amount)``, a custom
``WHERE`` clause ``region = 'eu'``, a row-level security predicate), which it
checks by parsing them as if they were statements (``sanitize_clause``,
``validate_adhoc_subquery``). The trinity dialect parses statements only,
and refuses anything else with "Expected a statement", as the driver must.

:class:`SupersetTrinity` is the trinity dialect with one difference: text
that does not begin a statement is parsed as an expression. Statements parse
exactly as in the trinity dialect, into the same trees, and print back the
same; a statement the driver does not support is refused with the driver's
message, as a sqlglot ``ParseError`` (what Superset reports as invalid SQL),
and so is ``COPY``, as a Superset database never reads or writes files.
The driver itself never uses this dialect.

Imports from superset/: nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

from trinity_dbapi.errors import Error
from trinity_dbapi.sql.dialect import Trinity
from trinity_dbapi.sql.parser import UNSUPPORTED_STATEMENT_WORDS, TrinityParser

if TYPE_CHECKING:
    from sqlglot import exp
    from sqlglot.tokens import Token

__all__ = ["SupersetTrinity"]


class _ClauseParser(TrinityParser):
    """The trinity parser, which also takes a bare expression where a statement starts."""

    def _begins_statement(self, token: Token) -> bool:
        """Whether the trinity parser parses (or refuses by name) what starts at ``token``."""
        if token.token_type in self.STATEMENT_PARSERS or token.token_type in self.QUERY_TOKENS:
            return True
        if token.token_type in self.UNSUPPORTED_STATEMENT_TOKENS:
            return True
        if token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
            return False  # a quoted name or a string starts no statement
        word = token.text.upper()
        return word in self.KEYWORD_STATEMENT_PARSERS or word in UNSUPPORTED_STATEMENT_WORDS

    def parse(self, raw_tokens: list[Token], sql: str) -> list[exp.Expr | None]:
        """Parse; the driver's own refusals become sqlglot ``ParseError``s.

        Superset reports a sqlglot ``ParseError`` as invalid SQL, with its
        place in the text; any other exception would leave SQL Lab with an
        unexpected server error instead of the message.
        """
        try:
            return super().parse(raw_tokens, sql)
        except Error as error:  # UnsupportedStatementError: COPY, ATTACH, PRAGMA, ...
            token = self._curr or self._prev
            raise ParseError.new(
                str(error),
                description=str(error),
                line=token.line if token else None,
                col=token.col if token else None,
                highlight=token.text if token else None,
            ) from error

    def _parse_statement(self) -> exp.Expr | None:
        token = self._curr
        if token and token.token_type == TokenType.COPY:
            # Superset's databases never get file access (spec.refuse_file_access).
            self._unsupported(
                "The COPY statement",
                "queries and the other statements; a Superset database never reads or writes files",
                token,
            )
        if token and not self._begins_statement(token):
            expression = self._parse_expression()
            if expression is not None:
                return expression
        return super()._parse_statement()


class SupersetTrinity(Trinity):
    """The trinity dialect for Superset's parser: statements, and clauses on their own."""

    Parser = _ClauseParser
