"""The Superset engine spec (trinity_dbapi.superset), through the hooks Superset calls.

Superset is not installed where the tests run (the module says why), so each
hook is called as Superset calls it, and the SQL it returns runs through the
DB-API driver over a real lakehouse: every time grain on a ``TIMESTAMP``, a
``TIMESTAMPTZ``, a ``DATE`` and two epoch columns, the filter literals in
``WHERE`` clauses, the namespace hooks and the entry point. Expected buckets
come from :func:`bucket`, an independent Python computation, and from tables
written out by hand.
"""

from __future__ import annotations

import configparser
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.superset import (
    SUPERSET_INSTALLED,
    TIME_GRAIN_EXPRESSIONS,
    TrinityEngineSpec,
)

ROOT = Path(__file__).resolve().parents[2]
UTC = timezone.utc
EPOCH = datetime(1970, 1, 1)

#: Every value of ``superset.constants.TimeGrain`` (apache/superset), by member name.
SUPERSET_TIME_GRAINS = {
    "SECOND": "PT1S",
    "FIVE_SECONDS": "PT5S",
    "THIRTY_SECONDS": "PT30S",
    "MINUTE": "PT1M",
    "FIVE_MINUTES": "PT5M",
    "TEN_MINUTES": "PT10M",
    "FIFTEEN_MINUTES": "PT15M",
    "THIRTY_MINUTES": "PT30M",
    "HALF_HOUR": "PT0.5H",
    "HOUR": "PT1H",
    "SIX_HOURS": "PT6H",
    "DAY": "P1D",
    "WEEK": "P1W",
    "WEEK_STARTING_SUNDAY": "1969-12-28T00:00:00Z/P1W",
    "WEEK_STARTING_MONDAY": "1969-12-29T00:00:00Z/P1W",
    "WEEK_ENDING_SATURDAY": "P1W/1970-01-03T00:00:00Z",
    "WEEK_ENDING_SUNDAY": "P1W/1970-01-04T00:00:00Z",
    "MONTH": "P1M",
    "QUARTER": "P3M",
    "QUARTER_YEAR": "P0.25Y",
    "YEAR": "P1Y",
}
STARTING_SUNDAY = SUPERSET_TIME_GRAINS["WEEK_STARTING_SUNDAY"]
STARTING_MONDAY = SUPERSET_TIME_GRAINS["WEEK_STARTING_MONDAY"]
ENDING_SATURDAY = SUPERSET_TIME_GRAINS["WEEK_ENDING_SATURDAY"]
ENDING_SUNDAY = SUPERSET_TIME_GRAINS["WEEK_ENDING_SUNDAY"]

#: The rows of ns.events (one more row is all NULL), in ``ts`` order.
MOMENTS = [
    datetime(1969, 7, 20, 20, 17, 40),  # a Sunday before the epoch: negative epochs
    datetime(2021, 1, 2, 6, 14, 59, 500000),  # a Saturday whose ISO week starts in 2020
    datetime(2024, 2, 29, 11, 59, 59, 999999),  # a leap day, a Thursday
    datetime(2024, 5, 15, 13, 47, 23, 654321),  # a Wednesday
    datetime(2024, 5, 18),  # a Saturday, at midnight
    datetime(2024, 5, 19, 23, 59, 59, 999999),  # a Sunday, its last microsecond
]

#: Seconds in a bucket of each grain shorter than a week (all divide a day).
_WIDTHS = {
    "PT1S": 1,
    "PT5S": 5,
    "PT30S": 30,
    "PT1M": 60,
    "PT5M": 300,
    "PT10M": 600,
    "PT15M": 900,
    "PT30M": 1800,
    "PT0.5H": 1800,
    "PT1H": 3600,
    "PT6H": 6 * 3600,
    "P1D": 86400,
}


def bucket(value: datetime, grain: str | None) -> datetime:
    """Where the bucket of ``grain`` holding ``value`` starts, computed in Python."""
    midnight = datetime.combine(value.date(), time())
    monday = midnight - timedelta(days=value.weekday())
    sunday = midnight - timedelta(days=(value.weekday() + 1) % 7)
    if grain is None:
        return value
    if grain in _WIDTHS:
        width = timedelta(seconds=_WIDTHS[grain])
        return midnight + (value - midnight) // width * width
    weeks = {
        "P1W": monday,
        STARTING_MONDAY: monday,
        STARTING_SUNDAY: sunday,
        ENDING_SATURDAY: sunday + timedelta(days=6),
        ENDING_SUNDAY: monday + timedelta(days=6),
    }
    if grain in weeks:
        return weeks[grain]
    first_of_quarter = midnight.replace(month=(value.month - 1) // 3 * 3 + 1, day=1)
    return {
        "P1M": midnight.replace(day=1),
        "P3M": first_of_quarter,
        "P0.25Y": first_of_quarter,
        "P1Y": midnight.replace(month=1, day=1),
    }[grain]


def _micros(value: datetime) -> int:
    return (value - EPOCH) // timedelta(microseconds=1)


def _epoch_s(value: datetime) -> int:
    return _micros(value) // 1_000_000


def _epoch_ms(value: datetime) -> int:
    return _micros(value) // 1000


@pytest.fixture(scope="module")
def conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A lakehouse with ns.events: each moment as ts, tstz (UTC), d, epoch_s, epoch_ms."""
    path = tmp_path_factory.mktemp("superset") / "lake"
    connection = trinity_dbapi.connect(str(path), autocommit=True)
    connection.execute("CREATE NAMESPACE ns")
    connection.execute(
        "CREATE TABLE ns.events (ts TIMESTAMP, tstz TIMESTAMPTZ, d DATE, epoch_s INT8,"
        " epoch_ms INT8)"
    )
    rows = [
        f"(TIMESTAMP '{m}', TIMESTAMPTZ '{m}+00:00', DATE '{m.date()}', {_epoch_s(m)},"
        f" {_epoch_ms(m)})"
        for m in MOMENTS
    ]
    connection.execute(
        f"INSERT INTO ns.events VALUES {', '.join(rows)}, (NULL, NULL, NULL, NULL, NULL)"
    )
    yield connection
    connection.close()


def _select(conn: Any, expression: str, where: str = "") -> list[Any]:
    """The values of ``expression`` over ns.events, in ``ts`` order (the NULL row last)."""
    sql = f"SELECT {expression} FROM ns.events {where} ORDER BY ts NULLS LAST"
    return [row[0] for row in conn.execute(sql).fetchall()]


def _grain_expression(grain: str | None, column: str, pdf: str | None = None) -> str:
    """The SQL Superset's ``BaseEngineSpec.get_timestamp_expr`` builds from the spec's hooks."""
    expression = TrinityEngineSpec.get_time_grain_expressions()[grain]
    if pdf == "epoch_s":
        expression = expression.replace("{col}", TrinityEngineSpec.epoch_to_dttm())
    elif pdf == "epoch_ms":
        expression = expression.replace("{col}", TrinityEngineSpec.epoch_ms_to_dttm())
    return expression.replace("{col}", column)


GRAINS = list(TIME_GRAIN_EXPRESSIONS)


def _grain_id(grain: str | None) -> str:
    return "none" if grain is None else grain


# -- time grains ---------------------------------------------------------------------


def test_every_superset_time_grain_has_an_expression() -> None:
    grains = TrinityEngineSpec.get_time_grain_expressions()
    assert set(grains) == {None, *SUPERSET_TIME_GRAINS.values()}
    assert grains[None] == "{col}"
    assert all(expression.count("{col}") >= 1 for expression in grains.values())
    # A copy each time, as Superset's own hook returns.
    grains["PT1S"] = "changed"
    assert TrinityEngineSpec.get_time_grain_expressions()["PT1S"] == "date_trunc('second', {col})"


@pytest.mark.parametrize("grain", GRAINS, ids=_grain_id)
def test_grain_on_timestamp(conn: Any, grain: str | None) -> None:
    expected = [bucket(moment, grain) for moment in MOMENTS]
    assert _select(conn, _grain_expression(grain, "ts")) == [*expected, None]


@pytest.mark.parametrize("grain", GRAINS, ids=_grain_id)
def test_grain_on_timestamptz(conn: Any, grain: str | None) -> None:
    results = _select(conn, _grain_expression(grain, "tstz"))
    expected = [bucket(moment, grain).replace(tzinfo=UTC) for moment in MOMENTS]
    assert results == [*expected, None]
    assert all(value.utcoffset() == timedelta(0) for value in results[:-1])


@pytest.mark.parametrize("grain", GRAINS, ids=_grain_id)
def test_grain_on_date(conn: Any, grain: str | None) -> None:
    if grain is None:
        expected: list[date | datetime] = [moment.date() for moment in MOMENTS]
    else:  # DuckDB's date_trunc of a DATE is a TIMESTAMP
        expected = [bucket(datetime.combine(moment.date(), time()), grain) for moment in MOMENTS]
    assert _select(conn, _grain_expression(grain, "d")) == [*expected, None]


@pytest.mark.parametrize("grain", GRAINS, ids=_grain_id)
@pytest.mark.parametrize("pdf", ["epoch_s", "epoch_ms"])
def test_grain_on_epoch_column(conn: Any, grain: str | None, pdf: str) -> None:
    if pdf == "epoch_s":
        moments = [EPOCH + timedelta(seconds=_epoch_s(moment)) for moment in MOMENTS]
    else:
        moments = [EPOCH + timedelta(milliseconds=_epoch_ms(moment)) for moment in MOMENTS]
    expected = [bucket(moment, grain) for moment in moments]
    assert _select(conn, _grain_expression(grain, pdf, pdf)) == [*expected, None]


#: Each grain's bucket of the Wednesday 2024-05-15 13:47:23.654321, written out.
WEDNESDAY = {
    None: datetime(2024, 5, 15, 13, 47, 23, 654321),
    "PT1S": datetime(2024, 5, 15, 13, 47, 23),
    "PT5S": datetime(2024, 5, 15, 13, 47, 20),
    "PT30S": datetime(2024, 5, 15, 13, 47),
    "PT1M": datetime(2024, 5, 15, 13, 47),
    "PT5M": datetime(2024, 5, 15, 13, 45),
    "PT10M": datetime(2024, 5, 15, 13, 40),
    "PT15M": datetime(2024, 5, 15, 13, 45),
    "PT30M": datetime(2024, 5, 15, 13, 30),
    "PT0.5H": datetime(2024, 5, 15, 13, 30),
    "PT1H": datetime(2024, 5, 15, 13),
    "PT6H": datetime(2024, 5, 15, 12),
    "P1D": datetime(2024, 5, 15),
    "P1W": datetime(2024, 5, 13),
    STARTING_SUNDAY: datetime(2024, 5, 12),
    STARTING_MONDAY: datetime(2024, 5, 13),
    ENDING_SATURDAY: datetime(2024, 5, 18),
    ENDING_SUNDAY: datetime(2024, 5, 19),
    "P1M": datetime(2024, 5, 1),
    "P3M": datetime(2024, 4, 1),
    "P0.25Y": datetime(2024, 4, 1),
    "P1Y": datetime(2024, 1, 1),
}

#: The week buckets of every row: (starting Sunday, starting Monday, ending
#: Saturday, ending Sunday), written out.
WEEKS = {
    date(1969, 7, 20): ("1969-07-20", "1969-07-14", "1969-07-26", "1969-07-20"),
    date(2021, 1, 2): ("2020-12-27", "2020-12-28", "2021-01-02", "2021-01-03"),
    date(2024, 2, 29): ("2024-02-25", "2024-02-26", "2024-03-02", "2024-03-03"),
    date(2024, 5, 15): ("2024-05-12", "2024-05-13", "2024-05-18", "2024-05-19"),
    date(2024, 5, 18): ("2024-05-12", "2024-05-13", "2024-05-18", "2024-05-19"),
    date(2024, 5, 19): ("2024-05-19", "2024-05-13", "2024-05-25", "2024-05-19"),
}


def test_every_grain_of_one_timestamp_written_out(conn: Any) -> None:
    assert set(WEDNESDAY) == set(GRAINS)
    where = "WHERE ts = TIMESTAMP '2024-05-15 13:47:23.654321'"
    results = {grain: _select(conn, _grain_expression(grain, "ts"), where) for grain in GRAINS}
    assert results == {grain: [value] for grain, value in WEDNESDAY.items()}


def test_week_grains_written_out(conn: Any) -> None:
    assert sorted(WEEKS) == [moment.date() for moment in MOMENTS]
    grains = [STARTING_SUNDAY, STARTING_MONDAY, ENDING_SATURDAY, ENDING_SUNDAY]
    columns = [_select(conn, f"CAST({_grain_expression(g, 'd')} AS DATE)") for g in grains]
    found = {day: tuple(str(value) for value in row) for day, *row in zip(sorted(WEEKS), *columns)}
    assert found == WEEKS
    # The "ending" weeks end on the day they name, the "starting" ones start on it.
    for starting_sunday, starting_monday, ending_saturday, ending_sunday in WEEKS.values():
        assert date.fromisoformat(starting_sunday).weekday() == 6
        assert date.fromisoformat(starting_monday).weekday() == 0
        assert date.fromisoformat(ending_saturday).weekday() == 5
        assert date.fromisoformat(ending_sunday).weekday() == 6


# -- epochs ----------------------------------------------------------------------------


def test_epoch_columns_convert_to_utc_timestamps(conn: Any) -> None:
    seconds = TrinityEngineSpec.epoch_to_dttm().replace("{col}", "epoch_s")
    millis = TrinityEngineSpec.epoch_ms_to_dttm().replace("{col}", "epoch_ms")
    assert _select(conn, seconds) == [
        datetime(1969, 7, 20, 20, 17, 40),
        datetime(2021, 1, 2, 6, 14, 59),
        datetime(2024, 2, 29, 11, 59, 59),
        datetime(2024, 5, 15, 13, 47, 23),
        datetime(2024, 5, 18),
        datetime(2024, 5, 19, 23, 59, 59),
        None,
    ]
    assert _select(conn, millis) == [
        datetime(1969, 7, 20, 20, 17, 40),
        datetime(2021, 1, 2, 6, 14, 59, 500000),
        datetime(2024, 2, 29, 11, 59, 59, 999000),
        datetime(2024, 5, 15, 13, 47, 23, 654000),
        datetime(2024, 5, 18),
        datetime(2024, 5, 19, 23, 59, 59, 999000),
        None,
    ]


@pytest.mark.parametrize(
    ("value", "hook", "expected"),
    [
        # An INT4 column: no overflow (col * 1000000 would overflow INT4).
        ("CAST(1715780843 AS INT4)", "epoch_to_dttm", datetime(2024, 5, 15, 13, 47, 23)),
        ("CAST(-1 AS INT4)", "epoch_to_dttm", datetime(1969, 12, 31, 23, 59, 59)),
        # Fractions of DOUBLE and DECIMAL columns are kept, to the microsecond.
        ("CAST(1.5 AS DOUBLE)", "epoch_to_dttm", datetime(1970, 1, 1, 0, 0, 1, 500000)),
        ("CAST(1.25 AS DECIMAL(10, 2))", "epoch_to_dttm", datetime(1970, 1, 1, 0, 0, 1, 250000)),
        (
            "CAST(1715780843654.5 AS DOUBLE)",
            "epoch_ms_to_dttm",
            datetime(2024, 5, 15, 13, 47, 23, 654500),
        ),
        ("CAST(-1 AS INT4)", "epoch_ms_to_dttm", datetime(1969, 12, 31, 23, 59, 59, 999000)),
    ],
)
def test_epoch_of_other_numeric_types(conn: Any, value: str, hook: str, expected: datetime) -> None:
    expression = getattr(TrinityEngineSpec, hook)().replace("{col}", value)
    assert conn.execute(f"SELECT {expression}").fetchall() == [(expected,)]


# -- filter literals ---------------------------------------------------------------------

STAMP = datetime(2024, 5, 15, 13, 47, 23, 654321)
PLUS_TWO = timezone(timedelta(hours=2))


@pytest.mark.parametrize(
    ("target_type", "dttm", "literal"),
    [
        ("DATE", STAMP, "DATE '2024-05-15'"),
        ("date", STAMP, "DATE '2024-05-15'"),
        ("DATE", datetime(5, 1, 2), "DATE '0005-01-02'"),
        ("TIMESTAMP", STAMP, "TIMESTAMP '2024-05-15 13:47:23.654321'"),
        ("TIMESTAMP(6)", STAMP, "TIMESTAMP '2024-05-15 13:47:23.654321'"),
        ("timestamp(3)", datetime(2024, 5, 15), "TIMESTAMP '2024-05-15 00:00:00.000000'"),
        ("TIMESTAMP WITHOUT TIME ZONE", STAMP, "TIMESTAMP '2024-05-15 13:47:23.654321'"),
        ("DATETIME", STAMP, "TIMESTAMP '2024-05-15 13:47:23.654321'"),
        ("TIMESTAMP_MS", STAMP, "TIMESTAMP '2024-05-15 13:47:23.654321'"),
        ("TIMESTAMP_NS", STAMP, "TIMESTAMP '2024-05-15 13:47:23.654321'"),
        ("TIMESTAMPTZ", STAMP, "TIMESTAMPTZ '2024-05-15 13:47:23.654321+00:00'"),
        ("TIMESTAMPTZ(6)", STAMP, "TIMESTAMPTZ '2024-05-15 13:47:23.654321+00:00'"),
        ("TIMESTAMP WITH TIME ZONE", STAMP, "TIMESTAMPTZ '2024-05-15 13:47:23.654321+00:00'"),
        ("timestamp(6)  with time zone", STAMP, "TIMESTAMPTZ '2024-05-15 13:47:23.654321+00:00'"),
        # Aware values: the same instant in UTC; a DATE takes the date as written.
        (
            "TIMESTAMPTZ",
            STAMP.replace(hour=15, tzinfo=PLUS_TWO),
            "TIMESTAMPTZ '2024-05-15 13:47:23.654321+00:00'",
        ),
        (
            "TIMESTAMP",
            STAMP.replace(hour=15, tzinfo=PLUS_TWO),
            "TIMESTAMP '2024-05-15 13:47:23.654321'",
        ),
        ("DATE", datetime(2024, 5, 15, 1, tzinfo=PLUS_TWO), "DATE '2024-05-15'"),
    ],
)
def test_convert_dttm_literals(target_type: str, dttm: datetime, literal: str) -> None:
    assert TrinityEngineSpec.convert_dttm(target_type, dttm) == literal
    assert TrinityEngineSpec.convert_dttm(target_type, dttm, db_extra={}) == literal


@pytest.mark.parametrize(
    "target_type", ["VARCHAR", "INT8", "BIGINT", "TIME", "TIMETZ", "INTERVAL", "DOUBLE", ""]
)
def test_convert_dttm_of_other_types_is_none(target_type: str) -> None:
    assert TrinityEngineSpec.convert_dttm(target_type, STAMP) is None


@pytest.mark.parametrize(
    ("column", "target_type", "zone"),
    [
        ("ts", "TIMESTAMP", None),
        ("ts", "TIMESTAMP(6)", None),
        ("tstz", "TIMESTAMP WITH TIME ZONE", None),
        ("tstz", "TIMESTAMPTZ(6)", None),
        ("tstz", "TIMESTAMPTZ", PLUS_TWO),
        ("d", "DATE", None),
    ],
)
def test_convert_dttm_literals_filter_rows(
    conn: Any, column: str, target_type: str, zone: timezone | None
) -> None:
    """Superset's time range filter: ``col >= start AND col < end``."""

    def literal(value: datetime) -> str:
        if zone is not None:
            value = value.replace(tzinfo=UTC).astimezone(zone)
        result = TrinityEngineSpec.convert_dttm(target_type, value)
        assert result is not None
        return result

    # The start is the leap-day row to the microsecond; the end, the Saturday row.
    start, end = literal(MOMENTS[2]), literal(MOMENTS[4])
    where = f"WHERE {column} >= {start} AND {column} < {end}"
    assert _select(conn, "ts", where) == [MOMENTS[2], MOMENTS[3]]
    exact = f"WHERE {column} = {literal(MOMENTS[3])}"
    assert _select(conn, "ts", exact) == [MOMENTS[3]]
    if column != "d":  # a microsecond later matches nothing
        later = literal(MOMENTS[3] + timedelta(microseconds=1))
        assert _select(conn, "ts", f"WHERE {column} = {later}") == []


# -- what the spec declares ------------------------------------------------------------


def test_declarations() -> None:
    spec = TrinityEngineSpec
    assert spec.engine == "trinity"
    assert spec.engine_name == "TrinityLake"
    assert spec.default_driver == "trinity_dbapi"
    assert set(spec.drivers) == {"trinity_dbapi"}
    assert spec.sqlalchemy_uri_placeholder == "trinity:////absolute/path/to/lakehouse"
    flags = {
        name: getattr(spec, name)
        for name in (
            "allows_joins",
            "allows_subqueries",
            "allows_alias_in_select",
            "allows_alias_in_orderby",
            "allows_sql_comments",
            "supports_dynamic_schema",
            "supports_catalog",
            "supports_dynamic_catalog",
            "supports_file_upload",
            "disable_ssh_tunneling",
        )
    }
    assert flags == {
        "allows_joins": True,
        "allows_subqueries": True,
        "allows_alias_in_select": True,
        "allows_alias_in_orderby": True,
        "allows_sql_comments": True,
        "supports_dynamic_schema": True,
        "supports_catalog": False,
        "supports_dynamic_catalog": False,
        "supports_file_upload": False,
        "disable_ssh_tunneling": True,
    }


def test_what_the_flags_promise_holds(conn: Any) -> None:
    """Joins, subqueries, aliases in ORDER BY and SQL comments, as Superset writes them."""
    sql = (
        "/* superset */ SELECT date_trunc('year', a.ts) AS year, count(*) AS n -- per year\n"
        "FROM ns.events a JOIN (SELECT ts FROM ns.events WHERE d IS NOT NULL) b ON a.ts = b.ts\n"
        "GROUP BY year ORDER BY n DESC, year"
    )
    assert conn.execute(sql).fetchall() == [
        (datetime(2024, 1, 1), 4),
        (datetime(1969, 1, 1), 1),
        (datetime(2021, 1, 1), 1),
    ]


def test_adjust_engine_params_sets_the_namespace(tmp_path: Path) -> None:
    uri = object()  # a SQLAlchemy URL in Superset; returned as it is
    assert TrinityEngineSpec.adjust_engine_params(uri, {"read_only": True}) == (
        uri,
        {"read_only": True},
    )
    connect_args = {"autocommit": True}
    same, adjusted = TrinityEngineSpec.adjust_engine_params(uri, connect_args, schema="ns")
    assert same is uri
    assert adjusted == {"autocommit": True, "namespace": "ns"}
    # In place: Superset creates the engine with the dict it passed, not the returned one.
    assert adjusted is connect_args
    # The connect arguments open a connection whose unqualified names are in ns.
    with trinity_dbapi.connect(str(tmp_path / "lake"), **adjusted) as connection:
        connection.execute("CREATE NAMESPACE ns")
        connection.execute("CREATE TABLE ns.t (x INT4)")
        connection.execute("INSERT INTO t VALUES (7)")
        assert connection.execute("SELECT x FROM t").fetchall() == [(7,)]
        assert connection.execute("SELECT x FROM ns.t").fetchall() == [(7,)]


def test_get_schema_from_engine_params() -> None:
    sqlalchemy = pytest.importorskip("sqlalchemy")
    url = sqlalchemy.engine.make_url("trinity:////srv/lake?namespace=sales")
    plain = sqlalchemy.engine.make_url("trinity:////srv/lake")
    spec = TrinityEngineSpec
    assert spec.get_schema_from_engine_params(url, {}) == "sales"
    assert spec.get_schema_from_engine_params(url, {"namespace": "ops"}) == "ops"
    assert spec.get_schema_from_engine_params(plain, {"namespace": "ops"}) == "ops"
    assert spec.get_schema_from_engine_params(plain, {}) is None


class _Database:
    """The one method of Superset's ``Database`` the hook calls: ``get_df(sql)``."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.queries: list[str] = []

    def get_df(self, sql: str) -> Any:
        import pandas as pd

        self.queries.append(sql)
        cursor = self.connection.execute(sql)
        return pd.DataFrame(cursor.fetchall(), columns=[d[0] for d in cursor.description])


def test_get_function_names(conn: Any) -> None:
    pytest.importorskip("pandas")
    database = _Database(conn)
    names = TrinityEngineSpec.get_function_names(database)
    assert len(database.queries) == 1
    assert names == sorted(set(names))
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", name) for name in names)
    # Every function the time grains and epochs use, and common ones, are there.
    used = set(re.findall(r"([a-z_]+)\(", " ".join(TIME_GRAIN_EXPRESSIONS.values())))
    used |= {"to_milliseconds", "count", "sum", "avg", "time_bucket", "strftime"}
    assert used <= set(names)
    assert "%" not in names


# -- Superset finds the spec, and only it imports Superset ----------------------------------


def test_entry_point_declared_in_setup_cfg() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    declared = config["options.entry_points"]["superset.db_engine_specs"].split("\n")
    assert [line.strip() for line in declared if line.strip()] == [
        "trinity = trinity_dbapi.superset:TrinityEngineSpec"
    ]


def test_entry_point_installed() -> None:
    found = importlib.metadata.entry_points(group="superset.db_engine_specs")
    (entry,) = [entry for entry in found if entry.name == "trinity"]
    assert entry.value == "trinity_dbapi.superset:TrinityEngineSpec"
    assert entry.load() is TrinityEngineSpec


def _python(code: str, **env: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; return the lines it prints."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
        cwd=ROOT,
    )
    return result.stdout.splitlines()


def test_importing_the_package_imports_neither_the_spec_nor_superset() -> None:
    printed = _python(
        """
        import sys
        import trinity_dbapi
        print("trinity_dbapi.superset" in sys.modules, "superset" in sys.modules)
        import trinity_dbapi.superset as spec
        print(spec.SUPERSET_INSTALLED, spec.TrinityEngineSpec.__bases__)
        """
    )
    installed = importlib.util.find_spec("superset") is not None
    assert printed[0] == "False False"
    if not installed:
        assert not SUPERSET_INSTALLED
        assert printed[1] == "False (<class 'object'>,)"


def test_subclasses_superset_base_when_superset_is_importable(tmp_path: Path) -> None:
    """With a stand-in ``superset`` package first on the path, its BaseEngineSpec is the base."""
    base = tmp_path / "superset" / "db_engine_specs"
    base.mkdir(parents=True)
    (tmp_path / "superset" / "__init__.py").write_text("")
    (base / "__init__.py").write_text("")
    (base / "base.py").write_text(
        "class BaseEngineSpec:\n"
        "    @classmethod\n"
        "    def get_time_grain_expressions(cls):\n"
        "        return {'from': 'superset'}\n"
    )
    printed = _python(
        """
        from superset.db_engine_specs.base import BaseEngineSpec
        from trinity_dbapi.superset import SUPERSET_INSTALLED, TrinityEngineSpec
        print(SUPERSET_INSTALLED, TrinityEngineSpec.__bases__ == (BaseEngineSpec,))
        print(TrinityEngineSpec.get_time_grain_expressions())
        print(TrinityEngineSpec.convert_dttm("DATE", __import__("datetime").datetime(2024, 5, 15)))
        """,
        PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]),
    )
    # Superset's own get_time_grain_expressions (config add-ons, deny list) is used.
    assert printed == ["True True", "{'from': 'superset'}", "DATE '2024-05-15'"]


# -- docs/superset.md ----------------------------------------------------------------------

_EXAMPLE = re.compile(r"```python\n(.*?)```(?:\n\n```text\n(.*?)```)?", re.DOTALL)


def test_docs_page_examples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "superset.md").read_text()
    examples = _EXAMPLE.findall(text)
    assert examples
    scope: dict[str, object] = {}
    for code, expected in examples:
        exec(code.replace("/tmp/superset-demo", str(tmp_path)), scope)  # noqa: S102
        assert capsys.readouterr().out == expected, code.splitlines()[0]


def test_docs_page_grain_table_matches_the_spec() -> None:
    """The page's table of grains is the spec's table, row for row."""
    text = (ROOT / "docs" / "superset.md").read_text()
    rows = re.findall(r"^\| `([^`]*)` \| [^|]* \| `(.*)` \|$", text, re.MULTILINE)
    documented = {(None if grain == "None" else grain): sql for grain, sql in rows}
    assert documented == dict(TIME_GRAIN_EXPRESSIONS)
