"""Table formats garbage collection can follow to their data files.

A table definition names its table format; a table of a format that keeps
data files (a managed Kartothek dataset) reaches files that garbage
collection must keep. Those formats live in higher layers, so they register
here (:func:`register_table_format`) and this layer never names them.

A process that never imported the format's module (one that opens a
:class:`Lakehouse` only to collect garbage) finds it through the
``trinity_dbapi.table_formats`` entry-point group instead: each entry maps a
format name to its ``referenced_files`` function. A format found in neither
place stops garbage collection, which would otherwise delete live data.

A format may also *publish* derived files from the newest version of a table
for other readers (a managed table's Kartothek main metadata file):
:func:`register_derived_files`. Those files are never a source of truth:
:mod:`trinity_dbapi.lakehouse.derived` rewrites them after each commit, and
garbage collection keeps them for the tables of the newest version only.

A format that keeps data files may also *describe* them, one row per live
file, for the ``system.data_files`` catalog table: :func:`register_data_files`.

And a format that writes files under the lakehouse root tells garbage
collection which of the files it finds there are its own
(:func:`register_file_rules`): garbage collection deletes only files whose
names the lakehouse writes, in groups (a format's datasets) this lakehouse
proves it owns; see :mod:`trinity_dbapi.lakehouse.ownership`.

Finally a format may merge a table both sides of a branch merge changed,
three-way and knowing its data files (:func:`register_table_merge`): the
lakehouse-level merge decides which objects changed on which side, and asks
the table's format for the merged definition, or why there is none.

Imports from lakehouse/: nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from trinity_dbapi.errors import NotSupportedError
from trinity_dbapi.format.locations import is_uri, split_uri

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import TableDefinition
    from trinity_dbapi.storage import Storage

#: ``referenced_files(storage, table)``: paths (relative to the lakehouse
#: root) of every file this version of ``table`` uses beyond its definition.
ReferencedFiles = Callable[["Storage", "TableDefinition"], Iterable[str]]

#: Entry-point group where installed packages declare their table formats.
ENTRY_POINT_GROUP = "trinity_dbapi.table_formats"

#: Table formats known to reference no other files (external tables).
FORMATS_WITHOUT_FILES = frozenset({"parquet", "csv", "json", "iceberg", "delta"})

#: ``publish(storage, table, previous)``: (re)write the files derived from this version
#: of ``table``; returns their paths (relative to the lakehouse root).
Publish = Callable[["Storage", "TableDefinition", "TableDefinition | None"], list[str]]

#: ``describe(storage, table)``: one row per live data file of this version of
#: ``table`` (the columns of ``system.data_files`` after its two name columns).
DescribeFiles = Callable[["Storage", "TableDefinition"], Iterable[dict[str, Any]]]


class StoresFiles(Protocol):
    """What a table merge needs of the lakehouse: its storage."""

    @property
    def storage(self) -> Storage:
        """The lakehouse storage (paths relative to its root)."""
        ...


class MergeTransaction(Protocol):
    """What a table merge needs of the merge transaction (a :class:`~trinity_dbapi.lakehouse.transaction.Transaction`).

    Files the merge writes (a merged dataset metadata file, index files)
    are staged, so nothing is written unless the merge commits.
    """

    @property
    def lakehouse(self) -> StoresFiles:
        """The lakehouse the transaction commits to."""
        ...

    def read_file(self, path: str) -> bytes:
        """A file staged by the transaction, or else from storage."""
        ...

    def stage_file(self, path: str, data: bytes) -> None:
        """Stage an immutable file, written at commit."""
        ...


@dataclass(frozen=True)
class MergedTable:
    """The outcome of merging one table three-way.

    Attributes:
        definition: the merged definition (its new files staged in the
            transaction); None when there are conflicts.
        conflicts: each conflict, naming the file or column and why
            (``"file 'x.parquet' was rewritten or deleted on both sides"``),
            in a deterministic order; empty when the merge succeeded.
    """

    definition: TableDefinition | None
    conflicts: tuple[str, ...] = ()


#: ``merge(txn, base, source, target)``: one table both sides changed since
#: ``base``, merged three-way: ``source`` merged into ``target``, in ``txn``.
MergeTables = Callable[
    [MergeTransaction, "TableDefinition", "TableDefinition", "TableDefinition"], MergedTable
]


@dataclass(frozen=True)
class Ownership:
    """What one version of a table says about the files under the lakehouse root.

    Attributes:
        groups: the format's groups (a managed table's dataset) that the
            lakehouse owns through this table: every file of the format's own
            naming in such a group is the lakehouse's to delete once nothing
            reaches it.
        files: single files of the lakehouse's own naming that the table
            uses outside any group it owns (a referenced dataset's frozen
            metadata file).
        protected: paths relative to the lakehouse root that the table reads
            in place from another program's store inside the root (a folder
            ends with ``/``): never deleted while the table is reached.
    """

    groups: frozenset[str] = frozenset()
    files: frozenset[str] = frozenset()
    protected: frozenset[str] = frozenset()


#: ``group_of(path)``: for a path (relative to the lakehouse root) that has one of
#: the format's own names, ``(group, rank)``; None for any other path. Within a
#: group, files of a lower rank are deleted first, so the files that prove the
#: group is the lakehouse's (its metadata) go last.
GroupOf = Callable[[str], "tuple[str, int] | None"]

#: ``ownership(table, root_uri)``: what a version of a table says, without I/O.
OwnershipOf = Callable[["TableDefinition", str], Ownership]


#: ``read_from(table, root_uri)``: a table definition read from another
#: lakehouse's root (a minimal or partial export reads its source's), made to
#: reach its files there.
ReadFrom = Callable[["TableDefinition", str], "TableDefinition"]


@dataclass(frozen=True)
class FileRules:
    """How garbage collection tells a table format's own files from others'.

    ``read_from`` (optional) makes a table whose definition another
    lakehouse holds reach its files in that lakehouse (:func:`located`).
    """

    group_of: GroupOf
    ownership: OwnershipOf
    read_from: ReadFrom | None = None


_registry: dict[str, ReferencedFiles] = {}
_file_rules: dict[str, FileRules] = {}

D = TypeVar("D")
_data_files: dict[str, DescribeFiles] = {}
_derived: dict[str, tuple[Publish, ReferencedFiles]] = {}
_merges: dict[str, MergeTables] = {}
_lock = threading.Lock()


def entry_points(**selection: Any) -> Any:
    """``importlib.metadata.entry_points``, imported on first use.

    importlib.metadata takes ~20 ms to import and only a process that must
    find a format it never imported needs it.
    """
    from importlib import metadata

    return metadata.entry_points(**selection)


def register_table_format(name: str, referenced_files: ReferencedFiles) -> None:
    """Tell garbage collection which files a table of format ``name`` uses.

    Registering a name again replaces its function (a module reloaded).

    Args:
        name: the table format, as table definitions name it.
        referenced_files: returns the paths of the files a table of that
            format uses, relative to the lakehouse root.
    """
    with _lock:
        _registry[name] = referenced_files


def register_derived_files(name: str, publish: Publish, derived_files: ReferencedFiles) -> None:
    """Declare the derived files of table format ``name``.

    Args:
        name: the table format, as table definitions name it.
        publish: writes the derived files of a table's version, given its
            definition in the version before (None: unknown, write them
            all); returns the paths written.
        derived_files: the paths :func:`publish` writes for a table, without
            writing them (what garbage collection keeps for the newest version).
    """
    with _lock:
        _derived[name] = (publish, derived_files)


def register_data_files(name: str, describe: DescribeFiles) -> None:
    """Declare how ``system.data_files`` lists the data files of table format ``name``.

    Args:
        name: the table format, as table definitions name it.
        describe: returns one row (a dict keyed by column name) per live data
            file of a version of a table.
    """
    with _lock:
        _data_files[name] = describe


def register_file_rules(name: str, rules: FileRules) -> None:
    """Tell garbage collection which files under the root table format ``name`` writes.

    Args:
        name: the table format, as table definitions name it.
        rules: how its own file names and its tables' ownership read.
    """
    with _lock:
        _file_rules[name] = rules


def register_table_merge(table_format: str, merge: MergeTables) -> None:
    """Declare how a table of format ``table_format`` that both merge sides changed is merged.

    Args:
        table_format: the table format, as table definitions name it.
        merge: merges ``source`` into ``target`` from their merge base,
            staging any file it writes in the transaction.
    """
    with _lock:
        _merges[table_format] = merge


def table_merge_of(table_format: str) -> MergeTables | None:
    """The three-way merge of ``table_format``, or None: the format merges no data."""
    if table_format not in _merges and table_format not in FORMATS_WITHOUT_FILES:
        try:
            referenced_files_of(table_format)  # loads an entry point's module
        except NotSupportedError:
            return None
    return _merges.get(table_format)


def file_rules() -> dict[str, FileRules]:
    """The file rules of every table format installed, by format name.

    Loads every ``trinity_dbapi.table_formats`` entry point first, so a
    process that never imported a format still knows its files (a dropped
    table's dataset is no table's any more, yet it is the format's).
    """
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name not in _registry:
            referenced_files_of(entry.name)
    with _lock:
        return dict(_file_rules)


def located(definition: D, path: str, root_uri: str) -> D:
    """``definition``, read from ``path``, as a lakehouse rooted at ``root_uri`` reads it.

    Pointers inside a file are relative to the lakehouse root that holds the
    file. A table definition that lives in another lakehouse (the source of a
    minimal or partial export) keeps its files there, so its format's
    ``read_from`` rule points it at that root; every other definition is
    returned as it is.
    """
    if not (is_uri(path) and type(definition).__name__ == "TableDefinition"):
        return definition
    if path.startswith(root_uri):
        return definition
    table = cast("TableDefinition", definition)
    rules = file_rules().get(table.table_format)
    if rules is None or rules.read_from is None:
        return definition
    return cast("D", rules.read_from(table, split_uri(path)[0]))


def data_files_of(table_format: str) -> DescribeFiles | None:
    """The function describing a table's data files, or None: the format lists none."""
    if table_format not in _data_files and table_format not in FORMATS_WITHOUT_FILES:
        try:
            referenced_files_of(table_format)  # loads an entry point's module
        except NotSupportedError:
            return None
    return _data_files.get(table_format)


def derived_files_of(table_format: str) -> tuple[Publish, ReferencedFiles] | None:
    """``(publish, derived_files)`` of ``table_format``, or None: it derives no files."""
    if table_format not in _derived and table_format not in FORMATS_WITHOUT_FILES:
        try:
            referenced_files_of(table_format)  # loads an entry point's module
        except NotSupportedError:
            return None
    return _derived.get(table_format)


def referenced_files_of(table_format: str) -> ReferencedFiles | None:
    """The function listing a table's files for ``table_format`` (None: it has none).

    Looks in the registry, then in the ``trinity_dbapi.table_formats``
    entry points (loading one registers its module, as importing it would).

    Raises:
        NotSupportedError: an unknown table format, whose files garbage
            collection could otherwise delete.
    """
    found = _registry.get(table_format)
    if found is not None:
        return found
    if table_format in FORMATS_WITHOUT_FILES:
        return None
    for entry in entry_points(group=ENTRY_POINT_GROUP, name=table_format):
        loaded: ReferencedFiles = entry.load()
        with _lock:
            return _registry.setdefault(table_format, loaded)
    raise NotSupportedError(
        f"garbage collection does not know the table format {table_format!r}, so it cannot "
        "tell which files such a table uses; register it first with "
        "trinity_dbapi.lakehouse.table_formats.register_table_format(name, referenced_files) "
        f"or declare it in the {ENTRY_POINT_GROUP!r} entry-point group"
    )


__all__ = [
    "ENTRY_POINT_GROUP",
    "FORMATS_WITHOUT_FILES",
    "DescribeFiles",
    "FileRules",
    "GroupOf",
    "MergeTables",
    "MergeTransaction",
    "MergedTable",
    "Ownership",
    "OwnershipOf",
    "Publish",
    "ReadFrom",
    "ReferencedFiles",
    "StoresFiles",
    "data_files_of",
    "derived_files_of",
    "file_rules",
    "located",
    "referenced_files_of",
    "register_data_files",
    "register_derived_files",
    "register_file_rules",
    "register_table_format",
    "register_table_merge",
    "table_merge_of",
]
