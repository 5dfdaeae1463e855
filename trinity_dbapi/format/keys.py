"""Keys of the TrinityLake tree (the seed "Key Encoding").

Two kinds of keys live in tree nodes:

* **System internal keys** (:data:`SYSTEM_KEYS`) such as ``lakehouse_def``:
  fixed lower-case words that never take part in key ordering.
* **Object keys**: ``<schema id><encoded namespace>[<encoded table>]``. The
  schema ID is a 4-character base64-style string (:func:`encode_schema_id`);
  each encoded name is a space, the name, then spaces up to the lakehouse's
  maximum name size in bytes (:func:`encode_name`).

Because names never contain characters at or below the space (0x20), padding
with spaces makes key order equal ``(namespace, table)`` order, and all tables
of a namespace share the prefix :func:`namespace_tables_prefix`, so they are
contiguous in the tree. Keys are compared as Python ``str`` (code point order),
which for valid UTF-8 is the same as comparing their UTF-8 bytes.

Imports from format/: nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from trinity_dbapi.errors import InvalidNameError

__all__ = [
    "CREATED_AT_MILLIS",
    "LAKEHOUSE_DEF",
    "LAKEHOUSE_SCHEMA_ID",
    "MAX_SCHEMA_ID",
    "NAMESPACE_SCHEMA_ID",
    "N_KEYS",
    "PREVIOUS_ROOT",
    "ROLLBACK_FROM_ROOT",
    "SCHEMA_ID_ALPHABET",
    "SCHEMA_ID_CHARS",
    "SYSTEM_KEYS",
    "TABLE_SCHEMA_ID",
    "VIEW_SCHEMA_ID",
    "KeyLimits",
    "ObjectId",
    "check_name_characters",
    "decode_key",
    "decode_name",
    "decode_schema_id",
    "encode_name",
    "encode_schema_id",
    "namespace_key",
    "namespace_tables_prefix",
    "namespace_views_prefix",
    "object_key",
    "table_key",
    "validate_object_name",
    "view_key",
]

# --- system internal keys -----------------------------------------------------

#: Pointer to the lakehouse definition file (root node only).
LAKEHOUSE_DEF = "lakehouse_def"
#: Pointer to the previous root node file (root node only).
PREVIOUS_ROOT = "previous_root"
#: Root node this root was rolled back from (only on roots made by a rollback).
ROLLBACK_FROM_ROOT = "rollback_from_root"
#: Creation time of a node, milliseconds since the Unix epoch (every node).
CREATED_AT_MILLIS = "created_at_millis"
#: Number of keys in a node's key table (every node).
N_KEYS = "n_keys"
#: ID of the transaction that made a root version (root node only). An
#: extension of the seed's list: the root buffer holds that transaction's
#: messages, but a version made by compaction or a definition change has
#: none, and the conflict check must know it changed no key.
TXN_ID = "txn_id"
#: On the root of a lakehouse made by a snapshot export: the version of the
#: source lakehouse it replicates (an extension, like ``txn_id``).
EXPORTED_FROM_VERSION = "exported_from_version"
#: Who committed a root version (root node only; an extension, like
#: ``txn_id``, prefixed as the project's own so that no key the seeds may add
#: later can mean something else): ``connect(..., author=...)``. Absent when
#: the committer named nobody, as DuckLake leaves a snapshot's author NULL.
AUTHOR = "trinity.author"
#: The commit message of a root version (root node only; an extension):
#: ``SET COMMIT MESSAGE 'text'`` in the transaction that made it.
COMMIT_MESSAGE = "trinity.commit_message"
#: Set on the last root of a dropped branch (an extension): DROP BRANCH
#: seals the branch's chain with it, so a commit racing the drop loses the
#: race for that version and learns the branch is gone, instead of landing
#: where nothing reaches it (docs/format.md, "Branches").
BRANCH_DROPPED = "trinity.branch_dropped"
#: Every system internal key this implementation writes.
SYSTEM_KEYS = frozenset(
    {LAKEHOUSE_DEF, PREVIOUS_ROOT, ROLLBACK_FROM_ROOT, CREATED_AT_MILLIS, N_KEYS, TXN_ID}
)

# --- schema IDs -----------------------------------------------------------------

LAKEHOUSE_SCHEMA_ID = 0
NAMESPACE_SCHEMA_ID = 1
TABLE_SCHEMA_ID = 2
#: Upstream TrinityLake's view object; its keys are laid out as a table's.
VIEW_SCHEMA_ID = 3

#: The seed's base64 alphabet: digit value = index in this string.
SCHEMA_ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_DIGIT_VALUES = {char: index for index, char in enumerate(SCHEMA_ID_ALPHABET)}
#: Every encoded schema ID is exactly this many characters long.
SCHEMA_ID_CHARS = 4
_PAD = "="
#: Largest schema ID that fits in 4 base-64 digits.
MAX_SCHEMA_ID = 64**SCHEMA_ID_CHARS - 1


def encode_schema_id(schema_id: int) -> str:
    """Encode an object definition schema ID as 4 base64-style characters.

    The ID is written in base 64 with the seed's alphabet, most significant
    digit first and without leading ``A`` (zero) digits, then right-padded
    with ``=`` to 4 characters: 0 -> ``A===``, 4 -> ``E===``, 63 -> ``/===``,
    64 -> ``BA==``, 4096 -> ``BAA=``, 16777215 -> ``////``.

    Args:
        schema_id: An int in 0..16777215.

    Returns:
        The 4-character encoding.

    Raises:
        TypeError: If ``schema_id`` is not an int.
        ValueError: If ``schema_id`` is out of range.
    """
    if isinstance(schema_id, bool) or not isinstance(schema_id, int):
        raise TypeError(f"schema ID must be an int, got {schema_id!r}")
    if not 0 <= schema_id <= MAX_SCHEMA_ID:
        raise ValueError(f"schema ID {schema_id} is outside 0..{MAX_SCHEMA_ID}")
    digits = []
    value = schema_id
    while True:
        value, digit = divmod(value, 64)
        digits.append(SCHEMA_ID_ALPHABET[digit])
        if value == 0:
            break
    return "".join(reversed(digits)).ljust(SCHEMA_ID_CHARS, _PAD)


def decode_schema_id(encoded: str) -> int:
    """Decode a schema ID written by :func:`encode_schema_id` (exact inverse).

    Args:
        encoded: The 4-character encoding.

    Returns:
        The schema ID.

    Raises:
        ValueError: If ``encoded`` is not a canonical encoding (wrong length,
            a character outside the alphabet, ``=`` before a digit, no digit,
            or a leading zero digit ``A`` in a multi-digit ID).
    """
    if not isinstance(encoded, str) or len(encoded) != SCHEMA_ID_CHARS:
        raise ValueError(f"encoded schema ID {encoded!r} must be {SCHEMA_ID_CHARS} characters")
    digits = encoded.rstrip(_PAD)
    if not digits:
        raise ValueError(f"encoded schema ID {encoded!r} has no digit")
    if len(digits) > 1 and digits[0] == SCHEMA_ID_ALPHABET[0]:
        raise ValueError(f"encoded schema ID {encoded!r} has a leading zero digit 'A'")
    value = 0
    for char in digits:
        if char not in _DIGIT_VALUES:
            raise ValueError(
                f"encoded schema ID {encoded!r} holds {char!r}, which is not a base64 digit "
                "(padding '=' may only appear at the end)"
            )
        value = value * 64 + _DIGIT_VALUES[char]
    return value


_NAMESPACE_PREFIX = encode_schema_id(NAMESPACE_SCHEMA_ID)
_TABLE_PREFIX = encode_schema_id(TABLE_SCHEMA_ID)
_VIEW_PREFIX = encode_schema_id(VIEW_SCHEMA_ID)

# --- object names -------------------------------------------------------------

_PAD_CHAR = " "
_FIX_HINT = "choose a name without control characters, spaces or DEL"


#: Any character :func:`check_name_characters` refuses: one C-speed search
#: decides the common case (a valid name); only a refusal walks the name to
#: say where. Catalog listings decode every key they return, so this is hot.
_REFUSED = re.compile("[\x00-\x20\x7f\ud800-\udfff]")


def _forbidden(char: str) -> bool:
    """Control characters 0x00-0x1F, the space 0x20 and DEL 0x7F are forbidden."""
    code = ord(char)
    return code <= 0x20 or code == 0x7F


def check_name_characters(name: str, kind: str) -> None:
    """Check an object name's type and characters, but not its size.

    Definitions use this: the byte limit depends on the lakehouse and is only
    checked when a key is encoded (:func:`validate_object_name`).

    Args:
        name: The object name.
        kind: The object kind for messages, e.g. ``namespace`` or ``table``.

    Raises:
        InvalidNameError: If the name is not a str, is empty, holds a forbidden
            character, or cannot be encoded as UTF-8 (a lone surrogate).
    """
    if not isinstance(name, str):
        raise InvalidNameError(
            repr(name), f"{kind} name must be a str, got {type(name).__name__} {name!r}"
        )
    if not name:
        raise InvalidNameError(name, f"{kind} name must not be empty; give the {kind} a name")
    if _REFUSED.search(name) is None:
        return
    for position, char in enumerate(name):
        if _forbidden(char):
            raise InvalidNameError(
                name,
                f"invalid {kind} name {name!r}: character U+{ord(char):04X} at position "
                f"{position} is not allowed (object names may not contain control characters "
                f"U+0000..U+001F, the space U+0020 or DEL U+007F); {_FIX_HINT}",
            )
        if 0xD800 <= ord(char) <= 0xDFFF:
            raise InvalidNameError(
                name,
                f"invalid {kind} name {name!r}: lone surrogate U+{ord(char):04X} at position "
                f"{position} cannot be encoded as UTF-8; use a valid Unicode string",
            )


def validate_object_name(name: str, max_bytes: int, kind: str) -> None:
    """Check that ``name`` may be used as an object name in a key.

    Args:
        name: The object name.
        max_bytes: The lakehouse's maximum size for this kind of name, in
            UTF-8 bytes.
        kind: The object kind for messages, e.g. ``namespace`` or ``table``.

    Raises:
        InvalidNameError: If the name is not a str, is empty, holds a forbidden
            character (reported as U+XXXX with its position), or is longer
            than ``max_bytes`` UTF-8 bytes.
    """
    check_name_characters(name, kind)
    size = len(name.encode("utf-8"))
    if size > max_bytes:
        raise InvalidNameError(
            name,
            f"invalid {kind} name {name!r}: it is {size} bytes in UTF-8 but this lakehouse "
            f"allows at most {max_bytes} bytes for a {kind} name; choose a shorter name "
            f"(or create the lakehouse with a larger {kind}_name_max_size_bytes)",
        )


def encode_name(name: str, max_bytes: int) -> str:
    """Encode an object name for use in a key.

    The result is a space, the name, then ``max_bytes - len(utf8(name))``
    spaces, so its UTF-8 size is always ``max_bytes + 1``: ``default`` with
    ``max_bytes=8`` gives ``" default "``.

    Args:
        name: A valid object name (see :func:`validate_object_name`).
        max_bytes: The maximum name size in UTF-8 bytes.

    Returns:
        The encoded name.

    Raises:
        InvalidNameError: If the name is invalid or too long.
    """
    validate_object_name(name, max_bytes, "object")
    return _PAD_CHAR + name + _PAD_CHAR * (max_bytes - len(name.encode("utf-8")))


def decode_name(encoded: str) -> str:
    """Invert :func:`encode_name`.

    Args:
        encoded: An encoded name: a space, the name, padding spaces.

    Returns:
        The name.

    Raises:
        InvalidNameError: If ``encoded`` does not start with a space or holds
            no name.
    """
    if not encoded.startswith(_PAD_CHAR):
        raise InvalidNameError(encoded, f"encoded name {encoded!r} must start with a space")
    name = encoded[1:].rstrip(_PAD_CHAR)
    check_name_characters(name, "encoded object")
    return name


# --- object keys --------------------------------------------------------------


@dataclass(frozen=True)
class KeyLimits:
    """Maximum name sizes, in UTF-8 bytes, taken from the lakehouse definition."""

    namespace_max_bytes: int
    table_max_bytes: int


@dataclass(frozen=True)
class ObjectId:
    """The identity of an object stored under an object key.

    Attributes:
        kind: ``namespace``, ``table`` or ``view``.
        namespace: The namespace name (the table's or view's namespace).
        table: The table or view name, None for namespaces.
    """

    kind: Literal["namespace", "table", "view"]
    namespace: str
    table: str | None = None


def namespace_key(namespace: str, limits: KeyLimits) -> str:
    """Return the key of a namespace: ``B===`` + its encoded name.

    Raises:
        InvalidNameError: If the namespace name is invalid or too long.
    """
    validate_object_name(namespace, limits.namespace_max_bytes, "namespace")
    return _NAMESPACE_PREFIX + encode_name(namespace, limits.namespace_max_bytes)


def namespace_tables_prefix(namespace: str, limits: KeyLimits) -> str:
    """Return the prefix shared by the keys of every table in ``namespace``.

    Raises:
        InvalidNameError: If the namespace name is invalid or too long.
    """
    validate_object_name(namespace, limits.namespace_max_bytes, "namespace")
    return _TABLE_PREFIX + encode_name(namespace, limits.namespace_max_bytes)


def table_key(namespace: str, table: str, limits: KeyLimits) -> str:
    """Return the key of a table: ``C===`` + encoded namespace + encoded table.

    Raises:
        InvalidNameError: If either name is invalid or too long.
    """
    validate_object_name(table, limits.table_max_bytes, "table")
    prefix = namespace_tables_prefix(namespace, limits)
    return prefix + encode_name(table, limits.table_max_bytes)


def namespace_views_prefix(namespace: str, limits: KeyLimits) -> str:
    """Return the prefix shared by the keys of every view in ``namespace``.

    Raises:
        InvalidNameError: If the namespace name is invalid or too long.
    """
    validate_object_name(namespace, limits.namespace_max_bytes, "namespace")
    return _VIEW_PREFIX + encode_name(namespace, limits.namespace_max_bytes)


def view_key(namespace: str, view: str, limits: KeyLimits) -> str:
    """Return the key of a view: ``D===`` + encoded namespace + encoded view name.

    A view name obeys the table name limit: views and tables share one set
    of names per namespace.

    Raises:
        InvalidNameError: If either name is invalid or too long.
    """
    validate_object_name(view, limits.table_max_bytes, "view")
    prefix = namespace_views_prefix(namespace, limits)
    return prefix + encode_name(view, limits.table_max_bytes)


def object_key(obj_id: ObjectId, limits: KeyLimits) -> str:
    """Return the key of the object identified by ``obj_id``.

    Raises:
        InvalidNameError: If a name is invalid or too long, or a table ID has
            no table name.
    """
    if obj_id.kind == "namespace":
        return namespace_key(obj_id.namespace, limits)
    if obj_id.table is None:
        raise InvalidNameError("", f"{obj_id.kind} object ID {obj_id!r} has no name")
    if obj_id.kind == "view":
        return view_key(obj_id.namespace, obj_id.table, limits)
    return table_key(obj_id.namespace, obj_id.table, limits)


def _split_encoded(key: str, data: bytes, start: int, max_bytes: int, kind: str) -> str:
    """Decode the encoded name of ``kind`` at byte ``start`` of ``data``."""
    chunk = data[start : start + max_bytes + 1]
    if len(chunk) != max_bytes + 1:
        raise InvalidNameError(key, f"malformed object key {key!r}: its {kind} name is cut short")
    try:
        encoded = chunk.decode("utf-8")
    except UnicodeDecodeError:
        # The field boundary fell inside a multi-byte character: the key was
        # built with other limits than the ones given.
        raise InvalidNameError(
            key, f"malformed object key {key!r}: its {kind} name does not end on a character"
        ) from None
    name = decode_name(encoded)
    validate_object_name(name, max_bytes, kind)
    return name


def table_name_under(key: str, prefix: str, limits: KeyLimits) -> str:
    """The table name of ``key``, a key found under ``prefix`` (:func:`namespace_tables_prefix`).

    What :func:`decode_key` returns as ``.table``, faster: a listing of a
    namespace decodes every key it returns. An ASCII key of the right length
    whose name holds no refused character is sliced; any other key goes
    through :func:`decode_key`, which decodes it or says what is wrong.

    Raises:
        InvalidNameError: ``key`` is not a table key for these limits.
    """
    start = len(prefix) + 1
    name = key[start:].rstrip(_PAD_CHAR)
    if (
        key.isascii()
        and len(key) == start + limits.table_max_bytes
        and key.startswith(prefix + _PAD_CHAR)
        and name
        and _REFUSED.search(name) is None
    ):
        return name
    return str(decode_key(key, limits).table)


def is_view_key(key: str) -> bool:
    """Whether ``key`` is a view's key (by its schema ID prefix; not validated further)."""
    return key.startswith(_VIEW_PREFIX)


def is_table_key(key: str) -> bool:
    """Whether ``key`` is a table's key (by its schema ID prefix; not validated further)."""
    return key.startswith(_TABLE_PREFIX)


def decode_key(key: str, limits: KeyLimits) -> ObjectId:
    """Invert :func:`namespace_key`, :func:`table_key` and :func:`view_key`.

    Malformed keys raise :class:`~trinity_dbapi.errors.InvalidNameError`
    (not CorruptFileError: the caller knows which file the key came from and
    can wrap the error with that path).

    Args:
        key: An object key.
        limits: The limits the key was built with.

    Returns:
        The object identity.

    Raises:
        InvalidNameError: If ``key`` is not an object key for these limits
            (unknown schema ID, wrong length, bad padding, bad name).
    """
    data = key.encode("utf-8", "surrogatepass")
    ns_size = limits.namespace_max_bytes + 1
    prefix = key[:SCHEMA_ID_CHARS]
    if prefix == _NAMESPACE_PREFIX:
        expected = SCHEMA_ID_CHARS + ns_size
    elif prefix in (_TABLE_PREFIX, _VIEW_PREFIX):
        expected = SCHEMA_ID_CHARS + ns_size + limits.table_max_bytes + 1
    else:
        raise InvalidNameError(
            key,
            f"malformed object key {key!r}: it does not start with a namespace, table or view "
            "schema ID",
        )
    if len(data) != expected:
        raise InvalidNameError(
            key, f"malformed object key {key!r}: it is {len(data)} bytes, expected {expected}"
        )
    namespace = _split_encoded(key, data, SCHEMA_ID_CHARS, limits.namespace_max_bytes, "namespace")
    if prefix == _NAMESPACE_PREFIX:
        return ObjectId("namespace", namespace)
    kind: Literal["table", "view"] = "view" if prefix == _VIEW_PREFIX else "table"
    name = _split_encoded(key, data, SCHEMA_ID_CHARS + ns_size, limits.table_max_bytes, kind)
    return ObjectId(kind, namespace, name)
