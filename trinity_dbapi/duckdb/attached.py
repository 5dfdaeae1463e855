"""An attachment: one pinned lakehouse version as schemas, views and tables in DuckDB.

:func:`attach` makes an :class:`Attached`; what the version looks like in
DuckDB (a view per table, a table per catalog table, a view per lakehouse
view) is planned by :func:`~trinity_dbapi.duckdb.version_plan.plan_version`;
the attachment creates it in one DuckDB transaction, and re-points or drops
it on refresh and detach, never touching objects it did not make.

Imports from duckdb/: connection, files, version_plan, views.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb

from trinity_dbapi.duckdb import views
from trinity_dbapi.duckdb.connection import in_transaction, is_open, scalar, translate
from trinity_dbapi.duckdb.files import FileAccess
from trinity_dbapi.duckdb.version_plan import BridgeObject, Plan, plan_version
from trinity_dbapi.errors import InterfaceError, OperationalError, ProgrammingError
from trinity_dbapi.format.sql_text import qualified_name, quote_identifier, quote_string
from trinity_dbapi.tables import registration  # noqa: F401 - the table format's hooks

if TYPE_CHECKING:
    # typing.Self is Python 3.11+; typing_extensions is only needed by mypy.
    from typing_extensions import Self

    from trinity_dbapi.lakehouse.lakehouse import Lakehouse, Snapshot

__all__ = ["Attached", "attach"]

#: Every object the bridge creates carries a comment starting with this and its token.
_MARKER = "trinity-dbapi bridge"
_MARKER_RE = re.compile(rf"^{re.escape(_MARKER)} ([0-9a-f]{{32}}):")
#: Tokens of this process's attachments that are not detached: their objects are live.
_LIVE: set[str] = set()


def attach(
    con: duckdb.DuckDBPyConnection,
    uri: str | Lakehouse,
    *,
    storage_options: Mapping[str, Any] | None = None,
    version: int | None = None,
    timestamp: datetime | float | None = None,
    export: str | None = None,
    prefix: str = "",
    namespaces: Iterable[str] | None = None,
    catalog: bool = True,
    branch: str | None = None,
) -> Attached:
    """Expose a lakehouse's tables and catalog tables in the DuckDB connection ``con``.

    Args:
        con: the caller's DuckDB connection; the schemas are created in its
            current database.
        uri: the lakehouse root URI (or an open :class:`~trinity_dbapi.lakehouse.lakehouse.Lakehouse`).
            A lakehouse is never created.
        storage_options: fsspec options of the storage (credentials, endpoint).
        version: pin this lakehouse version instead of the latest.
        timestamp: pin the version current at this time (a datetime, naive =
            UTC, or milliseconds since the epoch).
        export: pin the snapshot this name gives: a tag, an exported
            snapshot or a branch's head (as ``FOR SYSTEM_VERSION AS OF 'name'``).
        prefix: put before every schema name (``prefix + namespace``), to keep
            clear of the connection's own schemas or of another lakehouse.
        namespaces: attach only these namespaces (None: every one). Only their
            key ranges and their tables' definitions are read, and the catalog
            tables' rows cover these namespaces only (``system.versions``
            excepted: it is not per namespace). Kept on every refresh.
        catalog: also attach the catalog tables (``trinity_system``,
            ``trinity_information_schema``); False attaches the tables only.
        branch: attach this branch instead of main (None or ``"main"``:
            main): its tables, views and catalog tables, at its latest
            version or at ``version`` / ``timestamp`` along it. Every
            refresh follows the branch.

    Returns:
        The attachment: :meth:`Attached.refresh` moves it to a newer version,
        :meth:`Attached.detach` removes everything it created.

    Raises:
        LakehouseNotFoundError: there is no lakehouse at ``uri``.
        NoSuchRefError: no branch is named ``branch`` (the message says how to
            list them).
        NoSuchVersionError: the version, time or export does not exist.
        NoSuchNamespaceError: a namespace of ``namespaces`` does not exist in
            the pinned version.
        ProgrammingError: more than one of ``version``, ``timestamp`` and
            ``export``; ``namespaces`` is a string rather than a list of
            names; or a schema name that is taken in ``con`` (by a schema
            holding objects of the user, by a catalog, or by another lakehouse
            attached there): choose a ``prefix``.
    """
    if not isinstance(con, duckdb.DuckDBPyConnection):
        raise ProgrammingError(
            f"attach() needs a duckdb.DuckDBPyConnection (duckdb.connect()), not "
            f"{type(con).__name__}"
        )
    if not isinstance(prefix, str):
        raise ProgrammingError(f"prefix must be a string, not {type(prefix).__name__}")
    if branch is not None and not isinstance(branch, str):
        raise ProgrammingError(
            f"branch must be a branch name (str), not {type(branch).__name__}; "
            "SHOW BRANCHES lists them"
        )
    from trinity_dbapi.lakehouse.catalog_scope import namespace_names

    chosen = namespace_names(namespaces)
    if isinstance(uri, str):
        from trinity_dbapi.lakehouse.lakehouse import Lakehouse

        lakehouse = Lakehouse.open(uri, storage_options=storage_options)
    else:
        lakehouse = uri
    if branch is not None:
        lakehouse = lakehouse.on_branch(branch)
    attached = Attached(con, lakehouse, prefix, namespaces=chosen, catalog=bool(catalog))
    try:
        attached.refresh(version=version, timestamp=timestamp, export=export)
    except BaseException:
        attached.detach()
        raise
    return attached


class Attached:
    """A lakehouse version exposed in a DuckDB connection; made by :func:`attach`.

    Not thread-safe: refresh and detach it from one thread at a time. Used as
    a context manager, it detaches at the end of the block.

    Attributes:
        connection: the DuckDB connection.
        lakehouse: the attached lakehouse (on the attached branch: ``lakehouse.branch``, None for main).
        prefix: put before every schema name.
        namespaces: the namespaces attached, or None for every one.
        catalog: whether the catalog tables are attached.
        database: the DuckDB database (catalog) holding the schemas.
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        lakehouse: Lakehouse,
        prefix: str,
        *,
        namespaces: frozenset[str] | None = None,
        catalog: bool = True,
    ) -> None:
        self.connection = con
        self.lakehouse = lakehouse
        self.prefix = prefix
        self.namespaces = namespaces
        self.catalog = catalog
        try:
            self.database: str = scalar(con, "SELECT current_database()")
        except duckdb.Error as exc:
            raise translate(exc) from exc
        self._token = uuid.uuid4().hex
        self._files = FileAccess(lakehouse.storage, self._token)
        self._snapshot: Snapshot | None = None
        self._namespaces: dict[str, str] = {}
        self._unreadable: dict[str, str] = {}
        # What DuckDB holds, the schemas the bridge made (dropped again when
        # they empty), and the hidden names of registered Arrow data.
        self._objects: Plan = {}
        self._owned: set[str] = set()
        self._registered: dict[tuple[str, str], str] = {}
        self._retired: list[str] = []
        self._detached = False
        _LIVE.add(self._token)

    def __repr__(self) -> str:
        state = "detached" if self._detached else f"version={self.version}"
        chosen = "" if self.namespaces is None else f", namespaces={sorted(self.namespaces)!r}"
        branch = self.lakehouse.branch
        on = "" if branch is None else f", branch={branch!r}"
        return (
            f"Attached({self.lakehouse.storage.root_uri!r}{on}, {state}, prefix={self.prefix!r}"
            f"{chosen})"
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()

    # -- state ---------------------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        """The pinned lakehouse snapshot."""
        self._check_attached()
        assert self._snapshot is not None  # set by attach()
        return self._snapshot

    @property
    def version(self) -> int:
        """The pinned lakehouse version (for ``export=``, the version that was exported)."""
        return self.snapshot.version

    @property
    def schemas(self) -> dict[str, str]:
        """Namespace -> DuckDB schema name, the catalog namespaces included (if attached)."""
        self._check_attached()
        return dict(self._namespaces)

    @property
    def unreadable_views(self) -> dict[str, str]:
        """``namespace.view`` -> why the bridge cannot read it, for each such lakehouse view.

        Each is still a DuckDB view with the view's columns, which raises an
        error naming the view and the reason when a row of it is read.
        """
        self._check_attached()
        return dict(self._unreadable)

    @property
    def detached(self) -> bool:
        """Whether :meth:`detach` was called."""
        return self._detached

    # -- refresh and detach ------------------------------------------------------------------

    def refresh(
        self,
        *,
        version: int | None = None,
        timestamp: datetime | float | None = None,
        export: str | None = None,
    ) -> Attached:
        """Re-point every view at the newest version (or the one given); return self.

        Tables created since appear, dropped ones disappear, and every view
        lists the files of the new version; views whose table did not change
        are left alone. It runs in one DuckDB transaction (or in the
        connection's open one), so a query sees the old version or the new one.
        An attachment of chosen ``namespaces`` keeps exactly those.

        Raises:
            NoSuchVersionError: the version, time or export does not exist.
            NoSuchNamespaceError: an attached namespace does not exist in that
                version (the attachment is left as it was).
            ProgrammingError: a schema name is taken (see :func:`attach`).
            InterfaceError: the attachment was detached.
        """
        self._check_attached()
        snapshot = _pin(self.lakehouse, version, timestamp, export)
        plan, namespaces, unreadable = plan_version(
            self.lakehouse,
            snapshot,
            prefix=self.prefix,
            namespaces=self.namespaces,
            catalog=self.catalog,
            file_path=self._files.path,
        )
        try:
            self._check_names(plan)
            self._files.register(self.connection)
        except duckdb.Error as exc:
            raise translate(exc) from exc
        self._sync(plan)
        self._snapshot = snapshot
        self._namespaces = namespaces
        self._unreadable = unreadable
        return self

    def detach(self) -> None:
        """Drop every view, table and schema the attachment made, and unregister its data.

        Schemas that existed before, or that hold objects of the user by now,
        stay. Detaching twice is allowed, and so is detaching after the
        connection was closed.
        """
        if self._detached:
            return
        self._detached = True
        _LIVE.discard(self._token)
        try:
            self._sync({})
        except OperationalError:
            if is_open(self.connection):
                raise  # a closed connection took everything with it; anything else is real
        finally:
            for name in self._registered.values():
                with contextlib.suppress(duckdb.Error):
                    self.connection.unregister(name)
            self._registered.clear()
            self._files.close(self.connection)

    def _check_names(self, plan: Plan) -> None:
        """Refuse schema and object names that DuckDB cannot tell apart or that are taken."""
        views.check_unique(plan, "schema", "attachment")
        for schema, objects in plan.items():
            views.check_unique(objects, "table", f"schema {schema!r}")
        rows = self.connection.execute("SELECT database_name FROM duckdb_databases()").fetchall()
        catalogs = {str(row[0]).casefold() for row in rows}
        mine = {schema.casefold() for schema in self._objects}
        for schema in plan:
            if schema.casefold() in catalogs:
                raise ProgrammingError(
                    f"DuckDB schema {schema!r} would have the name of a DuckDB catalog, which "
                    f"makes '{schema}.<table>' ambiguous; attach with a prefix "
                    f"(prefix='lake_' gives 'lake_{schema}')"
                )
            if schema.casefold() in mine:
                continue
            foreign = [name for name, token in self._existing(schema) if not _is_stale(token)]
            if foreign:
                raise ProgrammingError(
                    f"DuckDB schema {schema!r} already exists in database {self.database!r} and "
                    f"holds objects this attachment did not make ({', '.join(foreign[:3])}"
                    f"{', ...' if len(foreign) > 3 else ''}); attach with a prefix "
                    f"(prefix='lake_' gives 'lake_{schema}'), or detach what made them"
                )

    # -- applying ----------------------------------------------------------------------------------

    def _sync(self, plan: Plan) -> None:
        """Make DuckDB hold exactly ``plan``, all or nothing."""
        saved = (
            {schema: dict(objects) for schema, objects in self._objects.items()},
            set(self._owned),
            dict(self._registered),
        )
        self._retired = []
        try:
            with self._transaction():
                self._apply(plan)
        except BaseException:
            # DuckDB rolled back: it holds the old objects, which read the old
            # registrations (never unregistered before the commit).
            for relation in set(self._registered.values()) - set(saved[2].values()):
                with contextlib.suppress(duckdb.Error):
                    self.connection.unregister(relation)
            self._objects, self._owned, self._registered = saved
            raise
        for relation in self._retired:
            with contextlib.suppress(duckdb.Error):
                self.connection.unregister(relation)

    def _apply(self, plan: Plan) -> None:
        con = self.connection
        for schema, objects in self._objects.items():
            wanted = plan.get(schema, {})
            for name, old in list(objects.items()):
                if name not in wanted or wanted[name].kind != old.kind:
                    con.execute(f"DROP {old.kind} IF EXISTS {self._qualified(schema, name)}")
                    self._retire(schema, name)
                    del objects[name]
        for schema in plan:
            if schema not in self._objects:
                self._adopt(schema)
            self._objects.setdefault(schema, {})
        # Lakehouse views last, each after the views it reads (sorted is stable).
        items = [(schema, name, obj) for schema, objs in plan.items() for name, obj in objs.items()]
        for schema, name, obj in sorted(items, key=lambda item: item[2].rank):
            current = self._objects[schema]
            if obj.data is not None or obj.rank or current.get(name) != obj:
                self._create(schema, name, obj)
                current[name] = obj
        for schema in [s for s in self._objects if s not in plan]:
            del self._objects[schema]
            if schema in self._owned:
                self._owned.discard(schema)
                if not self._existing(schema):
                    con.execute(f"DROP SCHEMA IF EXISTS {self._qualified(schema)}")

    def _adopt(self, schema: str) -> None:
        """Create ``schema``, or take over an existing one (dropping stale bridge objects)."""
        if not self._schema_exists(schema):
            self.connection.execute(f"CREATE SCHEMA {self._qualified(schema)}")
            self._owned.add(schema)
            return
        for name, token in self._existing(schema):  # _check_names let only stale ones in
            if _is_stale(token):
                kind = self._kind(schema, name)
                self.connection.execute(f"DROP {kind} IF EXISTS {self._qualified(schema, name)}")
                self._owned.add(schema)

    def _create(self, schema: str, name: str, obj: BridgeObject) -> None:
        con = self.connection
        target = self._qualified(schema, name)
        self._retire(schema, name)
        select = obj.select
        if obj.data is not None:
            relation = f"__trinity_{self._token[:12]}_{uuid.uuid4().hex[:12]}"
            con.register(relation, obj.data)
            self._registered[schema, name] = relation
            select = f"SELECT {select} FROM {quote_identifier(relation)}"
        con.execute(f"CREATE OR REPLACE {obj.kind} {target} AS {select}")
        comment = f"{_MARKER} {self._token}: {obj.comment}"
        con.execute(f"COMMENT ON {obj.kind} {target} IS {quote_string(comment)}")
        if obj.kind == "TABLE":  # the rows were copied: the registration is done with
            self._retire(schema, name)

    def _retire(self, schema: str, name: str) -> None:
        """Unregister the object's Arrow data once the change commits."""
        relation = self._registered.pop((schema, name), None)
        if relation is not None:
            self._retired.append(relation)

    # -- DuckDB catalog lookups ----------------------------------------------------------------------

    def _schema_exists(self, schema: str) -> bool:
        return bool(
            scalar(
                self.connection,
                "SELECT count(*) FROM duckdb_schemas() WHERE database_name = ? "
                "AND lower(schema_name) = lower(?)",
                [self.database, schema],
            )
        )

    def _existing(self, schema: str) -> list[tuple[str, str | None]]:
        """Each object in ``schema`` and the token of the attachment that made it (or None)."""
        rows = self.connection.execute(_OBJECTS_SQL, [self.database, schema] * 5).fetchall()
        found = []
        for name, comment in rows:
            match = _MARKER_RE.match(comment or "")
            found.append((str(name), match[1] if match else None))
        return found

    def _kind(self, schema: str, name: str) -> str:
        views = scalar(
            self.connection,
            "SELECT count(*) FROM duckdb_views() WHERE database_name = ? "
            "AND lower(schema_name) = lower(?) AND view_name = ?",
            [self.database, schema, name],
        )
        return "VIEW" if views else "TABLE"

    def _qualified(self, schema: str, name: str | None = None) -> str:
        parts = [self.database, schema] if name is None else [self.database, schema, name]
        return qualified_name(*parts)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One DuckDB transaction around the block, or the connection's open one.

        DuckDB errors become the PEP 249 errors of :mod:`trinity_dbapi.errors`.
        """
        con = self.connection
        try:
            # A failed BEGIN would abort the connection's open transaction: look first.
            own = not in_transaction(con)
            if own:
                con.execute("BEGIN TRANSACTION")
        except duckdb.Error as exc:
            raise translate(exc) from exc
        try:
            yield
        except BaseException as exc:
            if own:
                with contextlib.suppress(duckdb.Error):
                    con.execute("ROLLBACK")
            if isinstance(exc, duckdb.Error):
                raise translate(exc) from exc
            raise
        if own:
            try:
                con.execute("COMMIT")
            except duckdb.Error as exc:
                raise translate(exc) from exc

    def _check_attached(self) -> None:
        if self._detached:
            raise InterfaceError(
                f"the attachment of {self.lakehouse.storage.root_uri} was detached; attach again"
            )


#: Each object of a schema (name, comment); parameters: 5 x (database, schema).
_OBJECTS_SQL = " UNION ALL ".join(
    f"SELECT {name} AS name, comment FROM {function}() "
    f"WHERE database_name = ? AND lower(schema_name) = lower(?){extra}"
    for function, name, extra in (
        ("duckdb_tables", "table_name", ""),
        ("duckdb_views", "view_name", " AND NOT internal"),
        ("duckdb_sequences", "sequence_name", ""),
        ("duckdb_functions", "function_name", " AND NOT internal"),
        ("duckdb_types", "type_name", " AND NOT internal"),
    )
)


def _is_stale(token: str | None) -> bool:
    """Whether an object marked with ``token`` was left by an attachment that is gone.

    Such objects remain in a database file after a process ended without
    detaching; a new attachment takes their schema over.
    """
    return token is not None and token not in _LIVE


# --- pinning a version ------------------------------------------------------------------------


def _pin(
    lakehouse: Lakehouse,
    version: int | None,
    timestamp: datetime | float | None,
    export: str | None,
) -> Snapshot:
    given = [
        name
        for name, value in (("version", version), ("timestamp", timestamp), ("export", export))
        if value is not None
    ]
    if len(given) > 1:
        raise ProgrammingError(
            f"give at most one of version, timestamp and export, not {' and '.join(given)}"
        )
    if timestamp is not None:
        return lakehouse.snapshot_at(timestamp)
    if export is not None:
        return lakehouse.snapshot_by_name(export)  # a tag, an export or a branch's head
    return lakehouse.snapshot(version)
