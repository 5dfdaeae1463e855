"""Saved (distributed) transaction definitions (schema ID 4).

Upstream TrinityLake's transaction object: a running transaction written
down so that another process can load it and commit it. Fields 1-6 are
upstream's (``id``, ``isolation_level``, ``beginning_root_node_file_path``,
``running_root_node_file_path``, ``began_at_millis``, ``expire_at_millis``);
from field 16 on the project records everything the loader's commit needs:
the staged writes, the read set (keys and ranges, so a SERIALIZABLE commit
validates exactly what the saver read), the keys and ranges the changes
depend on at any isolation level, the definition files SAVE wrote and the
branch. docs/format.md, "Saved transactions", describes every field.

A record is read from storage another writer may have written, so reading
validates everything a loader acts on: the id (it names files), every path
(only a root node file, the transaction's own running root, or an object
definition at its path-optimized place), the times and the ranges.

Imports from format/definitions/: _common.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from trinity_dbapi.format.definitions._common import (
    EMPTY,
    UINT64_MAX,
    BinpbDefinition,
    check_int,
    check_str,
    field_error,
    set_field,
    string_map,
)
from trinity_dbapi.format.paths import optimize_path, root_node_version
from trinity_dbapi.format.proto import trinity_pb2 as pb

__all__ = [
    "TRANSACTIONS_FOLDER",
    "TRANSACTION_ISOLATION_LEVELS",
    "TRANSACTION_SCHEMA_ID",
    "KeyRange",
    "TransactionDefinition",
    "is_transaction_file",
    "running_root_path",
    "transaction_id_problem",
]

#: Upstream's schema ID of the transaction object.
TRANSACTION_SCHEMA_ID = 4
#: Where saved transactions live, relative to the lakehouse root.
TRANSACTIONS_FOLDER = "_transactions/"
#: Upstream's spellings of the two isolation levels.
TRANSACTION_ISOLATION_LEVELS = ("SERIALIZABLE", "SNAPSHOT")

_UUID4_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
_BRANCH_ROOT_RE = re.compile(r"(_branches/[0-9a-f-]{36}/)?(?P<name>_[01]{32}\.arrow)")
_OPTIMIZED_RE = re.compile(r"[01]{4}/[01]{4}/[01]{4}/[01]{8}-(?P<name>[^/]+\.binpb)")
_FILE_RE = re.compile(
    re.escape(TRANSACTIONS_FOLDER) + _UUID4_RE.pattern + r"\.(binpb|arrow|loaded|committed)"
)

#: A key range ``(lo, hi)``: ``lo <= key < hi``; None is an open bound.
KeyRange = tuple[str | None, str | None]


def transaction_id_problem(txn_id: object) -> str | None:
    """Why ``txn_id`` is not a saved transaction's id (a lower-case UUID4); None if it is."""
    if not isinstance(txn_id, str) or not _UUID4_RE.fullmatch(txn_id):
        return f"{str(txn_id)[:80]!r} is not a transaction id (a lower-case UUID4)"
    return None


def is_transaction_file(path: str) -> bool:
    """Whether ``path`` is a saved transaction's own file (its record, running root or markers)."""
    return _FILE_RE.fullmatch(path) is not None


def running_root_path(txn_id: str) -> str:
    """The running root node file a saved transaction with changes writes."""
    return f"{TRANSACTIONS_FOLDER}{txn_id}.arrow"


@dataclass(frozen=True)
class TransactionDefinition(BinpbDefinition):
    """A saved transaction (schema ID 4).

    Attributes:
        id: The transaction id, a lower-case UUID4 (names its files).
        isolation_level: ``SERIALIZABLE`` or ``SNAPSHOT`` (upstream's spelling).
        beginning_root_node_file_path: The root node file of the version it
            began on (main's ``_<bits>.arrow``, or a branch's).
        running_root_node_file_path: The root node file of its current
            state: :func:`running_root_path`, or the beginning root when it
            changes nothing.
        began_at_millis: When it began (epoch milliseconds).
        expire_at_millis: When it can no longer be loaded or committed;
            after ``began_at_millis``.
        writes: Staged key -> value (the object definition file it points at).
        deleted_keys: Staged deletes.
        read_keys: Keys it read (found or not): the SERIALIZABLE read set.
        read_ranges: Key ranges it scanned, likewise.
        required_keys: Keys its changes depend on at any isolation level.
        required_ranges: Key ranges its changes depend on likewise.
        staged_files: The object definition files SAVE wrote for it.
        branch: The branch it runs on; ``""`` is main.
        beginning_version: The version of the beginning root.
        saved_at_millis: When it was saved.
        commit_message: The commit message set before SAVE (``""``: none).
        merged_keys: Written (or deleted) keys whose every change was a blind
            merge (an append to a table): a concurrent change to such a table
            is merged three-way at the loader's commit instead of conflicting.
    """

    id: str
    isolation_level: str
    beginning_root_node_file_path: str
    running_root_node_file_path: str
    began_at_millis: int
    expire_at_millis: int
    writes: Mapping[str, str] = EMPTY
    deleted_keys: Sequence[str] = ()
    read_keys: Sequence[str] = ()
    read_ranges: Sequence[KeyRange] = ()
    required_keys: Sequence[str] = ()
    required_ranges: Sequence[KeyRange] = ()
    staged_files: Sequence[str] = ()
    branch: str = ""
    beginning_version: int = 0
    saved_at_millis: int = 0
    commit_message: str = ""
    merged_keys: Sequence[str] = ()

    schema_id: ClassVar[int] = TRANSACTION_SCHEMA_ID
    _message_type: ClassVar[type[pb.TransactionDef]] = pb.TransactionDef
    _what: ClassVar[str] = "saved transaction definition"

    def __post_init__(self) -> None:
        set_field(self, "writes", string_map("writes", self.writes))
        for name in ("deleted_keys", "read_keys", "required_keys", "staged_files", "merged_keys"):
            set_field(self, name, _strings(name, getattr(self, name)))
        for name in ("read_ranges", "required_ranges"):
            set_field(self, name, _ranges(name, getattr(self, name)))
        self.validate()

    def validate(self) -> None:
        """Check every field.

        Raises:
            InvalidDefinitionError: Naming the first invalid field.
        """
        problem = transaction_id_problem(self.id)
        if problem is not None:
            raise field_error("id", f"id {problem}")
        if self.isolation_level not in TRANSACTION_ISOLATION_LEVELS:
            raise field_error(
                "isolation_level",
                f"isolation_level is {self.isolation_level!r} but must be one of "
                f"{', '.join(TRANSACTION_ISOLATION_LEVELS)}",
            )
        check_int("began_at_millis", self.began_at_millis, 1, UINT64_MAX)
        check_int("expire_at_millis", self.expire_at_millis, self.began_at_millis + 1, UINT64_MAX)
        check_int("beginning_version", self.beginning_version, 0, 2**32 - 1)
        check_int("saved_at_millis", self.saved_at_millis, 0, UINT64_MAX)
        check_str("branch", self.branch, required=False)
        check_str("commit_message", self.commit_message, required=False)
        if self.branch == "main":
            raise field_error("branch", 'branch is "main", which is written "" (the default)')
        self._validate_roots()
        for key in (*self.writes, *self.deleted_keys, *self.read_keys, *self.required_keys):
            if not key:
                raise field_error("writes", "a saved transaction names an empty tree key")
        stray = set(self.merged_keys) - set(self.writes) - set(self.deleted_keys)
        if stray:
            raise field_error(
                "merged_keys", f"merged key {min(stray)!r} is neither written nor deleted"
            )
        both = set(self.writes) & set(self.deleted_keys)
        if both:
            raise field_error(
                "deleted_keys", f"key {min(both)!r} is both written and deleted; keep one"
            )
        for path in self.staged_files:
            match = _OPTIMIZED_RE.fullmatch(path)
            if match is None or optimize_path(match["name"]) != path:
                raise field_error(
                    "staged_files",
                    f"staged file {path[:200]!r} is not an object definition file at its "
                    "path-optimized place",
                )

    def _validate_roots(self) -> None:
        beginning = self.beginning_root_node_file_path
        match = _BRANCH_ROOT_RE.fullmatch(beginning)
        if match is None or root_node_version(match["name"]) != self.beginning_version:
            raise field_error(
                "beginning_root_node_file_path",
                f"beginning_root_node_file_path {beginning[:200]!r} is not the root node file "
                f"of version {self.beginning_version} (beginning_version)",
            )
        running = self.running_root_node_file_path
        if running not in (beginning, running_root_path(self.id)):
            raise field_error(
                "running_root_node_file_path",
                f"running_root_node_file_path {running[:200]!r} is neither "
                f"{running_root_path(self.id)!r} nor the beginning root",
            )

    def replace(self, **changes: Any) -> TransactionDefinition:
        """Return a copy with ``changes`` applied (and validated)."""
        return dataclasses.replace(self, **changes)

    def to_proto(self) -> pb.TransactionDef:
        """Return the protobuf message."""
        return pb.TransactionDef(
            id=self.id,
            isolation_level=self.isolation_level,
            beginning_root_node_file_path=self.beginning_root_node_file_path,
            running_root_node_file_path=self.running_root_node_file_path,
            began_at_millis=self.began_at_millis,
            expire_at_millis=self.expire_at_millis,
            writes=dict(self.writes),
            deleted_keys=list(self.deleted_keys),
            read_keys=list(self.read_keys),
            read_ranges=[_range_proto(r) for r in self.read_ranges],
            required_keys=list(self.required_keys),
            required_ranges=[_range_proto(r) for r in self.required_ranges],
            staged_files=list(self.staged_files),
            branch=self.branch,
            beginning_version=self.beginning_version,
            saved_at_millis=self.saved_at_millis,
            commit_message=self.commit_message,
            merged_keys=list(self.merged_keys),
        )

    @classmethod
    def from_proto(cls, message: pb.TransactionDef) -> TransactionDefinition:
        """Build a definition from a message (validated)."""
        return cls(
            id=message.id,
            isolation_level=message.isolation_level or "SNAPSHOT",  # upstream's default
            beginning_root_node_file_path=message.beginning_root_node_file_path,
            running_root_node_file_path=message.running_root_node_file_path,
            began_at_millis=message.began_at_millis,
            expire_at_millis=message.expire_at_millis,
            writes=dict(message.writes),
            deleted_keys=tuple(message.deleted_keys),
            read_keys=tuple(message.read_keys),
            read_ranges=tuple(_range_of(r) for r in message.read_ranges),
            required_keys=tuple(message.required_keys),
            required_ranges=tuple(_range_of(r) for r in message.required_ranges),
            staged_files=tuple(message.staged_files),
            branch=message.branch,
            beginning_version=message.beginning_version,
            saved_at_millis=message.saved_at_millis,
            commit_message=message.commit_message,
            merged_keys=tuple(message.merged_keys),
        )


def _strings(field_name: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence | set | frozenset):
        raise field_error(field_name, f"{field_name} must be a sequence of str, got {value!r}")
    return tuple(check_str(field_name, item, required=False) for item in value)


def _ranges(field_name: str, value: object) -> tuple[KeyRange, ...]:
    if not isinstance(value, Sequence):
        raise field_error(field_name, f"{field_name} must be a sequence of (lo, hi) pairs")
    ranges = []
    for item in value:
        if not isinstance(item, tuple) or len(item) != 2:
            raise field_error(field_name, f"{field_name} holds {item!r}, not a (lo, hi) pair")
        lo, hi = item
        for bound in (lo, hi):
            if bound is not None:
                check_str(field_name, bound, required=False)
        if lo is not None and hi is not None and lo > hi:
            raise field_error(field_name, f"{field_name} holds the range [{lo!r}, {hi!r}): lo > hi")
        ranges.append((lo, hi))
    return tuple(ranges)


def _range_proto(bounds: KeyRange) -> pb.KeyRange:
    lo, hi = bounds
    message = pb.KeyRange()
    if lo is not None:
        message.lo = lo
    if hi is not None:
        message.hi = hi
    return message


def _range_of(message: pb.KeyRange) -> KeyRange:
    return (
        message.lo if message.HasField("lo") else None,
        message.hi if message.HasField("hi") else None,
    )
