"""Partition values in file names ("partition content encoding", seed 004).

A partitioned data file lives under one directory per partition column, in
``partition_by`` order: ``<quote(column)>=<quote(value text)>``, both
URL-encoded with :func:`urllib.parse.quote` and ``safe=""`` (so ``/`` in a
value cannot split the path). The value text is canonical per type (see
:mod:`trinity_dbapi.tables.values`), e.g. ``day=2024-01-31``, ``price=1.50``,
``shop=a%2Fb`` for ``a/b``, ``at=2024-01-01T12%3A00%3A00.000000Z``.

NULL is the directory value ``__HIVE_DEFAULT_PARTITION__`` (the Hive/Spark
convention). A string whose text is exactly that marker is written with its
first ``_`` percent-encoded (``%5F_HIVE_DEFAULT_PARTITION__``), which decodes to
the same text but is not the marker, so the two never collide. Nested types
cannot be partition columns.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, unquote, unquote_to_bytes

import pyarrow as pa

from trinity_dbapi.errors import CorruptFileError, DataError, NotSupportedError, ProgrammingError
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.values import codec, coerce

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_SEGMENT_BYTES",
    "NULL_VALUE",
    "check_partition_by",
    "check_partition_name",
    "directory_of",
    "new_label",
    "partition_scalars",
    "partition_values",
    "prune",
]

#: Directory value of a NULL partition value (Hive's default partition name).
NULL_VALUE = "__HIVE_DEFAULT_PARTITION__"
#: Longest ``column=value`` directory name, in bytes (the usual file system NAME_MAX).
MAX_SEGMENT_BYTES = 255
#: Longest URL-encoded partition column name: its directory must hold ``=`` and
#: the NULL marker.
MAX_NAME_BYTES = MAX_SEGMENT_BYTES - 1 - len(NULL_VALUE)


def check_partition_by(
    schema: pa.Schema, partition_by: Sequence[str], meta: DatasetMetadata | None = None
) -> None:
    """Check that ``partition_by`` names distinct, partitionable columns of ``schema``.

    Args:
        schema: the table's Arrow schema.
        partition_by: the partition columns, outermost directory first.
        meta: when given, ``partition_by`` must equal the partition columns its
            ``trinity.partition_by`` metadata or Kartothek ``partition_keys``
            record (if it records them).

    Raises:
        ProgrammingError: an unknown or repeated column, all columns partition
            columns, or partition columns other than the dataset's.
        NotSupportedError: a column of a nested (or otherwise unpartitionable) type.
    """
    recorded = None if meta is None else meta.partition_columns()
    if recorded is not None and recorded != list(partition_by):
        raise ProgrammingError(
            f"dataset {meta.dataset_uuid} is partitioned by {recorded}, "  # type: ignore[union-attr]
            f"not by {list(partition_by)}"
        )
    if len(set(partition_by)) != len(partition_by):
        raise ProgrammingError(f"partition columns {list(partition_by)} repeat a column")
    if len(partition_by) == len(schema) and partition_by:
        raise ProgrammingError("at least one column must not be a partition column")
    for name in partition_by:
        index = schema.get_field_index(name)
        if index < 0:
            raise ProgrammingError(f"partition column {name!r} is not a column of the table")
        if codec(schema.field(index).type) is None:
            raise NotSupportedError(
                f"column {name!r} of type {schema.field(index).type} cannot be a partition "
                "column: only primitive types can be encoded in file names"
            )


def check_partition_name(name: str) -> None:
    """Check that column ``name`` leaves room for values in its ``column=value`` directories.

    Any name can be encoded, but the directory must stay within
    :data:`MAX_SEGMENT_BYTES`: a name whose encoding does not leave room for
    ``=`` and the NULL marker could hold almost no values, and every write
    would fail, so it is refused when the table is made.

    Raises:
        ProgrammingError: the URL-encoded name is longer than
            :data:`MAX_NAME_BYTES`.
    """
    encoded = len(quote(name, safe=""))
    if encoded > MAX_NAME_BYTES:
        raise ProgrammingError(
            f"partition column {name[:40]!r}{'...' if len(name) > 40 else ''} has a name of "
            f"{encoded} bytes URL-encoded, more than the {MAX_NAME_BYTES} a partition column "
            f"may have (its 'column=value' directory names are limited to {MAX_SEGMENT_BYTES} "
            "bytes); give the column a shorter name or partition by another column"
        )


# --- directories and labels ---------------------------------------------------------


def _value_segment(scalar: pa.Scalar) -> str:
    if not scalar.is_valid:
        return NULL_VALUE
    pair = codec(scalar.type)
    assert pair is not None  # checked by check_partition_by
    text = quote(pair[0](scalar), safe="")
    return "%5F" + text[1:] if text == NULL_VALUE else text


def _shown(scalar: pa.Scalar) -> str:
    """A short text of a value for messages (even one Python cannot hold)."""
    try:
        text = repr(scalar.as_py())
    except (ValueError, OverflowError):
        text = f"<{scalar.type} outside Python's range>"
    return text if len(text) <= 60 else text[:57] + "..."


def directory_of(partition_by: Sequence[str], scalars: Sequence[pa.Scalar]) -> str:
    """The ``col=value/...`` directory of one combination of partition values.

    Raises:
        DataError: a value cannot be encoded (a date or timestamp outside years
            1..9999) or a directory name would exceed :data:`MAX_SEGMENT_BYTES`.
    """
    segments = []
    for name, scalar in zip(partition_by, scalars, strict=True):
        try:
            segment = f"{quote(name, safe='')}={_value_segment(scalar)}"
        except ValueError as exc:
            raise DataError(
                f"partition column {name!r} value {_shown(scalar)} cannot be stored in a file name: "
                f"{exc}"
            ) from exc
        if len(segment) > MAX_SEGMENT_BYTES:
            raise DataError(
                f"partition column {name!r}: the directory name of value {_shown(scalar)} is "
                f"{len(segment)} bytes URL-encoded, more than {MAX_SEGMENT_BYTES}; partition "
                "by a shorter column (or a derived, shorter one)"
            )
        segments.append(segment)
    return "/".join(segments)


def new_label(directory: str) -> str:
    """A new partition label: ``directory`` (may be empty) and a fresh UUID4."""
    part = str(uuid.uuid4())
    return f"{directory}/{part}" if directory else part


def _raw_values(label: str, partition_by: Sequence[str]) -> list[bytes | None]:
    """The decoded value bytes (None for NULL) of each partition column in ``label``."""
    segments = label.split("/")
    if len(segments) != len(partition_by) + 1:
        raise CorruptFileError(
            label,
            f"partition label must have {len(partition_by)} 'column=value' directories "
            f"({', '.join(partition_by) or 'none'}) and a part name",
        )
    values: list[bytes | None] = []
    for name, segment in zip(partition_by, segments, strict=False):
        column, sep, raw = segment.partition("=")
        if not sep or unquote(column) != name:
            raise CorruptFileError(
                label, f"directory {segment!r} is not '{quote(name, safe='')}=...'"
            )
        values.append(None if raw == NULL_VALUE else unquote_to_bytes(raw))
    return values


def partition_scalars(
    label: str, schema: pa.Schema, partition_by: Sequence[str]
) -> dict[str, pa.Scalar]:
    """The typed partition values of ``label`` as Arrow scalars (NULL: an invalid scalar).

    Raises:
        CorruptFileError: the label does not follow the layout for ``partition_by``.
    """
    result = {}
    for name, raw in zip(partition_by, _raw_values(label, partition_by), strict=True):
        type_ = schema.field(name).type
        if raw is None:
            result[name] = pa.scalar(None, type=type_)
            continue
        pair = codec(type_)
        assert pair is not None  # checked at write time
        try:
            result[name] = pair[1](raw, type_)
        except (ValueError, TypeError, ArithmeticError, pa.ArrowException) as exc:
            raise CorruptFileError(
                label, f"value {raw!r} of partition column {name!r} is not a {type_}: {exc}"
            ) from exc
    return result


def partition_values(label: str, schema: pa.Schema, partition_by: Sequence[str]) -> dict[str, Any]:
    """The typed partition values of ``label`` as Python values (NULL: None).

    Values Python cannot hold exactly (nanosecond times and timestamps) are
    returned as Arrow scalars.

    Raises:
        CorruptFileError: the label does not follow the layout for ``partition_by``.
    """
    result: dict[str, Any] = {}
    for name, scalar in partition_scalars(label, schema, partition_by).items():
        # Decided by type, not by what as_py() manages: with pandas installed
        # it returns a pandas Timestamp for nanoseconds, without it, an error.
        nanoseconds = getattr(scalar.type, "unit", None) == "ns"
        result[name] = scalar if nanoseconds else scalar.as_py()
    return result


def _candidate(value: object, type_: pa.DataType) -> bytes | bool | None:
    """The value bytes ``value`` has in a ``type_`` column; None for NULL, False if none."""
    scalar = coerce(value, type_)
    if scalar is None:
        return False
    if not scalar.is_valid:
        return None
    pair = codec(type_)
    assert pair is not None
    try:
        return pair[0](scalar)
    except ValueError:
        return False


def prune(
    meta: DatasetMetadata,
    schema: pa.Schema,
    partition_by: Sequence[str],
    predicate: Mapping[str, Sequence[object]],
) -> list[str]:
    """Labels (in dataset order) whose partition values can satisfy ``predicate``.

    ``predicate`` maps columns to allowed values (``column IN (values)``, all
    columns ANDed). Values are cast to the column's type; values that cannot be
    cast match nothing, and None matches the NULL partition. Columns that are
    not partition columns are ignored.
    """
    wanted: dict[int, set[bytes | None]] = {}
    for column, values in predicate.items():
        if column not in partition_by:
            continue
        type_ = schema.field(column).type
        candidates = (_candidate(value, type_) for value in values)
        wanted[list(partition_by).index(column)] = {c for c in candidates if c is not False}  # type: ignore[misc]
    if not wanted:
        return list(meta.partitions)
    matches: dict[str, bool] = {}
    result = []
    for label in meta.partitions:
        directory = label.rpartition("/")[0]
        if directory not in matches:
            raw = _raw_values(label, partition_by)
            matches[directory] = all(raw[i] in allowed for i, allowed in wanted.items())
        if matches[directory]:
            result.append(label)
    return result
