"""File names of a dataset: the on-disk layout of seed 004 as TrinityLake uses it.

Every path is relative to the lakehouse root (what :class:`~trinity_dbapi.storage.Storage`
takes) and starts with the dataset UUID, so all files of a dataset share one
prefix (seed 004, "Filenames")::

    <dataset uuid>/metadata/<sequence>-<uuid4>.by-dataset-metadata.<json|msgpack.zstd>
    <dataset uuid>/table/_common_metadata
    <dataset uuid>/table/<col>=<value>/.../<part uuid4>.parquet
    <dataset uuid>/indices/<column>/<timestamp>+<uuid4 hex>.by-dataset-index.parquet

* The one Kartothek table of a dataset is :data:`TABLE` (``table``, Kartothek's
  ``SINGLE_TABLE``).
* A *partition label* is the part of a data file path between ``table/`` and
  ``.parquet``: the URL-encoded ``column=value`` directories and the part UUID.
* Metadata files are immutable and versioned, unlike the seed's single
  ``<uuid>.by-dataset-metadata.json`` (see docs/datasets.md): the zero-padded
  sequence makes a listing sort in commit order, the UUID makes concurrent
  writers' names distinct. :func:`parse_metadata_path` also accepts the seed's
  own name (sequence 0) so a plain Kartothek metadata file can be read.

This module has no third-party imports.

Imports from tables/: nothing.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from trinity_dbapi.errors import CorruptFileError, InvalidURIError, StorageFileNotFoundError

if TYPE_CHECKING:
    from trinity_dbapi.storage.base import Storage

__all__ = [
    "COMMON_METADATA",
    "DATA_SUFFIX",
    "INDEX_SUFFIX",
    "MAX_INDEX_DIRECTORY_BYTES",
    "METADATA_FORMATS",
    "METADATA_SUFFIX",
    "SEQUENCE_DIGITS",
    "TABLE",
    "MetadataName",
    "common_metadata_path",
    "data_file_path",
    "index_directory",
    "index_path",
    "label_of_path",
    "metadata_path",
    "new_dataset_uuid",
    "parse_metadata_path",
    "read_referenced",
    "shared_data_file",
    "valid_dataset_uuid",
]

#: The identifier of the one Kartothek table in a dataset (Kartothek's default).
TABLE = "table"
#: Name of the schema file of a table (an empty Parquet file).
COMMON_METADATA = "_common_metadata"
#: Suffix of data files.
DATA_SUFFIX = ".parquet"
#: Longest directory name of a column's index files, in bytes: the usual file
#: system limit on a file name (NAME_MAX).
MAX_INDEX_DIRECTORY_BYTES = 255
#: Suffix of secondary index files (Kartothek's ``EXTERNAL_INDEX_SUFFIX``).
INDEX_SUFFIX = ".by-dataset-index.parquet"
#: Identifier of dataset metadata files; used by no other file.
METADATA_SUFFIX = ".by-dataset-metadata"
#: The metadata serialisations and their file name suffixes.
METADATA_FORMATS = {"json": ".json", "msgpack.zstd": ".msgpack.zstd"}
#: Width of the zero-padded commit sequence in metadata file names (holds 2**32).
SEQUENCE_DIGITS = 10

#: Seed 004's filename alphabet: every path component uses only these characters.
_COMPONENT = r"[A-Za-z0-9+_-]+"
_UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_FORMATS = "|".join(re.escape(s[1:]) for s in METADATA_FORMATS.values())
_VERSIONED_RE = re.compile(
    rf"(?P<uuid>{_COMPONENT})/metadata/(?P<seq>\d{{{SEQUENCE_DIGITS},}})-{_UUID4}"
    rf"{re.escape(METADATA_SUFFIX)}\.(?P<fmt>{_FORMATS})"
)
_SEED_RE = re.compile(rf"(?P<uuid>{_COMPONENT}){re.escape(METADATA_SUFFIX)}\.(?P<fmt>{_FORMATS})")
_UUID_RE = re.compile(_COMPONENT)


def new_dataset_uuid() -> str:
    """A fresh dataset UUID (UUID4 text: only seed-004 filename characters)."""
    return str(uuid.uuid4())


def valid_dataset_uuid(value: str) -> bool:
    """Whether ``value`` may be a dataset UUID: non-empty, seed-004 filename characters only."""
    return _UUID_RE.fullmatch(value) is not None


def common_metadata_path(dataset_uuid: str) -> str:
    """``<uuid>/table/_common_metadata``: the table's schema file."""
    return f"{dataset_uuid}/{TABLE}/{COMMON_METADATA}"


def data_file_path(dataset_uuid: str, label: str) -> str:
    """The data file of a partition label: ``<uuid>/table/<label>.parquet``."""
    return f"{dataset_uuid}/{TABLE}/{label}{DATA_SUFFIX}"


def shared_data_file(label: str, path: str) -> str | None:
    """The dataset a clone's data file ``path`` of partition ``label`` is under, or None.

    A clone (``CREATE TABLE ... CLONE``, docs/datasets.md) lists the files of
    the dataset it was cloned from where they are: ``<other uuid>/table/<label>.parquet``,
    the label kept. None unless ``path`` is exactly that for a valid dataset UUID.
    """
    suffix = f"/{TABLE}/{label}{DATA_SUFFIX}"
    if not path.endswith(suffix):
        return None
    owner = path[: -len(suffix)]
    return owner if valid_dataset_uuid(owner) else None


def label_of_path(dataset_uuid: str, path: str) -> str | None:
    """The label of a data file path, or None if ``path`` is not one of the dataset's."""
    prefix = f"{dataset_uuid}/{TABLE}/"
    if not (path.startswith(prefix) and path.endswith(DATA_SUFFIX)):
        return None
    label = path[len(prefix) : -len(DATA_SUFFIX)]
    return label or None


def metadata_path(dataset_uuid: str, sequence: int, format: str) -> str:
    """A new, unique metadata file path for commit ``sequence`` in ``format``."""
    suffix = METADATA_FORMATS[format]
    return (
        f"{dataset_uuid}/metadata/{sequence:0{SEQUENCE_DIGITS}d}-{uuid.uuid4()}"
        f"{METADATA_SUFFIX}{suffix}"
    )


@dataclass(frozen=True)
class MetadataName:
    """What a metadata file name says: the dataset, the commit sequence, the format."""

    dataset_uuid: str
    sequence: int
    format: str


def parse_metadata_path(path: str) -> MetadataName:
    """Split a metadata file path into dataset UUID, sequence and format.

    Accepts TrinityLake's versioned names and the seed's
    ``<uuid>.by-dataset-metadata.<json|msgpack.zstd>`` (sequence 0).

    Raises:
        CorruptFileError: the path follows neither naming rule.
    """
    match = _VERSIONED_RE.fullmatch(path) or _SEED_RE.fullmatch(path)
    if match is None:
        raise CorruptFileError(
            path,
            "a dataset metadata file must be named "
            "'<dataset uuid>/metadata/<sequence>-<uuid4>.by-dataset-metadata.<json|msgpack.zstd>' "
            "or '<dataset uuid>.by-dataset-metadata.<json|msgpack.zstd>'",
        )
    sequence = int(match["seq"]) if "seq" in match.groupdict() else 0
    return MetadataName(match["uuid"], sequence, match["fmt"])


def index_path(dataset_uuid: str, column: str, now: datetime.datetime | None = None) -> str:
    """A new, unique index file path for ``column``.

    The directory is the column name URL-encoded (:func:`index_directory`).
    The name is the URL-encoded UTC timestamp ``YYYY-MM-DDTHH:MM:SS.ffffff``
    (always with microseconds), then ``+`` and a UUID4 in hex, so two writers
    indexing the same column in the same microsecond still get distinct names.
    """
    moment = now if now is not None else datetime.datetime.now(datetime.timezone.utc)
    stamp = quote(moment.strftime("%Y-%m-%dT%H:%M:%S.%f"), safe="")
    directory = index_directory(column)
    return f"{dataset_uuid}/indices/{directory}/{stamp}+{uuid.uuid4().hex}{INDEX_SUFFIX}"


def index_directory(column: str) -> str:
    """The directory name of ``column``'s index files: the name URL-encoded, ``/`` too.

    Kartothek writes ``quote(column)`` there; a column named ``.`` or ``..``
    would then name the ``indices`` directory itself or its parent, so those
    two names have their dots encoded too (``%2E``, ``%2E%2E``): every reader,
    Kartothek's included, follows the path the dataset metadata records and
    never rebuilds it from the column, so the spelling is free.

    A name that would make the directory longer than
    :data:`MAX_INDEX_DIRECTORY_BYTES` (a file system refuses a longer file
    name) is cut there, never inside a ``%XX`` escape, and ends in ``~`` and
    16 hex digits of its SHA-256, so the index of a long-named column is
    stored like any other.
    """
    quoted = quote(column, safe="")
    if quoted in (".", ".."):
        return quoted.replace(".", "%2E")
    if len(quoted) <= MAX_INDEX_DIRECTORY_BYTES:
        return quoted
    digest = hashlib.sha256(column.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    cut = quoted[: MAX_INDEX_DIRECTORY_BYTES - len(digest) - 1]
    percent = cut.rfind("%", len(cut) - 2)
    return f"{cut[:percent] if percent != -1 else cut}~{digest}"


def read_referenced(storage: Storage, path: str, referrer: str) -> bytes:
    """Read a dataset file that ``referrer`` (a table definition or metadata file) points at.

    The file is named by the lakehouse itself, never by the user, so a missing
    file or a path that is not a storage path means a damaged lakehouse.

    Raises:
        CorruptFileError: the file is missing or the path is invalid (both named).
    """
    try:
        return storage.read(path)
    except StorageFileNotFoundError:
        raise CorruptFileError(
            path,
            f"the file is missing, yet {referrer} points at it (a lost or deleted file, or "
            "a damaged pointer)",
        ) from None
    except InvalidURIError as exc:
        raise CorruptFileError(
            path, f"{referrer} points at it, but it is not a location in this lakehouse ({exc})"
        ) from None
