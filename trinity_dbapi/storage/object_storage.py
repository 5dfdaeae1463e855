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

* **A forked child opens its own file system.** An fsspec file system is
  not fork-safe (its event loop's thread stays in the parent): the first
  use in a child makes a new one from the same options. The finalizers of
  every asynchronous file system the parent made are dropped in the child,
  unrun: they close sessions on the parent's loop, and adlfs's waits for
  that without a timeout, so a child holding any would never exit.

A back end says how its requests look (:meth:`ObjectStorage._head`,
:meth:`ObjectStorage._put_if_absent`) and how its errors read
(:meth:`ObjectStorage._lost`, :meth:`ObjectStorage._in_flight`).

Imports from storage/: fsspec_storage, redact, uri.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import weakref
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
        reopen: makes another file system like ``fs``, for a forked child.
    """

    supports_exclusive_create = True

    _fs: Any
    _pid: int

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
        reopen: Callable[[], Any] | None = None,
    ) -> None:
        self._reopen = reopen
        super().__init__(root_uri, fs, storage_options=storage_options, cache_bytes=cache_bytes)
        #: The bucket (or container) and the key of the root inside it.
        self._bucket = self._base.split("/", 1)[0]

    def beside(self, root_uri: str) -> ObjectStorage:
        """Another root of this store, reached as this one is (its requests, options and cache).

        Of this storage's own class, so with its store's requests (an Azure
        tail is no suffix range), on the same file system object.
        """
        sibling = type(self).__new__(type(self))
        ObjectStorage.__init__(
            sibling, root_uri, self.fs, storage_options=self._options, reopen=self._reopen
        )
        sibling._cache = self._cache
        return sibling

    @property
    def fs(self) -> Any:
        """The file system, made again on first use in a forked child (see the module)."""
        if self._pid != os.getpid() and self._reopen is not None:
            self._fs, self._pid = self._reopen(), os.getpid()
        return self._fs

    @fs.setter
    def fs(self, value: Any) -> None:
        self._fs, self._pid = value, os.getpid()

    def _key(self, full: str) -> str:
        return full.split("/", 1)[1]

    @staticmethod
    def consistent(storage_options: Mapping[str, Any] | None) -> dict[str, Any]:
        """A copy of the user's options with fsspec's listings cache off.

        A stale listings cache would hide other writers' files from list and
        exists; strong consistency (FORMAT-NOTES section 1) forbids that.
        """
        return {**(storage_options or {}), "use_listings_cache": False}

    # -- what a back end says ------------------------------------------------------

    async def _head(self, full: str) -> int:
        """The size of the object ``full`` in one request; FileNotFoundError when missing."""
        raise NotImplementedError

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

    def _list(self, prefix: str) -> list[str]:
        check_path(prefix, is_prefix=True)
        with self._errors("list", prefix):
            # One listing of the keys under <root key>/<prefix>, no delimiter:
            # exactly the string-prefix semantics the interface needs.
            found = self.fs.find(self._base, prefix=prefix)
        return self._filter(found, prefix)


def _forget_the_parents_file_systems() -> None:
    """In a forked child, let go of the parent's async file systems without touching them.

    Their finalizers would close the parent's sessions on the parent's event
    loop, which has no thread here (adlfs waits for that without a timeout:
    the child would never exit), so they are dropped unrun. And the loop's
    epoll instance is the parent's own, shared through the fork: a
    connection the child closes (a collected session closes its pool)
    would be unregistered from it, and the parent would never hear that
    connection's next answer (Azure's SDK waited out its 60 s read timeout).
    The child's copy of each such loop gets a selector of its own, so what
    the child closes stays the child's.
    """
    import selectors

    from fsspec.asyn import AsyncFileSystem

    loops = set()
    for finalizer in list(weakref.finalize._registry):  # type: ignore[attr-defined]
        found = finalizer.peek()
        if found is not None and isinstance(found[0], AsyncFileSystem):
            finalizer.detach()
            loops.add(getattr(found[0], "_loop", None))
    for loop in loops:
        inherited = getattr(loop, "_selector", None)
        if isinstance(inherited, selectors.BaseSelector):
            inherited.close()  # the child's copy of the descriptor; the parent keeps its own
            loop._selector = selectors.DefaultSelector()  # type: ignore[union-attr]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_the_parents_file_systems)
