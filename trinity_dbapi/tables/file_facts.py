"""What is known of a data file without reading it: rows, bytes, row groups, value bounds.

Data files are immutable (a new file has a new UUID label), so these facts
never change once the file exists. They are kept in two places:

* **The dataset metadata**, attribute ``metadata["trinity.file_facts"]``: a
  JSON object ``{"<label>": [rows, bytes, row_groups], ...}`` as one string,
  like ``trinity.partition_by``; an entry may carry a fourth element, the
  file's value bounds ``{"<column id>": [min, max], ...}`` for its integer
  and short text columns (:mod:`~trinity_dbapi.tables.value_bounds`), which
  let a point query skip files that cannot hold its value. Every commit that adds files this process
  wrote records theirs, and drops those of the files it removes, so a fresh
  process knows them from the one file it reads anyway: ``count(*)`` and
  ``system.data_files`` read no data file. Seed 004 leaves ``metadata`` free,
  and Kartothek and the seed conformance reader pass over it.
* **The process**: :func:`remember` records what a writer wrote and what a
  footer said, under the storage's ``cache_identity`` (so two users' views
  of one path never mix) and the path, :data:`CACHE_ENTRIES` at most.

A label the attribute does not list (a file written by another process
that did not record it, such as an older release) is simply unknown, and
its footer is read. The attribute is read strictly: anything but the form
above is :class:`~trinity_dbapi.errors.CorruptFileError`, never a wrong count
(:mod:`~trinity_dbapi.tables.metadata_io` checks it with :func:`parse` when it
reads a metadata file).

Imports from tables/: metadata.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from trinity_dbapi.errors import CorruptFileError

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tables.metadata import DatasetMetadata

__all__ = [
    "CACHE_ENTRIES",
    "FACTS_KEY",
    "Bounds",
    "FileFacts",
    "bounds_for_added",
    "cached",
    "cached_bounds",
    "for_added",
    "parse",
    "parse_bounds",
    "recorded",
    "recorded_bounds",
    "recorded_sizes",
    "remember",
    "with_recorded",
]

#: Key of the dataset metadata's ``metadata`` map holding the facts.
FACTS_KEY = "trinity.file_facts"
#: Files whose facts the process remembers (about 100 bytes each).
CACHE_ENTRIES = 200_000

#: ``(record_count, file_size_in_bytes, row_group_count)`` of one data file.
FileFacts = tuple[int, int, int]
#: Column ID (as text) -> ``(min, max)`` of its non-null values in one file,
#: both ints or both strings: every value of the column lies between them.
Bounds = Mapping[str, tuple[Any, Any]]

#: Longest text bound recorded, in characters: keys, not documents.
MAX_TEXT_BOUND = 64

_cache: dict[tuple[str, str], FileFacts] = {}
_bounds: dict[tuple[str, str], Bounds] = {}
_lock = threading.Lock()
_T = TypeVar("_T")


def remember(
    storage: Storage,
    facts: Mapping[str, FileFacts],
    bounds: Mapping[str, Bounds] | None = None,
) -> None:
    """Record the facts (and value bounds) of data files, by path, this process wrote or read."""
    identity = storage.cache_identity
    with _lock:
        if len(_cache) + len(facts) > CACHE_ENTRIES:
            _cache.clear()
            _bounds.clear()
        _cache.update({(identity, path): value for path, value in facts.items()})
        _bounds.update({(identity, path): value for path, value in (bounds or {}).items()})


def _held(
    table: Mapping[tuple[str, str], _T], storage: Storage, paths: Iterable[str]
) -> dict[str, _T]:
    identity = storage.cache_identity
    with _lock:
        found = {path: table.get((identity, path)) for path in paths}
    return {path: value for path, value in found.items() if value is not None}


def cached_bounds(storage: Storage, paths: Iterable[str]) -> dict[str, Bounds]:
    """The value bounds this process holds of ``paths`` (those it holds none of are left out)."""
    return _held(_bounds, storage, paths)


def cached(storage: Storage, paths: Iterable[str]) -> dict[str, FileFacts]:
    """The facts this process holds of ``paths`` (those it holds none of are left out)."""
    return _held(_cache, storage, paths)


def _is_count(value: object) -> bool:
    return type(value) is int and 0 <= value < 2**63


def _bounds_of(label: str, value: object) -> Bounds:
    if not isinstance(value, dict):
        raise ValueError(  # noqa: TRY004 - a parse error
            f"{FACTS_KEY} of label {label!r}: the fourth element must be an object of "
            f"column id -> [min, max], not {str(value)[:80]}"
        )
    bounds: dict[str, tuple[Any, Any]] = {}
    # Every commit parses the facts of every file: the checks are spelled out
    # (no generator per pair) to keep that a fraction of a millisecond a thousand files.
    for column, pair in value.items():
        if type(pair) is list and len(pair) == 2:
            low, high = pair
            kind = type(low)
            fine = kind is type(high) and (
                (kind is int and -(2**63) <= low <= high < 2**63)
                or (kind is str and low <= high and max(len(low), len(high)) <= MAX_TEXT_BOUND)
            )
        else:
            fine = False
        if not fine or not (column.isdigit() and column.isascii()):
            raise ValueError(
                f"{FACTS_KEY} of label {label!r}, column id {column!r}: bounds must be "
                f"[min, max], two integers or two strings of at most {MAX_TEXT_BOUND} "
                f"characters with min <= max, not {str(pair)[:80]}"
            )
        bounds[column] = (low, high)
    return bounds


@lru_cache(maxsize=64)
def _parse(text: str) -> tuple[Mapping[str, FileFacts], Mapping[str, Bounds]]:
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{FACTS_KEY} is not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise ValueError(f"{FACTS_KEY} must be a JSON object of label -> facts")  # noqa: TRY004 - a parse error
    facts: dict[str, FileFacts] = {}
    bounds: dict[str, Bounds] = {}
    for label, value in body.items():
        counts = value[:3] if isinstance(value, list) else None
        fine = counts is not None and len(value) in (3, 4) and all(map(_is_count, counts))
        if not fine:
            raise ValueError(
                f"{FACTS_KEY} of label {label!r} must be [rows, bytes, row_groups] "
                f"(non-negative integers) and optionally the file's value bounds, "
                f"not {str(value)[:80]}"
            )
        facts[label] = (value[0], value[1], value[2])
        if len(value) == 4:
            if not isinstance(value[3], dict):
                _bounds_of(label, value[3])  # raises, saying what the element must be
            bounds[label] = value[3]  # checked by _checked_bounds, when a query uses them
    return MappingProxyType(facts), MappingProxyType(bounds)


@lru_cache(maxsize=64)
def _checked_bounds(text: str) -> Mapping[str, Bounds]:
    # Apart from _parse: every commit parses every file's facts, while the
    # bounds are needed only by a query that prunes by them.
    return MappingProxyType(
        {label: _bounds_of(label, raw) for label, raw in _parse(text)[1].items()}
    )


def parse(text: str) -> Mapping[str, FileFacts]:
    """The facts an attribute's text records, by label.

    Raises:
        ValueError: the text is not of the documented form (the message says how).
    """
    return _parse(text)[0]


def parse_bounds(text: str) -> Mapping[str, Bounds]:
    """The value bounds an attribute's text records, by label (files without any left out).

    :func:`parse` checks the counts and that each bounds element is an
    object; this checks the bounds themselves, once per text.

    Raises:
        ValueError: the text is not of the documented form (the message says how).
    """
    return _checked_bounds(text)


def _recorded(meta: DatasetMetadata) -> tuple[Mapping[str, FileFacts], Mapping[str, Bounds]]:
    text = meta.metadata.get(FACTS_KEY)
    if text is None:
        return {}, {}
    try:
        return _parse(text)
    except ValueError as exc:  # metadata_io refuses such a file: built in memory
        raise CorruptFileError(f"dataset {meta.dataset_uuid}", str(exc)) from None


def _recorded_labels(meta: DatasetMetadata) -> Mapping[str, FileFacts]:
    return _recorded(meta)[0]


def recorded_bounds(meta: DatasetMetadata) -> Mapping[str, Bounds]:
    """The value bounds the metadata records, by label (files without any left out).

    Raises:
        CorruptFileError: a bounds element is not of the documented form.
    """
    text = meta.metadata.get(FACTS_KEY)
    if text is None:
        return {}
    try:
        return _checked_bounds(text)
    except ValueError as exc:
        raise CorruptFileError(f"dataset {meta.dataset_uuid}", str(exc)) from None


def recorded(meta: DatasetMetadata) -> dict[str, FileFacts]:
    """The facts the metadata records, by data file path, for its live files only."""
    facts = _recorded_labels(meta)
    # By the path the metadata lists: a clone's files are under another dataset's UUID.
    return {path: facts[label] for label, path in meta.files().items() if label in facts}


def recorded_sizes(meta: DatasetMetadata) -> dict[str, int]:
    """The sizes in bytes the metadata records, by data file path, for its live files."""
    return {path: facts[1] for path, facts in recorded(meta).items()}


def with_recorded(
    meta: DatasetMetadata,
    added: Mapping[str, FileFacts],
    removed: Sequence[str] = (),
    bounds: Mapping[str, Bounds] | None = None,
) -> DatasetMetadata:
    """``meta`` recording ``added`` (label -> facts) and no longer the ``removed`` labels.

    ``bounds`` (label -> value bounds) are recorded beside the facts of the
    added files that have them. Only labels the metadata lists are kept:
    what a file no longer live had is dropped, so the attribute never
    outgrows the dataset.
    """
    import dataclasses

    old_facts, old_bounds = _recorded(meta)
    gone = set(removed)
    known = {label: facts for label, facts in old_facts.items() if label not in gone}
    known.update(added)
    limits = {label: value for label, value in old_bounds.items() if label not in gone}
    limits.update({label: value for label, value in (bounds or {}).items() if label in added})
    kept: dict[str, list[Any]] = {}
    for label in meta.partitions:
        if label in known:
            entry: list[Any] = list(known[label])
            if limits.get(label):
                entry.append(limits[label])  # json.dumps writes a (min, max) tuple as a list
            kept[label] = entry
    attributes = {key: value for key, value in meta.metadata.items() if key != FACTS_KEY}
    if kept:
        attributes[FACTS_KEY] = json.dumps(kept, separators=(",", ":"))
    if attributes == dict(meta.metadata):
        return meta
    return dataclasses.replace(meta, metadata=attributes)


def for_added(storage: Storage, added: Mapping[str, str]) -> dict[str, FileFacts]:
    """The facts this process holds of the files ``added`` (label -> path), by label."""
    held = cached(storage, added.values())
    return {label: held[path] for label, path in added.items() if path in held}


def bounds_for_added(storage: Storage, added: Mapping[str, str]) -> dict[str, Bounds]:
    """The value bounds this process holds of the files ``added`` (label -> path), by label."""
    held = cached_bounds(storage, added.values())
    return {label: held[path] for label, path in added.items() if path in held}
