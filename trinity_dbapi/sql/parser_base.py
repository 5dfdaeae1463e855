"""Building blocks of the trinity parser: errors, placeholders, queries, names, properties.

:class:`BaseParser` is sqlglot's DuckDB parser plus what every statement
parser of the dialect shares: syntax errors that carry the offending token's
offsets and a hint, ``?`` placeholders numbered by their position in the
statement, queries (in sqlglot's own nodes: a statement, ``EXPLAIN`` and
``CREATE TABLE ... AS`` take one), names, string literals and property lists,
and :meth:`_dispatch`, which picks a sub-statement parser from a table keyed
by leading words.
:class:`~trinity_dbapi.sql.parser_ddl.DDLParser` adds the DDL and
:class:`~trinity_dbapi.sql.parser.TrinityParser` the rest.

Imports from sql/: compat, expressions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, ClassVar, NoReturn

from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError
from sqlglot.tokens import Token, TokenType
from sqlglot.trie import new_trie

from trinity_dbapi.errors import UnsupportedStatementError
from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql.compat import DuckDBParser

#: Hint attached to errors that have no better one.
DEFAULT_HINT = (
    "compare the statement with its syntax in docs/sql.md; write names that are reserved "
    'words in double quotes ("order")'
)
#: Object kinds other SQL systems create, drop or alter, and trinity SQL does not.
UNSUPPORTED_OBJECTS: frozenset[str] = frozenset(
    {
        "CATALOG",
        "DATABASE",
        "EXTENSION",
        "EXTERNAL",
        "FUNCTION",
        "LOCAL",
        "MACRO",
        "MATERIALIZED",
        "OR",
        "PROCEDURE",
        "ROLE",
        "SECRET",
        "SEQUENCE",
        "TEMP",
        "TEMPORARY",
        "TRIGGER",
        "TYPE",
        "UNIQUE",
        "USER",
        "VIEW",
    }
)
#: Hints for sqlglot's "Unexpected token" errors, by the unexpected word.
UNEXPECTED_TOKEN_HINTS: Mapping[str, str] = {
    "FOR": "time travel comes right after the table name, before its alias: "
    "FROM t FOR SYSTEM_VERSION AS OF 3 AS x",
    "AT": "time travel is written FROM t FOR SYSTEM_VERSION AS OF 3",
}
_BARE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")
_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+.*?>")


def _describe_tokens(message: str) -> str:
    """sqlglot puts Token reprs in some messages: show the token's text instead."""

    def describe(match: re.Match[str]) -> str:
        return "the end of the statement" if match[1] == "SENTINEL" else repr(match[2])

    return _TOKEN_REPR.sub(describe, message)


def trie(parsers: Mapping[str, Any]) -> dict:
    """The word trie of a parser table keyed by leading words (``"CREATE TABLE"``)."""
    return new_trie(key.split(" ") for key in parsers)


class BaseParser(DuckDBParser):
    """DuckDB's parser plus the pieces the trinity statement parsers share."""

    #: ``?`` is the only parameter marker (qmark paramstyle); ``$1`` and ``:name`` are errors.
    PLACEHOLDER_PARSERS: ClassVar[dict[TokenType, Callable[[BaseParser], exp.Expression]]] = {
        TokenType.PLACEHOLDER: lambda self: self._parse_numbered_placeholder(),
        TokenType.PARAMETER: lambda self: self._fail(
            "$ parameters are not supported",
            "write ? for each parameter (qmark paramstyle)",
            self._prev,
        ),
    }

    #: Tokens that start a query.
    QUERY_TOKENS: ClassVar[frozenset[TokenType]] = frozenset(
        {TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.FROM, TokenType.L_PAREN}
    )

    _numbered_tokens: list[Token] | None = None
    _placeholder_numbers: dict[int, int] | None = None

    # -- placeholders -------------------------------------------------------------------

    def _parse_numbered_placeholder(self) -> exp.Placeholder:
        """The ``?`` just matched, numbered by its position among the statement's ``?``."""
        if self._numbered_tokens is not self._tokens or self._placeholder_numbers is None:
            positions = [
                i
                for i, token in enumerate(self._tokens)
                if token.token_type == TokenType.PLACEHOLDER
            ]
            self._placeholder_numbers = {index: n for n, index in enumerate(positions, start=1)}
            self._numbered_tokens = self._tokens
        number = self._placeholder_numbers[self._index - 1]
        return self.expression(exp.Placeholder(this=str(number)), self._prev)

    # -- errors ------------------------------------------------------------------------

    def raise_error(
        self, message: str, token: Token | None = None, hint: str | None = None
    ) -> None:
        """Report a syntax error; the error's first entry also gets ``start``, ``end``, ``hint``."""
        token = token or self._curr or self._prev or Token.string("")
        if hint is None and message.startswith("Invalid expression / Unexpected token"):
            hint = UNEXPECTED_TOKEN_HINTS.get(token.text.upper())
        extra = {"start": token.start, "end": token.end, "text": token.text, "hint": hint}
        try:
            super().raise_error(_describe_tokens(message), token)
        except ParseError as error:
            error.errors[0].update(extra)
            raise
        if self.errors:
            self.errors[-1].errors[0].update(extra)

    def _fail(self, message: str, hint: str | None = None, token: Token | None = None) -> NoReturn:
        """Raise a :class:`ParseError` now, whatever the error level."""
        level = self.error_level
        self.error_level = ErrorLevel.IMMEDIATE
        try:
            self.raise_error(message, token, hint=hint)
        finally:
            self.error_level = level
        raise AssertionError("unreachable: raise_error raises at level IMMEDIATE")

    def _unsupported(self, what: str, supported: str, token: Token | None = None) -> NoReturn:
        """Raise :class:`UnsupportedStatementError` naming ``what``, where, and the alternative."""
        token = token or self._curr or self._prev
        line = self.sql.count("\n", 0, token.start) + 1
        column = token.start - (self.sql.rfind("\n", 0, token.start) + 1) + 1
        raise UnsupportedStatementError(
            f"{what} is not supported (line {line}, column {column}): trinity SQL supports "
            f"{supported}; see docs/sql.md for every statement"
        )

    def _parse_as_command(self, start: Token) -> exp.Command:
        """sqlglot's fallback for syntax it does not model: an error here, never a Command."""
        self._fail(
            f"This form of {start.text.upper()} is not supported",
            "trinity SQL never passes statements through unparsed; see docs/sql.md",
            token=start,
        )

    def _expected(self, what: str, hint: str | None = None) -> NoReturn:
        """Fail with "Expected <what> but got <the current token>"."""
        got = f"'{self._curr.text}'" if self._curr else "the end of the statement"
        self._fail(f"Expected {what} but got {got}", hint)

    def _expect(self, token_type: TokenType, what: str, hint: str | None = None) -> Token:
        """Match a token of ``token_type`` or fail with "Expected <what>"."""
        if not self._match(token_type):
            self._expected(what, hint)
        return self._prev

    def _dispatch(
        self,
        verb: str,
        parsers: Mapping[str, Callable[[Any], exp.Expression]],
        parser_trie: dict,
        unsupported: Collection[str] | None = UNSUPPORTED_OBJECTS,
    ) -> exp.Expression:
        """Parse the sub-statement whose leading words are a key of ``parsers``.

        A word that starts none of them is an unsupported statement when it is
        in ``unsupported`` (any word when ``unsupported`` is None), else a
        syntax error.
        """
        token = self._curr
        parser = self._find_parser(parsers, parser_trie)  # type: ignore[arg-type]
        if parser is not None:
            return parser(self)
        choices = " | ".join(sorted(parsers))
        if token and token.token_type not in (TokenType.STRING, TokenType.IDENTIFIER):
            word = token.text.upper()
            is_word = word.replace("_", "").isalpha()
            if is_word and (unsupported is None or word in unsupported):
                self._unsupported(f"{verb} {word}", f"{verb} {choices}", token)
        self._expected(f"{choices} after {verb}")

    # -- queries ---------------------------------------------------------------------------

    def _parse_query(self, allow_dml: bool = False) -> exp.Expr:
        """A query (or, with a leading WITH, a DML statement) in sqlglot's own nodes."""
        token = self._curr
        if not token or token.token_type not in self.QUERY_TOKENS:
            self._expected("a query (SELECT, WITH, VALUES, FROM or a parenthesized query)")
        expression = super()._parse_statement()
        allowed: tuple[type[exp.Expr], ...] = (exp.Query, exp.Values)
        if allow_dml:
            allowed += (exp.Insert, exp.Update, exp.Delete)
        if not isinstance(expression, allowed):
            self._fail("Expected a query", "a statement is a query, not a bare expression", token)
        return expression

    # -- names and literals --------------------------------------------------------------

    def _parse_name(self, what: str = "a name") -> exp.Identifier:
        """One identifier: quoted (case kept) or a bare word (case-insensitive)."""
        token = self._curr
        if self._match(TokenType.IDENTIFIER):
            return self._identifier_expression(token, quoted=True)
        if token and token.token_type in self.ID_VAR_TOKENS:
            self._advance()
            return self._identifier_expression(token, quoted=False)
        self._expected(what, 'write names that are reserved words in double quotes ("order")')

    def _parse_field_name(self) -> exp.Identifier:
        """A struct field name: any bare word, reserved or not (``STRUCT<order: INT4>``).

        The position is unambiguous, and ``DataType.to_sql()`` leaves every plain
        name unquoted, so its text parses back.
        """
        token = self._curr
        if token and token.token_type != TokenType.IDENTIFIER and _BARE_WORD.fullmatch(token.text):
            self._advance()
            return self._identifier_expression(token, quoted=False)
        return self._parse_name("a struct field name")

    def _parse_namespace_name(self) -> exp.Identifier:
        name = self._parse_name("a namespace name")
        if self._curr.token_type == TokenType.DOT:
            self._fail("A namespace name has one part", "namespaces do not nest: write ns, not a.b")
        return name

    def _parse_table_name(self, what: str = "a table name") -> exp.Table:
        """``[namespace.]name``."""
        parts = [self._parse_name(what)]
        while self._match(TokenType.DOT):
            if len(parts) == 2:
                self._fail(
                    "A table name has at most two parts",
                    "write namespace.table, or table alone for the current namespace",
                )
            parts.append(self._parse_name(what))
        table = exp.Table(this=parts[-1], db=parts[0] if len(parts) == 2 else None)
        return self.expression(table)

    def _parse_text_value(self, what: str) -> exp.Expression:
        """A string literal or ``?``: comments, property values, LIKE patterns."""
        if self._match(TokenType.STRING):
            return self.expression(exp.Literal.string(self._prev.text))
        if self._match(TokenType.PLACEHOLDER):
            return self._parse_numbered_placeholder()
        self._expected(f"a string literal or ? for {what}", "quote text with single quotes")

    def _parse_comment_clause(self) -> exp.Expression | None:
        return self._parse_text_value("the comment") if self._match(TokenType.COMMENT) else None

    def _parse_property_key(self) -> exp.Expression:
        if self._match(TokenType.STRING):
            return self.expression(exp.Literal.string(self._prev.text))
        parts: list[exp.Expression] = [self._parse_name("a property key")]
        while self._match(TokenType.DOT):
            parts.append(self._parse_name("a property key"))
        return parts[0] if len(parts) == 1 else exp.Dot.build(parts)

    def _parse_property_item(self) -> texp.PropertyItem:
        key = self._parse_property_key()
        self._expect(TokenType.EQ, "= after the property key", "write key = 'value'")
        return self.expression(texp.PropertyItem(this=key, value=self._parse_text_value("a value")))

    def _parse_property_list(self) -> list[exp.Expression]:
        return self._parse_wrapped_list(self._parse_property_item, "key = 'value'")

    def _parse_keys(self) -> list[exp.Expression]:
        return self._parse_wrapped_list(self._parse_property_key, "a property key")

    def _parse_names(self, what: str) -> list[exp.Expression]:
        return self._parse_wrapped_list(lambda: self._parse_name(what), what)

    def _parse_wrapped_list(self, item: Callable[[], exp.Expression], what: str) -> list[Any]:
        """``( item {, item} )``: never empty."""
        self._expect(TokenType.L_PAREN, f"( before {what}")
        items = [item()]
        while self._match(TokenType.COMMA):
            items.append(item())
        self._expect(TokenType.R_PAREN, f", or ) after {what}")
        return items

    def _parse_with_properties(self) -> list[exp.Expression] | None:
        return self._parse_property_list() if self._match(TokenType.WITH) else None
