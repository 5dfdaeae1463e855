"""Apache Superset 6.1 with this package, end to end: REST API, SQL Lab, a chart, a browser.

A user's installation (tests/superset/e2e/venv.py: ``pip install
apache-superset==6.1.0 rich cachetools "flask-caching<2.4" <checkout>``) runs
a real Superset server on 127.0.0.1 over a lakehouse made by the driver. Every
answer Superset gives is compared with the same question asked through
``trinity_dbapi.connect``: the rows of SQL Lab queries (a time-travel one too),
the numbers of a time-series chart with a daily time grain, and the text
headless Chromium renders for SQL Lab and the chart. Screenshots go to
build/artifacts/.

Marked ``superset``: it runs in the full suite (as CI runs it) and is left out
with ``-m "not superset"``. It skips where the machine has no Python 3.11 for
Superset's virtualenv, and its browser test where Chromium is absent and
there is no apt-get to install it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from tests.superset.e2e import venv as venv_mod
from tests.superset.e2e.conftest import (
    FIRST_ORDERS,
    LATER_ORDERS,
    PASSWORD,
    USERNAME,
    Api,
    Lake,
    Server,
    as_decimal,
    dumps,
    epoch_ms,
)

pytestmark = pytest.mark.superset

ROOT = venv_mod.ROOT
ARTIFACTS = ROOT / "build" / "artifacts"
DOCS_IMAGE = ROOT / "docs" / "images" / "superset-chart.png"

#: The chart's aggregation, as a user would write it against the driver.
DAILY_TOTALS = (
    "SELECT date_trunc('day', ts) AS day, SUM(amount) AS total"
    " FROM sales.orders GROUP BY 1 ORDER BY 1"
)


#: Run by Superset's Python: the spec its entry point loads, and what the package runs on.
_PROBE = """
import json, importlib.metadata as md, sqlalchemy, sqlglot, trinity_dbapi
from superset.db_engine_specs.base import BaseEngineSpec
(ep,) = md.entry_points(group="superset.db_engine_specs", name="trinity")
spec = ep.load()
print(json.dumps({
    "spec": issubclass(spec, BaseEngineSpec) and spec.engine,
    "file": trinity_dbapi.__file__,
    "sqlalchemy": sqlalchemy.__version__,
    "sqlglot": sqlglot.__version__,
}))
"""


def _q(**fields: Any) -> str:
    """A ``q=`` argument in Rison, the encoding Superset's list endpoints take."""
    items = []
    for key, value in fields.items():
        text = "!t" if value is True else "!f" if value is False else str(value)
        items.append(f"{key}:{text}")
    return "(" + ",".join(items) + ")"


@pytest.fixture(scope="module")
def database_id(api: Api, lake: Lake) -> int:
    """The lakehouse added as a Superset database, after Superset tested the connection."""
    tested = api.post(
        "/api/v1/database/test_connection/",
        {"sqlalchemy_uri": lake.uri, "database_name": "lake"},
    )
    assert tested == {"message": "OK"}
    created = api.post(
        "/api/v1/database/",
        {
            "database_name": "lake",
            "sqlalchemy_uri": lake.uri,
            "expose_in_sqllab": True,
            "allow_dml": False,
        },
        expect=201,
    )
    assert created["result"]["driver"] == "trinity_dbapi"
    return int(created["id"])


def _sql_lab(
    api: Api, database_id: int, sql: str, schema: str = "sales", expect: int | None = 200
) -> Any:
    return api.post(
        "/api/v1/sqllab/execute/",
        {
            "database_id": database_id,
            "sql": sql,
            "schema": schema,
            "runAsync": False,
            "client_id": uuid.uuid4().hex[:11],  # unique per query, at most 11 characters
            "queryLimit": 1000,
            "tab": "e2e",
            "expand_data": True,
            "select_as_cta": False,
            "ctas_method": "TABLE",
            "tmp_table_name": "",
        },
        expect=expect,
    )


@pytest.fixture(scope="module")
def dataset_id(api: Api, database_id: int) -> int:
    created = api.post(
        "/api/v1/dataset/",
        {"database": database_id, "schema": "sales", "table_name": "orders"},
        expect=201,
    )
    return int(created["id"])


#: The chart: daily sums of ``amount`` over ``ts`` (TIMESTAMPTZ), grain P1D.
def _form_data(dataset_id: int) -> dict[str, Any]:
    return {
        "datasource": f"{dataset_id}__table",
        "viz_type": "echarts_timeseries_line",
        "x_axis": "ts",
        "time_grain_sqla": "P1D",
        "metrics": [{"expressionType": "SQL", "sqlExpression": "SUM(amount)", "label": "total"}],
        "groupby": [],
        # The x-axis in the filters, as Superset's explore page adds it (it asks otherwise).
        "adhoc_filters": [
            {
                "clause": "WHERE",
                "subject": "ts",
                "operator": "TEMPORAL_RANGE",
                "comparator": "No filter",
                "expressionType": "SIMPLE",
            }
        ],
        "row_limit": 10000,
        "time_range": "No filter",
    }


@pytest.fixture(scope="module")
def chart_id(api: Api, dataset_id: int) -> int:
    created = api.post(
        "/api/v1/chart/",
        {
            "slice_name": "Daily order total",
            "viz_type": "echarts_timeseries_line",
            "datasource_id": dataset_id,
            "datasource_type": "table",
            "params": dumps(_form_data(dataset_id)),
        },
        expect=201,
    )
    return int(created["id"])


def test_the_user_install_command_resolves_and_runs_this_checkout(
    superset_venv: venv_mod.SupersetVenv,
) -> None:
    # The dry run of the documented command resolved, and the virtualenv now
    # holds exactly what it chose (pip check passed in venv.prepare too).
    listed = subprocess.run(
        [str(superset_venv.python), "-m", "pip", "list", "--format", "json"],
        env=venv_mod.clean_env(),
        cwd=superset_venv.path,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    installed = {
        p["name"].lower().replace("_", "-"): p["version"] for p in json.loads(listed.stdout)
    }
    for item in superset_venv.resolved:
        name, version = item.split("==")
        assert installed[name.lower().replace("_", "-")] == version, item
    assert installed["apache-superset"] == "6.1.0"
    assert Version(installed["flask-caching"]) < Version("2.4")
    probe = subprocess.run(
        [str(superset_venv.python), "-c", _PROBE],
        env=venv_mod.clean_env(),
        cwd=superset_venv.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert probe.returncode == 0, probe.stderr[-4000:]
    facts = json.loads(probe.stdout.strip().splitlines()[-1])
    assert facts["spec"] == "trinity"  # a BaseEngineSpec, found through the entry point
    assert Path(facts["file"]).is_relative_to(superset_venv.path)  # installed, not the checkout
    # Superset 6.1's pins hold: the package runs on SQLAlchemy 1.4 and sqlglot 28 there.
    assert facts["sqlalchemy"].startswith("1.4.")
    assert facts["sqlglot"].startswith("28.")


def test_superset_offers_the_engine(api: Api) -> None:
    available = api.get("/api/v1/database/available/")["databases"]
    engines = {e["engine"]: e for e in available}
    assert engines["trinity"]["name"] == "TrinityLake"
    assert engines["trinity"]["sqlalchemy_uri_placeholder"].startswith("trinity:///")


def test_schemas_tables_and_columns(api: Api, database_id: int) -> None:
    schemas = api.get(f"/api/v1/database/{database_id}/schemas/?q={_q(force=True)}")["result"]
    assert "sales" in schemas
    tables = api.get(
        f"/api/v1/database/{database_id}/tables/?q={_q(schema_name='sales', force=True)}"
    )
    assert sorted((t["value"], t["type"]) for t in tables["result"]) == [
        ("orders", "table"),
        ("scratch", "table"),
    ]
    meta = api.get(f"/api/v1/database/{database_id}/table_metadata/?name=orders&schema=sales")
    assert [c["name"] for c in meta["columns"]] == ["id", "day", "ts", "amount", "customer"]
    types = {c["name"]: c["type"].upper() for c in meta["columns"]}
    assert types["day"] == "DATE"
    assert types["ts"].startswith("TIMESTAMP")
    assert types["amount"].startswith("DECIMAL")
    assert meta["comment"] == "One row per order"
    assert "FROM sales.orders" in meta["selectStar"]


def test_select_star_previews_the_latest_partition(api: Api, database_id: int, lake: Lake) -> None:
    # The table preview of a partitioned table reads its latest partition only,
    # as Superset's Presto and Trino specs do (where_latest_partition).
    sql = api.get(f"/api/v1/database/{database_id}/select_star/orders/sales/")["result"]
    assert "FROM sales.orders" in sql
    latest = "SELECT id FROM sales.orders WHERE day = (SELECT max(day) FROM sales.orders)"
    assert lake.query(f"SELECT id FROM ({sql}) ORDER BY id") == lake.query(latest) == [(4,)]


def test_the_partitions_of_a_table(api: Api, database_id: int) -> None:
    # Superset shows the partition columns and the latest partition of a table
    # (get_extra_table_metadata, as for Presto, Trino and Hive).
    extra = api.get(
        f"/api/v1/database/{database_id}/table_metadata/extra/?name=orders&schema=sales"
    )
    partitions = extra.get("partitions")
    assert partitions, f"no partitions in the table's extra metadata: {extra}"
    assert partitions["cols"] == ["day"]
    assert partitions["latest"] == {"day": "2026-03-03"}


def test_sql_lab_rows_equal_the_driver(api: Api, database_id: int, lake: Lake) -> None:
    sql = "SELECT id, day, ts, amount, customer FROM sales.orders ORDER BY id"
    answer = _sql_lab(api, database_id, sql)
    assert answer["status"] == "success"
    got = [
        (r["id"], r["day"], r["ts"], as_decimal(r["amount"]), r["customer"]) for r in answer["data"]
    ]
    expected = [
        (i, d.isoformat(), ts.isoformat(), amount, customer)
        for i, d, ts, amount, customer in lake.query(sql)
    ]
    assert got == expected
    assert len(got) == len(FIRST_ORDERS) + len(LATER_ORDERS)
    kinds = {c["column_name"]: c["is_dttm"] for c in answer["columns"]}
    assert kinds == {"id": False, "day": True, "ts": True, "amount": False, "customer": False}


def test_sql_lab_time_travel(api: Api, database_id: int, lake: Lake) -> None:
    version = lake.first_version
    qualified = f"SELECT count(*) AS n FROM sales.orders FOR SYSTEM_VERSION AS OF {version}"
    assert _sql_lab(api, database_id, qualified)["data"] == [{"n": len(FIRST_ORDERS)}]
    assert lake.query(qualified) == [(len(FIRST_ORDERS),)]
    # Unqualified: SQL Lab's schema selector sets the namespace the name resolves in.
    unqualified = f"SELECT id, amount FROM orders FOR SYSTEM_VERSION AS OF {version} ORDER BY id"
    rows = _sql_lab(api, database_id, unqualified, schema="sales")["data"]
    expected = lake.query(unqualified.replace("FROM orders", "FROM sales.orders"))
    assert [(r["id"], as_decimal(r["amount"])) for r in rows] == expected
    assert expected == [(1, Decimal("12.50")), (2, Decimal("7.25"))]


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE sales.scratch",
        "CREATE NAMESPACE intruder",
        "CREATE TABLE sales.intruder (x INT8)",
        "TRUNCATE TABLE sales.scratch",
        "INSERT INTO sales.scratch VALUES (1)",
    ],
)
def test_sql_lab_refuses_changes_on_a_database_without_dml(
    api: Api, database_id: int, lake: Lake, sql: str
) -> None:
    # The database was added with allow_dml false: Superset must refuse every
    # statement that changes the lakehouse, which it finds by parsing the SQL.
    before = lake.query("SELECT max(version) FROM system.versions")
    answer = _sql_lab(api, database_id, sql, expect=None)
    assert lake.query("SELECT max(version) FROM system.versions") == before  # nothing committed
    assert [e["error_type"] for e in answer.get("errors", [])] == ["DML_NOT_ALLOWED_ERROR"], answer


def test_sql_lab_changes_a_database_that_allows_dml(api: Api, lake: Lake) -> None:
    # The same lakehouse added a second time, with DML allowed: statements
    # without a result set run, and what they change is committed (in the
    # namespace lab, so the listing of sales stays as the other tests see it).
    created = api.post(
        "/api/v1/database/",
        {
            "database_name": "lake (DML allowed)",
            "sqlalchemy_uri": lake.uri,
            "expose_in_sqllab": True,
            "allow_dml": True,
        },
        expect=201,
    )
    writable = int(created["id"])
    for sql in (
        "CREATE TABLE lab.made_in_sql_lab (x INT8, note VARCHAR)",
        "INSERT INTO lab.made_in_sql_lab VALUES (1, 'one'), (2, 'two')",
    ):
        answer = _sql_lab(api, writable, sql)
        assert answer["status"] == "success", answer
    assert lake.query("SELECT x, note FROM lab.made_in_sql_lab ORDER BY x") == [
        (1, "one"),
        (2, "two"),
    ]
    rows = _sql_lab(api, writable, "SELECT sum(x) AS s FROM made_in_sql_lab", schema="lab")["data"]
    assert rows == [{"s": 3}]


def _chart_data(api: Api, dataset_id: int) -> list[dict[str, Any]]:
    answer = api.post(
        "/api/v1/chart/data",
        {
            "datasource": {"id": dataset_id, "type": "table"},
            "queries": [
                {
                    "columns": [
                        {
                            "columnType": "BASE_AXIS",
                            "sqlExpression": "ts",
                            "label": "ts",
                            "expressionType": "SQL",
                            "timeGrain": "P1D",
                        }
                    ],
                    "metrics": [
                        {"expressionType": "SQL", "sqlExpression": "SUM(amount)", "label": "total"}
                    ],
                    "time_range": "No filter",
                    "orderby": [["ts", True]],
                    "row_limit": 10000,
                }
            ],
            "result_type": "full",
            "result_format": "json",
        },
    )
    result = answer["result"][0]
    assert result["status"] == "success", result
    assert "date_trunc('day', ts)" in result["query"]  # the spec's P1D expression
    return list(result["data"])


def test_dataset_knows_its_time_columns(api: Api, dataset_id: int) -> None:
    dataset = api.get(f"/api/v1/dataset/{dataset_id}")["result"]
    kinds = {c["column_name"]: c["is_dttm"] for c in dataset["columns"]}
    assert kinds == {"id": False, "day": True, "ts": True, "amount": False, "customer": False}
    assert dataset["main_dttm_col"] in ("day", "ts")


def test_chart_data_equals_the_driver(api: Api, dataset_id: int, chart_id: int, lake: Lake) -> None:
    chart = api.get(f"/api/v1/chart/{chart_id}")["result"]
    assert json.loads(chart["params"])["time_grain_sqla"] == "P1D"
    data = _chart_data(api, dataset_id)
    got = [(int(row["ts"]), as_decimal(row["total"])) for row in data]
    expected = [(epoch_ms(day), total) for day, total in lake.query(DAILY_TOTALS)]
    assert got == expected
    assert [total for _, total in got] == [Decimal("19.75"), Decimal("30.00"), Decimal("0.75")]


def _copy_to_docs(screenshot: Path) -> None:
    """Refresh the docs' picture only when asked or missing: each run's pixels differ."""
    if os.environ.get("TRINITY_SUPERSET_DOCS_IMAGE") or not DOCS_IMAGE.exists():
        DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(screenshot, DOCS_IMAGE)


def test_browser_renders_sql_lab_and_the_chart(
    api: Api,
    superset: Server,
    superset_venv: venv_mod.SupersetVenv,
    chromium: dict[str, str],
    database_id: int,
    dataset_id: int,
    chart_id: int,
    lake: Lake,
) -> None:
    version = lake.first_version
    saved = api.post(
        "/api/v1/saved_query/",
        {
            "db_id": database_id,
            "schema": "sales",
            "label": f"Orders as of version {version}",
            "sql": (
                f"SELECT id, amount FROM sales.orders FOR SYSTEM_VERSION AS OF {version} ORDER BY id"
            ),
        },
        expect=201,
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shots = {name: ARTIFACTS / f"superset-{name}.png" for name in ("sqllab", "chart")}
    for shot in shots.values():
        shot.unlink(missing_ok=True)
    daily = lake.query(DAILY_TOTALS)
    job = {
        "base": superset.base,
        "username": USERNAME,
        "password": PASSWORD,
        **chromium,
        "timeout": 90,
        "pages": [
            {
                "name": "sqllab",
                "path": f"/sqllab/?savedQueryId={saved['id']}",
                "click": ["Run"],
                # Two rows as of that version, with the driver's amounts as Superset prints them.
                "expect": ["2 rows", "12.5", "7.25"],
                "screenshot": str(shots["sqllab"]),
            },
            {
                "name": "chart",
                "path": f"/explore/?slice_id={chart_id}",
                # The chart draws on a canvas; its Results pane shows the numbers as text.
                "click": ["Results"],
                "expect": [
                    "Daily order total",
                    "3 rows",
                    *(f"{day:%Y-%m-%d %H:%M:%S}" for day, _ in daily),
                    *(f"{total.normalize():f}" for _, total in daily),
                ],
                "screenshot": str(shots["chart"]),
            },
        ],
    }
    done = subprocess.run(
        [str(superset_venv.python), str(Path(__file__).with_name("browser.py"))],
        input=json.dumps(job),
        env=venv_mod.clean_env(SE_OFFLINE="true"),  # Selenium must not fetch drivers
        cwd=superset.home,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, f"browser.py failed:\n{done.stderr[-5000:]}\n{superset.log_tail()}"
    pages = json.loads(done.stdout)
    for name, page in pages.items():
        assert page["found"], (
            f"{name}: {page['missing']} not on the page {page['url']}:\n{page['text'][:3000]}"
        )
    for shot in shots.values():
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _copy_to_docs(shots["chart"])
