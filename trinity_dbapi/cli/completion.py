"""Tab completion: what may come next in the word being typed.

:func:`complete` offers SQL keywords, namespaces (``shop.``), tables
(``shop.orders``, and unqualified in the current namespace), the columns of
the tables the statement names, procedures after ``CALL`` (``system.compact(``),
branch names after ``USE BRANCH``, ``MERGE BRANCH``, ``DROP BRANCH``, ``FROM
BRANCH`` and ``MERGE BRANCH x INTO``, tag names after ``DROP TAG`` and ``FROM
TAG``, and, at the start of a statement, dot-commands. The names come from a
:class:`Catalog`, which reads them through the connection with the catalog's
own queries (``SHOW NAMESPACES``, ``information_schema.tables``, ``DESCRIBE``,
``SHOW BRANCHES``, ``SHOW TAGS``: tree reads, never data files) when a
completion first needs them, and keeps them until the shell says the catalog
may have changed (its ``catalog_epoch``). Readline itself is wired in :mod:`.interactive`.
:func:`create_statements` reads the catalog for ``.schema``.

Imports from cli/: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

#: The keywords offered, upper case (offered in lower case to lower-case typing).
KEYWORDS = tuple(
    """
    SELECT FROM WHERE GROUP BY HAVING ORDER LIMIT OFFSET DISTINCT AS AND OR NOT IN IS
    NULL LIKE ILIKE BETWEEN CASE WHEN THEN ELSE END JOIN LEFT RIGHT FULL INNER OUTER
    CROSS ON USING UNION ALL EXCEPT INTERSECT WITH RECURSIVE ASC DESC NULLS FIRST LAST
    INSERT INTO VALUES UPDATE SET DELETE MERGE MATCHED CREATE TABLE NAMESPACE SCHEMA
    VIEW INDEX DROP ALTER RENAME TO ADD COLUMN IF EXISTS PRIMARY KEY PARTITIONED DEFAULT CLONE
    COMMENT CASCADE SHOW TABLES NAMESPACES SCHEMAS VIEWS DESCRIBE EXPLAIN ANALYZE
    SUMMARIZE CALL USE BEGIN COMMIT ROLLBACK TRANSACTION MESSAGE COPY TRUE FALSE CAST COUNT SUM
    AVG MIN MAX COALESCE INTEGER BIGINT VARCHAR DOUBLE DECIMAL BOOLEAN DATE TIMESTAMP
    TIMESTAMPTZ INTERVAL SAVE LOAD BRANCH BRANCHES TAG TAGS VERSION
    """.split()  # noqa: SIM905 - a list to read, not to format
)

#: Words after which a table name comes: no keyword is offered there.
_NAME_COMES_NEXT = frozenset(
    {"from", "join", "into", "update", "table", "describe", "summarize", "clone"}
)
#: Namespaces every lakehouse has, offered only when typed: ``sys`` completes them.

_BUILT_IN = ("information_schema", "system")

#: A table the statement names, with its alias: ``FROM shop.orders o``, ``JOIN people AS p``.
_TABLE_REFERENCE = re.compile(
    r'\b(?:from|join|into|update|table|describe|summarize)\s+((?:"[^"]+"|\w+)(?:\.(?:"[^"]+"|\w+))?)'
    r"(?:\s+(?:as\s+)?(?!(?:as|on|using|where|group|order|limit|having|set|values|window|natural"
    r"|join|left|right|full|inner|outer|cross|union|except|intersect|select)\b)(\w+))?",
    re.IGNORECASE,
)
#: Where a branch name comes next: ``USE BRANCH``, ``MERGE BRANCH [x INTO]``, ``DROP BRANCH
#: [IF EXISTS]``, ``FROM BRANCH``; and where a tag name does.
_BRANCH_COMES_NEXT = re.compile(
    r"\b(?:(?:use|merge|from)\s+branch|drop\s+branch(?:\s+if\s+exists)?"
    r'|merge\s+branch\s+(?:"[^"]+"|\S+)\s+into)\s+$',
    re.IGNORECASE,
)
_TAG_COMES_NEXT = re.compile(r"\b(?:from\s+tag|drop\s+tag(?:\s+if\s+exists)?)\s+$", re.IGNORECASE)
#: ``CREATE BRANCH x FROM`` / ``CREATE TAG t FROM``: the kind of source comes next.
_REF_SOURCE_COMES_NEXT = re.compile(r"\bcreate\s+(branch|tag)\s.*\bfrom\s+$", re.IGNORECASE)
_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]*")
#: Keywords a name must be quoted to be (``"order"``); ``default`` and the like need not.
_RESERVED = frozenset(
    """
    ALL AND AS BY CASE CREATE DELETE DROP ELSE END FROM GROUP HAVING IN INSERT INTO IS
    JOIN LIMIT NOT NULL ON OR ORDER SELECT SET TABLE THEN UNION UPDATE USING VALUES WHEN
    WHERE WITH
    """.split()  # noqa: SIM905 - a list to read, not to format
)


def quote(name: str) -> str:
    """``name`` as typed in SQL: bare when it is a lower-case plain word, else quoted."""
    if _PLAIN_NAME.fullmatch(name) and name.upper() not in _RESERVED:
        return name
    from trinity_dbapi.format.sql_text import quote_identifier

    return quote_identifier(name)


def _unquote(name: str) -> str:
    if len(name) > 1 and name.startswith('"') and name.endswith('"'):
        return name[1:-1].replace('""', '"')
    return name.lower()


class Catalog:
    """The names in a lakehouse, read when first needed and kept until the epoch changes.

    While a transaction is open nothing is read: the names read before it
    are offered (or none). A catalog read inside a SERIALIZABLE transaction
    joins its read set, and a table another writer then creates would make
    the user's COMMIT fail; a completion must never do that.

    Args:
        source: returns ``(connection, epoch)``: the connection to read
            through, and a number that changes whenever the names may have
            (the shell's ``catalog_epoch``; a new connection counts as a change).
    """

    def __init__(self, source: Callable[[], tuple[Any, int]]) -> None:
        self._source = source
        self._key: tuple[int, int] | None = None
        self._tables: dict[str, list[str]] = {}
        self._columns: dict[tuple[str, str], list[str]] = {}
        self._refs: dict[str, list[str]] = {}

    def _fresh(self) -> Any:
        """The connection to read through, None while a transaction is open."""
        connection, epoch = self._source()
        if getattr(connection, "in_transaction", False):
            return None
        key = (id(connection), epoch)
        if key != self._key:
            self._key, self._tables, self._columns, self._refs = None, {}, {}, {}
            tables: dict[str, list[str]] = {}
            cursor = connection.cursor()
            for (namespace,) in cursor.execute("SHOW NAMESPACES").fetchall():
                tables[namespace] = []
            cursor.execute("SELECT table_schema, table_name FROM information_schema.tables")
            for namespace, table in cursor.fetchall():
                tables.setdefault(namespace, []).append(table)
            self._tables, self._key = tables, key
        return connection

    def namespaces(self) -> list[str]:
        """Every namespace, the built-in ones included."""
        self._fresh()
        return sorted(self._tables)

    def tables(self, namespace: str) -> list[str]:
        """The tables and views of ``namespace`` (none when it does not exist)."""
        self._fresh()
        return sorted(self._tables.get(namespace, []))

    def columns(self, namespace: str, table: str) -> list[str]:
        """The columns of ``namespace.table`` in order (none when it does not exist)."""
        connection = self._fresh()
        if table not in self._tables.get(namespace, []):
            return []
        if (namespace, table) not in self._columns:
            if connection is None:  # in a transaction: only what was read before
                return []
            cursor = connection.cursor()
            cursor.execute(f"DESCRIBE {quote(namespace)}.{quote(table)}")
            self._columns[namespace, table] = [str(row[0]) for row in cursor.fetchall()]
        return self._columns[namespace, table]

    def refs(self, kind: str) -> list[str]:
        """The names of every ``"BRANCHES"`` (main included) or ``"TAGS"``, read once per epoch."""
        connection = self._fresh()
        if kind not in self._refs:
            if connection is None:  # in a transaction: only what was read before
                return []
            rows = connection.cursor().execute(f"SHOW {kind}").fetchall()
            self._refs[kind] = sorted(str(row[0]) for row in rows)
        return self._refs[kind]


def _procedures() -> list[str]:
    from trinity_dbapi.sql.engine.procedures import PROCEDURES

    return sorted(PROCEDURES)


def _in_case(word: str, typed: str) -> str:
    """A keyword in the case the user types in: ``sel`` gives ``select``."""
    return word.lower() if typed and typed == typed.lower() else word


def _matching(names: Iterable[str], typed: str, prefix: str = "", suffix: str = " ") -> list[str]:
    """The names starting with ``typed`` (any case, quotes aside), as ``prefix + name + suffix``."""
    wanted = typed.lstrip('"').lower()
    return [f"{prefix}{quote(name)}{suffix}" for name in names if name.lower().startswith(wanted)]


def _referenced(statement: str, catalog: Catalog, current: str) -> dict[str, tuple[str, str]]:
    """The tables ``statement`` names, by the names that may qualify their columns.

    Each of ``orders``, ``shop.orders`` and an alias ``o`` maps to
    ``("shop", "orders")``.
    """
    found: dict[str, tuple[str, str]] = {}
    for match in _TABLE_REFERENCE.finditer(statement):
        parts = [_unquote(part) for part in re.findall(r'"[^"]+"|\w+', match.group(1))]
        namespace, table = parts if len(parts) == 2 else (current, parts[0])
        if table not in catalog.tables(namespace):
            continue
        found[table] = found[f"{namespace}.{table}"] = (namespace, table)
        alias = match.group(2)
        if alias and alias.upper() not in KEYWORDS:
            found[alias.lower()] = (namespace, table)
    return found


def complete(
    word: str,
    before: str,
    *,
    catalog: Catalog,
    current: str,
    commands: Iterable[str] = (),
) -> list[str]:
    """What may replace ``word``, the word being typed.

    Args:
        word: the text being completed (from the last space or bracket;
            it may hold dots: ``shop.or``).
        before: the statement's text before ``word`` (earlier lines included).
        catalog: where names come from.
        current: the current namespace, where unqualified tables resolve.
        commands: the dot- and backslash commands, offered at the start of a statement.

    Returns:
        The candidates, each ending as the completed text should (a space
        after a whole word, nothing after ``shop.`` or ``compact(``).
    """
    if not before.strip() and word.startswith((".", "\\")):
        return sorted(f"{name} " for name in commands if name.startswith(word.lower()))
    previous = before.split()[-1].lower() if before.split() else ""
    if "." in word:
        qualifier, _, typed = word.rpartition(".")
        parts = [_unquote(part) for part in qualifier.split(".")]
        if previous == "call" and parts == ["system"]:
            return _matching(_procedures(), typed, f"{qualifier}.", "(")
        found: list[str] = []
        if len(parts) == 1:
            found += _matching(catalog.tables(parts[0]), typed, f"{qualifier}.")
        tables = _referenced(before, catalog, current)
        target = tables.get(".".join(parts)) or (
            (parts[0], parts[1]) if len(parts) == 2 else (current, parts[0])
        )
        found += _matching(catalog.columns(*target), typed, f"{qualifier}.")
        return sorted(set(found))
    if previous == "call":
        return [f"{name}." for name in ("system",) if name.startswith(word.lower())]
    if _BRANCH_COMES_NEXT.search(before):
        return _matching(catalog.refs("BRANCHES"), word)
    if _TAG_COMES_NEXT.search(before):
        return _matching(catalog.refs("TAGS"), word)
    source = _REF_SOURCE_COMES_NEXT.search(before)
    if source:  # a tag is made from a branch or a version; a branch from a tag too
        kinds = (
            ("BRANCH", "VERSION") if source[1].lower() == "tag" else ("BRANCH", "TAG", "VERSION")
        )
        return [f"{_in_case(kind, word)} " for kind in kinds if kind.startswith(word.upper())]
    found = []
    if previous not in _NAME_COMES_NEXT:  # after FROM a name comes, never a keyword
        found = [
            f"{_in_case(keyword, word)} "
            for keyword in KEYWORDS
            if keyword.startswith(word.upper())
        ]
    namespaces = [
        namespace
        for namespace in catalog.namespaces()
        if namespace not in _BUILT_IN or (word and namespace.startswith(word.lower()))
    ]
    found += _matching(namespaces, word, suffix=".")
    found += _matching(catalog.tables(current), word)
    for namespace, table in set(_referenced(before, catalog, current).values()):
        found += _matching(catalog.columns(namespace, table), word)
    return sorted(set(found))


def create_statements(connection: Any, table: str | None = None) -> str | None:
    """``.schema``: the ``CREATE TABLE`` statement of ``table``, or of every table.

    Args:
        connection: where to read them.
        table: a table name as written in SQL (``shop.orders``); None: every
            table of every namespace but the built-in ones, as sqlite3's
            ``.schema`` shows them all.

    Returns:
        The statements, one per line, each ending with ``;``; None when there are none.
    """
    cursor = connection.cursor()
    if table is not None:
        names = [table]
    else:
        cursor.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('system', 'information_schema') "
            "AND table_type = 'BASE TABLE' ORDER BY 1, 2"
        )
        names = [f"{quote(namespace)}.{quote(name)}" for namespace, name in cursor.fetchall()]
    statements: list[str] = []
    for name in names:
        cursor.execute(f"SHOW CREATE TABLE {name}")
        statements.extend(f"{row[0]};" for row in cursor.fetchall())
    return "\n".join(statements) if statements else None
