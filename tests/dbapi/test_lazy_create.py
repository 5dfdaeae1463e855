"""connect() creates a lakehouse only on purpose: at the first write, and only where nothing else is.

The rule (docs/dbapi.md, "Where a lakehouse is created"): ``connect(uri)`` on
a path that holds no lakehouse writes nothing until the connection's first
write; until then it reads an empty lakehouse, and a missing table's error
says there is no lakehouse there yet. A local folder that holds other files,
or a file, is refused at once. A mistyped path leaves no file and no folder
behind, even when the first write fails. ``create=True`` creates at once,
even in a folder that holds other files; ``create=False`` requires one.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import trinity_dbapi
from tests.conftest import CLOUD_PARAMS, cloud_root
from trinity_dbapi import errors
from trinity_dbapi.lakehouse.lakehouse import Lakehouse


def _tree(path: Path) -> list[str]:
    """Every file and folder under ``path``, relative, sorted."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_a_connection_reads_an_empty_lakehouse_and_writes_nothing_until_its_first_write(
    tmp_path: Path,
) -> None:
    root = tmp_path / "new" / "lake"
    conn = trinity_dbapi.connect(str(root), autocommit=True)
    assert not conn.created_lakehouse and not conn.lakehouse_exists
    cur = conn.cursor()
    assert cur.execute("SHOW TABLES").fetchall() == []
    assert cur.execute("SHOW NAMESPACES").fetchall() == [("information_schema",), ("system",)]
    assert cur.execute("SELECT 42").fetchall() == [(42,)]
    with pytest.raises(errors.NoSuchTableError) as info:
        cur.execute("SELECT * FROM shop.orders")
    assert str(info.value) == (
        f"table 'shop.orders' does not exist; there is no lakehouse at "
        f"'file://{root}/' yet (it is created by the connection's first write): check the path"
    )
    assert not (tmp_path / "new").exists()  # reading created nothing
    assert repr(conn) == f"<trinity_dbapi.Connection file://{root}/ namespace='default'>"

    cur.execute("CREATE NAMESPACE shop")  # the first write creates it
    assert conn.created_lakehouse and conn.lakehouse_exists
    assert Lakehouse.exists(str(root))
    cur.execute("CREATE TABLE shop.orders (id INT)")
    cur.execute("INSERT INTO shop.orders VALUES (1), (2)")
    assert cur.execute("SELECT sum(id) FROM shop.orders").fetchall() == [(3,)]
    conn.close()

    again = trinity_dbapi.connect(str(root))
    assert not again.created_lakehouse and again.lakehouse_exists
    assert again.execute("SELECT count(*) FROM shop.orders").fetchall() == [(2,)]
    again.close()


def test_a_mistyped_path_leaves_nothing_behind(tmp_path: Path) -> None:
    typo = tmp_path / "lakee" / "deeper"
    conn = trinity_dbapi.connect(str(typo), autocommit=True)
    cur = conn.cursor()
    for sql in ("SHOW TABLES", "SELECT 1", "SHOW TABLES IN system", "SELECT * FROM system.tables"):
        cur.execute(sql).fetchall()
    for sql in ("SELECT * FROM orders", "USE shop", "DESCRIBE TABLE orders"):
        with pytest.raises(errors.ProgrammingError, match=r"no lakehouse at .* yet"):
            cur.execute(sql)
    conn.close()
    assert _tree(tmp_path) == []


def test_a_first_write_that_fails_creates_nothing(tmp_path: Path) -> None:
    for autocommit in (True, False):
        typo = tmp_path / f"typo-{autocommit}" / "lake"
        conn = trinity_dbapi.connect(str(typo), autocommit=autocommit)
        with pytest.raises(errors.NoSuchTableError, match=r"'shop\.orders' does not exist"):
            conn.execute("INSERT INTO shop.orders VALUES (1)")
        with pytest.raises(errors.NoSuchNamespaceError, match="'shop' does not exist"):
            conn.execute("CREATE TABLE shop.orders (id INT)")
        assert not conn.created_lakehouse and not conn.lakehouse_exists
        assert not conn.in_transaction or not autocommit
        assert _tree(tmp_path) == []
        # ... and the connection goes on: a write that succeeds creates it.
        conn.execute("CREATE TABLE orders (id INT)")
        conn.commit()
        assert conn.created_lakehouse
        with trinity_dbapi.connect(str(typo)) as other:
            assert other.execute("SHOW TABLES").fetchall() == [("orders",)]
        conn.close()
        for path in tmp_path.iterdir():
            for inner in sorted(path.rglob("*"), reverse=True):
                inner.unlink() if inner.is_file() else inner.rmdir()
            path.rmdir()


def test_a_folder_that_holds_other_files_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "home"
    folder.mkdir()
    for name in ("notes.txt", "b.csv", "c", "d", "e"):
        (folder / name).write_text("mine")
    with pytest.raises(errors.NotALakehouseError) as info:
        trinity_dbapi.connect(str(folder))
    assert str(info.value) == (
        f"no Trinity Lakehouse at '{folder}': the folder is not empty (it holds 'b.csv', "
        "'c', 'd' and 2 more) and holds no lakehouse, so none is created there unasked; "
        f"check the path, or create a lakehouse in that folder on purpose with "
        f"connect('{folder}', create=True)"
    )
    # A LakehouseNotFoundError, so an OperationalError (PEP 249).
    assert isinstance(info.value, errors.LakehouseNotFoundError)
    assert isinstance(info.value, errors.OperationalError)
    assert _tree(tmp_path) == [
        "home",
        *(f"home/{n}" for n in ("b.csv", "c", "d", "e", "notes.txt")),
    ]


def test_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "data.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(errors.NotALakehouseError, match="the root is a file, not a folder"):
        trinity_dbapi.connect(str(path))
    assert path.read_bytes() == b"PAR1" and _tree(tmp_path) == ["data.parquet"]


def test_create_true_creates_at_once_even_beside_other_files(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README").write_text("mine")
    conn = trinity_dbapi.connect(str(folder), create=True)
    assert conn.created_lakehouse and conn.lakehouse_exists
    assert Lakehouse.exists(str(folder)) and (folder / "README").read_text() == "mine"
    conn.close()
    # Once there, the default opens it whatever else the folder holds.
    with trinity_dbapi.connect(str(folder)) as again:
        assert again.lakehouse_exists and not again.created_lakehouse


def test_create_false_and_read_only_require_a_lakehouse(tmp_path: Path) -> None:
    for options in ({"create": False}, {"read_only": True}, {"create": True, "read_only": True}):
        with pytest.raises(errors.LakehouseNotFoundError, match="no Trinity Lakehouse at"):
            trinity_dbapi.connect(str(tmp_path / "none"), **options)
    assert _tree(tmp_path) == []


def test_an_empty_folder_is_created_in_at_the_first_write(tmp_path: Path) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    conn = trinity_dbapi.connect(str(folder), autocommit=True, name="mine")
    assert _tree(folder) == []
    conn.execute("CREATE NAMESPACE n")
    assert conn.created_lakehouse
    assert Lakehouse.open(str(folder)).definition.name == "mine"  # the definition fields apply
    conn.close()


def test_the_lakehouse_object_held_before_the_first_write_is_the_created_one(
    tmp_path: Path,
) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    lake = conn.lakehouse
    conn.execute("CREATE NAMESPACE n")
    assert conn.lakehouse is lake
    assert lake.storage.root_uri == f"file://{tmp_path}/lake/"
    assert lake.latest_version() == 1
    conn.close()


def test_a_lakehouse_another_connection_created_is_read_from_the_next_transaction(
    tmp_path: Path,
) -> None:
    root = str(tmp_path / "lake")
    reader = trinity_dbapi.connect(root, autocommit=True)
    assert reader.execute("SHOW NAMESPACES").fetchall() == [("information_schema",), ("system",)]
    writer = trinity_dbapi.connect(root, autocommit=True)
    writer.execute("CREATE NAMESPACE shared")
    assert ("shared",) in reader.execute("SHOW NAMESPACES").fetchall()
    assert reader.lakehouse_exists and not reader.created_lakehouse
    reader.execute("CREATE TABLE shared.t (a INT)")  # writes to the same lakehouse
    assert writer.execute("SHOW TABLES IN shared").fetchall() == [("t",)]
    for conn in (reader, writer):
        conn.close()


def test_a_rolled_back_first_write_keeps_the_created_lakehouse(tmp_path: Path) -> None:
    # Creating the lakehouse is not part of the transaction: it happened.
    root = tmp_path / "lake"
    conn = trinity_dbapi.connect(str(root))
    conn.execute("CREATE NAMESPACE n")
    conn.rollback()
    assert conn.created_lakehouse and Lakehouse.exists(str(root))
    assert conn.execute("SHOW NAMESPACES").fetchall() == [("information_schema",), ("system",)]
    conn.close()


def test_memory_lakehouses_are_created_at_connect() -> None:
    # Nothing of a memory:// lakehouse outlives the process: there is no typo to protect
    # from, and the connections of one process share it from the start.
    uri = f"memory://lazy-{os.getpid()}-{id(object())}/lake"
    with trinity_dbapi.connect(uri) as conn, trinity_dbapi.connect(uri) as other:
        assert conn.created_lakehouse and conn.lakehouse_exists and Lakehouse.exists(uri)
        assert not other.created_lakehouse


@pytest.mark.parametrize("kind", CLOUD_PARAMS)
def test_an_object_store_prefix_gets_nothing_until_the_first_write(
    request: pytest.FixtureRequest, kind: str
) -> None:
    # A prefix is not listed for emptiness: nothing is written there before the first write.
    uri, options = cloud_root(request, kind, "lakee/typo")
    from trinity_dbapi.storage import open_storage

    bucket = open_storage(uri.rsplit("/", 2)[0], storage_options=options)
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    assert conn.execute("SHOW TABLES").fetchall() == []
    with pytest.raises(errors.NoSuchTableError, match="there is no lakehouse at"):
        conn.execute("SELECT * FROM t")
    with pytest.raises(errors.NoSuchTableError):
        conn.execute("INSERT INTO t VALUES (1)")  # a first write that fails: undone
    assert bucket.list() == []
    conn.execute("CREATE TABLE t (a INT)")
    assert conn.created_lakehouse and Lakehouse.exists(uri, storage_options=options)
    conn.close()


def test_a_first_write_inside_begin_creates_it_and_commit_keeps_the_transaction(
    tmp_path: Path,
) -> None:
    root = str(tmp_path / "lake")
    with trinity_dbapi.connect(root, autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("BEGIN")
        assert cur.execute("SHOW NAMESPACES").fetchall() == [("information_schema",), ("system",)]
        cur.execute("CREATE NAMESPACE a")
        cur.execute("CREATE TABLE a.t (x INT)")
        assert conn.in_transaction and conn.created_lakehouse
        with trinity_dbapi.connect(root) as other:  # nothing committed yet
            assert other.execute("SHOW NAMESPACES").fetchall() == [
                ("information_schema",),
                ("system",),
            ]
        cur.execute("COMMIT")
        with trinity_dbapi.connect(root) as other:
            assert other.execute("SHOW TABLES IN a").fetchall() == [("t",)]
