"""``CALL system.import_kartothek(...)`` (issue 18, item 3): a table from a Kartothek dataset.

plateau (the maintained fork of Kartothek, in the test extra) writes and
updates the datasets here as a pipeline would; the imported table must read
back exactly what plateau's ``read_table`` reads, keep the partitioning and
the secondary indices, and cost one commit. Kartothek 5.3.0 itself writes the
dataset of tests/kartothek/test_kartothek_import.py.
"""

from __future__ import annotations

import datetime
import json
import shutil
from functools import partial
from pathlib import Path
from typing import Any

import hypothesis
import hypothesis.strategies as st
import pytest

import trinity_dbapi
from trinity_dbapi.errors import (
    DataError,
    NoSuchObjectError,
    NotSupportedError,
    ObjectExistsError,
    ProgrammingError,
    ReadOnlyError,
)
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.tables import managed

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")
eager = pytest.importorskip("plateau.io.eager", reason="plateau (the test extra) is not installed")
minimalkv = pytest.importorskip("minimalkv", reason="minimalkv comes with plateau")


def _frame(ids: range, day: str) -> Any:
    return pd.DataFrame(
        {
            "id": pd.array(list(ids), dtype="int64"),
            "p": [("a", "b", "c")[i % 3] for i in ids],
            "d": pd.to_datetime([day] * len(ids)).date,
            "k": [f"k{i % 4}" for i in ids],
            "v": [np.nan if i % 5 == 0 else i * 1.5 for i in ids],
            "name": [None if i % 7 == 0 else f"n{i}" for i in ids],
            "ts": pd.to_datetime([f"{day} 10:30:00"] * len(ids)).tz_localize("Europe/Berlin"),
            "flag": [i % 2 == 0 for i in ids],
        }
    )


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset ``ds`` partitioned on ``p``, indexed on ``k``, then updated twice."""
    root = tmp_path_factory.mktemp("kartothek-store")
    kv = partial(minimalkv.get_store_from_url, f"hfs://{root}")
    eager.store_dataframes_as_dataset(
        store=kv,
        dataset_uuid="ds",
        dfs=[_frame(range(20), "2024-01-01")],
        partition_on=["p"],
        secondary_indices=["k"],
    )
    eager.update_dataset_from_dataframes(
        [_frame(range(20, 30), "2024-01-02")], store=kv, dataset_uuid="ds", partition_on=["p"]
    )
    eager.update_dataset_from_dataframes(
        [_frame(range(30, 33), "2024-01-03")],
        store=kv,
        dataset_uuid="ds",
        partition_on=["p"],
        delete_scope=[{"p": "c"}],
    )
    return root


def _plateau_rows(store: Path) -> list[dict[str, Any]]:
    kv = partial(minimalkv.get_store_from_url, f"hfs://{store}")
    frame = eager.read_table(dataset_uuid="ds", store=kv)
    return sorted((_normal(r) for r in frame.to_dict("records")), key=lambda r: r["id"])


def _normal(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in row.items():
        if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NaT:
            value = None
        elif isinstance(value, pd.Timestamp):
            value = value.to_pydatetime().astimezone(datetime.timezone.utc)
        elif isinstance(value, datetime.datetime) and value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc)
        elif isinstance(value, np.generic):
            value = value.item()
        out[key] = value
    return out


def _select(cur: Any, sql: str) -> list[dict[str, Any]]:
    cur.execute(sql)
    names = [d[0] for d in cur.description]
    return sorted(
        (_normal(dict(zip(names, row, strict=True))) for row in cur.fetchall()),
        key=lambda r: r["id"],
    )


def _connect(root: Path, **kwargs: Any) -> Any:
    return trinity_dbapi.connect(str(root), create=True, autocommit=True, **kwargs)


IMPORT = "CALL system.import_kartothek(table => ?, location => ?, dataset_uuid => ?)"


def test_imported_table_reads_what_plateau_reads(store: Path, tmp_path: Path) -> None:
    conn = _connect(tmp_path / "lake")
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    before = Lakehouse.open(str(tmp_path / "lake")).snapshot().version
    cur.execute(IMPORT, ["s.t", str(store), "ds"])
    (row,) = cur.fetchall()
    names = [d[0] for d in cur.description]
    result = dict(zip(names, row, strict=True))
    expected = _plateau_rows(store)
    assert len(expected) == 23  # 33 written; the 10 rows of partition c before the delete went
    assert result["table_name"] == "s.t" and result["dataset_uuid"] == "ds"
    assert result["mode"] == "copy" and result["rows"] == 23
    assert result["indexed_columns"] == ["k"]
    assert result["version"] == before + 1  # one commit
    assert Lakehouse.open(str(tmp_path / "lake")).snapshot().version == before + 1

    got = _select(cur, "SELECT * FROM s.t")
    assert got == expected
    # The columns keep their types; the partitioning and the index are the table's own.
    cur.execute("DESCRIBE s.t")
    types = {r[0]: r[1] for r in cur.fetchall()}
    assert types == {
        "id": "int8",
        "p": "varchar",
        "d": "date",
        "k": "varchar",
        "v": "float8",
        "name": "varchar",
        "ts": types["ts"],
        "flag": "boolean",
    }
    assert types["ts"].startswith("timestamptz")
    definition = Lakehouse.open(str(tmp_path / "lake")).begin(read_only=True).load_table("s", "t")
    assert definition.partition_columns == ["p"]
    assert managed.indexes(definition) == {"k": "k"}
    assert _select(cur, "SELECT * FROM s.t WHERE k = 'k1'") == [
        r for r in expected if r["k"] == "k1"
    ]
    assert _select(cur, "SELECT * FROM s.t WHERE p = 'c'") == [r for r in expected if r["p"] == "c"]
    # The version before the import has no such table.
    cur.execute(
        f"SELECT count(*) FROM system.tables FOR SYSTEM_VERSION AS OF {before} "
        "WHERE namespace_name = 's'"
    )
    assert cur.fetchone() == (0,)
    conn.close()


def test_imported_table_is_an_ordinary_table(store: Path, tmp_path: Path) -> None:
    """Written, indexed and published for Kartothek like a table made by CREATE TABLE."""
    conn = _connect(tmp_path / "lake")
    cur = conn.cursor()
    cur.execute(IMPORT, ["t", str(store), "ds"])  # no dot: the session's namespace
    expected = _plateau_rows(store)
    cur.execute("UPDATE t SET v = -1 WHERE k = 'k2'")
    cur.execute("DELETE FROM t WHERE p = 'b'")
    cur.execute(
        "INSERT INTO t (id, p, d, k, v, name, ts, flag) VALUES (100, 'z', DATE '2024-02-01', 'k9', 9.5, 'new', "
        "TIMESTAMPTZ '2024-02-01 00:00:00+00', true)"
    )
    for r in expected:
        if r["k"] == "k2":
            r["v"] = -1.0
    model = [r for r in expected if r["p"] != "b"]
    got = _select(cur, "SELECT * FROM t WHERE id < 100")
    assert got == model
    assert _select(cur, "SELECT id FROM t WHERE k = 'k9'") == [{"id": 100}]
    # Kartothek's main metadata file was derived for the new table too.
    definition = (
        Lakehouse.open(str(tmp_path / "lake")).begin(read_only=True).load_table("default", "t")
    )
    uuid = definition.format_properties[managed.DATASET_UUID]
    main = json.loads((tmp_path / "lake" / f"{uuid}.by-dataset-metadata.json").read_text())
    assert main["partition_keys"] == ["p"] and "k" in main["indices"]
    conn.close()


def test_our_own_table_imports_through_its_derived_file(tmp_path: Path) -> None:
    """A lakehouse root is a Kartothek store: a table copies into another lakehouse."""
    conn = _connect(tmp_path / "a")
    cur = conn.cursor()
    cur.execute("CREATE TABLE src (id INT8, day DATE, x DECIMAL(10, 2)) PARTITIONED BY (day)")
    cur.execute("CREATE INDEX by_x ON src (x)")
    cur.execute(
        "INSERT INTO src VALUES (1, DATE '2024-01-01', 1.50), (2, DATE '2024-01-02', NULL), "
        "(3, NULL, 3.25)"
    )
    expected = _select(cur, "SELECT * FROM src")
    definition = (
        Lakehouse.open(str(tmp_path / "a")).begin(read_only=True).load_table("default", "src")
    )
    uuid = definition.format_properties[managed.DATASET_UUID]
    conn.close()
    other = _connect(tmp_path / "b")
    cur = other.cursor()
    cur.execute(IMPORT, ["copy_of_src", str(tmp_path / "a"), uuid])
    assert _select(cur, "SELECT * FROM copy_of_src") == expected
    cur.execute("DESCRIBE copy_of_src")
    assert [(r[0], r[1]) for r in cur.fetchall()] == [
        ("id", "int8"),
        ("day", "date"),
        ("x", "decimal(10,2)"),
    ]
    other.close()


def test_both_modes_on_every_backend(store: Path, backend: tuple[str, dict[str, Any]]) -> None:
    """The store beside the lakehouse, on its backend; S3 with the lakehouse's credentials."""
    from trinity_dbapi.storage import open_storage

    uri, options = backend
    store_uri = uri.rpartition("/")[0] + "/store"
    target = open_storage(store_uri, storage_options=options)
    for path in store.rglob("*"):
        if path.is_file():
            target.write(str(path.relative_to(store)), path.read_bytes())
    target.close()
    expected = _plateau_rows(store)
    conn = trinity_dbapi.connect(uri, storage_options=options, create=True, autocommit=True)
    cur = conn.cursor()
    cur.execute(IMPORT, ["copied", store_uri, "ds"])
    cur.execute(REFERENCE, ["referenced", store_uri, "ds"])
    assert _select(cur, "SELECT * FROM copied") == expected
    assert _select(cur, "SELECT * FROM referenced") == expected
    assert _select(cur, "SELECT * FROM referenced WHERE k = 'k0'") == [
        r for r in expected if r["k"] == "k0"
    ]
    conn.close()
    # A new process's view (nothing cached): the referenced store opens from its URI.
    managed.forget_stores()
    with trinity_dbapi.connect(uri, storage_options=options) as again:
        assert _select(again.cursor(), "SELECT * FROM referenced") == expected


def test_errors_name_the_dataset_and_commit_nothing(store: Path, tmp_path: Path) -> None:
    root = tmp_path / "lake"
    conn = _connect(root)
    cur = conn.cursor()
    cur.execute("CREATE TABLE taken (x INT4)")
    version = Lakehouse.open(str(root)).snapshot().version

    with pytest.raises(NoSuchObjectError, match="Kartothek dataset 'nope' does not exist"):
        cur.execute(IMPORT, ["t", str(store), "nope"])
    with pytest.raises(ObjectExistsError, match="taken"):
        cur.execute(IMPORT, ["taken", str(store), "ds"])
    with pytest.raises(ProgrammingError, match="mode must be 'copy'"):
        cur.execute("CALL system.import_kartothek('t', ?, 'ds', mode => 'move')", [str(store)])
    with pytest.raises(NotSupportedError, match="Kartothek table 'other'"):
        cur.execute(
            "CALL system.import_kartothek('t', ?, 'ds', kartothek_table => 'other')", [str(store)]
        )
    with pytest.raises(ProgrammingError, match=r"catalog|reserved"):
        cur.execute(IMPORT, ["system.t", str(store), "ds"])
    with pytest.raises(ProgrammingError, match="dataset UUID"):
        cur.execute(IMPORT, ["t", str(store), "../ds"])
    with pytest.raises(ProgrammingError, match="needs the argument 'dataset_uuid'"):
        cur.execute("CALL system.import_kartothek('t', 'x')")

    # A corrupt metadata file: a DataError naming the dataset (not an InternalError).
    broken = tmp_path / "broken"
    shutil.copytree(store, broken)
    (broken / "ds.by-dataset-metadata.json").write_text('{"dataset_metadata_version": 4}')
    with pytest.raises(DataError, match="Kartothek dataset 'ds' cannot be imported"):
        cur.execute(IMPORT, ["t", str(broken), "ds"])
    # A data file gone: the same, after files were already copied.
    shutil.rmtree(broken)
    shutil.copytree(store, broken)
    main = json.loads((broken / "ds.by-dataset-metadata.json").read_text())
    # (plateau's delete_scope leaves files the metadata no longer names: pick a named one.)
    victim = broken / next(iter(main["partitions"].values()))["files"]["table"]
    victim.unlink()
    with pytest.raises(DataError, match="Kartothek dataset 'ds' cannot be imported"):
        cur.execute(IMPORT, ["t", str(broken), "ds"])

    assert Lakehouse.open(str(root)).snapshot().version == version
    cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 't'")
    assert cur.fetchone() == (0,)
    conn.close()
    with trinity_dbapi.connect(str(root), read_only=True) as ro, pytest.raises(ReadOnlyError):
        ro.cursor().execute(IMPORT, ["t", str(store), "ds"])


def test_import_refused_inside_a_transaction_with_changes(store: Path, tmp_path: Path) -> None:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), create=True)
    cur = conn.cursor()
    cur.execute("CREATE TABLE a (x INT4)")
    with pytest.raises(NotSupportedError, match="uncommitted changes"):
        cur.execute(IMPORT, ["t", str(store), "ds"])
    conn.rollback()
    # Outside one, it commits on its own, as every procedure does.
    cur.execute(IMPORT, ["t", str(store), "ds"])
    conn.rollback()
    other = trinity_dbapi.connect(str(tmp_path / "lake"))
    assert _select(other.cursor(), "SELECT * FROM t") == _plateau_rows(store)
    other.close()
    conn.close()


# -- mode => 'reference' --------------------------------------------------------------------

REFERENCE = (
    "CALL system.import_kartothek(table => ?, location => ?, dataset_uuid => ?, "
    "mode => 'reference')"
)


def _store_files(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in store.rglob("*") if p.is_file()}


def test_reference_reads_the_files_in_place(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    before_files = _store_files(copy)
    root = tmp_path / "lake"
    conn = _connect(root)
    cur = conn.cursor()
    cur.execute(REFERENCE, ["r", str(copy), "ds"])
    names = [d[0] for d in cur.description]
    result = dict(zip(names, cur.fetchone(), strict=True))
    expected = _plateau_rows(copy)
    main = json.loads((copy / "ds.by-dataset-metadata.json").read_text())
    assert result["mode"] == "reference" and result["rows"] is None
    assert result["files"] == len(main["partitions"]) and result["indexed_columns"] == ["k"]
    assert _select(cur, "SELECT * FROM r") == expected
    assert _select(cur, "SELECT * FROM r WHERE k = 'k3'") == [r for r in expected if r["k"] == "k3"]
    assert _select(cur, "SELECT * FROM r WHERE p = 'a'") == [r for r in expected if r["p"] == "a"]
    # No data file was copied: the lakehouse holds only the frozen metadata file.
    assert not list(root.rglob("*.parquet"))
    definition = Lakehouse.open(str(root)).begin(read_only=True).load_table("default", "r")
    assert managed.is_reference(definition)
    assert definition.format_properties[managed.EXTERNAL_LOCATION] == copy.as_uri() + "/"
    assert (root / definition.format_properties[managed.METADATA_LOCATION]).is_file()
    assert not (root / "ds.by-dataset-metadata.json").exists()  # nothing derived for it
    # The DuckDB bridge reads it too.
    duckdb = pytest.importorskip("duckdb")
    from trinity_dbapi.duckdb import attach

    con = duckdb.connect()
    attach(con, str(root))
    assert con.execute('SELECT count(*), sum(id) FROM "default".r').fetchone() == (
        len(expected),
        sum(r["id"] for r in expected),
    )

    # Changes of rows are refused, and nothing is ever written into the store.
    for sql in (
        "INSERT INTO r (id) VALUES (1)",
        "UPDATE r SET v = 0",
        "DELETE FROM r WHERE id = 1",
        "TRUNCATE TABLE r",
        "CREATE INDEX by_id ON r (id)",
        "CALL system.rewrite_data_files('r', min_input_files => 2)",
    ):
        with pytest.raises(NotSupportedError, match="mode => 'reference'"):
            cur.execute(sql)
    # system.data_files lists the files in the store, by URI, with their footers' counts.
    listed = cur.execute(
        "SELECT file, record_count FROM system.data_files WHERE table_name = 'r'"
    ).fetchall()
    assert len(listed) == len(main["partitions"])
    assert all(file.startswith(copy.as_uri() + "/ds/table/") for file, _ in listed)
    assert sum(count for _, count in listed) == len(expected)
    cur.execute("ALTER TABLE r ADD COLUMN note VARCHAR")  # the definition only
    assert _select(cur, "SELECT id, note FROM r WHERE id = 1") == [{"id": 1, "note": None}]
    cur.execute("CREATE TABLE own AS SELECT * FROM r")
    assert len(_select(cur, "SELECT * FROM own")) == len(expected)
    cur.execute("CALL system.check_integrity()")
    assert cur.fetchall() == [(None, None, "ok")]

    # The store changes after the import: the table keeps the state it referenced.
    kv = partial(minimalkv.get_store_from_url, f"hfs://{copy}")
    eager.update_dataset_from_dataframes(
        [_frame(range(40, 43), "2024-01-04")], store=kv, dataset_uuid="ds", partition_on=["p"]
    )
    assert _select(cur, "SELECT * FROM r") == [dict(r, note=None) for r in expected]

    # Garbage collection never deletes a file of the store, even the table's dropped.
    version = Lakehouse.open(str(root)).snapshot().version
    cur.execute("DROP TABLE r")
    cur.execute("CALL system.expire_versions(retain_last => 1)")
    cur.execute("CALL system.collect_garbage(grace_period_millis => 0)")
    after = _store_files(copy)
    # (plateau's update rewrote its main metadata file; every other file is untouched.)
    kept = {k: v for k, v in before_files.items() if not k.endswith("metadata.json")}
    assert {k: after.get(k) for k in kept} == kept
    assert version > 0
    conn.close()


def test_reference_to_deleted_files_fails_naming_them(store: Path, tmp_path: Path) -> None:
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    conn = _connect(tmp_path / "lake")
    cur = conn.cursor()
    main = json.loads((copy / "ds.by-dataset-metadata.json").read_text())
    first = next(iter(main["partitions"].values()))["files"]["table"]
    # Missing at import time: refused, nothing committed.
    (copy / first).rename(tmp_path / "aside.parquet")
    with pytest.raises(DataError, match=r"1 of the files its metadata names are not in the store"):
        cur.execute(REFERENCE, ["r", str(copy), "ds"])
    cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'r'")
    assert cur.fetchone() == (0,)
    (tmp_path / "aside.parquet").rename(copy / first)
    cur.execute(REFERENCE, ["r", str(copy), "ds"])
    # Deleted afterwards (someone ran Kartothek's garbage collection...): the
    # read fails with an error naming the file; check_integrity names it by URI.
    (copy / first).unlink()
    with pytest.raises(trinity_dbapi.Error, match=first.rpartition("/")[2]):
        cur.execute("SELECT * FROM r")
    cur.execute("CALL system.check_integrity()")
    problems = cur.fetchall()
    assert [(f, o) for f, o, _ in problems] == [(f"{copy.as_uri()}/{first}", "default.r")]
    assert problems[0][2] == "the file is missing"
    conn.close()


def test_reference_refuses_credentials_in_the_location(store: Path, tmp_path: Path) -> None:
    conn = _connect(tmp_path / "lake")
    cur = conn.cursor()
    with pytest.raises(ProgrammingError, match="credentials") as info:
        cur.execute(REFERENCE, ["r", "s3://AKIAEXAMPLE:s3cr3t@bucket/store", "ds"])
    assert "s3cr3t" not in str(info.value)
    conn.close()


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(
    table=st.text(max_size=12),
    location=st.one_of(
        st.text(max_size=30),
        st.sampled_from(["", "file://", "s3://", "memory://", "::", "/", ".", "x://y", "//"]),
    ),
    dataset_uuid=st.text(max_size=12),
    mode=st.sampled_from(["copy", "reference", "", "COPY"]),
)
def test_hostile_arguments_fail_cleanly(
    hostile_lake: Any, table: str, location: str, dataset_uuid: str, mode: str
) -> None:
    """Whatever the arguments: a PEP 249 error that is not InternalError, and no commit."""
    cur, version = hostile_lake
    sql = "CALL system.import_kartothek(?, ?, ?, mode => ?)"
    try:
        cur.execute(sql, [table, location, dataset_uuid, mode])
    except trinity_dbapi.Error as exc:
        assert not isinstance(exc, trinity_dbapi.InternalError), exc
    else:  # pragma: no cover - no hostile store holds a dataset
        raise AssertionError(f"imported {dataset_uuid!r} from {location!r}")
    root = cur.connection.lakehouse.storage.local_root
    assert Lakehouse.open(root).snapshot().version == version


@pytest.fixture(scope="module")
def hostile_lake(tmp_path_factory: pytest.TempPathFactory) -> Any:
    conn = _connect(tmp_path_factory.mktemp("hostile") / "lake")
    cur = conn.cursor()
    cur.execute("CREATE TABLE t0 (x INT4)")
    yield cur, Lakehouse.open(conn.lakehouse.storage.local_root).snapshot().version
    conn.close()


@pytest.mark.parametrize("metadata_format", ["json", "msgpack"])
@pytest.mark.parametrize("mode", ["copy", "reference"])
def test_plateau_pipeline_dataset_reads_like_plateau(
    tmp_path: Path, metadata_format: str, mode: str
) -> None:
    """Acceptance, plateau half: the pipeline dataset of tests/kartothek/pipeline_frames.py."""
    from tests.kartothek import pipeline_frames
    from tests.kartothek.rows_json import frame_rows, to_json
    from tests.tables.kartothek_sources import write_plateau_dataset

    store = tmp_path / "store"
    expected = frame_rows(write_plateau_dataset(store, "orders", metadata_format))
    assert [r["id"] for r in expected] == pipeline_frames.EXPECTED_IDS
    conn = _connect(tmp_path / "lake")
    cur = conn.cursor()
    cur.execute(
        "CALL system.import_kartothek('orders', ?, 'orders', mode => ?)", [str(store), mode]
    )
    columns = ", ".join(f'"{c}"' for c in pipeline_frames.TZ_COLUMNS)
    cur.execute(f"SELECT {columns} FROM orders ORDER BY id")
    got = [dict(zip(pipeline_frames.TZ_COLUMNS, map(to_json, row))) for row in cur.fetchall()]
    assert got == expected
    cur.execute("DESCRIBE orders")
    assert {r[0]: r[1] for r in cur.fetchall()}["tsz"].startswith("timestamptz")
    conn.close()


def test_progress_and_interrupt(store: Path, tmp_path: Path) -> None:
    """One task counted in source files; an interrupt stops the copy and commits nothing."""
    from trinity_dbapi.errors import QueryInterruptedError

    events: list[Any] = []
    root = tmp_path / "lake"
    conn = _connect(root, progress=events.append)
    cur = conn.cursor()
    cur.execute(IMPORT, ["t", str(store), "ds"])
    mine = [e for e in events if e.task == "import Kartothek dataset ds into default.t"]
    main = json.loads((store / "ds.by-dataset-metadata.json").read_text())
    assert mine[0].done == 0 and mine[-1].done == mine[-1].total == len(main["partitions"])
    assert [e.done for e in mine] == sorted(e.done for e in mine)
    assert all(e.unit == "files" for e in mine)

    def stop_after_the_first_file(event: Any) -> None:
        if event.task.startswith("import Kartothek") and event.done == 1:
            conn.interrupt()

    conn.progress = stop_after_the_first_file
    version = Lakehouse.open(str(root)).snapshot().version
    with pytest.raises(QueryInterruptedError):
        cur.execute(IMPORT, ["u", str(store), "ds"])
    conn.progress = None
    assert Lakehouse.open(str(root)).snapshot().version == version
    cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'u'")
    assert cur.fetchone() == (0,)
    conn.close()


def test_the_docs_example_runs(tmp_path: Path) -> None:
    """docs/datasets.md, "Importing a Kartothek dataset": its CALL, on a plateau store."""
    import re

    from tests.tables.kartothek_sources import write_plateau_dataset

    page = (Path(__file__).resolve().parents[3] / "docs" / "datasets.md").read_text()
    section = page.split("## Importing a Kartothek dataset", 1)[1]
    (sql,) = re.findall(r"```sql\n(.*?)```", section.split("\n### ", 1)[0], re.DOTALL)
    store = tmp_path / "kartothek"
    frame = write_plateau_dataset(store, "orders")
    assert "'/data/kartothek'" in sql
    conn = _connect(tmp_path / "lake")
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE sales")
    cur.execute(sql.replace("'/data/kartothek'", f"'{store}'"))
    names = [d[0] for d in cur.description]
    row = dict(zip(names, cur.fetchone(), strict=True))
    assert row["table_name"] == "sales.orders" and row["rows"] == len(frame)
    cur.execute("SELECT count(*) FROM sales.orders")
    assert cur.fetchone() == (len(frame),)
    conn.close()


# -- a source past a bound, or with a file of other columns (issue 29, items 4 to 6) ---------


def _with_metadata(store: Path, tmp_path: Path, name: str, data: bytes) -> Path:
    """A copy of ``store`` whose main metadata file is only ``name``, holding ``data``."""
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    (copy / "ds.by-dataset-metadata.json").unlink()
    (copy / name).write_bytes(data)
    return copy


def _msgpack_bomb() -> bytes:
    """A few kilobytes of zstd frames inflating to 6 GiB."""
    import pyarrow as pa

    return pa.Codec("zstd").compress(b"\0" * (16 << 20), asbytes=True) * 384


def _deep_json(store: Path) -> bytes:
    main = (store / "ds.by-dataset-metadata.json").read_text()
    deep = '"deep": ' + "[" * 100_000 + "]" * 100_000 + ", "
    return main.replace('"metadata": {', '"metadata": {' + deep, 1).encode()


def _garbage_partition_by(store: Path) -> bytes:
    main = json.loads((store / "ds.by-dataset-metadata.json").read_text())
    main["metadata"]["trinity.partition_by"] = "p"  # not JSON
    return json.dumps(main).encode()


SOURCE_METADATA = {
    "bomb": ("ds.by-dataset-metadata.msgpack.zstd", r"inflates to more than 268,435,456 bytes"),
    "deep": ("ds.by-dataset-metadata.json", r"nests maps and lists more than 100 levels deep"),
    "partition_by": ("ds.by-dataset-metadata.json", r"trinity\.partition_by must be a JSON list"),
}


@pytest.mark.parametrize("mode", ["copy", "reference"])
@pytest.mark.parametrize("case", sorted(SOURCE_METADATA))
def test_a_source_metadata_file_past_a_bound_is_a_data_error(
    store: Path, tmp_path: Path, case: str, mode: str
) -> None:
    """DataError naming the file: was 12.5 GB of memory, a NestingTooDeepError, an InternalError."""
    name, rule = SOURCE_METADATA[case]
    data = {"bomb": _msgpack_bomb, "deep": lambda: _deep_json(store)}.get(
        case, lambda: _garbage_partition_by(store)
    )()
    broken = _with_metadata(store, tmp_path, name, data)
    conn = _connect(tmp_path / "lake")
    cur = conn.cursor()
    version = Lakehouse.open(str(tmp_path / "lake")).snapshot().version
    sql = "CALL system.import_kartothek('t', ?, 'ds', mode => ?)"
    with pytest.raises(DataError, match=rf"Kartothek dataset 'ds'.*its file '{name}'.*{rule}"):
        cur.execute(sql, [str(broken), mode])
    assert Lakehouse.open(str(tmp_path / "lake")).snapshot().version == version
    conn.close()


def test_the_lakehouses_own_metadata_past_the_bound_is_corrupt(tmp_path: Path) -> None:
    """The split: the lakehouse's own file is CorruptFileError (docs/recovery.md), naming it."""
    from unittest import mock

    from trinity_dbapi.errors import CorruptFileError
    from trinity_dbapi.tables import metadata_io

    root = tmp_path / "lake"
    with _connect(root) as conn:
        conn.cursor().execute("CREATE TABLE t (x INT4)")
        conn.cursor().execute("INSERT INTO t VALUES (1)")
    definition = Lakehouse.open(str(root)).begin(read_only=True).load_table("default", "t")
    location = definition.format_properties[managed.METADATA_LOCATION]
    size = (root / location).stat().st_size
    managed.forget_metadata()
    with (
        mock.patch.object(metadata_io, "MAX_METADATA_BYTES", size - 1),
        trinity_dbapi.connect(str(root)) as conn,
        pytest.raises(CorruptFileError, match="the most a dataset metadata file may hold") as info,
    ):
        conn.cursor().execute("SELECT * FROM t")
    assert info.value.path == location
    managed.forget_metadata()


def _rewrite_one_file(store: Path, tmp_path: Path, change: str) -> tuple[Path, str]:
    """A copy of ``store`` with one data file the metadata names rewritten; its path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    main = json.loads((copy / "ds.by-dataset-metadata.json").read_text())
    victim = next(iter(main["partitions"].values()))["files"]["table"]
    table = pq.read_table(copy / victim)
    if change == "renamed":
        table = table.rename_columns(["V" if n == "v" else n for n in table.column_names])
    elif change == "missing":
        table = table.drop(["v"])
    else:
        table = table.append_column("w", pa.array([1.0] * table.num_rows))
    pq.write_table(table, copy / victim)
    return copy, victim


@pytest.mark.parametrize("mode", ["copy", "reference"])
@pytest.mark.parametrize("change", ["renamed", "missing", "extra"])
def test_a_file_without_the_datasets_columns_is_refused(
    store: Path, tmp_path: Path, change: str, mode: str
) -> None:
    """Kartothek's writer refuses such a file; the import did read its column as NULLs."""
    broken, victim = _rewrite_one_file(store, tmp_path, change)
    root = tmp_path / "lake"
    conn = _connect(root)
    cur = conn.cursor()
    version = Lakehouse.open(str(root)).snapshot().version
    column = {"renamed": "'v' and holds column 'V'", "missing": "'v'", "extra": "'w'"}[change]
    with pytest.raises(DataError, match=rf"its file '{victim}'.*the data file \w+ column {column}"):
        cur.execute("CALL system.import_kartothek('t', ?, 'ds', mode => ?)", [str(broken), mode])
    assert Lakehouse.open(str(root)).snapshot().version == version
    cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 't'")
    assert cur.fetchone() == (0,)
    conn.close()


@pytest.mark.parametrize("mode", ["copy", "reference"])
def test_a_lakehouse_dataset_after_drop_and_add_column_reads_as_its_table(
    tmp_path: Path, mode: str
) -> None:
    """Files are matched by column ID: a column dropped and added again is NULL in older files."""
    source = tmp_path / "a"
    with _connect(source) as conn:
        cur = conn.cursor()
        cur.execute("CREATE TABLE src (id INT8, v INT8, x INT8)")
        cur.execute("INSERT INTO src VALUES (1, 10, 100)")
        cur.execute("ALTER TABLE src DROP COLUMN x")
        cur.execute("ALTER TABLE src ADD COLUMN x INT8")
        cur.execute("ALTER TABLE src ADD COLUMN z INT8")
        cur.execute("INSERT INTO src VALUES (2, 20, 200, 2000)")
        expected = _select(cur, "SELECT * FROM src")
    assert expected == [
        {"id": 1, "v": 10, "x": None, "z": None},
        {"id": 2, "v": 20, "x": 200, "z": 2000},
    ]
    definition = Lakehouse.open(str(source)).begin(read_only=True).load_table("default", "src")
    uuid = definition.format_properties[managed.DATASET_UUID]
    with _connect(tmp_path / "b") as conn:
        cur = conn.cursor()
        cur.execute("CALL system.import_kartothek('t', ?, ?, mode => ?)", [str(source), uuid, mode])
        assert _select(cur, "SELECT * FROM t") == expected  # reference read x = 100 before
