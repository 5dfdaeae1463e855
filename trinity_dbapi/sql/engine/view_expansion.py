"""A view reference turned into the view's query, as of the version read.

A view stores its query as text (trinity dialect) with every table name
qualified by the namespace it resolved to at creation, and the columns the
query gave then (see :mod:`.views`, which creates them). A query naming a
view reads it as a subquery: :func:`expand_views` replaces each reference
to a view by the view's query, aliased to the view's name and column names,
before the tables are materialised (:mod:`.query`). The view's definition
and the tables it reads are both taken at the reference's version: ``FOR
SYSTEM_VERSION AS OF n`` on a view (or a connection pinned to ``n``) reads
the view as of ``n`` and, unless its query says otherwise, its tables as of
``n`` too.

Imports from sql/engine/: session.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from trinity_dbapi.errors import NoSuchObjectError, ProgrammingError
from trinity_dbapi.format.definitions import TRINITY_DIALECT, ViewDefinition
from trinity_dbapi.lakehouse import catalog
from trinity_dbapi.sql import model
from trinity_dbapi.sql.statements import parse, to_statement

if TYPE_CHECKING:
    from trinity_dbapi.sql.engine.session import Session
    from trinity_dbapi.sql.model import AsOf, TableRef

__all__ = ["MAX_VIEW_DEPTH", "expand_views"]

#: How deep views may nest (a view reading a view ...): deeper is refused.
MAX_VIEW_DEPTH = 32


def expand_views(
    session: Session, query: exp.Expression, refs: Sequence[TableRef], mark: str
) -> tuple[exp.Expression, list[TableRef]]:
    """Replace the view references of ``query`` (its nodes tagged ``meta[mark]``) by subqueries.

    Returns the query and its references after expansion, each node tagged
    with its index in the returned list. ``query`` is modified.

    Raises:
        ProgrammingError: a view reads itself (directly or through others),
            views nest deeper than :data:`MAX_VIEW_DEPTH`, or a table a view
            reads no longer exists (the message names both).
    """
    out = list(refs)  # the references that stay keep their index (DML's overrides use it)
    _expand(session, query, refs, mark, out, ())
    return query, out


def _view_at(
    session: Session, namespace: str, name: str, as_of: AsOf | None
) -> ViewDefinition | None:
    if namespace in catalog.RESERVED_NAMESPACES:
        return None
    view, _ = session.view_for(as_of)
    if not view.view_exists(namespace, name):
        return None
    return view.load_view(namespace, name)


def _expand(
    session: Session,
    query: exp.Expression,
    refs: Sequence[TableRef],
    mark: str,
    out: list[TableRef],
    chain: tuple[tuple[str, str], ...],
) -> None:
    nodes = [(node, node.meta.pop(mark)) for node in query.find_all(exp.Table) if mark in node.meta]
    found = []
    for node, index in nodes:
        ref = refs[index]
        namespace = ref.table.namespace or session.namespace
        found.append((node, index, _view_at(session, namespace, ref.table.name, ref.as_of)))
    _alias_clashing(session, query, refs, found)
    for node, index, definition in found:
        ref = refs[index]
        namespace = ref.table.namespace or session.namespace
        if definition is None:
            if not chain:
                node.meta[mark] = index
                out[index] = dataclasses.replace(ref, node=node)
                continue
            _require_table(session, namespace, ref, chain[-1])  # name the view if it is gone
            node.meta[mark] = len(out)
            out.append(dataclasses.replace(ref, node=node))
            continue
        where = (namespace, ref.table.name)
        if where in chain:
            path = " -> ".join(f"{n}.{v}" for n, v in (*chain, where))
            raise ProgrammingError(
                f"view {namespace}.{ref.table.name} reads itself ({path}); replace one of "
                "these views so that none reads itself"
            )
        if len(chain) >= MAX_VIEW_DEPTH:
            raise ProgrammingError(
                f"views nest more than {MAX_VIEW_DEPTH} deep at {namespace}.{ref.table.name}; "
                "replace a view by its tables"
            )
        parsed = parse(definition.sql[TRINITY_DIALECT])[0]
        inner = to_statement(parsed)
        assert isinstance(inner, model.Query)
        inner_refs = [
            dataclasses.replace(
                r,
                table=model.TableName(r.table.namespace or namespace, r.table.name),
                as_of=r.as_of if r.as_of is not None else ref.as_of,
            )
            for r in inner.tables
        ]
        for i, r in enumerate(inner_refs):
            r.node.meta[mark] = i
        body = inner.expression
        _expand(session, body, inner_refs, mark, out, (*chain, where))
        alias = node.args.get("alias")
        if alias is None or not alias.columns:
            shown = (
                alias.this if alias is not None else exp.to_identifier(ref.table.name, quoted=True)
            )
            columns = [exp.to_identifier(c.name, quoted=True) for c in definition.columns]
            alias = exp.TableAlias(this=shown, columns=columns)
        if node.args.get("alias") is None:  # ns.v.col in the query names the view as v.col
            for column in query.find_all(exp.Column):
                if column.args.get("db") is not None and (column.db, column.table) == where:
                    column.set("db", None)
                    column.set("catalog", None)
        node.replace(exp.Subquery(this=body, alias=alias))


def _alias_clashing(
    session: Session,
    query: exp.Expression,
    refs: Sequence[TableRef],
    found: Sequence[tuple[exp.Table, int, ViewDefinition | None]],
) -> None:
    """Alias ``"ns.v"`` each unaliased ``ns.v`` whose bare name another namespace's view shares.

    ``FROM a.v JOIN b.v`` (or a view ``a.v`` beside a table ``b.v``) would
    give two subqueries or relations the alias ``v``; as for two tables (see
    the query's own clashing names), each reference written with its namespace is
    aliased ``"ns.v"`` and its columns ``ns.v.col`` name that alias, so the
    query answers as DuckDB does for the same schemas. A bare ``v`` keeps the
    alias ``v``. Clashes of tables only are left to :mod:`.query`.
    """
    namespaces: dict[str, set[str]] = {}
    with_views: set[str] = set()
    for node, index, definition in found:
        if node.args.get("alias") is None:
            table = refs[index].table
            namespaces.setdefault(table.name, set()).add(table.namespace or session.namespace)
            if definition is not None:
                with_views.add(table.name)
    clashing = set()
    columns: dict[str, list[tuple[str, set[str]]]] = {}  # bare name -> (namespace, columns)
    for node, index, definition in found:
        ref = refs[index]
        name = ref.table.name
        if node.args.get("alias") is not None or ref.table.namespace is None:
            continue
        if name in with_views and len(namespaces[name]) > 1:
            shown = exp.to_identifier(f"{ref.table.namespace}.{name}", quoted=True)
            node.set("alias", exp.TableAlias(this=shown))
            clashing.add((ref.table.namespace, name))
            names = _column_names(session, ref, definition)
            columns.setdefault(name, []).append((ref.table.namespace, names))
    bare = {name for name in columns if name not in _other_sources(query, set(columns))}
    for column in query.find_all(exp.Column):
        if column.args.get("db") is not None and (column.db, column.table) in clashing:
            column.set("table", exp.to_identifier(f"{column.db}.{column.table}", quoted=True))
            column.set("db", None)
            column.set("catalog", None)
        elif column.args.get("db") is None and column.table in bare:
            # DuckDB takes a bare v.col when exactly one of the v's has col.
            owners = [ns for ns, names in columns[column.table] if column.name.lower() in names]
            read = " and ".join(f"{ns}.{column.table}" for ns, _ in columns[column.table])
            if not owners:
                raise ProgrammingError(
                    f"{column.table}.{column.name}: none of {read}, which the query reads, has "
                    f"a column {column.name!r}; check the column name"
                )
            if len(owners) > 1:
                raise ProgrammingError(
                    f"{column.table}.{column.name} is ambiguous: the query reads {read} without "
                    f"aliases and more than one has {column.name!r}; write the namespace "
                    f"({owners[0]}.{column.table}.{column.name}) or alias them (FROM a.v AS x)"
                )
            owner = f"{owners[0]}.{column.table}"
            column.set("table", exp.to_identifier(owner, quoted=True))


def _column_names(session: Session, ref: TableRef, definition: ViewDefinition | None) -> set[str]:
    """The lower-cased column names of a view, or of the table ``ref`` reads (none if it is gone)."""
    if definition is not None:
        return {c.name.lower() for c in definition.columns}
    namespace = str(ref.table.namespace)
    if namespace in catalog.RESERVED_NAMESPACES:
        if not catalog.is_catalog_table(namespace, ref.table.name):
            return set()
        return {f.name.lower() for f in catalog.catalog_schema(namespace, ref.table.name)}
    txn, _ = session.view_for(ref.as_of)
    if not txn.table_exists(namespace, ref.table.name):
        return set()  # reading it fails later, naming the table
    return {c.name.lower() for c in txn.load_table(namespace, ref.table.name).columns}


def _other_sources(query: exp.Expression, names: set[str]) -> set[str]:
    """Which of ``names`` something else in ``query`` is called (an alias, a CTE): left alone."""
    taken = {alias.name for alias in query.find_all(exp.TableAlias) if alias.name in names}
    for table in query.find_all(exp.Table):
        if table.name in names and not table.args.get("db") and not table.args.get("alias"):
            taken.add(table.name)
    return taken


def _require_table(session: Session, namespace: str, ref: TableRef, view: tuple[str, str]) -> None:
    if namespace in catalog.RESERVED_NAMESPACES:
        return
    txn, _ = session.view_for(ref.as_of)
    if not txn.table_exists(namespace, ref.table.name):
        raise NoSuchObjectError(
            "table",
            f"{namespace}.{ref.table.name}",
            f"view {view[0]}.{view[1]} reads it: create the table again or replace the view "
            "(CREATE OR REPLACE VIEW) or drop it (DROP VIEW)",
        )
