"""Dataset metadata (seed 004, "Attributes"): the model, its two encodings, strict reading.

A dataset's state is one immutable metadata file. Every commit writes a new
one (copy-on-write) with :func:`write_metadata`; the lakehouse stores that
file's path, so a lakehouse version pins the exact data. The file holds the
seed's attributes and nothing else::

    {"dataset_metadata_version": 4,
     "dataset_uuid": "<uuid>",
     "metadata": {"trinity.partition_by": "[\\"day\\"]"},
     "partitions": {"<label>": {"files": {"table": "<uuid>/table/<label>.parquet"}}},
     "indices": {"<column>": "<uuid>/indices/<column>/<stamp>.by-dataset-index.parquet"}}

Encodings: compact UTF-8 JSON, or msgpack compressed as one standard zstd
frame that records its content size (``pyarrow.Codec("zstd")``; the ``zstd``
CLI and python-zstandard read it). ``format="auto"`` writes JSON unless the
JSON would exceed :data:`COMPRESS_ABOVE_BYTES`.

Reading is strict: the types must be exactly the seed's (no int for a string,
no bool or float for an int), no other keys than the seed's and Kartothek's
``partition_keys``, and every file must sit under the dataset's own prefix.
What Kartothek and plateau write beyond the seed is decided per attribute in
docs/datasets.md ("Reading Kartothek's datasets"): embedded indices and
non-string user metadata are accepted and left out. A problem raises :class:`~trinity_dbapi.errors.CorruptFileError`
naming the file and the rule; a version other than 4 raises
:class:`UnsupportedDatasetVersionError`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from trinity_dbapi.errors import (
    CorruptFileError,
    NotSupportedError,
    ProgrammingError,
    UnsupportedFormatVersionError,
)
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.tables import layout

__all__ = [
    "COMPRESS_ABOVE_BYTES",
    "DATASET_METADATA_VERSION",
    "PARTITION_BY_KEY",
    "DatasetMetadata",
    "UnsupportedDatasetVersionError",
    "dataset_files",
    "decode_metadata",
    "encode_metadata",
    "read_metadata",
    "write_metadata",
]

#: The only ``dataset_metadata_version`` this implementation reads and writes.
DATASET_METADATA_VERSION = 4
#: ``format="auto"`` switches from JSON to msgpack.zstd above this JSON size.
COMPRESS_ABOVE_BYTES = 256 * 1024
#: Key of the ``metadata`` map holding the partition columns (a JSON list of names).
PARTITION_BY_KEY = "trinity.partition_by"
#: Key of the ``metadata`` map holding the transform partitions among them
#: (:func:`trinity_dbapi.tables.transforms.dumps`; absent: every one is a column).
PARTITION_TRANSFORMS_KEY = "trinity.partition_transforms"
#: Key of the ``metadata`` map holding the earlier partitionings whose files the
#: dataset still lists (a JSON list of ``partition_by`` lists; absent: none).
PARTITION_SPECS_KEY = "trinity.partition_specs"

_REQUIRED = ("dataset_metadata_version", "dataset_uuid", "partitions")
_OPTIONAL = ("metadata", "indices", "partition_keys")
_FORMATS = ("auto", *layout.METADATA_FORMATS)


class UnsupportedDatasetVersionError(UnsupportedFormatVersionError):
    """A dataset metadata file of a ``dataset_metadata_version`` other than 4.

    Attributes:
        path: the metadata file.
        found: the version it declares.
        supported: the version this implementation reads (4).
    """

    def __init__(self, path: str, found: int) -> None:
        NotSupportedError.__init__(
            self,
            f"dataset metadata file {path!r} has dataset_metadata_version {found}; this "
            f"trinity-dbapi reads version {DATASET_METADATA_VERSION} only (seed 004): "
            "upgrade trinity-dbapi to read it",
        )
        self.path = path
        self.found = found
        self.supported = DATASET_METADATA_VERSION


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class DatasetMetadata:
    """The state of one dataset (seed 004): partitions, indices and free metadata.

    Instances are immutable; the ``with_*`` methods return changed copies.
    Maps keep insertion order, so partitions are listed (and read) in the order
    they were added.

    Attributes:
        dataset_uuid: the dataset UUID, first component of all its paths.
        partitions: partition label -> {table identifier -> data file path}.
        indices: indexed column -> index file path.
        metadata: free string annotations (``trinity.partition_by``).
        dataset_metadata_version: always 4.
        partition_keys: Kartothek's ``partition_keys`` attribute (the partition
            columns, outermost first) when the file has one, else None.
        sequence: the commit sequence of the metadata file this state was read
            from (0 for a new dataset); not stored in the file body but in its
            name, and ignored by ``==``. :func:`write_metadata` writes ``sequence + 1``.
    """

    dataset_uuid: str
    partitions: Mapping[str, Mapping[str, str]]
    indices: Mapping[str, str] = field(default_factory=dict)
    metadata: Mapping[str, str] = field(default_factory=dict)
    dataset_metadata_version: int = DATASET_METADATA_VERSION
    sequence: int = field(default=0, compare=False)
    partition_keys: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        parts = {label: _frozen(files) for label, files in self.partitions.items()}
        object.__setattr__(self, "partitions", MappingProxyType(parts))
        object.__setattr__(self, "indices", _frozen(self.indices))
        object.__setattr__(self, "metadata", _frozen(self.metadata))
        if self.partition_keys is not None:
            object.__setattr__(self, "partition_keys", tuple(self.partition_keys))

    __hash__ = None  # type: ignore[assignment]  # maps are not hashable

    def __reduce__(self) -> tuple[Any, ...]:
        # Mapping proxies do not pickle; rebuild from plain dicts.
        partitions = {label: dict(files) for label, files in self.partitions.items()}
        fields = (partitions, dict(self.indices), dict(self.metadata))
        return (
            DatasetMetadata,
            (
                self.dataset_uuid,
                *fields,
                self.dataset_metadata_version,
                self.sequence,
                self.partition_keys,
            ),
        )

    def partition_columns(self) -> list[str] | None:
        """The partition columns the file records, outermost first; None if it records none.

        ``trinity.partition_by`` (our own files) wins over Kartothek's ``partition_keys``.
        """
        recorded = self.metadata.get(PARTITION_BY_KEY)
        if recorded is not None:
            return list(json.loads(recorded))
        return None if self.partition_keys is None else list(self.partition_keys)

    def files(self) -> dict[str, str]:
        """Partition label -> data file path of the dataset's table."""
        return {label: files[layout.TABLE] for label, files in self.partitions.items()}

    def with_partitions(
        self, added: Mapping[str, str], removed: Iterable[str] = ()
    ) -> DatasetMetadata:
        """A copy with partitions removed and then added.

        Args:
            added: new partition label -> data file path (as :func:`write_data` returns).
            removed: labels of partitions to drop.

        Raises:
            ProgrammingError: a removed label is unknown, an added one exists
                already, or an added path is not ``<uuid>/table/<label>.parquet``.
        """
        parts = dict(self.partitions)
        for label in removed:
            if parts.pop(label, None) is None:
                raise ProgrammingError(
                    f"dataset {self.dataset_uuid} has no partition {label!r} to remove"
                )
        for label, path in added.items():
            if label in parts:
                raise ProgrammingError(
                    f"dataset {self.dataset_uuid} already has partition {label!r}"
                )
            if path != layout.data_file_path(self.dataset_uuid, label):
                raise ProgrammingError(
                    f"data file {path!r} of partition {label!r} must be "
                    f"{layout.data_file_path(self.dataset_uuid, label)!r}"
                )
            parts[label] = {layout.TABLE: path}
        return dataclasses.replace(self, partitions=parts)

    def with_index(self, column: str, path: str | None) -> DatasetMetadata:
        """A copy whose index of ``column`` is ``path`` (None drops it)."""
        indices = {k: v for k, v in self.indices.items() if k != column}
        if path is not None:
            indices[column] = path
        return dataclasses.replace(self, indices=indices)

    def to_dict(self) -> dict[str, Any]:
        """The seed-004 attribute dict, in the seed's order (``partition_keys`` last, if set)."""
        body: dict[str, Any] = {
            "dataset_metadata_version": self.dataset_metadata_version,
            "dataset_uuid": self.dataset_uuid,
            "metadata": dict(self.metadata),
            "partitions": {
                label: {"files": dict(files)} for label, files in self.partitions.items()
            },
            "indices": dict(self.indices),
        }
        if self.partition_keys is not None:
            body["partition_keys"] = list(self.partition_keys)
        return body


# --- encoding ---------------------------------------------------------------------


def encode_metadata(meta: DatasetMetadata, format: str = "auto") -> tuple[str, bytes]:
    """Serialise ``meta``; returns ``(format used, bytes)``.

    Raises:
        ProgrammingError: an unknown format, or metadata breaking a seed rule.
    """
    if format not in _FORMATS:
        raise ProgrammingError(f"unknown metadata format {format!r}; use one of {_FORMATS}")
    body = meta.to_dict()
    # Reading ignores non-string annotations (Kartothek user metadata); writing
    # keeps the seed's MAP<STRING, STRING> so nothing we write is dropped on read.
    problem = _string_map_problem(body["metadata"], "metadata") or _problem(body, meta.dataset_uuid)
    if problem is not None:
        raise ProgrammingError(f"invalid dataset metadata: {problem}")
    if format != "msgpack.zstd":
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        if format == "json" or len(text) <= COMPRESS_ABOVE_BYTES:
            return "json", text
    import msgpack
    import pyarrow as pa

    packed = msgpack.packb(body, use_bin_type=True)
    return "msgpack.zstd", pa.Codec("zstd").compress(packed, asbytes=True)


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("an object has a duplicate key")
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _parse(path: str, data: bytes, format: str) -> Any:
    if format == "json":
        try:
            return json.loads(
                data.decode("utf-8"),
                object_pairs_hook=_reject_duplicates,
                parse_constant=_reject_constant,
            )
        except ValueError as exc:  # also UnicodeDecodeError and JSONDecodeError
            raise CorruptFileError(path, f"not valid UTF-8 JSON ({exc})") from exc
    import msgpack
    import pyarrow as pa

    try:
        packed = pa.CompressedInputStream(pa.BufferReader(data), "zstd").read()
    except (OSError, ValueError) as exc:
        raise CorruptFileError(path, f"not a zstd frame ({exc})") from exc
    try:
        return msgpack.unpackb(packed, raw=False, strict_map_key=True)
    except (ValueError, msgpack.UnpackException) as exc:
        raise CorruptFileError(path, f"not valid msgpack ({exc})") from exc


def decode_metadata(path: str, data: bytes) -> DatasetMetadata:
    """Parse and validate the content of the metadata file ``path``.

    Raises:
        CorruptFileError: the name or content breaks a rule (named in the message).
        UnsupportedDatasetVersionError: ``dataset_metadata_version`` is not 4.
    """
    name = layout.parse_metadata_path(path)
    body = _parse(path, data, name.format)
    if not isinstance(body, dict):
        raise CorruptFileError(path, "the top level must be a map of the seed-004 attributes")
    version = body.get("dataset_metadata_version")
    if type(version) is not int:
        raise CorruptFileError(path, "dataset_metadata_version must be present and an INT")
    if version != DATASET_METADATA_VERSION:
        raise UnsupportedDatasetVersionError(path, version)
    problem = _problem(body, name.dataset_uuid)
    if problem is not None:
        raise CorruptFileError(path, problem)
    keys = body.get("partition_keys")
    return DatasetMetadata(
        dataset_uuid=body["dataset_uuid"],
        partitions={label: p["files"] for label, p in body["partitions"].items()},
        # Accepted and ignored (docs/datasets.md): an index embedded in the
        # metadata (a map, not a file path) only speeds lookups up, and an
        # annotation whose value is not a string is Kartothek user metadata.
        indices={k: v for k, v in body.get("indices", {}).items() if type(v) is str},
        metadata={k: v for k, v in body.get("metadata", {}).items() if type(v) is str},
        sequence=name.sequence,
        partition_keys=None if keys is None else tuple(keys),
    )


# --- validation -------------------------------------------------------------------


def _string_map_problem(value: Any, what: str, any_value: bool = False) -> str | None:
    if not isinstance(value, dict):
        return f"{what} must be a MAP<STRING, STRING>"
    for key, item in value.items():
        if type(key) is not str or (type(item) is not str and not any_value):
            return f"{what} must be a MAP<STRING, STRING>; entry {key!r}: {item!r} is not"
    return None


def _label_problem(uuid: str, label: str, files: Any) -> str | None:
    parts = label.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return f"partition label {label!r} has an empty, '.' or '..' component"
    problem = _string_map_problem(files, f"files of partition {label!r}")
    if problem is not None:
        return problem
    expected = layout.data_file_path(uuid, label)
    if len(files) == 1 and layout.TABLE not in files:
        (table,) = files
        return (
            f"partition {label!r} holds a file of table {table!r}; this reader reads "
            f"only Kartothek datasets whose one table is named {layout.TABLE!r} "
            "(plateau's default table_name)"
        )
    if files != {layout.TABLE: expected}:
        return (
            f"partition {label!r} must hold exactly one file, table {layout.TABLE!r} "
            f"at {expected!r}; found {files!r}"
        )
    return None


def _partitions_problem(uuid: str, partitions: Any) -> str | None:
    if not isinstance(partitions, dict):
        return "partitions must be a MAP<STRING, {'files': MAP<STRING, STRING>}>"
    for label, partition in partitions.items():
        if not isinstance(partition, dict) or set(partition) != {"files"}:
            return f"partition {label!r} must be a map with exactly the key 'files'"
        problem = _label_problem(uuid, label, partition["files"])
        if problem is not None:
            return problem
    return None


def _indices_problem(uuid: str, indices: Any) -> str | None:
    problem = _string_map_problem(indices, "indices", any_value=True)
    if problem is not None:
        return problem
    for column, path in indices.items():
        if not column:
            return "indices has an empty column name"
        if isinstance(path, dict):
            continue  # an index embedded by Kartothek: accepted, not used
        if type(path) is not str:
            return f"index of column {column!r} must be a STRING file path, found {path!r}"
        if not (path.startswith(f"{uuid}/indices/") and path.endswith(layout.INDEX_SUFFIX)):
            return (
                f"index of column {column!r} must be a file "
                f"'{uuid}/indices/.../*{layout.INDEX_SUFFIX}', found {path!r}"
            )
    return None


def _partition_keys_problem(keys: Any) -> str | None:
    if not isinstance(keys, list) or any(type(key) is not str or not key for key in keys):
        return f"partition_keys must be a LIST<STRING> of column names, found {keys!r}"
    if len(set(keys)) != len(keys):
        return f"partition_keys {keys!r} repeats a column"
    return None


def _problem(body: dict[str, Any], uuid_in_name: str) -> str | None:
    """The first seed-004 rule ``body`` breaks, or None."""
    unknown = sorted(set(body) - {*_REQUIRED, *_OPTIONAL}, key=str)
    if unknown:
        return f"unknown attributes {unknown}; version 4 defines {[*_REQUIRED, *_OPTIONAL]}"
    missing = [key for key in _REQUIRED if key not in body]
    if missing == ["partitions"]:
        return (
            "required attribute 'partitions' is missing: a Kartothek dataset whose "
            "partitions are found by listing the store is not read; rewrite its metadata "
            "with Kartothek or plateau (any update writes 'partitions')"
        )
    if missing:
        return f"required attributes {missing} are missing"
    if type(body["dataset_metadata_version"]) is not int:
        return "dataset_metadata_version must be an INT"
    uuid = body["dataset_uuid"]
    if type(uuid) is not str or not layout.valid_dataset_uuid(uuid):
        return "dataset_uuid must be a STRING of A-Z, a-z, 0-9, '+', '-' and '_'"
    if uuid != uuid_in_name:
        return f"dataset_uuid {uuid!r} differs from the UUID {uuid_in_name!r} in the file name"
    if "metadata" in body:
        problem = _string_map_problem(body["metadata"], "metadata", any_value=True)
        if problem is not None:
            return problem
    if "partition_keys" in body:
        problem = _partition_keys_problem(body["partition_keys"])
        if problem is not None:
            return problem
        recorded = body.get("metadata", {}).get(PARTITION_BY_KEY)
        if type(recorded) is str and json.loads(recorded) != body["partition_keys"]:
            return (
                f"partition_keys {body['partition_keys']!r} differ from "
                f"{PARTITION_BY_KEY} {recorded}"
            )
    if "indices" in body:
        problem = _indices_problem(uuid, body["indices"])
        if problem is not None:
            return problem
    return _partitions_problem(uuid, body["partitions"])


# --- storage ----------------------------------------------------------------------


def write_metadata(storage: Storage, meta: DatasetMetadata, *, format: str = "auto") -> str:
    """Write ``meta`` as a new immutable metadata file and return its path.

    The file is ``<uuid>/metadata/<meta.sequence + 1>-<uuid4>.by-dataset-metadata.<ext>``,
    created with :meth:`Storage.create_unique`.

    Args:
        storage: the lakehouse storage.
        meta: the state to write.
        format: ``"json"``, ``"msgpack.zstd"`` or ``"auto"`` (JSON up to
            :data:`COMPRESS_ABOVE_BYTES`, msgpack.zstd above).

    Raises:
        ProgrammingError: an unknown format or invalid metadata.
    """
    used, data = encode_metadata(meta, format)
    path = layout.metadata_path(meta.dataset_uuid, meta.sequence + 1, used)
    storage.create_unique(path, data)
    return path


def read_metadata(storage: Storage, path: str) -> DatasetMetadata:
    """Read and strictly validate the metadata file at ``path``.

    Raises:
        StorageFileNotFoundError: there is no such file.
        CorruptFileError: the file breaks a seed-004 rule (named in the message).
        UnsupportedDatasetVersionError: ``dataset_metadata_version`` is not 4.
    """
    return decode_metadata(path, storage.read(path))


def dataset_files(storage: Storage, meta_path: str) -> set[str]:
    """Every file the metadata file ``meta_path`` references, itself included.

    That is the metadata file, ``_common_metadata``, every data file and every
    index file: what garbage collection must keep while ``meta_path`` is reachable.
    """
    meta = read_metadata(storage, meta_path)
    files = {meta_path, layout.common_metadata_path(meta.dataset_uuid)}
    files.update(meta.files().values())
    files.update(meta.indices.values())
    return files
