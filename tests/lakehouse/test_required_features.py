"""Forward safety: a release refuses to change a lakehouse that requires a feature it does not know.

Issue 29, item 14. A newer release records in the lakehouse definition the
features that change what is reachable or how the lakehouse is written
(row lineage, ...); this release knows only branches, so on such a lakehouse it
refuses every change (commit, rollback, compaction, export, expiration,
garbage collection) with :class:`UnsupportedFeatureError`, and still reads.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

import trinity_dbapi
from tests.tree.helpers import small_definition
from trinity_dbapi.errors import NotSupportedError, UnsupportedFeatureError
from trinity_dbapi.format.definitions import LakehouseDefinition
from trinity_dbapi.format.features import KNOWN_FEATURES
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.format.proto import trinity_pb2 as pb
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.chain import Snapshot
from trinity_dbapi.storage import open_storage

Backend = tuple[str, dict[str, Any]]

NEWER = "trinity-dbapi 9.0"


def _as_newer_release(lake: Lakehouse, definition: LakehouseDefinition) -> Snapshot:
    """Commit ``definition`` as the next version, the way a newer release would.

    This release refuses to record a feature it does not know, so the new
    definition file and root are written through the raw commit point.
    """
    base = lake.snapshot()
    path = lake.write_definition(base, definition)
    return lake.write_root(base, base.root.copy(), txn=str(uuid.uuid4()), definition_path=path)


def _requires_branches(backend: Backend, release: str = NEWER) -> tuple[Lakehouse, int]:
    uri, options = backend
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.t (id INT8)")
    cur.execute("INSERT INTO s.t VALUES (1), (2)")
    conn.close()
    lake = Lakehouse.open(uri, storage_options=options)
    definition = lake.snapshot().definition.replace(
        required_writer_features={"row-lineage": release}
    )
    newest = _as_newer_release(lake, definition)
    return lake, newest.version


def _refused(error: pytest.ExceptionInfo[UnsupportedFeatureError], operation: str) -> None:
    assert isinstance(error.value, NotSupportedError)
    assert error.value.feature == "row-lineage" and error.value.release == NEWER
    assert error.value.operation == operation and not error.value.reading
    message = str(error.value)
    assert message.startswith(f"{operation} is refused: this lakehouse requires the feature")
    assert f"it takes {NEWER}" in message and f"Upgrade to {NEWER} or later" in message


def test_a_lakehouse_requiring_an_unknown_feature_refuses_every_change(backend: Backend) -> None:
    uri, options = backend
    lake, latest = _requires_branches(backend)
    storage = open_storage(uri, storage_options=options)
    files = set(storage.list(""))

    txn = lake.begin()
    txn.create_namespace("other")
    with pytest.raises(UnsupportedFeatureError) as caught:
        txn.commit()
    _refused(caught, "a commit")
    with pytest.raises(UnsupportedFeatureError) as caught:
        lake.maintenance.rollback(latest - 1)
    _refused(caught, "rollback")
    with pytest.raises(UnsupportedFeatureError) as caught:
        lake.maintenance.compact()
    _refused(caught, "compact")
    with pytest.raises(UnsupportedFeatureError) as caught:
        lake.maintenance.export_snapshot("e")
    _refused(caught, "export_snapshot")
    with pytest.raises(UnsupportedFeatureError) as caught:
        lake.maintenance.expire_versions(older_than=2**62, retain_last=1)
    _refused(caught, "expire_versions")
    with pytest.raises(UnsupportedFeatureError) as caught:
        lake.maintenance.collect_garbage(grace_period_millis=0)
    _refused(caught, "collect_garbage")
    assert lake.latest_version() == latest  # nothing was committed
    assert files <= set(storage.list(""))  # and nothing deleted

    # It still reads: the tables, its rows, time travel.
    assert lake.begin(read_only=True).list_namespaces() == ["s"]
    conn = trinity_dbapi.connect(uri, storage_options=options, autocommit=True)
    cur = conn.cursor()
    assert cur.execute("SELECT id FROM s.t ORDER BY id").fetchall() == [(1,), (2,)]
    assert cur.execute("SHOW TABLES IN s").fetchall()
    older = cur.execute(f"SELECT count(*) FROM s.t FOR SYSTEM_VERSION AS OF {latest - 1}")
    assert older.fetchall() == [(2,)]
    for statement in (
        "INSERT INTO s.t VALUES (3)",
        "CREATE TABLE s.u (id INT8)",
        "CALL system.expire_versions(retain_last => 1)",
        "CALL system.collect_garbage(grace_period_millis => 0)",
        "CALL system.compact()",
    ):
        with pytest.raises(UnsupportedFeatureError, match="requires the feature 'row-lineage'"):
            cur.execute(statement)
    assert cur.execute("SELECT count(*) FROM s.t").fetchall() == [(2,)]
    assert lake.latest_version() == latest


def test_an_unknown_feature_without_a_release_is_named_as_a_newer_release(
    backend: Backend,
) -> None:
    lake, _ = _requires_branches(backend, release="")
    with pytest.raises(UnsupportedFeatureError) as caught:
        lake.maintenance.compact()
    assert caught.value.release == ""
    assert "it takes a newer release (row-lineage)" in str(caught.value)
    assert "Upgrade to a release that knows it" in str(caught.value)


def test_this_release_records_no_feature_it_does_not_know(backend: Backend) -> None:
    uri, options = backend
    wanting = small_definition(4, 2).replace(required_writer_features={"row-lineage": NEWER})
    with pytest.raises(UnsupportedFeatureError, match="creating a lakehouse is refused"):
        Lakehouse.create(uri, wanting, storage_options=options)
    assert not Lakehouse.exists(uri, storage_options=options)

    lake = Lakehouse.create(uri, small_definition(4, 2), storage_options=options)
    txn = lake.begin()
    txn.change_definition(lambda d: d.replace(required_reader_features={"tags": NEWER}))
    with pytest.raises(UnsupportedFeatureError, match="'tags'"):
        txn.commit()
    assert lake.latest_version() == 0
    assert {"branches", "saved_transactions"} == KNOWN_FEATURES  # and records only those


def test_an_unknown_reader_feature_refuses_reading(backend: Backend) -> None:
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(4, 2), storage_options=options)
    with lake.begin() as txn:
        txn.create_namespace("s")
    base = lake.snapshot()
    message = base.definition.to_proto()
    message.required_reader_features["deletion_vectors"] = NEWER
    path = f"_lakehouse_def_{uuid.uuid4()}.binpb"
    lake.storage.create_exclusive(path, message.SerializeToString())
    lake.write_root(base, base.root.copy(), txn=str(uuid.uuid4()), definition_path=path)

    with pytest.raises(UnsupportedFeatureError) as caught:
        Lakehouse.open(uri, storage_options=options)
    assert caught.value.reading and caught.value.feature == "deletion_vectors"
    assert str(caught.value).startswith("reading this lakehouse is refused")
    with pytest.raises(UnsupportedFeatureError):  # connect, or its first statement on a remote root
        trinity_dbapi.connect(uri, storage_options=options).execute("SELECT 1")
    # The versions before it do not require it, and open pinned.
    older = Lakehouse.open(uri, storage_options=options, version=1)
    assert older.begin(read_only=True).list_namespaces() == ["s"]


def test_a_newer_releases_fields_survive_this_releases_definition_change(
    backend: Backend,
) -> None:
    """An export rewrites the definition: fields this release does not know go with it."""
    uri, options = backend
    lake = Lakehouse.create(uri, small_definition(4, 2), storage_options=options)
    base = lake.snapshot()
    # Field 40, a string a newer release records (no feature required: safe to keep).
    extra = b"\xc2\x02\x06future"
    newer = LakehouseDefinition.from_bytes(base.definition.to_bytes() + extra, "newer")
    assert newer.unknown_fields == extra
    _as_newer_release(lake, newer)

    recorded = lake.maintenance.export_snapshot("keep").recorded_in_version
    snap = lake.snapshot(recorded)
    assert snap.definition.exported_snapshots == {"keep": root_node_file_name(recorded - 1)}
    written = open_storage(uri, storage_options=options).read(snap.definition_path)
    assert written.endswith(extra)
    parsed = pb.LakehouseDef()
    parsed.ParseFromString(written)
    assert dict(parsed.exported_snapshots) == {"keep": root_node_file_name(recorded - 1)}


def test_the_module_functions_refuse_too(backend: Backend) -> None:
    """Garbage collection and export called below the accessor check the features themselves."""
    from trinity_dbapi.lakehouse.export import export_snapshot
    from trinity_dbapi.lakehouse.garbage import collect_garbage

    uri, options = backend
    lake, _latest = _requires_branches(backend)
    files = set(open_storage(uri, storage_options=options).list(""))
    with pytest.raises(UnsupportedFeatureError) as caught:
        collect_garbage(lake, grace_period_millis=0)
    _refused(caught, "collect_garbage")
    with pytest.raises(UnsupportedFeatureError) as caught:
        export_snapshot(lake, "e")
    _refused(caught, "export_snapshot")
    assert set(open_storage(uri, storage_options=options).list("")) == files
