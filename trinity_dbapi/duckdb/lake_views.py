"""Lakehouse views in the bridge: their query as DuckDB SQL over the attached objects.

A lakehouse view (``CREATE VIEW`` in SQL, schema ID 3) stores its query in
the trinity dialect with every name qualified by its namespace. In the
bridge it becomes a DuckDB view in its namespace's schema whose query names
the attachment's own schemas (``prefix + namespace``, the catalog tables'
``prefix + "trinity_system"`` ...), so it reads the tables of the pinned
version exactly as the SQL engine reads a view as of that version:
``SELECT * FROM (query) AS "v"("col", ...)``, the view's stored column names
over its query, as :func:`~trinity_dbapi.sql.engine.view_expansion.expand_views`
writes it.

A view the bridge cannot expose as such (it reads a table that no longer
exists, a namespace the attachment leaves out, another version through
``FOR SYSTEM_VERSION AS OF``, or DuckDB cannot bind its query over the
attached objects) still gets a DuckDB view with its columns, one that raises
an error naming the view and the reason whenever a row of it is read. Its
binding is tried first in a scratch in-memory DuckDB holding empty stand-ins
of the attached objects: a failed ``CREATE VIEW`` inside the attachment's
transaction would abort the whole attachment.

Imports from duckdb/: views.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from trinity_dbapi.duckdb.views import duckdb_type_of
from trinity_dbapi.errors import Error
from trinity_dbapi.format.sql_text import quote_identifier, quote_string

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import Column, ViewDefinition

__all__ = ["LakeView", "bind_views", "plan_view", "unreadable_select", "view_objects"]


@dataclass
class LakeView:
    """One lakehouse view as the bridge plans it.

    Attributes:
        namespace: the view's namespace.
        definition: its definition as of the pinned version.
        select: the DuckDB query of the view, or None when it cannot be read.
        depends: ``(schema, name)`` of every bridge object the query names.
        reason: why it cannot be read (None while it can).
    """

    namespace: str
    definition: ViewDefinition
    select: str | None
    depends: tuple[tuple[str, str], ...]
    reason: str | None = None


def view_objects(
    definitions: Sequence[tuple[str, ViewDefinition]],
    names: Mapping[str, set[str]],
    schemas: Mapping[str, str],
    where: str,
    stand_ins: Mapping[str, Mapping[str, str | pa.Table]],
) -> tuple[list[tuple[str, str, str, str]], dict[str, str]]:
    """The DuckDB views of the lakehouse views ``definitions``, in creation order.

    Args:
        definitions: ``(namespace, view)`` of each lakehouse view attached.
        names: DuckDB schema -> the names of the attachment's other objects.
        schemas: lakehouse namespace -> DuckDB schema.
        where: the lakehouse and version, for comments and messages.
        stand_ins: the other objects as :func:`bind_views` takes them.

    Returns:
        ``(schema, name, select, comment)`` of each view, each after the
        views it reads; and ``namespace.view`` -> why it cannot be read, for
        each view whose SELECT raises that reason instead.
    """
    names = {schema: set(objects) for schema, objects in names.items()}
    for namespace, definition in definitions:
        names.setdefault(schemas[namespace], set()).add(definition.name)
    planned = [plan_view(ns, definition, schemas, names) for ns, definition in definitions]
    made = []
    unreadable = {}
    for view in bind_views(planned, stand_ins, schemas):
        shown = f"{view.namespace}.{view.definition.name}"
        comment = f"{where}, view {shown}"
        select = view.select
        if select is None:
            assert view.reason is not None  # bind_views gives every unbound view its reason
            unreadable[shown] = view.reason
            message = (
                f"view {shown} of the {where} cannot be read in the DuckDB bridge: "
                f"{view.reason}; query it through trinity_dbapi.connect(), or replace the "
                "view (CREATE OR REPLACE VIEW) and refresh the attachment"
            )
            select = unreadable_select(view.definition.columns, message)
            comment += " (unreadable here: querying it raises why)"
        made.append((schemas[view.namespace], view.definition.name, select, comment))
    return made, unreadable


def plan_view(
    namespace: str,
    definition: ViewDefinition,
    schemas: Mapping[str, str],
    objects: Mapping[str, Collection[str]],
) -> LakeView:
    """The DuckDB query of ``definition`` over the attached objects.

    Args:
        namespace: the view's namespace.
        definition: the view.
        schemas: lakehouse namespace (catalog namespaces included, if
            attached) -> its DuckDB schema.
        objects: DuckDB schema -> the names of the objects the attachment
            holds there (its tables, catalog tables and lakehouse views).
    """
    from sqlglot import exp

    from trinity_dbapi.format.definitions import TRINITY_DIALECT
    from trinity_dbapi.lakehouse.catalog import RESERVED_NAMESPACES
    from trinity_dbapi.sql import model
    from trinity_dbapi.sql.compat import duckdb_sql
    from trinity_dbapi.sql.statements import parse, to_statement

    def unreadable(reason: str) -> LakeView:
        return LakeView(namespace, definition, None, (), reason)

    text = definition.sql.get(TRINITY_DIALECT)
    if text is None:
        return unreadable("it has no query in the trinity dialect")
    try:  # a definition another writer made may hold anything: it must not break attach
        parsed = parse(text)
        query = to_statement(parsed[0]) if len(parsed) == 1 else None
    except Error as exc:
        return unreadable(f"its query does not parse here: {exc}".split("\n")[0])
    if not isinstance(query, model.Query):
        return unreadable("its stored text is not one query")
    depends: list[tuple[str, str]] = []
    renamed: dict[tuple[str, str], str] = {}
    for ref in query.tables:
        ns = ref.table.namespace or namespace
        where = f"{ns}.{ref.table.name}"
        if ref.as_of is not None:
            return unreadable(
                f"it reads {where} FOR SYSTEM_VERSION (or SYSTEM_TIME) AS OF another version, "
                "and the bridge exposes one version only"
            )
        schema = schemas.get(ns)
        if schema is None and ns in RESERVED_NAMESPACES:
            return unreadable(f"it reads the catalog table {where}, not attached (catalog=False)")
        if schema is None:
            return unreadable(f"it reads {where}, and namespace {ns!r} is not attached")
        if ref.table.name not in objects.get(schema, {}):
            return unreadable(f"it reads {where}, which does not exist in this version")
        node = ref.node
        if node.args.get("alias") is None:
            renamed[ns, ref.table.name] = schema  # ns.t.col names it as the schema does
        node.set("catalog", None)
        node.set("db", exp.to_identifier(schema, quoted=True))
        node.set("this", exp.to_identifier(ref.table.name, quoted=True))
        depends.append((schema, ref.table.name))
    for column in query.expression.find_all(exp.Column):
        db = column.args.get("db")
        if db is not None and (column.db, column.table) in renamed:
            column.set("db", exp.to_identifier(renamed[column.db, column.table], quoted=True))
            column.set("catalog", None)
    alias = ", ".join(quote_identifier(c.name) for c in definition.columns)
    select = (
        f"SELECT * FROM ({duckdb_sql(query.expression)}) AS "
        f"{quote_identifier(definition.name)}({alias})"
    )
    return LakeView(namespace, definition, select, tuple(dict.fromkeys(depends)))


def bind_views(
    views: Sequence[LakeView],
    stand_ins: Mapping[str, Mapping[str, str | pa.Table]],
    schemas: Mapping[str, str],
) -> list[LakeView]:
    """The views in an order DuckDB can create them, each bound or given its reason.

    Each readable view is created in a scratch in-memory DuckDB over
    ``stand_ins`` (schema -> name -> a SELECT of no rows with the object's
    columns, or an Arrow table of its rows), after the views it reads; a view DuckDB refuses there, or one
    reading such a view, gets the reason instead.

    Args:
        views: the planned views.
        stand_ins: the attachment's other objects as empty SELECTs.
        schemas: lakehouse namespace -> DuckDB schema.
    """
    if not views:
        return []  # no scratch DuckDB to start
    by_key = {(schemas[v.namespace], v.definition.name): v for v in views}
    ordered: list[LakeView] = []
    state: dict[tuple[str, str], str] = {}  # "visiting" / "done"

    def visit(key: tuple[str, str]) -> None:
        # A cycle cannot be stored (CREATE VIEW refuses it); one met anyway stays unreadable.
        if state.get(key) == "done":
            return
        view = by_key[key]
        if state.get(key) == "visiting":
            view.reason = view.reason or "it reads itself through other views"
            return
        state[key] = "visiting"
        for dep in view.depends:
            if dep in by_key:
                visit(dep)
        state[key] = "done"
        ordered.append(view)

    for key in by_key:
        visit(key)
    scratch = duckdb.connect()
    try:
        for schema in {*stand_ins, *(key[0] for key in by_key)}:
            scratch.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_identifier(schema)}")
        for schema, objects in stand_ins.items():
            for name, select in objects.items():
                target = f"{quote_identifier(schema)}.{quote_identifier(name)}"
                if isinstance(select, str):
                    scratch.execute(f"CREATE VIEW {target} AS {select}")
                    continue
                scratch.register("__stand_in", select.schema.empty_table())
                scratch.execute(f"CREATE TABLE {target} AS SELECT * FROM __stand_in")
                scratch.unregister("__stand_in")
        for view in ordered:
            schema = schemas[view.namespace]
            target = f"{quote_identifier(schema)}.{quote_identifier(view.definition.name)}"
            broken = [by_key[d] for d in view.depends if d in by_key and by_key[d].select is None]
            if view.reason is None and broken:
                shown = f"{broken[0].namespace}.{broken[0].definition.name}"
                view.reason = f"it reads view {shown}, which cannot be read: {broken[0].reason}"
            if view.reason is None and view.select is not None:
                try:
                    scratch.execute(f"CREATE VIEW {target} AS {view.select}")
                except duckdb.Error as exc:
                    view.reason = f"DuckDB cannot bind its query here: {exc}".split("\n")[0]
            if view.reason is not None:
                view.select = None
                scratch.execute(f"CREATE VIEW {target} AS {empty_select(view.definition)}")
    finally:
        scratch.close()
    return ordered


def empty_select(definition: ViewDefinition) -> str:
    """A SELECT of no rows with the view's columns."""
    from trinity_dbapi.duckdb.views import empty_select as empty

    return empty(definition.columns)


def unreadable_select(columns: Sequence[Column], message: str) -> str:
    """A SELECT with ``columns`` that raises ``message`` as soon as a row is read.

    ``error()`` stands in every column and in the filter, so neither a
    projection DuckDB prunes (``count(*)``) nor a filter it folds can answer
    without raising.
    """
    error = f"error({quote_string(message)})"
    items = ", ".join(
        f"CAST({error} AS {duckdb_type_of(c)}) AS {quote_identifier(c.name)}" for c in columns
    )
    return f"SELECT {items} FROM range(1) WHERE {error} IS NULL"
