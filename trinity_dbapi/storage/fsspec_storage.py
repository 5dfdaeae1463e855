"""Storages on fsspec file systems: a generic one, in-memory and S3.

* :class:`FsspecStorage` works on any fsspec file system for reads, writes,
  lists and deletes, but cannot promise that exactly one concurrent creator of
  a file wins, so it refuses ``create_exclusive`` (and therefore commits).
* :class:`MemoryStorage` (``memory://``) makes create-exclusive atomic with a
  process-wide lock. fsspec's memory file system is a per-process dict, so the
  lock is all that is needed, and nothing is shared between processes anyway.
* :class:`S3Storage` (``s3://``, ``s3a://``) uses S3 conditional writes:
  ``PutObject`` with ``If-None-Match: *`` (``s3fs`` ``pipe_file(mode="create")``).
  S3 accepts exactly one such PUT per key and answers every other with
  ``412 Precondition Failed``; the object becomes visible only complete.

s3fs is imported lazily, on the first S3 root, so ``import trinity_dbapi`` stays
fast and s3fs stays an optional dependency (``pip install trinity-dbapi[s3]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import random
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

from trinity_dbapi.errors import (
    ExclusiveCreateNotSupportedError,
    FileAlreadyExistsError,
    InvalidURIError,
    NotSupportedError,
    StorageError,
    StorageFileNotFoundError,
)
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.storage.redact import RedactedCause, Redactor
from trinity_dbapi.storage.uri import check_path, normalize_root_uri

#: Connections an S3 storage keeps open (botocore's ``max_pool_connections``)
#: unless its options say otherwise.
MAX_CONNECTIONS = 64

#: Schemes whose storage can commit (guarantees a single exclusive creator).
COMMIT_SCHEMES = ("file", "memory", "s3", "s3a")

# fsspec's memory file system is one dict per process; one lock per process makes
# check-then-write atomic for every MemoryStorage of that process.
_MEMORY_LOCK = threading.Lock()


class FsspecStorage(Storage):
    """Storage on any fsspec file system, without exclusive create.

    Args:
        root_uri: the root URI; normalised with :func:`normalize_root_uri`.
        fs: an fsspec ``AbstractFileSystem`` able to reach ``root_uri``.
        storage_options: the options ``fs`` was built from; only used to keep
            their secret values out of error messages.
        cache_bytes: the immutable-file cache (:class:`~trinity_dbapi.storage.Storage`).
    """

    supports_exclusive_create = False

    def __init__(
        self,
        root_uri: str,
        fs: Any,
        *,
        storage_options: Mapping[str, Any] | None = None,
        cache_bytes: int | None = None,
    ) -> None:
        root_uri = normalize_root_uri(root_uri)
        super().__init__(root_uri, cache_bytes=cache_bytes)
        self.fs = fs
        self.scheme = root_uri.split("://", 1)[0]
        self._base = fs._strip_protocol(root_uri).rstrip("/")
        #: Hides the secrets of ``storage_options`` in messages and causes.
        self.redact = Redactor(storage_options)
        self._identity = root_uri + _options_digest(storage_options)

    @property
    def cache_identity(self) -> str:
        """The root URI and a digest of the options (credentials included) it was opened with."""
        return self._identity

    # -- accessors ------------------------------------------------------------

    def fsspec_filesystem(self) -> tuple[Any, str]:
        """The storage's own fsspec file system and the root's path on it (no trailing ``/``)."""
        return self.fs, self._base

    # -- helpers --------------------------------------------------------------

    def _full(self, path: str) -> str:
        check_path(path)
        return f"{self._base}/{path}"

    def _relative(self, full: str) -> str | None:
        full = full.rstrip("/") if full.endswith("/") else full
        start = self._base + "/"
        return full[len(start) :] if full.startswith(start) else None

    @contextlib.contextmanager
    def _errors(self, operation: str, path: str) -> Iterator[None]:
        """Map backend exceptions to StorageError subclasses naming ``path``.

        The back end's exception is not kept as the cause: botocore's and
        aiohttp's carry endpoint URLs, requests and options, which a
        traceback prints whole. A redacted stand-in with its type and
        message is the cause instead, and the original is not kept as the
        ``__context__`` either.
        """
        error: Exception
        try:
            yield
            return
        except (StorageError, NotSupportedError, InvalidURIError):
            raise
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            error = StorageFileNotFoundError(
                f"file {path!r} does not exist under {self.root_uri}", path=path
            )
            cause = self.redact.scrubbed(exc)
        except Exception as exc:  # noqa: BLE001 - botocore, aiohttp, OSError...: all become ours
            cause = self.redact.scrubbed(exc)
            error = StorageError(
                f"{operation} of {path!r} under {self.root_uri} failed: {cause}", path=path
            )
        try:
            raise error from cause
        finally:
            # The with statement runs this while it handles the back end's
            # exception, so the raise made that the context: drop it.
            error.__context__ = None

    # -- primitives -----------------------------------------------------------

    def _read(self, path: str) -> bytes:
        full = self._full(path)
        with self._errors("read", path):
            return bytes(self.fs.cat_file(full))

    def _read_range(self, path: str, start: int, end: int) -> bytes:
        full = self._full(path)
        with self._errors("read", path):
            if end == 0 and start < 0:
                return bytes(self.fs.cat_file(full, start=start))
            return bytes(self.fs.cat_file(full, start=start, end=end))

    def _size(self, path: str) -> int:
        full = self._full(path)
        with self._errors("size", path):
            info = self.fs.info(full)
            if info.get("type") != "file":
                raise FileNotFoundError(full)
            return int(info["size"])

    def _write(self, path: str, data: bytes) -> None:
        full = self._full(path)
        with self._errors("write", path):
            self._pipe(full, data)

    def _pipe(self, full: str, data: bytes) -> None:
        try:
            self.fs.pipe_file(full, data)
        except FileNotFoundError:
            # Directory-based file systems need the parent to exist first.
            self.fs.makedirs(self.fs._parent(full), exist_ok=True)
            self.fs.pipe_file(full, data)
        self.fs.invalidate_cache(full)

    def _create_exclusive(self, path: str, data: bytes) -> None:
        raise ExclusiveCreateNotSupportedError(
            f"the {self.scheme!r} storage at {self.root_uri} cannot guarantee that "
            f"exactly one concurrent creator of {path!r} wins, so it cannot commit; "
            f"use a storage that can: {', '.join(s + '://' for s in COMMIT_SCHEMES)}",
            uri=self.root_uri,
        )

    def _delete(self, path: str) -> None:
        full = self._full(path)
        with self._errors("delete", path):
            try:
                self.fs.rm_file(full)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                pass  # deleting a missing file is a no-op by contract
            finally:
                self.fs.invalidate_cache(full)

    def _exists(self, path: str) -> bool:
        full = self._full(path)
        with self._errors("exists", path):
            return bool(self.fs.isfile(full))

    def _list(self, prefix: str) -> list[str]:
        check_path(prefix, is_prefix=True)
        directory = prefix.rpartition("/")[0]
        start = f"{self._base}/{directory}" if directory else self._base
        with self._errors("list", prefix):
            try:
                found = self.fs.find(start)
            except FileNotFoundError:
                return []
        return self._filter(found, prefix)

    def _list_with_times(self, prefix: str) -> list[tuple[str, float | None]]:
        check_path(prefix, is_prefix=True)
        directory = prefix.rpartition("/")[0]
        start = f"{self._base}/{directory}" if directory else self._base
        with self._errors("list", prefix):
            try:
                found = self.fs.find(start, detail=True)
            except FileNotFoundError:
                return []
        keep = set(self._filter(list(found), prefix))
        return [
            (rel, _mtime(info))
            for full, info in found.items()
            if (rel := self._relative(full)) is not None and rel in keep
        ]

    def _filter(self, found: list[str], prefix: str) -> list[str]:
        out = []
        for full in found:
            if full.endswith("/"):
                continue  # directory placeholder objects are not files
            rel = self._relative(full)
            if rel is not None and rel.startswith(prefix):
                out.append(rel)
        return out


class MemoryStorage(FsspecStorage):
    """Storage in fsspec's in-process memory file system (``memory://``).

    Exclusive create is a check-then-write under a process-wide lock, which is
    atomic because the memory file system exists only inside this process: it
    is for tests and demos, never for sharing a lakehouse between processes.

    Args:
        root_uri: a ``memory://`` root URI.
        cache_bytes: the immutable-file cache (:class:`~trinity_dbapi.storage.Storage`).
    """

    supports_exclusive_create = True

    def __init__(self, root_uri: str, *, cache_bytes: int | None = None) -> None:
        import fsspec  # fsspec is a core dependency; imported here to keep import cheap

        super().__init__(root_uri, fsspec.filesystem("memory"), cache_bytes=cache_bytes)

    def _write(self, path: str, data: bytes) -> None:
        with _MEMORY_LOCK:
            super()._write(path, data)

    def _create_exclusive(self, path: str, data: bytes) -> None:
        full = self._full(path)
        with _MEMORY_LOCK, self._errors("exclusive create", path):
            if self.fs.isfile(full):
                raise FileAlreadyExistsError(
                    f"file {path!r} already exists under {self.root_uri}: another "
                    "writer created it first",
                    path=path,
                )
            # Copy so a caller mutating a bytearray cannot change the stored file.
            self._pipe(full, bytes(data))

    def _delete(self, path: str) -> None:
        with _MEMORY_LOCK:
            super()._delete(path)


_PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
)


def _no_tls_for_plain_http(options: dict[str, Any]) -> None:
    """An ``http://`` endpoint (MinIO, a local server) needs no certificate bundle.

    botocore's HTTP session loads the CA bundle for every new client (about
    20 ms) although a plain-HTTP connection never uses it; ``verify=False``
    skips that. Not when the user set ``verify``, or a proxy could carry the
    connection over TLS.
    """
    client = dict(options.get("client_kwargs") or {})
    endpoint = str(options.get("endpoint_url") or client.get("endpoint_url") or "")
    config = options.get("config_kwargs") or {}
    if (
        not endpoint.lower().startswith("http://")
        or "verify" in client
        or "proxies" in config
        or any(os.environ.get(name) for name in _PROXY_VARIABLES)
    ):
        return
    client["verify"] = False
    options["client_kwargs"] = client


_S3_FILESYSTEM: Any = None


def _s3_filesystem_class() -> Any:
    """``s3fs.S3FileSystem``, whose own botocore session reads models through the cache.

    See ``botocore_models.py``: a new process's first client is made in about
    a third of the time. A session the caller passes is left as it is.
    """
    global _S3_FILESYSTEM
    if _S3_FILESYSTEM is None:
        import aiobotocore.session
        import s3fs
        from fsspec.asyn import sync_wrapper

        from trinity_dbapi.storage import botocore_models

        class S3FileSystem(s3fs.S3FileSystem):  # type: ignore[misc]
            async def set_session(self, refresh: bool = False, kwargs: Any = None) -> Any:
                if getattr(self, "session", None) is None and self._s3 is None:
                    session = aiobotocore.session.AioSession(**self.kwargs)
                    botocore_models.install(session)
                    self.session: Any = session
                return await super().set_session(refresh=refresh, kwargs=kwargs or {})

            # s3fs binds these to its own set_session when its class is made.
            _connect = set_session
            connect = sync_wrapper(set_session)

        _S3_FILESYSTEM = S3FileSystem
    return _S3_FILESYSTEM


class S3Storage(FsspecStorage):
    """Storage on Amazon S3 or an S3-compatible store (``s3://``, ``s3a://``).

    Args:
        root_uri: an ``s3://bucket/prefix`` (or ``s3a://``) root URI.
        storage_options: passed to ``s3fs.S3FileSystem`` (``key``, ``secret``,
            ``token``, ``endpoint_url``, ``client_kwargs``, ...). The listings
            cache is always disabled: TrinityLake needs every list and existence
            check to see writes made by other processes.
        cache_bytes: the immutable-file cache (:class:`~trinity_dbapi.storage.Storage`).

    Raises:
        NotSupportedError: s3fs is not installed.
    """

    supports_exclusive_create = True

    #: How often a ``409 ConditionalRequestConflict`` is retried; S3 returns it
    #: when a conditional PUT races another in-flight write to the same key.
    conflict_retries = 5

    def __init__(
        self,
        root_uri: str,
        *,
        storage_options: Mapping[str, Any] | None = None,
        cache_bytes: int | None = None,
    ) -> None:
        try:
            import s3fs  # noqa: F401 - missing s3fs is reported here, clearly
        except ImportError as exc:
            raise NotSupportedError(
                "s3:// root URIs need the s3fs package: pip install trinity-dbapi[s3]"
            ) from exc
        options = dict(storage_options or {})
        # A stale listings cache would hide other writers' files from list and
        # exists; strong consistency (FORMAT-NOTES section 1) forbids that.
        options["use_listings_cache"] = False
        # botocore keeps 10 connections per client by default, which would put
        # a scan of 30 files in 3 rounds; a batch may have 64 requests in flight.
        config = dict(options.get("config_kwargs") or {})
        config.setdefault("max_pool_connections", MAX_CONNECTIONS)
        options["config_kwargs"] = config
        _no_tls_for_plain_http(options)
        fs = _s3_filesystem_class()(**options)
        super().__init__(root_uri, fs, storage_options=options, cache_bytes=cache_bytes)
        self._bucket = self._base.split("/", 1)[0]

    def _key(self, full: str) -> str:
        return full.split("/", 1)[1]

    def prepare(self) -> None:
        # botocore's client: about 30 ms of Python (its models, its event
        # handlers) before the first request can go out.
        with contextlib.suppress(Exception):
            self.fs.connect()

    def _read(self, path: str) -> bytes:
        full = self._full(path)
        with self._errors("read", path):
            # max_concurrency=1: one GET. Otherwise s3fs first sends a HEAD to
            # decide whether to fetch the object in parallel ranges.
            return bytes(self.fs.cat_file(full, max_concurrency=1))

    def _read_many(self, paths: Sequence[str]) -> list[bytes]:
        # Every GET at once on s3fs's event loop: one round trip for all of
        # them, where threads would each hold a connection and a stack.
        return self._gather([partial(self._get, path, max_concurrency=1) for path in paths])

    def _read_tails(self, paths: Sequence[str], limit: int) -> list[bytes]:
        # Range: bytes=-<limit> answers with the whole object when it is smaller.
        return self._gather([partial(self._get, path, start=-limit) for path in paths])

    async def _get(self, path: str, depth: int, **options: Any) -> bytes:
        full = self._full(path)
        if self.latency:
            await asyncio.sleep(self.latency)
        data = b""
        try:
            with self._errors("read", path):
                data = bytes(await self.fs._cat_file(full, **options))
            return data
        finally:
            self._end(depth, "reads", len(data))

    def _size(self, path: str) -> int:
        full = self._full(path)
        with self._errors("size", path):
            reply = self.fs.call_s3("head_object", Bucket=self._bucket, Key=self._key(full))
            return int(reply["ContentLength"])

    def exists_many(self, paths: Sequence[str]) -> list[bool]:
        """Every HEAD at once on s3fs's event loop: one round."""

        async def one(path: str, depth: int) -> bool:
            full = self._full(path)
            if self.latency:
                await asyncio.sleep(self.latency)
            try:
                with self._errors("exists", path):
                    try:
                        await self.fs._call_s3(
                            "head_object", Bucket=self._bucket, Key=self._key(full)
                        )
                    except FileNotFoundError:
                        return False
                    return True
            finally:
                self._end(depth, "exists")

        return self._gather([partial(one, path) for path in paths])

    def _gather(self, requests: list[Callable[[int], Awaitable[Any]]]) -> list[Any]:
        """Run one request per item at once on s3fs's loop; each is given its round."""
        from fsspec.asyn import sync

        if not requests:
            return []
        depth = self._next_round()  # one round for them all, counted from this thread

        async def run() -> list[Any]:
            coroutines = [request(depth) for request in requests]
            results = await asyncio.gather(*coroutines, return_exceptions=True)
            for result in results:
                if isinstance(result, BaseException):
                    raise result
            return results

        return list(sync(self.fs.loop, run))

    def _write(self, path: str, data: bytes) -> None:
        full = self._full(path)
        with self._errors("write", path):
            self.fs.pipe_file(full, data)
            self.fs.invalidate_cache(full)

    def _create_exclusive(self, path: str, data: bytes) -> None:
        full = self._full(path)
        with self._errors("exclusive create", path):
            for attempt in range(self.conflict_retries + 1):
                lost: RedactedCause | None = None
                try:
                    # Sends If-None-Match: * (also on the multipart completion of
                    # large bodies); open(mode="xb") is NOT used: s3fs skips the
                    # condition for an empty body and silently overwrites.
                    self.fs.pipe_file(full, data, mode="create")
                    return
                except Exception as exc:
                    code = _s3_error_code(exc)
                    if isinstance(exc, FileExistsError) or code in ("PreconditionFailed", "412"):
                        lost = self.redact.scrubbed(exc)
                    elif code != "ConditionalRequestConflict" or attempt == self.conflict_retries:
                        raise
                finally:
                    self.fs.invalidate_cache(full)
                if lost is not None:
                    # Raised here, outside the except: botocore's error (which
                    # carries the endpoint) is neither the cause nor the context.
                    raise FileAlreadyExistsError(
                        f"file {path!r} already exists under {self.root_uri}: "
                        "another writer created it first",
                        path=path,
                    ) from lost
                # Another conditional write to this key is in flight; back off
                # and retry, the retry gets 412 if that write succeeded.
                time.sleep(random.uniform(0.01, 0.05) * (2**attempt))

    def _exists(self, path: str) -> bool:
        full = self._full(path)
        with self._errors("exists", path):
            try:
                # One HEAD request; fs.isfile would also list the "directory"
                # on a miss, doubling the cost of probing for root versions.
                self.fs.call_s3("head_object", Bucket=self._bucket, Key=self._key(full))
            except FileNotFoundError:
                return False
            return True

    def _list(self, prefix: str) -> list[str]:
        check_path(prefix, is_prefix=True)
        with self._errors("list", prefix):
            # One ListObjectsV2 with Prefix=<root key>/<prefix> and no delimiter:
            # exactly the string-prefix semantics the interface needs.
            found = self.fs.find(self._base, prefix=prefix)
        return self._filter(found, prefix)

    def _delete(self, path: str) -> None:
        # S3 DeleteObject succeeds for missing keys, matching the contract.
        super()._delete(path)


def _s3_error_code(exc: BaseException) -> str | None:
    """The S3 error code of ``exc`` or of the botocore error it was made from."""
    seen: BaseException | None = exc
    while seen is not None:
        response = getattr(seen, "response", None)
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
            if code is not None:
                return str(code)
        seen = seen.__cause__ or seen.__context__
    return None


__all__ = ["COMMIT_SCHEMES", "FsspecStorage", "MemoryStorage", "S3Storage"]


def _options_digest(options: Mapping[str, Any] | None) -> str:
    """A digest of the options a store was opened with: ``""`` for none.

    It tells apart two users of one store (other keys, tokens, profiles or
    endpoints) without keeping their secrets in a readable key.
    """
    if not options:
        return ""
    text = repr(sorted((str(k), repr(v)) for k, v in options.items()))
    return "#" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _mtime(info: Mapping[str, Any]) -> float | None:
    """Modification time (epoch seconds) from an fsspec info dict, if it has one."""
    for name in ("mtime", "LastModified", "last_modified", "created"):
        value = info.get(name)
        if value is None:
            continue
        if hasattr(value, "timestamp"):
            return float(value.timestamp())
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return None
