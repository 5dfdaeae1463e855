"""Every statement form, executed through the DB-API, with its effect asserted."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.sql import model
from trinity_dbapi.sql import statements as st


@pytest.fixture
def cur(tmp_path: Path) -> Any:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    yield conn.cursor()
    conn.close()


def rows(cur: Any, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    return cur.execute(sql, params).fetchall()


def column(cur: Any, sql: str, params: Any = None) -> list[Any]:
    return [row[0] for row in rows(cur, sql, params)]


# -- namespaces ---------------------------------------------------------------------


def test_namespace_lifecycle(cur: Any) -> None:
    cur.execute("CREATE NAMESPACE sales COMMENT 'the sales team' WITH (owner = 'ann')")
    cur.execute("CREATE SCHEMA IF NOT EXISTS sales")  # synonym, and IF NOT EXISTS
    with pytest.raises(errors.ProgrammingError, match="already exists"):
        cur.execute("CREATE NAMESPACE sales")
    assert rows(cur, "DESCRIBE NAMESPACE sales")[0][:2] == ("sales", "the sales team")
    cur.execute("ALTER NAMESPACE sales SET PROPERTIES (owner = 'bob', region = 'eu')")
    cur.execute("ALTER SCHEMA sales UNSET PROPERTIES (region)")
    properties = dict(rows(cur, "DESCRIBE NAMESPACE sales")[0][2])
    assert properties == {"owner": "bob"}
    assert column(cur, "SHOW NAMESPACES LIKE 's%'") == ["sales", "system"]
    assert column(cur, "SHOW SCHEMAS") == ["information_schema", "sales", "system"]
    cur.execute("DROP NAMESPACE sales")
    cur.execute("DROP SCHEMA IF EXISTS sales")
    with pytest.raises(errors.ProgrammingError, match="does not exist"):
        cur.execute("DROP NAMESPACE sales")


def test_drop_namespace_restrict_and_cascade(cur: Any) -> None:
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (a INT)")
    with pytest.raises(errors.ProgrammingError, match="still holds 1 table"):
        cur.execute("DROP NAMESPACE ns RESTRICT")
    cur.execute("DROP NAMESPACE ns CASCADE")
    assert "ns" not in column(cur, "SHOW NAMESPACES")


def test_reserved_namespaces_are_read_only(cur: Any) -> None:
    for sql in (
        "CREATE NAMESPACE system",
        "DROP NAMESPACE information_schema",
        "ALTER NAMESPACE system SET PROPERTIES (a = 'b')",
        "CREATE TABLE system.t (a INT)",
        "DROP TABLE system.tables",
    ):
        with pytest.raises(errors.ProgrammingError, match="reserved"):
            cur.execute(sql)


# -- tables -------------------------------------------------------------------------

CREATE = """
CREATE TABLE ns.orders (
    id BIGINT NOT NULL COMMENT 'order id',
    customer VARCHAR(100),
    amount DECIMAL(10, 2),
    placed TIMESTAMPTZ,
    day DATE NOT NULL,
    tags LIST<VARCHAR(20)>,
    attrs MAP<VARCHAR(10), INT>,
    address STRUCT<street: VARCHAR(50), zip: CHAR(5)>,
    PRIMARY KEY (id)
) PARTITIONED BY (day) COMMENT 'all orders' WITH (owner = 'ops')
"""


def test_create_describe_show_create(cur: Any) -> None:
    cur.execute("CREATE NAMESPACE ns")
    cur.execute(CREATE)
    described = rows(cur, "DESCRIBE TABLE ns.orders")
    assert [r[0] for r in described] == [
        "id",
        "customer",
        "amount",
        "placed",
        "day",
        "tags",
        "attrs",
        "address",
    ]
    assert described[0] == ("id", "int8", False, "order id", True, False)
    assert described[2][1] == "decimal(10,2)"
    assert described[4][1:3] == ("date", False) and described[4][5] is True
    assert described[7][1] == "struct<street: varchar(50), zip: char(5)>"
    text = column(cur, "SHOW CREATE TABLE ns.orders")[0]
    # the statement recreates an identical table elsewhere
    cur.execute("CREATE NAMESPACE copy")
    cur.execute(text.replace('"ns"."orders"', '"copy"."orders"'))
    assert rows(cur, "DESCRIBE copy.orders") == described
    assert rows(cur, "SHOW CREATE TABLE copy.orders")[0][0] == text.replace('"ns"', '"copy"')
    assert column(cur, "SHOW TABLES IN ns") == ["orders"]
    table = rows(
        cur,
        "SELECT comment, primary_key, partition_columns, properties['owner'] "
        "FROM system.tables WHERE table_name = 'orders' AND namespace_name = 'ns'",
    )
    assert table == [("all orders", ["id"], ["day"], "ops")]


def test_every_type_alias(cur: Any) -> None:
    cur.execute(
        "CREATE TABLE t (a BOOL, b SMALLINT, c INTEGER, d LONG, e NUMERIC(5,1), f REAL, "
        "g DOUBLE, h CHARACTER(3), i TEXT, j TIME(3), k TIMESTAMP(9), l VARBINARY(8), "
        "m FIXED(16), n ARRAY<INT>, o TIMETZ(6), p BINARY(4))"
    )
    types = column(cur, "SELECT data_type FROM system.columns WHERE table_name = 't'")
    assert types[:8] == [
        "boolean",
        "int2",
        "int4",
        "int8",
        "decimal(5,1)",
        "float4",
        "float8",
        "char(3)",
    ]
    assert types[9:] == [
        "time(3)",
        "timestamp(9)",
        "binary(8)",
        "fixed(16)",
        "list<int4>",
        "timetz(6)",
        "binary(4)",
    ]


def test_unqualified_names_use_the_current_namespace(cur: Any) -> None:
    assert column(cur, "SHOW TABLES") == []  # "default" does not exist yet: empty
    cur.execute("CREATE TABLE t (a INT)")  # creates "default" on first use
    assert "default" in column(cur, "SHOW NAMESPACES")
    assert column(cur, "SHOW TABLES IN default") == ["t"]
    cur.execute("CREATE NAMESPACE other")
    cur.execute("USE other")
    cur.execute("CREATE TABLE t2 (a INT)")
    assert column(cur, "SHOW TABLES") == ["t2"]
    assert cur.connection.namespace == "other"
    with pytest.raises(errors.ProgrammingError, match="does not exist"):
        cur.execute("USE nowhere")


def test_alter_table(cur: Any) -> None:
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (a INT NOT NULL, b VARCHAR(5), PRIMARY KEY (a))")
    cur.execute("ALTER TABLE ns.t ADD COLUMN c STRUCT<x: INT, y: LIST<INT>> COMMENT 'new'")
    cur.execute("ALTER TABLE ns.t RENAME COLUMN b TO bee")
    cur.execute("ALTER TABLE ns.t DROP COLUMN bee")
    cur.execute("ALTER TABLE ns.t SET PROPERTIES (k1 = 'v1', k2 = 'v2')")
    cur.execute("ALTER TABLE ns.t UNSET PROPERTIES (k1)")
    assert rows(cur, "SELECT column_name, column_id, comment FROM system.columns") == [
        ("a", 1, None),
        ("c", 3, "new"),
    ]
    with pytest.raises(errors.ProgrammingError, match="primary key"):
        cur.execute("ALTER TABLE ns.t DROP COLUMN a")
    with pytest.raises(errors.ProgrammingError, match="already exists"):
        cur.execute("ALTER TABLE ns.t ADD COLUMN a INT")
    cur.execute("CREATE NAMESPACE ns2")
    cur.execute("ALTER TABLE ns.t RENAME TO ns2.moved")
    assert column(cur, "SHOW TABLES IN ns") == []
    assert column(cur, "SHOW TABLES IN ns2") == ["moved"]
    props = rows(cur, "SELECT properties FROM system.tables WHERE table_name = 'moved'")
    assert dict(props[0][0]) == {"k2": "v2"}


def test_drop_table(cur: Any) -> None:
    cur.execute("CREATE TABLE t (a INT)")
    cur.execute("DROP TABLE t")
    cur.execute("DROP TABLE IF EXISTS t")
    with pytest.raises(errors.ProgrammingError, match="does not exist"):
        cur.execute("DROP TABLE t")
    with pytest.raises(errors.ProgrammingError, match="does not exist"):
        cur.execute("SELECT * FROM t")


# -- queries over catalog metadata ---------------------------------------------------


def test_select_over_catalog_tables_runs_in_duckdb(cur: Any) -> None:
    cur.execute("CREATE NAMESPACE a")
    cur.execute("CREATE NAMESPACE b")
    for name in ("a.t1", "a.t2", "b.t3"):
        cur.execute(f"CREATE TABLE {name} (x INT, y VARCHAR(3))")
    assert rows(cur, "SELECT 1") == [(1,)]
    grouped = rows(
        cur,
        "SELECT t.namespace_name, count(*) AS n, sum(c.ordinal_position) "
        "FROM system.tables AS t JOIN system.columns AS c "
        "ON c.namespace_name = t.namespace_name AND c.table_name = t.table_name "
        "WHERE t.namespace_name <> ? GROUP BY 1 ORDER BY 1",
        ["zzz"],
    )
    assert grouped == [("a", 4, 6), ("b", 2, 3)]
    sub = rows(
        cur,
        "SELECT table_name FROM system.tables WHERE namespace_name IN "
        "(SELECT namespace_name FROM system.namespaces WHERE namespace_name = 'b')",
    )
    assert sub == [("t3",)]
    bi = rows(
        cur,
        "SELECT table_schema, table_name, table_type FROM information_schema.tables "
        "WHERE table_schema = 'a' ORDER BY table_name",
    )
    assert bi == [("a", "t1", "BASE TABLE"), ("a", "t2", "BASE TABLE")]
    cols = rows(
        cur,
        "SELECT column_name, is_nullable, data_type FROM information_schema.columns "
        "WHERE table_schema = 'b' ORDER BY ordinal_position",
    )
    assert cols == [("x", "YES", "INTEGER"), ("y", "YES", "VARCHAR")]
    assert "tables" in column(cur, "SHOW TABLES IN system")


def test_time_travel_on_catalog_tables(cur: Any) -> None:
    lake = cur.connection.lakehouse
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.first (a INT)")
    v = lake.latest_version()
    time.sleep(0.01)
    moment = datetime.datetime.now(datetime.timezone.utc)
    time.sleep(0.01)
    cur.execute("CREATE TABLE ns.second (a INT)")
    assert column(cur, "SELECT table_name FROM system.tables ORDER BY 1") == ["first", "second"]
    for clause, params in (
        (f"FOR SYSTEM_VERSION AS OF {v}", None),
        (f"FOR VERSION AS OF {v}", None),
        ("FOR SYSTEM_VERSION AS OF ?", [v]),
        ("FOR SYSTEM_TIME AS OF ?", [moment]),
        (f"FOR TIMESTAMP AS OF TIMESTAMP '{moment.replace(tzinfo=None).isoformat()}'", None),
        (f"FOR SYSTEM_TIME AS OF '{moment.isoformat()}'", None),
    ):
        sql = f"SELECT table_name FROM system.tables {clause} ORDER BY 1"
        assert column(cur, sql, params) == ["first"], clause
    cur.execute("CALL system.export_snapshot(name => 'one_table', version => ?)", [v])
    sql = "SELECT table_name FROM system.tables FOR SYSTEM_VERSION AS OF 'one_table'"
    assert column(cur, sql) == ["first"]
    versions = rows(cur, "SELECT version FROM system.versions ORDER BY version")
    assert [r[0] for r in versions] == list(range(lake.latest_version() + 1))
    old = column(cur, f"SELECT max(version) FROM system.versions FOR SYSTEM_VERSION AS OF {v}")
    assert old == [v]
    with pytest.raises(errors.ProgrammingError, match="version 999"):
        cur.execute("SELECT * FROM system.tables FOR SYSTEM_VERSION AS OF 999")


# -- procedures ---------------------------------------------------------------------


def test_procedures(cur: Any, tmp_path: Path) -> None:
    lake = cur.connection.lakehouse
    cur.execute("CREATE NAMESPACE keep")
    v = lake.latest_version()
    cur.execute("CREATE NAMESPACE undo")
    assert rows(cur, "CALL system.rollback_to_version(?)", [v]) == [(v, v + 2)]
    assert "undo" not in column(cur, "SHOW NAMESPACES")
    assert rows(cur, "CALL system.compact()") == [(v + 3,)]
    target = str(tmp_path / "copy")
    exported = rows(
        cur,
        "CALL system.export_snapshot(name => 'full1', mode => 'full', target => ?)",
        [target],
    )
    assert exported[0][0:3] == ("full1", v + 3, "full")
    copy = trinity_dbapi.connect(target, create=False).cursor()
    assert "keep" in column(copy, "SHOW NAMESPACES")
    expired = rows(cur, "CALL system.expire_versions(retain_last => 2, dry_run => true)")
    assert expired[0][2] is True and len(expired[0][1]) >= 2
    with pytest.raises(errors.ProgrammingError, match="has no parameter 'nope'"):
        cur.execute("CALL system.compact(nope => 1)")
    with pytest.raises(errors.ProgrammingError, match="does not exist"):
        cur.execute("CALL system.vacuum()")


def test_procedures_refused_inside_a_transaction_with_changes(tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"))
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE pending")
    with pytest.raises(errors.NotSupportedError, match="COMMIT or ROLLBACK first"):
        cur.execute("CALL system.compact()")
    conn.commit()
    cur.execute("CALL system.compact()")


# -- errors -------------------------------------------------------------------------


def test_syntax_errors_carry_position(cur: Any) -> None:
    with pytest.raises(errors.SQLSyntaxError) as info:
        cur.execute("SELECT 1 FROM\nWHERE")
    assert info.value.line >= 1 and info.value.column >= 1


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("GRANT SELECT ON t TO bob", errors.NotSupportedError),
        ("SELECT * FROM nowhere.t", errors.ProgrammingError),
        ("SELECT no_such_column FROM system.tables", errors.ProgrammingError),
        ("SELECT 1/0::INT + 'x'::INT", errors.DataError),
        ("CREATE TABLE t (a NOSUCHTYPE)", errors.ProgrammingError),
        ("CREATE TABLE t (a INT, PRIMARY KEY (b))", errors.ProgrammingError),
    ],
)
def test_error_classes(cur: Any, sql: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        cur.execute(sql)


def test_statement_model_is_what_the_driver_executes() -> None:
    (parsed,) = st.parse("SHOW TABLES IN ns LIKE ?")
    assert st.to_statement(parsed, ["a%"]) == model.ShowTables("ns", "a%")


def test_set_transaction_and_begin_outside_autocommit(tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"))
    cur = conn.cursor()
    cur.execute("SET TRANSACTION ISOLATION LEVEL SNAPSHOT")
    assert conn.isolation_level == "SNAPSHOT ISOLATION"
    cur.execute("CREATE NAMESPACE a")
    with pytest.raises(errors.ProgrammingError, match="SET TRANSACTION after"):
        cur.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
    with pytest.raises(errors.ProgrammingError, match="already in progress"):
        cur.execute("BEGIN")
    cur.execute("COMMIT")
    cur.execute("BEGIN ISOLATION LEVEL SERIALIZABLE")
    assert conn.isolation_level == "SERIALIZABLE"
    cur.execute("DROP NAMESPACE a")
    cur.execute("ROLLBACK")
    assert column(cur, "SHOW NAMESPACES LIKE 'a'") == ["a"]


def test_user_tables_and_catalog_tables_describe_and_time_travel(cur: Any) -> None:
    lake = cur.connection.lakehouse
    cur.execute("CREATE NAMESPACE ns")
    before = lake.latest_version()
    cur.execute("CREATE TABLE ns.t (a INT NOT NULL, b STRUCT<x: DOUBLE>)")
    # a table holds no data yet: the scan is empty but typed
    cur.execute("SELECT a, b.x FROM ns.t")
    assert cur.fetchall() == [] and [d[0] for d in cur.description] == ["a", "x"]
    assert cur.description[0][1] == trinity_dbapi.NUMBER
    with pytest.raises(errors.NoSuchTableError):
        cur.execute(f"SELECT * FROM ns.t FOR SYSTEM_VERSION AS OF {before}")
    described = rows(cur, "DESCRIBE system.tables")
    assert described[0][:2] == ("namespace_name", "varchar")  # unbounded
    assert "table_name" in [r[0] for r in described]
    with pytest.raises(errors.NoSuchTableError):
        cur.execute("DESCRIBE system.nope")


def test_cached_statements_are_never_modified_by_execution(cur: Any) -> None:
    lake = cur.connection.lakehouse
    cur.execute("CREATE NAMESPACE a")
    v1 = lake.latest_version()
    cur.execute("CREATE NAMESPACE b")
    v2 = lake.latest_version()
    sql = "SELECT count(*) FROM system.namespaces FOR SYSTEM_VERSION AS OF ? WHERE namespace_name <> ?"
    for version, expected in ((v1, 1), (v2, 2), (v1, 1)):
        assert rows(cur, sql, [version, "zzz"]) == [(expected,)]
    assert st.parse(sql)[0] is st.parse(sql)[0]  # the statement cache
    assert st.parse(sql)[0].expression.sql(dialect="trinity") == st._parse(sql)[0].expression.sql(
        dialect="trinity"
    )
