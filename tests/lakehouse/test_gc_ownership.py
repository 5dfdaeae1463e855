"""Garbage collection deletes only the lakehouse's own files (issue 29, item 1).

A lakehouse root that also holds a Kartothek store imported in place (inside
the root and at the root itself), a reference to one of the lakehouse's own
tables whose original was dropped, another lakehouse and an export target
copied inside it, another tool's files and look-alikes of the lakehouse's
own names: after expiring every old version and collecting with no grace
period, every live table reads exactly as before, every file that is not the
lakehouse's is there with its bytes, and the lakehouse's garbage is gone. On
local, memory and S3 storage.
"""

from __future__ import annotations

import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.errors import NestedLakehouseError
from trinity_dbapi.format.paths import claim_path
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.storage import Storage, open_storage
from trinity_dbapi.tables import managed

Backend = tuple[str, dict[str, Any]]

REFERENCE = (
    "CALL system.import_kartothek(table => ?, location => ?, dataset_uuid => ?, "
    "mode => 'reference')"
)


@pytest.fixture(scope="module")
def kartothek_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The files of a store plateau wrote: dataset ``ds``, partitioned on ``p``, indexed on ``k``."""
    import pandas as pd
    from minimalkv import get_store_from_url
    from plateau.io import eager

    root = tmp_path_factory.mktemp("kartothek")
    frame = pd.DataFrame(
        {"id": pd.array(range(12), dtype="int64"), "p": list("ab") * 6, "k": list("xyz") * 4}
    )
    kv = partial(get_store_from_url, f"hfs://{root}")
    eager.store_dataframes_as_dataset(
        store=kv, dataset_uuid="ds", dfs=[frame], partition_on=["p"], secondary_indices=["k"]
    )
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _copy_in(storage: Storage, prefix: str, files: dict[str, bytes]) -> dict[str, bytes]:
    placed = {prefix + path: data for path, data in files.items()}
    for path, data in placed.items():
        storage.write(path, data)
    return placed


def _lakehouse_files(uri: str, options: dict[str, Any]) -> dict[str, bytes]:
    """The files of a small lakehouse made elsewhere (with a table and garbage of its own)."""
    cur = trinity_dbapi.connect(uri, storage_options=options, autocommit=True).cursor()
    cur.execute("CREATE NAMESPACE x").execute("CREATE TABLE x.t (a INT4)")
    cur.execute("INSERT INTO x.t VALUES (1), (2)").execute("DELETE FROM x.t WHERE a = 1")
    storage = open_storage(uri, storage_options=options)
    return {path: storage.read(path) for path in storage.list("")}


def _rows(cur: Any, table: str) -> list[tuple[Any, ...]]:
    return sorted(cur.execute(f"SELECT * FROM {table}").fetchall())


def test_gc_keeps_every_file_that_is_not_the_lakehouses(
    backend: Backend, kartothek_store: dict[str, bytes]
) -> None:
    uri, options = backend
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    cur = conn.cursor()
    storage = open_storage(uri, storage_options=options)
    root = storage.root_uri
    cur.execute("CREATE NAMESPACE n")
    cur.execute("CREATE TABLE n.keep (id INT8, p VARCHAR) PARTITIONED BY (p)")
    cur.execute("INSERT INTO n.keep VALUES (1, 'a'), (2, 'b'), (3, 'a')")
    cur.execute("CREATE INDEX ki ON n.keep (id)")
    cur.execute("DELETE FROM n.keep WHERE id = 3")  # its old files become garbage
    cur.execute("CREATE TABLE n.gone (v INT4)")
    cur.execute("INSERT INTO n.gone VALUES (7)")
    gone_dataset = cur.execute(
        "SELECT format_properties['dataset_uuid'] FROM system.tables WHERE table_name = 'gone'"
    )
    gone = gone_dataset.fetchone()[0]
    cur.execute("DROP TABLE n.gone")
    # (b) a reference to one of the lakehouse's own tables, whose original is dropped
    cur.execute("CREATE TABLE n.orig (v INT4)")
    cur.execute("INSERT INTO n.orig VALUES (10), (20)")
    orig = cur.execute(
        "SELECT format_properties['dataset_uuid'] FROM system.tables WHERE table_name = 'orig'"
    )
    cur.execute(REFERENCE, ["n.selfref", root, orig.fetchone()[0]])
    cur.execute("DROP TABLE n.orig")
    # (a) a Kartothek store inside the root, and one at the root itself, referenced
    foreign = _copy_in(storage, "ktk/", kartothek_store)
    foreign.update(_copy_in(storage, "", kartothek_store))
    cur.execute(REFERENCE, ["n.inside", root + "ktk", "ds"])
    cur.execute(REFERENCE, ["n.atroot", root, "ds"])
    # (c) another lakehouse inside the root is refused, and so is an export there...
    with pytest.raises(NestedLakehouseError, match="inside the lakehouse at"):
        trinity_dbapi.connect(root + "archive", storage_options=options)
    with pytest.raises(NestedLakehouseError, match="export"):
        cur.execute(f"CALL system.export_snapshot('e', mode => 'full', target => '{root}bk')")
    assert not storage.list("archive/") and not storage.list("bk/")
    # ...but one copied there by any tool (as an older release could make it) is kept
    elsewhere = uri.rstrip("/").rpartition("/")[0] + f"/other-{uuid.uuid4().hex[:8]}"
    foreign.update(_copy_in(storage, "archive/", _lakehouse_files(elsewhere, options)))
    # One in a path-optimized folder's shape: nothing under it is collected, not
    # even this lakehouse's own catalog files whose hash prefix it is, so it is
    # a folder the dropped table's claim file is not in (the claim must go).
    gone_claim = claim_path(managed.TABLE_FORMAT, gone)
    hashed = "1010/" if not gone_claim.startswith("1010/") else "0110/"
    foreign.update(_copy_in(storage, hashed, _lakehouse_files(elsewhere + "-2", options)))
    # other programs' files, and look-alikes of the lakehouse's own names
    keep_dataset = cur.execute(
        "SELECT format_properties['dataset_uuid'] FROM system.tables WHERE table_name = 'keep'"
    )
    keep = keep_dataset.fetchone()[0]
    node = f"node-{uuid.uuid4()}.arrow"
    for path in (
        "notes.txt",
        "_SUCCESS",
        "_private.arrow",
        ".DS_Store",
        "0101/readme.md",
        f"0000/0000/0000/00000000-{node}",  # an optimized shape with the wrong hash
        f"{uuid.uuid4()}/table/{uuid.uuid4()}.parquet",  # a dataset nobody claimed
        f"{uuid.uuid4()}/metadata/0000000001-{uuid.uuid4()}.by-dataset-metadata.json",
        f"{keep}/table/p=a/{uuid.uuid4().hex}.parquet",  # Kartothek's name in our dataset
        f"{keep}/table/notes.csv",
        f"{keep}/scratch/{uuid.uuid4()}.parquet",
    ):
        foreign[path] = f"not the lakehouse's: {path}".encode()
        storage.write(path, foreign[path])

    live = ["n.keep", "n.selfref", "n.inside", "n.atroot"]
    before = {table: _rows(cur, table) for table in live}
    assert before["n.selfref"] == [(10,), (20,)] and len(before["n.atroot"]) == 12
    conn.lakehouse.maintenance.expire_versions(
        older_than=time.time() * 1000 + 60_000, retain_last=1
    )
    result = conn.lakehouse.maintenance.collect_garbage(grace_period_millis=0)

    after = {path: storage.read(path) for path in storage.list("")}
    assert {path: after.get(path) for path in foreign} == foreign  # every byte kept
    assert result.foreign >= len(foreign)
    assert not set(result.deleted) & set(foreign)
    assert not [p for p in after if p.startswith(gone)]  # the dropped table's dataset went
    assert gone_claim not in after
    assert any(p.startswith(keep + "/table/") for p in result.deleted)  # rewritten files went
    fresh = trinity_dbapi.connect(uri, storage_options=options).cursor()
    assert {table: _rows(fresh, table) for table in live} == before
    for inner in (root + "archive", root + hashed.rstrip("/")):
        with trinity_dbapi.connect(inner, storage_options=options) as other:
            assert other.cursor().execute("SELECT a FROM x.t").fetchall() == [(2,)]
    assert fresh.execute("CALL system.check_integrity()").fetchall() == [(None, None, "ok")]
    # A second collection finds nothing more, and deletes nothing foreign.
    assert conn.lakehouse.maintenance.collect_garbage(grace_period_millis=0).deleted == []


def _garbage_lake(tmp_path: Path) -> tuple[Any, Lakehouse, str]:
    conn = trinity_dbapi.connect(str(tmp_path / "lake"), autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE n").execute("CREATE TABLE n.t (v INT4)")
    cur.execute("INSERT INTO n.t VALUES (1)").execute("INSERT INTO n.t VALUES (2)")
    dataset = cur.execute("SELECT format_properties['dataset_uuid'] FROM system.tables").fetchone()[
        0
    ]
    cur.execute("DROP TABLE n.t")
    lake = conn.lakehouse
    lake.maintenance.expire_versions(older_than=time.time() * 1000 + 60_000, retain_last=1)
    return cur, lake, dataset


def test_a_dataset_made_before_claim_files_is_collected_through_its_definitions(
    tmp_path: Path,
) -> None:
    _cur, lake, dataset = _garbage_lake(tmp_path)
    lake.storage.delete(claim_path(managed.TABLE_FORMAT, dataset))  # as an older release
    assert lake.storage.list(dataset + "/")
    deleted = lake.maintenance.collect_garbage(grace_period_millis=0).deleted
    assert not lake.storage.list(dataset + "/") and any(p.startswith(dataset) for p in deleted)
    # its definitions proved it: they went after every file of the dataset
    last_file = max(i for i, p in enumerate(deleted) if p.startswith(dataset))
    definitions = [i for i, p in enumerate(deleted) if "-table-t-n-" in p]
    assert definitions and min(definitions) > last_file


def test_an_unclaimed_dataset_nothing_names_is_kept(tmp_path: Path) -> None:
    _cur, lake, dataset = _garbage_lake(tmp_path)
    lake.storage.delete(claim_path(managed.TABLE_FORMAT, dataset))
    lake.maintenance.collect_garbage(grace_period_millis=0)  # its definitions go with it...
    stray = f"{uuid.uuid4()}/table/{uuid.uuid4()}.parquet"
    lake.storage.write(stray, b"a dataset copied here by some tool")
    # ...this one stays
    assert lake.maintenance.collect_garbage(grace_period_millis=0).deleted == []
    assert lake.storage.read(stray) == b"a dataset copied here by some tool"


def test_an_abandoned_create_table_as_select_is_collected_through_its_claim(
    tmp_path: Path,
) -> None:
    """A CTAS that wrote its files but never committed (rolled back, or its process killed)."""
    _cur, lake, _dataset = _garbage_lake(tmp_path)
    before = set(lake.storage.list(""))
    conn = trinity_dbapi.connect(str(tmp_path / "lake"))
    conn.cursor().execute("CREATE TABLE n.c AS SELECT range AS v FROM range(10)")
    conn.rollback()  # its definition was never written: only its claim names the dataset
    orphans = set(lake.storage.list("")) - before
    assert any(p.endswith(".parquet") for p in orphans)
    assert any(p.endswith(".claim") for p in orphans)
    deleted = lake.maintenance.collect_garbage(grace_period_millis=0).deleted
    assert orphans <= set(deleted) and not set(lake.storage.list("")) & orphans
    assert deleted[-1].endswith(".claim") or "-table-" in deleted[-1]  # the proofs go last


def test_an_interrupted_collection_loses_nothing_and_finishes_later(tmp_path: Path) -> None:
    """Stopped after each possible number of deletions, a later collection finishes the job."""
    _cur, lake, dataset = _garbage_lake(tmp_path)
    lake.storage.delete(claim_path(managed.TABLE_FORMAT, dataset))  # proof by definitions only
    doomed = lake.maintenance.collect_garbage(grace_period_millis=0, dry_run=True).deleted
    snapshot = {p: lake.storage.read(p) for p in lake.storage.list("")}

    class Stop(Exception):
        pass

    for stop_after in range(len(doomed)):
        for path in set(snapshot) - set(lake.storage.list("")):
            lake.storage.write(path, snapshot[path])  # back to the start

        def stop(done: int, _total: int, limit: int = stop_after) -> None:
            if done > limit:
                raise Stop

        with pytest.raises(Stop):
            lake.maintenance.collect_garbage(grace_period_millis=0, progress=stop)
        lake.maintenance.collect_garbage(grace_period_millis=0)
        assert not lake.storage.list(dataset + "/"), stop_after
        assert set(lake.storage.list("")) == set(snapshot) - set(doomed)


def test_young_files_keep_their_dataset_claimed(tmp_path: Path) -> None:
    """A file of a dropped table too young to go keeps the claim that makes it collectable."""
    _cur, lake, dataset = _garbage_lake(tmp_path)
    late = f"{dataset}/table/{uuid.uuid4()}.parquet"  # an append racing the DROP
    lake.storage.write(late, b"written by a transaction still in flight")
    old = time.time() + 3600  # everything else is older than the grace period then
    result = lake.maintenance.collect_garbage(grace_period_millis=1_800_000, now=old)
    assert late not in result.deleted and lake.storage.exists(late)
    assert lake.storage.exists(claim_path(managed.TABLE_FORMAT, dataset))
    lake.maintenance.collect_garbage(grace_period_millis=0)
    assert not lake.storage.list(dataset + "/")
