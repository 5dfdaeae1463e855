"""Partition columns of a DuckDB ``read_parquet`` scan, decoded from each file's path.

Both DuckDB scans of a managed table's local or fsspec files (the private
DuckDB's :class:`~trinity_dbapi.sql.engine.native_scan.NativeScan` and the views of
:mod:`trinity_dbapi.duckdb`) read partition values this one way, never with
DuckDB's ``hive_partitioning``: DuckDB does not URL-decode the column half of
a ``column=value`` directory, so a column whose name the layout encodes
(``a b`` is ``a%20b=...``, and so are ``,``, ``=``, ``/``, ``%``, quotes and
non-ASCII letters) would not be found, and it reads any ``x=y`` directory
above the dataset as a column too.

Instead the scan asks for each file's path (``filename = ...``) and every
partition column is an expression over it that follows
:mod:`~trinity_dbapi.tables.partitions` exactly: the directory is found by
the column's own encoded name, counted from the end of the path (so the
lakehouse root may hold any text), the NULL marker is compared before
URL-decoding (an encoded ``%5F_HIVE_DEFAULT_PARTITION__`` is the text, not
NULL), and the decoded text is cast to the column's declared DuckDB type.
DuckDB evaluates expressions over the file name once per file, so a filter
on a partition column still skips files without opening them.

Imports from tables/: nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import quote

from trinity_dbapi.format.sql_text import quote_identifier, quote_string

__all__ = ["SCAN_OPTIONS", "file_column", "partition_value"]

#: Options of every ``read_parquet`` whose partition columns come from here:
#: DuckDB must not guess columns from the directory names itself.
SCAN_OPTIONS = "hive_partitioning = false"
#: The name of a NULL partition value's directory (``tables.partitions.NULL_VALUE``;
#: not imported, so this module stays free of the dataset code's imports).
_NULL_VALUE = "__HIVE_DEFAULT_PARTITION__"


def file_column(names: Iterable[str]) -> str:
    """A name for the file path column that no column of the table has (DuckDB folds case)."""
    taken = {name.casefold() for name in names}
    column = "__trinity_file"
    while column.casefold() in taken:
        column += "_"
    return column


def partition_value(
    file_column: str, partition_by: Sequence[str], name: str, duckdb_type: str
) -> str:
    """SQL for the value of partition column ``name``, typed ``duckdb_type``.

    Args:
        file_column: the scan's file path column (from :func:`file_column`),
            unquoted.
        partition_by: the table's partition columns, outermost first.
        name: one of them.
        duckdb_type: its declared DuckDB type text.
    """
    # A data file is .../<col1>=<v1>/.../<colN>=<vN>/<part>.parquet.
    after = len(partition_by) - list(partition_by).index(name)  # directories after it + file
    pattern = "/" + re.escape(quote(name, safe="") + "=") + "([^/]*)" + "/[^/]+" * after + "$"
    path = quote_identifier(file_column)
    raw = f"regexp_extract({path}, {quote_string(pattern)}, 1)"
    return f"CAST(url_decode(NULLIF({raw}, {quote_string(_NULL_VALUE)})) AS {duckdb_type})"
