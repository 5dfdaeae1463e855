"""Locations: a path relative to the lakehouse root, or a fully qualified URI.

Seed 000 lets a pointer be either. Pointers inside one lakehouse are relative
paths, so a lakehouse can be copied or replicated as is. Fully qualified URIs
appear where an export copies only part of a tree: the copied nodes point back
at the nodes and definitions that stayed in the source lakehouse.

Following a relative pointer found in a node read through a URI needs that
node's lakehouse root. It is derived from the standard file names of seed 000:
a path-optimized file sits four segments below its root
(``dddd/dddd/dddd/dddddddd-<name>``), a root node or lakehouse definition file
directly in it.

Imports from format/: nothing.
"""

from __future__ import annotations

import re

from trinity_dbapi.errors import InvalidURIError
from trinity_dbapi.storage.uri import check_path

_BITS4 = re.compile(r"[01]{4}")
_OPTIMIZED_NAME = re.compile(r"[01]{8}-.+")


def is_uri(location: str) -> bool:
    """Whether ``location`` is a fully qualified URI rather than a relative path."""
    return "://" in location


def qualify(root_uri: str, location: str) -> str:
    """``location`` as a fully qualified URI, relative paths taken from ``root_uri``."""
    return location if is_uri(location) else root_uri + location


def split_uri(uri: str) -> tuple[str, str]:
    """Split a file URI into its lakehouse root URI (ending in ``/``) and path.

    Raises:
        InvalidURIError: the URI names no standard TrinityLake file.
    """
    head, _, name = uri.rpartition("/")
    if name.startswith("_"):
        return head + "/", name
    parts = uri.split("/")
    if (
        len(parts) >= 8
        and all(_BITS4.fullmatch(p) for p in parts[-4:-1])
        and _OPTIMIZED_NAME.fullmatch(parts[-1])
    ):
        return "/".join(parts[:-4]) + "/", "/".join(parts[-4:])
    raise InvalidURIError(
        uri,
        f"{uri!r} names no standard TrinityLake file (a path-optimized file or a root "
        "node or lakehouse definition file), so its lakehouse root is unknown",
    )


def location_problem(location: str) -> str | None:
    """Why ``location``, read from a lakehouse file, cannot be followed (None: it can).

    A relative path must be a valid storage path (no ``.``, ``..``, empty
    segments or control characters); a URI must name a standard TrinityLake
    file. Readers check pointers when they read the file holding them, so a
    damaged pointer is reported as a damaged file, not as bad user input.
    """
    try:
        if is_uri(location):
            split_uri(location)
        else:
            check_path(location)
    except InvalidURIError as exc:
        return str(exc)
    return None
