"""The DuckDB bridge: a lakehouse's tables as views in your own DuckDB connection.

:func:`attach` puts one pinned version of a lakehouse into a DuckDB connection
that the caller owns, so ``SELECT * FROM sales.orders`` and any tool that
speaks DuckDB work on it directly (docs/duckdb.md is the manual):

* one DuckDB schema per namespace, named ``prefix + namespace``, holding one
  VIEW per table over exactly the data files of the pinned version, with the
  table's column names and DuckDB types (:func:`~trinity_dbapi.format.type_mapping.duckdb_type`);
* the catalog tables of :mod:`trinity_dbapi.lakehouse.catalog` as small DuckDB
  tables in ``prefix + "trinity_system"`` and ``prefix +
  "trinity_information_schema"``. Not ``system``: a schema of that name makes
  ``system.tables`` ambiguous with DuckDB's own ``system`` catalog, and DuckDB
  refuses the query. They are tables, not views, because a view over Arrow
  data registered from Python only works on the connection that registered
  it, not on its cursors nor in a database file.

How a view reads its table (the trade-off is measured in docs/duckdb.md):

* **Parquet scan** (the default): ``read_parquet([...the exact files...],
  schema=MAP {field id: {name, type}}, filename=...)``. DuckDB's own reader
  matches payload columns by their Parquet field ID, as
  :func:`~trinity_dbapi.tables.reader.read_table` does (a dropped and re-added
  column does not bring old values back; a column no file has reads as NULL),
  and casts them to the declared types. Partition columns come from the last
  directories of each file's path, decoded in SQL exactly as
  :mod:`~trinity_dbapi.tables.partitions` encodes them
  (:mod:`~trinity_dbapi.tables.partition_sql`, shared with the private DuckDB);
  DuckDB evaluates those expressions per file, so a filter on a partition
  column skips files without opening them. Local
  files are read by path; any other storage (S3, memory, ...) through its
  fsspec file system, registered in DuckDB under a protocol private to the
  attachment (``register_filesystem``), so no DuckDB extension (httpfs) is
  downloaded and the user's own ``s3://`` setup is left alone.
* **Arrow dataset** (the fallback): the lazy dataset of
  :func:`~trinity_dbapi.tables.reader.arrow_dataset` registered under a hidden
  name (``con.register``). Used for the tables the Parquet scan cannot read
  exactly: binary or fixed partition columns (their raw bytes do not
  URL-decode to text) and columns whose IDs do not fit a Parquet field ID.
  Such a view works on ``con`` only, not on its cursors.

Views are frozen: each one lists the files of the version it was made at.
:meth:`Attached.refresh` re-points them at the newest (or another) version.
Everything is read-only: the views read files that are never changed in place.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb

from trinity_dbapi.errors import (
    DataError,
    Error,
    InterfaceError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
)

if TYPE_CHECKING:
    # typing.Self is Python 3.11+; typing_extensions is only needed by mypy.
    from typing_extensions import Self

    from trinity_dbapi.format.definitions import Column, TableDefinition
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse, Snapshot
    from trinity_dbapi.lakehouse.transaction import Transaction
    from trinity_dbapi.storage import Storage

__all__ = ["CATALOG_SCHEMAS", "Attached", "attach"]

#: Lakehouse catalog namespace -> the DuckDB schema name (before the prefix).
CATALOG_SCHEMAS: Mapping[str, str] = {
    "system": "trinity_system",
    "information_schema": "trinity_information_schema",
}

#: Every object the bridge creates carries a comment starting with this and its token.
_MARKER = "trinity-dbapi bridge"
_MARKER_RE = re.compile(rf"^{re.escape(_MARKER)} ([0-9a-f]{{32}}):")
#: Tokens of this process's attachments that are not detached: their objects are live.
_LIVE: set[str] = set()

#: Largest column ID a Parquet field ID (int32) holds.
_MAX_FIELD_ID = 2**31 - 1
#: Characters DuckDB expands as a glob in a file name.
_GLOB_CHARS = frozenset("*?[{")


def attach(
    con: duckdb.DuckDBPyConnection,
    uri: str | Lakehouse,
    *,
    storage_options: Mapping[str, Any] | None = None,
    version: int | None = None,
    timestamp: datetime | float | None = None,
    export: str | None = None,
    prefix: str = "",
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
        export: pin the exported snapshot of this name.
        prefix: put before every schema name (``prefix + namespace``), to keep
            clear of the connection's own schemas or of another lakehouse.

    Returns:
        The attachment: :meth:`Attached.refresh` moves it to a newer version,
        :meth:`Attached.detach` removes everything it created.

    Raises:
        LakehouseNotFoundError: there is no lakehouse at ``uri``.
        NoSuchVersionError: the version, time or export does not exist.
        ProgrammingError: more than one of ``version``, ``timestamp`` and
            ``export``; or a schema name that is taken in ``con`` (by a schema
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
    if isinstance(uri, str):
        from trinity_dbapi.lakehouse.lakehouse import Lakehouse

        lakehouse = Lakehouse.open(uri, storage_options=storage_options)
    else:
        lakehouse = uri
    attached = Attached(con, lakehouse, prefix)
    try:
        attached.refresh(version=version, timestamp=timestamp, export=export)
    except BaseException:
        attached.detach()
        raise
    return attached


# --- what a version looks like in DuckDB ----------------------------------------------


@dataclass(frozen=True)
class _Object:
    """One view or table the bridge keeps in DuckDB.

    Attributes:
        kind: ``VIEW`` or ``TABLE``.
        select: the SELECT it holds; with ``data``, only the select list, read
            from the hidden name ``data`` is registered under.
        comment: what it shows (stored after the marker). Not compared: a view
            whose SELECT did not change is kept, with the version it was made at.
        data: a pyarrow dataset (a view's fallback) or table (a catalog table)
            to register for the statement, or None. Objects with data are made
            again on every refresh.
    """

    kind: str
    select: str
    comment: str = field(compare=False)
    data: Any = field(default=None, compare=False)


#: DuckDB schema -> object name -> object.
_Plan = dict[str, dict[str, _Object]]


class Attached:
    """A lakehouse version exposed in a DuckDB connection; made by :func:`attach`.

    Not thread-safe: refresh and detach it from one thread at a time. Used as
    a context manager, it detaches at the end of the block.

    Attributes:
        connection: the DuckDB connection.
        lakehouse: the attached lakehouse.
        prefix: put before every schema name.
        database: the DuckDB database (catalog) holding the schemas.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, lakehouse: Lakehouse, prefix: str) -> None:
        self.connection = con
        self.lakehouse = lakehouse
        self.prefix = prefix
        try:
            self.database: str = _scalar(con, "SELECT current_database()")
        except duckdb.Error as exc:
            raise _translate(exc) from exc
        self._token = uuid.uuid4().hex
        self._files = _FileAccess(lakehouse.storage, self._token)
        self._snapshot: Snapshot | None = None
        self._namespaces: dict[str, str] = {}
        # What DuckDB holds, the schemas the bridge made (dropped again when
        # they empty), and the hidden names of registered Arrow data.
        self._objects: _Plan = {}
        self._owned: set[str] = set()
        self._registered: dict[tuple[str, str], str] = {}
        self._retired: list[str] = []
        self._detached = False
        _LIVE.add(self._token)

    def __repr__(self) -> str:
        state = "detached" if self._detached else f"version={self.version}"
        return f"Attached({self.lakehouse.storage.root_uri!r}, {state}, prefix={self.prefix!r})"

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
        """Namespace -> DuckDB schema name, the catalog namespaces included."""
        self._check_attached()
        return dict(self._namespaces)

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

        Raises:
            NoSuchVersionError: the version, time or export does not exist.
            ProgrammingError: a schema name is taken (see :func:`attach`).
            InterfaceError: the attachment was detached.
        """
        self._check_attached()
        snapshot = _pin(self.lakehouse, version, timestamp, export)
        plan, namespaces = self._plan(snapshot)
        try:
            self._check_names(plan)
            self._files.register(self.connection)
        except duckdb.Error as exc:
            raise _translate(exc) from exc
        self._sync(plan)
        self._snapshot = snapshot
        self._namespaces = namespaces
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
            if _is_open(self.connection):
                raise  # a closed connection took everything with it; anything else is real
        finally:
            for name in self._registered.values():
                with contextlib.suppress(duckdb.Error):
                    self.connection.unregister(name)
            self._registered.clear()
            self._files.close(self.connection)

    # -- planning ------------------------------------------------------------------------------

    def _plan(self, snapshot: Snapshot) -> tuple[_Plan, dict[str, str]]:
        """Every object the version needs, by schema; and namespace -> schema."""
        from trinity_dbapi.lakehouse import catalog
        from trinity_dbapi.lakehouse.transaction import Transaction

        view = Transaction(self.lakehouse, snapshot, read_only=True)
        where = f"lakehouse {self.lakehouse.storage.root_uri} as of version {snapshot.version}"
        plan: _Plan = {}
        namespaces: dict[str, str] = {}
        for namespace in view.list_namespaces():
            schema = namespaces[namespace] = self.prefix + namespace
            plan[schema] = {
                table: self._table_object(view, namespace, table, where)
                for table in view.list_tables(namespace)
            }
        for namespace, name in catalog.CATALOG_TABLES:
            schema = namespaces[namespace] = self.prefix + CATALOG_SCHEMAS[namespace]
            data = catalog.catalog_table(view, snapshot, namespace, name)
            comment = f"{where}, catalog table {namespace}.{name}"
            plan.setdefault(schema, {})[name] = _Object("TABLE", "*", comment, data)
        return plan, namespaces

    def _table_object(self, view: Transaction, namespace: str, name: str, where: str) -> _Object:
        from trinity_dbapi.tables import managed

        definition = view.load_table(namespace, name)
        comment = f"{where}, table {namespace}.{name}"
        columns = definition.columns
        if not managed.has_dataset(definition):
            return _Object("VIEW", _empty_select(columns), comment)
        storage = self.lakehouse.storage
        meta = managed.metadata(storage, definition)
        by = definition.partition_columns
        if not _parquet_scan_reads(definition, by):
            from trinity_dbapi.tables.reader import arrow_dataset

            dataset = arrow_dataset(storage, meta, managed.schema(definition), by)
            return _Object("VIEW", _cast_items(columns), f"{comment} (Arrow dataset)", dataset)
        labels = list(meta.partitions)
        if not labels:
            return _Object("VIEW", _empty_select(columns), comment)
        _check_labels(definition, by, labels, meta)
        files = [self._files.path(meta.partitions[label]["table"]) for label in labels]
        return _Object("VIEW", _parquet_select(columns, by, files), comment)

    def _check_names(self, plan: _Plan) -> None:
        """Refuse schema and object names that DuckDB cannot tell apart or that are taken."""
        _check_unique(plan, "schema", "attachment")
        for schema, objects in plan.items():
            _check_unique(objects, "table", f"schema {schema!r}")
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

    def _sync(self, plan: _Plan) -> None:
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

    def _apply(self, plan: _Plan) -> None:
        con = self.connection
        for schema, objects in self._objects.items():
            wanted = plan.get(schema, {})
            for name, old in list(objects.items()):
                if name not in wanted or wanted[name].kind != old.kind:
                    con.execute(f"DROP {old.kind} IF EXISTS {self._qualified(schema, name)}")
                    self._retire(schema, name)
                    del objects[name]
        for schema, objects in plan.items():
            if schema not in self._objects:
                self._adopt(schema)
            current = self._objects.setdefault(schema, {})
            for name, obj in objects.items():
                if obj.data is not None or current.get(name) != obj:
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

    def _create(self, schema: str, name: str, obj: _Object) -> None:
        con = self.connection
        target = self._qualified(schema, name)
        self._retire(schema, name)
        select = obj.select
        if obj.data is not None:
            relation = f"__trinity_{self._token[:12]}_{uuid.uuid4().hex[:12]}"
            con.register(relation, obj.data)
            self._registered[schema, name] = relation
            select = f"SELECT {select} FROM {_identifier(relation)}"
        con.execute(f"CREATE OR REPLACE {obj.kind} {target} AS {select}")
        comment = f"{_MARKER} {self._token}: {obj.comment}"
        con.execute(f"COMMENT ON {obj.kind} {target} IS {_literal(comment)}")
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
            _scalar(
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
        views = _scalar(
            self.connection,
            "SELECT count(*) FROM duckdb_views() WHERE database_name = ? "
            "AND lower(schema_name) = lower(?) AND view_name = ?",
            [self.database, schema, name],
        )
        return "VIEW" if views else "TABLE"

    def _qualified(self, schema: str, name: str | None = None) -> str:
        parts = [self.database, schema] if name is None else [self.database, schema, name]
        return ".".join(_identifier(part) for part in parts)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One DuckDB transaction around the block, or the connection's open one.

        DuckDB errors become the PEP 249 errors of :mod:`trinity_dbapi.errors`.
        """
        con = self.connection
        try:
            # A failed BEGIN would abort the connection's open transaction: look first.
            own = not _in_transaction(con)
            if own:
                con.execute("BEGIN TRANSACTION")
        except duckdb.Error as exc:
            raise _translate(exc) from exc
        try:
            yield
        except BaseException as exc:
            if own:
                with contextlib.suppress(duckdb.Error):
                    con.execute("ROLLBACK")
            if isinstance(exc, duckdb.Error):
                raise _translate(exc) from exc
            raise
        if own:
            try:
                con.execute("COMMIT")
            except duckdb.Error as exc:
                raise _translate(exc) from exc

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
        return lakehouse.snapshot_by_export(export)
    return lakehouse.snapshot(version)


# --- reading files -------------------------------------------------------------------------------


class _FileAccess:
    """How DuckDB reaches the lakehouse's files: local paths, or a registered fsspec file system.

    A non-local storage's file system is registered (once, on first use) as
    a ``DirFileSystem`` rooted at the lakehouse root under a protocol private
    to the attachment, ``trinity-<token>://``, so two lakehouses with
    different credentials, and the connection's own ``s3://`` access, never
    mix. Local roots whose path DuckDB would expand as a glob go the same way.
    """

    def __init__(self, storage: Storage, token: str) -> None:
        self.storage = storage
        self.protocol = f"trinity-{token[:16]}"
        self._fs: Any = None
        self._registered_on: duckdb.DuckDBPyConnection | None = None
        self._local_root: str | None = None
        if storage.local_root is not None:
            root = storage.local_root + "/"
            if not _GLOB_CHARS & set(root):
                self._local_root = root

    def path(self, relative: str) -> str:
        """What DuckDB reads for a file path relative to the lakehouse root."""
        if self._local_root is not None:
            return self._local_root + relative
        return f"{self.protocol}://{relative}"

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        """Register the file system in ``con`` if views need it (idempotent)."""
        if self._local_root is not None or self._registered_on is not None:
            return
        con.register_filesystem(self._filesystem())
        self._registered_on = con

    def close(self, con: duckdb.DuckDBPyConnection) -> None:
        if self._registered_on is not None:
            with contextlib.suppress(duckdb.Error):
                con.unregister_filesystem(self.protocol)
            self._registered_on = None

    def _filesystem(self) -> Any:
        from fsspec.implementations.dirfs import DirFileSystem

        reached = self.storage.fsspec_filesystem()
        if reached is None:
            raise NotSupportedError(
                "the DuckDB bridge reads local and fsspec storages, "
                f"not {type(self.storage).__name__}"
            )
        fs, root = reached
        # A class per attachment: DuckDB routes paths by the class's protocol.
        cls = type(
            "TrinityRootFileSystem",
            (_KnownFiles, DirFileSystem),
            {"protocol": self.protocol, "cachable": False},
        )
        return cls(path=root, fs=fs)


class _KnownFiles:
    """File system mixin: a path without wildcards globs to itself, without a request.

    DuckDB globs every path of a ``read_parquet`` list each time it binds a
    query; on S3 each glob would be a LIST request. The views only name files
    that a committed version references, so they exist (a missing one fails
    when it is opened).
    """

    def glob(self, path: str, **kwargs: Any) -> Any:
        stripped = self._strip_protocol(path)  # type: ignore[attr-defined]
        if _GLOB_CHARS & set(stripped):
            return super().glob(path, **kwargs)  # type: ignore[misc]
        return [stripped]


# --- SQL text -------------------------------------------------------------------------------------


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _duckdb_type(column: Column) -> str:
    from trinity_dbapi.format.type_mapping import duckdb_type

    return duckdb_type(column.type)


def _empty_select(columns: Sequence[Column]) -> str:
    """A SELECT of no rows with exactly the columns' names and types."""
    items = ", ".join(f"CAST(NULL AS {_duckdb_type(c)}) AS {_identifier(c.name)}" for c in columns)
    return f"SELECT {items} WHERE false"


def _cast_items(columns: Sequence[Column]) -> str:
    """The fallback view's select list over the registered Arrow dataset.

    The casts are no-ops except for ``timetz``, which Arrow carries as a time.
    """
    return ", ".join(
        f"CAST({_identifier(c.name)} AS {_duckdb_type(c)}) AS {_identifier(c.name)}"
        for c in columns
    )


def _parquet_scan_reads(definition: TableDefinition, partition_by: Sequence[str]) -> bool:
    """Whether the Parquet scan reads this table exactly (else the Arrow fallback)."""
    for column in definition.columns:
        if column.name in partition_by:
            if column.type.kind in ("binary", "fixed"):
                return False  # raw bytes in the directory name: no text to URL-decode
        elif not 0 < column.id <= _MAX_FIELD_ID:
            return False  # no Parquet field ID in the files to match it by
    return True


def _check_labels(
    definition: TableDefinition, partition_by: Sequence[str], labels: Sequence[str], meta: Any
) -> None:
    """Decode each partition directory once, as the readers do, so a corrupt one fails here."""
    if not partition_by:
        return
    from trinity_dbapi.tables import managed
    from trinity_dbapi.tables.partitions import check_partition_by, partition_scalars

    schema = managed.schema(definition)
    check_partition_by(schema, partition_by, meta)
    seen: set[str] = set()
    for label in labels:
        directory = label.rpartition("/")[0]
        if directory not in seen:
            seen.add(directory)
            partition_scalars(label, schema, partition_by)


def _parquet_select(
    columns: Sequence[Column], partition_by: Sequence[str], files: list[str]
) -> str:
    """The view's SELECT: ``read_parquet`` over ``files``, partition columns from the paths."""
    from trinity_dbapi.tables import partition_sql

    file_column = partition_sql.file_column(c.name for c in columns)
    entries = ", ".join(
        f"{c.id}: {{name: {_literal(c.name)}, type: {_literal(_duckdb_type(c))}, "
        "default_value: NULL}"
        for c in columns
        if c.name not in partition_by
    )
    items = []
    for column in columns:
        if column.name in partition_by:
            value = partition_sql.partition_value(
                file_column, partition_by, column.name, _duckdb_type(column)
            )
            items.append(f"{value} AS {_identifier(column.name)}")
        else:
            items.append(_identifier(column.name))
    file_list = ", ".join(_literal(f) for f in files)
    return (
        f"SELECT {', '.join(items)} FROM read_parquet([{file_list}], schema = MAP {{{entries}}}, "
        f"{partition_sql.SCAN_OPTIONS}, filename = {_literal(file_column)})"
    )


def _check_unique(names: Mapping[str, object], what: str, where: str) -> None:
    """DuckDB names are case-insensitive: refuse two names that differ only in case."""
    seen: dict[str, str] = {}
    for name in names:
        other = seen.setdefault(name.casefold(), name)
        if other != name:
            raise ProgrammingError(
                f"the {what}s {other!r} and {name!r} of the {where} differ only in case, and "
                f"DuckDB names are case-insensitive: they cannot both be exposed; rename one "
                "in the lakehouse"
            )


def _in_transaction(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con`` is inside an explicit transaction (BEGIN without COMMIT yet).

    Without one, every statement runs in a transaction of its own, so two
    statements see two transaction IDs; inside one, they see the same.
    """
    first = _scalar(con, "SELECT txid_current()")
    return bool(first == _scalar(con, "SELECT txid_current()"))


def _is_open(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        con.execute("SELECT 1")
    except duckdb.ConnectionException:
        return False
    return True


def _scalar(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None = None) -> Any:
    # fetchall, not fetchone: DuckDB 2 keeps a half-read result open, which
    # blocks the connection's next register() or sql().
    return con.execute(sql, list(params) if params else None).fetchall()[0][0]


def _translate(exc: duckdb.Error) -> Error:
    """Our PEP 249 error for a DuckDB error met while creating views."""
    cls: type[Error] = OperationalError
    if isinstance(exc, (duckdb.CatalogException, duckdb.BinderException, duckdb.ParserException)):
        cls = ProgrammingError
    elif isinstance(exc, (duckdb.ConversionException, duckdb.InvalidInputException)):
        cls = DataError
    elif isinstance(exc, duckdb.NotImplementedException):
        cls = NotSupportedError
    return cls(f"exposing the lakehouse in DuckDB failed: {exc}")
