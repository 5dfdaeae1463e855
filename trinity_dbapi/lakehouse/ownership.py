"""Which files under the lakehouse root are this lakehouse's own.

A lakehouse root is a folder or prefix that other programs can write into
too: a Kartothek store imported in place, another lakehouse (one made by
``connect`` on a sub-folder, or an export target), files copied there by any
tool. Garbage collection may delete only files this lakehouse wrote, so it
asks this module first, for every file it lists:

* **catalog files**, recognised by name at their exact place: root node
  files, lakehouse definitions and the hint at the top of the root; node,
  object definition and claim files at their path-optimized place, whose
  murmur3 prefix must be the one :func:`~trinity_dbapi.format.paths.optimize_path`
  gives their name (a file of the same shape elsewhere is someone else's);
  a local writer's temporary files in those folders and in a branch's folder;
* **group files** of a table format (a managed table's dataset): a name the
  format writes (:class:`~trinity_dbapi.lakehouse.table_formats.FileRules`),
  in a group the lakehouse proves it owns: a retained version's table owns
  it, or its claim file (written before the group's first file) is there,
  or a table definition file of the lakehouse that no version reaches any
  more owned it (a group made before claim files existed);
* everything under **another lakehouse's root** inside this one (a folder
  holding a root node file, a lakehouse definition or a hint) is never this
  lakehouse's, whatever its names look like.

Anything else is foreign and never deleted. docs/transactions.md, "What
garbage collection deletes", states the rules for users.

Imports from lakehouse/: table_formats.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trinity_dbapi.format.definitions.branches import branch_folder_problem
from trinity_dbapi.format.definitions.transaction import is_transaction_file
from trinity_dbapi.format.paths import (
    CLAIM_SUFFIX,
    LATEST_HINT_FILE,
    claim_path,
    is_lakehouse_definition_path,
    optimize_path,
    root_node_version,
)
from trinity_dbapi.lakehouse.table_formats import FileRules

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage

#: Name prefix of a local writer's temporary files (``storage/local.py``).
_TEMP_PREFIX = ".tmp-"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_OPTIMIZED = re.compile(r"[01]{4}/[01]{4}/[01]{4}/[01]{8}-(?P<name>[^/]+)")
_NODE_NAME = re.compile(rf"node-{_UUID}\.arrow")
_OBJECT_NAME = re.compile(rf"(?P<type>[a-z][a-z0-9_]{{0,15}})-[A-Za-z0-9_.+%-]*-{_UUID}\.binpb")
_CLAIM_NAME = re.compile(rf"claim-[A-Za-z0-9_.+%-]+{re.escape(CLAIM_SUFFIX)}")
_OPTIMIZED_FOLDER = re.compile(r"[01]{4}(/[01]{4}){0,2}/")

#: Catalog kinds, in the order garbage collection deletes them (definitions
#: last among what proves a group, the root's own files never: they are live).
NODE = "node"
OBJECT = "object"
TABLE_DEFINITION = "table"
CLAIM = "claim"
LAKEHOUSE_DEFINITION = "lakehouse definition"
SAVED_TRANSACTION = "saved transaction"
TEMPORARY = "temporary"


def catalog_kind(path: str) -> str | None:
    """The kind of catalog file ``path`` is, by its name and place; None: not one.

    Root node files and the hint are not kinds here: garbage collection never
    deletes them (expiration deletes roots; a root that exists is retained).
    """
    if is_transaction_file(path):  # _transactions/<id>.binpb, .arrow, .loaded, .committed
        return SAVED_TRANSACTION
    if "/" not in path:
        if is_lakehouse_definition_path(path):
            return LAKEHOUSE_DEFINITION
        return TEMPORARY if path.startswith(_TEMP_PREFIX) else None
    folder, _, name = path.rpartition("/")
    if name.startswith(_TEMP_PREFIX):
        # Beside node files, or beside a branch's roots: a writer killed while
        # creating a branch's root leaves its temporary file there.
        if branch_folder_problem(folder + "/") is None:
            return TEMPORARY
        return TEMPORARY if _OPTIMIZED_FOLDER.fullmatch(folder + "/") else None
    match = _OPTIMIZED.fullmatch(path)
    if match is None or optimize_path(match["name"]) != path:
        return None
    name = match["name"]
    if _NODE_NAME.fullmatch(name):
        return NODE
    if _CLAIM_NAME.fullmatch(name):
        return CLAIM
    found = _OBJECT_NAME.fullmatch(name)
    if found is None:
        return None
    return TABLE_DEFINITION if found["type"] == "table" else OBJECT


def is_branch_file(path: str) -> bool:
    """Whether ``path`` is a branch's root node file or hint (``_branches/<uuid4>/...``)."""
    folder, _, name = path.rpartition("/")
    if not folder or branch_folder_problem(folder + "/") is not None:
        return False
    return root_node_version(name) is not None or name == LATEST_HINT_FILE


def nested_roots(paths: Iterable[str]) -> set[str]:
    """Folders (ending in ``/``) below the root that hold another lakehouse's root.

    A folder is another lakehouse's root when it directly holds a root node
    file, a lakehouse definition file or a latest-version hint, the files a
    lakehouse is found by.
    """
    found = set()
    for path in paths:
        folder, slash, name = path.rpartition("/")
        if not slash:
            continue
        if (
            root_node_version(name) is not None
            or is_lakehouse_definition_path(name)
            or name == LATEST_HINT_FILE
        ):
            found.add(folder + "/")
    return found


def under(path: str, folders: set[str]) -> bool:
    """Whether ``path`` lies in one of ``folders`` (each ending in ``/``), at any depth."""
    if not folders:
        return False
    end = path.find("/")
    while end != -1:
        if path[: end + 1] in folders:
            return True
        end = path.find("/", end + 1)
    return False


@dataclass
class GroupFile:
    """A listed file with one of a table format's own names."""

    path: str
    table_format: str
    group: str
    rank: int


def group_file(path: str, rules: dict[str, FileRules]) -> GroupFile | None:
    """``path`` as a file of a table format's group, or None: no format writes that name."""
    for name, rule in rules.items():
        found = rule.group_of(path)
        if found is not None:
            return GroupFile(path, name, found[0], found[1])
    return None


@dataclass
class Claims:
    """What the tables garbage collection looked at say about the root's files.

    Attributes:
        groups: ``(table format, group)`` pairs a table owns.
        files: single own files named by a table.
        protected_folders: folders of another program's store read in place.
        protected_files: files of another program's store read in place.
    """

    groups: set[tuple[str, str]] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    protected_folders: set[str] = field(default_factory=set)
    protected_files: set[str] = field(default_factory=set)

    def protects(self, path: str) -> bool:
        """Whether ``path`` belongs to another program's store a table reads in place."""
        return path in self.protected_files or under(path, self.protected_folders)


def write_claim(storage: Storage, table_format: str, group: str) -> str:
    """Write the claim file of a new group before any file of the group; return its path.

    The group is new (a fresh UUID), so nobody else creates this name; the
    content only names the group for a human reader, and is the same for a
    retried create whose reply was lost.
    """
    path = claim_path(table_format, group)
    storage.create_unique(path, claim_content(table_format, group))
    return path


def claim_content(table_format: str, group: str) -> bytes:
    """What a claim file holds: the table format and the group, for a human reader."""
    return f"{table_format} {group}\n".encode()


__all__ = [
    "CLAIM",
    "LAKEHOUSE_DEFINITION",
    "NODE",
    "OBJECT",
    "TABLE_DEFINITION",
    "TEMPORARY",
    "Claims",
    "GroupFile",
    "catalog_kind",
    "claim_content",
    "group_file",
    "nested_roots",
    "under",
    "write_claim",
]
