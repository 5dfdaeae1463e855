"""The statement model: to_statement for every statement, binding, types, time travel."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from sqlglot import exp

from trinity_dbapi.errors import InvalidDefinitionError, ProgrammingError
from trinity_dbapi.format.definitions import Column, DataType
from trinity_dbapi.sql import model
from trinity_dbapi.sql import statements as st
from trinity_dbapi.sql.binding import parse_timestamp
from trinity_dbapi.sql.dialect import type_sql
from trinity_dbapi.sql.types_sql import UNBOUNDED_LENGTH, data_type, sql_type

UTC = timezone.utc


def one(sql: str, *params: object) -> model.Statement:
    """The model of the single statement ``sql`` with ``params`` bound."""
    (parsed,) = st.parse(sql)
    return st.to_statement(parsed, params)


def column_type(sql_type_text: str) -> DataType:
    statement = one(f"CREATE TABLE t (a {sql_type_text})")
    assert isinstance(statement, model.CreateTable)
    return statement.columns[0].type


# -- namespaces ---------------------------------------------------------------------------


def test_create_namespace() -> None:
    assert one("CREATE NAMESPACE sales") == model.CreateNamespace("sales", False, None, {})
    assert one(
        "create schema if not exists Sales comment ? with (Owner = ?, 'Team.Name' = 'x', a.B = 'y')",
        "Sales data",
        "ana",
    ) == model.CreateNamespace(
        "sales", True, "Sales data", {"owner": "ana", "Team.Name": "x", "a.b": "y"}
    )
    assert one('CREATE NAMESPACE "Sales" COMMENT ?', None) == model.CreateNamespace(
        "Sales", False, None, {}
    )


def test_drop_alter_show_describe_namespace() -> None:
    assert one("DROP NAMESPACE sales") == model.DropNamespace("sales", False, False)
    assert one("DROP SCHEMA IF EXISTS sales CASCADE") == model.DropNamespace("sales", True, True)
    assert one("DROP NAMESPACE sales RESTRICT") == model.DropNamespace("sales", False, False)
    assert one("ALTER SCHEMA s SET PROPERTIES (a = '1', b = ?)", "2") == model.AlterNamespace(
        "s", {"a": "1", "b": "2"}, ()
    )
    assert one("ALTER NAMESPACE s UNSET PROPERTIES (a, 'B')") == model.AlterNamespace(
        "s", {}, ("a", "B")
    )
    assert one("SHOW NAMESPACES") == model.ShowNamespaces(None)
    assert one("SHOW SCHEMAS LIKE ?", "s%") == model.ShowNamespaces("s%")
    assert one("DESC NAMESPACE Sales") == model.DescribeNamespace("sales")


# -- tables ----------------------------------------------------------------------------------


def test_create_table() -> None:
    statement = one(
        "CREATE TABLE IF NOT EXISTS Sales.Orders (Id INT8, note TEXT NOT NULL COMMENT ?, "
        "day DATE, PRIMARY KEY (id)) PARTITIONED BY (day) COMMENT 'orders' WITH (k = ?)",
        "free text",
        "v",
    )
    assert statement == model.CreateTable(
        table=model.TableName("sales", "orders"),
        columns=(
            Column(1, "id", DataType("int8"), nullable=False),
            Column(2, "note", DataType.varchar(UNBOUNDED_LENGTH), False, comment="free text"),
            Column(3, "day", DataType("date")),
        ),
        primary_key=("id",),
        partitioned_by=("day",),
        comment="orders",
        properties={"k": "v"},
        if_not_exists=True,
    )


def test_nested_columns_are_numbered_depth_first() -> None:
    statement = one("CREATE TABLE t (a INT4, s STRUCT<x: MAP<TEXT, INT4[]>, y: DATE>, b BOOL)")
    assert isinstance(statement, model.CreateTable)
    ids = [(c.id, c.name) for column in statement.columns for c in column.walk()]
    assert ids == [
        (1, "a"),
        (2, "s"),
        (3, "x"),
        (4, "key"),
        (5, "value"),
        (6, "element"),
        (7, "y"),
        (8, "b"),
    ]
    s = statement.columns[1].type
    assert s.fields[0].type.key is not None and not s.fields[0].type.key.nullable
    assert s.fields[0].type == DataType.map_of(
        Column(4, "key", DataType.varchar(UNBOUNDED_LENGTH), nullable=False),
        Column(5, "value", DataType.list_of(Column(6, "element", DataType("int4")))),
    )


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("CREATE TABLE t (a INT4, PRIMARY KEY (b))", "PRIMARY KEY column 'b' is not a column"),
        ("CREATE TABLE t (a INT4, PRIMARY KEY (a, a))", "'a' appears twice"),
        ("CREATE TABLE t (a INT4) PARTITIONED BY (c)", "PARTITIONED BY column 'c'"),
        ("CREATE TABLE t (a INT4, A INT8)", "column 'a' is declared twice"),
        ('CREATE TABLE t (a INT4, PRIMARY KEY ("A"))', "column 'A' is not a column"),
    ],
)
def test_create_table_errors(sql: str, error: str) -> None:
    with pytest.raises(ProgrammingError, match=error):
        one(sql)


def test_struct_with_duplicate_fields_is_an_invalid_definition() -> None:
    with pytest.raises(InvalidDefinitionError, match="appears twice"):
        one("CREATE TABLE t (s STRUCT<a: INT4, A: INT4>)")


def test_drop_and_alter_table() -> None:
    t = model.TableName("sales", "orders")
    assert one("DROP TABLE IF EXISTS sales.orders") == model.DropTable(t, True)
    assert one("DROP TABLE orders") == model.DropTable(model.TableName(None, "orders"), False)
    assert one("ALTER TABLE sales.orders ADD COLUMN q INT4 NOT NULL COMMENT ?", "n") == (
        model.AlterTable(t, model.AddColumn(Column(0, "q", DataType("int4"), False, comment="n")))
    )
    added = one("ALTER TABLE sales.orders ADD s STRUCT<a: LIST<INT2>>")
    assert isinstance(added, model.AlterTable) and isinstance(added.action, model.AddColumn)
    assert {c.id for c in added.action.column.walk()} == {0}
    assert one("ALTER TABLE sales.orders DROP COLUMN Q") == model.AlterTable(
        t, model.DropColumn("q")
    )
    assert one('ALTER TABLE sales.orders RENAME COLUMN a TO "B"') == model.AlterTable(
        t, model.RenameColumn("a", "B")
    )
    assert one("ALTER TABLE sales.orders RENAME TO archive.o") == model.AlterTable(
        t, model.RenameTable(model.TableName("archive", "o"))
    )
    assert one("ALTER TABLE sales.orders RENAME TO o") == model.AlterTable(
        t, model.RenameTable(model.TableName(None, "o"))
    )
    assert one("ALTER TABLE sales.orders SET PROPERTIES (a = ?)", "1") == model.AlterTable(
        t, model.SetTableProperties({"a": "1"})
    )
    assert one("ALTER TABLE sales.orders UNSET PROPERTIES (a, 'b.C')") == model.AlterTable(
        t, model.UnsetTableProperties(("a", "b.C"))
    )


def test_truncate_and_indices() -> None:
    orders = model.TableName("sales", "orders")
    assert one("TRUNCATE TABLE Sales.Orders") == model.TruncateTable(orders)
    assert one('truncate "T"') == model.TruncateTable(model.TableName(None, "T"))
    assert one("CREATE INDEX Idx ON sales.orders (Customer)") == model.CreateIndex(
        "idx", orders, "customer", False
    )
    assert one('CREATE INDEX IF NOT EXISTS "Idx" ON t ("Day")') == model.CreateIndex(
        "Idx", model.TableName(None, "t"), "Day", True
    )
    assert one("DROP INDEX idx ON sales.orders") == model.DropIndex("idx", orders, False)
    assert one("DROP INDEX IF EXISTS idx ON t") == model.DropIndex(
        "idx", model.TableName(None, "t"), True
    )


def test_create_table_as() -> None:
    statement = one(
        "CREATE TABLE IF NOT EXISTS Sales.Big PARTITIONED BY (Day) COMMENT ? WITH (k = ?) "
        "AS SELECT day, ? AS tag FROM s.o FOR SYSTEM_VERSION AS OF ? WHERE amount > ?",
        "big orders",
        "v",
        "x",
        3,
        100,
    )
    assert isinstance(statement, model.CreateTableAs)
    assert (
        statement.table,
        statement.partitioned_by,
        statement.comment,
        statement.properties,
        statement.if_not_exists,
    ) == (model.TableName("sales", "big"), ("day",), "big orders", {"k": "v"}, True)
    query = statement.query
    assert isinstance(query, model.Query) and isinstance(query.expression, exp.Select)
    assert [(r.table, r.as_of) for r in query.tables] == [
        (model.TableName("s", "o"), model.AsOf("version", 3))
    ]
    assert query.tables[0].node in list(query.expression.find_all(exp.Table))
    assert (query.param_count, query.params) == (2, ("x", 100))
    query.tables[0].node.set("version", None)
    assert query.expression.sql(dialect="duckdb") == (
        "SELECT day, $1 AS tag FROM s.o WHERE amount > $2"
    )


def test_create_table_as_takes_any_query_like_a_select() -> None:
    sql = "WITH r AS (SELECT * FROM a) SELECT x FROM r UNION ALL SELECT x FROM b WHERE y = ?"
    plain = one(sql, 1)
    ctas = one(f"CREATE TABLE t AS {sql}", 1)
    assert isinstance(ctas, model.CreateTableAs) and isinstance(plain, model.Query)
    assert ctas == model.CreateTableAs(
        model.TableName(None, "t"), ctas.query, (), None, {}, if_not_exists=False
    )
    assert ctas.query.expression.sql(dialect="duckdb") == plain.expression.sql(dialect="duckdb")
    assert [r.table for r in ctas.query.tables] == [r.table for r in plain.tables]
    assert ctas.query.params == plain.params == (1,)
    values = one("CREATE TABLE t AS VALUES (?, 'a')", 7)
    assert isinstance(values, model.CreateTableAs)
    assert values.query.tables == () and values.query.params == (7,)


def test_create_table_as_errors() -> None:
    with pytest.raises(ProgrammingError, match="PARTITIONED BY column 'a' appears twice"):
        one("CREATE TABLE t PARTITIONED BY (a, A) AS SELECT 1 AS a")
    with pytest.raises(ProgrammingError, match="common table expression"):
        one("CREATE TABLE t AS WITH c AS (SELECT 1) SELECT * FROM c FOR VERSION AS OF 1")


def test_show_and_describe_tables() -> None:
    assert one("SHOW TABLES") == model.ShowTables(None, None)
    assert one("SHOW TABLES FROM Sales LIKE ?", "o%") == model.ShowTables("sales", "o%")
    assert one('SHOW TABLES IN "Sales"') == model.ShowTables("Sales", None)
    assert one("DESCRIBE orders") == model.DescribeTable(model.TableName(None, "orders"))
    assert one("DESC TABLE s.o") == model.DescribeTable(model.TableName("s", "o"))
    assert one("SHOW CREATE TABLE s.o") == model.ShowCreateTable(model.TableName("s", "o"))


# -- types ------------------------------------------------------------------------------------

ALIASES = [
    ("BOOLEAN", DataType("boolean")),
    ("bool", DataType("boolean")),
    ("INT2", DataType("int2")),
    ("smallint", DataType("int2")),
    ("INT4", DataType("int4")),
    ("int", DataType("int4")),
    ("integer", DataType("int4")),
    ("INT8", DataType("int8")),
    ("bigint", DataType("int8")),
    ("long", DataType("int8")),
    ("DECIMAL(10, 2)", DataType.decimal(10, 2)),
    ("numeric(10,2)", DataType.decimal(10, 2)),
    ("decimal(7)", DataType.decimal(7, 0)),
    ("decimal", DataType.decimal(38, 0)),
    ("FLOAT4", DataType("float4")),
    ("real", DataType("float4")),
    ("FLOAT8", DataType("float8")),
    ("float", DataType("float8")),
    ("double", DataType("float8")),
    ("double precision", DataType("float8")),
    ("CHAR(3)", DataType.char(3)),
    ("char", DataType.char(1)),
    ("character(3)", DataType.char(3)),
    ("nchar(3)", DataType.char(3)),
    ("bpchar(3)", DataType.char(3)),
    ("VARCHAR(20)", DataType.varchar(20)),
    ("varchar", DataType.varchar(UNBOUNDED_LENGTH)),
    ("character varying(20)", DataType.varchar(20)),
    ("nvarchar(20)", DataType.varchar(20)),
    ("text", DataType.varchar(UNBOUNDED_LENGTH)),
    ("DATE", DataType("date")),
    ("TIME(3)", DataType.time(3)),
    ("time", DataType.time(6)),
    ("time without time zone", DataType.time(6)),
    ("TIMETZ(0)", DataType.timetz(0)),
    ("time with time zone", DataType.timetz(6)),
    ("time(9) with time zone", DataType.timetz(9)),
    ("TIMESTAMP(3)", DataType.timestamp(3)),
    ("timestamp", DataType.timestamp(6)),
    ("TIMESTAMPTZ(6)", DataType.timestamptz(6)),
    ("timestamptz", DataType.timestamptz(6)),
    ("timestamp with time zone", DataType.timestamptz(6)),
    ("FIXED(16)", DataType.fixed(16)),
    ("BINARY(8)", DataType.binary(8)),
    ("binary", DataType.binary(UNBOUNDED_LENGTH)),
    ("varbinary(8)", DataType.binary(8)),
    ("binary varying(8)", DataType.binary(8)),
    ("varbyte(8)", DataType.binary(8)),
    ("LIST<INT4>", DataType.list_of(Column(2, "element", DataType("int4")))),
    ("array<int>", DataType.list_of(Column(2, "element", DataType("int4")))),
    ("int[]", DataType.list_of(Column(2, "element", DataType("int4")))),
    (
        "MAP<VARCHAR(3), FLOAT8>",
        DataType.map_of(
            Column(2, "key", DataType.varchar(3), nullable=False),
            Column(3, "value", DataType("float8")),
        ),
    ),
    (
        'STRUCT<x: INT2, "Y": DATE>',
        DataType.struct_of(Column(2, "x", DataType("int2")), Column(3, "Y", DataType("date"))),
    ),
    (
        "row(X int2, y date)",
        DataType.struct_of(Column(2, "x", DataType("int2")), Column(3, "y", DataType("date"))),
    ),
]


@pytest.mark.parametrize(("text", "expected"), ALIASES)
def test_type_aliases(text: str, expected: DataType) -> None:
    assert column_type(text) == expected


@pytest.mark.parametrize(("text", "expected"), ALIASES)
def test_types_convert_back_to_their_canonical_text(text: str, expected: DataType) -> None:
    canonical = type_sql(expected)
    assert column_type(canonical) == expected
    (parsed,) = st.parse(f"CREATE TABLE t (a {canonical})")
    assert parsed.expression.sql(dialect="trinity") == parsed.sql


def test_type_sql_quotes_names_that_would_not_parse_back() -> None:
    struct = DataType.struct_of(
        Column(1, "Upper", DataType("int4")),
        Column(2, "order", DataType("int4")),
        Column(3, "with space", DataType("int4")),
    )
    assert type_sql(struct) == 'STRUCT<"Upper": INT4, "order": INT4, "with space": INT4>'
    assert data_type(sql_type(struct)) == DataType.struct_of(
        *(Column(0, c.name, c.type) for c in struct.fields)
    )


def test_data_type_accepts_sqlglot_duckdb_types() -> None:
    cast = exp.maybe_parse("CAST(x AS VARCHAR)", dialect="duckdb")
    assert isinstance(cast, exp.Cast)
    assert data_type(cast.to) == DataType.varchar(UNBOUNDED_LENGTH)
    with pytest.raises(ProgrammingError, match="UUID has no TrinityLake equivalent"):
        data_type(exp.DataType.build("UUID"))


# -- transactions, USE, CALL --------------------------------------------------------------------


def test_transactions_and_use() -> None:
    assert one("BEGIN") == model.Begin(None)
    assert one("start transaction isolation level snapshot isolation") == model.Begin("SNAPSHOT")
    assert one("BEGIN WORK ISOLATION LEVEL SERIALIZABLE") == model.Begin("SERIALIZABLE")
    assert one("COMMIT WORK") == model.Commit()
    assert one("ROLLBACK") == model.Rollback()
    assert one("SET TRANSACTION ISOLATION LEVEL SNAPSHOT") == model.SetTransaction("SNAPSHOT")
    assert one("set commit message 'it''s\nhere'") == model.SetCommitMessage("it's\nhere")
    assert one("SET COMMIT MESSAGE ?", "nightly") == model.SetCommitMessage("nightly")
    assert one("SET COMMIT MESSAGE ?", None) == model.SetCommitMessage(None)
    with pytest.raises(ProgrammingError, match="the commit message must be a string"):
        one("SET COMMIT MESSAGE ?", 3)
    assert one("USE Sales") == model.Use("sales")
    assert one('USE "Sales"') == model.Use("Sales")


def test_call_converts_arguments() -> None:
    statement = one(
        "CALL System.Export_Snapshot('eod', 3, -2, 1.5, 2e1, TRUE, NULL, DATE '2026-01-02', "
        "Target => ?, older_than => TIMESTAMP '2026-01-01 02:00:00+02:00')",
        b"raw",
    )
    assert statement == model.Call(
        model.TableName("system", "export_snapshot"),
        ("eod", 3, -2, Decimal("1.5"), 20.0, True, None, date(2026, 1, 2)),
        {"target": b"raw", "older_than": datetime(2026, 1, 1, tzinfo=UTC)},
    )
    assert one("CALL compact()") == model.Call(model.TableName(None, "compact"), (), {})


# -- queries and time travel ---------------------------------------------------------------------


def test_query_tables_and_params() -> None:
    statement = one(
        "WITH c AS (SELECT * FROM s.a) SELECT * FROM c JOIN B ON c.x = B.x, range(3) "
        'WHERE c.y = ? AND B.z IN (SELECT z FROM "Z")',
        7,
    )
    assert isinstance(statement, model.Query)
    assert [ref.table for ref in statement.tables] == [
        model.TableName("s", "a"),
        model.TableName(None, "b"),
        model.TableName(None, "Z"),
    ]
    assert all(ref.as_of is None for ref in statement.tables)
    assert statement.params == (7,) and statement.param_count == 1
    nodes = list(statement.expression.find_all(exp.Table))
    assert all(any(ref.node is node for node in nodes) for ref in statement.tables)


@pytest.mark.parametrize(
    ("clause", "params", "expected"),
    [
        ("FOR SYSTEM_VERSION AS OF 3", (), model.AsOf("version", 3)),
        ("FOR VERSION AS OF 'eod'", (), model.AsOf("export", "eod")),
        ("FOR SYSTEM_VERSION AS OF ?", (5,), model.AsOf("version", 5)),
        ("FOR SYSTEM_VERSION AS OF ?", ("eod",), model.AsOf("export", "eod")),
        (
            "FOR SYSTEM_TIME AS OF TIMESTAMP '2026-01-01 12:00:00'",
            (),
            model.AsOf("timestamp", datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ),
        (
            "FOR TIMESTAMP AS OF '2026-01-01T12:00:00+01:00'",
            (),
            model.AsOf("timestamp", datetime(2026, 1, 1, 11, tzinfo=UTC)),
        ),
        (
            "FOR TIMESTAMP AS OF DATE '2026-01-01'",
            (),
            model.AsOf("timestamp", datetime(2026, 1, 1, tzinfo=UTC)),
        ),
        (
            "FOR SYSTEM_TIME AS OF ?",
            (datetime(2026, 1, 1, 12),),
            model.AsOf("timestamp", datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ),
        (
            "FOR SYSTEM_TIME AS OF ?",
            (datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=-3))),),
            model.AsOf("timestamp", datetime(2026, 1, 1, 15, tzinfo=UTC)),
        ),
        (
            "FOR SYSTEM_TIME AS OF ?",
            ("2026-01-01 12:00Z",),
            model.AsOf("timestamp", datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ),
    ],
)
def test_time_travel(clause: str, params: tuple[object, ...], expected: model.AsOf) -> None:
    statement = one(f"SELECT * FROM t {clause} AS x", *params)
    assert isinstance(statement, model.Query)
    (ref,) = statement.tables
    assert ref.as_of == expected
    assert ref.node.alias == "x" and ref.node.args["version"] is not None
    assert statement.param_count == 0 and not statement.expression.find(exp.Placeholder)


@pytest.mark.parametrize(
    ("clause", "params", "error"),
    [
        ("FOR SYSTEM_VERSION AS OF ?", (-1,), "version number"),
        ("FOR SYSTEM_VERSION AS OF ?", (True,), "version number"),
        ("FOR SYSTEM_VERSION AS OF ?", (1.5,), "version number"),
        ("FOR SYSTEM_TIME AS OF ?", (3,), "datetime"),
        ("FOR SYSTEM_TIME AS OF 'yesterday'", (), "'yesterday' is not a valid timestamp"),
        ("FOR SYSTEM_TIME AS OF TIMESTAMP '2026-13-01'", (), "not a valid timestamp"),
    ],
)
def test_time_travel_errors(clause: str, params: tuple[object, ...], error: str) -> None:
    with pytest.raises(ProgrammingError, match=error):
        one(f"SELECT * FROM t {clause}", *params)


def test_time_travel_placeholders_are_bound_and_the_rest_renumbered() -> None:
    statement = one(
        "SELECT ? FROM a FOR SYSTEM_VERSION AS OF ? JOIN b FOR SYSTEM_TIME AS OF ? "
        "ON a.x = b.x WHERE a.y = ?",
        "p1",
        4,
        "2026-01-01",
        "p4",
    )
    assert isinstance(statement, model.Query)
    assert statement.params == ("p1", "p4") and statement.param_count == 2
    assert [ref.as_of for ref in statement.tables] == [
        model.AsOf("version", 4),
        model.AsOf("timestamp", datetime(2026, 1, 1, tzinfo=UTC)),
    ]
    for ref in statement.tables:
        ref.node.set("version", None)
    assert statement.expression.sql(dialect="duckdb") == (
        "SELECT $1 FROM a JOIN b ON a.x = b.x WHERE a.y = $2"
    )


def test_parsed_statements_are_reusable() -> None:
    (parsed,) = st.parse("SELECT * FROM t FOR SYSTEM_VERSION AS OF ? WHERE a = ?")
    first = st.to_statement(parsed, (1, "a"))
    second = st.to_statement(parsed, (2, "b"))
    assert isinstance(first, model.Query) and isinstance(second, model.Query)
    assert (first.tables[0].as_of, second.tables[0].as_of) == (
        model.AsOf("version", 1),
        model.AsOf("version", 2),
    )
    assert parsed.expression.find(exp.Placeholder) is not None  # untouched


def test_common_table_expressions_cannot_time_travel() -> None:
    with pytest.raises(ProgrammingError, match="common table expression"):
        one("WITH c AS (SELECT 1) SELECT * FROM c FOR SYSTEM_VERSION AS OF 1")


def test_a_placeholder_is_not_a_table_name() -> None:
    with pytest.raises(ProgrammingError, match="cannot stand for a name"):
        one("SELECT * FROM ?", "t")


DML_CASES = [
    (
        "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)",
        (1, 2, 3, 4),
        [("t", None, None)],
        "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)",
        (1, 2, 3, 4),
    ),
    (
        "INSERT INTO t SELECT * FROM u FOR SYSTEM_VERSION AS OF ? WHERE x > ?",
        (3, 9),
        [("t", None, None), ("u", None, model.AsOf("version", 3))],
        "INSERT INTO t SELECT * FROM u WHERE x > $1",
        (9,),
    ),
    (
        "DELETE FROM t WHERE a IN (SELECT a FROM u) AND b = ?",
        (5,),
        [("t", None, None), ("u", None, None)],
        "DELETE FROM t WHERE a IN (SELECT a FROM u) AND b = $1",
        (5,),
    ),
    (
        "UPDATE t SET a = ?, b = b || ? WHERE c = ?",
        ("x", "y", 7),
        [("t", None, None)],
        "UPDATE t SET a = $1, b = b || $2 WHERE c = $3",
        ("x", "y", 7),
    ),
    (
        "UPDATE t AS x SET a = 1 WHERE x.b = 2",
        (),
        [("t", "x", None)],
        "UPDATE t AS x SET a = 1 WHERE x.b = 2",
        (),
    ),
    (
        "DELETE FROM t AS x WHERE x.a = 1",
        (),
        [("t", "x", None)],
        "DELETE FROM t AS x WHERE x.a = 1",
        (),
    ),
    (
        "WITH s AS (SELECT * FROM u WHERE v = ?) INSERT INTO t SELECT * FROM s WHERE w = ?",
        (1, 2),
        [("t", None, None), ("u", None, None)],
        "WITH s AS (SELECT * FROM u WHERE v = $1) INSERT INTO t SELECT * FROM s WHERE w = $2",
        (1, 2),
    ),
    (
        "UPDATE t SET a = u.a FROM u FOR VERSION AS OF 'eod' WHERE t.id = u.id AND u.k = ?",
        ("k",),
        [("t", None, None), ("u", None, model.AsOf("export", "eod"))],
        "UPDATE t SET a = u.a FROM u WHERE t.id = u.id AND u.k = $1",
        ("k",),
    ),
]


@pytest.mark.parametrize(("sql", "params", "tables", "duckdb_sql", "bound"), DML_CASES)
def test_dml_lists_the_target_first_and_numbers_its_placeholders(
    sql: str,
    params: tuple[object, ...],
    tables: list[tuple[str, str | None, model.AsOf | None]],
    duckdb_sql: str,
    bound: tuple[object, ...],
) -> None:
    statement = one(sql, *params)
    assert isinstance(statement, model.Dml)
    assert [(r.table.name, r.node.alias or None, r.as_of) for r in statement.tables] == tables
    nodes = list(statement.expression.find_all(exp.Table))
    assert all(any(ref.node is node for node in nodes) for ref in statement.tables)
    target = statement.expression.this
    assert statement.tables[0].node is (target.this if isinstance(target, exp.Schema) else target)
    assert statement.params == bound and statement.param_count == len(bound)
    numbers = sorted(int(p.name) for p in statement.expression.find_all(exp.Placeholder))
    assert numbers == list(range(1, len(bound) + 1))
    for ref in statement.tables:
        ref.node.set("version", None)  # the executor replaces time-travelling tables
    assert statement.expression.sql(dialect="duckdb") == duckdb_sql


def test_dml_target_is_a_table_even_when_a_cte_has_its_name() -> None:
    statement = one("WITH t AS (SELECT * FROM u) INSERT INTO t SELECT * FROM t")
    assert isinstance(statement, model.Dml)
    assert [r.table.name for r in statement.tables] == ["t", "u"]


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE t FOR SYSTEM_VERSION AS OF 3 SET a = 1",
        "DELETE FROM t FOR SYSTEM_TIME AS OF ? WHERE a = 1",
    ],
)
def test_dml_target_does_not_time_travel(sql: str) -> None:
    with pytest.raises(ProgrammingError, match="writes the current version of table 't'"):
        one(sql, *([datetime(2026, 1, 1)] * sql.count("?")))


def test_dml_and_explain() -> None:
    insert = one("INSERT INTO s.t SELECT * FROM u FOR VERSION AS OF 2 WHERE a = ?", 1)
    assert isinstance(insert, model.Dml) and isinstance(insert.expression, exp.Insert)
    assert [(r.table, r.as_of) for r in insert.tables] == [
        (model.TableName("s", "t"), None),
        (model.TableName(None, "u"), model.AsOf("version", 2)),
    ]
    assert insert.params == (1,)
    update = one("UPDATE t SET a = ? WHERE b = ?", 1, 2)
    assert isinstance(update, model.Dml) and update.params == (1, 2)
    delete = one("DELETE FROM t")
    assert isinstance(delete, model.Dml) and delete.param_count == 0
    explain = one("EXPLAIN SELECT * FROM t")
    assert isinstance(explain, model.Query) and explain.tables[0].table == model.TableName(
        None, "t"
    )


# -- binding errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "params", "expected", "given"),
    [
        ("SELECT ?", (), 1, 0),
        ("SELECT 1", (1,), 0, 1),
        ("CALL f(?, ?)", (1,), 2, 1),
        ("CREATE NAMESPACE n COMMENT ?", (), 1, 0),
    ],
)
def test_wrong_number_of_parameters(
    sql: str, params: tuple[object, ...], expected: int, given: int
) -> None:
    (parsed,) = st.parse(sql)
    with pytest.raises(ProgrammingError, match=rf"has {expected} \? .* but {given} parameter"):
        st.to_statement(parsed, params)


@pytest.mark.parametrize("params", ["ab", {"a": 1}, 5])
def test_parameters_must_be_a_sequence(params: object) -> None:
    (parsed,) = st.parse("SELECT ?, ?")
    with pytest.raises(ProgrammingError, match="sequence"):
        st.to_statement(parsed, params)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sql", "params", "error"),
    [
        ("CREATE NAMESPACE n COMMENT ?", (5,), "comment must be a string"),
        ("CREATE NAMESPACE n WITH (a = ?)", (5,), "value of property 'a' must be a string"),
        ("CREATE NAMESPACE n WITH (a = ?)", (None,), "property 'a' has no value"),
        ("SHOW TABLES LIKE ?", (b"x",), "LIKE pattern must be a string"),
        ("SHOW SCHEMAS LIKE ?", (None,), "LIKE pattern's \\? parameter is None"),
    ],
)
def test_parameter_types(sql: str, params: tuple[object, ...], error: str) -> None:
    with pytest.raises(ProgrammingError, match=error):
        one(sql, *params)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-02", datetime(2026, 1, 2, tzinfo=UTC)),
        ("2026-01-02 03:04", datetime(2026, 1, 2, 3, 4, tzinfo=UTC)),
        ("2026-01-02T03:04:05.123456789", datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),
        ("2026-01-02 03:04:05.5 +0530", datetime(2026, 1, 1, 21, 34, 5, 500000, tzinfo=UTC)),
        ("2026-01-02 03:04:05-02", datetime(2026, 1, 2, 5, 4, 5, tzinfo=UTC)),
        ("2026-01-02 03:04:05 UTC", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
    ],
)
def test_parse_timestamp(text: str, expected: datetime) -> None:
    assert parse_timestamp(text) == expected


def test_every_model_class_is_exported_with_a_one_line_docstring() -> None:
    exported = [getattr(model, name) for name in model.__all__]
    classes = [cls for cls in exported if isinstance(cls, type)]
    assert (
        len(classes) == 46
    )  # SetCommitMessage, CreateTableClone, Save/LoadTransaction, RefCommand
    assert set(st.__all__) == {"Parsed", "parse", "to_statement"}  # the model lives in model.py
    for cls in [*classes, st.Parsed]:
        assert cls.__doc__ and "\n" not in cls.__doc__.strip(), cls.__name__
