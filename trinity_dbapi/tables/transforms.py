"""Partition transforms: a directory value derived from a column (Iceberg's transforms).

A table may be partitioned by ``year(c)``, ``month(c)``, ``day(c)``,
``hour(c)``, ``bucket(N, c)`` and ``truncate(W, c)`` besides plain columns.
Such a partition has a directory name of its own (``<c>_<transform>``, e.g.
``ts_day``, ``id_bucket``, ``name_trunc``) that is not a column of the table;
the source column stays in the data file, and readers never restore anything
from these directories: they only prune by them.

The values, as Iceberg defines them (spec, "Partition Transforms"), written
as Iceberg writes them into paths (``PartitionSpec.partitionToPath``):

==============  ==========================  ========================================
transform       source types                directory value
==============  ==========================  ========================================
``year``        date, timestamp(tz)         ``2024`` (the UTC year)
``month``       date, timestamp(tz)         ``2024-01``
``day``         date, timestamp(tz)         ``2024-01-31``
``hour``        timestamp(tz)               ``2024-01-31-23`` (the UTC hour)
``bucket(N)``   int, decimal, string,       ``(murmur3_x86_32(bytes) & INT_MAX) % N``
                binary, fixed, date, time,  over Iceberg's bytes of the value
                timestamp(tz)
``truncate(W)`` int, decimal, string,       ints ``v - (v mod W)`` (floor), decimals
                binary                      the same on the unscaled value (``W`` in
                                            units of the scale), strings and bytes
                                            their first ``W`` code points / bytes
==============  ==========================  ========================================

The temporal texts are fixed width (years 0001..9999), so their text order
is time order and a range on the source column is a range of texts.

Imports from tables/: nothing.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trinity_dbapi.errors import CorruptFileError, DataError, NotSupportedError, ProgrammingError

__all__ = [
    "TEMPORAL",
    "TRANSFORMS",
    "Transform",
    "by_source",
    "dumps",
    "loads",
    "transform_values",
]

#: Transforms whose value only grows with the source value (ranges prune).
TEMPORAL = ("year", "month", "day", "hour")
#: Every transform, by the name SQL calls it.
TRANSFORMS = (*TEMPORAL, "bucket", "truncate")
#: Suffix of a transform's directory name (Iceberg's partition field names).
_SUFFIX = {"truncate": "trunc"}
_INT_MAX = 2**31 - 1
_MICROS = {"s": 10**6, "ms": 10**3, "us": 1, "ns": None}


def _is_timestamp(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t)


def _is_int(t: pa.DataType) -> bool:
    return pa.types.is_integer(t)


def _is_text(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _is_bytes(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t)


def _is_decimal(t: pa.DataType) -> bool:
    return pa.types.is_decimal(t)


def _accepts(kind: str, t: pa.DataType) -> bool:
    if kind in ("year", "month", "day"):
        return pa.types.is_date32(t) or _is_timestamp(t)
    if kind == "hour":
        return _is_timestamp(t)
    if kind == "bucket":
        return (
            _is_int(t)
            or _is_decimal(t)
            or _is_text(t)
            or _is_bytes(t)
            or pa.types.is_fixed_size_binary(t)
            or pa.types.is_date32(t)
            or pa.types.is_time(t)
            or _is_timestamp(t)
        )
    return _is_int(t) or _is_decimal(t) or _is_text(t) or _is_bytes(t)


@dataclass(frozen=True)
class Transform:
    """One transform partition.

    Attributes:
        name: its directory name (not a column of the table).
        kind: one of :data:`TRANSFORMS`.
        source: the column it is computed from.
        width: ``N`` of ``bucket(N, c)``, ``W`` of ``truncate(W, c)``; else None.
    """

    name: str
    kind: str
    source: str
    width: int | None = None

    @staticmethod
    def default_name(kind: str, source: str) -> str:
        """The directory name of ``kind`` over ``source``: ``ts_day``, ``id_bucket``, ``s_trunc``."""
        return f"{source}_{_SUFFIX.get(kind, kind)}"

    def sql(self) -> str:
        """The transform as SQL text, column name unquoted: ``day(ts)``, ``bucket(16, id)``."""
        if self.width is None:
            return f"{self.kind}({self.source})"
        return f"{self.kind}({self.width}, {self.source})"

    def check(self, source_type: pa.DataType) -> None:
        """Check the transform applies to a column of ``source_type``.

        Raises:
            NotSupportedError: a source type the transform does not take.
            ProgrammingError: a width that is not a positive integer.
        """
        if self.kind not in TRANSFORMS:
            raise NotSupportedError(
                f"partition transform {self.kind!r} does not exist; use one of {', '.join(TRANSFORMS)}"
            )
        sized = self.kind in ("bucket", "truncate")
        if sized and (not isinstance(self.width, int) or not 0 < self.width <= _INT_MAX):
            raise ProgrammingError(
                f"partition transform {self.kind}({self.width}, {self.source}) needs a "
                f"positive integer width up to {_INT_MAX}"
            )
        if not _accepts(self.kind, source_type):
            raise NotSupportedError(
                f"partition transform {self.sql()} cannot take column {self.source!r} of type "
                f"{source_type}: {self.kind} takes "
                + {
                    "hour": "timestamps",
                    "bucket": "integers, decimals, strings, binary, dates, times and timestamps",
                    "truncate": "integers, decimals, strings and binary",
                }.get(self.kind, "dates and timestamps")
            )

    def result_type(self, source_type: pa.DataType) -> pa.DataType:
        """The Arrow type of the values :meth:`apply` gives."""
        if self.kind in TEMPORAL:
            return pa.string()
        if self.kind == "bucket":
            return pa.int32()
        return source_type

    def apply(self, array: pa.Array | pa.ChunkedArray) -> pa.Array:
        """The transformed value of every element of ``array`` (NULL stays NULL).

        Raises:
            DataError: a date or timestamp outside years 1..9999 (no text).
        """
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if self.kind in TEMPORAL:
            return _temporal(self, array)
        if self.kind == "bucket":
            return _bucket(array, self.width or 1)
        return _truncate(array, self.width or 1)

    def to_json(self) -> dict[str, object]:
        body: dict[str, object] = {"transform": self.kind, "source": self.source}
        if self.width is not None:
            body["width"] = self.width
        return body


def _temporal(transform: Transform, array: pa.Array) -> pa.Array:
    t = array.type
    if _is_timestamp(t) and t.tz is not None:
        array = array.cast(pa.timestamp(t.unit))  # the same instants, read in UTC
    years = pc.year(array)
    low, high = pc.min_max(years).values()
    if low.is_valid and (low.as_py() < 1 or high.as_py() > 9999):
        raise DataError(
            f"partition {transform.sql()}: a value in year "
            f"{low.as_py() if low.as_py() < 1 else high.as_py()} has no text (years 1..9999 only)"
        )

    def padded(values: pa.Array, width: int) -> pa.Array:
        return pc.utf8_lpad(pc.cast(values, pa.string()), width, "0")

    parts = [padded(years, 4)]
    if transform.kind != "year":
        parts.append(padded(pc.month(array), 2))
    if transform.kind in ("day", "hour"):
        parts.append(padded(pc.day(array), 2))
    if transform.kind == "hour":
        parts.append(padded(pc.hour(array), 2))
    if len(parts) == 1:
        return parts[0]
    return pc.binary_join_element_wise(*parts, "-")


def _hash_bytes(value: object, t: pa.DataType) -> bytes:
    """Iceberg's bytes of one value for bucketing (spec, appendix B)."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    if _is_decimal(t):
        # The unscaled value's two's complement, big-endian, in as few bytes
        # as hold it (Java's BigInteger.toByteArray): 14.20 hashes 0x058C.
        unscaled = int(value)  # type: ignore[call-overload]
        size = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
        return unscaled.to_bytes(size, "big", signed=True)
    return struct.pack("<q", int(value))  # type: ignore[call-overload]


def _unscaled(array: pa.Array) -> list[int | None]:
    """The unscaled integers of a decimal array (14.20 in decimal(4, 2): 1420)."""
    scale = array.type.scale
    result: list[int | None] = []
    for value in array.to_pylist():
        if value is None:
            result.append(None)
            continue
        sign, digits, exponent = value.as_tuple()
        magnitude = int("".join(map(str, digits)) or "0") * 10 ** (exponent + scale)
        result.append(-magnitude if sign else magnitude)
    return result


def _time_micros(array: pa.Array) -> pa.Array:
    """Microseconds since midnight of a time array (nanoseconds dropped, as Iceberg's)."""
    t = array.type
    raw = array.cast(pa.int64()) if t.bit_width == 64 else array.cast(pa.int32()).cast(pa.int64())
    per = _MICROS[t.unit]
    # A time of day is never negative: dividing truncates like the floor.
    return pc.divide(raw, 1000) if per is None else pc.multiply(raw, per)


def _bucket(array: pa.Array, n: int) -> pa.Array:
    t = array.type
    if pa.types.is_date32(t):
        array = array.cast(pa.int32())
    elif pa.types.is_time(t):
        array = _time_micros(array)
    elif pa.types.is_fixed_size_binary(t):
        array = array.cast(pa.binary())
    elif _is_timestamp(t):
        raw = array.cast(pa.timestamp(t.unit)).cast(pa.int64())
        per = _MICROS[t.unit]
        # nanoseconds: Iceberg hashes the microseconds
        array = _floor_div(raw, 1000) if per is None else pc.multiply(raw, per)
    unique = pc.unique(array)
    values = _unscaled(unique) if _is_decimal(t) else unique.to_pylist()
    buckets = [
        None if v is None else (mmh3.hash(_hash_bytes(v, t), signed=True) & _INT_MAX) % n
        for v in values
    ]
    return pc.take(pa.array(buckets, pa.int32()), pc.index_in(array, unique))


def _floor_div(array: pa.Array, d: int) -> pa.Array:
    values = np.floor_divide(array.fill_null(0).to_numpy(zero_copy_only=False), d)
    return pa.array(values, pa.int64(), mask=array.is_null().to_numpy(zero_copy_only=False))


def _truncate(array: pa.Array, w: int) -> pa.Array:
    t = array.type
    if _is_int(t):
        values = array.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        result = values - np.mod(values, w)
        mask = array.is_null().to_numpy(zero_copy_only=False)
        try:
            return pa.array(result, pa.int64(), mask=mask).cast(t)
        except pa.ArrowInvalid as exc:
            raise DataError(f"partition truncate({w}): a value truncates outside {t}") from exc
    if _is_decimal(t):
        return _truncate_decimal(array, w)
    if _is_text(t):
        return pc.utf8_slice_codeunits(array, 0, w)
    return pc.binary_slice(array, 0, w)


def _truncate_decimal(array: pa.Array, w: int) -> pa.Array:
    """Iceberg's decimal truncation: ``v - (v mod W)`` on the unscaled value, same scale."""
    import decimal

    t = array.type
    limit = 10**t.precision
    unique = pc.unique(array)
    result: list[decimal.Decimal | None] = []
    for v in _unscaled(unique):
        if v is None:
            result.append(None)
            continue
        truncated = v - v % w  # Python's % is the floor remainder: -1 mod 10 = 9
        if not -limit < truncated < limit:
            raise DataError(
                f"partition truncate({w}): a value truncates to {truncated} units of scale "
                f"{t.scale}, outside {t}; use a narrower width or a wider column"
            )
        # From text: exact at any precision (arithmetic would round to 28 digits).
        result.append(decimal.Decimal(f"{truncated}E-{t.scale}"))
    return pc.take(pa.array(result, t), pc.index_in(array, unique))


def dumps(transforms: Sequence[Transform]) -> str:
    """The JSON object ``{name: {transform, source[, width]}}`` that records ``transforms``."""
    return json.dumps({t.name: t.to_json() for t in transforms}, separators=(",", ":"))


def loads(text: str | None, where: str) -> dict[str, Transform]:
    """The transforms a :func:`dumps` text records (None: none), by directory name.

    Raises:
        CorruptFileError: the text is not such an object.
    """
    if text is None:
        return {}
    try:
        body = json.loads(text)
        result = {}
        for name, spec in body.items():
            width = spec.get("width")
            if spec["transform"] not in TRANSFORMS or not isinstance(spec["source"], str):
                raise ValueError(spec)
            if width is not None and type(width) is not int:
                raise ValueError(spec)
            result[name] = Transform(name, spec["transform"], spec["source"], width)
        return result
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        # RecursionError: JSON nested too deeply to parse, which no writer writes.
        raise CorruptFileError(
            where, f"partition transforms must be a JSON object of transforms, not {text[:80]!r}"
        ) from exc


def transform_values(
    transform: Transform, source_type: pa.DataType, values: Sequence[pa.Scalar]
) -> list[pa.Scalar]:
    """The transformed values of ``values`` (scalars of ``source_type``)."""
    if not values:
        return []
    return list(transform.apply(pa.array(list(values), source_type)))


def by_source(transforms: Mapping[str, Transform]) -> dict[str, list[Transform]]:
    """The transforms of each source column."""
    result: dict[str, list[Transform]] = {}
    for transform in transforms.values():
        result.setdefault(transform.source, []).append(transform)
    return result
