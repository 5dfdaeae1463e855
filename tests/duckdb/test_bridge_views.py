"""Lakehouse views in the DuckDB bridge, against the SQL engine's answers for the same views."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

import trinity_dbapi
from trinity_dbapi.duckdb import attach

SETUP = (
    "CREATE NAMESPACE shop",
    "CREATE NAMESPACE ops",
    (
        "CREATE TABLE shop.orders (id INT8, day DATE, amount DECIMAL(10, 2), customer INT4)"
        " PARTITIONED BY (day)"
    ),
    "CREATE TABLE shop.customers (id INT4, name VARCHAR)",
    "CREATE TABLE ops.orders (id INT8, note VARCHAR)",
    (
        "INSERT INTO shop.orders VALUES (1, DATE '2024-01-01', 1.50, 10),"
        " (2, DATE '2024-01-02', 2.25, 20), (3, DATE '2024-01-02', 3.00, 10)"
    ),
    "INSERT INTO shop.customers VALUES (10, 'ann'), (20, 'bob')",
    "INSERT INTO ops.orders VALUES (1, 'late'), (3, 'lost')",
    "CREATE VIEW shop.big (order_id, total) AS SELECT id, amount FROM shop.orders WHERE amount > 2",
    # a view over a view, joining a table
    (
        "CREATE VIEW shop.by_customer AS SELECT c.name, count(*) AS n, sum(b.total) AS total"
        " FROM shop.big AS b JOIN shop.orders AS o ON o.id = b.order_id"
        " JOIN shop.customers AS c ON c.id = o.customer GROUP BY c.name"
    ),
    # a name that needs quoting, reading same-named tables of two namespaces
    (
        'CREATE VIEW shop."Order-""Notes" AS SELECT shop.orders.id, ops.orders.note'
        " FROM shop.orders JOIN ops.orders ON shop.orders.id = ops.orders.id"
    ),
    # same-named views in two namespaces
    "CREATE VIEW shop.v AS SELECT id, amount FROM shop.orders",
    "CREATE VIEW ops.v AS SELECT id, note FROM ops.orders",
    # a view over a catalog table
    (
        "CREATE VIEW ops.objects AS SELECT namespace_name, table_name, table_type"
        " FROM system.tables WHERE namespace_name = 'shop'"
    ),
)

#: Each view, as ``namespace.name`` in DuckDB (the schemas have no prefix here).
VIEWS = ("shop.big", "shop.by_customer", 'shop."Order-""Notes"', "shop.v", "ops.v")


@pytest.fixture
def lake(tmp_path: Path) -> Iterator[Any]:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    for sql in SETUP:
        cur.execute(sql)
    yield conn
    conn.close()


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect()
    yield connection
    connection.close()


def engine(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    cur = conn.cursor()
    cur.execute(sql)
    return sorted(cur.fetchall(), key=repr)


def bridge(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]]:
    return sorted(con.execute(sql).fetchall(), key=repr)


def version_of(conn: Any) -> int:
    cur = conn.cursor()
    cur.execute("SELECT max(version) FROM system.versions")
    return int(cur.fetchone()[0])


def test_views_answer_as_the_engine(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attached = attach(con, lake.lakehouse)
    assert attached.unreadable_views == {}
    for view in VIEWS:
        sql = f"SELECT * FROM {view}"
        assert bridge(con, sql) == engine(lake, sql), view
        cur = lake.cursor()
        cur.execute(sql)
        assert con.sql(sql).columns == [d[0] for d in cur.description], view
    assert bridge(con, "SELECT * FROM shop.by_customer") == [
        ("ann", 1, Decimal("3.00")),
        ("bob", 1, Decimal("2.25")),
    ]
    # Same-named views of two namespaces in one DuckDB query, as in the engine.
    join = "SELECT * FROM shop.v JOIN ops.v ON shop.v.id = ops.v.id"
    assert bridge(con, join) == engine(lake, join) and len(bridge(con, join)) == 2
    # The catalog view reads the attached catalog table of the same version.
    catalog = "SELECT * FROM ops.objects"
    assert bridge(con, catalog) == engine(lake, catalog)
    assert ("shop", "big", "VIEW") in bridge(con, catalog)
    kinds = con.execute(
        "SELECT table_schema, table_name, table_type FROM information_schema.tables"
        " WHERE table_schema IN ('shop', 'ops') ORDER BY 1, 2"
    ).fetchall()
    assert ("shop", "big", "VIEW") in kinds and ("ops", "objects", "VIEW") in kinds
    attached.detach()


def test_view_columns_and_types_are_the_views(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attach(con, lake.lakehouse)
    described = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = 'shop' AND table_name = 'big' ORDER BY ordinal_position"
    ).fetchall()
    assert described == [("order_id", "BIGINT"), ("total", "DECIMAL(10,2)")]
    engine_info = engine(
        lake,
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_schema = 'shop' AND table_name = 'big'",
    )
    assert sorted(described) == engine_info


def test_frozen_until_refresh_then_the_new_version(
    lake: Any, con: duckdb.DuckDBPyConnection
) -> None:
    attached = attach(con, lake.lakehouse)
    before = version_of(lake)
    cur = lake.cursor()
    cur.execute("INSERT INTO shop.orders VALUES (4, DATE '2024-01-03', 9.00, 20)")
    cur.execute("ALTER TABLE shop.orders ALTER COLUMN customer TYPE INT8")
    cur.execute("CREATE OR REPLACE VIEW ops.v AS SELECT id, upper(note) AS note FROM ops.orders")
    cur.execute("CREATE VIEW ops.fresh AS SELECT count(*) AS n FROM shop.v")
    cur.execute("DROP VIEW shop.big")
    cur.execute("CREATE VIEW shop.big AS SELECT id AS order_id, amount * 2 AS total FROM shop.v")
    # Until refresh, the views answer as the engine does as of the attached version.
    for view in ("shop.by_customer", "ops.v", "shop.big"):
        old = f"SELECT * FROM {view} FOR SYSTEM_VERSION AS OF {before}"
        assert bridge(con, f"SELECT * FROM {view}") == engine(lake, old), view
    assert not con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE schema_name = 'ops' AND view_name = 'fresh'"
    ).fetchone()[0]
    attached.refresh()
    assert attached.version == version_of(lake)
    for view in (*VIEWS, "ops.fresh"):
        sql = f"SELECT * FROM {view}"
        assert bridge(con, sql) == engine(lake, sql), view
    assert bridge(con, "SELECT * FROM ops.fresh") == [(4,)]
    assert bridge(con, "SELECT * FROM ops.v") == [(1, "LATE"), (3, "LOST")]
    # Refresh back to the old version: the new view goes, the old ones return.
    attached.refresh(version=before)
    for view in VIEWS:
        old = f"SELECT * FROM {view} FOR SYSTEM_VERSION AS OF {before}"
        assert bridge(con, f"SELECT * FROM {view}") == engine(lake, old), view
    assert not con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE schema_name = 'ops' AND view_name = 'fresh'"
    ).fetchone()[0]


def test_a_time_travelled_attachment(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    first = version_of(lake)
    cur = lake.cursor()
    cur.execute("DELETE FROM shop.orders WHERE id = 3")
    cur.execute("CREATE OR REPLACE VIEW shop.v AS SELECT id FROM shop.orders WHERE id > 1")
    attach(con, lake.lakehouse, version=first, prefix="old_")
    attach(con, lake.lakehouse, prefix="new_")
    for view in VIEWS:
        old = f"SELECT * FROM {view} FOR SYSTEM_VERSION AS OF {first}"
        assert bridge(con, f"SELECT * FROM old_{view}") == engine(lake, old), view
        assert bridge(con, f"SELECT * FROM new_{view}") == engine(lake, f"SELECT * FROM {view}")
    assert bridge(con, "SELECT * FROM new_shop.v") == [(2,)]
    assert len(bridge(con, "SELECT * FROM old_shop.v")) == 3
    # The catalog view reads the catalog of its own attachment's version.
    assert bridge(con, "SELECT * FROM old_ops.objects") == engine(
        lake, f"SELECT * FROM ops.objects FOR SYSTEM_VERSION AS OF {first}"
    )


def test_detach_drops_the_views(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attached = attach(con, lake.lakehouse, prefix="lake_")
    assert bridge(con, "SELECT * FROM lake_shop.big") == engine(lake, "SELECT * FROM shop.big")
    attached.detach()
    assert con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone() == (0,)
    assert con.execute(
        "SELECT count(*) FROM duckdb_schemas() WHERE schema_name LIKE 'lake_%'"
    ).fetchone() == (0,)


def test_unreadable_views_raise_when_read_and_do_not_break_the_attachment(
    lake: Any, con: duckdb.DuckDBPyConnection
) -> None:
    cur = lake.cursor()
    cur.execute("CREATE TABLE ops.gone (x INT4, y VARCHAR)")
    cur.execute("CREATE VIEW ops.dead AS SELECT x, y FROM ops.gone")
    cur.execute("CREATE VIEW ops.deader AS SELECT x FROM ops.dead")
    cur.execute("DROP TABLE ops.gone")
    cur.execute("CREATE TABLE ops.shrinks (x INT4, y VARCHAR)")
    cur.execute("CREATE VIEW ops.unbound AS SELECT y FROM ops.shrinks")
    cur.execute("ALTER TABLE ops.shrinks DROP COLUMN y")
    cur.execute("CREATE VIEW ops.travels AS SELECT * FROM shop.orders FOR SYSTEM_VERSION AS OF 3")
    attached = attach(con, lake.lakehouse)
    reasons = attached.unreadable_views
    assert sorted(reasons) == ["ops.dead", "ops.deader", "ops.travels", "ops.unbound"]
    assert "ops.gone, which does not exist" in reasons["ops.dead"]
    assert "view ops.dead, which cannot be read" in reasons["ops.deader"]
    assert "DuckDB cannot bind" in reasons["ops.unbound"] and '"y"' in reasons["ops.unbound"]
    assert "SYSTEM_VERSION" in reasons["ops.travels"]
    # The engine refuses them too (ops.travels excepted: it can time travel).
    for view in ("ops.dead", "ops.deader", "ops.unbound"):
        with pytest.raises(trinity_dbapi.Error):
            cur.execute(f"SELECT * FROM {view}")
    # Every other view works; each unreadable one raises its reason whenever read.
    assert bridge(con, "SELECT * FROM shop.big") == engine(lake, "SELECT * FROM shop.big")
    for sql in (
        "SELECT * FROM ops.dead",
        "SELECT count(*) FROM ops.dead",
        "SELECT count(*) FROM ops.dead WHERE x = 1",
        "SELECT x FROM ops.deader",
        "SELECT EXISTS (SELECT 1 FROM ops.unbound)",
    ):
        with pytest.raises(duckdb.Error, match=r"view ops\.\w+ of the lakehouse .* cannot be read"):
            con.execute(sql)
    assert con.sql("SELECT * FROM ops.dead LIMIT 0").columns == ["x", "y"]
    # Replacing the view and refreshing makes it readable.
    cur.execute("CREATE OR REPLACE VIEW ops.dead AS SELECT 1 AS x, 'y' AS y")
    attached.refresh()
    assert sorted(attached.unreadable_views) == ["ops.travels", "ops.unbound"]
    assert bridge(con, "SELECT * FROM ops.deader") == [(1,)]


def test_views_reaching_outside_the_attachment(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    attached = attach(con, lake.lakehouse, namespaces=["shop"], catalog=False)
    assert list(attached.unreadable_views) == ['shop.Order-"Notes']
    assert "namespace 'ops' is not attached" in attached.unreadable_views['shop.Order-"Notes']
    assert bridge(con, "SELECT * FROM shop.by_customer") == engine(
        lake, "SELECT * FROM shop.by_customer"
    )
    attached.detach()
    cur = lake.cursor()
    cur.execute("CREATE VIEW shop.listing AS SELECT table_name FROM system.tables")
    attached = attach(con, lake.lakehouse, namespaces=["shop", "ops"], catalog=False)
    assert sorted(attached.unreadable_views) == ["ops.objects", "shop.listing"]
    assert "catalog=False" in attached.unreadable_views["shop.listing"]


def test_views_on_memory_storage(con: duckdb.DuckDBPyConnection) -> None:
    conn = trinity_dbapi.connect(
        f"memory://bridge-views-{os.getpid()}-{time.monotonic_ns()}/lake", autocommit=True
    )
    cur = conn.cursor()
    for sql in SETUP:
        cur.execute(sql)
    attach(con, conn.lakehouse)
    for view in VIEWS:
        sql = f"SELECT * FROM {view}"
        assert bridge(con, sql) == engine(conn, sql), view
    assert con.cursor().execute("SELECT count(*) FROM shop.by_customer").fetchone() == (2,)
    conn.close()


def test_a_view_whose_stored_text_is_not_a_query(lake: Any, con: duckdb.DuckDBPyConnection) -> None:
    # Another writer may store anything: the attachment still works.
    from trinity_dbapi.format.definitions import TRINITY_DIALECT, ViewDefinition

    txn = lake.lakehouse.begin()
    good = txn.load_view("shop", "v")
    for name, text in (("junk", "SELEC nothing"), ("two", "SELECT 1; SELECT 2")):
        bad = ViewDefinition(name=name, columns=good.columns, sql={TRINITY_DIALECT: text})
        txn.create_view("shop", bad)
    txn.commit()
    attached = attach(con, lake.lakehouse)
    reasons = attached.unreadable_views
    assert sorted(reasons) == ["shop.junk", "shop.two"]
    assert "does not parse" in reasons["shop.junk"]
    assert "not one query" in reasons["shop.two"]
    assert bridge(con, "SELECT * FROM shop.v") == engine(lake, "SELECT * FROM shop.v")
    with pytest.raises(duckdb.Error, match=r"view shop\.junk"):
        con.execute("SELECT id FROM shop.junk")


def test_a_view_over_an_arrow_dataset_table(tmp_path: Path, con: duckdb.DuckDBPyConnection) -> None:
    # Binary partition values make the table's DuckDB view read a registered
    # Arrow dataset; a lakehouse view over it reads that too, on con.
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ty")
    cur.execute("CREATE TABLE ty.b (id INT4, key BINARY) PARTITIONED BY (key)")
    cur.execute("INSERT INTO ty.b VALUES (1, ?), (2, ?), (3, NULL)", [b"\x00\xff/", b"plain"])
    cur.execute("CREATE VIEW ty.keyed AS SELECT id, key FROM ty.b WHERE key IS NOT NULL")
    attached = attach(con, conn.lakehouse)
    sql = "SELECT * FROM ty.keyed"
    assert bridge(con, sql) == engine(conn, sql) == [(1, b"\x00\xff/"), (2, b"plain")]
    cur.execute("INSERT INTO ty.b VALUES (4, ?)", [b"plain"])
    attached.refresh()
    assert bridge(con, sql) == engine(conn, sql) and len(bridge(con, sql)) == 3
    attached.detach()
    conn.close()
