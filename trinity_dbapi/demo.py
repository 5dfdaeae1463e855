"""The demo job: a local lakehouse, built and queried through SQL and the DB-API.

``trinity-demo [FOLDER]`` (default ``./demo-lakehouse``) connects to the
Trinity Lakehouse in a local folder with :func:`trinity_dbapi.connect`,
creating it if there is none, and then works through SQL, printing each
statement the way the ``trinity`` shell would (only the tree depth at the end
comes from ``Connection.lakehouse``, the Python API below SQL):

1. sample namespaces and tables (comments, primary keys, partitioning,
   nested types) with ``CREATE ... IF NOT EXISTS``: one version each on the
   first run, none on later runs;
2. ``SHOW NAMESPACES``, ``SHOW TABLES``, ``DESCRIBE``, ``SHOW CREATE TABLE``;
3. a bulk load of 2,000 tables in one ``BEGIN`` ... ``COMMIT`` transaction,
   which grows the catalog tree several levels deep;
4. queries over the catalog tables, run by DuckDB: a join of
   ``system.tables`` and ``system.columns`` with aggregates, and
   ``information_schema.columns``;
5. ``ALTER TABLE`` (a new version), then time travel: the current columns
   next to those ``FOR SYSTEM_VERSION AS OF`` the version before;
6. the history, from ``system.versions``.

Running it again adds a new bulk batch and a new column, so the history grows.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

import trinity_dbapi
from trinity_dbapi.cli import CONTINUATION_PROMPT, PROMPT, format_status, format_table
from trinity_dbapi.errors import LakehouseNotFoundError

if TYPE_CHECKING:
    from trinity_dbapi.dbapi.connection import Connection
    from trinity_dbapi.dbapi.cursor import Cursor

#: Definition fields of a new demo lakehouse: small nodes (order 8, 64 KiB
#: node files), so that the bulk load grows a real multi-level tree.
NEW_LAKEHOUSE: dict[str, Any] = {"name": "demo", "order": 8, "node_file_max_size_bytes": 64 * 1024}
#: Tables created by each run's bulk load, in one transaction.
BULK_TABLES = 2_000

SAMPLE = (
    "CREATE NAMESPACE IF NOT EXISTS sales COMMENT 'Orders and customers' WITH (owner = 'demo')",
    "CREATE NAMESPACE IF NOT EXISTS ops COMMENT 'Operational events'",
    """CREATE TABLE IF NOT EXISTS sales.customers (
  customer VARCHAR(64) NOT NULL COMMENT 'customer code',
  country CHAR(2),
  tags LIST<VARCHAR(16)>,
  address STRUCT<street: VARCHAR(128), city: VARCHAR(64)>,
  PRIMARY KEY (customer)
) COMMENT 'One row per customer'""",
    """CREATE TABLE IF NOT EXISTS sales.orders (
  order_id INT8 NOT NULL COMMENT 'order number',
  order_day DATE,
  customer VARCHAR(64),
  amount DECIMAL(12, 2),
  lines LIST<STRUCT<sku: VARCHAR(32), qty: INT4, price: DECIMAL(12, 2)>>,
  PRIMARY KEY (order_id, order_day)
) PARTITIONED BY (order_day) COMMENT 'One row per order' WITH (owner = 'demo')""",
    """CREATE TABLE IF NOT EXISTS ops.events (
  at TIMESTAMPTZ(3) NOT NULL,
  kind VARCHAR(32),
  attributes MAP<VARCHAR(64), VARCHAR(256)>,
  payload BINARY(1024)
) PARTITIONED BY (kind)""",
)

BROWSE = ("SHOW NAMESPACES", "SHOW TABLES IN sales", "DESCRIBE sales.orders")

CATALOG_QUERIES = (
    """SELECT t.namespace_name AS namespace, count(DISTINCT t.table_name) AS tables,
  count(*) AS columns, count(*) FILTER (WHERE c.is_primary_key) AS key_columns,
  max(t.column_count) AS widest_table
FROM system.tables AS t JOIN system.columns AS c USING (namespace_name, table_name)
GROUP BY t.namespace_name ORDER BY namespace""",
    """SELECT column_name, data_type, udt_name FROM information_schema.columns
WHERE table_schema = 'sales' AND table_name = 'customers' ORDER BY ordinal_position""",
)

TIME_TRAVEL = """SELECT cur.column_name, cur.data_type, old.column_name IS NULL AS added
FROM system.columns AS cur
LEFT JOIN system.columns FOR SYSTEM_VERSION AS OF ? AS old
  USING (namespace_name, table_name, column_name)
WHERE cur.namespace_name = 'sales' AND cur.table_name = 'orders'
ORDER BY cur.ordinal_position"""

HISTORY = """SELECT version, len(changed_objects) AS changes, changed_objects[1] AS first_change
FROM system.versions ORDER BY version DESC LIMIT 5"""


def echo(sql: str, params: Sequence[Any] = (), out: TextIO = sys.stdout) -> None:
    """Print a statement as the shell shows it being typed, and its parameters."""
    first, *rest = sql.splitlines()
    print(PROMPT + first, *(CONTINUATION_PROMPT + line for line in rest), sep="\n", file=out)
    if params:
        print(f"{CONTINUATION_PROMPT}-- parameters: {', '.join(map(repr, params))}", file=out)


def run(cur: Cursor, sql: str, params: Sequence[Any] = (), out: TextIO = sys.stdout) -> None:
    """Echo and execute one statement, then print its rows (an aligned table) or its status."""
    echo(sql, params, out)
    cur.execute(sql, params)
    if cur.description is None:
        print(format_status(cur.rowcount), file=out)
    else:
        print(format_table([d[0] for d in cur.description], cur.fetchall()), file=out)
    print(file=out)


def scalar(cur: Cursor, sql: str, params: Sequence[Any] = ()) -> Any:
    """The single value of a one-row, one-column query (not echoed)."""
    row = cur.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


def connect(folder: str, out: TextIO = sys.stdout) -> Connection:
    """An autocommit connection to the lakehouse in ``folder``, created if there is none."""
    try:
        conn = trinity_dbapi.connect(folder, create=False, autocommit=True)
        verb = "opened the lakehouse in"
    except LakehouseNotFoundError:
        conn = trinity_dbapi.connect(folder, autocommit=True, **NEW_LAKEHOUSE)
        verb = "created a lakehouse in"
    version = scalar(conn.cursor(), "SELECT max(version) FROM system.versions")
    print(f"{verb} {conn.lakehouse.storage.root_uri} (version {version})\n", file=out)
    return conn


def create_sample(cur: Cursor, out: TextIO = sys.stdout) -> None:
    """The sample namespaces and tables, each statement its own version (autocommit)."""
    for sql in SAMPLE:
        run(cur, sql, out=out)


def browse(cur: Cursor, out: TextIO = sys.stdout) -> None:
    """SHOW and DESCRIBE, then the DDL that recreates a table."""
    for sql in BROWSE:
        run(cur, sql, out=out)
    echo("SHOW CREATE TABLE sales.customers", out=out)
    print(scalar(cur, "SHOW CREATE TABLE sales.customers") + "\n", file=out)


def bulk_load(cur: Cursor, out: TextIO = sys.stdout) -> int:
    """Create this run's batch of tables in one transaction; return its number (the run's)."""
    done = scalar(cur, "SELECT count(*) FROM system.tables WHERE namespace_name = 'bulk'")
    batch = done // BULK_TABLES + 1
    first, last = f"bulk.b{batch}_t0000", f"bulk.b{batch}_t{BULK_TABLES - 1:04d}"
    start = time.perf_counter()
    run(cur, "BEGIN", out=out)
    run(cur, "CREATE NAMESPACE IF NOT EXISTS bulk COMMENT 'Generated tables'", out=out)
    echo(f"CREATE TABLE {first} (id INT8 NOT NULL, label VARCHAR(32))", out=out)
    print(f"{CONTINUATION_PROMPT}-- and {BULK_TABLES - 1:,} more, up to {last}", file=out)
    for i in range(BULK_TABLES):
        cur.execute(f"CREATE TABLE bulk.b{batch}_t{i:04d} (id INT8 NOT NULL, label VARCHAR(32))")
    print(f"OK, {BULK_TABLES:,} tables\n", file=out)
    run(cur, "COMMIT", out=out)
    version = scalar(cur, "SELECT max(version) FROM system.versions")
    seconds = time.perf_counter() - start
    print(
        f"bulk load: {BULK_TABLES:,} tables in one transaction, version {version}, "
        f"{seconds:.1f} s\n",
        file=out,
    )
    return batch


def query_catalog(cur: Cursor, out: TextIO = sys.stdout) -> None:
    """Real queries over the catalog tables; DuckDB plans and runs them."""
    for sql in CATALOG_QUERIES:
        run(cur, sql, out=out)


def alter_and_travel(cur: Cursor, batch: int, out: TextIO = sys.stdout) -> None:
    """ALTER TABLE makes a new version; compare it with the version before it."""
    before = scalar(cur, "SELECT max(version) FROM system.versions")
    run(
        cur,
        f"ALTER TABLE sales.orders ADD COLUMN note_{batch} VARCHAR(200) "
        f"COMMENT 'added by run {batch}'",
        out=out,
    )
    run(cur, TIME_TRAVEL, [before], out=out)


def history(conn: Connection, cur: Cursor, out: TextIO = sys.stdout) -> None:
    """The latest versions, and how many there are."""
    run(cur, HISTORY, out=out)
    versions = scalar(cur, "SELECT count(*) FROM system.versions")
    lake = conn.lakehouse
    depth = lake.snapshot().depth()
    print(
        f"history: {versions} versions; tree depth {depth} (order {lake.definition.order})",
        file=out,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Create and query a demo Trinity Lakehouse.")
    parser.add_argument("folder", nargs="?", default="demo-lakehouse")
    args = parser.parse_args(argv)
    with connect(args.folder) as conn:
        cur = conn.cursor()
        create_sample(cur)
        browse(cur)
        batch = bulk_load(cur)
        query_catalog(cur)
        alter_and_travel(cur, batch)
        history(conn, cur)
    return 0


if __name__ == "__main__":
    sys.exit(main())
