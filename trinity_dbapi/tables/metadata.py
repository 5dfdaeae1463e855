"""Dataset metadata (seed 004, "Attributes"): the model every reader and writer holds.

A dataset's state is one immutable metadata file (its encodings, bounds and
strict reading are :mod:`~trinity_dbapi.tables.metadata_io`). In memory it is
a :class:`DatasetMetadata`: partitions (label -> data file), indices (column
-> index file) and free string annotations, among them the keys this module
names: the partition columns (``trinity.partition_by``), the transform
partitions and the earlier partitionings; the files' facts
(``trinity.file_facts``) are :mod:`~trinity_dbapi.tables.file_facts`'.

Imports from tables/: layout.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.tables import layout

__all__ = [
    "DATASET_METADATA_VERSION",
    "PARTITION_BY_KEY",
    "PARTITION_SPECS_KEY",
    "PARTITION_TRANSFORMS_KEY",
    "DatasetMetadata",
]

#: The only ``dataset_metadata_version`` this implementation reads and writes.
DATASET_METADATA_VERSION = 4
#: Key of the ``metadata`` map holding the partition columns (a JSON list of names).
PARTITION_BY_KEY = "trinity.partition_by"
#: Key of the ``metadata`` map holding the transform partitions among them
#: (:func:`trinity_dbapi.tables.transforms.dumps`; absent: every one is a column).
PARTITION_TRANSFORMS_KEY = "trinity.partition_transforms"
#: Key of the ``metadata`` map holding the earlier partitionings whose files the
#: dataset still lists (a JSON list of ``partition_by`` lists; absent: none).
PARTITION_SPECS_KEY = "trinity.partition_specs"


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
            name, and ignored by ``==``. Writing its file
            (:func:`~trinity_dbapi.tables.metadata_io.write_metadata`) writes ``sequence + 1``.
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
