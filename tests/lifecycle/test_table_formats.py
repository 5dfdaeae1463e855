"""Garbage collection follows table formats to their data files through a registry."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import trinity_dbapi
from trinity_dbapi.errors import NotSupportedError
from trinity_dbapi.format.definitions import TableDefinition
from trinity_dbapi.lakehouse import Lakehouse, table_formats
from trinity_dbapi.storage import Storage


def _files(lake: Lakehouse) -> set[str]:
    return {p for p, _ in lake.storage.list_with_times("")}


def test_a_process_that_never_imported_tables_keeps_managed_data(tmp_path: Path) -> None:
    uri = str(tmp_path / "lake")
    cur = trinity_dbapi.connect(uri, autocommit=True).cursor()
    cur.execute("CREATE NAMESPACE ns").execute("CREATE TABLE ns.t (v INT4)")
    cur.execute("INSERT INTO ns.t VALUES (1), (2)")
    data = {p for p in _files(Lakehouse.open(uri)) if p.endswith(".parquet")}
    assert data
    # Only the lakehouse layer is imported: the managed format is found
    # through its entry point, never by naming trinity_dbapi.tables.
    script = textwrap.dedent(
        f"""
        import sys
        from trinity_dbapi.lakehouse import Lakehouse
        lake = Lakehouse.open({uri!r})
        assert not [m for m in sys.modules if m.startswith("trinity_dbapi.tables")]
        result = lake.collect_garbage(grace_period_millis=0)
        print("\\n".join(result.deleted))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert not data & set(done.stdout.split())
    assert data <= _files(Lakehouse.open(uri))
    assert cur.execute("SELECT v FROM ns.t ORDER BY v").fetchall() == [(1,), (2,)]


@pytest.fixture
def custom_format() -> Iterator[str]:
    name = f"custom-{uuid.uuid4().hex[:8]}"
    yield name
    table_formats._registry.pop(name, None)
    table_formats._file_rules.pop(name, None)


def _lake_with_table(tmp_path: Path, table_format: str) -> Lakehouse:
    lake = Lakehouse.create(str(tmp_path / "lake"))
    with lake.begin() as txn:
        txn.create_namespace("ns")
        txn.create_table(
            "ns", TableDefinition("t", table_format=table_format, format_properties={"f": "d.bin"})
        )
    lake.storage.write("d.bin", b"data")
    lake.storage.write("orphan.bin", b"garbage")
    return lake


def test_a_registered_format_is_followed(tmp_path: Path, custom_format: str) -> None:
    def referenced(storage: Storage, table: TableDefinition) -> set[str]:
        return {table.format_properties["f"]}

    def group_of(path: str) -> tuple[str, int] | None:
        return ("g", 0) if path.endswith(".bin") else None

    def ownership(table: TableDefinition, root_uri: str) -> table_formats.Ownership:
        return table_formats.Ownership(groups=frozenset({"g"}))

    table_formats.register_table_format(custom_format, referenced)
    table_formats.register_file_rules(custom_format, table_formats.FileRules(group_of, ownership))
    lake = _lake_with_table(tmp_path, custom_format)
    lake.storage.write("notes.txt", b"another program's file")
    result = lake.collect_garbage(grace_period_millis=0)
    assert result.deleted == ["orphan.bin"]
    assert {"d.bin", "notes.txt"} <= _files(lake)
    assert result.foreign == 1


def test_a_format_without_file_rules_loses_no_file(tmp_path: Path, custom_format: str) -> None:
    # It says what a table reaches, not which names it writes: garbage
    # collection cannot tell its orphans from another program's files.
    table_formats.register_table_format(custom_format, lambda _s, t: {t.format_properties["f"]})
    lake = _lake_with_table(tmp_path, custom_format)
    result = lake.collect_garbage(grace_period_millis=0)
    assert result.deleted == [] and result.foreign == 1
    assert {"d.bin", "orphan.bin"} <= _files(lake)


def test_an_unknown_format_stops_garbage_collection(tmp_path: Path, custom_format: str) -> None:
    lake = _lake_with_table(tmp_path, custom_format)
    with pytest.raises(NotSupportedError, match="register_table_format"):
        lake.collect_garbage(grace_period_millis=0)
    assert {"d.bin", "orphan.bin"} <= _files(lake)
