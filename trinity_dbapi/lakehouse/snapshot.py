"""One pinned root version of a lakehouse: every read resolves through it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn

from trinity_dbapi.errors import CorruptFileError, Error
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.locations import is_uri, qualify, split_uri
from trinity_dbapi.format.node_file import Message
from trinity_dbapi.lakehouse.expired import expired_error
from trinity_dbapi.tree import btree
from trinity_dbapi.tree.node import Node

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import LakehouseDefinition
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse


@dataclass(frozen=True)
class Snapshot:
    """One root version of the tree, pinned: every read resolves through it.

    Attributes:
        version: the root node version number.
        root: the root node (clean, shared).
        lakehouse: the lakehouse it belongs to.
    """

    version: int
    root: Node
    lakehouse: Lakehouse

    @property
    def created_at_millis(self) -> int:
        return int(self.root.system.get(system_keys.CREATED_AT_MILLIS, "0"))

    @property
    def previous_root(self) -> str | None:
        return self.root.system.get(system_keys.PREVIOUS_ROOT)

    @property
    def rollback_from_root(self) -> str | None:
        return self.root.system.get(system_keys.ROLLBACK_FROM_ROOT)

    @property
    def definition_path(self) -> str:
        """Location of the lakehouse definition this version points at.

        A root read through a URI belongs to another lakehouse (the target of
        an export): its ``lakehouse_def`` row is relative to that lakehouse's
        root, not to this one's, so it is qualified against it (as the node
        store qualifies the root's other pointers).
        """
        path = self.root.system[system_keys.LAKEHOUSE_DEF]
        if self.root.path is not None and is_uri(self.root.path):
            return qualify(split_uri(self.root.path)[0], path)
        return path

    @property
    def definition(self) -> LakehouseDefinition:
        """The lakehouse definition this version points at.

        Raises:
            VersionExpiredError: the version was expired and its definition
                file collected since this snapshot was taken.
        """
        try:
            return self.lakehouse.read_definition(self.definition_path, referrer=self.root.path)
        except CorruptFileError as exc:
            self.raise_explained(exc)

    @property
    def latest_txn(self) -> str | None:
        """ID of the transaction that made this version.

        Read from the root's ``txn_id`` system row; a root written without it
        (by another implementation) falls back to its newest buffered message.
        """
        txn = self.root.system.get(system_keys.TXN_ID)
        if txn is not None:
            return txn
        return self.root.buffer[-1].txn if self.root.buffer else None

    def latest_messages(self) -> list[Message]:
        """The messages of the transaction that made this version."""
        txn = self.latest_txn
        return [m for m in self.root.buffer if m.txn == txn]

    def changed_keys(self) -> set[str]:
        """The keys the transaction that made this version set or deleted."""
        return {m.key for m in self.latest_messages()}

    # Reads below the root load node files, which expiration and garbage
    # collection may have deleted since this version was pinned: such a read
    # raises VersionExpiredError, not the CorruptFileError of damage.

    def get(self, key: str) -> str | None:
        """The value of ``key`` at this version, or None."""
        try:
            return btree.get(self.lakehouse.nodes, self.root, key)
        except CorruptFileError as exc:
            self.raise_explained(exc)

    def scan(self, lo: str | None = None, hi: str | None = None) -> Iterator[tuple[str, str]]:
        """Every ``(key, value)`` with ``lo <= key < hi``, ascending."""
        try:
            yield from btree.scan(self.lakehouse.nodes, self.root, lo, hi)
        except CorruptFileError as exc:
            self.raise_explained(exc)

    def scan_prefix(self, prefix: str) -> Iterator[tuple[str, str]]:
        """Every ``(key, value)`` whose key starts with ``prefix``, ascending."""
        return self.scan(prefix, btree.prefix_end(prefix))

    def depth(self) -> int:
        """Number of tree levels at this version."""
        try:
            return btree.depth(self.lakehouse.nodes, self.root)
        except CorruptFileError as exc:
            self.raise_explained(exc)

    def explain(self, exc: CorruptFileError) -> Error:
        """The error for a file of this version that a read found damaged or missing.

        Returns:
            :class:`~trinity_dbapi.errors.VersionExpiredError` when this version
            was expired and garbage collection deleted the file (the lakehouse
            is healthy); otherwise ``exc`` itself.
        """
        return expired_error(self.lakehouse, self.version, self.created_at_millis, exc)

    def raise_explained(self, exc: CorruptFileError) -> NoReturn:
        """Raise :meth:`explain`'s error for ``exc`` (``exc`` itself when it is damage)."""
        error = self.explain(exc)
        if error is exc:
            raise exc  # not "from exc": the error would be its own cause
        raise error from exc


__all__ = ["Snapshot"]
