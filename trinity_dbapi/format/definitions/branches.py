"""Branches as the lakehouse definition records them (a project extension).

A branch is its own chain of root node files in a folder of its own
(``_branches/<uuid4>/``), numbered on from the version it was created from:
a branch created from main's version 12 has main's versions 0..12 as its own
history and commits 13, 14, ... into its folder. Everything below a root
(node files, object definitions, data files) is shared copy-on-write with the
chain it came from. :class:`BranchRecord` is one entry of the lakehouse
definition's ``branches`` map; ``lineage`` says, for every version of the
branch, in which folder its root node file lives (docs/format.md,
"Branches").

Imports from format/definitions/: _common.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from trinity_dbapi.format.definitions._common import EMPTY, check_int, field_error, string_map
from trinity_dbapi.format.proto import trinity_pb2 as pb

__all__ = [
    "BRANCH_FOLDER_PREFIX",
    "MAIN",
    "BranchRecord",
    "branch_folder_problem",
    "branch_root_files",
    "lineage_of",
    "main_versions_needed",
]

#: The folder every branch's own root node files live under.
BRANCH_FOLDER_PREFIX = "_branches/"
#: The name of the lakehouse's own root chain; never a key of ``branches``.
MAIN = "main"

_FOLDER_RE = re.compile(
    re.escape(BRANCH_FOLDER_PREFIX)
    + r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/"
)
_ROOT_RE = re.compile(r"_[01]{32}\.arrow")
_MAX_VERSION = 2**32 - 1


def branch_folder_problem(folder: str) -> str | None:
    """Why ``folder`` is not a chain's folder ("" for main, or ``_branches/<uuid4>/``)."""
    if folder == "" or _FOLDER_RE.fullmatch(folder):
        return None
    return f"{folder!r} is not '' (main) or '{BRANCH_FOLDER_PREFIX}<uuid4>/'"


def _root_problem(path: str) -> str | None:
    folder, _, name = path.rpartition("/")
    folder = folder + "/" if folder else ""
    if branch_folder_problem(folder) is not None or not _ROOT_RE.fullmatch(name):
        return f"{path!r} is not a root node file of main or of a branch folder"
    return None


@dataclass(frozen=True)
class BranchRecord:
    """One branch: where its roots live and where its history comes from.

    Attributes:
        folder: its own roots' folder, ``_branches/<uuid4>/``.
        base_version: the version it was created from; its own roots start
            at ``base_version + 1``.
        base_root: the root node file of ``base_version`` (of whichever chain).
        lineage: ``(first_version, folder)`` pairs, newest first: versions
            from ``first_version`` up to the previous pair's start live in
            ``folder``. The first is ``(base_version + 1, folder)``, the last
            ``(0, "")`` (main).
        created_at_millis: when it was created.
        merged_roots: target ref name -> this branch's root last merged into
            it (the next merge's base on this side).
    """

    folder: str
    base_version: int
    base_root: str
    lineage: tuple[tuple[int, str], ...]
    created_at_millis: int = 0
    merged_roots: Mapping[str, str] = field(default=EMPTY)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lineage", tuple((int(v), str(f)) for v, f in self.lineage))
        object.__setattr__(self, "merged_roots", string_map("merged_roots", self.merged_roots))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidDefinitionError: naming the first invalid field.
        """
        if not _FOLDER_RE.fullmatch(self.folder):
            raise field_error(
                "branches",
                f"branches: folder {self.folder!r} is not '{BRANCH_FOLDER_PREFIX}<uuid4>/'",
            )
        check_int("branches", self.base_version, 0, _MAX_VERSION - 1, label="base_version")
        check_int("branches", self.created_at_millis, 0, 2**63 - 1, label="created_at_millis")
        problem = _root_problem(self.base_root)
        lineage = self.lineage
        if problem is None and (not lineage or lineage[0] != (self.base_version + 1, self.folder)):
            problem = "its lineage must start with (base_version + 1, folder)"
        if problem is None and lineage[-1] != (0, ""):
            problem = "its lineage must end with main's (0, '')"
        for (newer, folder), (older, _) in pairwise(lineage):
            if problem is None and newer <= older:
                problem = "its lineage's first versions must decrease"
            if problem is None:
                problem = branch_folder_problem(folder)
        if problem is None and not self.base_root.startswith(self.folder_of(self.base_version)):
            problem = f"base_root {self.base_root!r} is not in the folder of its base version"
        for target, root in self.merged_roots.items():
            problem = problem or _root_problem(root)
            if not target:
                problem = problem or "merged_roots has an empty ref name"
        if problem is not None:
            raise field_error("branches", f"branches: {problem}")

    def folder_of(self, version: int) -> str:
        """The folder the root node file of ``version`` (on this branch) lives in."""
        return lineage_of(self.lineage, version)

    def lineage_until(self, version: int) -> tuple[tuple[int, str], ...]:
        """The lineage of this branch's versions up to ``version`` (a new branch's tail)."""
        return tuple((first, folder) for first, folder in self.lineage if first <= version)

    def main_version(self) -> int:
        """The newest of main's versions in this branch's history."""
        return self.lineage[-2][0] - 1 if len(self.lineage) > 1 else self.base_version

    def replace(self, **changes: Any) -> BranchRecord:
        """A copy with ``changes`` applied (and validated)."""
        import dataclasses

        return dataclasses.replace(self, **changes)

    def to_proto(self) -> pb.BranchDef:
        return pb.BranchDef(
            folder=self.folder,
            base_version=self.base_version,
            base_root=self.base_root,
            lineage=[pb.ChainSegment(first_version=v, folder=f) for v, f in self.lineage],
            created_at_millis=self.created_at_millis,
            merged_roots=dict(self.merged_roots),
        )

    @classmethod
    def from_proto(cls, message: pb.BranchDef) -> BranchRecord:
        return cls(
            folder=message.folder,
            base_version=int(message.base_version),
            base_root=message.base_root,
            lineage=tuple((int(s.first_version), s.folder) for s in message.lineage),
            created_at_millis=int(message.created_at_millis),
            merged_roots=dict(message.merged_roots),
        )


def lineage_of(lineage: Sequence[tuple[int, str]], version: int) -> str:
    """The folder holding ``version``'s root along ``lineage`` (newest first)."""
    for first, folder in lineage:
        if version >= first:
            return folder
    return ""


def main_versions_needed(branches: Mapping[str, BranchRecord]) -> set[int]:
    """Main's versions that branches still need (each one's newest version on main).

    Expiration keeps them: a branch without commits of its own reads its
    base, and every branch's history runs through one of them.
    """
    needed = {record.main_version() for record in branches.values()}
    for record in branches.values():
        for root in record.merged_roots.values():
            if "/" not in root:  # main's
                needed.add(int(root[1:33][::-1], 2))
    return needed


def branch_root_files(
    branches: Mapping[str, BranchRecord], listed: Sequence[str]
) -> tuple[list[str], set[str]]:
    """Of ``listed`` (paths under ``_branches/``), the roots live branches reach, and their hints.

    A root in a folder is reached when some live branch's history holds
    its version in that folder: a branch's own roots, and the roots of the
    branches it was created from, up to where it left them.
    """
    present = set(listed)
    spans: dict[str, list[tuple[int, int]]] = {}
    hints: set[str] = set()
    roots: set[str] = set()
    for record in branches.values():
        hints.add(record.folder + "_latest_hint.txt")
        roots.update(r for r in record.merged_roots.values() if "/" in r and r in present)
        upper = 2**32
        for first, folder in record.lineage:
            if folder:
                spans.setdefault(folder, []).append((first, upper))
            upper = first
    for path in listed:
        folder, _, name = path.rpartition("/")
        if not _ROOT_RE.fullmatch(name):
            continue
        version = int(name[1:33][::-1], 2)
        if any(lo <= version < hi for lo, hi in spans.get(folder + "/", ())):
            roots.add(path)
    return sorted(roots), hints
