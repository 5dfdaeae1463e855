"""Root node files: finding the latest version, the latest-version hint, a root's definition.

The latest version is found by reading the hint and probing forward, since
the hint may be stale (FORMAT-NOTES section 3). Split out of ``lakehouse.py``
so that recovery (``recovery.py``) can find versions without opening one.

Imports from lakehouse/: nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from trinity_dbapi.errors import (
    CorruptFileError,
    InvalidURIError,
    LakehouseNotFoundError,
    StorageFileNotFoundError,
)
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.locations import location_problem
from trinity_dbapi.format.paths import LATEST_HINT_FILE, root_node_file_name, root_node_version
from trinity_dbapi.storage import Storage


def find_latest_version(storage: Storage, *, known: int = 0, read_root: bool = False) -> int:
    """The latest root version: start at the hint (or the oldest root) and probe forward.

    The hint may be missing, garbage, stale or point at a version that no
    longer exists; none of that can hide a version, because the answer is the
    last of a run of existing root files that ends in a missing one.

    Args:
        storage: the lakehouse storage.
        known: a version the caller has seen exist (0: none), used as the
            starting point when the hint is older.
        read_root: read the latest root into the storage's cache on the way
            (see :func:`find_latest`).

    Raises:
        LakehouseNotFoundError: there is no root node file at all.
    """
    return find_latest(storage, known=known, read_root=read_root)[0]


def find_latest(
    storage: Storage, *, known: int = 0, read_root: bool = False
) -> tuple[int, int | None]:
    """:func:`find_latest_version`, and the hint read on the way (None: none or not read).

    With ``read_root`` (a caller about to open the latest root), the hinted
    root (or each newer root found after ``known``) is read whole instead of
    asked about, in the round that asks for the one after it: when the hint
    is right, which it almost always is, the
    root's bytes are in the storage's cache (root files are immutable) and
    opening costs no round of its own.
    """
    if known:
        # The common case, without reading the hint, in one round: the next
        # version is missing while ``known`` still exists. Once ``known`` is
        # expired (other writers committed after it), the next version may be
        # gone too, and ``known`` would be taken for the latest, a commit on
        # it re-using an expired version's number.
        following, still = storage.exists_many(
            [root_node_file_name(known + 1), root_node_file_name(known)]
        )
        if following:
            newest = known + 1
            while _present_and_next(storage, newest, read_root):
                newest += 1
            return newest, None
        if still:
            return known, None
        known = 0
    start = hint = read_hint(storage)
    verified = False
    if known and (start is None or start <= known):
        start, verified = known, True  # known to exist: no need to check it
    elif start is not None:
        # The hinted root and the one after it, in one round: the common
        # answer is "the hint is right".
        hinted, after = root_node_file_name(start), root_node_file_name(start + 1)
        if read_root:
            present, following = storage.concurrently(
                [partial(_readable, storage, hinted), partial(storage.exists, after)]
            )
        else:
            present, following = storage.exists_many([hinted, after])
        if present and not following:
            return start, hint
        if present:
            start, verified = start + 1, True
    if not verified or start is None:
        start = 0
        if not storage.exists(root_node_file_name(0)):
            listed = listed_versions(storage)  # version 0 may have been expired
            if not listed:
                raise LakehouseNotFoundError(storage.root_uri)
            start = max(listed)
    version = start
    while storage.exists(root_node_file_name(version + 1)):
        version += 1
    return version, hint


def find_branch_latest(
    storage: Storage,
    root_name: Callable[[int], str],
    hint_file: str,
    base_version: int,
    known: int = 0,
    *,
    read_root: bool = False,
) -> int:
    """The latest version of a branch: its base until it has roots of its own.

    As for main: start at the hint (or ``known``, whichever is newer), check
    it and the version after it in one round, and probe forward. A hint that
    is garbage, stale or names a version that does not exist starts the probe
    at the branch's base, whose next version is its first own root. With
    ``read_root``, the hinted root is read whole in that round (as
    :func:`find_latest` does for main), so opening it costs no round of its own.
    """
    if known > base_version:
        # As for main: the common case in one round, without the hint.
        following, still = storage.exists_many([root_name(known + 1), root_name(known)])
        if following:
            newest = known + 1
            while storage.exists(root_name(newest + 1)):
                newest += 1
            return newest
        if still:
            return known
    start = max(read_hint(storage, hint_file) or 0, base_version)
    if start > base_version:
        hinted, after = root_name(start), root_name(start + 1)
        if read_root:
            present, following = storage.concurrently(
                [partial(_readable, storage, hinted), partial(storage.exists, after)]
            )
        else:
            present, following = storage.exists_many([hinted, after])
        if not present:
            start = base_version
        elif not following:
            return start
        else:
            start += 1
    version = start
    while storage.exists(root_name(version + 1)):
        version += 1
    return version


def _present_and_next(storage: Storage, version: int, read_root: bool) -> bool:
    """Whether the root after ``version`` exists; with ``read_root``, ``version``'s is read too.

    The root just found is the one a reader opens next: its bytes come in
    the round that asks about the one after it.
    """
    after = partial(storage.exists, root_node_file_name(version + 1))
    if not read_root:
        return after()
    return bool(
        storage.concurrently([after, partial(_readable, storage, root_node_file_name(version))])[0]
    )


def _readable(storage: Storage, path: str) -> bool:
    """Read ``path`` into the storage's cache; whether it exists."""
    try:
        storage.read(path)
    except StorageFileNotFoundError:
        return False
    return True


def read_hint(storage: Storage, hint_file: str = LATEST_HINT_FILE) -> int | None:
    try:
        text = storage.read(hint_file).decode("ascii").strip()
    except (StorageFileNotFoundError, UnicodeDecodeError):
        return None
    # Garbage is no hint; the length is checked first (int() refuses 4300+ digits).
    digits = text.lstrip("0") or "0"
    if not text.isdigit() or len(digits) > 10 or int(digits) > 2**32 - 1:
        return None
    return int(digits)


def listed_versions(storage: Storage) -> list[int]:
    versions = (root_node_version(p) for p in storage.list("_"))
    return [v for v in versions if v is not None]


def enclosing_lakehouse(storage: Storage) -> str | None:
    """The root URI of a lakehouse that ``storage``'s root lies inside, or None.

    Each folder above the root is asked for the files a lakehouse always has
    (its latest-version hint, or the root of version 0), all at once: one
    round of requests on object storage, whatever the depth.
    """
    from concurrent.futures import ThreadPoolExecutor

    from trinity_dbapi.errors import Error
    from trinity_dbapi.storage import open_beside

    def holds_lakehouse(uri: str) -> bool:
        try:
            outer = open_beside(storage, uri)
            return outer.exists(LATEST_HINT_FILE) or outer.exists(root_node_file_name(0))
        except Error:
            return False  # an unreadable or invalid folder holds no lakehouse we can see

    above = ancestor_roots(storage.root_uri)
    if not above:
        return None
    with ThreadPoolExecutor(max_workers=min(8, len(above))) as pool:
        found = list(pool.map(holds_lakehouse, above))
    return next((uri for uri, hit in zip(above, found, strict=True) if hit), None)


def ancestor_roots(root_uri: str) -> list[str]:
    """The root URIs of the folders above ``root_uri``, nearest first (the bucket's last)."""
    scheme, _, rest = root_uri.partition("://")
    authority, _, path = rest.partition("/")
    parts = [part for part in path.split("/") if part]
    return [
        f"{scheme}://{authority}/" + "".join(part + "/" for part in parts[:depth])
        for depth in range(len(parts) - 1, -1, -1)
    ]


def lakehouse_exists(storage: Storage) -> bool:
    """Whether ``storage`` holds a lakehouse (a root of version 0, or any root left)."""
    return storage.exists(root_node_file_name(0)) or bool(listed_versions(storage))


def root_definition_path(data: bytes, path: str) -> str:
    """Read the ``lakehouse_def`` system row of a root node file of unknown order."""
    import pyarrow as pa

    try:
        table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
        table.validate(full=True)  # UTF-8 too (see node_file.decode_node)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise CorruptFileError(path, f"not a readable Arrow IPC file ({exc})") from exc
    if "key" not in table.schema.names or "value" not in table.schema.names:
        raise CorruptFileError(path, "it has no key and value columns")
    for key, value in zip(table.column("key").to_pylist(), table.column("value").to_pylist()):
        if key is None and value is None:
            break
        if key == system_keys.LAKEHOUSE_DEF and value:
            problem = location_problem(value)
            if problem is not None:
                raise CorruptFileError(
                    path, f"the system row 'lakehouse_def' holds {value[:200]!r}: {problem}"
                )
            return str(value)
    raise CorruptFileError(path, "the root node has no 'lakehouse_def' system row")


def read_definition(
    read: Callable[[str], bytes], path: str, referrer: str | None
) -> LakehouseDefinition:
    """The lakehouse definition a root points at; a missing one is a damaged lakehouse.

    Args:
        read: reads a location (``Storage.read`` for a path in the lakehouse;
            a reader of URIs for the definition of another lakehouse, which a
            root exported there points at).
        path: the ``lakehouse_def`` location.
        referrer: the root node pointing at it, named in errors.
    """
    root = "a root node" if referrer is None else f"root node {referrer!r}"
    try:
        data = read(path)
    except StorageFileNotFoundError:
        problem = "the file is missing (lost, or a damaged 'lakehouse_def' row)"
        raise CorruptFileError(path, f"{root} points at it, but {problem}") from None
    except InvalidURIError as exc:
        raise CorruptFileError(path, f"{root} points at it, but {exc}") from None
    return LakehouseDefinition.from_bytes(data, path)
