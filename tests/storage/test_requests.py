"""Request counts and rounds of the storage seam, and the process-wide cache's keys.

A round is a set of requests in flight together: the counters call a request
that starts after another ended part of the round after that one. The
storages here wait ``LATENCY`` seconds per request, so requests sent
together overlap for sure and the counts are deterministic.
"""

from __future__ import annotations

from typing import Any

import pytest

from trinity_dbapi.storage import Storage, open_storage
from trinity_dbapi.storage.cache import ImmutableCache, shared_cache

LATENCY = 0.02


@pytest.fixture
def slow(storage: Storage) -> Storage:
    storage.latency = LATENCY
    return storage


def test_requests_one_after_another_are_one_round_each(slow: Storage) -> None:
    before = slow.stats.snapshot()
    slow.create_unique("a/1", b"1")
    slow.exists("a/1")
    slow.write("_latest_hint.txt", b"1")
    used = slow.stats.since(before)
    assert (used.requests, used.rounds) == (3, 3)


def test_batches_are_one_round(slow: Storage) -> None:
    items = [(f"b/{i}.parquet", bytes([i]) * 10) for i in range(12)]
    before = slow.stats.snapshot()
    slow.create_unique_many(items)
    used = slow.stats.since(before)
    assert (used.creates, used.rounds, used.bytes_written) == (12, 1, 120)

    slow.clear_cache()
    paths = [path for path, _ in items]
    before = slow.stats.snapshot()
    assert slow.read_many(paths) == [data for _, data in items]
    assert slow.exists_many([*paths[:3], "b/none"]) == [True, True, True, False]
    used = slow.stats.since(before)
    assert (used.reads, used.exists, used.rounds, used.bytes_read) == (12, 4, 2, 120)


def test_tails_bring_small_files_whole_and_big_ones_tail_first(slow: Storage) -> None:
    slow.create_unique("t/small", b"s" * 10)
    slow.create_unique("t/big", bytes(range(100)))
    slow.clear_cache()
    before = slow.stats.snapshot()
    got = slow.read_tails(["t/small", "t/big"], 50)
    used = slow.stats.since(before)
    assert got == [(b"s" * 10, True), (bytes(range(50, 100)), False)]
    assert (used.reads, used.exists, used.rounds) == (2, 0, 1)
    # The whole small file is cached; the big one's tail is not the file.
    before = slow.stats.snapshot()
    assert slow.read("t/small") == b"s" * 10
    assert slow.read_range("t/big", 10, 20) == bytes(range(10, 20))
    assert slow.size("t/big") == 100
    used = slow.stats.since(before)
    assert (used.cache_hits, used.reads, used.exists) == (1, 1, 1)


@pytest.mark.parametrize("extra", [10, 100], ids=["tail-overlaps-first-range", "tail-beyond"])
def test_tails_of_files_beyond_azures_first_range(
    cloud: tuple[str, dict[str, Any]], extra: int
) -> None:
    """Azure has no suffix range: a file past its first range costs a second, dependent round.

    Stores with suffix ranges (S3, GCS) still read any tail in one request.
    """
    from trinity_dbapi.storage.azure import FIRST_RANGE

    uri, options = cloud
    storage = open_storage(uri, storage_options=options)
    data = bytes(i % 251 for i in range(FIRST_RANGE + extra))
    storage.create_unique("t/big", data)
    storage.clear_cache()
    before = storage.stats.snapshot()
    assert storage.read_tails(["t/big"], 50) == [(data[-50:], False)]
    used = storage.stats.since(before)
    if uri.startswith("abfs://"):
        # The first range, then only what it did not bring of the tail.
        assert (used.reads, used.rounds) == (2, 2)
        assert used.bytes_read == FIRST_RANGE + min(extra, 50)
    else:
        assert (used.reads, used.rounds, used.bytes_read) == (1, 1, 50)


def test_a_background_create_is_read_back_and_settled_before_a_commit(slow: Storage) -> None:
    slow.create_unique_later("p/data.parquet", b"pending")
    slow.create_unique_later("p/meta.json", b"{}")
    assert slow.read("p/data.parquet") == b"pending"  # served while in flight
    before = slow.stats.snapshot()
    slow.settle()
    slow.clear_cache()
    assert slow.read_many(["p/data.parquet", "p/meta.json"]) == [b"pending", b"{}"]
    assert slow.stats.since(before).rounds <= 2


def test_the_cache_is_shared_by_storages_of_one_identity(
    backend: tuple[str, dict[str, Any]],
) -> None:
    first = open_storage(backend[0], storage_options=backend[1])
    first.create_unique("shared/file", b"bytes")
    second = open_storage(backend[0], storage_options=backend[1])
    before = second.stats.snapshot()
    assert second.read("shared/file") == b"bytes"
    assert second.stats.since(before).cache_hits == 1


def test_different_credentials_never_share_cached_bytes(
    moto_server: str, s3_bucket: str, s3_storage_options: dict[str, Any]
) -> None:
    uri = f"s3://{s3_bucket}/lake"
    alice = open_storage(uri, storage_options=s3_storage_options)
    alice.create_unique("secret.parquet", b"alice's")
    assert alice.read("secret.parquet") == b"alice's"
    bob_options = {**s3_storage_options, "key": "bob", "secret": "bobs-secret-value"}
    bob = open_storage(uri, storage_options=bob_options)
    assert bob.cache_identity != alice.cache_identity
    assert "bobs-secret-value" not in bob.cache_identity
    before = bob.stats.snapshot()
    bob.read("secret.parquet")  # moto takes any key: the point is that it asked
    used = bob.stats.since(before)
    assert (used.reads, used.cache_hits) == (1, 0)
    same = open_storage(uri, storage_options=dict(s3_storage_options))
    assert same.cache_identity == alice.cache_identity


def test_a_root_beside_another_is_read_as_its_opener_reads(
    cloud: tuple[str, dict[str, Any]],
) -> None:
    """An export or a referenced dataset beside a root: the same store's requests,
    file system and secrets, and cached bytes keyed by the opener's credentials."""
    from trinity_dbapi.storage import open_beside

    uri, options = cloud
    beside_uri = uri.rstrip("/") + "-export"
    alice = open_storage(uri, storage_options=options)
    sibling = open_beside(alice, beside_uri)
    assert type(sibling) is type(alice)
    assert sibling.fsspec_filesystem()[0] is alice.fsspec_filesystem()[0]
    assert sibling.cache_identity != alice.cache_identity
    sibling.create_unique("big", bytes(200))
    sibling.clear_cache()
    assert sibling.read_tails(["big"], 50) == [(bytes(50), False)]  # a tail on every store
    assert sibling.read("big") == bytes(200)
    # Another user's options that reach the same store (the emulators take any).
    if uri.startswith("s3://"):
        other = {**options, "key": "bob", "secret": "bobs-secret"}
    elif uri.startswith("gs://"):
        other = {**options, "project": "bobs-project"}
    else:
        other = {**options, "connection_string": options["connection_string"] + ";"}
    bob = open_beside(open_storage(uri, storage_options=other), beside_uri)
    assert bob.cache_identity != sibling.cache_identity
    before = bob.stats.snapshot()
    assert bob.read("big") == bytes(200)
    assert (bob.stats.since(before).reads, bob.stats.since(before).cache_hits) == (1, 0)


def test_the_cache_is_bounded_and_keeps_no_file_over_a_quarter_of_it() -> None:
    cache = ImmutableCache(100)
    cache.put("id", "big", b"x" * 26)
    assert cache.get("id", "big") is None
    for i in range(10):
        cache.put("id", f"f{i}", b"y" * 20)
    assert cache.size <= 100
    assert cache.get("id", "f9") == b"y" * 20 and cache.get("id", "f0") is None
    cache.put("other", "f9", b"z")
    cache.clear("id")
    assert cache.get("id", "f9") is None and cache.get("other", "f9") == b"z"
    assert shared_cache().max_bytes == 256 * 1024 * 1024


@pytest.mark.parametrize(
    ("options", "environ", "verify"),
    [
        ({"client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}, {}, False),
        ({"endpoint_url": "HTTP://minio:9000"}, {}, False),
        ({"client_kwargs": {"endpoint_url": "https://s3.example.com"}}, {}, None),
        ({}, {}, None),
        ({"client_kwargs": {"endpoint_url": "http://h", "verify": "/ca.pem"}}, {}, "/ca.pem"),
        ({"client_kwargs": {"endpoint_url": "http://h"}}, {"HTTPS_PROXY": "https://proxy"}, None),
        (
            {"client_kwargs": {"endpoint_url": "http://h"}, "config_kwargs": {"proxies": {}}},
            {},
            None,
        ),
    ],
)
def test_a_plain_http_endpoint_skips_the_certificate_bundle(
    options: dict[str, Any], environ: dict[str, str], verify: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trinity_dbapi.storage import s3

    for name in s3._PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    s3._no_tls_for_plain_http(options)
    assert (options.get("client_kwargs") or {}).get("verify") == verify


def test_prepare_makes_the_s3_client_without_a_request(
    s3_bucket: str, s3_storage_options: dict[str, Any]
) -> None:
    options = {**s3_storage_options, "skip_instance_cache": True}
    storage = open_storage(f"s3://{s3_bucket}/lake", storage_options=options)
    assert storage.fs._s3 is None  # type: ignore[attr-defined]
    storage.prepare()
    assert storage.fs._s3 is not None  # type: ignore[attr-defined]
    assert storage.stats.requests == 0
    storage.create_unique("a", b"1")
    assert storage.read("a") == b"1"


def test_a_failing_prepare_leaves_the_error_to_the_first_request(
    s3_bucket: str, s3_storage_options: dict[str, Any]
) -> None:
    from trinity_dbapi.errors import StorageError

    options = {
        **s3_storage_options,
        "skip_instance_cache": True,
        "client_kwargs": {**s3_storage_options["client_kwargs"], "endpoint_url": "not a url"},
    }
    storage = open_storage(f"s3://{s3_bucket}/lake", storage_options=options)
    storage.prepare()  # says nothing
    with pytest.raises(StorageError, match="not a url"):
        storage.read("a")


@pytest.mark.gcs
def test_a_gcs_listing_is_one_request_even_when_it_finds_nothing(
    gcs_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """gcsfs's find lists a second time when nothing is found; the storage lists once."""
    from tests import emulators

    uri = f"gs://{emulators.create_gcs_bucket(gcs_server)}/lake"
    storage = open_storage(uri, storage_options=emulators.gcs_options(gcs_server))
    storage.create_unique("a/1", b"1")
    storage.create_unique("ab/2", b"2")
    calls: list[str] = []
    fs = storage.fsspec_filesystem()[0]
    real = fs._call

    async def counted(method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(method)
        return await real(method, path, *args, **kwargs)

    monkeypatch.setattr(fs, "_call", counted)
    assert storage.list("a/") == ["a/1"]
    assert storage.list("a") == ["a/1", "ab/2"]
    assert storage.list("zz/") == []
    assert storage.list("") == ["a/1", "ab/2"]
    assert calls == ["GET"] * 4
