"""Opening the lakehouse a connection names, or standing in for one not created yet.

:func:`open_location` opens the lakehouse at a URI. Where there is none it
follows ``connect``'s ``create`` option (docs/dbapi.md, "Where a lakehouse is
created"): ``True`` creates it now; ``False`` refuses; ``None`` (the default)
refuses a local folder that holds other files (or a file) and otherwise
gives an empty lakehouse in process memory to read, with the
:class:`LakehouseLater` that creates the real one at the session's first
write (and deletes it again if that first statement fails). A ``memory://``
root is created at once: it lives in the process and leaves nothing behind.

Imports from dbapi/: nothing.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from trinity_dbapi import errors
from trinity_dbapi.errors import LakehouseNotFoundError, ProgrammingError
from trinity_dbapi.lakehouse.definition_cache import DEFAULT_DEFINITION_CACHE_BYTES

__all__ = ["LakehouseLater", "Opened", "check_definition", "create_now", "open_location"]


def open_location(
    uri: str,
    storage_options: Mapping[str, Any] | None,
    *,
    create: bool | None,
    read_only: bool,
    fields: dict[str, Any],
    version: int | None = None,
    ahead: Callable[[], None] | None = None,
    cache_bytes: int = DEFAULT_DEFINITION_CACHE_BYTES,
) -> Opened:
    """The lakehouse at ``uri``, or the stand-in of one to create at the first write.

    A lakehouse that does not exist yet is stood in for by an empty one in
    process memory until the first write (``create`` None).
    """
    from trinity_dbapi.lakehouse import roots
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse
    from trinity_dbapi.storage import open_storage

    if not isinstance(uri, str):
        raise ProgrammingError(f"the lakehouse URI must be a str, not {type(uri).__name__}")
    storage = open_storage(uri, storage_options=storage_options)
    if ahead is not None:
        # The store's client first: ``ahead``'s threads would hold the
        # interpreter lock while it is made, delaying the first request.
        storage.prepare()
        ahead()
    try:
        # The definition comes beside the first statement's requests (one round fewer).
        lake = Lakehouse.open(storage, storage_options=storage_options, version=version, defer=True)
    except LakehouseNotFoundError:
        # Neither a read-only nor a pinned connection creates anything.
        if create is False or read_only or version is not None:
            raise
    else:
        if fields:  # the definition read on opening: no request to learn the latest again
            check_definition(uri, lake.definition, fields)
        return Opened(lake, False)
    # A memory:// lakehouse lives in this process and leaves nothing behind:
    # it is created at once, as before, so a process's connections share it.
    if create or storage.root_uri.startswith("memory://"):
        created, made = create_now(uri, storage_options, fields)
        return Opened(created, made)
    check_nothing_else(uri, storage.local_root)
    # Refused now rather than at the first write (Lakehouse.create checks it again).
    outer = roots.enclosing_lakehouse(storage)
    if outer is not None:
        raise errors.NestedLakehouseError(storage.root_uri, outer)
    stand_in = Lakehouse.create(f"memory://trinity-not-created-yet/{uuid.uuid4().hex}", **fields)
    later = LakehouseLater(uri, storage_options, fields, storage.local_root, cache_bytes)
    return Opened(stand_in, False, later, storage.root_uri)


class Opened(NamedTuple):
    """What :func:`open_location` found or made."""

    lakehouse: Any
    #: Whether ``lakehouse`` was created now (``create=True``).
    created: bool
    #: Creates the lakehouse at the first write (None: ``lakehouse`` is it).
    create_on_write: LakehouseLater | None = None
    #: Where the lakehouse will be (None: ``lakehouse``'s root).
    location: str | None = None


class LakehouseLater:
    """The lakehouse a connection creates at its first write (a ``LakehouseToCreate``).

    The folders it makes on a local disk are remembered: undoing a creation
    (the first write failed) removes them again, as far as they are empty.
    """

    def __init__(
        self,
        uri: str,
        storage_options: Mapping[str, Any] | None,
        fields: dict[str, Any],
        local_root: str | None,
        cache_bytes: int,
    ) -> None:
        self.uri = uri
        self.cache_bytes = cache_bytes
        self.storage_options = storage_options
        self.fields = fields
        self.local_root = local_root
        #: The root folder and its ancestors that do not exist yet, deepest first.
        self.missing: list[str] = []

    def create(self) -> tuple[Any, bool]:
        """Create it: the lakehouse, and whether this call created it (not another process)."""
        self.missing = []
        if self.local_root is not None:
            folder = os.path.abspath(self.local_root)
            while folder and not os.path.lexists(folder):
                self.missing.append(folder)
                parent = os.path.dirname(folder)
                folder = "" if parent == folder else parent
        lakehouse, created = create_now(self.uri, self.storage_options, self.fields)
        lakehouse.definition_cache.max_bytes = self.cache_bytes
        return lakehouse, created

    def existing(self) -> Any:
        """The lakehouse if another writer created it meanwhile, else None."""
        from trinity_dbapi.lakehouse.lakehouse import Lakehouse

        try:
            lakehouse = Lakehouse.open(self.uri, storage_options=self.storage_options)
        except LakehouseNotFoundError:
            return None
        lakehouse.definition_cache.max_bytes = self.cache_bytes
        return lakehouse

    def undo(self, lakehouse: Any) -> bool:
        """Delete what :meth:`create` made (files, then the folders it made), if nothing was committed since."""
        from trinity_dbapi.format.paths import root_node_file_name

        storage = lakehouse.storage
        try:
            if storage.exists(root_node_file_name(1)):
                return False  # committed to since: another writer's now
            # The root held nothing before the creation (it was checked
            # absent or empty), so every file in it is the creation's.
            for path, _ in storage.list_with_times():
                storage.delete(path)
        except errors.Error:
            return False
        if self.local_root is not None:
            root = os.path.abspath(self.local_root)
            for folder, _, _ in os.walk(root, topdown=False):
                if folder != root:
                    with contextlib.suppress(OSError):
                        os.rmdir(folder)
            for folder in self.missing:
                with contextlib.suppress(OSError):  # not empty: someone else's now
                    os.rmdir(folder)
        return True


def check_nothing_else(uri: str, local_root: str | None) -> None:
    """Refuse to create a lakehouse later in a local folder that holds other files.

    A mistyped path must not turn a folder of other things (a home
    directory, ``/tmp``) into a lakehouse. An object store's "folder" is
    only a key prefix: it is not listed (nothing is written there before
    the first write either way).
    """
    if local_root is None or not os.path.exists(local_root):
        return  # nothing there (a dangling link too: creating makes its target)
    if not os.path.isdir(local_root):
        raise errors.NotALakehouseError(
            uri,
            f"no Trinity Lakehouse at {uri!r}: the root is a file, not a folder: give the path "
            "of a folder that holds a lakehouse, or of an empty or new folder to create one in",
        )
    try:
        entries = sorted(os.listdir(local_root))
    except OSError as exc:
        raise errors.NotALakehouseError(
            uri, f"no Trinity Lakehouse at {uri!r}, and its folder cannot be listed: {exc}"
        ) from None
    if entries:
        shown = ", ".join(repr(name) for name in entries[:3])
        more = f" and {len(entries) - 3} more" if len(entries) > 3 else ""
        raise errors.NotALakehouseError(
            uri,
            f"no Trinity Lakehouse at {uri!r}: the folder is not empty (it holds {shown}{more}) "
            "and holds no lakehouse, so none is created there unasked; check the path, or "
            f"create a lakehouse in that folder on purpose with connect({uri!r}, create=True)",
        )


def check_definition(uri: str, existing: Any, fields: dict[str, Any]) -> None:
    """Definition fields shape a new lakehouse; for an existing one they must agree."""
    differ = sorted(
        f"{name}={value!r} (it has {getattr(existing, name)!r})"
        for name, value in fields.items()
        if getattr(existing, name) != (dict(value) if name == "properties" else value)
    )
    if differ:
        raise ProgrammingError(
            f"the lakehouse at {uri!r} already exists, and definition fields only shape a new "
            f"one: {', '.join(differ)}; drop those options, or change retention with "
            "Lakehouse APIs"
        )


def create_now(
    uri: str, storage_options: Mapping[str, Any] | None, definition: dict[str, Any]
) -> tuple[Any, bool]:
    """The new lakehouse at ``uri``, and whether this call created it."""
    from trinity_dbapi.lakehouse.lakehouse import Lakehouse

    try:
        return Lakehouse.create(uri, storage_options=storage_options, **definition), True
    except errors.LakehouseExistsError:  # another process created it meanwhile
        return Lakehouse.open(uri, storage_options=storage_options), False
