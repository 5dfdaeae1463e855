"""Dataset metadata files (seed 004): their two encodings, their bounds, strict reading.

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

Bounds: a metadata file holds at most :data:`MAX_METADATA_BYTES` once
decoded (the JSON text, or the msgpack inflated, which is streamed and
stopped there: a small file inflating to gigabytes is refused after at most
that much work) and nests at most :data:`MAX_METADATA_DEPTH` levels; writing
refuses what reading would.

Reading is strict: the types must be exactly the seed's (no int for a string,
no bool or float for an int), no other keys than the seed's and Kartothek's
``partition_keys``, and every file must sit under the dataset's own prefix
or, in a clone (docs/datasets.md, decision 25), at the same place under the
UUID of the dataset it was cloned from (``<uuid>/table/<label>.parquet`` with
the partition's own label, ``<uuid>/indices/...``).
What Kartothek and plateau write beyond the seed is decided per attribute in
docs/datasets.md ("Reading Kartothek's datasets"): embedded indices and
non-string user metadata are accepted and left out. A problem raises :class:`~trinity_dbapi.errors.CorruptFileError`
naming the file and the rule; a version other than 4 raises
:class:`UnsupportedDatasetVersionError`. The SQL import turns a Kartothek
source's ``CorruptFileError`` into a ``DataError`` (the file is not the
lakehouse's).

The model the files hold is :class:`~trinity_dbapi.tables.metadata.DatasetMetadata`.

Imports from tables/: file_facts, layout, metadata.
"""

from __future__ import annotations

import json
import reprlib
from typing import Any

from trinity_dbapi.errors import (
    CorruptFileError,
    NotSupportedError,
    OperationalError,
    ProgrammingError,
    UnsupportedFormatVersionError,
)
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.tables import file_facts, layout
from trinity_dbapi.tables.metadata import (
    DATASET_METADATA_VERSION,
    PARTITION_BY_KEY,
    DatasetMetadata,
)

__all__ = [
    "COMPRESS_ABOVE_BYTES",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_DEPTH",
    "UnsupportedDatasetVersionError",
    "dataset_files",
    "decode_metadata",
    "encode_metadata",
    "read_metadata",
    "write_metadata",
]

#: ``format="auto"`` switches from JSON to msgpack.zstd above this JSON size.
COMPRESS_ABOVE_BYTES = 256 * 1024
#: The most bytes a metadata file may hold once decoded (JSON text, inflated
#: msgpack): 256 MiB, about 1.3 million data files of ours (203 bytes each in
#: msgpack with their file facts), far above any real dataset; a file beyond it is refused, so a
#: small file inflating to gigabytes costs at most this much memory and work.
MAX_METADATA_BYTES = 256 * 1024 * 1024
#: The deepest nesting of maps and lists a metadata file may have. The seed's
#: attributes nest 4 levels (partitions, label, files, path); Kartothek's user
#: metadata and embedded indices a few more. A fixed rule, not Python's
#: recursion limit, which differs inside a statement and outside one.
MAX_METADATA_DEPTH = 100
#: Inflated msgpack is read in steps of this size, so a bomb stops at the bound.
_INFLATE_CHUNK = 1024 * 1024

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


# --- encoding ---------------------------------------------------------------------


def encode_metadata(meta: DatasetMetadata, format: str = "auto") -> tuple[str, bytes]:
    """Serialise ``meta``; returns ``(format used, bytes)``.

    Raises:
        ProgrammingError: an unknown format, or metadata breaking a seed rule.
        OperationalError: the file would hold more than :data:`MAX_METADATA_BYTES`
            decoded, which no reader would read back (about 1.3 million files).
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
            _check_size(meta, len(text))
            return "json", text
    import msgpack
    import pyarrow as pa

    packed = msgpack.packb(body, use_bin_type=True)
    _check_size(meta, len(packed))
    return "msgpack.zstd", pa.Codec("zstd").compress(packed, asbytes=True)


def _check_size(meta: DatasetMetadata, size: int) -> None:
    # Reading refuses a file over the bound (a decompression bomb would be
    # one), so writing one would leave a table nobody can read.
    if size > MAX_METADATA_BYTES:
        raise OperationalError(
            f"dataset {meta.dataset_uuid} cannot be written: its metadata file would hold "
            f"{size:,} bytes for {len(meta.partitions):,} data files, over {_bound()}; "
            "merge the table's small files with CALL system.rewrite_data_files, or split "
            "the table"
        )


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("an object has a duplicate key")
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _bound() -> str:
    return (
        f"{MAX_METADATA_BYTES:,} bytes, the most a dataset metadata file may hold once "
        "decoded (docs/datasets.md, rule 7)"
    )


def _too_deep() -> str:
    return (
        f"it nests maps and lists more than {MAX_METADATA_DEPTH} levels deep, the most a "
        "dataset metadata file may (docs/datasets.md, rule 7)"
    )


def _inflate(path: str, data: bytes) -> bytearray:
    """The zstd-compressed ``data``, inflated step by step up to the size bound."""
    import pyarrow as pa

    stream = pa.CompressedInputStream(pa.BufferReader(data), "zstd")
    inflated = bytearray()
    # Streamed, not read in one go: a frame of a few hundred kilobytes can
    # inflate to gigabytes (a decompression bomb), and a declared content size
    # can lie. Reading stops one step past the bound.
    while True:
        try:
            chunk = stream.read_buffer(_INFLATE_CHUNK)
        except (OSError, ValueError) as exc:
            raise CorruptFileError(path, f"not a zstd frame ({exc})") from exc
        if not chunk.size:
            return inflated
        inflated += chunk
        if len(inflated) > MAX_METADATA_BYTES:
            raise CorruptFileError(path, f"its msgpack inflates to more than {_bound()}")


def _parse(path: str, data: bytes, format: str) -> Any:
    if format == "json":
        if len(data) > MAX_METADATA_BYTES:
            raise CorruptFileError(path, f"its {len(data):,} bytes of JSON are over {_bound()}")
        try:
            return json.loads(
                data.decode("utf-8"),
                object_pairs_hook=_reject_duplicates,
                parse_constant=_reject_constant,
            )
        except ValueError as exc:  # also UnicodeDecodeError and JSONDecodeError
            raise CorruptFileError(path, f"not valid UTF-8 JSON ({exc})") from exc
        except RecursionError:
            # json recurses once per level: deeper than the interpreter's limit.
            raise CorruptFileError(path, _too_deep()) from None
    import msgpack

    packed = _inflate(path, data)
    try:
        return msgpack.unpackb(packed, raw=False, strict_map_key=True)
    except msgpack.StackError:  # its own bound: 1024 levels
        raise CorruptFileError(path, _too_deep()) from None
    except (ValueError, msgpack.UnpackException) as exc:
        raise CorruptFileError(path, f"not valid msgpack ({exc})") from exc


def _nesting_problem(body: dict[str, Any]) -> str | None:
    """:func:`_too_deep` if the free-form values of ``body`` nest too deeply, else None.

    Only ``metadata`` and ``indices`` may hold values of any shape (Kartothek's
    user metadata, embedded indices); validation fixes the depth of every other
    attribute. Walked with a list, not recursion, and so is any depth.
    """
    level: list[Any] = [body.get(key) for key in ("metadata", "indices")]
    depth = 1  # the top-level map
    while level:
        depth += 1
        if depth > MAX_METADATA_DEPTH:
            return _too_deep()
        below: list[Any] = []
        for value in level:
            if isinstance(value, dict):
                below.extend(v for v in value.values() if isinstance(v, (dict, list)))
            elif isinstance(value, list):
                below.extend(v for v in value if isinstance(v, (dict, list)))
        level = below
    return None


#: How values of a file are shown in messages: bounded in depth and length,
#: so a huge or deeply nested value neither floods the message nor recurses.
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel = 3
_SHOWN.maxstring = _SHOWN.maxother = 200
_SHOWN.maxlist = _SHOWN.maxdict = _SHOWN.maxtuple = 10


def _shown(value: Any) -> str:
    return _SHOWN.repr(value)


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
    problem = _nesting_problem(body)
    if problem is not None:
        raise CorruptFileError(path, problem)
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
            return (
                f"{what} must be a MAP<STRING, STRING>; entry {_shown(key)}: {_shown(item)} is not"
            )
    return None


def _label_problem(uuid: str, label: str, files: Any) -> str | None:
    if any(part in ("", ".", "..") for part in label.split("/")):
        return f"partition label {_shown(label)} has an empty, '.' or '..' component"
    if files == {layout.TABLE: (expected := layout.data_file_path(uuid, label))}:
        return None  # the one form, first: the messages below cost more than the check
    problem = _string_map_problem(files, f"files of partition {_shown(label)}")
    if problem is not None:
        return problem
    if len(files) == 1 and layout.TABLE not in files:
        (table,) = files
        return (
            f"partition {_shown(label)} holds a file of table {_shown(table)}; this reader reads "
            f"only Kartothek datasets whose one table is named {layout.TABLE!r} "
            "(plateau's default table_name)"
        )
    if files != {layout.TABLE: expected}:
        if len(files) == 1 and layout.shared_data_file(label, files[layout.TABLE]) is not None:
            return None  # a clone's file, where the dataset it was cloned from has it
        return (
            f"partition {_shown(label)} must hold exactly one file, table {layout.TABLE!r} "
            f"at {_shown(expected)} (or, in a clone, the same under the UUID of the dataset "
            f"it was cloned from); found {_shown(files)}"
        )
    return None


def _partitions_problem(uuid: str, partitions: Any) -> str | None:
    if not isinstance(partitions, dict):
        return "partitions must be a MAP<STRING, {'files': MAP<STRING, STRING>}>"
    for label, partition in partitions.items():
        if not isinstance(partition, dict) or set(partition) != {"files"}:
            return f"partition {_shown(label)} must be a map with exactly the key 'files'"
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
            return (
                f"index of column {_shown(column)} must be a STRING file path, found {_shown(path)}"
            )
        # A clone's index file may be the one of the dataset it was cloned from.
        owner, _, rest = path.partition("/indices/")
        if not (layout.valid_dataset_uuid(owner) and rest and path.endswith(layout.INDEX_SUFFIX)):
            return (
                f"index of column {_shown(column)} must be a file "
                f"'{uuid}/indices/.../*{layout.INDEX_SUFFIX}' (or, in a clone, the same under "
                f"the UUID of the dataset it was cloned from), found {_shown(path)}"
            )
    return None


def _partition_keys_problem(keys: Any) -> str | None:
    if not isinstance(keys, list) or any(type(key) is not str or not key for key in keys):
        return f"partition_keys must be a LIST<STRING> of column names, found {_shown(keys)}"
    if len(set(keys)) != len(keys):
        return f"partition_keys {_shown(keys)} repeats a column"
    return None


def _partition_by_problem(recorded: Any) -> str | None:
    """What is wrong with a ``trinity.partition_by`` annotation, or None.

    Checked here, once, so that :meth:`DatasetMetadata.partition_columns` can
    trust it; a value that is not a string is user metadata, ignored as any.
    """
    if type(recorded) is not str:
        return None
    try:
        names = json.loads(recorded)
    except (ValueError, RecursionError):
        names = None
    if isinstance(names, list) and all(type(name) is str for name in names):
        return None
    return (
        f"metadata {PARTITION_BY_KEY} must be a JSON list of column names, not {_shown(recorded)}"
    )


def _facts_problem(recorded: Any) -> str | None:
    if recorded is None:
        return None
    if type(recorded) is not str:
        return f"metadata {file_facts.FACTS_KEY!r} must be a STRING"
    try:
        file_facts.parse(recorded)
    except ValueError as exc:
        return str(exc)
    return None


def _problem(body: dict[str, Any], uuid_in_name: str) -> str | None:
    """The first seed-004 rule ``body`` breaks, or None."""
    unknown = sorted(set(body) - {*_REQUIRED, *_OPTIONAL}, key=str)
    if unknown:
        return f"unknown attributes {_shown(unknown)}; version 4 defines {[*_REQUIRED, *_OPTIONAL]}"
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
        return (
            f"dataset_uuid {_shown(uuid)} differs from the UUID {uuid_in_name!r} in the file name"
        )
    if "metadata" in body:
        problem = _string_map_problem(body["metadata"], "metadata", any_value=True)
        if problem is None:
            problem = _partition_by_problem(body["metadata"].get(PARTITION_BY_KEY))
        if problem is None:
            problem = _facts_problem(body["metadata"].get(file_facts.FACTS_KEY))
        if problem is not None:
            return problem
    if "partition_keys" in body:
        problem = _partition_keys_problem(body["partition_keys"])
        if problem is not None:
            return problem
        recorded = body.get("metadata", {}).get(PARTITION_BY_KEY)
        if type(recorded) is str and json.loads(recorded) != body["partition_keys"]:
            return (
                f"partition_keys {_shown(body['partition_keys'])} differ from "
                f"{PARTITION_BY_KEY} {_shown(recorded)}"
            )
    if "indices" in body:
        problem = _indices_problem(uuid, body["indices"])
        if problem is not None:
            return problem
    return _partitions_problem(uuid, body["partitions"])


# --- storage ----------------------------------------------------------------------


def write_metadata(
    storage: Storage, meta: DatasetMetadata, *, format: str = "auto", background: bool = False
) -> str:
    """Write ``meta`` as a new immutable metadata file and return its path.

    The file is ``<uuid>/metadata/<meta.sequence + 1>-<uuid4>.by-dataset-metadata.<ext>``,
    created with :meth:`Storage.create_unique`.

    Args:
        storage: the lakehouse storage.
        meta: the state to write.
        format: ``"json"``, ``"msgpack.zstd"`` or ``"auto"`` (JSON up to
            :data:`COMPRESS_ABOVE_BYTES`, msgpack.zstd above).
        background: leave the create running for a commit through this
            same storage to settle before its root
            (:meth:`Storage.create_unique_later`); otherwise the file is
            stored when this returns.

    Raises:
        ProgrammingError: an unknown format or invalid metadata.
    """
    used, data = encode_metadata(meta, format)
    path = layout.metadata_path(meta.dataset_uuid, meta.sequence + 1, used)
    if background:
        # The commit that points at it waits for it just before its root is
        # created, so its request shares the data files' round.
        storage.create_unique_later(path, data)
    else:
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
