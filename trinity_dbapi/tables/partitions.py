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

Imports from tables/: metadata, transforms, values.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, unquote_to_bytes

import pyarrow as pa

from trinity_dbapi.errors import CorruptFileError, DataError, NotSupportedError, ProgrammingError
from trinity_dbapi.tables.metadata import (
    PARTITION_SPECS_KEY,
    PARTITION_TRANSFORMS_KEY,
    DatasetMetadata,
)
from trinity_dbapi.tables.transforms import TEMPORAL, Transform, loads, transform_values
from trinity_dbapi.tables.values import codec, coerce

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_SEGMENT_BYTES",
    "NULL_VALUE",
    "ValueRange",
    "check_partition_by",
    "check_partition_name",
    "directory_of",
    "earlier_specs",
    "label_directories",
    "new_label",
    "partition_scalars",
    "partition_values",
    "prune",
    "recorded_transforms",
    "specs_in_use",
]

#: Directory value of a NULL partition value (Hive's default partition name).
NULL_VALUE = "__HIVE_DEFAULT_PARTITION__"
#: Longest ``column=value`` directory name, in bytes (the usual file system NAME_MAX).
MAX_SEGMENT_BYTES = 255
#: Longest URL-encoded partition column name: its directory must hold ``=`` and
#: the NULL marker.
MAX_NAME_BYTES = MAX_SEGMENT_BYTES - 1 - len(NULL_VALUE)


def recorded_transforms(meta: DatasetMetadata | None) -> dict[str, Transform]:
    """The transform partitions ``meta`` records, by directory name (none: {}).

    Raises:
        CorruptFileError: the record is not a JSON object of transforms.
    """
    if meta is None:
        return {}
    return loads(meta.metadata.get(PARTITION_TRANSFORMS_KEY), f"dataset {meta.dataset_uuid}")


def earlier_specs(meta: DatasetMetadata | None) -> list[list[str]]:
    """The earlier partitionings (``partition_by`` lists) of files ``meta`` still lists.

    Raises:
        CorruptFileError: the record is not a JSON list of lists of names.
    """
    text = None if meta is None else meta.metadata.get(PARTITION_SPECS_KEY)
    if text is None:
        return []
    try:
        specs = json.loads(text)
        if isinstance(specs, list) and all(
            isinstance(spec, list) and all(isinstance(n, str) for n in spec) for spec in specs
        ):
            return specs
    except (ValueError, RecursionError):  # RecursionError: nested too deeply for json
        pass
    raise CorruptFileError(
        f"dataset {meta.dataset_uuid}",  # type: ignore[union-attr]
        f"{PARTITION_SPECS_KEY} must be a JSON list of lists of names, not {text[:80]!r}",
    )


def check_partition_by(
    schema: pa.Schema,
    partition_by: Sequence[str],
    meta: DatasetMetadata | None = None,
    transforms: Mapping[str, Transform] | None = None,
) -> None:
    """Check that ``partition_by`` names distinct, partitionable columns of ``schema``.

    Args:
        schema: the table's Arrow schema.
        partition_by: the partition columns, outermost directory first.
        meta: when given, ``partition_by`` must equal the partition columns its
            ``trinity.partition_by`` metadata or Kartothek ``partition_keys``
            record (if it records them).
        transforms: the transform partitions among ``partition_by`` (default:
            those ``meta`` records); each names a directory, not a column.

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
    if transforms is None:
        transforms = recorded_transforms(meta)
    identity = [name for name in partition_by if name not in transforms]
    if len(identity) == len(schema) and identity:
        raise ProgrammingError("at least one column must not be a partition column")
    for name, transform in transforms.items():
        if name not in partition_by:
            continue  # a transform of an earlier partitioning
        if schema.get_field_index(name) >= 0:
            raise ProgrammingError(
                f"partition {transform.sql()} must be named by a partition directory that is "
                f"not a column, not {name!r}"
            )
        index = schema.get_field_index(transform.source)
        if index < 0:
            raise ProgrammingError(
                f"partition {transform.sql()}: {transform.source!r} is not a column of the table"
            )
        transform.check(schema.field(index).type)
    for name in identity:
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


def _spec_of(
    label: str, partition_by: Sequence[str], earlier: Sequence[Sequence[str]]
) -> Sequence[str]:
    """The partitioning ``label`` was written with: ``partition_by`` or one of ``earlier``."""
    if earlier:
        names = [unquote(segment.partition("=")[0]) for segment in label.split("/")[:-1]]
        for spec in (partition_by, *earlier):
            if list(spec) == names:
                return spec
    return partition_by


def label_directories(label: str) -> list[str]:
    """The directory names of ``label`` (its partitioning), outermost first."""
    return [unquote(segment.partition("=")[0]) for segment in label.split("/")[:-1]]


def specs_in_use(meta: DatasetMetadata, partition_by: Sequence[str]) -> list[list[str]]:
    """The partitionings the files of ``meta`` were written with (``partition_by``: the current)."""
    earlier = earlier_specs(meta)
    used: list[list[str]] = []
    for label in meta.partitions:
        spec = list(_spec_of(label, partition_by, earlier))
        if spec not in used:
            used.append(spec)
    return used


def _label_values(
    label: str, partition_by: Sequence[str], earlier: Sequence[Sequence[str]] = ()
) -> dict[str, bytes | None]:
    """Directory name -> decoded value bytes (None: NULL) of ``label``, in its own partitioning."""
    spec = _spec_of(label, partition_by, earlier)
    return dict(zip(spec, _raw_values(label, spec), strict=True))


def directory_texts(
    label: str, partition_by: Sequence[str], earlier: Sequence[Sequence[str]] = ()
) -> dict[str, str | None]:
    """Directory name -> its value as text (None: NULL), in ``label``'s own partitioning.

    Transform directories (``ts_day``) included: what ``system.data_files`` shows.
    """
    return {
        name: None if raw is None else raw.decode("utf-8", "backslashreplace")
        for name, raw in _label_values(label, partition_by, earlier).items()
    }


def partition_scalars(
    label: str,
    schema: pa.Schema,
    partition_by: Sequence[str],
    earlier: Sequence[Sequence[str]] = (),
) -> dict[str, pa.Scalar]:
    """The typed partition values of ``label`` as Arrow scalars (NULL: an invalid scalar).

    Only partition columns: a transform's directory restores no column. A
    file of an earlier partitioning (``earlier``) gives the columns it has.

    Raises:
        CorruptFileError: the label does not follow the layout for ``partition_by``.
    """
    result = {}
    for name, raw in _label_values(label, partition_by, earlier).items():
        if schema.get_field_index(name) < 0:
            continue  # a transform's directory: nothing to restore from it
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


@dataclass(frozen=True)
class ValueRange:
    """``low <= column <= high`` (a bound None: open), as a query states it.

    Attributes:
        low: the lower bound's value (cast to the column's type when pruning).
        high: the upper bound's value.
        high_inclusive: False for ``column < high``.
    """

    low: object = None
    high: object = None
    high_inclusive: bool = True


def _candidate(value: object, type_: pa.DataType) -> bytes | bool | None:
    """The value bytes ``value`` has in a ``type_`` column; None for NULL, False if none."""
    scalar = coerce(value, type_)
    if scalar is None:
        return False
    if not scalar.is_valid:
        return None
    return _encoded(scalar)


def _encoded(scalar: pa.Scalar) -> bytes | bool:
    pair = codec(scalar.type)
    assert pair is not None
    try:
        return pair[0](scalar)
    except ValueError:
        return False


def _transformed(transform: Transform, type_: pa.DataType, values: Sequence[object]) -> set:
    """The directory value bytes (None: NULL) of the rows whose source is one of ``values``."""
    scalars = [coerce(value, type_) for value in values]
    valid = [s for s in scalars if s is not None and s.is_valid]
    found: set[bytes | bool | None] = (
        {None} if any(s is not None and not s.is_valid for s in scalars) else set()
    )
    try:
        found.update(_encoded(v) for v in transform_values(transform, type_, valid) if v.is_valid)
    except DataError:
        return {False}  # a value outside years 1..9999 cannot be stored: no file holds it
    found.discard(False)
    return found


def _exact(value: object, scalar: pa.Scalar, type_: pa.DataType) -> bool:
    """Whether ``scalar`` (``value`` cast to ``type_``) is ``value`` itself, to the nanosecond."""
    fine_type = pa.timestamp("ns", getattr(type_, "tz", None))
    fine = coerce(value, fine_type)
    try:
        return fine is not None and fine.cast(pa.int64()) == scalar.cast(fine_type).cast(pa.int64())
    except (pa.ArrowException, OverflowError):
        return False


def _bound(value: object, type_: pa.DataType, before: bool) -> pa.Scalar | None:
    """``value`` as a ``type_`` scalar; ``before``: the last value below it. None: unknown."""
    scalar = coerce(value, type_)
    if scalar is None or not scalar.is_valid:
        return None
    if before and _exact(value, scalar, type_):
        # Only when the column's type holds the bound exactly: d < '2024-01-01 10:00'
        # on a DATE column holds for d = 2024-01-01, so it must not become d <= 2023-12-31.
        width = pa.int32() if pa.types.is_date32(type_) else pa.int64()
        naive = pa.timestamp(type_.unit) if pa.types.is_timestamp(type_) else type_
        raw = scalar.cast(naive)
        try:
            scalar = pa.scalar(raw.cast(width).as_py() - 1, width).cast(raw.type).cast(type_)
        except (pa.ArrowException, OverflowError):
            return None
    return scalar


def _range_test(
    transform: Transform, type_: pa.DataType, bounds: ValueRange
) -> Callable[[bytes | None], bool] | None:
    """Whether a directory value of ``transform`` can hold a row in ``bounds``; None: any can."""
    if transform.kind == "truncate" and (pa.types.is_integer(type_) or pa.types.is_decimal(type_)):
        return _truncated_range_test(transform, type_, bounds)
    if transform.kind not in TEMPORAL:
        return None
    texts: list[str | None] = []
    for value, before in ((bounds.low, False), (bounds.high, not bounds.high_inclusive)):
        if value is None:
            texts.append(None)
            continue
        scalar = _bound(value, type_, before)
        if scalar is None:
            return None
        try:
            text = transform.apply(pa.array([scalar], type_))[0].as_py()
        except DataError:
            return None
        texts.append(text)
    low, high = texts

    def test(raw: bytes | None) -> bool:
        if raw is None:
            return False  # NULL is in no range
        text = raw.decode("utf-8", "replace")
        return (low is None or text >= low) and (high is None or text <= high)

    return test


def _truncated_range_test(
    transform: Transform, type_: pa.DataType, bounds: ValueRange
) -> Callable[[bytes | None], bool] | None:
    """The range test of ``truncate`` on a number: the truncation never decreases.

    A row in ``[low, high]`` lies in a directory between ``truncate(low)`` and
    ``truncate(high)`` (also for ``< high``). A bound the column cannot hold
    exactly (``12.345`` for a ``decimal(9, 2)``) prunes nothing.
    """
    limits: list[Any] = []
    for value in (bounds.low, bounds.high):
        if value is None:
            limits.append(None)
            continue
        scalar = coerce(value, type_)
        if scalar is None or not scalar.is_valid:
            return None
        try:
            limits.append(transform.apply(pa.array([scalar], type_))[0].as_py())
        except DataError:
            return None  # the bound truncates outside the type: rows near it may not
    low, high = limits
    pair = codec(type_)
    assert pair is not None

    def test(raw: bytes | None) -> bool:
        if raw is None:
            return False  # NULL is in no range
        try:
            value = pair[1](raw, type_).as_py()
        except (ValueError, pa.ArrowException):
            return True  # a directory we cannot read: keep the file
        return (low is None or value >= low) and (high is None or value <= high)

    return test


#: A float column's two zeros: directories ``-0`` and ``0``, one value to SQL's ``=``.
_ZEROS = frozenset({b"-0", b"0"})


def prune(
    meta: DatasetMetadata,
    schema: pa.Schema,
    partition_by: Sequence[str],
    predicate: Mapping[str, Sequence[object] | ValueRange],
    transforms: Mapping[str, Transform] | None = None,
) -> list[str]:
    """Labels (in dataset order) whose partition values can satisfy ``predicate``.

    ``predicate`` maps columns to allowed values (``column IN (values)``) or
    to a :class:`ValueRange`, all columns ANDed. Values are cast to the
    column's type; values that cannot be cast match nothing, None matches
    the NULL partition, and a float zero both zeros' partitions (-0.0 = 0.0).
    A partition column prunes by its values; a transform
    partition (``transforms``, default: those ``meta`` records) prunes by the
    transformed values of its source column's (``year`` .. ``hour`` also by
    its range, as they only grow with the source, and so does ``truncate`` of
    an integer or decimal). Other columns are ignored.
    """
    if transforms is None:
        transforms = recorded_transforms(meta)
    earlier = earlier_specs(meta)
    order = {name for spec in (partition_by, *earlier) for name in spec}
    tests: dict[str, list[Callable[[bytes | None], bool]]] = {}

    def add(name: str, test: Callable[[bytes | None], bool]) -> None:
        tests.setdefault(name, []).append(test)

    for column, values in predicate.items():
        if schema.get_field_index(column) < 0:
            continue
        type_ = schema.field(column).type
        if column in order and column not in transforms and not isinstance(values, ValueRange):
            allowed = {c for c in (_candidate(value, type_) for value in values) if c is not False}
            if pa.types.is_floating(type_) and allowed & _ZEROS:
                allowed |= _ZEROS  # SQL equality: -0.0 = 0.0, two directories
            add(column, allowed.__contains__)
        for name, transform in transforms.items():
            if transform.source != column or name not in order:
                continue
            if isinstance(values, ValueRange):
                ranged = _range_test(transform, type_, values)
                if ranged is not None:
                    add(name, ranged)
            else:
                add(name, _transformed(transform, type_, values).__contains__)
    if not tests:
        return list(meta.partitions)
    matches: dict[str, bool] = {}
    result = []
    for label in meta.partitions:
        directory = label.rpartition("/")[0]
        if directory not in matches:
            raw = _label_values(label, partition_by, earlier)
            # A file of an earlier partitioning without such a directory is kept.
            matches[directory] = all(
                test(raw[name]) for name, checks in tests.items() if name in raw for test in checks
            )
        if matches[directory]:
            result.append(label)
    return result
