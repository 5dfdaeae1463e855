"""Queries that need only how many rows a table has, answered without reading a data file.

A query that names one table and none of its columns (``SELECT count(*)
FROM t``, ``SELECT count(*) > 0 FROM t``, ``SELECT 1 FROM t LIMIT 1``) has
the same result over any relation with as many rows. When every file of
the table's version is known (:meth:`~trinity_dbapi.tables.scan.ScanPlan.row_count`:
the dataset metadata records each file's rows), the table is replaced by
``range(rows)``, which DuckDB counts without any I/O: on object storage the
answer costs the definition and the dataset metadata, not a request per
file.

Only a small, closed set of expressions qualifies (:data:`_ALLOWED`):
anything else (a column, ``*`` outside ``count(*)``, ``COLUMNS(...)``, a
function, a subquery, a parameter) is scanned as usual, so no query can
observe the replacement.

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from trinity_dbapi.format.sql_text import quote_identifier
from trinity_dbapi.tables import scan

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.transaction import Transaction
    from trinity_dbapi.storage import Storage

__all__ = ["reads_no_column", "rows_relation", "table_rows"]

#: The expressions a query answered from row counts may hold (besides its one table).
_ALLOWED = (
    exp.Select,
    exp.From,
    exp.Alias,
    exp.Identifier,
    exp.Count,
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Paren,
    exp.Neg,
    exp.Not,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.And,
    exp.Or,
    exp.Limit,
    exp.Offset,
)


def reads_no_column(query: exp.Expression) -> bool:
    """Whether ``query`` reads one table and only how many rows it has."""
    if not isinstance(query, exp.Select):
        return False
    tables = list(query.find_all(exp.Table))
    if len(tables) != 1 or not isinstance(tables[0].parent, exp.From):
        return False
    table = tables[0]
    pending: list[exp.Expression] = [query]
    while pending:  # the tree, the table's own subtree (its name, alias, version) left out
        node = pending.pop()
        if node is table:
            continue
        if isinstance(node, exp.Star):
            if not isinstance(node.parent, exp.Count):
                return False
        elif not isinstance(node, _ALLOWED):
            return False
        pending.extend(node.iter_expressions())
    return True


def table_rows(storage: Storage, view: Transaction, namespace: str, table: str) -> int | None:
    """The rows of ``namespace.table`` as ``view`` sees it, when every file's count is known.

    Raises:
        NoSuchTableError: there is no such table (as a scan would).
    """
    definition = view.load_table(namespace, table)
    return scan.plan_query_scan(storage, definition, {}).row_count(storage)


def rows_relation(rows: int) -> str:
    """A DuckDB subquery of ``rows`` rows and one NULL column."""
    return f"(SELECT NULL AS {quote_identifier('rows')} FROM range({int(rows)}))"
