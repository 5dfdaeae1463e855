"""The target rows a MERGE can match: a semi-join on an equality of its ON condition.

A MERGE whose ``ON`` condition has a conjunct ``t.a = s.b`` (target column
equals source column), and no ``WHEN NOT MATCHED BY SOURCE`` clause, acts
only on target rows whose ``a`` is among the source's ``b`` values: any
other row matches no source row, so no ``WHEN MATCHED`` clause applies to
it, and it makes no source row "matched" either, so the ``NOT MATCHED``
inserts are the same without it. Only the matchable rows go into the
temporary copy the statement runs on (:mod:`.merge`); a MERGE of 100,000
source rows into a million-row file then copies, runs on and reads back
about the 50,000 rows that match instead of the whole file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from trinity_dbapi.errors import DataError, NotSupportedError, ProgrammingError
from trinity_dbapi.sql.engine.query import execute_marked, marked

if TYPE_CHECKING:
    from trinity_dbapi.sql import model
    from trinity_dbapi.sql.engine.session import Session


def matchable(
    session: Session, stmt: model.Dml, staged: str, row: str, names: list[str]
) -> pa.Array | None:
    """The positions (``row`` column of ``staged``, ascending) of the rows the MERGE can match.

    None when the statement gives no such equality, may act on unmatched
    target rows (``WHEN NOT MATCHED BY SOURCE``), or the semi-join cannot be
    run as written (then the statement itself reports what is wrong).
    """
    node = stmt.expression
    if not isinstance(node, exp.Merge):
        return None
    whens = node.args.get("whens")
    if any(when.args.get("source") for when in (whens.expressions if whens else ())):
        return None
    pair = _equality(node, names)
    if pair is None:
        return None
    target_column, source_column = pair
    with marked(stmt.tables):
        source = node.args["using"].copy()
    alias = node.this.alias_or_name
    keys = exp.select(source_column).from_(source)
    query = (
        exp.select(exp.column(row, table=alias, quoted=True))
        .from_(
            exp.Table(
                this=exp.to_identifier(staged, quoted=True),
                alias=exp.TableAlias(this=exp.to_identifier(alias, quoted=True)),
            )
        )
        .where(exp.column(target_column, table=alias, quoted=True).isin(query=keys))
        .order_by(exp.column(row, table=alias, quoted=True))
    )
    try:
        result = execute_marked(session, query, stmt.tables, stmt.params)
    except (ProgrammingError, DataError, NotSupportedError):
        return None  # the MERGE itself will say what is wrong, as DuckDB words it
    return pa.chunked_array(result.column(0), pa.int64()).combine_chunks()


def _equality(node: exp.Merge, names: list[str]) -> tuple[str, exp.Column] | None:
    """``(target column, source column)`` of an ``AND``-ed ``t.a = s.b`` in ON (or USING)."""
    target = node.this.alias_or_name
    source = node.args["using"].alias_or_name
    if not source or source == target:
        return None
    lower = {name.lower(): name for name in names}
    using = node.args.get("using_cond")
    if using and not node.args.get("on"):
        name = using[0]
        if name.name.lower() not in lower:
            return None
        return lower[name.name.lower()], exp.column(name.copy(), table=source)
    condition = node.args.get("on")
    if condition is None:
        return None
    conjuncts = condition.flatten() if isinstance(condition, exp.And) else [condition]
    for conjunct in conjuncts:
        while isinstance(conjunct, exp.Paren):
            conjunct = conjunct.this
        if not isinstance(conjunct, exp.EQ):
            continue
        left, right = conjunct.this, conjunct.expression
        if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
            continue
        if left.table == source and right.table == target:
            left, right = right, left
        if left.table != target or right.table != source or left.args.get("db"):
            continue
        if right.args.get("db") or left.name.lower() not in lower:
            continue
        return lower[left.name.lower()], right.copy()
    return None
