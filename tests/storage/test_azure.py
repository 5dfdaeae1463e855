"""What is Azure's own in AzureStorage: URI forms, retries, and how a lost create reads.

The behaviour every store shares runs on Azurite in test_storage_behaviour.py,
the crash and the multi-process suites; these need no emulator.
"""

from __future__ import annotations

import pytest

pytest.importorskip("adlfs")

from trinity_dbapi.errors import InvalidURIError
from trinity_dbapi.storage import normalize_root_uri, open_storage
from trinity_dbapi.storage.azure import RETRY_BACKOFF, AzureStorage, _total_size, account_of

#: Not a real key: the shape of one (base64, 64 bytes).
KEY = "a2V5LW9mLXRoZS10ZXN0cy1ub3QtYS1yZWFsLW9uZS0wMTIzNDU2Nzg5YWJjZGVmZ2hpams="


def test_hadoops_container_at_account_form_is_a_root_uri() -> None:
    uri = "abfss://lake-data@myaccount.dfs.core.windows.net/warehouse"
    assert normalize_root_uri(uri) == uri + "/"
    assert account_of(uri) == "myaccount"
    assert account_of("abfs://lake-data/warehouse") is None
    storage = open_storage(uri, storage_options={"account_key": KEY})
    assert isinstance(storage, AzureStorage)
    assert storage.fs.account_name == "myaccount"
    assert storage.fsspec_filesystem()[1] == "lake-data/warehouse"


@pytest.mark.parametrize(
    "uri",
    [
        "abfss://user:secret@myaccount.dfs.core.windows.net/x",  # a password
        "abfss://Lake@myaccount.dfs.core.windows.net/x",  # no container has capitals
        "abfss://lake@myaccount.dfs.core.windows.net.evil.example/x",  # not Azure's host
        "s3://lake@myaccount.dfs.core.windows.net/x",  # not an Azure scheme
    ],
)
def test_other_user_info_stays_refused(uri: str) -> None:
    with pytest.raises(InvalidURIError, match="user info"):
        normalize_root_uri(uri)


def test_an_account_the_options_contradict_is_refused() -> None:
    with pytest.raises(InvalidURIError, match=r"'myaccount'.*'other'"):
        open_storage(
            "abfss://lake@myaccount.dfs.core.windows.net/x",
            storage_options={"account_name": "other", "account_key": KEY},
        )


def test_the_sdks_retries_wait_seconds_not_a_minute() -> None:
    storage = open_storage(
        "abfs://lake/x", storage_options={"account_name": "a", "account_key": KEY}
    )
    assert isinstance(storage, AzureStorage)
    policy = storage.fs.service_client._config.retry_policy
    assert (policy.initial_backoff, policy.increment_base, policy.random_jitter_range) == (
        RETRY_BACKOFF
    )
    waits = [policy.initial_backoff + policy.increment_base**n for n in (1, 2, 3)]
    assert sum(waits) < 10
    # The blob clients adlfs makes for each request share that policy object.
    blob = storage.fs.service_client.get_blob_client("lake", "x/y")
    assert policy in blob._pipeline._impl_policies


def test_a_conflict_or_a_failed_condition_is_a_lost_create() -> None:
    from azure.core.exceptions import ResourceExistsError, ResourceModifiedError

    storage = open_storage(
        "abfs://lake/x", storage_options={"account_name": "a", "account_key": KEY}
    )
    assert isinstance(storage, AzureStorage)
    assert storage._lost(FileExistsError("x"))  # adlfs's reading of 409 BlobAlreadyExists
    assert storage._lost(ResourceModifiedError("412 ConditionNotMet"))
    assert not storage._lost(ResourceExistsError("409 LeaseAlreadyPresent"))
    assert not storage._lost(OSError("connection reset"))


@pytest.mark.parametrize(
    ("content_range", "fallback", "size"),
    [("bytes 0-1048575/5000000", 1, 5000000), ("bytes 0-9/10", 3, 10), (None, 7, 7), ("", 0, 0)],
)
def test_the_blob_size_comes_from_content_range(
    content_range: str | None, fallback: int, size: int
) -> None:
    assert _total_size(content_range, fallback) == size


@pytest.mark.parametrize(
    ("metadata", "folder"),
    [
        (None, False),
        ({"is_directory": "false"}, False),  # what adlfs puts on every file it writes
        ({"is_directory": "true"}, True),  # adlfs's empty "folder"
        ({"hdi_isfolder": "true"}, True),  # a directory of a hierarchical namespace
        ({"Hdi_IsFolder": "True"}, True),
    ],
)
def test_folders_are_neither_listed_nor_files(
    metadata: dict[str, str] | None, folder: bool
) -> None:
    from trinity_dbapi.storage.azure import _is_folder

    assert _is_folder(metadata) is folder


@pytest.mark.azure
def test_a_hierarchical_namespaces_folders_are_skipped_on_azurite(azure_server: str) -> None:
    """Blobs that stand for folders (ADLS Gen2 lists its directories so) are not files."""
    from azure.storage.blob import BlobServiceClient

    from tests import emulators

    container = emulators.create_azure_container(azure_server)
    options = emulators.azure_options(azure_server)
    client = BlobServiceClient.from_connection_string(options["connection_string"])
    with client:
        for name, metadata in (("lake/dir", {"hdi_isfolder": "true"}), ("lake/f", None)):
            client.get_blob_client(container, name).upload_blob(b"", metadata=metadata)
    storage = open_storage(f"abfs://{container}/lake", storage_options=options)
    assert storage.list("") == ["f"]
    assert storage.exists_many(["dir", "f"]) == [False, True]
