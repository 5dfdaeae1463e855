"""Object stores reached through an asynchronous fsspec file system: S3, GCS, Azure Blob.

What makes a commit work on them and a read cost round trips, not requests,
is the same on every one, so it is written once here:

* **Requests side by side.** ``read_many``, ``read_tails`` and
  ``exists_many`` put every request of a batch on the file system's event
  loop at once (one round trip for all, where threads would each hold a
  connection and a stack), each counted in the batch's round.
* **One existence check is one request** (a HEAD or the object's metadata):
  fsspec's ``isfile`` would also list the "directory" on a miss, doubling the
  cost of probing for root versions.
* **Exclusive create** through the store's own condition (S3 ``If-None-Match:
  *``, GCS ``ifGenerationMatch=0``, Azure ``If-None-Match: *``): a lost race
  is :class:`~trinity_dbapi.errors.FileAlreadyExistsError`, and a create that
  raced another in-flight write to the same key (S3 answers ``409``) backs off
  and asks again; the store answers that retry with "exists" if the other won.

A back end says how its requests look (:meth:`ObjectStorage._head`,
:meth:`ObjectStorage._put_if_absent`) and how its errors read
(:meth:`ObjectStorage._lost`, :meth:`ObjectStorage._in_flight`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any

from trinity_dbapi.errors import FileAlreadyExistsError
from trinity_dbapi.storage.fsspec_storage import FsspecStorage
from trinity_dbapi.storage.redact import RedactedCause
from trinity_dbapi.storage.uri import check_path

__all__ = ["ObjectStorage"]


class ObjectStorage(FsspecStorage):
    """Storage on an object store with conditional creates, through an async fsspec file system.

    Args:
        root_uri: the root URI (``<scheme>://<bucket or container>/<prefix>``).
        fs: the store's asynchronous fsspec file system.
        storage_options: what ``fs`` was made from; only used to keep their
            secret values out of messages.
        cache_bytes: the immutable-file cache (:class:`~trinity_dbapi.storage.Storage`).
    """

    supports_exclusive_create = True

    #: How often a create that raced another in-flight write to its key is
    #: asked again (S3's ``409 ConditionalRequestConflict``).
    conflict_retries = 5

    def __init__(
        self,
        root_uri: str,
        fs: Any,
        *,
        storage_options: Mapping[str, Any] | None = None,
        cache_bytes: int | None = None,
    ) -> None:
        super().__init__(root_uri, fs, storage_options=storage_options, cache_bytes=cache_bytes)
        #: The bucket (or container) and the key of the root inside it.
        self._bucket = self._base.split("/", 1)[0]

    def _key(self, full: str) -> str:
        return full.split("/", 1)[1]

    # -- what a back end says ------------------------------------------------------

    async def _head(self, full: str) -> int:
        """The size of the object ``full`` in one request; FileNotFoundError when missing."""
        info = await self.fs._info(full)
        if info.get("type") != "file":
            raise FileNotFoundError(full)
        return int(info["size"])

    def _get_options(self) -> dict[str, Any]:
        """Extra options of every whole-object GET (``_cat_file``)."""
        return {}

    def _put_if_absent(self, full: str, data: bytes) -> None:
        """Store ``data`` at ``full`` only if nothing is there, in one conditional request."""
        raise NotImplementedError

    def _lost(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the object already exists (the create lost)."""
        return isinstance(exc, FileExistsError)

    def _in_flight(self, exc: BaseException) -> bool:
        """Whether ``exc`` says another write to the key was in flight (ask again)."""
        return False

    # -- reads ---------------------------------------------------------------------

    def _read(self, path: str) -> bytes:
        full = self._full(path)
        with self._errors("read", path):
            return bytes(self.fs.cat_file(full, **self._get_options()))

    def _read_many(self, paths: Sequence[str]) -> list[bytes]:
        return self._gather([partial(self._get, path, **self._get_options()) for path in paths])

    def _read_tails(self, paths: Sequence[str], limit: int) -> list[bytes]:
        # A suffix range (bytes=-<limit>) answers with the whole object when it is smaller.
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
            return int(self._sync(self._head(full)))

    def _exists(self, path: str) -> bool:
        full = self._full(path)
        with self._errors("exists", path):
            try:
                self._sync(self._head(full))
            except FileNotFoundError:
                return False
            return True

    def exists_many(self, paths: Sequence[str]) -> list[bool]:
        """Every existence check at once on the file system's event loop: one round."""

        async def one(path: str, depth: int) -> bool:
            full = self._full(path)
            if self.latency:
                await asyncio.sleep(self.latency)
            try:
                with self._errors("exists", path):
                    try:
                        await self._head(full)
                    except FileNotFoundError:
                        return False
                    return True
            finally:
                self._end(depth, "exists")

        return self._gather([partial(one, path) for path in paths])

    def _gather(self, requests: list[Callable[[int], Awaitable[Any]]]) -> list[Any]:
        """Run one request per item at once on the file system's loop; each is given its round."""
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

        return list(self._sync(run()))

    def _sync(self, coroutine: Awaitable[Any]) -> Any:
        from fsspec.asyn import sync

        async def run() -> Any:
            return await coroutine

        return sync(self.fs.loop, run)

    # -- writes --------------------------------------------------------------------

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
                    self._put_if_absent(full, data)
                    return
                except Exception as exc:
                    if self._lost(exc):
                        lost = self.redact.scrubbed(exc)
                    elif not self._in_flight(exc) or attempt == self.conflict_retries:
                        raise
                finally:
                    self.fs.invalidate_cache(full)
                if lost is not None:
                    # Raised here, outside the except: the client's error (which
                    # carries the endpoint) is neither the cause nor the context.
                    raise FileAlreadyExistsError(
                        f"file {path!r} already exists under {self.root_uri}: "
                        "another writer created it first",
                        path=path,
                    ) from lost
                # Another conditional write to this key is in flight; back off
                # and retry, the retry gets "exists" if that write succeeded.
                time.sleep(random.uniform(0.01, 0.05) * (2**attempt))

    def _delete(self, path: str) -> None:
        # Deleting a missing object succeeds on object stores, matching the contract.
        super()._delete(path)

    def _list(self, prefix: str) -> list[str]:
        check_path(prefix, is_prefix=True)
        with self._errors("list", prefix):
            # One listing of the keys under <root key>/<prefix>, no delimiter:
            # exactly the string-prefix semantics the interface needs.
            found = self.fs.find(self._base, prefix=prefix)
        return self._filter(found, prefix)
