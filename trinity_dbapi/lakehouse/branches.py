"""Branches and tags: refs of the whole lakehouse, recorded in main's definition.

A branch is a chain of its own (its roots in ``_branches/<uuid4>/``, numbered
on from the version it was made from; :class:`~.chain.VersionChain`'s
``lineage``). A tag is a named snapshot export pinned in place: the
lakehouse definition's ``exported_snapshots`` maps its name to a root node
file, main's or a branch's. Both are recorded in main's lakehouse definition,
so creating or dropping one is a definition-only commit on main (copying no
data, writing one definition file and one root, whatever the lakehouse
holds), and one namespace holds every ref name: the check rides the commit,
rebased like any other (docs/format.md, "Branches").

Imports from lakehouse/: chain, commit_point, roots, transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from trinity_dbapi.errors import (
    CommitConflictError,
    InvalidNameError,
    NoSuchRefError,
    ObjectExistsError,
    ProgrammingError,
)
from trinity_dbapi.format import features
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import (
    BRANCH_FOLDER_PREFIX,
    MAIN,
    BranchRecord,
    LakehouseDefinition,
)
from trinity_dbapi.format.locations import is_uri
from trinity_dbapi.format.paths import latest_hint_file, root_node_file_name, root_node_version
from trinity_dbapi.lakehouse import roots
from trinity_dbapi.lakehouse.commit_point import now_millis
from trinity_dbapi.lakehouse.transaction import Transaction
from trinity_dbapi.tree import btree

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.chain import Snapshot, VersionChain

__all__ = [
    "Ref",
    "create_branch",
    "create_tag",
    "drop_branch",
    "drop_tag",
    "lineage_at",
    "list_refs",
    "registry",
    "resolve_ref",
]


@dataclass(frozen=True)
class Ref:
    """One ref as ``SHOW BRANCHES``, ``SHOW TAGS`` and ``system.refs`` list it.

    Attributes:
        name: the ref name (``main`` for the lakehouse's own chain).
        kind: ``"branch"`` or ``"tag"``.
        version: the version it names (a branch's head).
        root: the root node file of that version (a URI for an export
            written elsewhere).
        base_version: the version a branch was created from (None: main, a tag).
        created_at_millis: when a branch was created (None: main, a tag).
    """

    name: str
    kind: str
    version: int | None
    root: str
    base_version: int | None = None
    created_at_millis: int | None = None


def registry(main: VersionChain) -> LakehouseDefinition:
    """Main's latest definition: where branches and tags are recorded."""
    return main.snapshot().definition


def resolve_ref(definition: LakehouseDefinition, name: str) -> tuple[str, str | BranchRecord]:
    """What ref ``name`` is: ``("branch", record)``, ``("tag", root)`` or ``("main", "")``.

    Raises:
        NoSuchRefError: no branch or tag has that name.
    """
    if name == MAIN:
        return "main", ""
    record = definition.branches.get(name)
    if record is not None:
        return "branch", record
    root = definition.exported_snapshots.get(name)
    if root is not None:
        return "tag", root
    raise NoSuchRefError("branch or tag", name)


def lineage_at(
    definition: LakehouseDefinition, root: str, version: int
) -> tuple[tuple[int, str], ...]:
    """The lineage of the versions up to ``version``, whose root node file is ``root``.

    Main's roots have main's lineage; a branch's root has the lineage of a
    live branch whose history holds it.

    Raises:
        ProgrammingError: ``root`` is in no live branch's history (the branch
            it was made on was dropped).
    """
    folder = root.rpartition("/")[0] + "/" if "/" in root else ""
    if folder == "":
        return ((0, ""),)
    for record in definition.branches.values():
        tail = record.lineage_until(version)
        if tail and tail[0][1] == folder:
            return tail
    raise ProgrammingError(
        f"root {root!r} belongs to a branch that was dropped, so no branch can start from it; "
        "create the branch from a live branch, a tag on main or a version of main"
    )


def create_branch(
    main: VersionChain, name: str, source: Snapshot, *, if_not_exists: bool = False
) -> bool:
    """Create branch ``name`` at ``source`` (a version of any chain), with one commit on main.

    Copies no data: the branch's first own commit goes to a new folder, and
    everything below its roots is shared.

    Returns:
        Whether the branch was created (False: it existed and
        ``if_not_exists``).

    Raises:
        ObjectExistsError: a branch or tag has that name.
        InvalidNameError: the name breaks the rule for new names.
    """
    require_main(main, "CREATE BRANCH")
    if if_not_exists and (name == MAIN or name in registry(main).branches):
        return False  # nothing to do, so no version (the commit checks again, for a race)
    folder = f"{BRANCH_FOLDER_PREFIX}{uuid.uuid4()}/"
    created = True

    def add(definition: LakehouseDefinition) -> LakehouseDefinition:
        nonlocal created
        _check_new_ref(definition, name)
        if name in definition.branches:
            if if_not_exists:
                created = False
                return definition
            raise ObjectExistsError("branch", name)
        root = source.root.path or source.lakehouse.root_name(source.version)
        record = BranchRecord(
            folder=folder,
            base_version=source.version,
            base_root=root,
            lineage=((source.version + 1, folder), *lineage_at(definition, root, source.version)),
            created_at_millis=now_millis(),
        )
        return _requiring_branches(
            definition.replace(branches={**definition.branches, name: record})
        )

    txn = _begin(main, source)
    txn.change_definition(add)
    txn.commit()
    return created


def drop_branch(main: VersionChain, name: str, *, if_exists: bool = False) -> bool:
    """Drop branch ``name`` with one commit on main; its files go at the next collection.

    Returns:
        Whether it was dropped (False: it did not exist and ``if_exists``).

    Raises:
        ProgrammingError: ``name`` is main.
        NoSuchRefError: no branch has that name.
    """
    require_main(main, "DROP BRANCH")
    if name == MAIN:
        raise ProgrammingError(
            "DROP BRANCH main is refused: main is the lakehouse's own chain, which every "
            "reader follows; drop the other branches you no longer need instead"
        )
    if name in registry(main).branches:
        _seal(main.on_branch(name))
    return _drop(main, "branch", "branches", name, if_exists=if_exists)


def create_tag(
    main: VersionChain, name: str, source: Snapshot, *, if_not_exists: bool = False
) -> bool:
    """Tag ``source``'s root as ``name``: a named snapshot export pinned in place.

    Returns:
        Whether the tag was created (False: it existed and ``if_not_exists``).

    Raises:
        ObjectExistsError: a branch or tag has that name.
    """
    require_main(main, "CREATE TAG")
    if if_not_exists and name in registry(main).exported_snapshots:
        return False  # nothing to do, so no version (the commit checks again, for a race)
    created = True

    def add(definition: LakehouseDefinition) -> LakehouseDefinition:
        nonlocal created
        if name in definition.exported_snapshots and if_not_exists:
            created = False
            return definition
        _check_new_ref(definition, name)
        if name in definition.branches:  # one namespace: a tag may not take a branch's name
            raise ObjectExistsError("branch", name)
        root = source.root.path or source.lakehouse.root_name(source.version)
        tagged = definition.replace(
            exported_snapshots={**definition.exported_snapshots, name: root}
        )
        # A tag on a branch's root keeps that branch's folder alive.
        return _requiring_branches(tagged) if root.startswith(BRANCH_FOLDER_PREFIX) else tagged

    txn = _begin(main, source)
    txn.change_definition(add)
    txn.commit()
    return created


def drop_tag(main: VersionChain, name: str, *, if_exists: bool = False) -> bool:
    """Drop tag (snapshot export) ``name``; what only it kept goes at the next collection.

    Returns:
        Whether it was dropped (False: it did not exist and ``if_exists``).

    Raises:
        NoSuchRefError: no tag has that name.
    """
    require_main(main, "DROP TAG")
    return _drop(main, "tag", "exported_snapshots", name, if_exists=if_exists)


def _drop(main: VersionChain, kind: str, field: str, name: str, *, if_exists: bool) -> bool:
    """Remove ``name`` from the definition's ``field`` map with one commit on main.

    Returns:
        Whether it was removed (False: absent and ``if_exists``; no version then).

    Raises:
        NoSuchRefError: absent and not ``if_exists``.
    """
    if if_exists and name not in getattr(registry(main), field):
        return False  # nothing to do, so no version (the commit checks again, for a race)
    dropped = True

    def remove(definition: LakehouseDefinition) -> LakehouseDefinition:
        nonlocal dropped
        refs = getattr(definition, field)
        if name not in refs:
            if if_exists:
                dropped = False
                return definition
            raise NoSuchRefError(kind, name)
        kept = {k: v for k, v in refs.items() if k != name}
        if field == "branches":
            # The other branches forget their last merge with this one: a
            # branch created later under the same name has another history,
            # so that root must not be its merge base (the merge would undo
            # what the old branch brought) nor be kept alive for it.
            kept = {
                k: v.replace(merged_roots={o: r for o, r in v.merged_roots.items() if o != name})
                if name in v.merged_roots
                else v
                for k, v in kept.items()
            }
        return definition.replace(**{field: kept})

    txn = _begin(main)
    txn.change_definition(remove)
    txn.commit()
    return dropped


def branch_head(main: VersionChain, record: BranchRecord) -> int:
    """A branch's head version: its latest own root, or its base (one probe, as for main)."""

    hint = latest_hint_file(record.folder)
    return roots.find_branch_latest(
        main.storage, partial(_root_of, record), hint, record.base_version
    )


def list_refs(chain: VersionChain, at: Snapshot | None = None) -> list[Ref]:
    """Every ref: main, then the branches, then the tags, each by name.

    Args:
        chain: a chain of the lakehouse (main or a branch).
        at: a version of main whose definition records the refs (and whose
            number is main's); None: main's latest.

    Each branch's head is probed (its hint, then the root after it): a
    round of requests per branch.
    """
    main = chain.main_chain
    at = at if at is not None else main.snapshot()
    definition, latest = at.definition, at.version
    heads = {name: branch_head(main, record) for name, record in definition.branches.items()}
    refs = [Ref(MAIN, "branch", latest, main.root_name(latest))]
    for name in sorted(definition.branches):
        record = definition.branches[name]
        head = heads.get(name, record.base_version)
        refs.append(
            Ref(
                name,
                "branch",
                head,
                _root_of(record, head),
                record.base_version,
                record.created_at_millis,
            )
        )
    for name in sorted(definition.exported_snapshots):
        root = definition.exported_snapshots[name]
        refs.append(Ref(name, "tag", _version_of(root), root))
    return refs


def _seal(branch: VersionChain) -> None:
    """Commit the branch's last version: its head's tree, marked dropped.

    A writer racing the drop then loses the race for that version and, on
    its rebase, meets the mark (:class:`~trinity_dbapi.errors.BranchDroppedError`):
    no commit lands where nothing reaches it. The copy's messages belong to
    an older transaction, so the sealed version changes no key for anyone
    rebasing over it. Sealed already (a drop that did not finish): nothing to do.
    """
    while True:
        head = branch.snapshot()
        if head.root.system.get(system_keys.BRANCH_DROPPED):
            return
        # As a rollback's copy: its messages now belong to an older
        # transaction, settled like any root's.
        writer = btree.TreeWriter(branch.nodes, branch.tree_config)
        try:
            branch.write_root(
                head,
                writer.settle(head.root.copy(), keep=None),
                txn=str(uuid.uuid4()),
                extra_system={system_keys.BRANCH_DROPPED: "true"},
            )
            return
        except CommitConflictError:
            continue  # a commit won that version: seal the one after it


def require_main(chain: VersionChain, what: str) -> None:
    """Refuse ``what`` unless ``chain`` is main (refs are main's definition's)."""
    if chain.branch is not None:
        raise ProgrammingError(f"internal: {what} must commit on main, not on {chain.branch!r}")


def _begin(main: VersionChain, source: Snapshot | None = None) -> Transaction:
    """A transaction on main: on ``source`` when that is main's latest as far as known.

    A ref's commit changes the definition alone, rebased like any other, so
    starting on the version just read saves looking up the latest again.
    """
    if source is not None and source.lakehouse is main and source.version == main.latest_known:
        return Transaction(main, source)
    return Transaction(main, main.snapshot())


def _check_new_ref(definition: LakehouseDefinition, name: str) -> None:
    # A ref name obeys the object-name rules, its length too: the
    # definition's bound on a table name (every ref is read on every open).
    limit = definition.table_name_max_size_bytes
    if len(name.encode("utf-8", "surrogatepass")) > limit:
        raise InvalidNameError(
            name[:64] + "...",
            f"branch or tag name {name[:40]!r}... is too long: a ref name is at most {limit} "
            "bytes of UTF-8 (the lakehouse's "
            f"table_name_max_size_bytes), this one has {len(name.encode('utf-8', 'surrogatepass'))}; "
            "choose a shorter name",
        )
    if name == MAIN or name.lower() == MAIN:
        raise ObjectExistsError("branch", name)
    if name in definition.branches:
        return  # the caller decides (IF NOT EXISTS)
    if name in definition.exported_snapshots:
        raise ObjectExistsError("tag (snapshot export)", name)


def _requiring_branches(definition: LakehouseDefinition) -> LakehouseDefinition:
    if features.BRANCHES in definition.required_writer_features:
        return definition
    required = {
        **definition.required_writer_features,
        features.BRANCHES: features.FIRST_RELEASE[features.BRANCHES],
    }
    return definition.replace(required_writer_features=required)


def _root_of(record: BranchRecord, version: int) -> str:
    return root_node_file_name(version, record.folder_of(version))


def _version_of(root: str) -> int | None:
    if is_uri(root):
        return None
    return root_node_version(root.rpartition("/")[2])
