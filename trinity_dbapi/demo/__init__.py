"""The Quickstart's demo: a local lakehouse loaded with a shop's data and queried as users would.

``trinity-demo [FOLDER]`` (default ``./demo-lakehouse``) connects to the
Trinity Lakehouse in a local folder with :func:`trinity_dbapi.connect`,
creating it if there is none, and works through the DB-API driver, printing
each statement the way the ``trinity`` shell would (``trinity>``) and each
Python call the way the interpreter would (``>>>``):

1. **load**: in one transaction, the namespace ``shop``, the table
   ``shop.orders`` partitioned by month with an index on ``order_id``, and
   300,000 generated orders (:mod:`trinity_dbapi.demo.data`) bulk-loaded
   with ``Cursor.ingest``, with a progress bar when stdout is a terminal;
   then a second table, ``shop.customers``, filled by ``executemany``;
2. **queries**: an aggregate by month, a join of the two tables, a point
   query that the index serves (``EXPLAIN ANALYZE`` shows it read one data
   file, next to a query the index cannot help);
3. **changes and time travel**: an ``UPDATE`` and a ``DELETE``, the rows
   before and after side by side (``FOR SYSTEM_VERSION AS OF``), and
   ``CALL system.rollback_to_version`` undoing the delete;
4. **the catalog**: ``SHOW TABLES``, ``DESCRIBE``, ``system.versions``;
5. **other tools**: ``pandas.read_sql`` through the SQLAlchemy engine and
   the DuckDB bridge's ``attach``; each is skipped with one line when its
   extra is not installed.

Every run starts over in the same transaction as the load (``DROP NAMESPACE
IF EXISTS shop CASCADE``), so it prints the same numbers; earlier runs stay
in the lakehouse's history, where time travel still reaches them.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``data`` (the shop's sample data), ``__main__`` (the demo itself)
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import trinity_dbapi
from trinity_dbapi.cli import CONTINUATION_PROMPT, PROMPT, format_status, format_table
from trinity_dbapi.cli.progress import TerminalProgress
from trinity_dbapi.demo import data
from trinity_dbapi.errors import LakehouseNotFoundError

if TYPE_CHECKING:
    from trinity_dbapi.dbapi.connection import Connection
    from trinity_dbapi.dbapi.cursor import Cursor

#: Rows the demo generates.
ORDERS = 300_000
CUSTOMERS = 20_000
#: The order the point query looks up, and the one the UPDATE changes.
POINT_ORDER = 123_456

SCHEMA = (
    "DROP NAMESPACE IF EXISTS shop CASCADE",
    "CREATE NAMESPACE shop COMMENT 'A web shop: its customers and a year of orders'",
    """CREATE TABLE shop.orders (
  order_id INT8 NOT NULL COMMENT 'order number, in time order',
  order_month DATE NOT NULL COMMENT 'first day of the month: the partition',
  ordered_at TIMESTAMPTZ(3) NOT NULL,
  customer_id INT8 NOT NULL,
  status VARCHAR(16) NOT NULL,
  amount DECIMAL(12, 2) NOT NULL,
  PRIMARY KEY (order_id)
) PARTITIONED BY (order_month) COMMENT 'One row per order'""",
    "CREATE INDEX orders_by_id ON shop.orders (order_id)",
)

CUSTOMERS_TABLE = """CREATE TABLE shop.customers (
  customer_id INT8 NOT NULL,
  name VARCHAR(64) NOT NULL,
  country CHAR(2) NOT NULL,
  segment VARCHAR(16) NOT NULL,
  signed_up DATE,
  PRIMARY KEY (customer_id)
) COMMENT 'One row per customer'"""

INSERT_CUSTOMERS = "INSERT INTO shop.customers VALUES (?, ?, ?, ?, ?)"

BY_MONTH = """SELECT order_month, count(*) AS orders, sum(amount) AS revenue,
  round(avg(amount), 2) AS average
FROM shop.orders GROUP BY order_month ORDER BY order_month"""

BY_COUNTRY = """SELECT c.country, count(DISTINCT c.customer_id) AS customers, count(*) AS orders,
  sum(o.amount) AS revenue
FROM shop.orders AS o JOIN shop.customers AS c USING (customer_id)
WHERE o.status <> 'cancelled'
GROUP BY c.country ORDER BY revenue DESC LIMIT 5"""

POINT = "SELECT * FROM shop.orders WHERE order_id = ?"
#: A query whose predicate no index or partition can narrow: every file is read.
UNINDEXED = "SELECT * FROM shop.orders WHERE customer_id = ?"

UPDATE = "UPDATE shop.orders SET status = 'returned', amount = 0 WHERE order_id = ?"
DELETE = "DELETE FROM shop.orders WHERE status = 'cancelled'"

BEFORE_AND_AFTER = """SELECT status, coalesce(b.orders, 0) AS before, coalesce(a.orders, 0) AS after,
  coalesce(b.revenue, 0) AS revenue_before, coalesce(a.revenue, 0) AS revenue_after
FROM (SELECT status, count(*) AS orders, sum(amount) AS revenue
      FROM shop.orders FOR SYSTEM_VERSION AS OF ? GROUP BY status) AS b
FULL JOIN (SELECT status, count(*) AS orders, sum(amount) AS revenue
           FROM shop.orders GROUP BY status) AS a USING (status)
ORDER BY status"""

POINT_BEFORE_AND_AFTER = """SELECT 'before' AS version, status, amount
FROM shop.orders FOR SYSTEM_VERSION AS OF ? WHERE order_id = ?
UNION ALL
SELECT 'after', status, amount FROM shop.orders WHERE order_id = ?"""

ROLLBACK = "CALL system.rollback_to_version(?)"
AFTER_ROLLBACK = """SELECT count(*) AS orders, count(*) FILTER (WHERE status = 'cancelled') AS cancelled
FROM shop.orders"""

CATALOG = (
    "SHOW TABLES IN shop",
    "DESCRIBE shop.orders",
    """SELECT version,
  CASE WHEN rollback_from_root IS NULL THEN array_to_string(changed_objects, ', ')
       ELSE 'rollback' END AS change
FROM system.versions ORDER BY version DESC LIMIT 6""",
)

READ_SQL = """SELECT c.segment, count(*) AS orders, sum(o.amount) AS revenue
FROM shop.orders AS o JOIN shop.customers AS c USING (customer_id)
GROUP BY c.segment ORDER BY revenue DESC"""

DUCKDB_SQL = """SELECT o.status, count(*) AS orders, sum(o.amount) AS revenue
FROM shop.orders AS o JOIN shop.customers AS c USING (customer_id)
WHERE c.country = 'DE' GROUP BY o.status ORDER BY orders DESC"""

#: A line of DuckDB's EXPLAIN ANALYZE output that counts the files a scan read.
_FILES_READ = re.compile(r"Total Files Read:\s*([\d,]+)")


class Demo:
    """The demo's steps over one autocommit connection, printing to ``out``.

    Args:
        conn: an autocommit DB-API connection to the demo lakehouse.
        folder: the lakehouse folder (for the SQLAlchemy URL and DuckDB).
        out: where everything is printed.
    """

    def __init__(self, conn: Connection, folder: str, out: TextIO = sys.stdout) -> None:
        self.conn = conn
        self.cur: Cursor = conn.cursor()
        self.folder = folder
        self.out = out
        #: Versions the demo made or read, by step name (tests check them).
        self.versions: dict[str, int] = {}

    # -- printing

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def heading(self, title: str) -> None:
        self.say(f"== {title} ==\n")

    def echo(self, sql: str, params: Sequence[Any] = ()) -> None:
        """Print a statement as the shell shows it being typed, and its parameters."""
        first, *rest = sql.splitlines()
        self.say("\n".join([PROMPT + first, *(CONTINUATION_PROMPT + line for line in rest)]))
        if params:
            self.say(f"{CONTINUATION_PROMPT}-- parameters: {', '.join(map(repr, params))}")

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Echo and execute one statement, print its rows or status; return the rows."""
        self.echo(sql, params)
        self.cur.execute(sql, params)
        rows: list[tuple[Any, ...]] = []
        if self.cur.description is None:
            self.say(format_status(self.cur.rowcount))
        else:
            rows = self.cur.fetchall()
            self.say(format_table([d[0] for d in self.cur.description], rows))
        self.say()
        return rows

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The single value of a one-row, one-column query (not echoed)."""
        row = self.cur.execute(sql, params).fetchone()
        assert row is not None
        return row[0]

    def version(self) -> int:
        return int(self.scalar("SELECT max(version) FROM system.versions"))

    # -- 1. load

    def load(self) -> None:
        """Schema and 300,000 orders in one transaction, then the customers."""
        self.heading(
            f"Load {ORDERS:,} orders into a partitioned, indexed table, in one transaction"
        )
        orders = data.orders(ORDERS, CUSTOMERS)
        started = time.perf_counter()
        self.run("BEGIN")
        for sql in SCHEMA:
            self.run(sql)
        self.python(f'cur.ingest("orders", orders, namespace="shop")  # {ORDERS:,} generated rows')
        with _progress_bar(self.conn, self.out):
            loaded = self.cur.ingest("orders", orders, namespace="shop")
        self.say(f"{loaded}\n")
        self.run("COMMIT")
        self.versions["load"] = self.version()
        self.say(
            f"-- {loaded:,} rows, their table and its index: one new version "
            f"({self.versions['load']}), {time.perf_counter() - started:.1f} s\n"
        )

        self.heading(f"A second table: {CUSTOMERS:,} customers, by executemany")
        self.run(CUSTOMERS_TABLE)
        rows = list(zip(*(column.to_pylist() for column in data.customers(CUSTOMERS).columns)))
        self.echo(INSERT_CUSTOMERS)
        self.say(f"{CONTINUATION_PROMPT}-- {len(rows):,} parameter sets, one write")
        self.cur.executemany(INSERT_CUSTOMERS, rows)
        self.say(format_status(self.cur.rowcount) + "\n")

    # -- 2. queries

    def query(self) -> None:
        """An aggregate, a join, and a point query the index serves."""
        self.heading("Queries: an aggregate, a join, a point query served by the index")
        self.run(BY_MONTH)
        self.run(BY_COUNTRY)
        self.run(POINT, [POINT_ORDER])
        customer = self.scalar(
            "SELECT customer_id FROM shop.orders WHERE order_id = ?", [POINT_ORDER]
        )
        indexed = self.files_read(POINT, [POINT_ORDER])
        scanned = self.files_read(UNINDEXED, [customer])
        self.say(
            f"-- EXPLAIN ANALYZE: the point query read {indexed} data file"
            f"{'' if indexed == 1 else 's'} of {scanned} (the index on order_id picked it);"
            f"\n-- the same lookup by customer_id, which has no index, read all {scanned}\n"
        )

    def files_read(self, sql: str, params: Sequence[Any]) -> int:
        """How many data files DuckDB read for ``sql``, from its EXPLAIN ANALYZE output."""
        self.cur.execute("EXPLAIN ANALYZE " + sql, params)
        plan = "\n".join(str(value) for row in self.cur.fetchall() for value in row)
        return sum(int(found.replace(",", "")) for found in _FILES_READ.findall(plan))

    # -- 3. changes, time travel, rollback

    def change(self) -> None:
        """UPDATE and DELETE, both versions side by side, then a rollback of the DELETE."""
        self.heading("Changes, time travel and a rollback")
        before = self.version()
        self.run(UPDATE, [POINT_ORDER])
        self.versions["update"] = self.version()
        self.run(DELETE)
        self.versions["delete"] = self.version()
        self.run(BEFORE_AND_AFTER, [before])
        self.run(POINT_BEFORE_AND_AFTER, [before, POINT_ORDER, POINT_ORDER])
        self.say("-- undo the DELETE: a new version equal to the one before it")
        self.run(ROLLBACK, [self.versions["update"]])
        self.versions["rollback"] = self.version()
        self.run(AFTER_ROLLBACK)

    # -- 4. catalog

    def catalog(self) -> None:
        self.heading("The catalog")
        for sql in CATALOG:
            self.run(sql)

    # -- 5. other tools

    def python(self, code: str) -> None:
        """Print Python code as the interactive interpreter shows it being typed."""
        first, *rest = code.splitlines()
        self.say("\n".join([">>> " + first, *("... " + line for line in rest)]))

    def pandas(self) -> None:
        """``pandas.read_sql`` through the SQLAlchemy engine (the ``pandas`` extra)."""
        self.heading("pandas, through the SQLAlchemy dialect")
        try:
            import pandas as pd
            import sqlalchemy as sa
        except ImportError:
            self.say('skipped: pandas and SQLAlchemy are not installed (pip install ".[pandas]")\n')
            return
        url = f"trinity:///{self.folder}"
        self.python("import pandas, sqlalchemy")
        self.python(f"engine = sqlalchemy.create_engine({url!r})")
        self.python(f'pandas.read_sql("""\n{READ_SQL}""", engine)')
        engine = sa.create_engine(url)
        try:
            frame = pd.read_sql(READ_SQL, engine)
        finally:
            engine.dispose()
        self.say(frame.to_string() + "\n")

    def duckdb(self) -> None:
        """The lakehouse's tables as views in the user's own DuckDB connection."""
        self.heading("DuckDB, through the bridge")
        import duckdb

        from trinity_dbapi.duckdb import attach

        self.python("import duckdb, trinity_dbapi.duckdb")
        self.python("con = duckdb.connect()")
        self.python(f"trinity_dbapi.duckdb.attach(con, {self.folder!r})")
        con = duckdb.connect()
        try:
            self.say(repr(attach(con, self.folder)))
            self.python(f'con.sql("""\n{DUCKDB_SQL}""")')
            self.say(str(con.sql(DUCKDB_SQL)))
        finally:
            con.close()


@contextlib.contextmanager
def _progress_bar(conn: Connection, out: TextIO) -> Iterator[None]:
    """A progress bar of ``conn``'s long work while the block runs, if ``out`` is a terminal."""
    bar = TerminalProgress.for_stream(out)
    if bar is None:
        yield
        return
    conn.progress = bar
    try:
        with bar:
            yield
    finally:
        conn.progress = None


def connect(folder: str, out: TextIO = sys.stdout) -> Connection:
    """An autocommit connection to the lakehouse in ``folder``, created if there is none."""
    try:
        conn = trinity_dbapi.connect(folder, create=False, autocommit=True)
        verb = "opened the lakehouse in"
    except LakehouseNotFoundError:
        conn = trinity_dbapi.connect(folder, create=True, autocommit=True, name="demo")
        verb = "created a lakehouse in"
    with conn.cursor() as cur:
        version = cur.execute("SELECT max(version) FROM system.versions").fetchone()
    print(f"{verb} {conn.lakehouse.storage.root_uri} (version {version[0]})\n", file=out)
    return conn


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``trinity-demo``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="trinity-demo",
        description="Load a shop's orders into a local Trinity Lakehouse and query them.",
    )
    parser.add_argument("folder", nargs="?", default="demo-lakehouse")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        with connect(args.folder) as conn:
            demo = Demo(conn, args.folder)
            demo.load()
            demo.query()
            demo.change()
            demo.catalog()
            demo.pandas()
            demo.duckdb()
    except trinity_dbapi.Error as exc:
        print(f"trinity-demo: {exc}", file=sys.stderr)
        return 1
    print(
        f"demo finished in {time.perf_counter() - started:.1f} s; the lakehouse is in {args.folder}"
    )
    print(f"explore it: trinity {args.folder}    (then SHOW TABLES IN shop; or .help)")
    return 0
