"""Branch and tag statements through SQL: isolation, history, merges, and every refused input.

``CREATE/DROP/USE/MERGE BRANCH``, ``CREATE/DROP TAG`` and ``SHOW BRANCHES/TAGS``
(:mod:`trinity_dbapi.sql.engine.refs`), as a user meets them; the lakehouse
layer's own tests cover the chains and the merge rules in detail.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

import trinity_dbapi
from trinity_dbapi.errors import (
    InvalidDefinitionError,
    InvalidNameError,
    MergeConflictError,
    NoSuchRefError,
    NoSuchVersionError,
    ObjectExistsError,
    ProgrammingError,
    ReadOnlyError,
)
from trinity_dbapi.format.features import BRANCHES, FIRST_RELEASE
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.tables.kartothek_main import main_metadata_path


def _connect(path: Path, **kwargs: Any) -> trinity_dbapi.Connection:
    return trinity_dbapi.connect(str(path), autocommit=True, **kwargs)


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """A lakehouse at version 2: table ``t`` (version 1) holding row 1 (version 2)."""
    path = tmp_path / "lake"
    with _connect(path) as conn:
        conn.execute("CREATE TABLE t (id INT8, v VARCHAR)")
        conn.execute("INSERT INTO t VALUES (1, 'a')")
    return path


def _rows(conn: trinity_dbapi.Connection, sql: str = "SELECT * FROM t ORDER BY id") -> list[Any]:
    return conn.execute(sql).fetchall()


def _versions(conn: trinity_dbapi.Connection) -> list[int]:
    return [v for (v,) in _rows(conn, "SELECT version FROM system.versions ORDER BY version")]


def _refs(conn: trinity_dbapi.Connection) -> list[Any]:
    return _rows(conn, "SELECT ref_name, ref_type, version, root, base_version FROM system.refs")


def _files(path: Path) -> list[str]:
    return sorted(str(Path(d, f).relative_to(path)) for d, _, names in os.walk(path) for f in names)


# -- isolation and history --------------------------------------------------------------


def test_a_branch_reads_and_writes_apart_from_main(lake: Path) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")  # main's version 3
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'b')")
        conn.execute("CREATE TABLE only_dev (x INT8)")
        assert _rows(conn) == [(1, "a"), (2, "b")]
        conn.execute("USE BRANCH main")
        assert _rows(conn) == [(1, "a")]
        assert _rows(conn, "SELECT table_name FROM system.tables") == [("t",)]
        conn.execute("INSERT INTO t VALUES (3, 'c')")
        # Another connection opened on the branch sees the branch only.
        with _connect(lake, branch="dev") as dev:
            assert _rows(dev) == [(1, "a"), (2, "b")]
            names = _rows(dev, "SELECT table_name FROM system.tables ORDER BY 1")
            assert names == [("only_dev",), ("t",)]
        assert _rows(conn, "SELECT * FROM t FOR SYSTEM_VERSION AS OF 'dev' ORDER BY id") == [
            (1, "a"),
            (2, "b"),
        ]


def test_versions_continue_from_the_base_and_time_travel_follows_the_branch(lake: Path) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")  # from main's version 2; main's commit 3
        conn.execute("INSERT INTO t VALUES (10, 'main')")  # main's version 4
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'b')")  # dev's version 3
        conn.execute("INSERT INTO t VALUES (3, 'c')")  # dev's version 4
        # system.versions is the branch's history: main's 0..2 below the base, then its own.
        assert _versions(conn) == [0, 1, 2, 3, 4]
        at = "SELECT * FROM t FOR SYSTEM_VERSION AS OF {} ORDER BY id"
        assert _rows(conn, at.format(1)) == []  # main's version 1, below the base
        assert _rows(conn, at.format(2)) == [(1, "a")]  # the base
        assert _rows(conn, at.format(3)) == [(1, "a"), (2, "b")]  # dev's 3, not main's 3
        assert _rows(conn, at.format(4)) == [(1, "a"), (2, "b"), (3, "c")]
        with pytest.raises(NoSuchVersionError, match="version 5 does not exist"):
            conn.execute(at.format(5))
        conn.execute("USE BRANCH main")
        assert _versions(conn) == [0, 1, 2, 3, 4]
        assert _rows(conn, at.format(4)) == [(1, "a"), (10, "main")]  # main's own 4
        assert _rows(conn, at.format(3)) == [(1, "a")]  # CREATE BRANCH: refs only


def test_create_branch_from_a_version_a_tag_or_a_branch(lake: Path) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE TAG eod")  # main's version 2
        conn.execute("INSERT INTO t VALUES (2, 'b')")
        conn.execute("CREATE BRANCH v1 FROM VERSION 1")
        conn.execute("CREATE BRANCH from_tag FROM TAG eod")
        conn.execute("CREATE BRANCH dev")  # main's latest
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (3, 'c')")
        conn.execute("CREATE BRANCH from_dev FROM BRANCH dev")  # dev's head, not main's
        # FROM VERSION reads the session's history: dev's own version, not main's.
        (dev_head,) = [v for n, _, v, _, _ in _refs(conn) if n == "dev"]
        conn.execute(f"CREATE BRANCH dev_at FROM VERSION {dev_head}")
        conn.execute(f"CREATE TAG dev_tag FROM VERSION {dev_head}")
        tagged = "SELECT id FROM t FOR SYSTEM_VERSION AS OF 'dev_tag' ORDER BY id"
        assert _rows(conn, tagged) == [(1,), (2,), (3,)]
        seen = {}
        for name in ("v1", "from_tag", "from_dev", "dev_at"):
            conn.execute(f"USE BRANCH {name}")
            seen[name] = [i for i, _ in _rows(conn)]
        assert seen == {"v1": [], "from_tag": [1], "from_dev": [1, 2, 3], "dev_at": [1, 2, 3]}
        bases = {n: b for n, k, _, _, b in _refs(conn) if k == "branch"}
        assert bases["v1"] == 1 and bases["from_tag"] == 2 and bases["main"] is None
        assert bases["from_dev"] == bases["dev"] + 1  # dev's own commit


def test_tags_on_a_branch_and_show_statements(lake: Path) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'b')")
        conn.execute("CREATE TAG audited")  # the session's branch head
        conn.execute("INSERT INTO t VALUES (3, 'c')")
        conn.execute("CREATE TAG IF NOT EXISTS audited")  # no-op: it exists
        conn.execute("USE BRANCH main")
        conn.execute("CREATE TAG head_of_dev FROM BRANCH dev")
        tagged = "SELECT id FROM t FOR SYSTEM_VERSION AS OF '{}' ORDER BY id"
        assert _rows(conn, tagged.format("audited")) == [(1,), (2,)]
        assert _rows(conn, tagged.format("head_of_dev")) == [(1,), (2,), (3,)]
        cur = conn.execute("SHOW TAGS")
        assert [d[0] for d in cur.description] == ["tag_name", "version", "root"]
        tags = cur.fetchall()
        assert [(n, v) for n, v, _ in tags] == [("audited", 3), ("head_of_dev", 4)]
        assert all(root.startswith("_branches/") for _, _, root in tags)
        cur = conn.execute("SHOW BRANCHES")
        assert [d[0] for d in cur.description] == [
            "branch_name",
            "version",
            "base_version",
            "current",
            "root",
        ]
        assert [row[:4] for row in cur.fetchall()] == [
            ("main", 5, None, True),  # IF NOT EXISTS on a tag that exists: no commit
            ("dev", 4, 2, False),
        ]
        conn.execute("DROP TAG audited")
        conn.execute("DROP TAG IF EXISTS audited")
        assert [n for n, _, _ in _rows(conn, "SHOW TAGS")] == ["head_of_dev"]


def test_drop_and_recreate_starts_a_new_history(lake: Path) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")  # from 2
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'old dev')")  # old dev's 3
        conn.execute("USE BRANCH main")
        conn.execute("DROP BRANCH dev")  # main's 4
        conn.execute("DROP BRANCH IF EXISTS dev")  # nothing to drop: no version
        conn.execute("CREATE BRANCH IF NOT EXISTS main")
        conn.execute("DROP TAG IF EXISTS dev")
        assert max(_versions(conn)) == 4
        conn.execute("CREATE BRANCH dev")  # from main's 4; main's 5
        conn.execute("USE BRANCH dev")
        assert _rows(conn) == [(1, "a")]
        assert _versions(conn) == [0, 1, 2, 3, 4]
        # Version 3 is main's (CREATE BRANCH), not the dropped branch's insert.
        assert _rows(conn, "SELECT * FROM t FOR SYSTEM_VERSION AS OF 3") == [(1, "a")]
        (head,) = [v for n, k, v, _, _ in _refs(conn) if n == "dev"]
        assert head == 4


def test_a_tag_keeps_a_dropped_branch_version_through_expiration_and_collection(
    lake: Path,
) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")  # main's 3, from 2
        conn.execute("CREATE BRANCH keep")  # main's 4, from 3
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'dev')")
        conn.execute("CREATE TAG on_dev")
        conn.execute("USE BRANCH keep")
        conn.execute("INSERT INTO t VALUES (3, 'keep')")
        conn.execute("USE BRANCH main")
        for i in range(3):
            conn.execute(f"INSERT INTO t VALUES ({10 + i}, 'main')")
        conn.execute("DROP BRANCH dev")
        ((expired, retained, _),) = _rows(
            conn,
            "CALL system.expire_versions(older_than => TIMESTAMP '2100-01-01 00:00:00', "
            "retain_last => 1)",
        )
        assert 3 in retained and 2 in expired  # keep's base stays; dropped dev's does not
        conn.execute("CALL system.collect_garbage(grace_period_millis => 0)")
        tagged = "SELECT id FROM t FOR SYSTEM_VERSION AS OF 'on_dev' ORDER BY id"
        assert _rows(conn, tagged) == [(1,), (2,)]
        assert _rows(conn, "SELECT id FROM t FOR SYSTEM_VERSION AS OF 'keep' ORDER BY id") == [
            (1,),
            (3,),
        ]
        # A branch cannot start from a dropped branch's version, even a tagged one.
        before = (_versions(conn), _refs(conn))
        with pytest.raises(ProgrammingError, match="belongs to a branch that was dropped"):
            conn.execute("CREATE BRANCH again FROM TAG on_dev")
        assert (_versions(conn), _refs(conn)) == before


# -- merges -----------------------------------------------------------------------------


def test_merge_into_main_fast_forward_then_three_way(lake: Path) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'b')")
        conn.execute("USE BRANCH main")
        cur = conn.execute("MERGE BRANCH dev")
        assert [d[0] for d in cur.description] == [
            "source",
            "target",
            "version",
            "base_version",
            "fast_forward",
            "objects_changed",
        ]
        (row,) = cur.fetchall()
        assert row[:2] == ("dev", "main") and row[3:] == (2, True, 1)
        assert row[2] == max(_versions(conn))
        # Both sides append: both kept; the base is now the last merge.
        conn.execute("INSERT INTO t VALUES (3, 'main')")
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (4, 'dev')")
        (row,) = _rows(conn, "MERGE BRANCH dev INTO main")
        assert row[3:5] == (3, False)  # the base: dev's version 3, merged last time
        assert _rows(conn) == [(1, "a"), (2, "b"), (4, "dev")]  # dev itself is unchanged
        conn.execute("USE BRANCH main")
        assert _rows(conn) == [(1, "a"), (2, "b"), (3, "main"), (4, "dev")]


def test_merge_from_main_into_a_branch(lake: Path) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'main')")
        (row,) = _rows(conn, "MERGE BRANCH main INTO dev")
        assert row[:2] == ("main", "dev") and row[4] is True
        assert _rows(conn) == [(1, "a"), (2, "main")]
        conn.execute("USE BRANCH dev")
        assert _rows(conn) == [(1, "a"), (2, "main")]


def test_a_conflicting_merge_lists_the_table_and_changes_nothing(lake: Path) -> None:
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")
        conn.execute("DELETE FROM t WHERE id = 1")  # main rewrites the file
        conn.execute("USE BRANCH dev")
        conn.execute("UPDATE t SET v = 'dev' WHERE id = 1")  # and so does dev
        conn.execute("USE BRANCH main")
        before = (_versions(conn), _refs(conn), _files(lake))
        with pytest.raises(MergeConflictError) as caught:
            conn.execute("MERGE BRANCH dev")
        ((what, why),) = caught.value.conflicts
        assert what == "table 'default.t'" and why.endswith(
            "was rewritten or deleted on both sides"
        )
        assert "found 1 conflict(s) and changed nothing: table 'default.t': file" in str(
            caught.value
        )
        assert (_versions(conn), _refs(conn), _files(lake)) == before
        assert _rows(conn) == []


# -- what other readers see -------------------------------------------------------------


def test_kartothek_main_metadata_follows_main_only(lake: Path) -> None:
    with _connect(lake) as conn:
        ((properties,),) = _rows(conn, "SELECT format_properties FROM system.tables")
    uuid_ = dict(properties)["dataset_uuid"]
    published = lake / main_metadata_path(uuid_)
    (common,) = (lake / uuid_).glob("*/_common_metadata")
    first, first_common = published.read_bytes(), common.read_bytes()
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'b')")
        conn.execute("ALTER TABLE t ADD COLUMN w INT8")
        # A branch commit writes neither (column w is the branch's only).
        assert (published.read_bytes(), common.read_bytes()) == (first, first_common)
        conn.execute("USE BRANCH main")
        conn.execute("MERGE BRANCH dev")
    merged = published.read_bytes()
    assert merged != first
    body = json.loads(merged)
    assert len(body["partitions"]) == 2  # main's first file and dev's
    assert "w" in pq.read_schema(common).names


def test_the_first_create_branch_requires_the_branches_feature(lake: Path) -> None:
    assert BRANCHES not in Lakehouse.open(str(lake)).snapshot().definition.required_writer_features
    with _connect(lake) as conn:
        conn.execute("CREATE TAG eod")  # a tag on main needs no release that knows branches
        required = Lakehouse.open(str(lake)).snapshot().definition.required_writer_features
        assert BRANCHES not in required
        conn.execute("CREATE BRANCH dev")
    required = Lakehouse.open(str(lake)).snapshot().definition.required_writer_features
    assert required[BRANCHES] == FIRST_RELEASE[BRANCHES]


def test_a_seeds_only_reader_reads_main_unchanged(lake: Path) -> None:
    """Main's chain, read by the seeds' rules alone, with branches, tags and a saved txn."""
    before = _seeds_read_main(lake)
    with _connect(lake) as conn:
        conn.execute("CREATE BRANCH dev")
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'b')")
        conn.execute("CREATE TABLE only_dev (x INT8)")
        conn.execute("CREATE TAG on_dev")
        conn.execute("USE BRANCH main")
        conn.execute("CREATE TAG on_main")
    saver = _connect(lake)
    saver.execute("BEGIN")
    saver.execute("INSERT INTO t VALUES (3, 'c')")
    saver.execute("SAVE TRANSACTION")
    saver.close()
    assert list((lake / "_transactions").iterdir())
    after = _seeds_read_main(lake)
    # Only the lakehouse definition moved (refs are recorded there); every object is main's.
    assert after["objects"] == before["objects"]
    assert after["version"] > before["version"]
    assert after["definition"]["name"] == before["definition"]["name"]
    # Tags are the seeds' own named snapshot exports, pinned in place.
    exports = after["definition"]["exported_snapshots"]
    assert set(exports) == {"on_dev", "on_main"}
    # on_main names the version before its own commit (and the one the first SAVE made).
    assert exports["on_main"] == f"_{format(after['version'] - 2, '032b')[::-1]}.arrow"
    assert exports["on_dev"].startswith("_branches/")


#: The seeds' lakehouse definition (schema ID 0), fields 1-12, and nothing of this project's.
_SEED_FIELDS = [
    ("name", 1, "TYPE_STRING"),
    ("major_version", 2, "TYPE_UINT32"),
    ("order", 3, "TYPE_UINT32"),
    ("namespace_name_max_size_bytes", 4, "TYPE_UINT32"),
    ("table_name_max_size_bytes", 5, "TYPE_UINT32"),
    ("file_name_max_size_bytes", 6, "TYPE_UINT32"),
    ("node_file_max_size_bytes", 7, "TYPE_UINT64"),
]


def _seed_definition_class() -> Any:
    fdp = descriptor_pb2.FileDescriptorProto(name="seeds.proto", package="seeds", syntax="proto3")
    entry = fdp.message_type.add(name="LakehouseDef")
    for name, number, kind in _SEED_FIELDS:
        entry.field.add(
            name=name,
            number=number,
            type=getattr(descriptor_pb2.FieldDescriptorProto, kind),
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    exports = entry.nested_type.add(name="ExportedSnapshotsEntry")
    exports.options.map_entry = True
    for name, number in (("key", 1), ("value", 2)):
        exports.field.add(
            name=name,
            number=number,
            type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
            label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        )
    entry.field.add(
        name="exported_snapshots",
        number=12,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        type_name=".seeds.LakehouseDef.ExportedSnapshotsEntry",
        label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("seeds.LakehouseDef"))


def _seeds_read_main(path: Path) -> dict[str, Any]:
    """Main's latest version as a reader of the seeds alone finds it.

    Seed 001: the hint at the root names a version, root node files
    ``_<32 reversed bits>.arrow`` at the root are probed forward from it;
    system rows come before the first all-NULL row; a leaf's remaining rows
    are keys with values, then buffered messages. Nothing under any folder is
    looked at.
    """
    version = int((path / "_latest_hint.txt").read_text().strip())

    def root(v: int) -> Path:
        return path / f"_{format(v, '032b')[::-1]}.arrow"

    while root(version + 1).exists():
        version += 1
    table = pa.ipc.open_file(pa.py_buffer(root(version).read_bytes())).read_all()
    rows = list(zip(*(table.column(c).to_pylist() for c in ("key", "value", "pnode", "txn"))))
    system = {k: v for k, v, _, _ in itertools.takewhile(lambda r: r[:2] != (None, None), rows)}
    rest = rows[len(system) :]
    assert rest[0] == (None, None, None, None)  # a leaf (a small lakehouse)
    objects = {k: v for k, v, p, t in rest[1:] if k is not None and t is None and p is None}
    for key, value, _, txn in rest[1:]:
        if txn is not None:
            if value is None:
                objects.pop(key, None)
            else:
                objects[key] = value
    # The chain back to version 0 stays at the root, one version at a time.
    previous, v = system.get("previous_root"), version
    while previous is not None:
        v -= 1
        assert previous == root(v).name
        older = pa.ipc.open_file(pa.py_buffer(root(v).read_bytes())).read_all()
        first = dict(zip(older.column("key").to_pylist(), older.column("value").to_pylist()))
        previous = first.get("previous_root")
    assert v == 0
    message = _seed_definition_class()()
    message.ParseFromString((path / system["lakehouse_def"]).read_bytes())
    definition = {"name": message.name, "exported_snapshots": dict(message.exported_snapshots)}
    return {"version": version, "objects": objects, "definition": definition}


# -- bad input: a clear error, and nothing changes --------------------------------------

REFUSED = [
    ("USE BRANCH nope", NoSuchRefError, "branch 'nope' does not exist; SHOW BRANCHES lists them"),
    ("DROP BRANCH nope", NoSuchRefError, "branch 'nope' does not exist"),
    ("DROP TAG nope", NoSuchRefError, "tag 'nope' does not exist; SHOW TAGS lists them"),
    ("MERGE BRANCH nope", NoSuchRefError, "branch 'nope' does not exist"),
    ("MERGE BRANCH dev INTO nope", NoSuchRefError, r"branch \(the merge's target\) 'nope'"),
    ("MERGE BRANCH dev INTO dev", ProgrammingError, "a branch merged into itself"),
    ("MERGE BRANCH main INTO main", ProgrammingError, "a branch merged into itself"),
    ("DROP BRANCH main", ProgrammingError, "DROP BRANCH main is refused: main is the lakehouse"),
    ("CREATE BRANCH main", ObjectExistsError, "branch 'main' already exists"),
    ('CREATE BRANCH "Main"', ObjectExistsError, "branch 'Main' already exists"),
    ('CREATE BRANCH "MAIN"', ObjectExistsError, "branch 'MAIN' already exists"),
    ('CREATE TAG "Main"', ObjectExistsError, "branch 'Main' already exists"),
    ("CREATE TAG main", ObjectExistsError, "branch 'main' already exists"),
    ("CREATE BRANCH dev", ObjectExistsError, "branch 'dev' already exists.*IF NOT EXISTS"),
    ("CREATE BRANCH eod", ObjectExistsError, r"tag \(snapshot export\) 'eod' already exists"),
    ("CREATE BRANCH exp", ObjectExistsError, r"tag \(snapshot export\) 'exp' already exists"),
    ("CREATE TAG eod", ObjectExistsError, r"'eod' already exists"),
    ("CREATE TAG dev", ObjectExistsError, "branch 'dev' already exists"),
    ("CREATE TAG IF NOT EXISTS dev", ObjectExistsError, "branch 'dev' already exists"),
    ("CREATE BRANCH IF NOT EXISTS eod", ObjectExistsError, r"tag \(snapshot export\) 'eod'"),
    ("CALL export_snapshot('dev')", ObjectExistsError, "branch 'dev' already exists"),
    ("CALL export_snapshot('Main')", ObjectExistsError, "branch 'Main' already exists"),
    ('CREATE BRANCH "123"', InvalidDefinitionError, "must be non-empty and not all digits"),
    ("CREATE BRANCH x FROM BRANCH nope", NoSuchRefError, "branch 'nope' does not exist"),
    ("CREATE BRANCH x FROM TAG nope", NoSuchVersionError, "no tag, branch or exported snapshot"),
    ("CREATE BRANCH x FROM VERSION 99", NoSuchVersionError, "version 99 does not exist"),
    ("CREATE TAG x FROM VERSION 99", NoSuchVersionError, "version 99 does not exist"),
    ("SELECT * FROM t FOR SYSTEM_VERSION AS OF 'nope'", NoSuchVersionError, "named 'nope'"),
]


@pytest.fixture
def refs_lake(lake: Path) -> Path:
    """``lake`` with branch ``dev`` (one own commit), tag ``eod`` and export ``exp``."""
    with _connect(lake) as conn:
        conn.execute("CREATE TAG eod")
        conn.execute("CALL export_snapshot('exp')")
        conn.execute("CREATE BRANCH dev")
        conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (2, 'b')")
    return lake


@pytest.mark.parametrize(("sql", "error", "message"), REFUSED, ids=[s for s, _, _ in REFUSED])
def test_refused_input_changes_nothing(
    refs_lake: Path, sql: str, error: type[Exception], message: str
) -> None:
    with _connect(refs_lake) as conn:
        before = (_versions(conn), _refs(conn), _files(refs_lake))
        with pytest.raises(error, match=message):
            conn.execute(sql)
        assert (_versions(conn), _refs(conn), _files(refs_lake)) == before
        assert _rows(conn) == [(1, "a")]  # the session is still on main


def test_use_branch_inside_an_open_transaction(refs_lake: Path) -> None:
    with _connect(refs_lake) as conn:
        conn.execute("BEGIN")
        with pytest.raises(ProgrammingError, match="USE BRANCH dev inside an open transaction"):
            conn.execute("USE BRANCH dev")
        conn.execute("INSERT INTO t VALUES (5, 'e')")  # still main's transaction
        conn.execute("COMMIT")
        assert _rows(conn) == [(1, "a"), (5, "e")]
    with _connect(refs_lake, branch="dev") as dev:
        assert _rows(dev) == [(1, "a"), (2, "b")]


def test_ref_changes_inside_a_transaction_with_changes_or_read_only(refs_lake: Path) -> None:
    with _connect(refs_lake) as conn:
        before = (_versions(conn), _refs(conn))
        conn.execute("BEGIN")
        conn.execute("INSERT INTO t VALUES (5, 'e')")
        with pytest.raises(ProgrammingError, match="CREATE BRANCH inside a transaction"):
            conn.execute("CREATE BRANCH x")
        conn.execute("ROLLBACK")
        assert (_versions(conn), _refs(conn)) == before
    reader = trinity_dbapi.connect(str(refs_lake), read_only=True)
    with pytest.raises(ReadOnlyError, match="CREATE TAG is refused: this connection"):
        reader.execute("CREATE TAG x")
    reader.close()
    with _connect(refs_lake) as conn:
        assert (_versions(conn), _refs(conn)) == before


def test_drop_branch_the_session_is_on(refs_lake: Path) -> None:
    with _connect(refs_lake, branch="dev") as dev:
        with pytest.raises(ProgrammingError, match="this session is on it; run USE BRANCH main"):
            dev.execute("DROP BRANCH dev")
        assert [n for n, *_ in _refs(dev)] == ["main", "dev", "eod", "exp"]


def test_a_merge_is_rebased_over_an_append_made_while_it_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.lakehouse import merging
    from trinity_dbapi.lakehouse.transaction import Transaction

    uri = str(tmp_path / "lake")
    con = trinity_dbapi.connect(uri, autocommit=True)
    con.execute("CREATE TABLE t (k INT8)")
    con.execute("INSERT INTO t VALUES (1)")
    con.execute("CREATE BRANCH dev")
    trinity_dbapi.connect(uri, autocommit=True, branch="dev").execute("INSERT INTO t VALUES (2)")
    other = trinity_dbapi.connect(uri, autocommit=True)

    class Racing(Transaction):
        def commit(self, *args: Any, **kwargs: Any) -> Any:
            other.execute("INSERT INTO t VALUES (3)")  # lands first: the merge rebases
            return super().commit(*args, **kwargs)

    monkeypatch.setattr(merging, "Transaction", Racing)
    (row,) = con.execute("MERGE BRANCH dev").fetchall()
    assert row[:2] == ("dev", "main")
    assert con.execute("SELECT k FROM t ORDER BY k").fetchall() == [(1,), (2,), (3,)]


@pytest.mark.parametrize("statement", ["CREATE BRANCH", "CREATE TAG"])
def test_a_ref_name_longer_than_a_table_name_is_refused(tmp_path: Path, statement: str) -> None:
    con = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    con.execute("CREATE TABLE t (k INT8)")
    before = con.execute("SELECT max(version) FROM system.versions").fetchall()
    long = "x" * 101  # table_name_max_size_bytes is 100 by default
    with pytest.raises(InvalidNameError, match="is too long: a ref name is at most 100 bytes"):
        con.execute(f'{statement} "{long}"')
    con.execute(f'{statement} "{"x" * 100}"')  # at the bound: taken
    assert con.execute("SELECT max(version) FROM system.versions").fetchall() != before
    assert len(con.execute("SELECT * FROM system.refs").fetchall()) == 2
