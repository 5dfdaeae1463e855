"""A view object in the tree (schema ID 3): what the lifecycle operations make of it.

No statement writes views yet; these tests put one in the tree through the
transaction's key and file staging, as a view statement will, so integrity
checks, garbage collection and the version history already treat it right.
"""

from __future__ import annotations

from pathlib import Path

import trinity_dbapi
from trinity_dbapi.format import keys
from trinity_dbapi.format.definitions import TRINITY_DIALECT, Column, DataType, ViewDefinition
from trinity_dbapi.format.paths import view_definition_path
from trinity_dbapi.lakehouse.garbage import collect_garbage, reachable_files
from trinity_dbapi.lakehouse.lakehouse import Lakehouse
from trinity_dbapi.tables.integrity import check_integrity


def _with_view(tmp_path: Path) -> tuple[Lakehouse, str]:
    uri = str(tmp_path / "lake")
    conn = trinity_dbapi.connect(uri, create=True, autocommit=True)
    conn.execute("CREATE NAMESPACE ns").execute("CREATE TABLE ns.t (a INT4)")
    lake = Lakehouse.open(uri)
    view = ViewDefinition(
        "v",
        columns=(Column(1, "a", DataType("int4")),),
        sql={TRINITY_DIALECT: "SELECT a FROM ns.t"},
        referenced=(("ns", "t"),),
    )
    txn = lake.begin()
    path = view_definition_path("ns", "v")
    txn.stage_file(path, view.to_bytes())
    txn.put(keys.view_key("ns", "v", lake.definition.key_limits), path)
    txn.commit()
    return lake, path


def test_integrity_reads_a_view_definition_as_one(tmp_path: Path) -> None:
    lake, path = _with_view(tmp_path)
    problems, checked = check_integrity(lake)
    assert problems == [] and checked > 0
    (tmp_path / "lake" / path).write_bytes(b"\xff\xff\xff")
    problems, _ = check_integrity(Lakehouse.open(str(tmp_path / "lake")))
    assert [(p.file, p.object) for p in problems] == [(path, "ns.v")]
    assert "view definition" in problems[0].problem


def test_garbage_collection_keeps_a_view_definition(tmp_path: Path) -> None:
    lake, path = _with_view(tmp_path)
    assert path in reachable_files(lake)
    collect_garbage(lake, grace_period_millis=0)
    assert (tmp_path / "lake" / path).exists()


def test_the_version_history_names_the_view(tmp_path: Path) -> None:
    _with_view(tmp_path)
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    rows = conn.execute(
        "SELECT changed_objects FROM system.versions ORDER BY version DESC LIMIT 1"
    ).fetchall()
    assert rows == [(["view ns.v"],)]
