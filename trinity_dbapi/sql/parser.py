"""The trinity parser: statement dispatch, DML, time travel, transactions, CALL.

:class:`TrinityParser` is sqlglot's DuckDB parser with a closed statement
table: a statement starts with a key of ``STATEMENT_PARSERS`` (by token type)
or of ``KEYWORD_STATEMENT_PARSERS`` (by word), or is a query (``SELECT``,
``WITH``, ``VALUES``, ``FROM``, ``(``). Anything else raises: statements other
SQL systems know raise :class:`~trinity_dbapi.errors.UnsupportedStatementError`,
the rest a sqlglot ``ParseError`` (turned into
:class:`~trinity_dbapi.errors.SQLSyntaxError` by
:func:`trinity_dbapi.sql.statements.parse`). sqlglot's ``exp.Command``
fallback is never produced.

Imports from sql/: compat, expressions, parser_ddl.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from sqlglot import exp
from sqlglot.tokens import TokenType
from sqlglot.trie import new_trie

from trinity_dbapi.sql import expressions as texp
from trinity_dbapi.sql.compat import DType, DuckDBParser, meta_get
from trinity_dbapi.sql.parser_ddl import DDLParser

_StatementParser = Callable[["TrinityParser"], exp.Expression]

#: sqlglot's own statement parsers the dialect keeps: DML.
_DML_TOKENS = frozenset({TokenType.INSERT, TokenType.UPDATE, TokenType.DELETE, TokenType.MERGE})

#: Leading words of statements other SQL systems have and trinity SQL has not.
UNSUPPORTED_STATEMENT_WORDS = frozenset(
    {
        "ABORT",
        "ANALYZE",
        "ATTACH",
        "CACHE",
        "CHECKPOINT",
        "CLUSTER",
        "COMMENT",
        "DEALLOCATE",
        "DECLARE",
        "DETACH",
        "END",
        "EXECUTE",
        "EXPORT",
        "FETCH",
        "FORCE",
        "GRANT",
        "IMPORT",
        "INSTALL",
        "KILL",
        "LOAD",
        "LOCK",
        "OPTIMIZE",
        "PIVOT",
        "PRAGMA",
        "PREPARE",
        "REFRESH",
        "REINDEX",
        "RELEASE",
        "RENAME",
        "REPLACE",
        "RESET",
        "REVOKE",
        "SAVEPOINT",
        "UNCACHE",
        "UNLOCK",
        "UNPIVOT",
        "UPSERT",
        "VACUUM",
    }
)
_STATEMENTS = (
    "SELECT, WITH, VALUES, INSERT, UPDATE, DELETE, MERGE, TRUNCATE, CREATE, DROP, ALTER, SHOW, "
    "DESCRIBE, USE, BEGIN, START TRANSACTION, COMMIT, ROLLBACK, SET TRANSACTION, "
    "SET COMMIT MESSAGE, SAVE TRANSACTION, LOAD TRANSACTION, CALL, EXPLAIN, "
    "SUMMARIZE and COPY"
)
_ISOLATION_HINT = "TrinityLake isolation levels are SERIALIZABLE (the default) and SNAPSHOT"


def _typed_literal(self: TrinityParser, this: exp.Expression, to: exp.DataType) -> exp.Cast:
    cast = self.expression(exp.Cast(this=this, to=to))
    cast.meta[texp.TYPED_LITERAL] = True
    return cast


class TrinityParser(DDLParser):
    """The trinity dialect's parser."""

    STATEMENT_PARSERS: ClassVar[dict[TokenType, _StatementParser]] = {
        **{k: v for k, v in DuckDBParser.STATEMENT_PARSERS.items() if k in _DML_TOKENS},
        TokenType.TRUNCATE: lambda self: self._parse_truncate(),
        TokenType.CREATE: lambda self: self._dispatch(
            "CREATE", self.CREATE_PARSERS, self.CREATE_TRIE
        ),
        TokenType.DROP: lambda self: self._dispatch("DROP", self.DROP_PARSERS, self.DROP_TRIE),
        TokenType.ALTER: lambda self: self._dispatch(
            "ALTER", self.ALTER_PARSERS_BY_OBJECT, self.ALTER_OBJECT_TRIE
        ),
        TokenType.SHOW: lambda self: self._dispatch(
            "SHOW", self.SHOW_PARSERS, self.SHOW_TRIE, unsupported=None
        ),
        TokenType.DESCRIBE: lambda self: self._parse_describe_statement(),
        TokenType.DESC: lambda self: self._parse_describe_statement(),
        TokenType.USE: lambda self: self._parse_use_statement(),
        TokenType.MERGE: lambda self: self._parse_merge_statement(),
        TokenType.BEGIN: lambda self: self._parse_begin(),
        TokenType.COMMIT: lambda self: self._parse_end_transaction(exp.Commit()),
        TokenType.ROLLBACK: lambda self: self._parse_end_transaction(exp.Rollback()),
        TokenType.SET: lambda self: self._parse_set_statement(),
        TokenType.COPY: lambda self: self._parse_copy_statement(),
        TokenType.LOAD: lambda self: self._parse_load_transaction(),
    }
    #: Statements whose leading word has no token type of its own.
    KEYWORD_STATEMENT_PARSERS: ClassVar[dict[str, _StatementParser]] = {
        "CALL": lambda self: self._parse_call(),
        "EXPLAIN": lambda self: self._parse_explain(),
        "START": lambda self: self._parse_start_transaction(),
        "SUMMARIZE": lambda self: self._parse_summarize(),
        "SAVE": lambda self: self._parse_save_transaction(),
    }
    #: Statements sqlglot parses that trinity SQL does not support.
    UNSUPPORTED_STATEMENT_TOKENS: ClassVar[frozenset[TokenType]] = frozenset(
        {*DuckDBParser.STATEMENT_PARSERS, TokenType.COMMAND} - set(STATEMENT_PARSERS)
    )

    SHOW_PARSERS: ClassVar[dict[str, _StatementParser]] = {
        "NAMESPACES": lambda self: texp.ShowNamespaces(kind="NAMESPACES", like=self._parse_like()),
        "SCHEMAS": lambda self: texp.ShowNamespaces(kind="SCHEMAS", like=self._parse_like()),
        "TABLES": lambda self: self._parse_show_tables(),
        "CREATE TABLE": lambda self: texp.ShowCreateTable(this=self._parse_table_name()),
        "VIEWS": lambda self: self._parse_show_views(),
        "BRANCHES": lambda self: texp.RefStatement(action="SHOW BRANCHES"),
        "TAGS": lambda self: texp.RefStatement(action="SHOW TAGS"),
    }
    SHOW_TRIE: ClassVar[dict] = new_trie(key.split(" ") for key in SHOW_PARSERS)

    CREATE_PARSERS: ClassVar[dict[str, Callable[[DDLParser], exp.Expression]]] = {
        **DDLParser.CREATE_PARSERS,
        "BRANCH": lambda self: self._parse_ref("CREATE BRANCH"),  # type: ignore[attr-defined]
        "TAG": lambda self: self._parse_ref("CREATE TAG"),  # type: ignore[attr-defined]
    }
    CREATE_TRIE: ClassVar[dict] = new_trie(key.split(" ") for key in CREATE_PARSERS)
    DROP_PARSERS: ClassVar[dict[str, Callable[[DDLParser], exp.Expression]]] = {
        **DDLParser.DROP_PARSERS,
        "BRANCH": lambda self: self._parse_ref("DROP BRANCH"),  # type: ignore[attr-defined]
        "TAG": lambda self: self._parse_ref("DROP TAG"),  # type: ignore[attr-defined]
    }
    DROP_TRIE: ClassVar[dict] = new_trie(key.split(" ") for key in DROP_PARSERS)

    #: Time travel clauses: the words after the table name and the spelling kept in the tree.
    VERSION_PHRASES: ClassVar[dict[tuple[str, ...], str]] = {
        ("FOR", "SYSTEM_VERSION"): "SYSTEM_VERSION",
        ("FOR", "VERSION"): "VERSION",
        ("FOR", "SYSTEM_TIME"): "SYSTEM_TIME",
        ("FOR", "TIMESTAMP"): "TIMESTAMP",
    }
    #: Whether each spelling travels to a version (or export) or to a point in time.
    TIME_TRAVEL_BY_TIME: ClassVar[dict[str, bool]] = {
        "SYSTEM_VERSION": False,
        "VERSION": False,
        "SYSTEM_TIME": True,
        "TIMESTAMP": True,
    }

    #: Every ``TYPE 'text'`` literal is a Cast marked to print back as written.
    TYPE_LITERAL_PARSERS: ClassVar[dict] = {
        **dict.fromkeys(DType, _typed_literal),
        **DuckDBParser.TYPE_LITERAL_PARSERS,
    }

    # -- statements ------------------------------------------------------------------

    def _parse_statement(self) -> exp.Expr | None:
        token = self._curr
        if not token:
            return None
        parser = self.STATEMENT_PARSERS.get(token.token_type)
        if parser is None and token.token_type not in (TokenType.STRING, TokenType.IDENTIFIER):
            parser = self.KEYWORD_STATEMENT_PARSERS.get(token.text.upper())
        if parser is not None:
            self._advance()
            comments = self._prev_comments
            statement = parser(self)
            statement.add_comments(comments, prepend=True)
            return statement
        if token.token_type in self.QUERY_TOKENS:
            return self._parse_query(allow_dml=True)
        word = token.text.upper()
        if token.token_type in self.UNSUPPORTED_STATEMENT_TOKENS or (
            token.token_type != TokenType.IDENTIFIER and word in UNSUPPORTED_STATEMENT_WORDS
        ):
            self._unsupported(f"The {word} statement", _STATEMENTS, token)
        self._expected("a statement", f"statements start with {_STATEMENTS}")

    # -- branches and tags (docs/branches.md) -----------------------------------------

    def _parse_use_statement(self) -> exp.Expression:
        """``USE ns`` or ``USE BRANCH name`` (``USE branch`` still means a namespace)."""
        nxt = self._next
        named = nxt is not None and (
            nxt.token_type == TokenType.IDENTIFIER or nxt.token_type in self.ID_VAR_TOKENS
        )
        if named and self._curr and self._curr.text.upper() == "BRANCH":
            self._advance()
            return texp.RefStatement(action="USE BRANCH", this=self._parse_name("a branch name"))
        return texp.UseNamespace(this=self._parse_namespace_name())

    def _parse_merge_statement(self) -> exp.Expression:
        """``MERGE BRANCH name [INTO name]``, or sqlglot's ``MERGE INTO`` (DML)."""
        if self._curr and self._curr.text.upper() == "BRANCH":
            self._advance()
            name = self._parse_name("a branch name")
            target = self._parse_name("a branch name") if self._match(TokenType.INTO) else None
            return texp.RefChange(action="MERGE BRANCH", this=name, target=target)
        return DuckDBParser.STATEMENT_PARSERS[TokenType.MERGE](self)

    def _parse_ref(self, action: str) -> texp.RefChange:
        """The rest of ``CREATE|DROP BRANCH|TAG``: IF [NOT] EXISTS, the name, FROM."""
        exists = self._parse_exists(not_=action.startswith("CREATE"))
        kind = action.partition(" ")[2].lower()
        name = self._parse_name(f"a {kind} name")
        source_kind: str | None = None
        source: exp.Expression | None = None
        if action.startswith("CREATE") and self._match(TokenType.FROM):
            allowed = ("BRANCH", "TAG", "VERSION") if kind == "branch" else ("BRANCH", "VERSION")
            if not self._match_texts(allowed):
                self._expected(" or ".join(allowed), f"write FROM {allowed[0]} name")
            source_kind = self._prev.text.upper()
            if source_kind == "VERSION":
                if not self._match(TokenType.NUMBER):
                    self._expected("a version number", "write FROM VERSION 12")
                source = exp.Literal.number(self._prev.text)
            else:
                source = self._parse_name(f"a {source_kind.lower()} name")
        return texp.RefChange(
            action=action, this=name, exists=exists, source_kind=source_kind, source=source
        )

    def _parse_string_as_identifier(self) -> exp.Identifier | None:
        # sqlglot makes FROM 'x.csv' the same node as FROM "x.csv"; DuckDB reads
        # the first as a file. Remember the spelling so the statement layer can
        # refuse it (trinity_dbapi.sql.table_functions).
        identifier = super()._parse_string_as_identifier()
        if identifier is not None:
            identifier.meta[texp.STRING_NAME] = True
        return identifier

    def _parse_truncate(self) -> texp.Truncate:
        self._match(TokenType.TABLE)
        table = self._parse_table_name()
        if self._match(TokenType.COMMA):
            self._fail("TRUNCATE takes one table", "write one TRUNCATE per table", self._prev)
        if self._curr and self._curr.text.upper() == "FOR":
            self._fail(
                "TRUNCATE does not time travel",
                "TRUNCATE empties the current version of the table: write TRUNCATE TABLE t",
            )
        return texp.Truncate(this=table)

    def _parse_explain(self) -> texp.Explain:
        analyze = self._match(TokenType.ANALYZE)
        return texp.Explain(this=self._parse_query(), analyze=analyze or None)

    def _parse_like(self) -> exp.Expression | None:
        return self._parse_text_value("the LIKE pattern") if self._match(TokenType.LIKE) else None

    def _parse_show_tables(self) -> texp.ShowTables:
        namespace = None
        if self._match_set((TokenType.IN, TokenType.FROM)):
            namespace = self._parse_namespace_name()
        return texp.ShowTables(this=namespace, like=self._parse_like())

    def _parse_show_views(self) -> texp.ShowViews:
        namespace = None
        if self._match_set((TokenType.IN, TokenType.FROM)):
            namespace = self._parse_namespace_name()
        return texp.ShowViews(this=namespace)

    def _parse_describe_statement(self) -> exp.Expression:
        if self._curr and self._curr.token_type in self.QUERY_TOKENS:
            return texp.DescribeQuery(this=self._parse_query())
        word = self._curr.text.upper() if self._curr else ""
        if word in ("NAMESPACE", "SCHEMA") and self._next:
            self._advance()
            return texp.DescribeNamespace(this=self._parse_namespace_name(), kind=word)
        self._match(TokenType.TABLE)
        return texp.DescribeTable(this=self._parse_table_name())

    def _parse_summarize(self) -> texp.SummarizeQuery:
        if self._curr and self._curr.token_type in self.QUERY_TOKENS:
            return texp.SummarizeQuery(this=self._parse_query())
        return texp.SummarizeQuery(this=self._select_all(self._parse_table_reference()), table=True)

    def _parse_table_reference(self) -> exp.Table:
        """``[namespace.]table`` with its time travel clause, as a query reads it."""
        table = self._parse_table_name()
        version = self._parse_version()
        if version is not None:
            table.set("version", version)
        return table

    @staticmethod
    def _select_all(table: exp.Table) -> exp.Select:
        return exp.select(exp.Star(), copy=False).from_(table, copy=False)

    # -- COPY ----------------------------------------------------------------------------

    #: The options COPY takes, and what each one's value is.
    COPY_OPTIONS: ClassVar[dict[str, str]] = {
        "FORMAT": "format",
        "HEADER": "boolean",
        "DELIMITER": "text",
        "OVERWRITE": "boolean",
    }
    #: The formats COPY reads and writes.
    COPY_FORMATS: ClassVar[tuple[str, ...]] = ("csv", "parquet", "json")

    def _parse_copy_statement(self) -> exp.Expression:
        """``COPY t FROM file``, ``COPY t TO file`` or ``COPY (query) TO file``, then options."""
        if self._match(TokenType.L_PAREN):
            query = self._parse_query()
            self._expect(TokenType.R_PAREN, ") after the query of COPY")
            if not self._match_text_seq("TO"):
                self._expected("TO after COPY (query)", "write COPY (query) TO 'file.csv'")
            return texp.CopyTo(this=query, file=self._parse_copy_file(), options=self._copy_opts())
        table = self._parse_table_name()
        if self._match(TokenType.FROM):
            file = self._parse_copy_file()
            return texp.CopyFrom(this=table, file=file, options=self._copy_opts())
        if self._match_text_seq("TO"):
            file = self._parse_copy_file()
            query = self._select_all(table)
            return texp.CopyTo(this=query, file=file, options=self._copy_opts(), table=True)
        self._expected(
            "FROM or TO after the table name",
            "write COPY t FROM 'file.csv' to load a file, COPY t TO 'file.csv' to write one",
        )

    def _parse_copy_file(self) -> exp.Expression:
        return self._parse_text_value("the file name")

    def _copy_opts(self) -> list[texp.CopyOption] | None:
        self._match(TokenType.WITH)  # PostgreSQL's optional WITH before the options
        if self._curr is None or self._curr.token_type != TokenType.L_PAREN:
            return None
        seen: set[str] = set()
        return self._parse_wrapped_list(lambda: self._parse_copy_option(seen), "a COPY option")

    def _parse_copy_option(self, seen: set[str]) -> texp.CopyOption:
        token = self._curr
        word = token.text.upper() if token else ""
        kind = self.COPY_OPTIONS.get(word) if token.token_type != TokenType.STRING else None
        if kind is None:
            self._expected(
                "a COPY option", f"the options are {', '.join(self.COPY_OPTIONS)}: see docs/sql.md"
            )
        if word in seen:
            self._fail(f"COPY option {word} is given twice", "give each option once", token)
        seen.add(word)
        self._advance()
        value: exp.Expression | None = None
        if kind == "format":
            format_token = self._curr
            name = format_token.text.lower() if format_token else ""
            if name not in self.COPY_FORMATS or format_token.token_type == TokenType.STRING:
                self._expected(f"a format ({', '.join(self.COPY_FORMATS)})", "write FORMAT csv")
            self._advance()
            value = exp.var(name)
        elif kind == "boolean":
            if self._match_set((TokenType.TRUE, TokenType.FALSE)):
                value = exp.Boolean(this=self._prev.token_type == TokenType.TRUE)
        else:
            value = self._parse_text_value(f"COPY option {word}")
        return self.expression(texp.CopyOption(this=word, value=value))

    # -- transactions ------------------------------------------------------------------

    def _parse_begin(self) -> texp.Begin:
        self._match_texts(("TRANSACTION", "WORK"))
        return texp.Begin(isolation=self._parse_isolation(optional=True))

    def _parse_start_transaction(self) -> texp.Begin:
        if not self._match_text_seq("TRANSACTION"):
            self._expected("TRANSACTION after START", "write START TRANSACTION")
        return texp.Begin(isolation=self._parse_isolation(optional=True))

    def _parse_end_transaction(self, statement: exp.Expression) -> exp.Expression:
        self._match_texts(("WORK", "TRANSACTION"))
        if isinstance(statement, exp.Rollback) and self._match_text_seq("TO"):
            self._unsupported("ROLLBACK TO SAVEPOINT", "ROLLBACK of the whole transaction")
        return statement

    def _parse_save_transaction(self) -> texp.SaveTransaction:
        if not self._match_text_seq("TRANSACTION"):
            self._expected("TRANSACTION after SAVE", "write SAVE TRANSACTION")
        return texp.SaveTransaction()

    def _parse_load_transaction(self) -> texp.LoadTransaction:
        if not self._match_text_seq("TRANSACTION"):
            self._unsupported(
                "LOAD " + (self._curr.text.upper() if self._curr else ""),
                "LOAD TRANSACTION 'id' (loading extensions is not)",
            )
        return texp.LoadTransaction(this=self._parse_text_value("the transaction id"))

    def _parse_set_statement(self) -> texp.SetTransaction | texp.SetCommitMessage:
        if self._match_text_seq("COMMIT", "MESSAGE"):
            return texp.SetCommitMessage(this=self._parse_text_value("the commit message"))
        if not self._match_text_seq("TRANSACTION"):
            self._unsupported(
                "SET " + (self._curr.text.upper() if self._curr else ""),
                "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE | SNAPSHOT, or "
                "SET COMMIT MESSAGE 'text'",
            )
        isolation = self._parse_isolation(optional=False)
        return texp.SetTransaction(isolation=isolation)

    def _parse_isolation(self, optional: bool) -> str | None:
        if not self._match_text_seq("ISOLATION", "LEVEL"):
            if optional:
                return None
            self._expected("ISOLATION LEVEL", "write SET TRANSACTION ISOLATION LEVEL SNAPSHOT")
        token = self._curr
        if self._match_texts(("SERIALIZABLE", "SNAPSHOT")):
            level = self._prev.text.upper()
            if level == "SNAPSHOT":
                self._match_text_seq("ISOLATION")
            return level
        if self._match_texts(("READ", "REPEATABLE")):
            level = f"{token.text} {self._curr.text}".upper() if self._curr else token.text
            self._fail(f"Isolation level {level} is not supported", _ISOLATION_HINT, token)
        self._expected("SERIALIZABLE or SNAPSHOT", _ISOLATION_HINT)

    # -- CALL ------------------------------------------------------------------------------

    def _parse_call(self) -> texp.Call:
        procedure = self._parse_table_name("a procedure name")
        self._expect(TokenType.L_PAREN, "( after the procedure name", "write CALL system.compact()")
        args: list[exp.Expr] = []
        names: set[str] = set()
        if not self._match(TokenType.R_PAREN):
            while True:
                args.append(self._parse_call_argument(names))
                if not self._match(TokenType.COMMA):
                    break
            self._expect(TokenType.R_PAREN, ", or ) after the argument")
        return texp.Call(this=procedure, expressions=args or None)

    def _parse_call_argument(self, names: set[str]) -> exp.Expr:
        if self._next.token_type != TokenType.FARROW:
            if names:
                self._fail(
                    "A positional argument follows a named one",
                    "pass positional arguments first, then name => value pairs",
                )
            return self._parse_literal_value("a procedure argument")
        token = self._curr
        if token.token_type == TokenType.WHERE:  # before => it can only be a name (Iceberg's)
            self._advance()
            name = self._identifier_expression(token, quoted=False)
        else:
            name = self._parse_name("an argument name")
        key = name.name if name.quoted else name.name.lower()
        if key in names:
            self._fail(f"Argument {key} is given twice", "name each argument once", token)
        names.add(key)
        self._advance()  # =>
        value = self._parse_literal_value(f"argument {key}")
        return self.expression(exp.Kwarg(this=name, expression=value))

    def _parse_literal_value(self, what: str) -> exp.Expr:
        """A literal: string, number, TRUE, FALSE, NULL, ``TYPE 'text'`` or ``?``."""
        token = self._curr
        value = self._parse_unary()
        if value is None or not _is_literal(value):
            self._fail(
                f"Expected a literal for {what}",
                "write a string, a number, TRUE, FALSE, NULL, TIMESTAMP '...' or ?",
                token,
            )
        return value

    # -- time travel --------------------------------------------------------------------

    def _parse_version(self) -> exp.Version | None:
        """``FOR SYSTEM_VERSION|VERSION|SYSTEM_TIME|TIMESTAMP AS OF value`` after a table name."""
        spelling = next(
            (
                word
                for phrase, word in self.VERSION_PHRASES.items()
                if self._match_text_seq(*phrase)
            ),
            None,
        )
        if spelling is None:
            return None
        if not self._match_text_seq("AS", "OF"):
            self._expected(f"AS OF after FOR {spelling}")
        token = self._curr
        value = self._parse_unary()
        by_time = self.TIME_TRAVEL_BY_TIME[spelling]
        allowed = _is_time_value(value) if by_time else _is_version_value(value)
        if not allowed:
            what = "TIMESTAMP '...', a string or ?" if by_time else "an integer, a string or ?"
            self._fail(
                f"FOR {spelling} AS OF takes {what}",
                f"write FOR {spelling} AS OF "
                + ("TIMESTAMP '2026-01-01 00:00:00'" if by_time else "3 (a version number)"),
                token,
            )
        return self.expression(exp.Version(this=spelling, kind="AS OF", expression=value))

    def _parse_historical_data(self) -> exp.HistoricalData | None:
        # DuckDB's AT (VERSION => n) is not trinity SQL: FOR SYSTEM_VERSION AS OF n is.
        return None


def _is_typed_string(value: exp.Expr | None) -> bool:
    return (
        isinstance(value, exp.Cast)
        and bool(meta_get(value, texp.TYPED_LITERAL))
        and isinstance(value.this, exp.Literal)
        and value.this.is_string
    )


def _is_literal(value: exp.Expr | None) -> bool:
    if isinstance(value, exp.Neg):
        value = value.this
        return isinstance(value, exp.Literal) and value.is_number
    return isinstance(value, (exp.Literal, exp.Boolean, exp.Null, exp.Placeholder)) or (
        _is_typed_string(value) and isinstance(value, exp.Cast) and value.to.this in _TIME_TYPES
    )


def _is_version_value(value: exp.Expr | None) -> bool:
    return isinstance(value, exp.Placeholder) or (
        isinstance(value, exp.Literal) and (value.is_string or value.is_int)
    )


def _is_time_value(value: exp.Expr | None) -> bool:
    return (
        isinstance(value, exp.Placeholder)
        or (isinstance(value, exp.Literal) and value.is_string)
        or (
            _is_typed_string(value) and isinstance(value, exp.Cast) and value.to.this in _TIME_TYPES
        )
    )


#: Types of the typed literals the grammar takes: TIMESTAMP, TIMESTAMPTZ and DATE.
_TIME_TYPES = frozenset(
    {
        DType.TIMESTAMP,
        DType.TIMESTAMPNTZ,
        DType.TIMESTAMPTZ,
        DType.TIMESTAMPLTZ,
        DType.DATE,
    }
)
