"""Which column type changes the data files need not follow (``ALTER COLUMN ... TYPE``).

Every reader matches a file's columns by column ID and casts them to the
declared type: the SQL engine's column-ID reads (:mod:`.reader`), DuckDB's
``read_parquet`` with a schema map (the bridge), the Arrow dataset and Spark
(both through :mod:`.reader`), index files (:func:`.indices.read_index`
casts their values) and partition values (decoded from the directory names
as the declared type). A change is allowed only where that cast is exact
for every value an older file can hold and gives the same text in
directory names: a widening of the same kind of value.

Imports from tables/: nothing.
"""

from __future__ import annotations

from trinity_dbapi.format.definitions import DataType

__all__ = ["PROMOTIONS", "is_promotion"]

#: The kinds each kind widens to, in words for error messages.
PROMOTIONS = (
    "int2 -> int4 -> int8",
    "float4 -> float8",
    "decimal(p, s) -> decimal(p', s) with p' > p",
    "varchar(n) -> varchar(m) with m > n (or unbounded varchar)",
)

_WIDER_INTEGERS = {"int2": ("int4", "int8"), "int4": ("int8",)}


def is_promotion(old: DataType, new: DataType) -> bool:
    """Whether values of ``old`` read exactly as ``new`` (the same type included)."""
    if old == new:
        return True
    if old.kind in _WIDER_INTEGERS:
        return new.kind in _WIDER_INTEGERS[old.kind]
    if old.kind == "float4":
        return new.kind == "float8"
    if old.kind == "decimal" and new.kind == "decimal":
        assert old.precision is not None and new.precision is not None
        return new.scale == old.scale and new.precision > old.precision
    if old.kind == "varchar" and new.kind == "varchar":
        assert old.length is not None and new.length is not None
        return new.length > old.length
    return False
