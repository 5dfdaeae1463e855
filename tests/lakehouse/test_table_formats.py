"""Garbage collection follows table formats to their data files through a registry."""

from __future__ import annotations

import configparser
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from importlib.metadata import entry_points
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
        result = lake.maintenance.collect_garbage(grace_period_millis=0)
        print("\\n".join(result.deleted))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert not data & set(done.stdout.split())
    assert data <= _files(Lakehouse.open(uri))
    assert cur.execute("SELECT v FROM ns.t ORDER BY v").fetchall() == [(1,), (2,)]


#: Run first in a fresh process: the installed entry points are out of reach, so
#: only what the process imports registers the managed table format.
_NO_ENTRY_POINTS = """
from trinity_dbapi.lakehouse import table_formats
table_formats.entry_points = lambda **_: []
"""


def _run(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _NO_ENTRY_POINTS + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_the_registration_registers_every_hook() -> None:
    # All four together: the lakehouse loads an entry point only for a format
    # it knows no hook of, so one left out would be missed without an error.
    _run(
        """
        from trinity_dbapi.errors import NotSupportedError
        from trinity_dbapi.tables import data_files, file_rules, kartothek_main, managed
        name = managed.TABLE_FORMAT
        try:  # the hooks' own modules register nothing
            table_formats.referenced_files_of(name)
            raise SystemExit("registered before the registration was imported")
        except NotSupportedError:
            pass
        import trinity_dbapi.tables.registration
        assert table_formats.referenced_files_of(name) is file_rules.referenced_files
        rules = table_formats.file_rules()[name]
        assert (rules.group_of, rules.ownership, rules.read_from) == (
            file_rules.group_of, file_rules.ownership, managed.read_from
        )
        publish = (kartothek_main.publish, kartothek_main.published_files)
        assert table_formats.derived_files_of(name) == publish
        assert table_formats.data_files_of(name) is data_files.describe_files
        """
    )


def test_a_connection_registers_the_format_before_its_first_commit(tmp_path: Path) -> None:
    # Without the entry point, only the SQL engine's own import registers it:
    # the commit publishes the derived file, system.data_files lists the
    # file, and garbage collection knows the dataset is the lakehouse's.
    uri = str(tmp_path / "lake")
    out = _run(
        f"""
        import trinity_dbapi
        cur = trinity_dbapi.connect({uri!r}, autocommit=True).cursor()
        cur.execute("CREATE NAMESPACE ns").execute("CREATE TABLE ns.t (v INT4)")
        cur.execute("INSERT INTO ns.t VALUES (1), (2)")
        print(cur.execute("SELECT count(*) FROM system.data_files").fetchall()[0][0])
        result = cur.connection.lakehouse.maintenance.collect_garbage(grace_period_millis=0)
        print(result.foreign)
        print("\\n".join(result.deleted))
        """
    )
    count, foreign, *deleted = out.split("\n")
    assert (count, foreign) == ("1", "0")  # our files are ours: none taken for another's
    files = _files(Lakehouse.open(uri))
    assert any(p.endswith(".by-dataset-metadata.json") and "/" not in p for p in files)
    data = {p for p in files if p.endswith(".parquet") and "/table/" in p}
    assert len(data) == 1 and not data & set(deleted)


def test_the_entry_point_is_the_registration() -> None:
    """setup.cfg names the module that registers every hook, and the installed metadata agrees."""
    config = configparser.ConfigParser()
    config.read(Path(trinity_dbapi.__file__).parent.parent / "setup.cfg", encoding="utf-8")
    declared = config["options.entry_points"][table_formats.ENTRY_POINT_GROUP].split()
    assert declared == ["kartothek", "=", "trinity_dbapi.tables.registration:referenced_files"]
    installed = entry_points(group=table_formats.ENTRY_POINT_GROUP, name="kartothek")
    assert [e.value for e in installed] == [declared[2]], "reinstall: pip install -e ."


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
    result = lake.maintenance.collect_garbage(grace_period_millis=0)
    assert result.deleted == ["orphan.bin"]
    assert {"d.bin", "notes.txt"} <= _files(lake)
    assert result.foreign == 1


def test_a_format_without_file_rules_loses_no_file(tmp_path: Path, custom_format: str) -> None:
    # It says what a table reaches, not which names it writes: garbage
    # collection cannot tell its orphans from another program's files.
    table_formats.register_table_format(custom_format, lambda _s, t: {t.format_properties["f"]})
    lake = _lake_with_table(tmp_path, custom_format)
    result = lake.maintenance.collect_garbage(grace_period_millis=0)
    assert result.deleted == [] and result.foreign == 1
    assert {"d.bin", "orphan.bin"} <= _files(lake)


def test_an_unknown_format_stops_garbage_collection(tmp_path: Path, custom_format: str) -> None:
    lake = _lake_with_table(tmp_path, custom_format)
    with pytest.raises(NotSupportedError, match="register_table_format"):
        lake.maintenance.collect_garbage(grace_period_millis=0)
    assert {"d.bin", "orphan.bin"} <= _files(lake)
