"""The stand-in of a lakehouse not created yet: what a session needs of the lakehouse it will create.

``connect`` on an absent or empty folder (docs/dbapi.md, "Where a lakehouse
is created") gives the session an empty lakehouse in process memory to read
and a :class:`LakehouseToCreate`; the session's first write creates the real
lakehouse with it (:meth:`~.session.Session.create_lakehouse`), and undoes
that if the statement fails. The driver implements it
(:class:`trinity_dbapi.dbapi.opening.LakehouseLater`).

Imports from sql/engine/: nothing.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse
    from trinity_dbapi.storage import Storage

__all__ = ["LakehouseToCreate", "discard"]


class LakehouseToCreate(Protocol):
    """A lakehouse that does not exist yet, created by a session's first write."""

    #: Its root directory when it is to be on the local file system (None: remote).
    local_root: str | None

    def create(self) -> tuple[Lakehouse, bool]:
        """Create it: the lakehouse, and whether this call created it (not another process)."""
        ...

    def existing(self) -> Lakehouse | None:
        """The lakehouse if another connection or process has created it meanwhile, else None."""
        ...

    def undo(self, lakehouse: Lakehouse) -> bool:
        """Delete what :meth:`create` made, if nothing was committed to it since.

        Returns:
            Whether it was deleted (False: it is kept, as another writer may use it).
        """
        ...


def discard(storage: Storage) -> None:
    """Delete the files of the in-memory stand-in of a lakehouse not created yet."""
    with contextlib.suppress(Exception):  # process memory only: nothing worth failing for
        for path in storage.list():
            storage.delete(path)
