"""Azure Blob Storage and ADLS Gen2 (``abfs://``, ``abfss://``, ``az://``) through adlfs.

Azure's conditional writes make commits: a Put Blob (or the Put Block List
of a larger upload) with ``If-None-Match: *`` creates the blob only if none
exists, and Azure answers every other such request with ``409
BlobAlreadyExists`` (adlfs raises ``FileExistsError``); a blob is visible
only complete. A race the store settles by the condition rather than the
existence answers ``412 ConditionNotMet``, which is a lost create too. What
Azure shares with the other object stores is
:class:`~trinity_dbapi.storage.object_storage.ObjectStorage`'s.

Two requests are Azure's own:

* **One existence check is one Get Blob Properties**; adlfs's ``info`` would
  list the "folder" after a miss.
* **The tail of a file** (a Parquet footer): Azure has no suffix range
  (``bytes=-N``), so a tail read asks for the first
  :data:`FIRST_RANGE` bytes: a file that fits comes whole in one round (most
  node files and the Parquet files of small tables), and the answer's
  ``Content-Range`` gives the size of a bigger one, whose tail a second
  request fetches (two rounds, as a size and a range would cost; at most
  :data:`FIRST_RANGE` bytes read besides). Stores with suffix ranges need
  one request either way.

Root URIs: ``abfs://<container>/<path>`` with the account in the options
(``account_name``, or a connection string), or the account in the URI as
Hadoop writes it, ``abfss://<container>@<account>.dfs.core.windows.net/<path>``.

adlfs is imported on the first Azure root (``pip install trinity-dbapi[azure]``).

Imports from storage/: object_storage, redact, uri.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from trinity_dbapi.errors import InvalidURIError, NotSupportedError
from trinity_dbapi.storage.object_storage import ObjectStorage
from trinity_dbapi.storage.redact import azure_account
from trinity_dbapi.storage.uri import check_path

__all__ = ["FIRST_RANGE", "RETRY_BACKOFF", "AzureStorage", "account_of"]

#: The first range of a tail read: files up to this size cost one request.
FIRST_RANGE = 2**20

#: The Azure SDK's waits before its three retries, ``initial + base**n`` seconds
#: for n = 1, 2, 3: ``(initial, base, jitter)``. Its own (15, 3, 3) waits 18, 24
#: and 42 s, so a refused connection became an error after 85 s; these wait
#: about 1.75, 2.5 and 3.6 s (8 s in all), the order botocore's standard
#: retries and gcsfs's wait.
RETRY_BACKOFF = (0.25, 1.5, 0.5)


def account_of(root_uri: str) -> str | None:
    """The storage account a ``<container>@<account>.dfs.core.windows.net`` URI names."""
    scheme, _, rest = root_uri.partition("://")
    return azure_account(scheme, rest.split("/", 1)[0])


class AzureStorage(ObjectStorage):
    """Storage on Azure Blob Storage, ADLS Gen2 or Azurite (``abfs://``, ``abfss://``, ``az://``).

    Args:
        root_uri: an ``abfs://container/prefix`` root URI (or
            ``abfss://container@account.dfs.core.windows.net/prefix``).
        storage_options: passed to adlfs's ``AzureBlobFileSystem``
            (``account_name`` with ``account_key``, ``sas_token``,
            ``credential`` or ``anon=False`` for Azure identity; or
            ``connection_string``; ``client_id``/``client_secret``/
            ``tenant_id`` for a service principal). The listings cache is
            always disabled, as for S3.
        cache_bytes: the immutable-file cache (:class:`~trinity_dbapi.storage.Storage`).

    Raises:
        NotSupportedError: adlfs is not installed.
        InvalidURIError: the URI names an account that the options contradict.
    """

    def __init__(
        self,
        root_uri: str,
        *,
        storage_options: Mapping[str, Any] | None = None,
        cache_bytes: int | None = None,
    ) -> None:
        try:
            from adlfs import AzureBlobFileSystem
        except ImportError as exc:
            raise NotSupportedError(
                "abfs:// and az:// root URIs need the adlfs package: "
                "pip install trinity-dbapi[azure]"
            ) from exc
        options = self.consistent(storage_options)
        account = account_of(root_uri)
        if account is not None:
            given = options.setdefault("account_name", account)
            if given != account:
                raise InvalidURIError(
                    root_uri,
                    f"root URI {root_uri!r} names the storage account {account!r} but "
                    f"storage_options name {given!r}; drop one of them",
                )

        def make() -> Any:
            fs = AzureBlobFileSystem(**options, skip_instance_cache=True)
            _retry_sooner(fs.service_client)
            return fs

        super().__init__(
            root_uri, make(), storage_options=options, cache_bytes=cache_bytes, reopen=make
        )

    def _lost(self, exc: BaseException) -> bool:
        if isinstance(exc, FileExistsError):
            return True
        # 412 ConditionNotMet: the condition, not the existence check, refused it.
        return type(exc).__name__ == "ResourceModifiedError"

    async def _head(self, full: str) -> int:
        from azure.core.exceptions import ResourceNotFoundError

        container, key = self._bucket, self._key(full)
        try:
            async with self.fs.service_client.get_blob_client(container, key) as blob:
                properties = await blob.get_blob_properties()
        except ResourceNotFoundError as exc:
            raise FileNotFoundError(full) from exc
        if _is_folder(properties.metadata):
            raise FileNotFoundError(full)
        return int(properties.size)

    def _put_if_absent(self, full: str, data: bytes) -> None:
        # adlfs sends If-None-Match: * on Put Blob and on the Put Block List of
        # a staged upload alike (the Azure SDK's overwrite=False).
        self.fs.pipe_file(full, data, overwrite=False)

    # -- the tail of a file: two ranges, since Azure has no suffix range ------------

    def _read_tails(self, paths: Sequence[str], limit: int) -> list[bytes]:
        return self._gather([partial(self._tail, path, limit=limit) for path in paths])

    async def _tail(self, path: str, depth: int, *, limit: int) -> bytes:
        full = self._full(path)
        data, size = await self._range(path, full, 0, FIRST_RANGE, depth)
        if size > len(data):  # bigger than the first range: its tail, or the rest of it
            start = max(size - limit, len(data))
            rest, _ = await self._range(path, full, start, size - start, depth + 1)
            data = rest if start > len(data) else data + rest
        return data[-limit:] if limit else b""

    async def _range(
        self, path: str, full: str, offset: int, length: int, depth: int
    ) -> tuple[bytes, int]:
        """``length`` bytes from ``offset`` and the blob's whole size, in one request."""
        from azure.core.exceptions import ResourceNotFoundError

        container, key = self._bucket, self._key(full)
        if self.latency:
            await asyncio.sleep(self.latency)
        data = b""
        try:
            with self._errors("read", path):
                try:
                    async with self.fs.service_client.get_blob_client(container, key) as blob:
                        stream = await blob.download_blob(offset=offset, length=length)
                        data = bytes(await stream.readall())
                except ResourceNotFoundError as exc:
                    raise FileNotFoundError(full) from exc
                size = _total_size(stream.properties.content_range, offset + len(data))
            return data, size
        finally:
            self._end(depth, "reads", len(data))

    # -- listing -------------------------------------------------------------------

    def _list(self, prefix: str) -> list[str]:
        check_path(prefix, is_prefix=True)

        async def names() -> list[str]:
            container, key = self._bucket, self._key(f"{self._base}/{prefix}")
            found = []
            async with self.fs.service_client.get_container_client(container) as client:
                async for blob in client.list_blobs(name_starts_with=key, include=["metadata"]):
                    if not _is_folder(blob.metadata):
                        found.append(f"{container}/{blob.name}")
            return found

        with self._errors("list", prefix):
            # One listing of the blobs under <root>/<prefix> (no delimiter, no
            # check of the "folder" first): the string-prefix semantics needed.
            found = self._sync(names())
        return self._filter(found, prefix)


def _is_folder(metadata: Mapping[str, str] | None) -> bool:
    """Whether a blob is a folder: adlfs's marker, or a real one of a hierarchical namespace.

    ADLS Gen2 (an account with a hierarchical namespace) lists its directories
    through the Blob API as blobs with ``hdi_isfolder=true``; adlfs marks the
    empty "folders" it makes with ``is_directory=true``. Neither is a file.
    """
    values = {name.lower(): value.lower() for name, value in (metadata or {}).items()}
    return values.get("is_directory") == "true" or values.get("hdi_isfolder") == "true"


def _retry_sooner(client: Any) -> None:
    """Shorten the waits of the retry policy every blob client of ``client`` shares.

    adlfs passes no retry settings to the service client it builds, and its
    blob and container clients share the service client's policy objects,
    so the policy is adjusted in place (the SDK's documented attributes).
    """
    policy = getattr(getattr(client, "_config", None), "retry_policy", None)
    if policy is not None and hasattr(policy, "initial_backoff"):
        policy.initial_backoff, policy.increment_base, policy.random_jitter_range = RETRY_BACKOFF


def _total_size(content_range: str | None, fallback: int) -> int:
    """The blob size in ``bytes <first>-<last>/<size>``; ``fallback`` when absent."""
    if content_range and "/" in content_range:
        total = content_range.rsplit("/", 1)[1]
        if total.isdigit():
            return int(total)
    return fallback
