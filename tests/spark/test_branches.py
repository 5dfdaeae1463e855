"""The ``branch`` option: reads see a branch's tables, writes commit to it and never touch main."""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

from pyspark.errors import AnalysisException

import trinity_dbapi
from tests.spark.helpers import Lake
from trinity_dbapi.spark.options import parse_options

D1, D2, D3 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2), datetime.date(2024, 1, 3)
FRAME = "id long, day date"
DEV = {"branch": "dev"}


@pytest.fixture
def branched(lake: Lake) -> Lake:
    """Main: s.t (id, day) partitioned by day with one row, s.old. Branch dev (from main):
    one more row in s.t, s.only_dev, and s.old dropped."""
    lake.execute("CREATE TABLE s.t (id INT8, day DATE) PARTITIONED BY (day)")
    lake.execute("INSERT INTO s.t VALUES (1, DATE '2024-01-01')")
    lake.execute("CREATE TABLE s.old (id INT8)")
    lake.execute("INSERT INTO s.old VALUES (5)")
    lake.execute("CREATE BRANCH dev")
    lake.execute("USE BRANCH dev")
    lake.execute("INSERT INTO s.t VALUES (2, DATE '2024-01-02')")
    lake.execute("CREATE TABLE s.only_dev (note VARCHAR)")
    lake.execute("INSERT INTO s.only_dev VALUES ('dev')")
    lake.execute("DROP TABLE s.old")
    lake.execute("USE BRANCH main")
    return lake


def _derived(root: Path) -> dict[str, bytes]:
    """What a Kartothek reader trusts: each dataset's main metadata file and _common_metadata."""
    found = [*root.glob("*.by-dataset-metadata.json"), *root.glob("*/table/_common_metadata")]
    return {str(path.relative_to(root)): path.read_bytes() for path in found}


def _main_state(lake: Lake) -> tuple[int, list[tuple[object, ...]], list[tuple[object, ...]]]:
    return (
        lake.version(),
        lake.rows("SELECT * FROM s.t ORDER BY id"),
        lake.rows("SELECT table_name FROM system.tables WHERE namespace_name = 's' ORDER BY 1"),
    )


def test_reads_of_a_branch_read_its_tables(branched: Lake) -> None:
    rows = sorted(tuple(r) for r in branched.read("s.t", DEV).collect())
    assert rows == [(1, D1), (2, D2)]
    assert [tuple(r) for r in branched.read("s.t").collect()] == [(1, D1)]
    assert [tuple(r) for r in branched.read("s.only_dev", DEV).collect()] == [("dev",)]
    assert [tuple(r) for r in branched.read("s.t", {"branch": "main"}).collect()] == [(1, D1)]
    # A table dropped on the branch is gone there, and only there.
    with pytest.raises(AnalysisException, match=r"table 's\.old' does not exist"):
        branched.read("s.old", DEV).collect()
    assert [tuple(r) for r in branched.read("s.old").collect()] == [(5,)]
    # Pruned reads plan on the branch's files too.
    pruned = branched.read("s.t", DEV).where("day = DATE '2024-01-02'").collect()
    assert [tuple(r) for r in pruned] == [(2, D2)]
    # versionAsOf counts along the branch: its head H dropped s.old, H - 1 filled
    # s.only_dev, H - 2 created it, H - 3 added the row with id 2 to s.t.
    with trinity_dbapi.connect(branched.uri, branch="dev") as dev:
        head = dev.execute("SELECT max(version) FROM system.versions").fetchone()[0]
    at = {**DEV, "versionAsOf": str(head - 2)}
    assert branched.read("s.only_dev", at).count() == 0
    assert sorted(tuple(r) for r in branched.read("s.t", at).collect()) == [(1, D1), (2, D2)]
    # Catalog tables describe the branch.
    tables = branched.read("system.tables", DEV).where("namespace_name = 's'").select("table_name")
    assert sorted(r[0] for r in tables.collect()) == ["only_dev", "t"]


def test_writes_commit_to_the_branch_and_never_touch_main(branched: Lake) -> None:
    assert branched.root is not None
    derived = _derived(branched.root)
    assert any(name.endswith("by-dataset-metadata.json") for name in derived)  # main publishes
    main = _main_state(branched)
    branched.execute("USE BRANCH dev")
    dev_version = branched.version()
    branched.execute("USE BRANCH main")
    spark = branched.spark
    branched.save(spark.createDataFrame([(3, D3)], FRAME), "s.t", options=DEV)
    branched.save(
        spark.createDataFrame([("n",)], "note string"),
        "s.made_on_dev",
        options={**DEV, "createTable": "true"},
    )
    branched.save(
        spark.createDataFrame([("w",)], "note string"), "s.only_dev", "overwrite", options=DEV
    )
    assert _main_state(branched) == main
    # Kartothek's view is main's: no main metadata file written or rewritten. (A
    # dataset created on the branch has its own _common_metadata from its
    # creation, as SQL's CREATE TABLE on a branch does; Kartothek finds a
    # dataset only by its main metadata file, which it lacks.)
    after = _derived(branched.root)
    assert {name: after[name] for name in derived} == derived
    new_main_files = [n for n in after if n not in derived and not n.endswith("_common_metadata")]
    assert new_main_files == []
    branched.execute("USE BRANCH dev")
    assert branched.rows("SELECT * FROM s.t ORDER BY id") == [(1, D1), (2, D2), (3, D3)]
    assert branched.rows("SELECT * FROM s.made_on_dev") == [("n",)]
    assert branched.rows("SELECT * FROM s.only_dev") == [("w",)]
    assert branched.version() == dev_version + 3  # each save one commit, on the branch
    branched.execute("USE BRANCH main")


def test_an_unknown_branch_names_it_and_how_to_list_branches(branched: Lake) -> None:
    message = r"branch 'nope' does not exist; SHOW BRANCHES lists them"
    with pytest.raises(AnalysisException, match=message):
        branched.read("s.t", {"branch": "nope"}).collect()
    before = _main_state(branched)
    frame = branched.spark.createDataFrame([(9, D1)], FRAME)
    with pytest.raises(AnalysisException, match=message):
        branched.save(frame, "s.t", options={"branch": "nope"})
    assert _main_state(branched) == before


def test_the_branch_option_parses() -> None:
    options = {"uri": "/x", "path": "s.t"}
    assert parse_options({**options, "branch": "dev"}).location.branch == "dev"
    assert parse_options({**options, "Branch": "main"}).location.branch is None
    assert parse_options(options).location.branch is None
    assert "branch='dev'" in repr(parse_options({**options, "branch": "dev"}).location)
    with pytest.raises(Exception, match="option branch must name a branch, not an empty text"):
        parse_options({**options, "branch": " "})


def test_the_pages_write_audit_publish_example(spark: Any, tmp_path: Path) -> None:
    """docs/spark.md's Branches example, run as written on a fresh lakehouse."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "spark.md").read_text()
    section = page.split("## Branches", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    root = str(tmp_path / "lake")
    with trinity_dbapi.connect(root, autocommit=True) as conn:
        conn.execute("CREATE NAMESPACE sales")
        conn.execute("CREATE TABLE sales.orders (id INT8, amount DECIMAL(10,2))")
        frame = spark.createDataFrame([(1, Decimal("2.50"))], "id long, amount decimal(10,2)")
        exec(block.replace('"lake"', repr(root)), {"spark": spark, "frame": frame})  # noqa: S102
        assert conn.execute("SELECT * FROM sales.orders").fetchall() == [(1, Decimal("2.50"))]
        assert conn.execute("SELECT ref_name FROM system.refs").fetchall() == [("main",)]
