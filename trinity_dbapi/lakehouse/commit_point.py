"""The commit point: the pieces of creating the next root file.

A commit writes its changed non-root nodes, then exclusively creates root
``base.version + 1`` (:meth:`VersionChain.write_root
<trinity_dbapi.lakehouse.chain.VersionChain.write_root>`): that one create
decides the commit. This module holds what the create needs and checks: the
root's system rows (with who made the version and why: its author and
commit message, checked here), the create itself (:func:`create_root`), telling our own
root from another writer's, the conflict error, the latest-version hint
(:func:`announce`), the checks on what a commit may change, and the progress
of the node files written before the root.

It knows versions by number, never a snapshot or the chain, so that
:mod:`.chain` can call it.

Imports from lakehouse/: io_pool.
"""

from __future__ import annotations

import contextlib
import time
import unicodedata
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from trinity_dbapi.errors import (
    CommitConflictError,
    DataError,
    FileAlreadyExistsError,
    NotSupportedError,
    ProgrammingError,
    StorageError,
    StorageFileNotFoundError,
)
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.node_file import Message
from trinity_dbapi.format.paths import LATEST_HINT_FILE, root_node_file_name

#: A chain's root node file of a version: main's by default (a branch's
#: chain maps versions into its folders; docs/format.md, "Branches").
RootName = Callable[[int], str]
from trinity_dbapi.lakehouse.io_pool import io_pool

if TYPE_CHECKING:
    from trinity_dbapi.format.definitions import LakehouseDefinition
    from trinity_dbapi.storage import Storage

#: Definition fields that shape the tree and its keys, so they never change.
FIXED_DEFINITION_FIELDS = (
    "major_version",
    "order",
    "namespace_name_max_size_bytes",
    "table_name_max_size_bytes",
    "file_name_max_size_bytes",
    "node_file_max_size_bytes",
)


def now_millis() -> int:
    """The current time in epoch milliseconds."""
    return time.time_ns() // 1_000_000


Progress = Callable[[int, int], None]
"""Progress callback: (done, total); total is -1 while unknown."""


def node_file_progress(
    progress: Progress | None, before_root: Callable[[], None] | None = None
) -> tuple[Callable[[int], None] | None, Callable[[], None] | None]:
    """The ``progress`` and ``before_root`` of one root write, reporting to ``progress``.

    :meth:`VersionChain.write_root <trinity_dbapi.lakehouse.chain.VersionChain.write_root>`
    counts the node files it writes; this turns that count into ``(n, -1)``
    per file and a final ``(n, n)`` reported just before the new root is
    published (after ``before_root``, if given). The final report comes
    while the commit can still be abandoned: a callback that raises there
    leaves no new version. Use one per attempt.
    """
    if progress is None:
        return None, before_root
    report = progress
    written = 0

    def each(count: int) -> None:
        nonlocal written
        written = count
        report(count, -1)

    def last() -> None:
        if before_root is not None:
            before_root()
        report(written, written)

    return each, last


def root_system(
    base: int,
    base_definition_path: str,
    *,
    now: int,
    txn: str,
    definition_path: str | None,
    extra_system: Mapping[str, str] | None,
    root_name: RootName = root_node_file_name,
) -> dict[str, str]:
    """The system rows of the root that follows version ``base``.

    ``base_definition_path``: the lakehouse definition ``base`` points at,
    which the new root keeps unless ``definition_path`` names a new one.
    """
    return {
        system_keys.CREATED_AT_MILLIS: str(now),
        system_keys.LAKEHOUSE_DEF: definition_path or base_definition_path,
        system_keys.PREVIOUS_ROOT: root_name(base),
        system_keys.TXN_ID: txn,
        **(extra_system or {}),
    }


#: The longest author a version records, in UTF-8 bytes (a name or an e-mail address).
MAX_AUTHOR_BYTES = 256
#: The longest commit message a version records, in UTF-8 bytes: every
#: version's root carries its own, and a root is read whole.
MAX_COMMIT_MESSAGE_BYTES = 4096


def check_author(author: object) -> str | None:
    """``author`` as a version records it (``connect(..., author=...)``); None: no author.

    Raises:
        ProgrammingError: not a str or None.
        DataError: empty, over :data:`MAX_AUTHOR_BYTES`, or holding a control
            character (a line break included) or a lone surrogate.
    """
    return _check_note(author, "the author", MAX_AUTHOR_BYTES, allowed="")


def check_commit_message(message: object) -> str | None:
    """``message`` as a version records it (``SET COMMIT MESSAGE``); None or '': no message.

    Line feeds and tabs are kept (a message may have a body under its
    subject line, as a git commit message does); every other control
    character is refused.

    Raises:
        ProgrammingError: not a str or None.
        DataError: over :data:`MAX_COMMIT_MESSAGE_BYTES`, or holding another
            control character or a lone surrogate.
    """
    if message == "":
        return None
    return _check_note(message, "the commit message", MAX_COMMIT_MESSAGE_BYTES, allowed="\n\t")


def _check_note(value: object, what: str, max_bytes: int, *, allowed: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ProgrammingError(f"{what} must be a str or None, not {type(value).__name__}")
    if not value:
        raise DataError(f"{what} is empty: give a non-empty string, or None to record none")
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise DataError(
            f"{what} is {size} bytes of UTF-8, over the {max_bytes} a version records; shorten it"
        )
    for index, char in enumerate(value):
        control = unicodedata.category(char) == "Cc" and char not in allowed
        if control or "\ud800" <= char <= "\udfff":
            rule = "line feeds and tabs are the only ones kept" if allowed else "it is one line"
            raise DataError(
                f"{what} holds {char!r} at position {index}, a control character or lone "
                f"surrogate, which a version does not record ({rule}); remove it"
            )
    return value


def commit_notes(author: str | None, message: str | None) -> dict[str, str]:
    """The system rows recording who made a version and why: only those given.

    A version without an author or message has no such row: a reader (and
    ``system.versions``) sees NULL, as DuckLake records a snapshot's author
    and message only when they were set.
    """
    notes: dict[str, str] = {}
    if author:
        notes[system_keys.AUTHOR] = author
    if message:
        notes[system_keys.COMMIT_MESSAGE] = message
    return notes


def create_root(
    storage: Storage,
    version: int,
    data: bytes,
    *,
    check_base: bool,
    before_root: Callable[[], None] | None,
    root_name: RootName = root_node_file_name,
) -> None:
    """Exclusively create root ``version`` holding ``data``: the commit point.

    ``before_root`` runs just before the root becomes visible (after the
    storage has staged it privately), then the files the storage is still
    creating in the background are waited for: a root never points at a
    file that is not complete and durable. With ``check_base``, that the
    base (``version - 1``) still exists is asked in the round of those
    files (:func:`check_base_retained`).

    Raises:
        CommitConflictError: another writer created that version first, or
            the base was expired meanwhile.
        StorageError: the create failed, and reading the root back could
            not tell whether it was made (see :func:`settle_root`).
    """
    name = root_name(version)
    retained = None
    if check_base:
        # Asked while the staged files are written: its round overlaps theirs.
        check = partial(check_base_retained, storage, version - 1, root_name)
        retained = io_pool().submit(storage.this_round(check))

    def before_publish() -> None:
        # Everything the root points at is complete before it appears:
        # the caller's staged files, then the data and metadata files
        # this storage is still creating in the background.
        try:
            if before_root is not None:
                before_root()
            storage.settle()
        finally:
            if retained is not None:
                retained.result()

    try:
        storage.create_exclusive(name, data, before_publish=before_publish)
    except FileAlreadyExistsError:
        # Another writer's, or this commit's own whose reply was lost.
        settle_root(storage, name, data, version)
    except StorageError as exc:
        # No clear answer (the client gave up): made or not, the root tells.
        settle_root(storage, name, data, version, exc)


def announce(
    storage: Storage,
    version: int,
    after_root: Callable[[], None] | None,
    hint_file: str = LATEST_HINT_FILE,
) -> None:
    """Record committed ``version`` in the hint; ``after_root`` runs while the hint is written.

    ``after_root`` (a commit's derived files) shares the hint's round; it
    must not raise.
    """
    if after_root is None:
        write_hint(storage, version, hint_file)
        return
    hint = io_pool().submit(storage.this_round(partial(write_hint, storage, version, hint_file)))
    try:
        after_root()
    finally:
        hint.result()


def settle_root(
    storage: Storage,
    name: str,
    data: bytes,
    version: int,
    error: StorageError | None = None,
) -> None:
    """Whose root is at ``name`` when this commit's create of it did not plainly succeed.

    Two ways: the create was refused as "exists" (``error`` None), which an
    object store also answers a client's retry of a create that succeeded
    but lost its reply; or the client gave up (``error``: every attempt
    answered 5xx or lost its reply), though an attempt may have taken
    effect. The root is read back once. It holds this commit's new node
    paths (fresh UUIDs), so equal bytes can only be this commit's own
    write: then the commit is in, and this returns.

    Raises:
        CommitConflictError: another writer's root is there (or, refused,
            none is): the commit rebases and retries.
        StorageError: ``error`` when no root is there (nothing was
            committed); or the root could not be read back, and the message
            says the commit may have been made. Never a conflict then: taken
            for one, the commit was retried on top of what may be its own
            version (an append failed on its own partition, any other change
            said "nothing was committed" although it was).
    """
    try:
        found: bytes | None = storage.read(name)
    except StorageFileNotFoundError:
        found = None
    except StorageError as exc:
        happened = error or f"root {name!r} under {storage.root_uri} already exists"
        raise StorageError(
            f"{happened}. Reading it back to tell whether this commit created version "
            f"{version} failed too: {exc}. This commit may have been made: look at the "
            "latest version before running it again",
            path=name,
        ) from exc
    if found == data:
        return
    if found is None and error is not None:
        raise error
    raise conflict(storage, version) from None


def check_base_retained(
    storage: Storage, base: int, root_name: RootName = root_node_file_name
) -> None:
    """Refuse a commit on version ``base`` once ``base`` was expired.

    Expiration deletes a version only after a later one exists, and the
    oldest first: with ``base``'s root gone, version ``base + 1`` was
    committed and, if its root is gone too, expired, so creating it again
    would "win" a number that readers never look at again (they probe from
    the newer versions) and the commit would be lost without a word. Checked
    just before the root is created; what is left is the window between this
    request and that create, in which two versions would have to be expired.

    Raises:
        CommitConflictError: ``base``'s root no longer exists.
    """
    if storage.exists(root_name(base)):
        return
    raise CommitConflictError(
        f"version {base} of {storage.root_uri!r}, which this commit was based on, "
        "was expired while the transaction ran (newer versions were committed meanwhile); "
        "nothing was committed. Start again from the latest version",
        version=base + 1,
    )


def conflict(storage: Storage, version: int) -> CommitConflictError:
    """The error of a commit on ``version - 1`` that lost ``version`` to another writer."""
    return CommitConflictError(
        f"version {version} of {storage.root_uri!r} was committed by another "
        f"writer first; this commit was based on version {version - 1}. Start again "
        "from the latest version",
        version=version,
    )


def write_hint(storage: Storage, version: int, hint_file: str = LATEST_HINT_FILE) -> None:
    """Record ``version`` as the latest in the hint file, best effort."""
    # Best effort: the hint is only a starting point for the probe.
    # Fixed width (10 digits hold any 32-bit version): stores that can
    # overwrite in place then update it with one small write.
    with contextlib.suppress(StorageError):
        storage.write(hint_file, f"{version:010d}".encode())


def check_definition_change(current: LakehouseDefinition, new: LakehouseDefinition) -> None:
    """Refuse a new lakehouse definition that changes a field shaping the tree.

    Raises:
        NotSupportedError: the change would alter the tree's shape or key
            encoding (order, name and node sizes), which means re-encoding
            every key.
    """
    for name in FIXED_DEFINITION_FIELDS:
        if getattr(new, name) != getattr(current, name):
            raise NotSupportedError(
                f"the lakehouse definition field {name!r} cannot change from "
                f"{getattr(current, name)} to {getattr(new, name)}: it shapes the "
                "tree and its keys; export the lakehouse into a new one with the new value"
            )


def messages(changes: Mapping[str, str | None], txn: str) -> list[Message]:
    """The buffer messages of ``changes`` (key -> value, None deletes), checked.

    Raises:
        ProgrammingError: a key is not a non-empty string, or a value not a
            string or None.
    """
    return [Message(_check_key(k), _check_value(k, v), txn) for k, v in changes.items()]


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise ProgrammingError(f"tree keys are non-empty strings, not {key!r}")
    return key


def _check_value(key: str, value: object) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ProgrammingError(
            f"the value of {key!r} must be a string or None, not {type(value).__name__}"
        )
    return value
