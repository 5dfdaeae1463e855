"""Time travel by export name after every export mode, through SQL and the Python API.

An export to a target writes a new root there whose ``lakehouse_def`` row is
relative to the target; reading the export back through the source must
look that definition up in the target, not in the source (issue 16, item 6).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

import trinity_dbapi
from tests.tree.helpers import small_definition
from trinity_dbapi.errors import NestedLakehouseError, NotSupportedError
from trinity_dbapi.format.locations import is_uri
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.storage import open_storage

Backend = tuple[str, dict[str, Any]]

#: (mode, depth, to a target): every way to export a version.
MODES = [
    pytest.param("minimal", None, False, id="minimal-in-place"),
    pytest.param("minimal", None, True, id="minimal-target"),
    pytest.param("partial", 1, True, id="partial-1"),
    pytest.param("partial", 2, True, id="partial-2"),
    pytest.param("full", None, True, id="full"),
]


def _target(backend: Backend) -> str:
    return backend[0].rstrip("/").rpartition("/")[0] + f"/export-{uuid.uuid4().hex[:8]}"


def _exported(backend: Backend, mode: str, depth: int | None, to_target: bool) -> Any:
    """A connection whose lakehouse exported version v as 's'; tables and rows differ after v."""
    uri, options = backend
    Lakehouse.create(uri, small_definition(4, 2), storage_options=options)  # a deep tree
    conn = trinity_dbapi.connect(uri, storage_options=options, create=False)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE n")
    for i in range(6):  # enough keys for a tree of more than one level (order 4 below)
        cur.execute(f"CREATE NAMESPACE m{i}")
    cur.execute("CREATE TABLE n.t (a INT, b VARCHAR)")
    cur.execute("INSERT INTO n.t VALUES (1, 'x'), (2, 'y')")
    conn.commit()
    v = conn.lakehouse.latest_version()
    cur.execute("INSERT INTO n.t VALUES (3, 'z')")
    cur.execute("CREATE TABLE n.u (a INT)")
    conn.commit()
    args = f"name => 's', version => {v}, mode => '{mode}'"
    if depth is not None:
        args += f", depth => {depth}"
    if to_target:
        args += f", target => '{_target(backend)}'"
    cur.execute(f"CALL system.export_snapshot({args})")
    conn.commit()
    return conn, v


def _column(cur: Any, sql: str) -> list[Any]:
    cur.execute(sql)
    return [row[0] for row in cur.fetchall()]


@pytest.mark.parametrize(("mode", "depth", "to_target"), MODES)
def test_sql_time_travel_by_export_name(
    backend: Backend, mode: str, depth: int | None, to_target: bool
) -> None:
    conn, _v = _exported(backend, mode, depth, to_target)
    cur = conn.cursor()
    as_of = "FOR SYSTEM_VERSION AS OF 's'"
    assert _column(cur, f"SELECT a FROM n.t {as_of} ORDER BY a") == [1, 2]
    sql = f"SELECT table_name FROM information_schema.tables {as_of} WHERE table_schema = 'n'"
    assert _column(cur, sql) == ["t"]
    sql = f"SELECT table_name FROM system.tables {as_of} WHERE namespace_name = 'n' ORDER BY 1"
    assert _column(cur, sql) == ["t"]
    # The latest version still sees what came after the export.
    assert _column(cur, "SELECT a FROM n.t ORDER BY a") == [1, 2, 3]


@pytest.mark.parametrize(("mode", "depth", "to_target"), MODES)
def test_python_time_travel_by_export_name(
    backend: Backend, mode: str, depth: int | None, to_target: bool
) -> None:
    conn, v = _exported(backend, mode, depth, to_target)
    conn.close()
    for lake in (conn.lakehouse, Lakehouse.open(backend[0], storage_options=backend[1])):
        snap = lake.snapshot_by_export("s")
        assert snap.version == v
        # Relative to the target when the root lives there: read from there.
        assert is_uri(snap.definition_path) == to_target
        if to_target:
            location = lake.snapshot().definition.exported_snapshots["s"]
            assert snap.definition_path.startswith(location.rpartition("/")[0] + "/")
        # The definition of version v, as exported: no export was recorded yet.
        assert "s" not in snap.definition.exported_snapshots
        assert snap.definition.order == lake.definition.order
        names = [k for k, _ in snap.scan()]
        assert names == [k for k, _ in lake.snapshot(v).scan()]


@pytest.mark.parametrize(("mode", "depth", "to_target"), MODES)
def test_export_survives_garbage_collection_of_the_source(
    backend: Backend, mode: str, depth: int | None, to_target: bool
) -> None:
    conn, _v = _exported(backend, mode, depth, to_target)
    conn.lakehouse.maintenance.collect_garbage(grace_period_millis=0)
    cur = trinity_dbapi.connect(backend[0], storage_options=backend[1], create=False).cursor()
    assert _column(cur, "SELECT a FROM n.t FOR SYSTEM_VERSION AS OF 's' ORDER BY a") == [1, 2]
    sql = "SELECT table_name FROM information_schema.tables FOR SYSTEM_VERSION AS OF 's'"
    assert "t" in _column(cur, sql)


def _target_of(conn: Any) -> str:
    return conn.lakehouse.snapshot().definition.exported_snapshots["s"].rpartition("/")[0]


@pytest.mark.parametrize(("mode", "depth", "to_target"), [m for m in MODES if m.values[2]])
def test_every_export_target_opens_alone_and_reads_its_tables(
    backend: Backend, mode: str, depth: int | None, to_target: bool
) -> None:
    """Each table reads as the source did at the exported version; only a full one is a copy."""
    uri, options = backend
    conn, _v = _exported(backend, mode, depth, to_target)
    cur = conn.cursor()
    expected = cur.execute("SELECT * FROM n.t FOR SYSTEM_VERSION AS OF 's' ORDER BY a").fetchall()
    assert expected == [(1, "x"), (2, "y")]
    target = _target_of(conn)
    exported = trinity_dbapi.connect(target, storage_options=options, autocommit=True).cursor()
    assert exported.execute("SELECT * FROM n.t ORDER BY a").fetchall() == expected
    assert exported.execute("CALL system.check_integrity()").fetchall() == [(None, None, "ok")]
    result = Lakehouse.open(target, storage_options=options).maintenance.collect_garbage(
        grace_period_millis=0
    )
    assert result.deleted == []  # the export holds nothing it does not need
    if mode == "full":
        # Independent: a lakehouse of its own, that writes and survives its source.
        exported.execute("INSERT INTO n.t VALUES (9, 'w')")
        source = open_storage(uri, storage_options=options)
        for path in source.list(""):
            source.delete(path)
        assert [r[0] for r in exported.execute("SELECT a FROM n.t ORDER BY a").fetchall()] == [
            1,
            2,
            9,
        ]
    else:
        # Its tables' files stay in the source, which it reads and never writes.
        with pytest.raises(NotSupportedError, match="exported from") as refused:
            exported.execute("INSERT INTO n.t VALUES (9, 'w')")
        assert open_storage(uri, storage_options=options).root_uri in str(refused.value)
        assert not [
            p
            for p in open_storage(target, storage_options=options).list("")
            if p.endswith(".parquet")
        ]


def test_a_full_export_is_a_backup(backend: Backend) -> None:
    """Every table of the version, partitioned, indexed and rewritten, read alone; for Kartothek too."""
    uri, options = backend
    cur = trinity_dbapi.connect(uri, storage_options=options, autocommit=True).cursor()
    cur.execute("CREATE NAMESPACE sales")
    cur.execute(
        "CREATE TABLE sales.orders (id INT8, day DATE, amount DECIMAL(10, 2)) PARTITIONED BY (day)"
    )
    cur.execute(
        "INSERT INTO sales.orders SELECT range, DATE '2026-11-01' + (range % 3)::INT, "
        "range / 100 FROM range(300)"
    )
    cur.execute("CREATE INDEX by_id ON sales.orders (id)")
    cur.execute("DELETE FROM sales.orders WHERE id % 7 = 0")
    cur.execute("CREATE TABLE sales.notes (t VARCHAR)")
    cur.execute("INSERT INTO sales.notes VALUES ('a'), (NULL)")
    cur.execute("CREATE VIEW sales.big AS SELECT * FROM sales.orders WHERE amount > 2")
    queries = [
        "SELECT * FROM sales.orders ORDER BY id",
        "SELECT * FROM sales.orders WHERE id = 41",
        "SELECT * FROM sales.notes ORDER BY t",
        "SELECT count(*) FROM sales.big",
    ]
    expected = [cur.execute(q).fetchall() for q in queries]
    target = _target(backend)
    row = cur.execute(
        f"CALL system.export_snapshot('dr', mode => 'full', target => '{target}')"
    ).fetchone()
    cur.execute("DROP TABLE sales.orders")
    conn = Lakehouse.open(uri, storage_options=options)
    conn.maintenance.expire_versions(older_than=10**13, retain_last=1)
    conn.maintenance.collect_garbage(grace_period_millis=0)
    backup = trinity_dbapi.connect(target, storage_options=options).cursor()
    assert [backup.execute(q).fetchall() for q in queries] == expected
    assert backup.execute("CALL system.check_integrity()").fetchall() == [(None, None, "ok")]
    files = open_storage(target, storage_options=options).list("")
    derived = [f for f in files if f.endswith(".by-dataset-metadata.json") and "/" not in f]
    assert len(derived) == 2  # Kartothek's main metadata files, written for the backup
    assert row[4] == len(files) - len(derived) - 1  # the rest was copied, but the hint
    uuid_ = backup.execute(
        "SELECT format_properties['dataset_uuid'] FROM system.tables WHERE table_name = 'orders'"
    ).fetchone()[0]
    assert f"{uuid_}.by-dataset-metadata.json" in files  # Kartothek finds it in the backup


def test_an_export_inside_or_around_the_lakehouse_is_refused(backend: Backend) -> None:
    uri, options = backend
    cur = trinity_dbapi.connect(uri, storage_options=options, autocommit=True).cursor()
    cur.execute("CREATE NAMESPACE n")
    root = open_storage(uri, storage_options=options).root_uri
    around = root.rstrip("/").rpartition("/")[0]
    for target, match in ((root + "inside", "inside the lakehouse"), (around, "lies inside it")):
        with pytest.raises(NestedLakehouseError, match=match):
            cur.execute(f"CALL system.export_snapshot('e', mode => 'full', target => '{target}')")
    assert (
        Lakehouse.open(uri, storage_options=options).snapshot().definition.exported_snapshots == {}
    )
