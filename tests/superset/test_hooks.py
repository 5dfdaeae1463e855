"""The engine spec's Superset 6.1 hooks on a real lakehouse, called as Superset calls them.

Superset is not installed here (trinity_dbapi/superset/host.py says why).
Its ``Database`` and ``Table`` are replaced by :class:`_Database` and
:class:`_Table`, which do what Superset's do with a SQLAlchemy engine: an
inspector per call, ``get_df`` through a DB-API cursor. Every hook's answer
is compared with values written out here.
"""

from __future__ import annotations

import gc
import os
import re
import sys
import threading
import time
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

sa = pytest.importorskip("sqlalchemy")
pd = pytest.importorskip("pandas")

import trinity_dbapi
from trinity_dbapi import errors
from trinity_dbapi.dbapi import types as dbapi_types
from trinity_dbapi.superset import TrinityEngineSpec, cancel
from trinity_dbapi.superset.column_types import column_type
from trinity_dbapi.superset.host import GenericDataType
from trinity_dbapi.superset.spec import exception_names

Spec = TrinityEngineSpec
NUMERIC, STRING = GenericDataType.NUMERIC, GenericDataType.STRING
TEMPORAL, BOOLEAN = GenericDataType.TEMPORAL, GenericDataType.BOOLEAN


@dataclass(frozen=True)
class _Table:
    """Superset's ``superset.sql.parse.Table``."""

    table: str
    schema: str | None = None
    catalog: str | None = None


class _Database:
    """What the hooks use of Superset's ``Database``: inspectors and ``get_df``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.queries: list[str] = []

    def _engine(self, schema: str | None) -> Any:
        url = sa.engine.make_url(f"trinity:///{self.path}")
        url, connect_args = Spec.adjust_engine_params(url, {}, schema=schema)
        return sa.create_engine(url, connect_args=connect_args, poolclass=sa.pool.NullPool)

    @contextmanager
    def get_inspector(self, catalog: str | None = None, schema: str | None = None) -> Iterator[Any]:
        engine = self._engine(schema)
        try:
            yield sa.inspect(engine)
        finally:
            engine.dispose()

    def get_df(self, sql: str, catalog: str | None = None, schema: str | None = None) -> Any:
        self.queries.append(sql)
        engine = self._engine(schema)
        connection = engine.raw_connection()
        try:
            cursor = connection.cursor()
            cursor.execute(sql)
            rows = Spec.fetch_data(cursor)
            return pd.DataFrame(rows, columns=[d[0] for d in cursor.description])
        finally:
            connection.close()
            engine.dispose()


ORDERS = [
    (1, date(2024, 1, 1), "eu", Decimal("1.50"), datetime(2024, 1, 1, 10, tzinfo=timezone.utc)),
    (2, date(2024, 1, 2), "us", Decimal("2.50"), datetime(2024, 1, 2, 11, tzinfo=timezone.utc)),
    (3, date(2024, 1, 2), "eu", Decimal("3.50"), None),
    (4, date(2024, 1, 2), "us", Decimal("4.50"), datetime(2024, 1, 2, 12, tzinfo=timezone.utc)),
]


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> str:
    """sales.orders (partitioned by day, region; an index), sales.notes, sales.empty."""
    path = str(tmp_path_factory.mktemp("superset-hooks") / "lake")
    with trinity_dbapi.connect(path, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE sales")
        conn.execute(
            "CREATE TABLE sales.orders (id INT8, day DATE, region VARCHAR, amount DECIMAL(10,2),"
            " ts TIMESTAMPTZ) PARTITIONED BY (day, region) COMMENT 'one row per order'"
        )
        conn.cursor().executemany("INSERT INTO sales.orders VALUES (?, ?, ?, ?, ?)", ORDERS)
        conn.execute("CREATE INDEX by_id ON sales.orders (id)")
        conn.execute("CREATE TABLE sales.notes (id INT8, note VARCHAR)")
        conn.execute("INSERT INTO sales.notes VALUES (1, 'first')")
        conn.execute("CREATE TABLE sales.empty (day DATE, n INT4) PARTITIONED BY (day)")
    return path


@pytest.fixture
def database(lake: str) -> _Database:
    return _Database(lake)


def _inspector(lake: str) -> Any:
    return sa.inspect(sa.create_engine(f"trinity:///{lake}", poolclass=sa.pool.NullPool))


# -- listing ------------------------------------------------------------------------------


def test_schema_names_hide_information_schema(lake: str) -> None:
    inspector = _inspector(lake)
    assert "information_schema" in inspector.get_schema_names()
    assert Spec.get_schema_names(inspector) == {"sales", "system"}


def test_table_and_view_names(database: _Database, lake: str) -> None:
    inspector = _inspector(lake)
    assert Spec.get_table_names(database, inspector, "sales") == {"orders", "notes", "empty"}
    assert Spec.get_table_names(database, inspector, "system") == {
        "namespaces",
        "tables",
        "columns",
        "versions",
        "data_files",
        "refs",
    }
    assert Spec.get_table_names(database, inspector, "nowhere") == set()
    assert (
        Spec.get_view_names(database, inspector, "sales") == set()
    )  # views: tests/sqlalchemy/test_views.py


@pytest.fixture(scope="module")
def branched(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Main: sales.orders, sales.old. Branch dev: sales.old dropped, sales.fresh and lab.t added."""
    path = str(tmp_path_factory.mktemp("superset-branch") / "lake")
    with trinity_dbapi.connect(path, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE sales")
        conn.execute("CREATE TABLE sales.orders (id INT8, day DATE) PARTITIONED BY (day)")
        conn.execute("INSERT INTO sales.orders VALUES (1, DATE '2024-01-01')")
        conn.execute("CREATE TABLE sales.old (id INT8)")
        conn.execute("CREATE BRANCH dev")
        conn.execute("USE BRANCH dev")
        conn.execute("DROP TABLE sales.old")
        conn.execute("CREATE TABLE sales.fresh (id INT8, note VARCHAR) COMMENT 'dev only'")
        conn.execute("INSERT INTO sales.fresh VALUES (7, 'seven')")
        conn.execute("INSERT INTO sales.orders VALUES (2, DATE '2024-01-02')")
        conn.execute("CREATE NAMESPACE lab")
        conn.execute("CREATE TABLE lab.t (x INT4)")
    return path


def test_a_database_on_a_branch_lists_the_branch(branched: str) -> None:
    """A Superset database whose SQLAlchemy URI ends in ``?branch=dev`` sees the branch."""
    dev, main = _Database(f"{branched}?branch=dev"), _Database(branched)
    with dev.get_inspector() as inspector:
        assert Spec.get_schema_names(inspector) == {"sales", "lab", "system"}
        assert Spec.get_table_names(dev, inspector, "sales") == {"orders", "fresh"}
        assert Spec.get_table_names(dev, inspector, "lab") == {"t"}
        assert Spec.get_table_comment(inspector, _Table("fresh", "sales")) == "dev only"
        columns = Spec.get_columns(inspector, _Table("fresh", "sales"))
        assert [column["column_name"] for column in columns] == ["id", "note"]
    with main.get_inspector() as inspector:
        assert Spec.get_schema_names(inspector) == {"sales", "system"}
        assert Spec.get_table_names(main, inspector, "sales") == {"orders", "old"}
    # SQL Lab's schema choice keeps the branch: the namespace is a connect argument.
    frame = dev.get_df("SELECT id, note FROM fresh", schema="sales")
    assert frame.values.tolist() == [[7, "seven"]]
    orders = _Table("orders", "sales")
    assert Spec.latest_partition(dev, orders) == (["day"], [date(2024, 1, 2)])
    assert Spec.latest_partition(main, orders) == (["day"], [date(2024, 1, 1)])


def test_a_database_on_a_missing_branch_says_how_to_list_branches(branched: str) -> None:
    database = _Database(f"{branched}?branch=nope")
    with pytest.raises(sa.exc.ProgrammingError) as info, database.get_inspector() as inspector:
        Spec.get_schema_names(inspector)
    assert isinstance(info.value.orig, errors.NoSuchRefError)
    assert "branch 'nope' does not exist; SHOW BRANCHES lists them" in str(info.value)


def test_table_comment(lake: str) -> None:
    inspector = _inspector(lake)
    assert Spec.get_table_comment(inspector, _Table("orders", "sales")) == "one row per order"
    assert Spec.get_table_comment(inspector, _Table("notes", "sales")) is None
    with pytest.raises(sa.exc.NoSuchTableError):
        Spec.get_table_comment(inspector, _Table("missing", "sales"))


def _superset_type(column: dict[str, Any], dialect: Any) -> tuple[str, Any, bool]:
    """Superset's column_datatype_to_string, then get_column_spec: (type, generic, is_dttm)."""
    name = column["type"].compile(dialect=dialect).upper()
    found = column_type(name)
    assert found is not None, name
    return name, found[1], found[1] == TEMPORAL


def test_columns_and_their_superset_types(lake: str) -> None:
    inspector = _inspector(lake)
    columns = Spec.get_columns(inspector, _Table("orders", "sales"))
    assert [c["column_name"] for c in columns] == ["id", "day", "region", "amount", "ts"]
    assert [c["name"] for c in columns] == [c["column_name"] for c in columns]
    assert [_superset_type(c, inspector.dialect) for c in columns] == [
        ("INT8", NUMERIC, False),
        ("DATE", TEMPORAL, True),
        ("VARCHAR", STRING, False),
        ("DECIMAL(10, 2)", NUMERIC, False),
        ("TIMESTAMPTZ(6)", TEMPORAL, True),
    ]


#: Every TrinityLake type, as a column type and as Superset names it once reflected.
TRINITY_TYPES = [
    ("BOOLEAN", "BOOLEAN", BOOLEAN),
    ("INT2", "INT2", NUMERIC),
    ("INT4", "INT4", NUMERIC),
    ("INT8", "INT8", NUMERIC),
    ("DECIMAL(38,9)", "DECIMAL(38, 9)", NUMERIC),
    ("FLOAT4", "FLOAT4", NUMERIC),
    ("FLOAT8", "FLOAT8", NUMERIC),
    ("CHAR(3)", "CHAR(3)", STRING),
    ("VARCHAR(10)", "VARCHAR(10)", STRING),
    ("VARCHAR", "VARCHAR", STRING),
    ("DATE", "DATE", TEMPORAL),
    ("TIME(6)", "TIME(6)", STRING),
    ("TIMETZ(6)", "TIMETZ(6)", STRING),
    ("TIMESTAMP(6)", "TIMESTAMP(6)", TEMPORAL),
    ("TIMESTAMPTZ(6)", "TIMESTAMPTZ(6)", TEMPORAL),
    ("FIXED(16)", "FIXED(16)", STRING),
    ("BINARY(8)", "BINARY(8)", STRING),
    ("BINARY", "BINARY", STRING),
    ("STRUCT<a: INT4, b: VARCHAR>", "STRUCT<A: INT4, B: VARCHAR>", STRING),
    ("MAP<VARCHAR, INT4>", "MAP<VARCHAR, INT4>", STRING),
    ("LIST<INT4>", "LIST<INT4>", STRING),
]


def test_every_trinitylake_type_maps(tmp_path: Path) -> None:
    path = str(tmp_path / "lake")
    columns = ", ".join(f"c{i} {sql}" for i, (sql, _, _) in enumerate(TRINITY_TYPES))
    with trinity_dbapi.connect(path, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE ns")
        conn.execute(f"CREATE TABLE ns.every ({columns})")
    inspector = _inspector(path)
    reflected = Spec.get_columns(inspector, _Table("every", "ns"))
    assert [_superset_type(c, inspector.dialect) for c in reflected] == [
        (name, generic, generic == TEMPORAL) for _, name, generic in TRINITY_TYPES
    ]


#: A SQL Lab result column of each kind -> its cursor type code and generic type.
RESULT_TYPES = [
    ("1::TINYINT", "TINYINT", NUMERIC),
    ("1::UTINYINT", "UTINYINT", NUMERIC),
    ("1::SMALLINT", "SMALLINT", NUMERIC),
    ("1::INTEGER", "INTEGER", NUMERIC),
    ("1::UINTEGER", "UINTEGER", NUMERIC),
    ("1::BIGINT", "BIGINT", NUMERIC),
    ("1::UBIGINT", "UBIGINT", NUMERIC),
    ("1::HUGEINT", "DECIMAL", NUMERIC),
    ("1.5::REAL", "REAL", NUMERIC),
    ("1.5::DOUBLE", "DOUBLE", NUMERIC),
    ("1.5::DECIMAL(4,1)", "DECIMAL", NUMERIC),
    ("TRUE", "BOOLEAN", BOOLEAN),
    ("'a'", "VARCHAR", STRING),
    ("uuid()", "VARCHAR", STRING),
    ("'x'::BLOB", "BLOB", STRING),
    ("DATE '2024-01-01'", "DATE", TEMPORAL),
    ("TIME '12:00'", "TIME", STRING),
    ("TIMESTAMP '2024-01-01 10:00'", "TIMESTAMP", TEMPORAL),
    ("'2024-01-01 10:00'::TIMESTAMP_NS", "TIMESTAMP", TEMPORAL),
    ("TIMESTAMPTZ '2024-01-01 10:00+00'", "TIMESTAMP WITH TIME ZONE", TEMPORAL),
    ("INTERVAL 1 DAY", "INTERVAL", STRING),
    ("[1, 2]", "LIST", STRING),
    ("{'a': 1}", "STRUCT", STRING),
    ("MAP {'a': 1}", "MAP", STRING),
]


def test_every_result_type_code_maps(lake: str) -> None:
    with trinity_dbapi.connect(lake, read_only=True) as conn:
        select = ", ".join(f"{sql} AS c{i}" for i, (sql, _, _) in enumerate(RESULT_TYPES))
        description = conn.execute(f"SELECT {select}").description
    codes = [Spec.get_datatype(d[1]) for d in description]
    assert codes == [code for _, code, _ in RESULT_TYPES]
    assert [column_type(code)[1] for code in codes] == [g for _, _, g in RESULT_TYPES]  # type: ignore[index]


def test_times_of_day_and_intervals_are_no_time_columns(lake: str) -> None:
    """Time grains and time ranges do not apply: Superset must not offer them as time columns."""
    grain = Spec.get_time_grain_expressions()["P1D"]
    with trinity_dbapi.connect(lake, read_only=True) as conn:
        day = grain.format(col="DATE '2024-05-15'")
        assert conn.execute(f"SELECT {day}").fetchall() == [(datetime(2024, 5, 15),)]
        with pytest.raises(errors.ProgrammingError, match="date_trunc"):
            conn.execute("SELECT " + grain.format(col="TIME '12:00'"))
        for value in ("TIME '12:00'", "INTERVAL 1 DAY"):
            with pytest.raises(errors.ProgrammingError, match="Cannot compare"):
                conn.execute(f"SELECT {value} >= TIMESTAMP '2024-05-15 00:00:00'")
    assert Spec.convert_dttm("TIME(6)", datetime(2024, 5, 15)) is None


def test_every_type_code_the_driver_reports_maps() -> None:
    """The codes of dbapi/types.py's table, DuckDB's spellings and SQL type names."""
    codes = {code for _, code in dbapi_types._ARROW_TYPE_CODES if isinstance(code, str)}
    codes |= {"TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "UUID", "JSON", "BIGNUM"}
    codes |= {"TIMESTAMPTZ", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS", "DATETIME", "INTEGER[]"}
    unmapped = {code for code in codes if column_type(code) is None}
    assert unmapped == {"NULL"}
    assert column_type("timestamp with time zone") == column_type("TIMESTAMPTZ")
    assert column_type(None) is None
    assert column_type("GEOMETRY") is None  # unknown: Superset's defaults decide


def test_get_datatype() -> None:
    assert Spec.get_datatype("timestamp with time zone") == "TIMESTAMP WITH TIME ZONE"
    assert Spec.get_datatype("") is None
    assert Spec.get_datatype(7) is None


# -- partitions ---------------------------------------------------------------------------


def test_indexes_lead_with_the_partition_columns(database: _Database, lake: str) -> None:
    inspector = _inspector(lake)
    indexes = Spec.get_indexes(database, inspector, _Table("orders", "sales"))
    assert [(i["name"], i["column_names"], i["unique"]) for i in indexes] == [
        ("partition", ["day", "region"], False),
        ("by_id", ["id"], False),
    ]
    assert Spec.get_indexes(database, inspector, _Table("notes", "sales")) == []


def test_latest_partition(database: _Database) -> None:
    orders = _Table("orders", "sales")
    assert Spec.latest_partition(database, orders) == (["day", "region"], [date(2024, 1, 2), "us"])
    indexes = [{"name": "partition", "column_names": ["day", "region"], "unique": False}]
    queries = len(database.queries)
    assert Spec.latest_partition(database, orders, show_first=True, indexes=indexes) == (
        ["day", "region"],
        [date(2024, 1, 2), "us"],
    )
    assert len(database.queries) == queries + 1  # the partitions query, no reflection
    assert Spec.latest_partition(database, _Table("notes", "sales")) == ([], None)
    assert Spec.latest_partition(database, _Table("empty", "sales")) == (["day"], None)


def test_partition_query_lists_every_partition_latest_first(database: _Database) -> None:
    metadata = Spec.get_extra_table_metadata(database, _Table("orders", "sales"))
    partitions = metadata["partitions"]
    assert partitions["cols"] == ["day", "region"]
    assert partitions["latest"] == {"day": "2024-01-02", "region": "us"}
    with trinity_dbapi.connect(database.path, read_only=True) as conn:
        assert conn.execute(partitions["partitionQuery"]).fetchall() == [
            (date(2024, 1, 2), "us"),
            (date(2024, 1, 2), "eu"),
            (date(2024, 1, 1), "eu"),
        ]


def test_extra_table_metadata_of_other_tables(database: _Database) -> None:
    assert Spec.get_extra_table_metadata(database, _Table("notes", "sales")) == {}
    empty = Spec.get_extra_table_metadata(database, _Table("empty", "sales"))
    assert empty["partitions"]["cols"] == ["day"]
    assert empty["partitions"]["latest"] == {"day": None}


def _select_star(database: _Database, table: _Table, latest_partition: bool = True) -> str:
    """Superset's BaseEngineSpec.select_star, step for step (show_cols off, no indent)."""
    query = sa.select(sa.literal_column("*")).select_from(
        sa.text(f'"{table.schema}"."{table.table}"')
    )
    query = query.limit(100)
    if latest_partition:
        narrowed = Spec.where_latest_partition(database, table, query, columns=None)
        if narrowed is not None:
            query = narrowed
    engine = database._engine(table.schema)
    return str(query.compile(engine, compile_kwargs={"literal_binds": True}))


def test_select_star_reads_the_latest_partition(database: _Database) -> None:
    sql = _select_star(database, _Table("orders", "sales"))
    assert "WHERE day = DATE '2024-01-02' AND region = 'us'" in " ".join(sql.split())
    with trinity_dbapi.connect(database.path, read_only=True) as conn:
        assert sorted(conn.execute(sql).fetchall()) == [ORDERS[1], ORDERS[3]]
        everything = _select_star(database, _Table("orders", "sales"), latest_partition=False)
        assert sorted(conn.execute(everything).fetchall()) == ORDERS
        notes = _select_star(database, _Table("notes", "sales"))
        assert conn.execute(notes).fetchall() == [(1, "first")]
    assert Spec.where_latest_partition(database, _Table("empty", "sales"), sa.select(1)) is None


# -- connections and running queries ------------------------------------------------------


def test_per_schema_connections_through_sqlalchemy(database: _Database) -> None:
    for schema, sql, expected in [
        ("sales", "SELECT count(*) FROM orders", [(4,)]),
        ("sales", "SELECT note FROM notes", [("first",)]),
        ("system", "SELECT count(*) FROM tables WHERE namespace_name = 'sales'", [(3,)]),
    ]:
        engine = database._engine(schema)
        with engine.connect() as connection:
            assert connection.exec_driver_sql(sql).fetchall() == expected
        engine.dispose()


def test_fetch_data_limits_through_fetchmany(lake: str) -> None:
    with trinity_dbapi.connect(lake, read_only=True) as conn:
        cursor = conn.cursor()
        cursor.execute("SELECT id FROM sales.orders ORDER BY id")
        assert Spec.fetch_data(cursor, 3) == [(1,), (2,), (3,)]
        cursor.execute("SHOW TABLES IN sales")
        assert len(Spec.fetch_data(cursor, 2)) == 2
        cursor.execute("SELECT id FROM sales.orders ORDER BY id")
        assert Spec.fetch_data(cursor) == [(1,), (2,), (3,), (4,)]
        cursor.execute("BEGIN")  # no result set: no rows, not the driver's error
        assert cursor.description is None
        assert Spec.fetch_data(cursor) == []
        assert Spec.fetch_data(cursor, 5) == []
        cursor.execute("ROLLBACK")
        cursor.close()
        with pytest.raises(errors.InterfaceError):
            Spec.fetch_data(cursor)  # no Superset: the driver's own error


def test_exception_names_cover_every_error_class() -> None:
    names = exception_names()
    assert names[errors.NoSuchTableError] == "SupersetDBAPIProgrammingError"
    assert names[errors.QueryInterruptedError] == "SupersetDBAPIOperationalError"
    assert names[errors.StatementTimeoutError] == "SupersetDBAPIOperationalError"
    assert names[errors.InterfaceError] == "SupersetDBAPIConnectionError"
    assert names[errors.DataError] == "SupersetDBAPIDataError"
    assert names[errors.IntegrityError] == "SupersetDBAPIDatabaseError"
    assert names[errors.Error] == "SupersetDBAPIError"
    every = {
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, errors.Error)
    }
    assert every <= set(names)


def test_exception_mapping_with_superset_exceptions(
    monkeypatch: pytest.MonkeyPatch, lake: str
) -> None:
    """With Superset's exception module importable, fetch_data raises Superset's classes."""
    module = types.ModuleType("superset.db_engine_specs.exceptions")
    base = type("SupersetDBAPIError", (Exception,), {})
    for name in set(exception_names().values()) - {"SupersetDBAPIError"}:
        setattr(module, name, type(name, (base,), {}))
    module.SupersetDBAPIError = base  # type: ignore[attr-defined]
    for name in ("superset", "superset.db_engine_specs"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "superset.db_engine_specs.exceptions", module)
    mapping = Spec.get_dbapi_exception_mapping()
    assert mapping[errors.QueryInterruptedError] is module.SupersetDBAPIOperationalError  # type: ignore[attr-defined]
    assert mapping[errors.NoSuchTableError] is module.SupersetDBAPIProgrammingError  # type: ignore[attr-defined]
    with trinity_dbapi.connect(lake, read_only=True) as conn:
        cursor = conn.cursor()
        cursor.close()
        with pytest.raises(module.SupersetDBAPIConnectionError, match="closed"):  # type: ignore[attr-defined]
            Spec.fetch_data(cursor)


# -- cancel -------------------------------------------------------------------------------

LONG_QUERY = "SELECT count(*) FROM range(1000000000000000) a"


def test_cancel_query_interrupts_a_query_running_in_another_thread(database: _Database) -> None:
    assert Spec.has_implicit_cancel() is False
    assert Spec.has_query_id_before_execute is True
    engine = database._engine("sales")
    running = engine.raw_connection()  # as SQL Lab runs a query: a pooled raw connection
    cursor = running.cursor()
    cancel_query_id = Spec.get_cancel_query_id(cursor, query=None)
    assert cancel_query_id is not None and cancel_query_id.startswith(f"{os.getpid()}:")
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            Spec.fetch_data(cursor.execute(LONG_QUERY))
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 60
    stopper = engine.raw_connection()  # Superset cancels on a new connection
    cancelled = []
    while thread.is_alive() and time.monotonic() < deadline:
        cancelled.append(Spec.cancel_query(stopper.cursor(), None, cancel_query_id))
        thread.join(0.05)
    assert not thread.is_alive()
    assert all(cancelled) and cancelled
    assert isinstance(outcome.get("error"), errors.QueryInterruptedError)
    # The connection stays usable.
    cursor.execute("SELECT count(*) FROM orders")
    assert cursor.fetchall() == [(4,)]
    stopper.close()
    running.close()
    engine.dispose()


def test_cancel_query_of_what_is_not_there(lake: str) -> None:
    assert Spec.cancel_query(None, None, "no-such-id") is False
    assert Spec.cancel_query(None, None, f"{os.getpid()}:0123") is False
    assert Spec.cancel_query(None, None, f"{os.getpid() + 1}:0123") is False  # another process
    conn = trinity_dbapi.connect(lake, read_only=True)
    closed = Spec.get_cancel_query_id(conn.cursor(), None)
    conn.close()
    assert closed is not None and Spec.cancel_query(None, None, closed) is False
    conn = trinity_dbapi.connect(lake, read_only=True)
    dropped = Spec.get_cancel_query_id(conn.cursor(), None)
    assert dropped in cancel._CONNECTIONS
    del conn
    gc.collect()
    assert dropped not in cancel._CONNECTIONS
    assert Spec.get_cancel_query_id(object(), None) is None  # not a trinity_dbapi cursor


def test_docs_type_table_matches_the_mapping() -> None:
    """docs/superset.md's table of column types says what column_type answers."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "superset.md").read_text()
    table = text[text.index("| TrinityLake type (reflected name)") : text.index("`get_datatype(")]
    placeholders = {
        "(p, s)": "(10, 2)",
        "(p)": "(6)",
        "(n)": "(3)",
        "<...>": "<INT4>",
        "T[]": "INT4[]",
    }
    checked = 0
    for line in table.strip().splitlines()[2:]:
        names, codes, generic = (cell.strip() for cell in line.strip("|").split("|"))
        for name in re.findall(r"`([^`]+)`", f"{names} {codes}"):
            for placeholder, value in placeholders.items():
                name = name.replace(placeholder, value)
            name = f"TIMESTAMP{name}" if name.startswith("_") else name
            found = column_type(name)
            assert found is not None and found[1].name == generic.split(":")[0], name
            checked += 1
    assert checked > 40
