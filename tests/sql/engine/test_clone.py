"""CREATE TABLE ... CLONE: shared files, copy-on-write, garbage collection, O(1) cost.

docs/sql.md ("CREATE TABLE ... CLONE") and docs/datasets.md (decision 25):
a clone reads the source's files where they are; writes to either side
never show on the other; dropping either side and collecting garbage never
deletes a file the other still reads; cloning costs the same requests for
2 files or 200.
"""

from __future__ import annotations

from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.errors import (
    NoSuchTableError,
    NoSuchVersionError,
    NotSupportedError,
    ObjectExistsError,
    ProgrammingError,
    ReservedNamespaceError,
)
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.sql import model, statements
from trinity_dbapi.storage import Storage
from trinity_dbapi.storage.cache import shared_cache
from trinity_dbapi.tables import file_facts, managed

FAR_FUTURE = "TIMESTAMP '2999-01-01 00:00:00'"


def _connect(uri: str, options: dict[str, Any] | None = None) -> Any:
    return trinity_dbapi.connect(uri, storage_options=options or {}, autocommit=True)


def _rows(cur: Any, sql: str) -> list[tuple[Any, ...]]:
    cur.execute(sql)
    return cur.fetchall()


def _table(uri: str, options: dict[str, Any], name: str, namespace: str = "s") -> Any:
    lake = Lakehouse.open(uri, storage_options=options)
    return lake.begin(read_only=True).load_table(namespace, name)


def _files(uri: str, options: dict[str, Any], name: str, namespace: str = "s") -> dict[str, str]:
    """Label -> data file path of the newest version of ``namespace.name``."""
    lake = Lakehouse.open(uri, storage_options=options)
    table = lake.begin(read_only=True).load_table(namespace, name)
    return managed.metadata(lake.storage, table).files()


def _collect(cur: Any) -> list[tuple[Any, ...]]:
    """Expire every version but the newest, collect garbage at once; its result rows."""
    cur.execute(f"CALL system.expire_versions(older_than => {FAR_FUTURE}, retain_last => 1)")
    cur.execute("CALL system.collect_garbage(grace_period_millis => 0)")
    return list(cur.fetchall())


def _present(uri: str, options: dict[str, Any]) -> set[str]:
    return set(Lakehouse.open(uri, storage_options=options).storage.list(""))


def _source(cur: Any) -> None:
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.o (id INT8, k VARCHAR, day DATE) PARTITIONED BY (day)")
    cur.execute("CREATE INDEX by_k ON s.o (k)")
    cur.execute(
        "INSERT INTO s.o VALUES (1, 'x', DATE '2024-01-01'), (2, 'y', DATE '2024-01-02'), "
        "(3, 'x', DATE '2024-01-03')"
    )


ALL = "SELECT id, k, day FROM {} ORDER BY id"


def test_clone_reads_what_the_source_reads_and_shares_its_files(tmp_path: Any) -> None:
    uri = str(tmp_path / "lake")
    cur = _connect(uri).cursor()
    _source(cur)
    cur.execute("ALTER TABLE s.o ADD COLUMN n INT4")  # mixed file schemas are cloned too
    cur.execute("INSERT INTO s.o VALUES (4, 'z', DATE '2024-01-01', 40)")
    cur.execute("CREATE TABLE s.c CLONE s.o")
    source = _rows(cur, "SELECT * FROM s.o ORDER BY id")
    assert len(source) == 4
    assert _rows(cur, "SELECT * FROM s.c ORDER BY id") == source
    assert _rows(cur, "SELECT id FROM s.c WHERE k = 'x' ORDER BY id") == [(1,), (3,)]
    assert _rows(cur, "SELECT id FROM s.c WHERE day = DATE '2024-01-01' ORDER BY id") == [
        (1,),
        (4,),
    ]
    # The very same files, under the source's dataset; a dataset of its own.
    assert _files(uri, {}, "c") == _files(uri, {}, "o")
    clone, original = _table(uri, {}, "c"), _table(uri, {}, "o")
    assert clone.format_properties["dataset_uuid"] != original.format_properties["dataset_uuid"]
    assert clone.format_properties["shared_datasets"] == original.format_properties["dataset_uuid"]
    assert [c.id for c in clone.columns] == [c.id for c in original.columns]
    assert clone.partition_columns == ["day"]
    assert managed.indexes(clone) == {"by_k": "k"}
    assert _rows(cur, "SHOW CREATE TABLE s.c")[0][0].startswith('CREATE TABLE "s"."c" (')
    assert _rows(cur, "CALL system.check_integrity()") == [(None, None, "ok")]
    files = _rows(cur, "SELECT file FROM system.data_files WHERE table_name = 'c' ORDER BY 1")
    assert sorted(f for (f,) in files) == sorted(_files(uri, {}, "o").values())
    # The DuckDB bridge reads the clone through the same scan planning.
    import duckdb

    from trinity_dbapi.duckdb import attach

    duck = duckdb.connect()
    attach(duck, uri)
    assert duck.sql("SELECT * FROM s.c ORDER BY id").fetchall() == source


def test_writes_to_either_side_do_not_show_on_the_other(tmp_path: Any) -> None:
    uri = str(tmp_path / "lake")
    cur = _connect(uri).cursor()
    _source(cur)
    cur.execute("CREATE TABLE s.c CLONE s.o")
    shared = set(_files(uri, {}, "o").values())
    cur.execute("INSERT INTO s.c VALUES (10, 'c', DATE '2024-01-01')")
    cur.execute("UPDATE s.c SET k = 'cc' WHERE id = 1")
    cur.execute("DELETE FROM s.o WHERE id = 2")
    cur.execute("INSERT INTO s.o VALUES (20, 'o', DATE '2024-01-05')")
    cur.execute("ALTER TABLE s.c ADD COLUMN extra VARCHAR")
    assert _rows(cur, ALL.format("s.o")) == [
        (1, "x", _date(1)),
        (3, "x", _date(3)),
        (20, "o", _date(5)),
    ]
    assert _rows(cur, ALL.format("s.c")) == [
        (1, "cc", _date(1)),
        (2, "y", _date(2)),
        (3, "x", _date(3)),
        (10, "c", _date(1)),
    ]
    assert [r[0] for r in _rows(cur, "DESCRIBE s.o")] == ["id", "k", "day"]
    # Compaction of the clone rewrites its files under its own dataset.
    cur.execute("CALL system.rewrite_data_files('s.c')")
    clone_uuid = _table(uri, {}, "c").format_properties["dataset_uuid"]
    (merged,) = [p for p in _files(uri, {}, "c").values() if "day=2024-01-01" in p]
    assert merged.startswith(f"{clone_uuid}/table/")
    assert _rows(cur, "SELECT id FROM s.c WHERE k = 'x'") == [(3,)]
    present = _present(uri, {})
    assert shared <= present  # nothing of the source was changed or deleted
    assert _rows(cur, ALL.format("s.o"))[-1] == (20, "o", _date(5))


def _date(day: int) -> Any:
    import datetime

    return datetime.date(2024, 1, day)


def test_dropping_the_source_keeps_every_file_the_clone_reads(
    backend: tuple[str, dict[str, Any]],
) -> None:
    uri, options = backend
    cur = _connect(uri, options).cursor()
    _source(cur)
    cur.execute("CREATE TABLE s.c CLONE s.o")
    cur.execute("INSERT INTO s.c VALUES (10, 'c', DATE '2024-01-09')")
    source_uuid = _table(uri, options, "o").format_properties["dataset_uuid"]
    expected = _rows(cur, ALL.format("s.c"))
    cur.execute("DROP TABLE s.o")
    deleted = _collect(cur)
    assert deleted[0][0] > 0  # the source's metadata and index files went
    assert _rows(cur, ALL.format("s.c")) == expected
    assert _rows(cur, "SELECT id FROM s.c WHERE k = 'x' ORDER BY id") == [(1,), (3,)]
    assert _rows(cur, "CALL system.check_integrity()") == [(None, None, "ok")]
    present = _present(uri, options)
    assert set(_files(uri, options, "c").values()) <= present
    assert not any(p.startswith(f"{source_uuid}/metadata/") for p in present)
    # A file of the source the clone no longer reads is collected too: the
    # clone owns the source's dataset now that the source is gone.
    day_one = next(p for p in _files(uri, options, "c").values() if "day=2024-01-01" in p)
    cur.execute("DELETE FROM s.c WHERE id = 1")
    _collect(cur)
    assert day_one not in _present(uri, options)
    assert [r[0] for r in _rows(cur, ALL.format("s.c"))] == [2, 3, 10]


def test_dropping_the_clone_never_deletes_the_sources_files(tmp_path: Any) -> None:
    uri = str(tmp_path / "lake")
    cur = _connect(uri).cursor()
    _source(cur)
    cur.execute("CREATE TABLE s.c CLONE s.o")
    cur.execute("DELETE FROM s.c WHERE id = 1")  # the clone stops reading one shared file
    cur.execute("INSERT INTO s.c VALUES (10, 'c', DATE '2024-01-09')")
    clone_uuid = _table(uri, {}, "c").format_properties["dataset_uuid"]
    expected = _rows(cur, ALL.format("s.o"))
    cur.execute("DROP TABLE s.c")
    _collect(cur)
    present = _present(uri, {})
    assert set(_files(uri, {}, "o").values()) <= present
    assert not any(p.startswith(clone_uuid) for p in present)  # the clone's own files went
    assert _rows(cur, ALL.format("s.o")) == expected
    assert _rows(cur, "CALL system.check_integrity()") == [(None, None, "ok")]


def test_clone_of_a_clone_outlives_both(tmp_path: Any) -> None:
    uri = str(tmp_path / "lake")
    cur = _connect(uri).cursor()
    _source(cur)
    cur.execute("CREATE TABLE s.c1 CLONE s.o")
    cur.execute("INSERT INTO s.c1 VALUES (10, 'c', DATE '2024-01-09')")
    cur.execute("CREATE TABLE s.c2 CLONE s.c1")
    c2 = _table(uri, {}, "c2")
    owners = {_table(uri, {}, t).format_properties["dataset_uuid"] for t in ("o", "c1")}
    assert set(c2.format_properties["shared_datasets"].split(",")) == owners
    expected = _rows(cur, ALL.format("s.c1"))
    cur.execute("DROP TABLE s.o")
    cur.execute("DROP TABLE s.c1")
    _collect(cur)
    assert _rows(cur, ALL.format("s.c2")) == expected
    assert _rows(cur, "CALL system.check_integrity()") == [(None, None, "ok")]


def test_time_travel_clone(tmp_path: Any) -> None:
    uri = str(tmp_path / "lake")
    cur = _connect(uri).cursor()
    _source(cur)
    (version,) = _rows(cur, "SELECT max(version) FROM system.versions")[0]
    cur.execute("CALL system.export_snapshot(name => 'before')")
    cur.execute("DELETE FROM s.o WHERE id = 1")
    cur.execute("CREATE TABLE s.by_number CLONE s.o FOR SYSTEM_VERSION AS OF ?", [version])
    cur.execute("CREATE TABLE s.by_name CLONE s.o FOR SYSTEM_VERSION AS OF 'before'")
    cur.execute("CREATE TABLE s.now CLONE s.o")
    then = [(1,), (2,), (3,)]
    assert _rows(cur, "SELECT id FROM s.by_number ORDER BY id") == then
    assert _rows(cur, "SELECT id FROM s.by_name ORDER BY id") == then
    assert _rows(cur, "SELECT id FROM s.now ORDER BY id") == [(2,), (3,)]
    # The old version's files are the clone's now: expiring it keeps them.
    cur.execute("DROP TABLE s.o")
    _collect(cur)
    assert _rows(cur, "SELECT id FROM s.by_number ORDER BY id") == then


def test_if_not_exists_other_namespace_and_transactions(tmp_path: Any) -> None:
    uri = str(tmp_path / "lake")
    con = _connect(uri)
    cur = con.cursor()
    _source(cur)
    cur.execute("CREATE TABLE audit_copy CLONE s.o")  # "default" is created on first use
    cur.execute("CREATE NAMESPACE audit")
    cur.execute("CREATE TABLE audit.o CLONE s.o")
    assert _rows(cur, "SELECT count(*) FROM audit.o") == [(3,)]
    assert _rows(cur, "SELECT count(*) FROM default.audit_copy") == [(3,)]
    cur.execute("INSERT INTO audit.o VALUES (9, 'q', DATE '2024-02-01')")
    cur.execute("CREATE TABLE IF NOT EXISTS audit.o CLONE s.o")  # left unchanged
    cur.execute("CREATE TABLE IF NOT EXISTS audit.o CLONE s.missing")  # the source is not read
    assert _rows(cur, "SELECT count(*) FROM audit.o") == [(4,)]
    # In one transaction: clone a table created and filled in it; rollback leaves nothing.
    con.autocommit = False
    cur.execute("CREATE TABLE s.t (a INT8)")
    cur.execute("INSERT INTO s.t VALUES (1), (2)")
    cur.execute("CREATE TABLE s.t2 CLONE s.t")
    assert _rows(cur, "SELECT sum(a) FROM s.t2") == [(3,)]
    con.rollback()
    assert _rows(cur, "SHOW TABLES IN s") == [("o",)]


@pytest.mark.parametrize(
    ("sql", "error", "words"),
    [
        ("CREATE TABLE s.c CLONE s.missing", NoSuchTableError, "s.missing"),
        ("CREATE TABLE s.c CLONE nowhere.o", NoSuchTableError, "nowhere.o"),
        ("CREATE TABLE s.c CLONE s.v", ProgrammingError, "is a view"),
        ("CREATE TABLE s.c CLONE system.tables", NotSupportedError, "catalog table"),
        ("CREATE TABLE s.o CLONE s.o", ObjectExistsError, "s.o"),
        ("CREATE TABLE system.c CLONE s.o", ReservedNamespaceError, "system"),
        ("CREATE TABLE s.c CLONE s.o FOR SYSTEM_VERSION AS OF 999", NoSuchVersionError, "999"),
        ("CREATE TABLE s.c CLONE s.o FOR SYSTEM_VERSION AS OF 'nope'", NoSuchVersionError, "nope"),
    ],
)
def test_bad_clones_are_refused_and_change_nothing(
    tmp_path: Any, sql: str, error: type[Exception], words: str
) -> None:
    uri = str(tmp_path / "lake")
    cur = _connect(uri).cursor()
    _source(cur)
    cur.execute("CREATE VIEW s.v AS SELECT 1 AS a")
    (before,) = _rows(cur, "SELECT max(version) FROM system.versions")[0]
    with pytest.raises(error) as caught:
        cur.execute(sql)
    assert words in str(caught.value)
    assert _rows(cur, "SELECT max(version) FROM system.versions") == [(before,)]
    assert _rows(cur, "SHOW TABLES IN s") == [("o",)]


def test_a_referenced_import_is_not_cloned() -> None:
    from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
    from trinity_dbapi.tables.clones import clone_table

    referenced = TableDefinition(
        "r",
        [Column(1, "a", DataType("int8"))],
        table_format=managed.TABLE_FORMAT,
        format_properties={
            managed.DATASET_UUID: "u",
            managed.METADATA_LOCATION: "u/metadata/x",
            managed.EXTERNAL_LOCATION: "file:///elsewhere/",
        },
    )
    with pytest.raises(NotSupportedError, match=r"CREATE TABLE \.\.\. AS SELECT \* FROM s\.r"):
        clone_table(None, referenced, "c", "s.r")  # type: ignore[arg-type]
    external = referenced.replace(table_format="parquet", format_properties={"location": "x"})
    assert clone_table(None, external, "c", "s.r") == external.replace(name="c")  # type: ignore[arg-type]


def _clone_cost(uri: str, files: int, monkeypatch: pytest.MonkeyPatch) -> Any:
    con = _connect(uri)
    cur = con.cursor()
    cur.execute("CREATE TABLE o (id INT8, p INT8) PARTITIONED BY (p)")
    cur.execute(f"INSERT INTO o SELECT i, i FROM range({files}) t(i)")
    assert len(_files(uri, {}, "o", "default")) == files
    con.close()
    # A fresh process: nothing of the source is cached.
    shared_cache().clear()
    managed.forget_metadata()
    with file_facts._lock:
        file_facts._cache.clear()
        file_facts._bounds.clear()
    # A latency on every request makes the rounds what waits on what, not timing.
    monkeypatch.setattr(Storage, "latency", 0.01)
    con = _connect(uri)
    con.execute("SELECT count(*) FROM system.tables").fetchall()  # opened, version known
    before = con.storage_stats
    con.execute("CREATE TABLE c CLONE o")
    used = con.storage_stats.since(before)
    assert con.execute("SELECT count(*) FROM c").fetchall() == [(files,)]
    con.close()
    monkeypatch.undo()
    return used


def test_cloning_costs_the_same_for_2_files_and_200(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = _clone_cost(f"memory://clone-small-{tmp_path.name}/lake", 2, monkeypatch)
    big = _clone_cost(f"memory://clone-big-{tmp_path.name}/lake", 200, monkeypatch)
    assert big.lists == small.lists == 0
    assert (big.reads, big.writes, big.creates, big.exists) == (
        small.reads,
        small.writes,
        small.creates,
        small.exists,
    ), (small, big)
    assert big.rounds == small.rounds
    assert big.requests <= 20, big
    print(f"clone of 2 files: {small}\nclone of 200 files: {big}")


def test_a_clones_dataset_imports_by_copy_not_by_reference(tmp_path: Any) -> None:
    """Kartothek's view of a clone, imported: copied works, referenced is refused clearly."""
    from trinity_dbapi.errors import DataError

    uri = str(tmp_path / "lake")
    cur = _connect(uri).cursor()
    _source(cur)
    cur.execute("CREATE TABLE s.c CLONE s.o")
    cur.execute("INSERT INTO s.c VALUES (10, 'c', DATE '2024-01-09')")
    clone_uuid = _table(uri, {}, "c").format_properties["dataset_uuid"]
    other = _connect(str(tmp_path / "other")).cursor()
    call = "CALL system.import_kartothek(table => ?, location => ?, dataset_uuid => ?, mode => ?)"
    with pytest.raises(DataError, match=r"another dataset's folder.*mode => 'copy'"):
        other.execute(call, ["referenced", uri, clone_uuid, "reference"])
    other.execute(call, ["copied", uri, clone_uuid, "copy"])
    assert _rows(other, "SELECT id, k, day FROM copied ORDER BY id") == _rows(
        cur, ALL.format("s.c")
    )


@pytest.mark.parametrize(
    ("sql", "params", "expected"),
    [
        (
            "CREATE TABLE a.c CLONE b.o",
            (),
            model.CreateTableClone(
                model.TableName("a", "c"), model.TableName("b", "o"), None, False
            ),
        ),
        (
            "create table if not exists C clone O for system_version as of ?",
            (7,),
            model.CreateTableClone(
                model.TableName(None, "c"),
                model.TableName(None, "o"),
                model.AsOf("version", 7),
                True,
            ),
        ),
        (
            "CREATE TABLE c CLONE o FOR SYSTEM_VERSION AS OF 'eod'",
            (),
            model.CreateTableClone(
                model.TableName(None, "c"),
                model.TableName(None, "o"),
                model.AsOf("export", "eod"),
                False,
            ),
        ),
    ],
)
def test_the_statement_model(sql: str, params: tuple[Any, ...], expected: Any) -> None:
    (parsed,) = statements.parse(sql)
    assert statements.to_statement(parsed, params) == expected


def test_a_clone_names_one_table_with_one_time_travel_clause() -> None:
    from trinity_dbapi.errors import SQLSyntaxError

    with pytest.raises(SQLSyntaxError):
        statements.parse("CREATE TABLE c CLONE")
    with pytest.raises(ProgrammingError, match="FOR SYSTEM_VERSION AS OF"):
        statements.parse("CREATE TABLE c CLONE o FOR SYSTEM_VERSION AS OF 1.5")
