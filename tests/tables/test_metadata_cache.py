"""The process's decoded dataset metadata: kept per reader, and as written.

``managed.metadata`` keeps each decoded metadata file for the process (the
files are immutable) under who read it, as the storage's byte cache does:
another user's connection to the same root reads it again through its own
credentials. A file this process wrote is kept as it was written, so the
next statement does not read back what the commit before it wrote.
"""

from __future__ import annotations

from typing import Any

import trinity_dbapi
from trinity_dbapi.storage import open_storage
from trinity_dbapi.storage.cache import shared_cache
from trinity_dbapi.tables import managed


def _table(uri: str, options: dict[str, Any]) -> Any:
    with trinity_dbapi.connect(uri, storage_options=options, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id INT8)")
        conn.execute("INSERT INTO t VALUES (1), (2)")
        return conn.lakehouse.begin(read_only=True).load_table("default", "t")


def test_another_users_connection_reads_the_metadata_itself(
    s3_bucket: str, s3_storage_options: dict[str, Any]
) -> None:
    uri = f"s3://{s3_bucket}/lake"
    table = _table(uri, s3_storage_options)
    alice = open_storage(uri, storage_options=s3_storage_options)
    assert set(managed.metadata(alice, table).files()) and alice.stats.reads == 0
    bob = open_storage(uri, storage_options={**s3_storage_options, "key": "bob"})
    assert managed.metadata(bob, table) == managed.metadata(alice, table)
    assert bob.stats.reads == 1  # through bob's own credentials, not alice's decoding


def test_the_file_a_commit_wrote_is_not_read_back(tmp_path: Any) -> None:
    uri = str(tmp_path / "lake")
    table = _table(uri, {})
    shared_cache().clear()
    storage = open_storage(uri)
    meta = managed.metadata(storage, table)
    assert storage.stats.reads == 0
    assert meta.sequence == 2 and len(meta.files()) == 1
