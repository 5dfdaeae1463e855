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

Imports from sql/engine/: duck_run, query, session, view_expansion.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from trinity_dbapi.errors import DataError, NotSupportedError, ProgrammingError
from trinity_dbapi.format.sql_text import quote_identifier
from trinity_dbapi.sql.engine.duck_run import drop_temporary, execute_duckdb
from trinity_dbapi.sql.engine.query import REF_KEY, execute_marked, marked
from trinity_dbapi.sql.engine.view_expansion import expand_views

if TYPE_CHECKING:
    from trinity_dbapi.sql import model
    from trinity_dbapi.sql.engine.session import Session


class Matchable(NamedTuple):
    """The rows a MERGE can match, and whether one of them can match twice."""

    #: Positions (the ``row`` column of the staged rows), ascending.
    positions: pa.Array
    #: Whether some row has more than one source row equal on the key: only
    #: then can the statement act on a row twice (the cardinality rule).
    repeated: bool


class Keys(NamedTuple):
    """The source's key values, counted, in a temporary DuckDB table (:func:`count_keys`)."""

    #: The temporary table: ``__trinity_key`` (the source column's values, as
    #: DuckDB types them) and ``__trinity_n`` (how many source rows hold each).
    table: str
    #: The target column the ``ON`` condition compares with them.
    column: str


def count_keys(session: Session, stmt: model.Dml, names: list[str]) -> Keys | None:
    """Count the source's values of the ``ON`` equality's source column into a temporary table.

    None when the statement gives no such equality, may act on unmatched
    target rows (``WHEN NOT MATCHED BY SOURCE``), or the source cannot be
    read as written (then the statement itself reports what is wrong). The
    source does not depend on the target's rows, so :mod:`.merge` runs this
    while another thread reads them. The caller drops the table
    (:func:`drop_keys`).
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
    keys = (
        exp.select(source_column.copy().as_(_KEY, quoted=True), exp.Count(this=exp.Star()).as_(_N))
        .from_(source)
        .group_by(source_column)
    )
    table = f"__trinity_keys_{uuid.uuid4().hex[:12]}"
    create: exp.Expression = exp.Create(
        this=exp.Table(this=exp.to_identifier(table, quoted=True)),
        kind="TABLE",
        expression=keys,
        properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
    )
    try:
        # Views first: a view's query is part of the source, and may vary too.
        create, refs = expand_views(session, create, stmt.tables, REF_KEY)
        if varies(create):
            return None  # the statement reads its source once, as DuckDB does
        execute_marked(session, create, refs, stmt.params)
    except (ProgrammingError, DataError, NotSupportedError):
        return None  # the MERGE itself will say what is wrong, as DuckDB words it
    return Keys(table, target_column)


#: Functions whose value may differ between two queries of one statement:
#: DuckDB's ``VOLATILE`` ones (``duckdb_functions()``) and the clock, which is
#: fixed only within a query.
VARYING = frozenset(
    {
        "current_connection_id",
        "current_query",
        "current_query_id",
        "current_transaction_id",
        "currval",
        "gen_random_uuid",
        "nextval",
        "rand",
        "random",
        "setseed",
        "setval",
        "uuid",
        "uuidv4",
        "uuidv7",
        "current_date",
        "current_localtime",
        "current_localtimestamp",
        "current_time",
        "current_timestamp",
        "get_current_time",
        "get_current_timestamp",
        "localtime",
        "localtimestamp",
        "now",
        "today",
        "transaction_timestamp",
        "txid_current",
    }
)


def varies(query: exp.Expression) -> bool:
    """Whether two runs of ``query`` may read different rows (a sample, a varying function).

    The keys are counted by one query and the statement reads its source in
    another: a source that can change between the two would make the
    semi-join leave out a row the statement then matches.
    """
    if any(True for _ in query.find_all(exp.TableSample)):
        return True
    for func in query.find_all(exp.Func):
        # sqlglot's names for the function (RAND and RANDOM...), or the one written.
        names = [func.name] if isinstance(func, exp.Anonymous) else type(func).sql_names()
        if any(name.lower() in VARYING for name in names):
            return True
    return False


def drop_keys(session: Session, keys: Keys) -> None:
    """Drop the table :func:`count_keys` made, even while an interrupt repeats."""
    drop_temporary(session.duckdb(), keys.table)


def matchable(session: Session, keys: Keys, staged: str, row: str) -> Matchable | None:
    """The rows (``row`` column of ``staged``) the MERGE can match.

    Each target row is joined to the counted keys with the very comparison
    of the ``ON`` condition (``t.a = s.b``), so the sum of its counts is the
    number of source rows equal to it: a target row with at most one can
    match at most one source row, whatever else ``ON`` says, and the
    statement needs no cardinality check unless some row has more (two keys
    that compare equal to it after a cast count twice too). None when the
    comparison fails (a cast DuckDB refuses): the statement reports it.
    """
    query = (
        f"SELECT t.{quote_identifier(row)}, k.{_N} FROM {quote_identifier(staged)} AS t "
        f"JOIN {quote_identifier(keys.table)} AS k "
        f"ON t.{quote_identifier(keys.column)} = k.{quote_identifier(_KEY)}"
    )
    try:
        result = execute_duckdb(session.duckdb(), query, [])
    except (ProgrammingError, DataError, NotSupportedError):
        return None
    found = np.sort(pa.chunked_array(result.column(0), pa.int64()).to_numpy())
    counts = pa.chunked_array(result.column(1), pa.int64())
    most = pc.max(counts).as_py() if len(counts) else 0
    # A row joined to two keys (equal to it after a cast) matches twice too.
    repeated = bool(most is not None and most > 1) or bool(np.any(found[1:] == found[:-1]))
    return Matchable(pa.array(np.unique(found) if repeated else found), repeated)


#: The counted keys' columns: the key and its count.
_KEY, _N = "__trinity_key", "__trinity_n"


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
