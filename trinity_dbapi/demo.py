"""The demo job: a local lakehouse with sample objects, and queries against it.

``trinity-demo [FOLDER]`` (default ``./demo-lakehouse``) creates a Trinity
Lakehouse in a local folder if there is none, commits sample namespaces and
tables (real protobuf definitions, real object keys), and then queries it:
namespaces and tables by prefix scan, one table's schema by point lookup,
and the catalog as of an earlier version (time travel by version number).
Running it again adds a new version and shows the history growing.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from typing import TextIO

from trinity_dbapi.format.definitions import (
    Column,
    DataType,
    NamespaceDefinition,
    TableDefinition,
)
from trinity_dbapi.format.keys import (
    decode_key,
    namespace_key,
    namespace_tables_prefix,
    table_key,
)
from trinity_dbapi.format.paths import namespace_definition_path, table_definition_path
from trinity_dbapi.lakehouse import Lakehouse, Snapshot

SAMPLE: dict[str, dict[str, list[Column]]] = {
    "sales": {
        "orders": [
            Column(1, "order_id", DataType("int8"), nullable=False),
            Column(2, "customer", DataType.varchar(64)),
            Column(3, "amount", DataType.decimal(12, 2)),
            Column(4, "ordered_at", DataType.timestamptz(6)),
        ],
        "customers": [
            Column(1, "customer", DataType.varchar(64), nullable=False),
            Column(2, "country", DataType.char(2)),
            Column(3, "tags", DataType.list_of(Column(4, "element", DataType.varchar(16)))),
        ],
    },
    "ops": {
        "events": [
            Column(1, "at", DataType.timestamp(3), nullable=False),
            Column(2, "payload", DataType.binary(1024)),
        ],
    },
}


def _write_definition(lake: Lakehouse, path: str, data: bytes) -> str:
    lake.storage.create_exclusive(path, data)
    return path


def load_sample(lake: Lakehouse, snap: Snapshot, suffix: str = "") -> Snapshot:
    """Commit the sample namespaces and tables as one version; return it."""
    limits = lake.definition.key_limits
    changes: dict[str, str | None] = {}
    for ns, tables in SAMPLE.items():
        ns_def = NamespaceDefinition(ns, {"owner": "demo"})
        changes[namespace_key(ns, limits)] = _write_definition(
            lake, namespace_definition_path(ns), ns_def.to_bytes()
        )
        for name, columns in tables.items():
            table = TableDefinition(
                name + suffix, tuple(columns), table_format="parquet", primary_key=(1,)
            )
            changes[table_key(ns, name + suffix, limits)] = _write_definition(
                lake, table_definition_path(ns, name + suffix), table.to_bytes()
            )
    return lake.commit(snap, changes)


def load_bulk(lake: Lakehouse, snap: Snapshot, count: int, tag: str) -> Snapshot:
    """Commit ``count`` generated tables into namespace ``bulk`` as one version."""
    limits = lake.definition.key_limits
    changes: dict[str, str | None] = {}
    if snap.get(namespace_key("bulk", limits)) is None:
        ns_def = NamespaceDefinition("bulk")
        changes[namespace_key("bulk", limits)] = _write_definition(
            lake, namespace_definition_path("bulk"), ns_def.to_bytes()
        )
    columns = (Column(1, "id", DataType("int8"), nullable=False),)
    for i in range(count):
        name = f"t{tag}_{i:04d}"
        table = TableDefinition(name, columns, table_format="parquet")
        changes[table_key("bulk", name, limits)] = _write_definition(
            lake, table_definition_path("bulk", name), table.to_bytes()
        )
    return lake.commit(snap, changes)


def show(snap: Snapshot, out: TextIO = sys.stdout) -> None:
    """Print the namespaces and tables a snapshot holds."""
    limits = snap.definition.key_limits
    print(f"version {snap.version} (created_at_millis={snap.created_at_millis})", file=out)
    for key, _ in snap.scan_prefix("B==="):
        ns = decode_key(key, limits).namespace
        tables = [
            decode_key(k, limits).table
            for k, _ in snap.scan_prefix(namespace_tables_prefix(ns, limits))
        ]
        shown = ", ".join(map(str, tables[:4])) + (", ..." if len(tables) > 4 else "")
        print(f"  namespace {ns}: {len(tables)} tables: {shown}", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Create and query a demo Trinity Lakehouse.")
    parser.add_argument("folder", nargs="?", default="demo-lakehouse")
    args = parser.parse_args(argv)

    if Lakehouse.exists(args.folder):
        lake = Lakehouse.open(args.folder)
        print(f"opened the lakehouse in {lake.storage.root_uri}")
    else:
        # Small nodes (64 KiB, order 8) so that the demo grows a real multi-level tree.
        lake = Lakehouse.create(
            args.folder, name="demo", order=8, node_file_max_size_bytes=64 * 1024
        )
        print(f"created a lakehouse in {lake.storage.root_uri}")
    snap = lake.snapshot()
    first_run = snap.version == 0
    tag = uuid.uuid4().hex[:6]
    snap = load_sample(lake, snap, suffix="" if first_run else f"_{tag}")
    # A bulk load, then one more commit so its messages leave the root buffer:
    # the tree grows levels, as it does under real use.
    snap = load_bulk(lake, snap, 300, tag)
    snap = lake.commit(
        snap,
        {
            namespace_key("sales", lake.definition.key_limits): snap.get(
                namespace_key("sales", lake.definition.key_limits)
            )
        },
    )
    show(snap)

    limits = lake.definition.key_limits
    path = snap.get(table_key("sales", "orders", limits))
    assert path is not None
    orders = TableDefinition.from_bytes(lake.storage.read(path), path)
    print("\nsales.orders (point lookup, then its definition file):")
    for column in orders.columns:
        null = "" if column.nullable else " NOT NULL"
        print(f"  {column.name:<12} {column.type.to_sql()}{null}")

    print("\ntime travel: the catalog as of the first version")
    show(lake.snapshot(1))
    versions = snap.version + 1
    print(
        f"\nhistory: {versions} versions; tree depth {snap.depth()} (order {lake.definition.order})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
