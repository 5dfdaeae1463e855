"""Which files a statement reads from storage: shared by the catalog pushdown tests.

Files the storage's cache of immutable files serves are not reads; clear it
(and the node cache) first to count from cold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trinity_dbapi.dbapi.connection import Connection
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.storage.cache import shared_cache


def paths_read(con: Connection, sql: str, params: Any = ()) -> tuple[list[str], list[Any]]:
    """Every path a statement read from storage (or tried to), in order, and its rows."""
    storage = con.lakehouse.storage
    seen: list[str] = []
    original = storage._read

    def counting(path: str) -> bytes:
        seen.append(path)
        return original(path)

    storage._read = counting  # type: ignore[method-assign]
    try:
        rows = con.cursor().execute(sql, params).fetchall()
    finally:
        storage._read = original  # type: ignore[method-assign]
    return seen, rows


def roots_read(con: Connection, sql: str, params: Any = ()) -> tuple[int, list[Any]]:
    """How many root node files a statement read, and its rows."""
    seen, rows = paths_read(con, sql, params)
    roots = [p for p in seen if p.rsplit("/", 1)[-1].startswith("_") and p.endswith(".arrow")]
    return len(roots), rows


def definitions_read(con: Connection, sql: str) -> list[str]:
    """The table definition files a statement read."""
    seen, _ = paths_read(con, sql)
    return [p for p in seen if "table-" in p and p.endswith(".binpb")]


def lake_with_damaged_root(path: Path, damaged: int = 3, commits: int = 6) -> str:
    """A lakehouse of ``commits`` namespace commits whose version ``damaged`` root is garbage."""
    lake = Lakehouse.create(str(path))
    for i in range(commits):
        with lake.begin() as txn:
            txn.create_namespace(f"v{i}")
    (path / root_node_file_name(damaged)).write_bytes(b"damaged")
    shared_cache().clear()  # the damage is found as another process would find it
    return str(path)
