"""Shared pieces of the object definitions: frozen maps, field checks, ``.binpb`` I/O.

* :class:`FrozenMap` -- the immutable, hashable mapping every definition
  stores its maps in.
* ``field_error``, ``check_int``, ``check_str``, ``_check_utf8``, ``string_map``,
  ``uint64_map`` and ``set_field`` -- field checks and normalization used by the
  definitions' ``__post_init__`` and ``validate``; ``check_new_keys``, the
  rule for new names applied to a map's new keys (``check_new_names``).
* ``_parse`` and ``_corrupt`` -- turn problems with a file into
  :class:`~trinity_dbapi.errors.CorruptFileError` naming the file.
* :class:`BinpbDefinition` -- the ``to_bytes`` / ``from_bytes`` pair shared by
  the lakehouse, namespace and table definitions.

Imports from format/definitions/: nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from google.protobuf.message import DecodeError, Message

from trinity_dbapi.errors import CorruptFileError, InvalidDefinitionError, InvalidNameError
from trinity_dbapi.format import names

if TYPE_CHECKING:
    # Only for type checking: typing.Self is Python 3.11+, and typing_extensions
    # is not a runtime dependency (annotations are not evaluated at runtime).
    from typing_extensions import Self

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1

K = TypeVar("K")
V = TypeVar("V")


# --- immutable mapping ----------------------------------------------------------


class FrozenMap(Mapping[K, V], Generic[K, V]):
    """An immutable, hashable mapping with keys kept in sorted order.

    Equal to any mapping with the same items (including plain dicts), so
    definitions compare equal regardless of how their maps were built.
    """

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[K, V] | None = None) -> None:
        source = dict(items) if items is not None else {}
        self._items: dict[K, V] = {key: source[key] for key in sorted(source)}  # type: ignore[type-var]
        self._hash: int | None = None

    def __getitem__(self, key: K) -> V:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._items.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._items == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"


EMPTY: FrozenMap[Any, Any] = FrozenMap()


# --- field checks ---------------------------------------------------------------


def field_error(field_name: str, message: str) -> InvalidDefinitionError:
    return InvalidDefinitionError(field_name, message)


def check_int(
    field_name: str, value: object, minimum: int, maximum: int, *, label: str | None = None
) -> int:
    """Return ``value`` if it is an int (not bool) in ``minimum..maximum``.

    ``label`` names the checked item in the message when it is a part of the
    field (a map key or entry); the error always carries ``field_name``.
    """
    what = label or field_name
    if isinstance(value, bool) or not isinstance(value, int):
        raise field_error(field_name, f"{what} must be an int, got {value!r}")
    if not minimum <= value <= maximum:
        raise field_error(
            field_name,
            f"{what} is {value} but must be between {minimum} and {maximum}; "
            "choose a value in that range",
        )
    return value


def check_str(field_name: str, value: object, *, required: bool) -> str:
    """Return ``value`` if it is a UTF-8 encodable str (non-empty when ``required``)."""
    if not isinstance(value, str):
        raise field_error(field_name, f"{field_name} must be a str, got {value!r}")
    if required and not value:
        raise field_error(field_name, f"{field_name} is required and must not be empty")
    _check_utf8(field_name, value)
    return value


def _check_utf8(field_name: str, value: str) -> None:
    """Protobuf strings must be valid UTF-8, so lone surrogates are refused early."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise field_error(
            field_name, f"{field_name} value {value!r} is not valid Unicode (lone surrogate)"
        ) from None


def string_map(field_name: str, value: object) -> FrozenMap[str, str]:
    """Freeze a ``str -> str`` mapping, checking its types."""
    if not isinstance(value, Mapping):
        raise field_error(
            field_name, f"{field_name} must be a mapping of str to str, got {value!r}"
        )
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise field_error(
                field_name,
                f"{field_name} must map str to str, but has {key!r}: {item!r}; "
                "convert keys and values to strings",
            )
        _check_utf8(field_name, key)
        _check_utf8(field_name, item)
    return value if isinstance(value, FrozenMap) else FrozenMap(value)


def check_new_keys(
    kind: str, where: str, keys: Mapping[str, object], previous: Mapping[str, object]
) -> None:
    """Check the keys of ``keys`` that ``previous`` lacks by the rule for new names.

    Keys already stored are left alone: a definition an older release wrote
    keeps its keys through every later change (docs/format.md, Object names).
    """
    for key in keys:
        if key not in previous:
            names.check_new_name(key, kind, where)


def uint64_map(field_name: str, value: object) -> FrozenMap[int, int]:
    """Freeze an ``int -> int`` mapping of uint64 values."""
    if not isinstance(value, Mapping):
        raise field_error(
            field_name, f"{field_name} must be a mapping of int to int, got {value!r}"
        )
    for key, item in value.items():
        check_int(field_name, key, 0, UINT64_MAX, label=f"{field_name} key")
        check_int(field_name, item, 0, UINT64_MAX, label=f"{field_name}[{key!r}]")
    return value if isinstance(value, FrozenMap) else FrozenMap(value)


def set_field(obj: object, name: str, value: object) -> None:
    """Normalize a field of a frozen dataclass during __post_init__."""
    object.__setattr__(obj, name, value)


def _parse(message: Any, data: bytes, path: str, what: str) -> None:
    """Parse ``data`` into ``message`` or raise CorruptFileError naming ``path``."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what} data must be bytes, got {type(data).__name__}")
    try:
        message.ParseFromString(bytes(data))
    except DecodeError as exc:
        raise CorruptFileError(path, f"it is not a valid {what} protobuf message ({exc})") from None


def _corrupt(path: str, what: str, exc: Exception) -> CorruptFileError:
    return CorruptFileError(path, f"it holds an invalid {what}: {exc}")


# --- .binpb files ---------------------------------------------------------------


class BinpbDefinition:
    """Base of the definitions stored as ``.binpb`` files (lakehouse, namespace, table).

    A subclass names its protobuf message class in ``_message_type`` and what
    its file holds, for error messages, in ``_what`` (e.g. ``"table
    definition"``); it provides ``to_proto`` and ``from_proto``.
    """

    _message_type: ClassVar[type[Message]]
    _what: ClassVar[str]

    if TYPE_CHECKING:

        def to_proto(self) -> Message: ...

        @classmethod
        def from_proto(cls, message: Any) -> Self: ...

    def to_bytes(self) -> bytes:
        """Serialize to the ``.binpb`` bytes (deterministic map order)."""
        return self.to_proto().SerializeToString(deterministic=True)

    @classmethod
    def from_bytes(cls, data: bytes, path: str) -> Self:
        """Parse a definition file.

        Args:
            data: The file content.
            path: The file's path, for error messages.

        Returns:
            The definition, with defaults applied to unset fields.

        Raises:
            CorruptFileError: If the bytes do not parse or hold invalid values.
            UnsupportedFormatVersionError: For a lakehouse definition of another
                format major version (not wrapped in CorruptFileError).
        """
        message = cls._message_type()
        _parse(message, data, path, cls._what)
        try:
            return cls.from_proto(message)
        except (InvalidDefinitionError, InvalidNameError) as exc:
            raise _corrupt(path, cls._what, exc) from None
