"""``CALL system.import_kartothek(...)``: a managed table from a Kartothek dataset.

The table is created, filled and indexed in one transaction that the
procedure commits (docs/datasets.md, "Importing a Kartothek dataset"). The
data work is :mod:`trinity_dbapi.tables.kartothek_import`; this module names
the table, opens the store, turns the store's problems into errors that say
which dataset is wrong and how, and commits.

A problem of the *source* (a missing or corrupt file of the other program's
store) is bad input here, not damage to the lakehouse: it is raised as
:class:`~trinity_dbapi.errors.DataError` (or ``NoSuchObjectError`` when there
is no such dataset), never as ``CorruptFileError`` (an ``InternalError``).
Nothing is committed on any error; files already copied are left for
garbage collection, like those of any transaction that did not commit.

Imports from sql/engine/: ddl, session.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator

import pyarrow as pa

from trinity_dbapi.errors import (
    CorruptFileError,
    DataError,
    NoSuchObjectError,
    NotSupportedError,
    ObjectExistsError,
    ProgrammingError,
    StorageFileNotFoundError,
)
from trinity_dbapi.format.definitions import TableDefinition
from trinity_dbapi.sql.engine.ddl import create_table_definition
from trinity_dbapi.sql.engine.session import Session
from trinity_dbapi.tables import managed
from trinity_dbapi.tables.kartothek_import import KartothekSource

#: The import modes: copy the files under the lakehouse root, or register them in place.
MODES = ("copy", "reference")


def import_kartothek(
    session: Session,
    namespace: str,
    name: str,
    location: str,
    dataset_uuid: str,
    kartothek_table: str,
    mode: str,
) -> pa.Table:
    """Create the table ``namespace.name`` from a Kartothek dataset and commit; one result row."""
    from trinity_dbapi.storage import open_storage
    from trinity_dbapi.tables.kartothek_import import inspect_dataset

    where = "system.import_kartothek"
    if mode not in MODES:
        raise ProgrammingError(f"{where}: mode must be 'copy' or 'reference', not {mode!r}")
    if kartothek_table != "table":
        raise NotSupportedError(
            f"{where}: Kartothek table {kartothek_table!r} of dataset {dataset_uuid!r} cannot "
            "be imported: a lakehouse table holds one Kartothek table, named 'table' "
            "(docs/datasets.md, rule 4); write kartothek_table => 'table'"
        )
    session.check_writable_namespace(namespace)
    txn = session.writable()
    if txn.table_exists(namespace, name):  # before copying files nobody would use
        raise ObjectExistsError("table", f"{namespace}.{name}")
    if mode == "reference" and "@" in location.partition("://")[2].partition("/")[0]:
        # The URI is stored in the table definition, which every reader of
        # the catalog sees: it must not carry a user name or password.
        raise ProgrammingError(
            f"{where}: a location with credentials in it cannot be referenced by table "
            f"{namespace}.{name}: the definition would show them to every reader; pass "
            "credentials through the connection's storage_options or the environment, or "
            "use mode => 'copy'"
        )
    lakehouse = session.lakehouse
    scheme = location.split("://", 1)[0] if "://" in location else "file"
    same_scheme = lakehouse.storage.root_uri.split("://", 1)[0] == scheme
    # The lakehouse's credentials reach a store of the same kind (another bucket).
    options = lakehouse.storage_options if same_scheme else None
    source_storage = open_storage(location, storage_options=options)
    # CALL is not a statement of the session's transaction: the procedure
    # stages into it (empty: checked by the caller) and commits it itself,
    # or rolls it back on any error, so nothing of a failed import stays
    # staged for a later statement to commit.
    try:
        with _source_errors(dataset_uuid, finding=True):
            source = inspect_dataset(source_storage, dataset_uuid)
        task = session.task(
            f"import Kartothek dataset {dataset_uuid} into {namespace}.{name}",
            "files",
            source.files,
        )
        task.start()
        run = _copy if mode == "copy" else _reference
        files, rows = run(session, namespace, name, source, task.update)
        task.finish(source.files)
        snapshot = session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        source_storage.close()  # the table's readers open the store on their own
    return pa.table(
        {
            "table_name": [f"{namespace}.{name}"],
            "dataset_uuid": [dataset_uuid],
            "mode": [mode],
            "files": pa.array([files], pa.int64()),
            "rows": pa.array([rows], pa.int64()),
            "indexed_columns": pa.array([source.index_columns], pa.list_(pa.string())),
            "version": pa.array([None if snapshot is None else snapshot.version], pa.int64()),
        }
    )


def _index_properties(source: KartothekSource) -> dict[str, str]:
    # Kartothek's indices have no names: each is named after its column.
    return {managed.INDEX_PREFIX + column: column for column in source.index_columns}


def _copy(
    session: Session,
    namespace: str,
    name: str,
    source: KartothekSource,
    each_file: Callable[[int], None],
) -> tuple[int, int | None]:
    """Stage a new table holding copies of every file; return files and rows written."""
    from trinity_dbapi.tables import file_facts
    from trinity_dbapi.tables.kartothek_import import build_indices, copy_rows

    txn = session.writable()
    definition = TableDefinition(name, source.columns, table_format=managed.TABLE_FORMAT)
    create_table_definition(session, namespace, definition, tuple(source.partition_by), None, {})
    storage = session.lakehouse.storage
    created = txn.load_table(namespace, name)
    meta, schema = managed.metadata(storage, created), managed.schema(created)
    with _source_errors(source.meta.dataset_uuid, finding=False):
        added, rows = copy_rows(source, storage, meta, schema, each_file=each_file)
    copied = file_facts.with_recorded(
        meta.with_partitions(added, ()), file_facts.for_added(storage, added)
    )
    meta = build_indices(source, storage, copied, schema)
    properties = {**created.format_properties, **_index_properties(source)}
    created = managed.with_metadata(storage, created.replace(format_properties=properties), meta)
    txn.replace_table(namespace, created)
    return len(added), rows


def _reference(
    session: Session,
    namespace: str,
    name: str,
    source: KartothekSource,
    each_file: Callable[[int], None],
) -> tuple[int, int | None]:
    """Stage a table over the dataset's files where they are; return files and None rows.

    The store's metadata is frozen into a metadata file under the lakehouse
    root (a later change of the store's main file does not change the
    table); every file it names must be in the store now, checked by one
    listing of the dataset's folder, and hold the dataset's columns, checked
    by each data file's Parquet footer (not its rows), read in parallel.
    """
    from trinity_dbapi.tables.kartothek_import import check_footers
    from trinity_dbapi.tables.metadata_io import write_metadata

    uuid = source.meta.dataset_uuid
    uri = source.storage.root_uri
    with _source_errors(uuid, finding=False):
        present = set(source.storage.list(f"{uuid}/"))
    needed = [*source.meta.files().values(), *source.meta.indices.values()]
    # A clone's dataset lists files under the dataset it was cloned from, which
    # this table would read in place but garbage collection protects only by folder.
    shared = [path for path in needed if not path.startswith(f"{uuid}/")]
    if shared:
        raise DataError(
            f"Kartothek dataset {uuid!r} cannot be referenced: its metadata lists files under "
            f"another dataset's folder (such as {shared[0]!r}; a clone's dataset does), which "
            "a referenced table cannot keep; import it with mode => 'copy'"
        )
    missing = [path for path in needed if path not in present]
    if missing:
        raise DataError(
            f"Kartothek dataset {uuid!r} cannot be referenced: {len(missing)} of the files its "
            f"metadata names are not in the store (such as {missing[0]!r}); repair the dataset "
            "with Kartothek (or plateau), or restore the files, and import it again"
        )
    with _source_errors(uuid, finding=False):
        mixed = check_footers(source, each_file=each_file)
    frozen = dataclasses.replace(source.meta, sequence=0)
    location = write_metadata(session.lakehouse.storage, frozen)
    dataset = {
        managed.DATASET_UUID: uuid,
        managed.METADATA_LOCATION: location,
        managed.EXTERNAL_LOCATION: uri,
        **_index_properties(source),
    }
    if mixed:
        # A lakehouse's dataset after ADD or DROP COLUMN: matched by name, a
        # column dropped and added again would read its old values.
        dataset[managed.MIXED_FILE_SCHEMAS] = "true"
    definition = TableDefinition(name, source.columns, table_format=managed.TABLE_FORMAT)
    create_table_definition(
        session, namespace, definition, tuple(source.partition_by), None, {}, dataset=dataset
    )
    return len(source.meta.files()), None


@contextlib.contextmanager
def _source_errors(dataset_uuid: str, *, finding: bool) -> Iterator[None]:
    """Re-raise the source store's problems as errors about the dataset.

    Args:
        dataset_uuid: the dataset, for messages.
        finding: whether a missing file means there is no such dataset (its
            main metadata file), rather than a dataset missing one of its files.
    """
    try:
        yield
    except StorageFileNotFoundError as exc:
        if finding:
            raise NoSuchObjectError(
                "Kartothek dataset",
                dataset_uuid,
                f"{exc}; check location => (the store holding "
                f"'{dataset_uuid}.by-dataset-metadata.json') and dataset_uuid =>",
            ) from None
        raise DataError(
            f"Kartothek dataset {dataset_uuid!r} cannot be imported: {exc}; repair the "
            "dataset with Kartothek (or plateau) and import it again"
        ) from None
    except CorruptFileError as exc:
        # Not the lakehouse's file: CorruptFileError's advice (restore an
        # export, roll back) would be wrong here.
        raise DataError(
            f"Kartothek dataset {dataset_uuid!r} cannot be imported: its file {exc.path!r} "
            f"breaks the Kartothek layout: {exc.problem}; repair the dataset with Kartothek "
            "(or plateau), or restore the file, and import it again"
        ) from None
