"""``system.table_changes('ns.t', from_point, to_point)``: the rows a table's commits changed.

The rows inserted into and deleted from a table after ``from_point`` up to
and including ``to_point``, each with the version that made the change. A
point is what ``FOR SYSTEM_VERSION AS OF`` takes (a version number or an
export's name), or a timestamp as ``FOR SYSTEM_TIME AS OF`` takes, resolved
by the session exactly as those clauses are (:meth:`Session.view_for`).

Between two points on one chain (:func:`versions_between`) each version
after ``from_point`` is compared with the one before it: only when the
table's data files differ are those files, and only those, read
(:mod:`trinity_dbapi.tables.changes`). The rows of the removed files less the
rows of the added files, as multisets of whole rows, are the version's
deletes; the other way round, its inserts. So a compaction, or any rewrite
that keeps the rows, shows nothing, and an UPDATE shows the old row deleted
and the new one inserted. The multisets are cancelled in the session's
DuckDB (:func:`_unmatched`), which compares every type the table may hold.
Between two points not on one chain the two states are compared at once,
and ``version`` is NULL.

The result's columns are ``version`` (BIGINT), ``change_type`` (VARCHAR:
``'insert'`` or ``'delete'``), then the table's columns as of ``to_point``
(a column a version did not have is NULL in its rows), as DuckLake's
``table_changes`` puts its ``snapshot_id`` and ``change_type`` first. A
table column of either name pushes ours aside: ``_version``, ``_change_type``.

Imports from sql/engine/: duck_run, session.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from trinity_dbapi.errors import NoSuchObjectError, NoSuchTableError, ProgrammingError
from trinity_dbapi.format.sql_text import quote_identifier
from trinity_dbapi.lakehouse.transaction import Transaction
from trinity_dbapi.sql.binding import as_utc
from trinity_dbapi.sql.engine.duck_run import execute_duckdb, unregister
from trinity_dbapi.sql.model import AsOf
from trinity_dbapi.tables.changes import change_schema, changed_files, changed_rows

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.lakehouse.chain import Snapshot
    from trinity_dbapi.sql.engine.session import Session
    from trinity_dbapi.sql.model import TableRef

__all__ = ["FUNCTION", "TableNotAtPointError", "table_changes", "versions_between"]

FUNCTION = "system.table_changes"
_SIGNATURE = f"{FUNCTION}('namespace.table', from_point, to_point)"
_POINTS = "a version number (int >= 0), an export or tag name (str), or a timestamp or date"


class TableNotAtPointError(NoSuchTableError):
    """``system.table_changes`` names a table that does not exist at its ``to_point``."""

    def __init__(self, namespace: str, table: str, point: str) -> None:
        NoSuchObjectError.__init__(
            self,
            "table",
            f"{namespace}.{table}",
            f"it does not exist at {point}, the to_point of {FUNCTION} (dropped before it, or "
            "created after it): pass a to_point at which the table exists (SELECT * FROM "
            "system.versions lists them)",
        )
        self.namespace = namespace
        self.table = table


def versions_between(start: Snapshot, end: Snapshot) -> Iterator[Snapshot] | None:
    """The versions after ``start`` up to ``end``, oldest first, if both lie on one chain.

    None when they do not: their changes then have no version to be
    attributed to. Main is one chain: any two of its versions lie on it,
    and so does an export of one of them (it records the version it was
    made from). Each version is loaded when the walk reaches it (an expired
    one raises the usual ``VersionExpiredError``/``NoSuchVersionError`` then).
    This is the one place that decides what lies on one chain, and where
    branches extend it: a branch's versions up to the one it was made from
    are main's, so a branch's point and a main point at or before that
    version lie on one chain, and two diverged branches do not.

    Raises:
        ProgrammingError: ``start`` is a later version than ``end``.
    """
    if start.version < 0 or end.version < 0:
        return None
    if start.version > end.version:
        start, end = end, start  # the order error, if they lie on one chain
        if not _on_chain_of(end, start):
            return None
        start, end = end, start
        raise ProgrammingError(
            f"{FUNCTION}: from_point (version {start.version}) is later than to_point (version "
            f"{end.version}); changes run forward: swap the two points"
        )

    if not _on_chain_of(end, start):
        return None  # diverged (main and a branch, two branches): no attribution

    def walk() -> Iterator[Snapshot]:
        for version in range(start.version + 1, end.version):
            yield end.lakehouse.snapshot(version)
        if end.version > start.version:
            yield end

    return walk()


def _on_chain_of(end: Snapshot, start: Snapshot) -> bool:
    """Whether ``start`` is the root ``end``'s chain has at ``start``'s version."""
    root = start.root.path or start.lakehouse.root_name(start.version)
    return end.lakehouse.root_name(start.version) == root


def table_changes(session: Session, ref: TableRef) -> pa.Table:
    """The rows of ``system.table_changes(...)`` for the bound arguments of ``ref``."""
    text, start_point, end_point = _arguments(ref.arguments or ())
    namespace, name = _table(session, text)
    start_view, start = session.view_for(_point(start_point, "from_point"))
    end_view, end = session.view_for(_point(end_point, "to_point"))
    columns = _definition(end_view, namespace, name)
    if columns is None:
        raise TableNotAtPointError(namespace, name, _shown(end_point))
    names = _change_columns(columns)
    storage = session.lakehouse.storage
    pieces: list[pa.Table] = []
    before = _definition(start_view, namespace, name)
    walk = versions_between(start, end)
    steps: Iterable[tuple[int | None, Any]]
    steps = [(None, end_view)] if walk is None else _views(session, walk)
    for version, view in steps:
        session.control.check()  # a long walk reads much metadata and data
        after = _definition(view, namespace, name)
        files = changed_files(storage, before, after)
        if files:
            removed, added = changed_rows(storage, before, after, files, columns)
            deleted, inserted = _unmatched(session, removed, added)
            pieces += [
                _labelled(deleted, version, "delete", names),
                _labelled(inserted, version, "insert", names),
            ]
        before = after
    if not pieces:
        return _labelled(change_schema(columns).empty_table(), None, "insert", names)
    return pa.concat_tables(pieces)


def _views(session: Session, walk: Iterator[Snapshot]) -> Iterator[tuple[int | None, Any]]:
    for snapshot in walk:
        yield snapshot.version, Transaction(session.lakehouse, snapshot, read_only=True)


def _definition(view: Any, namespace: str, name: str) -> TableDefinition | None:
    """The table's definition in ``view``, None where it does not exist (or is a view)."""
    if not view.table_exists(namespace, name):
        return None
    definition: TableDefinition = view.load_table(namespace, name)
    return definition


def _arguments(arguments: tuple[object, ...]) -> tuple[str, object, object]:
    if len(arguments) != 3:
        raise ProgrammingError(
            f"{FUNCTION} takes 3 arguments, got {len(arguments)}: write {_SIGNATURE}, each "
            f"point {_POINTS}"
        )
    text, start, end = arguments
    if not isinstance(text, str):
        raise ProgrammingError(
            f"{FUNCTION}: the table is {text!r}; name it as a string: {_SIGNATURE}"
        )
    return text, start, end


def _table(session: Session, text: str) -> tuple[str, str]:
    """``'ns.name'`` (or ``'name'``, in the session's namespace) as namespace and name."""
    namespace, dot, name = text.partition(".")
    if not dot:
        namespace, name = session.namespace, text
    if not namespace or not name:
        raise ProgrammingError(
            f"{FUNCTION}: {text!r} is not a table name; write 'namespace.table' or 'table'"
        )
    return namespace, name


def _point(value: object, which: str) -> AsOf:
    """A point as the time travel target the session resolves (names included)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return AsOf("version", value)
    if isinstance(value, str):
        return AsOf("export", value)
    if isinstance(value, datetime):
        return AsOf("timestamp", as_utc(value))
    if isinstance(value, date):  # midnight UTC, as FOR SYSTEM_TIME AS OF DATE '...'
        return AsOf("timestamp", datetime(value.year, value.month, value.day, tzinfo=timezone.utc))
    raise ProgrammingError(f"{FUNCTION}: {which} is {value!r}; a point is {_POINTS}")


def _shown(point: object) -> str:
    if isinstance(point, int):
        return f"version {point}"
    if isinstance(point, str):
        return f"{point!r}"
    return f"{point}"


def _change_columns(definition: TableDefinition) -> tuple[str, str]:
    """The names of the version and change type columns, clear of the table's own."""
    taken = {column.name for column in definition.columns}
    version, change_type = "version", "change_type"
    while version in taken:
        version = "_" + version
    while change_type in taken:
        change_type = "_" + change_type
    return version, change_type


def _labelled(rows: pa.Table, version: int | None, kind: str, names: tuple[str, str]) -> pa.Table:
    count = rows.num_rows
    kinds = pa.array([kind] * count, pa.string())
    rows = rows.add_column(0, pa.field(names[1], pa.string(), nullable=False), kinds)
    return rows.add_column(
        0, pa.field(names[0], pa.int64()), pa.array([version] * count, pa.int64())
    )


def _unmatched(session: Session, removed: pa.Table, added: pa.Table) -> tuple[pa.Table, pa.Table]:
    """The rows of ``removed`` that ``added`` does not hold, and the other way round.

    As multisets of whole rows: a row removed twice and added once is
    deleted once. Rows keep their order. NULL equals NULL here, as in
    ``EXCEPT ALL``.
    """
    if not removed.num_rows or not added.num_rows:
        return removed, added
    row, side = _free_name(removed, "row"), _free_name(removed, "side")
    names = removed.column_names
    columns = ", ".join(quote_identifier(name) for name in names)
    relations = {}
    for number, rows in enumerate((removed, added)):
        key = f"__trinity_changes_{uuid.uuid4().hex[:8]}_{number}"
        relations[key] = rows.append_column(row, pa.array(np.arange(rows.num_rows)))
    first, second = (quote_identifier(key) for key in relations)
    r, s = quote_identifier(row), quote_identifier(side)
    same = " AND ".join(
        f"u.{quote_identifier(name)} IS NOT DISTINCT FROM d.{quote_identifier(name)}"
        for name in names
    )
    # First the groups of equal rows whose counts differ (a hash aggregate: a
    # rewrite that kept most rows leaves few); within each, the n-th removed
    # row is unmatched when fewer than n rows were added, and the other way round.
    sql = (
        f"WITH u AS (SELECT {columns}, 0 AS {s}, {r} FROM {first} "
        f"UNION ALL SELECT {columns}, 1 AS {s}, {r} FROM {second}), "
        f"d AS (SELECT {columns} FROM u GROUP BY {columns} HAVING "
        f"count(*) FILTER (WHERE {s} = 0) <> count(*) FILTER (WHERE {s} = 1)), "
        f"k AS (SELECT u.* FROM u SEMI JOIN d ON {same}) "
        f"SELECT {s}, {r} FROM (SELECT {s}, {r}, "
        f"row_number() OVER (PARTITION BY {columns}, {s} ORDER BY {r}) AS n, "
        f"count(*) FILTER (WHERE {s} = 0) OVER (PARTITION BY {columns}) AS removed, "
        f"count(*) FILTER (WHERE {s} = 1) OVER (PARTITION BY {columns}) AS added FROM k) "
        f"WHERE ({s} = 0 AND n > added) OR ({s} = 1 AND n > removed) ORDER BY {s}, {r}"
    )
    duck = session.duckdb()
    try:
        for key, rows in relations.items():
            duck.register(key, rows)
        found = execute_duckdb(duck, sql, [])
    finally:
        for key in relations:
            unregister(duck, key)
    sides = found.column(side).to_numpy()
    indices = found.column(row).to_numpy()
    return removed.take(indices[sides == 0]), added.take(indices[sides == 1])


def _free_name(rows: pa.Table, stem: str) -> str:
    name = f"__trinity_{stem}"
    while name in rows.column_names:
        name = "_" + name
    return name
