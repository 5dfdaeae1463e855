"""Each data file's value bounds: skipping files a point query's value cannot be in.

A file this project writes records, beside its facts
(:mod:`~trinity_dbapi.tables.file_facts`), the smallest and largest non-null
value of each top-level integer column and of each text column whose bounds
are at most :data:`~trinity_dbapi.tables.file_facts.MAX_TEXT_BOUND`
characters, keyed by column ID (a column renamed keeps its bounds; one
dropped and added again has a new ID and none). They come from the footer
the writer made: Arrow's Parquet writer keeps exact minima and maxima (it
drops statistics it cannot keep whole, never truncates them), so the
bounds are exact. Files written by other writers (Kartothek, an import)
have none and are always read.

A query's ``column = value`` or ``column IN (...)`` then skips every file
whose bounds hold none of the values: in a fresh process a point lookup in
a table of many files reads the one or few that can match, where it read
every file's footer before. Only an ``int`` value against an integer column
and a ``str`` against a text column is compared (DuckDB's casts decide the
rest); anything else keeps the file.

Imports from tables/: file_facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from trinity_dbapi.tables.file_facts import MAX_TEXT_BOUND, Bounds

if TYPE_CHECKING:
    import pyarrow.parquet as pq

__all__ = ["column_ids", "from_footer", "may_hold", "prune"]

#: Trinity column types whose bounds are recorded (their values compare as Python's do).
_INTEGER = frozenset({"int2", "int4", "int8"})
_TEXT = frozenset({"varchar"})


def column_ids(schema: pa.Schema) -> dict[str, str]:
    """Column name -> its column ID (as text), for the columns bounds are kept of."""
    ids: dict[str, str] = {}
    for field in schema:
        meta = field.metadata or {}
        kind = meta.get(b"trinity.type", b"").decode()
        column_id = meta.get(b"trinity.id", b"").decode()
        # VARCHAR(n) compares as VARCHAR; CHAR(n) pads, so it has none.
        text = kind.partition("(")[0] in _TEXT
        if column_id.isdigit() and (kind in _INTEGER or text):
            ids[field.name] = column_id
    return ids


def _leaves(type_: pa.DataType) -> int:
    """How many Parquet leaf columns a field of this type is written as."""
    if pa.types.is_struct(type_):
        return sum(_leaves(type_.field(i).type) for i in range(type_.num_fields))
    if pa.types.is_map(type_):
        return _leaves(type_.key_type) + _leaves(type_.item_type)
    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        return _leaves(type_.value_type)
    return 1


def from_footer(schema: pa.Schema, footer: pq.FileMetaData) -> Bounds:
    """The bounds of the file whose footer is ``footer``, written with ``schema``."""
    wanted = column_ids(schema)
    bounds: dict[str, tuple[Any, Any]] = {}
    leaf = 0
    for field in schema:
        index, leaf = leaf, leaf + _leaves(field.type)
        column_id = wanted.get(field.name)
        if column_id is None or footer.num_row_groups == 0:
            continue
        found = _file_bounds(footer, index)
        if found is not None:
            bounds[column_id] = found
    return bounds


def _file_bounds(footer: pq.FileMetaData, index: int) -> tuple[Any, Any] | None:
    low: Any = None
    high: Any = None
    for group in range(footer.num_row_groups):
        chunk = footer.row_group(group).column(index)
        stats = chunk.statistics
        if stats is None:
            return None
        if stats.has_null_count and stats.null_count == chunk.num_values:
            continue  # only nulls: no value to bound
        if not stats.has_min_max:
            return None
        small, big = stats.min, stats.max
        if type(small) is not type(big) or type(small) not in (int, str):
            return None
        low = small if low is None or small < low else low
        high = big if high is None or big > high else high
    if low is None:
        return None
    if isinstance(low, str) and max(len(low), len(high)) > MAX_TEXT_BOUND:
        return None
    return low, high


def may_hold(bounds: Bounds | None, column_id: str, values: Sequence[Any]) -> bool:
    """Whether a file with ``bounds`` can hold a row whose column is one of ``values``.

    True whenever it cannot be ruled out: no bounds for the column, or a value
    of another kind than the bounds (DuckDB casts it; we do not guess how).
    """
    pair = None if bounds is None else bounds.get(column_id)
    if pair is None:
        return True
    low, high = pair
    return any(type(value) is not type(low) or low <= value <= high for value in values)


def prune(
    labels: Sequence[str],
    bounds: Mapping[str, Bounds],
    ids: Mapping[str, str],
    predicate: Mapping[str, Sequence[Any]],
) -> list[str]:
    """The ``labels`` whose bounds can hold every point predicate's values (order kept)."""
    checks = [(ids[column], values) for column, values in predicate.items() if column in ids]
    if not checks or not bounds:
        return list(labels)
    return [
        label
        for label in labels
        if all(may_hold(bounds.get(label), column_id, values) for column_id, values in checks)
    ]
