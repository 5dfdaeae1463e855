"""``tables/changes.py``: the files two versions of a table do not share, and only their rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import trinity_dbapi
from trinity_dbapi.format.definitions import TableDefinition
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.transaction import Transaction
from trinity_dbapi.tables import changes, managed, reader


@pytest.fixture
def lake(tmp_path: Path) -> Iterator[tuple[Any, str]]:
    uri = str(tmp_path / "lake")
    conn = trinity_dbapi.connect(uri, autocommit=True)
    conn.execute("CREATE NAMESPACE ns")
    conn.execute("CREATE TABLE ns.t (id INT8, day DATE, v VARCHAR) PARTITIONED BY (day)")
    yield conn, uri
    conn.close()


def _definition(uri: str, version: int) -> TableDefinition | None:
    house = Lakehouse.open(uri)
    view = Transaction(house, house.snapshot(version), read_only=True)
    return view.load_table("ns", "t") if view.table_exists("ns", "t") else None


def _latest(conn: Any) -> int:
    return int(conn.execute("SELECT max(version) FROM system.versions").fetchone()[0])


def test_one_metadata_file_shares_every_file_and_reads_none(
    lake: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, uri = lake
    conn.execute("INSERT INTO ns.t VALUES (1, DATE '2024-01-01', 'a')")
    table = _definition(uri, _latest(conn))
    assert table is not None
    monkeypatch.setattr(managed, "metadata", lambda *a: pytest.fail("metadata read"))
    house = Lakehouse.open(uri)
    assert not changes.changed_files(house.storage, table, table)


def test_an_insert_adds_its_files_only(lake: tuple[Any, str]) -> None:
    conn, uri = lake
    conn.execute("INSERT INTO ns.t VALUES (1, DATE '2024-01-01', 'a'), (2, DATE '2024-01-02', 'b')")
    before = _latest(conn)
    conn.execute("INSERT INTO ns.t VALUES (3, DATE '2024-01-01', 'c')")
    old, new = _definition(uri, before), _definition(uri, before + 1)
    storage = Lakehouse.open(uri).storage
    found = changes.changed_files(storage, old, new)
    assert found.removed == ()
    assert len(found.added) == 1 and found.added[0].startswith("day=2024-01-01/")
    assert new is not None
    removed, added = changes.changed_rows(storage, old, new, found, new)
    assert removed.num_rows == 0
    assert added.to_pylist() == [{"id": 3, "day": pa.scalar(19723, pa.date32()).as_py(), "v": "c"}]
    # A table that did not exist: every file is added.
    assert len(changes.changed_files(storage, None, new).added) == 3
    assert len(changes.changed_files(storage, new, None).removed) == 3


def test_a_delete_removes_one_file_and_adds_its_rewrite(
    lake: tuple[Any, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn, uri = lake
    conn.execute("INSERT INTO ns.t VALUES (1, DATE '2024-01-01', 'a'), (2, DATE '2024-01-01', 'b')")
    conn.execute("INSERT INTO ns.t VALUES (3, DATE '2024-01-02', 'c')")
    before = _latest(conn)
    conn.execute("DELETE FROM ns.t WHERE id = 2")
    old, new = _definition(uri, before), _definition(uri, before + 1)
    assert new is not None
    storage = Lakehouse.open(uri).storage
    found = changes.changed_files(storage, old, new)
    assert len(found.removed) == 1 and len(found.added) == 1
    read: list[str] = []
    original = reader.read_referenced

    def counting(storage: Any, path: str, referrer: str) -> bytes:
        read.append(path)
        return original(storage, path, referrer)

    monkeypatch.setattr(reader, "read_referenced", counting)
    removed, added = changes.changed_rows(storage, old, new, found, new)
    assert sorted(removed.column("id").to_pylist()) == [1, 2]
    assert added.column("id").to_pylist() == [1]
    assert len(read) == 2  # the day=2024-01-02 file is not read


def test_rows_are_laid_out_as_the_chosen_definition_by_column_id(lake: tuple[Any, str]) -> None:
    conn, uri = lake
    conn.execute("INSERT INTO ns.t VALUES (1, DATE '2024-01-01', 'a')")
    first = _latest(conn)
    conn.execute("ALTER TABLE ns.t DROP COLUMN v")
    conn.execute("ALTER TABLE ns.t ADD COLUMN v VARCHAR")  # another column: a new ID
    conn.execute("ALTER TABLE ns.t ALTER COLUMN id TYPE INT8")
    last = _definition(uri, _latest(conn))
    assert last is not None
    storage = Lakehouse.open(uri).storage
    found = changes.changed_files(storage, None, _definition(uri, first))
    _, added = changes.changed_rows(storage, None, _definition(uri, first), found, last)
    assert added.schema == changes.change_schema(last)
    assert added.column("id").to_pylist() == [1]
    assert added.column("v").to_pylist() == [None]  # the old v's value does not come back
