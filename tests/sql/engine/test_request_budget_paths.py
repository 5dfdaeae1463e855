"""Every path reads a remote root's files together: counted rounds beyond queries.

tests/sql/engine/test_request_budget.py counts queries, appends and the bridge;
this counts the other paths issue 31 names (MERGE's reads of the target,
``check_integrity``, compaction, SQLAlchemy reflection, the Kartothek
import): on memory:// and S3 with a latency on every request, a path that
reads its N files one after another costs N rounds and fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.storage import Storage
from trinity_dbapi.storage.cache import shared_cache
from trinity_dbapi.tables import file_facts, managed

LATENCY = 0.01
FILES = 30


@pytest.fixture(autouse=True)
def _fresh_process() -> Any:
    def forget() -> None:
        shared_cache().clear()
        with file_facts._lock:
            file_facts._cache.clear()
            file_facts._bounds.clear()
        managed.forget_metadata()

    forget()
    yield
    forget()


@pytest.fixture
def lake(round_trip_lake: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A lakehouse whose table t has FILES files of two rows; src holds two rows."""
    uri, options = round_trip_lake
    con = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE TABLE t (id INT8, v FLOAT8)")
    for i in range(FILES):
        cur.execute("INSERT INTO t VALUES (?, ?), (?, ?)", [2 * i, i, 2 * i + 1, i])
    cur.execute("CREATE TABLE src (id INT8, v FLOAT8)")
    cur.execute("INSERT INTO src VALUES (1, 100), (1000, 5)")
    con.close()
    return uri, options


def _fresh(lake: tuple[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> Any:
    shared_cache().clear()
    managed.forget_metadata()
    monkeypatch.setattr(Storage, "latency", LATENCY)
    return trinity_dbapi.connect(lake[0], storage_options=lake[1], autocommit=True)


def test_merge_reads_the_target_files_together(lake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    con = _fresh(lake, monkeypatch)
    before = con.storage_stats
    con.execute(
        "MERGE INTO t USING src ON t.id = src.id "
        "WHEN MATCHED THEN UPDATE SET v = src.v WHEN NOT MATCHED THEN INSERT *"
    )
    used = con.storage_stats.since(before)
    # The latest version, definitions, the two metadata files, src's file
    # and t's 30 at once, then the commit's 3 rounds and a few more: not 30.
    assert used.reads >= FILES and used.rounds <= 10, used
    assert con.execute("SELECT count(*), sum(v) FROM t").fetchall() == [(61, 100 + 435 * 2 + 5)]


def test_compaction_reads_the_small_files_together(
    lake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    con = _fresh(lake, monkeypatch)
    before = con.storage_stats
    rows = con.execute("CALL system.rewrite_data_files('t')").fetchall()
    used = con.storage_stats.since(before)
    assert rows[0][:3] == ("default.t", FILES, 1)
    assert used.reads >= FILES and used.rounds <= 10, used
    assert con.execute("SELECT count(*), sum(v) FROM t").fetchall() == [(60, 870.0)]


def test_check_integrity_reads_ahead(lake: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from trinity_dbapi.tables import integrity

    opened: list[Storage] = []
    original = integrity.open_storage

    def counting(*args: Any, **kwargs: Any) -> Storage:
        opened.append(original(*args, **kwargs))
        return opened[-1]

    monkeypatch.setattr(integrity, "open_storage", counting)
    con = _fresh(lake, monkeypatch)
    assert con.execute("CALL system.check_integrity()").fetchall() == [(None, None, "ok")]
    (storage,) = opened
    used = storage.stats
    # 31 data files, the metadata and common files, definitions, the root
    # and 33 older roots: over 70 files read, not one round each but a few
    # rounds for each level of the walk.
    assert used.reads + used.cache_hits > 70 and used.rounds <= 12, used


def test_sqlalchemy_reflection_costs_a_round_per_question(
    lake: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sa = pytest.importorskip("sqlalchemy")
    if lake[1]:
        pytest.skip("the engine URL carries no storage options here; memory:// covers it")
    _fresh(lake, monkeypatch).close()
    engine = sa.create_engine(f"trinity:///{lake[0]}")
    with engine.connect() as connection:
        raw = connection.connection.dbapi_connection
        inspector = sa.inspect(connection)
        before = raw.storage_stats
        assert inspector.get_table_names() == ["src", "t"]
        names = raw.storage_stats.since(before)
        before = raw.storage_stats
        assert [c["name"] for c in inspector.get_columns("t")] == ["id", "v"]
        columns = raw.storage_stats.since(before)
    assert names.rounds <= 1 and columns.rounds <= 1, (names, columns)


def test_the_kartothek_import_copies_files_side_by_side(
    round_trip_lake: tuple[str, dict[str, Any]], tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from functools import partial

    eager = pytest.importorskip("plateau.io.eager")
    minimalkv = pytest.importorskip("minimalkv")
    import numpy as np
    import pandas as pd

    from trinity_dbapi.storage import open_storage

    uri, options = round_trip_lake
    source = tmp_path / "store"
    source.mkdir()
    kv = partial(minimalkv.get_store_from_url, f"hfs://{source}")
    for i in range(FILES):
        frame = pd.DataFrame({"id": np.arange(i * 10, i * 10 + 10), "p": ["ab"[i % 2]] * 10})
        if i == 0:
            eager.store_dataframes_as_dataset(
                store=kv, dataset_uuid="ds", dfs=[frame], partition_on=["p"]
            )
        else:
            eager.update_dataset_from_dataframes(
                [frame], store=kv, dataset_uuid="ds", partition_on=["p"]
            )
    store_uri = uri.rpartition("/")[0] + "/kartothek-store"
    target = open_storage(store_uri, storage_options=options)
    for path in source.rglob("*"):
        if path.is_file():
            target.write(str(path.relative_to(source)), path.read_bytes())
    target.close()
    con = _fresh(round_trip_lake, monkeypatch)
    before = con.storage_stats
    con.execute(
        "CALL system.import_kartothek(table => 'copied', location => ?, dataset_uuid => 'ds')",
        [store_uri],
    )
    used = con.storage_stats.since(before)
    assert con.execute("SELECT count(*), sum(id) FROM copied").fetchall() == [
        (FILES * 10, sum(range(FILES * 10)))
    ]
    # 30 copies written many at a time, then the commit: far fewer rounds than files.
    assert used.creates >= FILES and used.rounds <= FILES // 2, used
