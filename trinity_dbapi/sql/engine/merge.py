"""MERGE INTO and UPDATE ... FROM: DuckDB's own statement run on a copy of the target's rows.

Both statements have semantics DuckDB defines in detail (which WHEN clause
applies, ``INSERT *`` and ``UPDATE SET *`` by position, the error when a
target row matches several source rows, the implicit casts, the row count).
Rather than re-deriving them, the statement runs in the session's private
DuckDB against a temporary table holding the candidate rows of the target,
each at a known ``rowid``; the source and every other table reference are
the usual scans of the pinned version (:func:`~trinity_dbapi.sql.engine.query.execute_marked`).

Afterwards the temporary table says what changed: a candidate row that is
gone or differs marks its file as affected, a row with a ``rowid`` past the
candidates is new. As for UPDATE and DELETE (:mod:`~trinity_dbapi.sql.engine.dml`),
only the affected files are rewritten (copy-on-write at file granularity),
new rows are written as new files, and the change is staged once: one
commit in autocommit, or part of the open transaction. The temporary table
is dropped whatever happens; nothing is staged unless the statement succeeded.

Which data statements are this module's rather than :mod:`.dml`'s is
:func:`handles`'s to say; the front door (:mod:`.dispatch`) asks it.

Imports from sql/engine/: dml, duck_run, merge_keys, predicates, query, result, session.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from trinity_dbapi.errors import DataError, NotSupportedError, ProgrammingError
from trinity_dbapi.format.sql_text import quote_identifier
from trinity_dbapi.sql import model
from trinity_dbapi.sql.engine.dml import Target
from trinity_dbapi.sql.engine.duck_run import drop_temporary, execute_duckdb, unregister
from trinity_dbapi.sql.engine.merge_keys import Keys, count_keys, drop_keys, matchable
from trinity_dbapi.sql.engine.predicates import NO_VALUE, constant
from trinity_dbapi.sql.engine.query import REF_KEY, execute_marked, marked
from trinity_dbapi.sql.engine.result import Result
from trinity_dbapi.sql.engine.session import Session

#: Each candidate row's position: the ``rowid`` it gets in the temporary copy.
_ROW = "__trinity_row"


def handles(node: exp.Expression) -> bool:
    """Whether the data statement ``node`` is this module's: MERGE, or UPDATE with a FROM."""
    if isinstance(node, exp.Merge):
        return True
    return isinstance(node, exp.Update) and bool(node.args.get("from_") or node.args.get("from"))


def merge(session: Session, stmt: model.Dml) -> Result:
    """``MERGE INTO`` or ``UPDATE ... FROM`` (``stmt.expression``) with DuckDB's semantics."""
    node = stmt.expression
    kind = "MERGE" if isinstance(node, exp.Merge) else "UPDATE ... FROM"
    for arg, clause in (("returning", "RETURNING"), ("with_", "WITH"), ("with", "WITH")):
        if node.args.get(arg):
            raise NotSupportedError(
                f"{clause} is not supported on {kind}; write the statement without it "
                "(a subquery in USING or FROM can take the place of a WITH)"
            )
    target = Target(session, stmt.tables[0].table)
    if any(name.lower() == "rowid" for name in target.schema.names):
        raise NotSupportedError(
            f"{kind} into {target.namespace}.{target.name} is not supported: its column "
            "'rowid' hides the row identity the statement tracks changes by; rename the "
            "column (ALTER TABLE ... RENAME COLUMN rowid TO ...) or use UPDATE/DELETE/INSERT"
        )
    files = _candidate_files(target, stmt)
    # The source's keys are counted in DuckDB while another thread reads the
    # candidate rows (both mostly run outside the GIL): neither needs the other.
    with ThreadPoolExecutor(1, thread_name_prefix="trinity-merge-read") as pool:
        reading = pool.submit(target.rows_with_owners, files)
        keys = count_keys(session, stmt, target.schema.names)
        try:
            rows, owners = reading.result()
        except BaseException:
            if keys is not None:
                drop_keys(session, keys)
            raise
    try:
        total = rows.num_rows
        rows = rows.append_column(_ROW, pa.array(np.arange(total, dtype=np.int64)))
        count, changed, now, selected = _apply(session, stmt, rows, target.schema.names, keys)
    finally:
        if keys is not None:
            drop_keys(session, keys)
    # Files are tracked by their position in ``files`` (int32): taking and
    # comparing a million file labels as strings cost more than the statement.
    touched = pc.unique(pc.take(owners, changed)) if len(changed) else pa.array([], pa.int32())
    affected = sorted(files[index] for index in touched.to_pylist())
    # The affected files' rows as they are now, then the new rows: one write.
    patched = _patched(rows, owners, len(files), touched, changed, now, target.schema.names)
    if patched is not None:
        parts = [patched]
    else:
        positions = now.column(_ROW)
        old = pc.less(positions, total)
        keep = pc.invert(old)
        if affected:  # then there are candidates, and position 0 exists
            owner = pc.take(owners, pc.if_else(old, positions, 0))
            keep = pc.or_(keep, pc.and_(old, pc.is_in(owner, value_set=touched)))
        parts = [now.filter(keep)]
        if selected is not None and affected:
            parts = _with_unmatchable(parts[0], rows, owners, selected, touched)
    task = "merge into" if isinstance(node, exp.Merge) else "update"
    added: dict[str, str] = {}
    for part in parts:
        if _ROW in part.column_names:
            part = part.drop_columns([_ROW])
        added.update(target.write(part, task)[0])
    target.stage(added, removed=affected)
    return Result(None, count)


def _candidate_files(target: Target, stmt: model.Dml) -> list[str]:
    """The target's files that rows the statement can act on may be in.

    ``target.p = constant`` (or ``IN (constants)``) in the ``ON`` condition
    of a MERGE without ``WHEN NOT MATCHED BY SOURCE`` (or in the ``WHERE`` of
    an UPDATE ... FROM) pins the only rows that can match: the other
    partitions (and files a secondary index rules out) are neither read nor
    rewritten, and no source row can match a row in them.
    """
    from trinity_dbapi.tables.scan import pruned_labels

    node = stmt.expression
    if isinstance(node, exp.Merge):
        whens = node.args.get("whens")
        by_source = any(w.args.get("source") for w in (whens.expressions if whens else ()))
        condition = None if by_source else node.args.get("on")
    else:
        where = node.args.get("where")
        condition = where.this if where is not None else None
    predicate = _pins(condition, node.this, stmt.params) if condition is not None else {}
    if not predicate:
        return sorted(target.meta.files())
    return sorted(pruned_labels(target.storage, target.definition, target.meta, predicate))


def _pins(condition: exp.Expr, table: exp.Table, params: Sequence[Any]) -> dict[str, list[Any]]:
    """``column -> values`` of the ``AND``-ed ``t.column = constant`` / ``IN`` terms."""
    name = table.alias_or_name
    conjuncts = condition.flatten() if isinstance(condition, exp.And) else [condition]
    pins: dict[str, list[Any]] = {}
    for conjunct in conjuncts:
        while isinstance(conjunct, exp.Paren):
            conjunct = conjunct.this
        if isinstance(conjunct, exp.EQ):
            column, values = conjunct.this, [conjunct.expression]
            if not isinstance(column, exp.Column):
                column, values = conjunct.expression, [conjunct.this]
        elif isinstance(conjunct, exp.In) and not conjunct.args.get("query"):
            column, values = conjunct.this, list(conjunct.expressions)
        else:
            continue
        # Only a column named by the target's alias or name is surely the target's.
        if not isinstance(column, exp.Column) or column.table != name or not values:
            continue
        found = [constant(value, params) for value in values]
        if any(value is None or value is NO_VALUE for value in found):
            continue
        previous = pins.get(column.name)
        pins[column.name] = found if previous is None else [v for v in found if v in previous]
    return pins


def _apply(
    session: Session, stmt: model.Dml, rows: pa.Table, names: list[str], keys: Keys | None
) -> tuple[int, pa.Array, pa.Table, pa.Array | None]:
    """Run the statement on a temporary copy of ``rows`` (or of those it can match).

    ``keys``: the source's counted keys (:func:`.merge_keys.count_keys`), or
    None when there is no semi-join to run.

    Returns DuckDB's row count, the positions of the candidate rows that
    are gone or changed, the copy's rows afterwards with their position
    (past the candidates for a new row), and the positions copied (None:
    all of them; see :mod:`.merge_keys`).
    """
    duck = session.duckdb()
    found = None
    if keys is not None:
        staged = f"__trinity_rows_{uuid.uuid4().hex[:12]}"
        duck.register(staged, rows)
        try:
            found = matchable(session, keys, staged, _ROW)
        finally:
            unregister(duck, staged)
    total = rows.num_rows
    if found is not None:
        selected = found.positions
        # The copy holds the matchable rows, numbered 0..m-1 in candidate order.
        part = rows.take(selected)
        index = part.schema.get_field_index(_ROW)
        count_part = part.num_rows
        part = part.set_column(index, _ROW, pa.array(np.arange(count_part, dtype=np.int64)))
        count, changed, now = _apply_to(session, stmt, part, names, check=found.repeated)
        changed = pc.take(selected, changed)
        positions = now.column(_ROW)
        copied = pc.less(positions, count_part)
        mapped = pc.if_else(
            copied,
            pc.take(selected, pc.if_else(copied, positions, 0)) if count_part else positions,
            pc.add(positions, total - count_part),
        )
        now = now.set_column(now.schema.get_field_index(_ROW), _ROW, mapped)
        return count, changed, now, selected
    count, changed, now = _apply_to(session, stmt, rows, names)
    return count, changed, now, None


def _patched(
    rows: pa.Table,
    owners: pa.Array,
    count_files: int,
    touched: pa.Array,
    changed: pa.Array,
    now: pa.Table,
    names: list[str],
) -> pa.Table | None:
    """The touched files' rows as they are now, then the new rows, built from ``rows``.

    Most of a rewritten file is unchanged: rather than taking every row
    again from DuckDB's copy (and interleaving the rows the semi-join left
    out), each column of the candidate rows gets the changed rows' new
    values in place (``replace_with_mask``: one pass, no gather), the gone
    rows and the rows of untouched files are filtered out, and the new rows
    follow. The result is what the copy holds, in the same order: candidate
    order, new rows last. None when the copy's rows are not in candidate
    order or its values do not cast back to the stored types (then the
    caller takes them as they are).
    """
    total = rows.num_rows
    positions = now.column(_ROW).to_numpy()
    old = positions < total
    present = positions[old]
    if len(present) > 1 and not bool(np.all(present[1:] > present[:-1])):
        return None
    is_changed = np.zeros(total, dtype=bool)
    is_changed[changed.to_numpy()] = True
    is_present = np.zeros(total, dtype=bool)
    is_present[present] = True
    updated = is_changed & is_present
    updates = now.take(pa.array(np.flatnonzero(old)[updated[present]]))
    added = now.filter(pa.array(~old))
    gone = is_changed & ~is_present
    if len(touched) == count_files:  # every file is rewritten: skip the per-row lookup
        keep = ~gone
    else:
        mine = np.zeros(count_files, dtype=bool)
        mine[touched.to_numpy()] = True
        keep = mine[owners.to_numpy()] & ~gone
    schema = pa.schema([rows.schema.field(name) for name in names])
    try:
        updates = updates.select(names).cast(schema)
        added = added.select(names).cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
        return None
    mask = pa.array(updated)
    where = pa.array(np.flatnonzero(updated))
    order: np.ndarray | None = None
    columns = []
    for name in names:
        base, new = rows.column(name), updates.column(name)
        if not updates.num_rows or _same(base.take(where), new):
            columns.append(base)  # the clauses left this column as it was
            continue
        try:
            columns.append(pc.replace_with_mask(base.combine_chunks(), mask, new.combine_chunks()))
        except pa.ArrowNotImplementedError:  # nested, dictionary and extension types
            if order is None:
                order = np.arange(total, dtype=np.int64)
                order[updated] = total + np.arange(updates.num_rows, dtype=np.int64)
            both = pa.chunked_array(base.chunks + new.chunks, base.type)
            columns.append(both.take(pa.array(order)))
    table = pa.table(columns, schema=schema)
    if not keep.all():
        table = table.filter(pa.array(keep))
    return pa.concat_tables([table, added]) if added.num_rows else table


def _same(old: pa.ChunkedArray, new: pa.ChunkedArray) -> bool:
    """Whether ``new`` holds exactly the values of ``old`` (same nulls, same bits).

    Only for types whose equal values are stored identically: two floats
    that compare equal may still differ (``-0.0`` and ``0.0``), so floats
    compare their bits, and other types (nested, intervals) are taken as
    changed.
    """
    kind = old.type
    if kind != new.type or old.null_count != new.null_count:
        return False
    if pa.types.is_floating(kind):
        if old.null_count:
            return False
        width = {16: np.uint16, 32: np.uint32, 64: np.uint64}[kind.bit_width]
        return bool(np.array_equal(old.to_numpy().view(width), new.to_numpy().view(width)))
    exact = (
        pa.types.is_integer(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        or pa.types.is_fixed_size_binary(kind)
        or pa.types.is_decimal(kind)
        or pa.types.is_temporal(kind)
    )
    if not exact or pa.types.is_interval(kind):
        return False
    try:
        equal = pc.equal(old, new)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return False
    # Nulls compare as null: the same positions when no non-null pair differs.
    return pc.all(equal).as_py() is not False and bool(
        pc.all(pc.equal(pc.is_null(old), pc.is_null(new))).as_py()
    )


def _with_unmatchable(
    written: pa.Table, rows: pa.Table, owners: pa.Array, selected: pa.Array, touched: pa.Array
) -> list[pa.Table]:
    """``written`` plus the rewritten files' rows that were not copied, in candidate order.

    Those rows could match nothing, so they are as they were; the rows keep
    their files' order (then the new rows), as without the semi-join. Two
    tables (two writes) only when DuckDB gave back types Arrow cannot cast
    to the stored ones or back.
    """
    outside = np.ones(rows.num_rows, dtype=bool)
    outside[selected.to_numpy()] = False
    outside &= np.isin(owners.to_numpy(), touched.to_numpy())
    kept = np.flatnonzero(outside)  # positions, ascending
    carried = rows.select(written.column_names)
    try:
        carried = carried.cast(written.schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
        try:
            written = written.cast(carried.schema)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError):
            return [carried.take(pa.array(kept)), written]
    # Interleave the two ascending runs of positions (the copy's rows are in
    # position order, new rows last) with one take: row p of ``carried`` is
    # candidate p, row j of ``written`` comes after them.
    mine = written.column(_ROW).to_numpy()
    order = np.empty(len(kept) + len(mine), dtype=np.int64)
    order[np.searchsorted(mine, kept) + np.arange(len(kept))] = kept
    order[np.searchsorted(kept, mine) + np.arange(len(mine))] = rows.num_rows + np.arange(len(mine))
    both = pa.concat_tables([carried.drop_columns([_ROW]), written.drop_columns([_ROW])])
    return [both.take(pa.array(order))]


def _apply_to(
    session: Session, stmt: model.Dml, rows: pa.Table, names: list[str], *, check: bool = True
) -> tuple[int, pa.Array, pa.Table]:
    """Run the statement on a temporary copy of ``rows`` (whose ``_ROW`` is 0..n-1).

    Returns DuckDB's row count, the positions of the rows that are gone or
    changed, and the copy's rows afterwards with their ``rowid`` (a position;
    past the rows for a new row). ``check``: whether a row may match more
    than one source row (False when the semi-join counted at most one each:
    then the cardinality rule cannot be broken and is not checked).
    """
    duck = session.duckdb()
    name = f"__trinity_copy_{uuid.uuid4().hex[:12]}"
    copy = quote_identifier(name)
    staged = f"__trinity_rows_{uuid.uuid4().hex[:12]}"
    columns = ", ".join(quote_identifier(column) for column in names)
    row = quote_identifier(_ROW)
    duck.register(staged, rows)
    try:
        # ORDER BY: the n-th candidate gets rowid n (DuckDB keeps insertion order).
        execute_duckdb(
            duck,
            f"CREATE TEMP TABLE {copy} AS SELECT {columns} FROM {quote_identifier(staged)} "
            f"ORDER BY {row}",
            [],
        )
        try:
            count = _run(session, stmt, name, staged if check else None)
            now = execute_duckdb(duck, f"SELECT rowid AS {row}, {columns} FROM {copy}", [])
            changed = _changed_rows(rows, now, names)
            if changed is None:
                old = ", ".join(f"o.{quote_identifier(column)}" for column in names)
                new = ", ".join(f"c.{quote_identifier(column)}" for column in names)
                changed = execute_duckdb(
                    duck,
                    f"SELECT o.{row} FROM {quote_identifier(staged)} AS o LEFT JOIN {copy} "
                    f"AS c ON c.rowid = o.{row} WHERE c.rowid IS NULL OR row({new}) IS "
                    f"DISTINCT FROM row({old})",
                    [],
                ).column(0)
        finally:
            drop_temporary(duck, name)
    finally:
        unregister(duck, staged)
    return count, pa.chunked_array(changed).combine_chunks(), now


def _changed_rows(rows: pa.Table, now: pa.Table, names: list[str]) -> pa.Array | None:
    """The positions of the candidate rows gone or changed, found with Arrow.

    The same answer as the SQL in :func:`_apply` (``IS DISTINCT FROM``: nulls
    equal each other, NaN equals NaN, -0.0 equals 0.0) in a tenth of its time
    on a million rows. None, and the SQL decides, when a column's type differs
    between the candidates and the copy (DuckDB gave back another Arrow type)
    or Arrow cannot compare it (lists, structs, maps, intervals).
    """
    total = rows.num_rows
    present = now.filter(pc.less(now.column(_ROW), total))
    positions = present.column(_ROW)
    before = rows.take(positions)
    differs = pa.array(np.zeros(present.num_rows, dtype=bool))
    for name in names:
        was, is_now = before.column(name), present.column(name)
        kind = was.type
        if kind != is_now.type or pa.types.is_nested(kind) or pa.types.is_dictionary(kind):
            return None
        try:
            unequal = pc.fill_null(pc.not_equal(was, is_now), False)
            if pa.types.is_floating(kind):
                both_nan = pc.fill_null(pc.and_(pc.is_nan(was), pc.is_nan(is_now)), False)
                unequal = pc.and_(unequal, pc.invert(both_nan))
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            return None
        one_null = pc.xor(pc.is_null(was), pc.is_null(is_now))
        differs = pc.or_(differs, pc.or_(unequal, one_null))
    gone = np.ones(total, dtype=bool)
    gone[positions.to_numpy()] = False
    changed = positions.filter(differs).to_numpy()
    return pa.array(np.concatenate([np.flatnonzero(gone), changed]).astype(np.int64))


def _run(session: Session, stmt: model.Dml, copy: str, staged: str | None) -> int:
    """Run the statement with its target pointed at ``copy``; DuckDB's row count.

    ``staged`` holds the candidate rows as they were, for the cardinality
    check (None: no row can match twice, nothing to check).
    """
    with marked(stmt.tables):
        query = stmt.expression.copy()
    node = query.this
    if not isinstance(node, exp.Table) or node.meta.pop(REF_KEY, None) != 0:
        raise ProgrammingError(  # pragma: no cover - statements.py made tables[0] this node
            f"{query.sql(dialect='trinity')!r} does not name its target table"
        )
    table = stmt.tables[0].table
    if node.args.get("alias") is None:
        # Columns name an unaliased target by its bare name (``t.col``), or
        # with its namespace (``ns.t.col``): both stay valid.
        node.set("alias", exp.TableAlias(this=exp.to_identifier(table.name, quoted=True)))
        for column in query.find_all(exp.Column):
            if column.args.get("db") is not None and column.table == table.name:
                column.set("db", None)
                column.set("catalog", None)
    node.set("db", None)
    node.set("catalog", None)
    node.set("this", exp.to_identifier(copy, quoted=True))
    check = (
        _cardinality_check(query, staged)
        if isinstance(query, exp.Merge) and staged is not None
        else None
    )
    name = f"{table.namespace or session.namespace}.{table.name}"
    try:
        result = execute_marked(session, query, stmt.tables, stmt.params)
    except DataError as exc:
        if "same target row more than once" in str(exc):  # DuckDB 2.0.0's own check
            raise _cardinality_error(name) from None
        raise
    # After the statement, so that its own errors (binding, casts) come first.
    if check is not None and execute_marked(session, check, stmt.tables, stmt.params).num_rows:
        raise _cardinality_error(name)
    if result.num_columns == 0 or result.num_rows == 0:  # pragma: no cover - DuckDB counts
        return -1
    value = result.column(0)[0].as_py()
    return int(value) if value is not None else -1


def _cardinality_check(query: exp.Merge, staged: str) -> exp.Select | None:
    """A query with a row when the MERGE updates or deletes a target row more than once.

    The SQL standard's cardinality rule, which PostgreSQL, Spark, Delta Lake
    and DuckDB 2.0.0 enforce. DuckDB 2.0.1 dropped it (the last source row
    silently wins and is counted twice), so the rule is checked here, the
    same on every DuckDB version: for each matched pair, the first ``WHEN
    MATCHED`` clause whose condition holds picks the action, and a target row
    with two pairs whose action is UPDATE or DELETE is an error. A condition
    that leaves one action per target row (``WHEN MATCHED AND ...``) passes,
    as in PostgreSQL. The query reads the candidate rows as they were
    (``staged``, each with its position), under the target's alias; None when
    no clause can act on a matched row.
    """
    acts: list[exp.If] = []
    whens = query.args.get("whens")
    for when in whens.expressions if whens else ():
        if not when.args.get("matched"):
            continue
        then = when.args.get("then")
        does = not (isinstance(then, exp.Var) and then.name.upper() == "DO NOTHING")
        condition = when.args.get("condition")
        acts.append(
            exp.If(this=condition.copy() if condition else exp.true(), true=exp.Boolean(this=does))
        )
    if not acts:
        return None
    target = exp.Table(
        this=exp.to_identifier(staged, quoted=True), alias=query.this.args["alias"].copy()
    )
    source = query.args["using"].copy()
    on = query.args.get("on")
    columns = [column.copy() for column in query.args.get("using_cond") or ()]
    join = exp.Join(this=source, on=on.copy()) if on else exp.Join(this=source, using=columns)
    row = exp.column(_ROW, table=query.this.alias_or_name, quoted=True)
    return (
        exp.select("1")
        .from_(target)
        .join(join)
        .where(exp.Case(ifs=acts, default=exp.false()))
        .group_by(row)
        .having("count(*) > 1")
        .limit(1)
    )


def _cardinality_error(name: str) -> DataError:
    return DataError(
        f"MERGE INTO {name} cannot affect the same target row more than once: a target row "
        "matched more than one source row whose WHEN MATCHED clause updates or deletes it; "
        "deduplicate the source rows, make the ON condition unique, or narrow the clauses "
        "with WHEN MATCHED AND ..."
    )
