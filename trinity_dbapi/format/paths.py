"""File locations inside a Trinity Lakehouse (the seed "Storage Location").

Every path produced here is *relative to the lakehouse root URI* and never
starts with ``/``. Two families exist:

* **Standard (optimized) paths** -- non-root node files and object definition
  files. Their *original* file name goes through :func:`optimize_path`, which
  prefixes 20 bits of a murmur3 hash so that writes spread over many object
  storage prefixes (S3 throughput scales per prefix) and over a few directory
  levels (so listing the root of a file system stays cheap).
* **Non-standard paths** -- root node files, the latest-version hint and the
  lakehouse definition. They are stored as is, because readers must find them
  by name: a root node file name *is* the tree version.

Optimization is a write-side feature: readers always follow stored pointers and
must never try to recover an original name from an optimized path.

Imports from format/: nothing.
"""

from __future__ import annotations

import re
import uuid as _uuid

import mmh3

from trinity_dbapi.errors import VersionOutOfRangeError

__all__ = [
    "CLAIM_SUFFIX",
    "LAKEHOUSE_DEFINITION_PREFIX",
    "LATEST_HINT_FILE",
    "MAX_IDENTIFIER_CHARS",
    "MAX_OBJECT_TYPE_CHARS",
    "MAX_WRITTEN_PATH_BYTES",
    "ROOT_NODE_VERSION_BITS",
    "claim_path",
    "escape_identifier_part",
    "is_lakehouse_definition_path",
    "latest_hint_file",
    "namespace_definition_path",
    "new_lakehouse_definition_path",
    "new_node_file_path",
    "node_file_name",
    "object_definition_path",
    "optimize_path",
    "root_node_file_name",
    "root_node_version",
    "table_definition_path",
    "view_definition_path",
]

#: Number of hash bits used as the optimized prefix, grouped 4/4/4/8.
_PREFIX_BITS = 20
_PREFIX_GROUPS = (4, 4, 4, 8)

#: Root node file names hold the version as this many binary digits.
ROOT_NODE_VERSION_BITS = 32
_MAX_ROOT_VERSION = (1 << ROOT_NODE_VERSION_BITS) - 1
_ROOT_NODE_RE = re.compile(r"_([01]{32})\.arrow")

#: Hint file naming the presumably latest root node version (stored as is).
LATEST_HINT_FILE = "_latest_hint.txt"

#: Lakehouse definition files are ``_lakehouse_def_<uuid4>.binpb`` (stored as is).
LAKEHOUSE_DEFINITION_PREFIX = "_lakehouse_def_"
_UUID_PATTERN = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_LAKEHOUSE_DEF_RE = re.compile(re.escape(LAKEHOUSE_DEFINITION_PREFIX) + _UUID_PATTERN + r"\.binpb")
_UUID_RE = re.compile(_UUID_PATTERN)

#: Characters kept verbatim in the identifier part of a definition file name;
#: everything else is percent-encoded (UTF-8 bytes, ``%XX`` upper-case hex).
_SAFE_IDENTIFIER_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-"
)

#: The identifier only helps humans browse storage (the UUID makes the name
#: unique), so it is cut to this many characters to bound the path length.
MAX_IDENTIFIER_CHARS = 64

#: Object types are internal constants such as ``table`` or ``namespace``.
MAX_OBJECT_TYPE_CHARS = 16
_OBJECT_TYPE_RE = re.compile(rf"[a-z][a-z0-9_]{{0,{MAX_OBJECT_TYPE_CHARS - 1}}}")

# Optimized prefix "bbbb/bbbb/bbbb/bbbbbbbb" plus the joining "-".
_OPTIMIZED_PREFIX_CHARS = _PREFIX_BITS + len(_PREFIX_GROUPS) - 1 + 1
_UUID_CHARS = 36

#: Upper bound, in bytes, of any path this module writes (all paths are ASCII).
#: A lakehouse's ``file_name_max_size_bytes`` must be at least this large.
MAX_WRITTEN_PATH_BYTES = (
    _OPTIMIZED_PREFIX_CHARS
    + MAX_OBJECT_TYPE_CHARS
    + 1
    + MAX_IDENTIFIER_CHARS
    + 1
    + _UUID_CHARS
    + len(".binpb")
)


def optimize_path(original: str) -> str:
    """Turn an original file path into its optimized storage path.

    The prefix is the 20 most significant bits of the unsigned 32-bit murmur3
    (x86, seed 0) hash of the UTF-8 path, written as binary digits and split
    4/4/4/8 by ``/``; then ``-``; then the original path with every ``/``
    replaced by ``-``.

    Args:
        original: The original relative file path, e.g. ``my/path/file.binpb``.

    Returns:
        The optimized path, e.g. ``0111/0010/1011/01000110-my-path-file.binpb``.

    Raises:
        ValueError: If ``original`` is empty or starts with ``/``.
    """
    if not original or original.startswith("/"):
        raise ValueError(f"cannot optimize {original!r}: expected a non-empty relative path")
    digest = mmh3.hash(original.encode("utf-8"), 0, signed=False)
    bits = format(digest, "032b")[:_PREFIX_BITS]
    groups = []
    start = 0
    for width in _PREFIX_GROUPS:
        groups.append(bits[start : start + width])
        start += width
    return "/".join(groups) + "-" + original.replace("/", "-")


def node_file_name(uuid: str) -> str:
    """Return the original (unoptimized) name of a non-root node file.

    Args:
        uuid: The node file's version 4 UUID in canonical text form.

    Returns:
        ``node-<uuid>.arrow``.
    """
    return f"node-{_check_uuid(uuid)}.arrow"


def new_node_file_path() -> str:
    """Return the optimized path of a new non-root node file with a fresh UUID."""
    return optimize_path(node_file_name(str(_uuid.uuid4())))


def escape_identifier_part(name: str) -> str:
    """Percent-encode an object name for use inside a definition file name.

    Object names may hold ``/``, ``%``, ``:`` or any non-ASCII character. All
    characters outside ``[A-Za-z0-9_.+-]`` are replaced by the ``%XX`` escapes
    of their UTF-8 bytes (``%`` itself becomes ``%25``), so the result is
    plain ASCII, free of ``/`` and safe on every storage.

    Args:
        name: An object name.

    Returns:
        The escaped name.
    """
    out = []
    for char in name:
        if char in _SAFE_IDENTIFIER_CHARS:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


def _truncate_identifier(identifier: str) -> str:
    """Cut an escaped identifier to MAX_IDENTIFIER_CHARS without splitting a ``%XX``."""
    if len(identifier) <= MAX_IDENTIFIER_CHARS:
        return identifier
    cut = identifier[:MAX_IDENTIFIER_CHARS]
    percent = cut.rfind("%", len(cut) - 2)
    return cut[:percent] if percent != -1 else cut


def object_definition_path(
    object_type: str, object_identifier: str, uuid: str | None = None
) -> str:
    """Return the optimized path of a new object definition file.

    The original name is ``{object_type}-{object_identifier}-{uuid4}.binpb``.
    Escaping works character by character and keeps ``-``, so escaping
    ``f"{a}-{b}"`` equals joining the escaped ``a`` and ``b`` with ``-``.

    Args:
        object_type: Lower-case object type, e.g. ``table`` or ``namespace``.
        object_identifier: Human-readable identifier; characters outside
            ``[A-Za-z0-9_.+-]`` are percent-encoded and the result is cut to
            :data:`MAX_IDENTIFIER_CHARS` characters.
        uuid: The UUID to use; a fresh version 4 UUID when omitted.

    Returns:
        The optimized, relative path of the definition file.

    Raises:
        ValueError: If ``object_type`` is not a short lower-case word or
            ``uuid`` is not a canonical lower-case UUID.
    """
    return optimize_path(_definition_file_name(object_type, object_identifier, uuid))


def _definition_file_name(object_type: str, object_identifier: str, uuid: str | None) -> str:
    """Build the original (unoptimized) definition file name."""
    if not _OBJECT_TYPE_RE.fullmatch(object_type):
        raise ValueError(
            f"object type {object_type!r} must be 1..{MAX_OBJECT_TYPE_CHARS} characters "
            "of [a-z0-9_] starting with a letter"
        )
    identifier = _truncate_identifier(escape_identifier_part(object_identifier))
    the_uuid = _check_uuid(uuid) if uuid is not None else str(_uuid.uuid4())
    return f"{object_type}-{identifier}-{the_uuid}.binpb"


def table_definition_path(namespace: str, table: str, uuid: str | None = None) -> str:
    """Return the optimized path of a new table definition file.

    Follows the seed example: table ``t1`` in namespace ``ns1`` gives the
    original name ``table-t1-ns1-<uuid>.binpb``.

    Args:
        namespace: The namespace name.
        table: The table name.
        uuid: The UUID to use; a fresh version 4 UUID when omitted.

    Returns:
        The optimized, relative path of the definition file.
    """
    return object_definition_path("table", f"{table}-{namespace}", uuid)


def namespace_definition_path(namespace: str, uuid: str | None = None) -> str:
    """Return the optimized path of a new namespace definition file.

    Args:
        namespace: The namespace name.
        uuid: The UUID to use; a fresh version 4 UUID when omitted.

    Returns:
        The optimized path of ``namespace-<escaped namespace>-<uuid>.binpb``.
    """
    return object_definition_path("namespace", namespace, uuid)


def view_definition_path(namespace: str, view: str, uuid: str | None = None) -> str:
    """Return the optimized path of a new view definition file.

    Named as a table's: view ``v1`` in namespace ``ns1`` gives the original
    name ``view-v1-ns1-<uuid>.binpb``.

    Args:
        namespace: The namespace name.
        view: The view name.
        uuid: The UUID to use; a fresh version 4 UUID when omitted.

    Returns:
        The optimized, relative path of the definition file.
    """
    return object_definition_path("view", f"{view}-{namespace}", uuid)


def root_node_file_name(version: int, folder: str = "") -> str:
    """Return the root node file name of a tree version.

    ``folder`` is a branch's folder (``_branches/<uuid4>/``; docs/format.md,
    "Branches"), prefixed as is; main's roots (the default) sit at the root.

    The name is ``_`` + the 32-bit binary of ``version`` reversed + ``.arrow``
    (least significant bit first), e.g. version 100 gives
    ``_00100110000000000000000000000000.arrow``.

    Args:
        version: The root node version, 0..2**32-1.

    Returns:
        The file name, stored as is (never optimized).

    Raises:
        VersionOutOfRangeError: If ``version`` is not an int in range.
    """
    # bool is an int subclass, but True is never a meaningful version.
    if isinstance(version, bool) or not isinstance(version, int):
        raise VersionOutOfRangeError(version)
    if not 0 <= version <= _MAX_ROOT_VERSION:
        raise VersionOutOfRangeError(version)
    return folder + "_" + format(version, "032b")[::-1] + ".arrow"


def latest_hint_file(folder: str = "") -> str:
    """The latest-version hint of the chain whose roots live in ``folder`` ("" for main)."""
    return folder + LATEST_HINT_FILE


def root_node_version(file_name: str) -> int | None:
    """Return the version encoded in a root node file name.

    Args:
        file_name: A file name relative to the lakehouse root.

    Returns:
        The version, or None if ``file_name`` is not a root node file name.
    """
    match = _ROOT_NODE_RE.fullmatch(file_name)
    if match is None:
        return None
    return int(match.group(1)[::-1], 2)


#: Suffix of claim files (an extension of the format: docs/format.md, "Claim files").
CLAIM_SUFFIX = ".claim"


def claim_path(table_format: str, group: str) -> str:
    """Return the optimized path of the claim file of a table format's group.

    A claim file records that this lakehouse created the group (a managed
    table's dataset) before any file of the group was written, so garbage
    collection can tell the group's files from another program's, even when
    no commit ever pointed at them. The original name is
    ``claim-<escaped table format>-<escaped group>.claim``: one name per
    group, so writing it twice is harmless.

    Args:
        table_format: the table format, as table definitions name it.
        group: the group, e.g. a dataset UUID.

    Returns:
        The optimized, relative path of the claim file.
    """
    format_part = escape_identifier_part(table_format)
    group_part = escape_identifier_part(group)
    return optimize_path(f"claim-{format_part}-{group_part}{CLAIM_SUFFIX}")


def new_lakehouse_definition_path() -> str:
    """Return ``_lakehouse_def_<uuid4>.binpb`` with a fresh UUID (not optimized)."""
    return f"{LAKEHOUSE_DEFINITION_PREFIX}{_uuid.uuid4()}.binpb"


def is_lakehouse_definition_path(path: str) -> bool:
    """Tell whether ``path`` is a lakehouse definition file name.

    Args:
        path: A path relative to the lakehouse root.

    Returns:
        True for ``_lakehouse_def_<lower-case uuid>.binpb``.
    """
    return _LAKEHOUSE_DEF_RE.fullmatch(path) is not None


def _check_uuid(value: str) -> str:
    """Return ``value`` if it is a canonical lower-case UUID, else raise ValueError."""
    if not isinstance(value, str) or not _UUID_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not a canonical lower-case UUID")
    return value
