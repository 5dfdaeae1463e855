"""The statement model: to_statement for every statement, binding, types, time travel."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from sqlglot import exp

from trinity_dbapi.errors import InvalidDefinitionError, ProgrammingError
from trinity_dbapi.format.definitions import Column, DataType
from trinity_dbapi.sql import statements as st
from trinity_dbapi.sql.binding import parse_timestamp
from trinity_dbapi.sql.types_sql import UNBOUNDED_LENGTH, data_type, sql_type, type_sql

UTC = timezone.utc


def one(sql: str, *params: object) -> st.Statement:
    """The model of the single statement ``sql`` with ``params`` bound."""
    (parsed,) = st.parse(sql)
    return st.to_statement(parsed, params)


def column_type(sql_type_text: str) -> DataType:
    statement = one(f"CREATE TABLE t (a {sql_type_text})")
    assert isinstance(statement, st.CreateTable)
    return statement.columns[0].type


# -- namespaces ---------------------------------------------------------------------------


def test_create_namespace() -> None:
    assert one("CREATE NAMESPACE sales") == st.CreateNamespace("sales", False, None, {})
    assert one(
        "create schema if not exists Sales comment ? with (Owner = ?, 'Team.Name' = 'x', a.B = 'y')",
        "Sales data",
        "ana",
    ) == st.CreateNamespace(
        "sales", True, "Sales data", {"owner": "ana", "Team.Name": "x", "a.b": "y"}
    )
    assert one('CREATE NAMESPACE "Sales" COMMENT ?', None) == st.CreateNamespace(
        "Sales", False, None, {}
    )


def test_drop_alter_show_describe_namespace() -> None:
    assert one("DROP NAMESPACE sales") == st.DropNamespace("sales", False, False)
    assert one("DROP SCHEMA IF EXISTS sales CASCADE") == st.DropNamespace("sales", True, True)
    assert one("DROP NAMESPACE sales RESTRICT") == st.DropNamespace("sales", False, False)
    assert one("ALTER SCHEMA s SET PROPERTIES (a = '1', b = ?)", "2") == st.AlterNamespace(
        "s", {"a": "1", "b": "2"}, ()
    )
    assert one("ALTER NAMESPACE s UNSET PROPERTIES (a, 'B')") == st.AlterNamespace(
        "s", {}, ("a", "B")
    )
    assert one("SHOW NAMESPACES") == st.ShowNamespaces(None)
    assert one("SHOW SCHEMAS LIKE ?", "s%") == st.ShowNamespaces("s%")
    assert one("DESC NAMESPACE Sales") == st.DescribeNamespace("sales")


# -- tables ----------------------------------------------------------------------------------


def test_create_table() -> None:
    statement = one(
        "CREATE TABLE IF NOT EXISTS Sales.Orders (Id INT8, note TEXT NOT NULL COMMENT ?, "
        "day DATE, PRIMARY KEY (id)) PARTITIONED BY (day) COMMENT 'orders' WITH (k = ?)",
        "free text",
        "v",
    )
    assert statement == st.CreateTable(
        table=st.TableName("sales", "orders"),
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
    assert isinstance(statement, st.CreateTable)
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
    t = st.TableName("sales", "orders")
    assert one("DROP TABLE IF EXISTS sales.orders") == st.DropTable(t, True)
    assert one("DROP TABLE orders") == st.DropTable(st.TableName(None, "orders"), False)
    assert one("ALTER TABLE sales.orders ADD COLUMN q INT4 NOT NULL COMMENT ?", "n") == (
        st.AlterTable(t, st.AddColumn(Column(0, "q", DataType("int4"), False, comment="n")))
    )
    added = one("ALTER TABLE sales.orders ADD s STRUCT<a: LIST<INT2>>")
    assert isinstance(added, st.AlterTable) and isinstance(added.action, st.AddColumn)
    assert {c.id for c in added.action.column.walk()} == {0}
    assert one("ALTER TABLE sales.orders DROP COLUMN Q") == st.AlterTable(t, st.DropColumn("q"))
    assert one('ALTER TABLE sales.orders RENAME COLUMN a TO "B"') == st.AlterTable(
        t, st.RenameColumn("a", "B")
    )
    assert one("ALTER TABLE sales.orders RENAME TO archive.o") == st.AlterTable(
        t, st.RenameTable(st.TableName("archive", "o"))
    )
    assert one("ALTER TABLE sales.orders RENAME TO o") == st.AlterTable(
        t, st.RenameTable(st.TableName(None, "o"))
    )
    assert one("ALTER TABLE sales.orders SET PROPERTIES (a = ?)", "1") == st.AlterTable(
        t, st.SetTableProperties({"a": "1"})
    )
    assert one("ALTER TABLE sales.orders UNSET PROPERTIES (a, 'b.C')") == st.AlterTable(
        t, st.UnsetTableProperties(("a", "b.C"))
    )


def test_show_and_describe_tables() -> None:
    assert one("SHOW TABLES") == st.ShowTables(None, None)
    assert one("SHOW TABLES FROM Sales LIKE ?", "o%") == st.ShowTables("sales", "o%")
    assert one('SHOW TABLES IN "Sales"') == st.ShowTables("Sales", None)
    assert one("DESCRIBE orders") == st.DescribeTable(st.TableName(None, "orders"))
    assert one("DESC TABLE s.o") == st.DescribeTable(st.TableName("s", "o"))
    assert one("SHOW CREATE TABLE s.o") == st.ShowCreateTable(st.TableName("s", "o"))


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
    assert one("BEGIN") == st.Begin(None)
    assert one("start transaction isolation level snapshot isolation") == st.Begin("SNAPSHOT")
    assert one("BEGIN WORK ISOLATION LEVEL SERIALIZABLE") == st.Begin("SERIALIZABLE")
    assert one("COMMIT WORK") == st.Commit()
    assert one("ROLLBACK") == st.Rollback()
    assert one("SET TRANSACTION ISOLATION LEVEL SNAPSHOT") == st.SetTransaction("SNAPSHOT")
    assert one("USE Sales") == st.Use("sales")
    assert one('USE "Sales"') == st.Use("Sales")


def test_call_converts_arguments() -> None:
    statement = one(
        "CALL System.Export_Snapshot('eod', 3, -2, 1.5, 2e1, TRUE, NULL, DATE '2026-01-02', "
        "Target => ?, older_than => TIMESTAMP '2026-01-01 02:00:00+02:00')",
        b"raw",
    )
    assert statement == st.Call(
        st.TableName("system", "export_snapshot"),
        ("eod", 3, -2, Decimal("1.5"), 20.0, True, None, date(2026, 1, 2)),
        {"target": b"raw", "older_than": datetime(2026, 1, 1, tzinfo=UTC)},
    )
    assert one("CALL compact()") == st.Call(st.TableName(None, "compact"), (), {})


# -- queries and time travel ---------------------------------------------------------------------


def test_query_tables_and_params() -> None:
    statement = one(
        "WITH c AS (SELECT * FROM s.a) SELECT * FROM c JOIN B ON c.x = B.x, range(3) "
        'WHERE c.y = ? AND B.z IN (SELECT z FROM "Z")',
        7,
    )
    assert isinstance(statement, st.Query)
    assert [ref.table for ref in statement.tables] == [
        st.TableName("s", "a"),
        st.TableName(None, "b"),
        st.TableName(None, "Z"),
    ]
    assert all(ref.as_of is None for ref in statement.tables)
    assert statement.params == (7,) and statement.param_count == 1
    nodes = list(statement.expression.find_all(exp.Table))
    assert all(any(ref.node is node for node in nodes) for ref in statement.tables)


@pytest.mark.parametrize(
    ("clause", "params", "expected"),
    [
        ("FOR SYSTEM_VERSION AS OF 3", (), st.AsOf("version", 3)),
        ("FOR VERSION AS OF 'eod'", (), st.AsOf("export", "eod")),
        ("FOR SYSTEM_VERSION AS OF ?", (5,), st.AsOf("version", 5)),
        ("FOR SYSTEM_VERSION AS OF ?", ("eod",), st.AsOf("export", "eod")),
        (
            "FOR SYSTEM_TIME AS OF TIMESTAMP '2026-01-01 12:00:00'",
            (),
            st.AsOf("timestamp", datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ),
        (
            "FOR TIMESTAMP AS OF '2026-01-01T12:00:00+01:00'",
            (),
            st.AsOf("timestamp", datetime(2026, 1, 1, 11, tzinfo=UTC)),
        ),
        (
            "FOR TIMESTAMP AS OF DATE '2026-01-01'",
            (),
            st.AsOf("timestamp", datetime(2026, 1, 1, tzinfo=UTC)),
        ),
        (
            "FOR SYSTEM_TIME AS OF ?",
            (datetime(2026, 1, 1, 12),),
            st.AsOf("timestamp", datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ),
        (
            "FOR SYSTEM_TIME AS OF ?",
            (datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=-3))),),
            st.AsOf("timestamp", datetime(2026, 1, 1, 15, tzinfo=UTC)),
        ),
        (
            "FOR SYSTEM_TIME AS OF ?",
            ("2026-01-01 12:00Z",),
            st.AsOf("timestamp", datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ),
    ],
)
def test_time_travel(clause: str, params: tuple[object, ...], expected: st.AsOf) -> None:
    statement = one(f"SELECT * FROM t {clause} AS x", *params)
    assert isinstance(statement, st.Query)
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
    assert isinstance(statement, st.Query)
    assert statement.params == ("p1", "p4") and statement.param_count == 2
    assert [ref.as_of for ref in statement.tables] == [
        st.AsOf("version", 4),
        st.AsOf("timestamp", datetime(2026, 1, 1, tzinfo=UTC)),
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
    assert isinstance(first, st.Query) and isinstance(second, st.Query)
    assert (first.tables[0].as_of, second.tables[0].as_of) == (
        st.AsOf("version", 1),
        st.AsOf("version", 2),
    )
    assert parsed.expression.find(exp.Placeholder) is not None  # untouched


def test_common_table_expressions_cannot_time_travel() -> None:
    with pytest.raises(ProgrammingError, match="common table expression"):
        one("WITH c AS (SELECT 1) SELECT * FROM c FOR SYSTEM_VERSION AS OF 1")


def test_a_placeholder_is_not_a_table_name() -> None:
    with pytest.raises(ProgrammingError, match="cannot stand for a name"):
        one("SELECT * FROM ?", "t")


def test_dml_and_explain() -> None:
    insert = one("INSERT INTO s.t SELECT * FROM u FOR VERSION AS OF 2 WHERE a = ?", 1)
    assert isinstance(insert, st.Dml) and isinstance(insert.expression, exp.Insert)
    assert [(r.table, r.as_of) for r in insert.tables] == [
        (st.TableName("s", "t"), None),
        (st.TableName(None, "u"), st.AsOf("version", 2)),
    ]
    assert insert.params == (1,)
    update = one("UPDATE t SET a = ? WHERE b = ?", 1, 2)
    assert isinstance(update, st.Dml) and update.params == (1, 2)
    delete = one("DELETE FROM t")
    assert isinstance(delete, st.Dml) and delete.param_count == 0
    explain = one("EXPLAIN SELECT * FROM t")
    assert isinstance(explain, st.Query) and explain.tables[0].table == st.TableName(None, "t")


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
    classes = [getattr(st, name) for name in st.__all__ if isinstance(getattr(st, name), type)]
    assert len(classes) == 29
    for cls in classes:
        assert cls.__doc__ and "\n" not in cls.__doc__.strip(), cls.__name__
