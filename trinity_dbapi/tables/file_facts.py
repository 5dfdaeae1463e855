"""What is known of a data file without reading it: its rows, bytes and row groups.

Data files are immutable (a new file has a new UUID label), so these facts
never change once the file exists. They are kept in two places:

* **The dataset metadata**, attribute ``metadata["trinity.file_facts"]``: a
  JSON object ``{"<label>": [rows, bytes, row_groups], ...}`` as one string,
  like ``trinity.partition_by``. Every commit that adds files this process
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
above is :class:`~trinity_dbapi.errors.CorruptFileError`, never a wrong count.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.tables import layout

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage
    from trinity_dbapi.tables.metadata import DatasetMetadata

__all__ = [
    "CACHE_ENTRIES",
    "FACTS_KEY",
    "FileFacts",
    "cached",
    "for_added",
    "parse",
    "recorded",
    "remember",
    "with_recorded",
]

#: Key of the dataset metadata's ``metadata`` map holding the facts.
FACTS_KEY = "trinity.file_facts"
#: Files whose facts the process remembers (about 100 bytes each).
CACHE_ENTRIES = 200_000

#: ``(record_count, file_size_in_bytes, row_group_count)`` of one data file.
FileFacts = tuple[int, int, int]

_cache: dict[tuple[str, str], FileFacts] = {}
_lock = threading.Lock()


def remember(storage: Storage, facts: Mapping[str, FileFacts]) -> None:
    """Record the facts of data files (path -> facts) this process wrote or read."""
    identity = storage.cache_identity
    with _lock:
        if len(_cache) + len(facts) > CACHE_ENTRIES:
            _cache.clear()
        _cache.update({(identity, path): value for path, value in facts.items()})


def cached(storage: Storage, paths: Iterable[str]) -> dict[str, FileFacts]:
    """The facts this process holds of ``paths`` (those it holds none of are left out)."""
    identity = storage.cache_identity
    with _lock:
        found = {path: _cache.get((identity, path)) for path in paths}
    return {path: facts for path, facts in found.items() if facts is not None}


def _is_count(value: object) -> bool:
    return type(value) is int and 0 <= value < 2**63


@lru_cache(maxsize=64)
def parse(text: str) -> Mapping[str, FileFacts]:
    """The facts an attribute's text records, by label.

    Raises:
        ValueError: the text is not of the documented form (the message says how).
    """
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{FACTS_KEY} is not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise ValueError(f"{FACTS_KEY} must be a JSON object of label -> facts")  # noqa: TRY004 - a parse error
    facts: dict[str, FileFacts] = {}
    for label, value in body.items():
        if not (isinstance(value, list) and len(value) == 3 and all(map(_is_count, value))):
            raise ValueError(
                f"{FACTS_KEY} of label {label!r} must be [rows, bytes, row_groups] "
                f"(non-negative integers), not {str(value)[:80]}"
            )
        facts[label] = (value[0], value[1], value[2])
    return MappingProxyType(facts)


def _recorded_labels(meta: DatasetMetadata) -> Mapping[str, FileFacts]:
    text = meta.metadata.get(FACTS_KEY)
    if text is None:
        return {}
    try:
        return parse(text)
    except ValueError as exc:  # decode_metadata refuses such a file: built in memory
        raise CorruptFileError(f"dataset {meta.dataset_uuid}", str(exc)) from None


def recorded(meta: DatasetMetadata) -> dict[str, FileFacts]:
    """The facts the metadata records, by data file path, for its live files only."""
    facts = _recorded_labels(meta)
    return {
        layout.data_file_path(meta.dataset_uuid, label): facts[label]
        for label in meta.partitions
        if label in facts
    }


def with_recorded(
    meta: DatasetMetadata, added: Mapping[str, FileFacts], removed: Sequence[str] = ()
) -> DatasetMetadata:
    """``meta`` recording ``added`` (label -> facts) and no longer the ``removed`` labels.

    Only labels the metadata lists are kept: what a file no longer live had
    is dropped, so the attribute never outgrows the dataset.
    """
    import dataclasses

    known = dict(_recorded_labels(meta))
    gone = set(removed)
    known = {label: facts for label, facts in known.items() if label not in gone}
    known.update(added)
    kept = {label: list(known[label]) for label in meta.partitions if label in known}
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
