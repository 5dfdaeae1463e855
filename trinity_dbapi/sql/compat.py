"""The parts of sqlglot that differ between the releases the dialect supports.

trinity-dbapi runs on sqlglot 28.10 (the line Apache Superset 6.1 pins,
``sqlglot>=28.10,<29``) up to the newest release (30.x). Between the two,
sqlglot moved the DuckDB parser and generator into modules of their own,
added ``exp.DType``, ``exp.Expr`` and ``Expression.meta_get``, changed what
``Parser.expression`` takes, put a falsy sentinel token where 28 leaves
``None`` at the end of the input, and changed how DuckDB's SQL is printed.
Each difference is bridged here, once, by feature detection (never by
comparing version strings); the rest of :mod:`trinity_dbapi.sql` imports from
here and is written against the newest API. Nothing here changes sqlglot's
own modules or classes: where 28.10 lacks a behaviour, a subclass adds it.

=======================  =======================================  ==================================
name                     newest sqlglot                           sqlglot 28.10
=======================  =======================================  ==================================
:data:`DuckDBParser`     ``sqlglot.parsers.duckdb.DuckDBParser``  a subclass of ``DuckDB.Parser``
:data:`DuckDBGenerator`  ``sqlglot.generators.duckdb....``        a subclass of ``DuckDB.Generator``
:data:`DType`            ``exp.DType``                            ``exp.DataType.Type``
:data:`Expr`             ``exp.Expr`` (base of every node)        ``exp.Expression``
:func:`meta_get`         ``node.meta_get(key)``                   ``node._meta``, read in place
:func:`duckdb_sql`       ``node.sql(dialect="duckdb")``           the same, on a marked copy
=======================  =======================================  ==================================

The 28.10 parser subclass:

* ``expression(instance, token=None, comments=None)`` takes a built node, as
  the newest parser's does. sqlglot's own rules still pass a class and keyword
  arguments, which go to sqlglot's method unchanged. (Given a token, 28's
  method would also set ``this`` to the token's text: never wanted for a
  built node.)
* Past the end of the input, ``_curr`` and ``_next`` are :data:`END_OF_INPUT`,
  a falsy token, as the newest parser's sentinel is, instead of ``None``: so
  ``self._next.token_type`` is safe at the end, and ``if self._curr`` still
  means "there is another token".

The 28.10 generator subclass, and :func:`duckdb_sql` for the text the engine
sends to DuckDB (which sqlglot's own DuckDB dialect prints), print DuckDB's SQL
as the newest generator does:

* the 56 reserved words 28.10's list lacks are quoted (``MIN("at")``; bare,
  DuckDB refuses them);
* a lambda prints as ``LAMBDA x : ...``, the form DuckDB 1.3 introduced
  (28.10 keeps ``x -> ...``, which DuckDB 2 refuses by default).

mypy checks the package against the newest sqlglot, so under
``TYPE_CHECKING`` the names are the newest ones.

Imports from sql/: nothing.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.generator import Generator
from sqlglot.tokens import Token, TokenType

#: Whether the installed sqlglot's parser puts a falsy token (its sentinel) past the
#: end of the input. Where it does not, it leaves ``None`` there.
END_TOKEN_IS_FALSY = hasattr(Token, "__bool__")


def _falsy_token_class() -> type[Token]:
    class EndOfInput(Token):
        """The falsy token past the end of a statement (what the newest sqlglot has)."""

        __slots__ = ()

        def __bool__(self) -> bool:
            return False

        def __repr__(self) -> str:
            # The newest sentinel's repr, which parser_base recognises in sqlglot's messages.
            return (
                f"<Token token_type: TokenType.SENTINEL, text: {self.text}, line: {self.line}, "
                f"col: {self.col}, start: {self.start}, end: {self.end}, comments: []>"
            )

    return EndOfInput


#: The token ``_curr`` / ``_next`` hold past the end of the input on sqlglot 28.10 (the
#: newest parser has its own). A SEMICOLON: the type that never occurs inside a
#: statement's tokens, since sqlglot splits statements on it before parsing.
END_OF_INPUT: Token | None = (
    None if END_TOKEN_IS_FALSY else _falsy_token_class()(TokenType.SEMICOLON, "SENTINEL")
)


def expression_takes_class(parser_class: Any) -> bool:
    """Whether ``parser_class.expression`` takes a node class and its arguments (28.10).

    The newest parser's takes a built node (``instance``); 28.10's takes
    ``exp_class`` plus keyword arguments.
    """
    try:
        parameters = inspect.signature(parser_class.expression).parameters
    except (TypeError, ValueError):  # a compiled build without a signature: the newest API
        return False
    return "exp_class" in parameters


def _adapted_parser(base: Any) -> Any:
    """``base``, or a subclass of it with the newest parser's behaviour where it lacks it."""
    methods: dict[str, Any] = {}
    if expression_takes_class(base):

        def expression(
            self: Any,
            instance: Any,
            token: Token | None = None,
            comments: list[str] | None = None,
            **kwargs: Any,
        ) -> Any:
            if not isinstance(instance, exp.Expression):  # a class: sqlglot's own rules
                return base.expression(self, instance, token, comments, **kwargs)
            if token:
                instance.update_positions(token)
            if comments:
                instance.add_comments(comments)
            else:
                self._add_comments(instance)
            return self.validate_expression(instance)

        methods["expression"] = expression
    if END_OF_INPUT is not None:
        end = END_OF_INPUT

        def _advance(self: Any, times: int = 1) -> None:
            base._advance(self, times)
            if self._curr is None:
                self._curr = end
            if self._next is None:
                self._next = end

        methods["_advance"] = _advance
    if not methods:
        return base
    doc = "sqlglot's DuckDB parser with the newest parser's expression() and end of input."
    namespace = {"__module__": __name__, "__qualname__": "DuckDBParser", "__doc__": doc}
    return type("DuckDBParser", (base,), {**namespace, **methods})


#: Words DuckDB takes as keywords where a name may stand, which the newest sqlglot's DuckDB
#: generator quotes and 28.10's does not (its list misses them, or spells them as DuckDB's
#: grammar tokens: ``asc_p``). Unquoted, ``SELECT min(at) FROM t`` fails in DuckDB.
_NEWER_RESERVED_WORDS = frozenset(
    {
        "anti", "asc", "asof", "at", "authorization", "binary", "by", "check", "collation",
        "columns", "concurrently", "create", "cross", "desc", "describe", "end", "false",
        "freeze", "full", "generated", "glob", "group", "ilike", "in", "inner", "is", "isnull",
        "join", "lambda", "lateral", "left", "like", "map", "natural", "notnull", "null", "outer",
        "overlaps", "pivot", "pivot_longer", "pivot_wider", "positional", "qualify", "right",
        "semi", "show", "similar", "struct", "summarize", "tablesample", "true", "try_cast",
        "tuple", "unpack", "unpivot", "verbose",
    }
)  # fmt: skip


def lambda_text(generator_class: Any, **args: Any) -> str:
    """How ``generator_class`` prints the lambda ``x -> x`` (with extra node ``args``)."""
    node = exp.Lambda(this=exp.column("x"), expressions=[exp.to_identifier("x")], **args)
    return str(generator_class(dialect="duckdb").generate(node))


def prints_arrow_lambdas(generator_class: Any) -> bool:
    """Whether ``generator_class`` prints a lambda as ``x -> ...``.

    DuckDB 1.3 deprecated that form and DuckDB 2 refuses it unless a setting
    allows it; the newest sqlglot prints ``LAMBDA x : ...`` whatever the input
    was, 28.10 only when the input was written so.
    """
    return not lambda_text(generator_class).startswith("LAMBDA ")


def _adapted_generator(base: Any) -> Any:
    """``base``, or a subclass of it that prints DuckDB's SQL as the newest generator does."""
    attributes: dict[str, Any] = {}
    if not set(base.RESERVED_KEYWORDS) >= _NEWER_RESERVED_WORDS:
        attributes["RESERVED_KEYWORDS"] = {*base.RESERVED_KEYWORDS, *_NEWER_RESERVED_WORDS}
    if prints_arrow_lambdas(base):

        def lambda_sql(
            self: Any, expression: exp.Lambda, arrow_sep: str = "->", wrap: bool = True
        ) -> str:
            # What the newest DuckDB generator prints (for DuckDB 1.3 and later).
            return "LAMBDA " + Generator.lambda_sql(self, expression, arrow_sep=":", wrap=False)

        attributes["lambda_sql"] = lambda_sql
    if not attributes:
        return base
    doc = "sqlglot's DuckDB generator printing reserved words and lambdas as the newest does."
    namespace = {"__module__": __name__, "__qualname__": "DuckDBGenerator", "__doc__": doc}
    return type("DuckDBGenerator", (base,), {**namespace, **attributes})


def _duckdb_classes() -> tuple[Any, Any]:
    """The DuckDB parser and generator of the installed sqlglot, adapted where needed."""
    try:
        from sqlglot.generators.duckdb import DuckDBGenerator as generator
        from sqlglot.parsers.duckdb import DuckDBParser as parser
    except ImportError:  # sqlglot 28: classes nested in the dialect
        return _adapted_parser(DuckDB.Parser), _adapted_generator(DuckDB.Generator)
    return _adapted_parser(parser), _adapted_generator(generator)


if TYPE_CHECKING:
    from sqlglot.expressions import DType, Expr
    from sqlglot.generators.duckdb import DuckDBGenerator
    from sqlglot.parsers.duckdb import DuckDBParser
else:
    #: The enum of type names (``DType.TIMESTAMPTZ``): ``exp.DataType.Type`` on 28.10.
    DType = getattr(exp, "DType", None) or exp.DataType.Type
    #: The base class of every syntax tree node.
    Expr = getattr(exp, "Expr", exp.Expression)
    DuckDBParser, DuckDBGenerator = _duckdb_classes()


if hasattr(exp.Expression, "meta_get"):

    def meta_get(node: exp.Expression, key: str, default: Any = None) -> Any:
        """``node.meta[key]`` (or ``default``) without allocating the node's meta dict."""
        return node.meta_get(key, default)

else:

    def meta_get(node: exp.Expression, key: str, default: Any = None) -> Any:
        """``node.meta[key]`` (or ``default``) without allocating the node's meta dict."""
        meta = node._meta
        return default if meta is None else meta.get(key, default)


#: The words of :data:`_NEWER_RESERVED_WORDS` sqlglot's own DuckDB generator leaves bare.
_UNQUOTED_RESERVED_WORDS = _NEWER_RESERVED_WORDS - set(DuckDB.Generator.RESERVED_KEYWORDS)
#: Whether sqlglot's own DuckDB generator prints lambdas as ``x -> ...`` (and prints
#: ``LAMBDA x : ...`` for a lambda marked as written so).
_ARROW_LAMBDAS = prints_arrow_lambdas(DuckDB.Generator) and lambda_text(
    DuckDB.Generator, colon=True
).startswith("LAMBDA ")


def duckdb_sql(expression: exp.Expression) -> str:
    """The SQL text DuckDB runs for ``expression``.

    ``expression.sql(dialect="duckdb")`` as the newest sqlglot prints it, on
    every supported sqlglot. Where sqlglot's DuckDB generator would leave a
    reserved word bare or print a lambda as ``x -> ...``, a copy of the tree is
    marked first: the word quoted (the same name to DuckDB, whose names are
    case-insensitive quoted or not), the lambda written ``LAMBDA x : ...``.
    """
    if not _UNQUOTED_RESERVED_WORDS and not _ARROW_LAMBDAS:
        return expression.sql(dialect="duckdb")
    expression = expression.copy()
    for node in expression.walk():
        if isinstance(node, exp.Identifier):
            if not node.quoted and node.name.lower() in _UNQUOTED_RESERVED_WORDS:
                node.set("quoted", True)
        elif isinstance(node, exp.Lambda) and _ARROW_LAMBDAS:
            node.set("colon", True)
    return expression.sql(dialect="duckdb", copy=False)
