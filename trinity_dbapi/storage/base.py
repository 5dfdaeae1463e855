"""The storage seam: one small interface every backend implements.

TrinityLake needs six operations from a storage (FORMAT-NOTES section 1): read,
write (overwrite; used only for the latest-version hint), create-exclusive
(exactly one of several concurrent creators of a path wins and the winner's
file is never seen half-written), delete, exists and list by prefix.

Backends implement the ``_``-prefixed primitives; this base class adds what all
of them share: batch calls that put many requests in one round
(``read_many``, ``exists_many``, ``create_unique_many``, ``write_many``),
creates left to finish in the background until a commit settles them, and
the cache of immutable files (:mod:`trinity_dbapi.storage.cache`). Every
TrinityLake file except ``_latest_hint.txt`` is immutable once created, so
only the hint is never cached. How requests are counted, in rounds, and sent
side by side is :mod:`trinity_dbapi.storage.rounds` (:class:`Rounds`, which
:class:`Storage` extends).

Imports from storage/: cache, rounds.
"""

from __future__ import annotations

import builtins
import contextlib
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from functools import partial
from typing import Any

from trinity_dbapi.errors import FileAlreadyExistsError, StorageFileNotFoundError
from trinity_dbapi.storage.cache import SHARED_CACHE_BYTES, ImmutableCache, shared_cache
from trinity_dbapi.storage.rounds import Rounds, batch_pool

#: Files that may be overwritten and therefore must never be served from cache.
MUTABLE_FILES = frozenset({"_latest_hint.txt"})

#: Capacity of the process-wide cache every storage uses by default.
DEFAULT_CACHE_BYTES = SHARED_CACHE_BYTES


#: Bytes of background creates (:meth:`Storage.create_unique_later`) one
#: storage holds before a new one waits for the oldest.
PENDING_BYTES = 128 * 1024 * 1024


class Storage(Rounds, ABC):
    """A Trinity Lakehouse storage: files addressed by paths under one root URI.

    Paths are relative to the root URI, use ``/`` as separator and never start
    with ``/`` (seed 000, "Path").

    Args:
        root_uri: the normalized root URI, always ending in ``/``.
        cache_bytes: None (the default): immutable files are kept in the
            process-wide cache (:mod:`trinity_dbapi.storage.cache`) under
            :attr:`cache_identity`; a number: a cache of this storage's own
            with that capacity; 0: no cache.
    """

    #: Whether ``create_exclusive`` really guarantees a single winner.
    supports_exclusive_create: bool = True

    def __init__(self, root_uri: str, *, cache_bytes: int | None = None) -> None:
        super().__init__()  # the request counters (Rounds)
        self.root_uri = root_uri
        if cache_bytes is None:
            self._cache: ImmutableCache | None = shared_cache()
        else:
            self._cache = ImmutableCache(cache_bytes) if cache_bytes > 0 else None
        #: Files being created in the background (:meth:`create_unique_later`).
        self._pending: dict[str, tuple[bytes, Future[None]]] = {}
        self._pending_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.root_uri!r})"

    @property
    def caches_reads(self) -> bool:
        """Whether immutable files read once are served from memory afterwards."""
        return self._cache is not None

    @property
    def cache_identity(self) -> str:
        """Who reads through this storage: the key its files are cached under.

        The root URI, plus (for stores opened with options) a digest of the
        options: two storages share cached bytes only when they would read
        the same bytes with the same rights.
        """
        return self.root_uri

    # -- public operations ----------------------------------------------------

    def read(self, path: str) -> bytes:
        """Return the content of ``path``.

        Raises:
            StorageFileNotFoundError: there is no such file.
        """
        cached = self._cached(path)
        if cached is not None:
            return cached
        with self._request("reads") as read:
            data = self._read(path)
            read[0] = len(data)
        self._keep(path, data)
        return data

    def read_many(self, paths: Sequence[str]) -> builtins.list[bytes]:
        """The contents of ``paths``, in order: cached ones from the cache, the rest in one round.

        The requests go out together (:data:`BATCH_THREADS` at a time, or
        all at once on a store with an asynchronous client), so N files cost
        one round trip, not N.

        Raises:
            StorageFileNotFoundError: one of the files does not exist.
        """
        found: builtins.list[bytes | None] = [self._cached(path) for path in paths]
        missing = list(dict.fromkeys(p for p, data in zip(paths, found) if data is None))
        if missing:
            fetched = dict(zip(missing, self._read_many(missing)))
            for path, data in fetched.items():
                self._keep(path, data)
            found = [data if data is not None else fetched[p] for p, data in zip(paths, found)]
        return [data for data in found if data is not None]

    def read_tails(self, paths: Sequence[str], limit: int) -> builtins.list[tuple[bytes, bool]]:
        """Each file whole when it holds under ``limit`` bytes, else its last ``limit``; one round.

        One request per file (a suffix-range GET on object storage), with no
        size asked first: ``(data, True)`` is the whole file (and is cached
        like :meth:`read`), ``(tail, False)`` the last ``limit`` bytes of a
        bigger one, whose footer a Parquet reader finds there.

        Raises:
            StorageFileNotFoundError: one of the files does not exist.
        """
        out: builtins.list[tuple[bytes, bool] | None] = []
        for path in paths:
            cached = self._cached(path)
            out.append(None if cached is None else (cached, True))
        missing = list(dict.fromkeys(p for p, got in zip(paths, out) if got is None))
        if missing:
            fetched = dict(zip(missing, self._read_tails(missing, limit)))
            for path, data in fetched.items():
                if len(data) < limit:
                    self._keep(path, data)
            out = [
                got if got is not None else (fetched[p], len(fetched[p]) < limit)
                for p, got in zip(paths, out)
            ]
        return [got for got in out if got is not None]

    def read_range(self, path: str, start: int, end: int) -> bytes:
        """Bytes ``start`` to ``end`` (exclusive) of ``path``, in one request.

        A cached file answers from memory. ``start`` may be negative (with
        ``end`` 0) for the last ``-start`` bytes.
        """
        cached = self._cached(path)
        if cached is not None:
            return cached[start:] if end == 0 and start < 0 else cached[start:end]
        with self._request("reads") as read:
            data = self._read_range(path, start, end)
            read[0] = len(data)
        return data

    def read_ranges(self, ranges: Sequence[tuple[str, int, int]]) -> builtins.list[bytes]:
        """:meth:`read_range` for each ``(path, start, end)``, in one round."""
        return self.concurrently(
            [partial(self.read_range, p, start, end) for p, start, end in ranges]
        )

    def sizes(self, paths: Sequence[str]) -> builtins.list[int]:
        """:meth:`size` for each path, in one round."""
        return self.concurrently([partial(self.size, p) for p in paths])

    def size(self, path: str) -> int:
        """The size of ``path`` in bytes (one metadata request unless cached).

        Raises:
            StorageFileNotFoundError: there is no such file.
        """
        cached = self._cached(path)
        if cached is not None:
            return len(cached)
        with self._request("exists"):
            return self._size(path)

    def write(self, path: str, data: bytes) -> None:
        """Create or overwrite ``path``; only for mutable files such as the hint."""
        self._forget(path)
        with self._request("writes", len(data)):
            self._write(path, data)

    def write_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        """:meth:`write` for each ``(path, data)``, in one round."""
        self.concurrently([partial(self.write, p, d) for p, d in items])

    def create_exclusive(
        self,
        path: str,
        data: bytes,
        *,
        before_publish: Callable[[], None] | None = None,
    ) -> None:
        """Atomically create ``path`` with ``data`` unless it already exists.

        Exactly one of several concurrent creators of the same path wins; the
        file is never visible with partial content.

        Args:
            path: the file to create.
            data: its whole content.
            before_publish: called after the backend has done every step it can
                do privately (a local backend writes and syncs a hidden temp
                file) and before the file becomes visible. A commit waits there
                for the files its root points at, so their I/O overlaps the
                root's own; if it raises, nothing is published.

        Raises:
            FileAlreadyExistsError: the file existed, or another creator won.
            ExclusiveCreateNotSupportedError: the backend cannot guarantee it.
        """
        if before_publish is None:
            with self._request("creates", len(data)):
                self._create_exclusive(path, data)
        else:
            self._create_exclusive_staged(path, data, before_publish)
        if _is_immutable(path):
            self._keep(path, data)

    def create_unique(self, path: str, data: bytes) -> None:
        """Create a file whose name nobody else will ever create (a fresh UUID name).

        Like :meth:`create_exclusive`, but it need not hide the file while it is
        being written: no reader looks at such a file before a root that
        points at it exists, and that root is created only after this call
        returned. Backends may use it to save work (no temporary file).

        Raises:
            FileAlreadyExistsError: the file exists with other content (a
                file with exactly ``data`` is taken as this call's own create
                whose reply was lost).
        """
        try:
            with self._request("creates", len(data)):
                self._create_unique(path, data)
        except FileAlreadyExistsError:
            # Nobody else creates this name: an object store lost the reply to
            # our own create and its retry failed the precondition.
            with self._request("reads"):
                if self._read(path) != data:
                    raise
        self._keep(path, data)

    def create_unique_later(self, path: str, data: bytes) -> None:
        """Start :meth:`create_unique` in the background and return at once.

        Until it is done, this storage reads the file from ``data``. A commit
        calls :meth:`settle` before its root is created, so no version ever
        points at a file that is not complete: the file's request overlaps
        everything else the commit writes instead of waiting in front of it.
        """
        create = self.this_round(partial(self.create_unique, path, data))
        with self._pending_lock:
            self._pending[path] = (data, batch_pool().submit(create))
            oldest = list(self._pending.values())
        held = sum(len(waiting) for waiting, _ in oldest)
        # A big write must not hold all its files in memory: past the bound,
        # wait for the oldest ones (they stay pending until settled).
        for waiting, future in oldest:
            if held <= PENDING_BYTES:
                break
            wait([future])
            held -= len(waiting)

    def settle(self) -> None:
        """Wait for every :meth:`create_unique_later`; raise the first failure.

        Raises:
            StorageError: a background create failed (the commit waiting on
                it must not happen).
        """
        with self._pending_lock:
            pending, self._pending = self._pending, {}
        wait([future for _, future in pending.values()])
        for _, future in pending.values():
            future.result()

    def forget_pending(self) -> None:
        """Wait for the background creates and drop their failures (the transaction ended)."""
        with contextlib.suppress(Exception):
            self.settle()

    def create_unique_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        """:meth:`create_unique` for each ``(path, data)``, in one round."""
        self.concurrently([partial(self.create_unique, p, d) for p, d in items])

    def delete(self, path: str) -> None:
        """Delete ``path``; deleting a missing file is not an error."""
        self._forget(path)
        with self._request("deletes"):
            self._delete(path)

    def exists(self, path: str) -> bool:
        """Whether ``path`` exists (always asks the backend)."""
        with self._request("exists"):
            return self._exists(path)

    def exists_many(self, paths: Sequence[str]) -> builtins.list[bool]:
        """:meth:`exists` for each path, in one round."""
        return self.concurrently([partial(self.exists, p) for p in paths])

    def list(self, prefix: str = "") -> builtins.list[str]:
        """Sorted paths of every file whose path starts with ``prefix``."""
        with self._request("lists"):
            return sorted(self._list(prefix))

    def list_with_times(self, prefix: str = "") -> builtins.list[tuple[str, float | None]]:
        """Like :meth:`list`, with each file's modification time (epoch seconds).

        Garbage collection uses the times for its grace period. Backends also
        report their own leftovers here (such as the temporary files of a
        writer killed before it linked them into place); the time is None
        where the store does not say.
        """
        with self._request("lists"):
            return sorted(self._list_with_times(prefix))

    # -- the cache -----------------------------------------------------------------

    def _cached(self, path: str) -> bytes | None:
        if self._pending:
            with self._pending_lock:
                waiting = self._pending.get(path)
            if waiting is not None:
                return waiting[0]
        if self._cache is None or not _is_immutable(path):
            return None
        data = self._cache.get(self.cache_identity, path)
        if data is not None:
            self._hit()
        return data

    def _keep(self, path: str, data: bytes) -> None:
        if self._cache is not None and _is_immutable(path):
            self._cache.put(self.cache_identity, path, bytes(data))

    def _forget(self, path: str) -> None:
        if self._cache is not None:
            self._cache.discard(self.cache_identity, path)

    # -- what readers that open files themselves need ---------------------------

    @property
    def local_root(self) -> str | None:
        """The root's folder on the local file system, or None for other stores.

        The path has no trailing ``/``, so ``local_root + "/" + path`` names a
        file. Readers that open files themselves (DuckDB's ``read_parquet``,
        Arrow's local file system) read a local root directly, which is their
        fastest path; every other store goes through :meth:`fsspec_filesystem`.
        """
        return None

    def fsspec_filesystem(self) -> tuple[Any, str] | None:
        """An fsspec file system reaching this storage's files, and the root's path on it.

        The path has no trailing ``/``. Readers that need a file system rather
        than bytes (an Arrow dataset, a DuckDB-registered file system) use it.

        Returns:
            ``(filesystem, root_path)``, or None for a backend without one.
        """
        return None

    def prepare(self) -> None:
        """Make now what the first request needs (a client, a session); best effort.

        A caller with CPU work to start beside the first round trips calls
        this first, so the work overlaps the waits, not the making of the
        client. An error is left for the first request to meet and report.
        """

    def clear_cache(self) -> None:
        """Forget every cached file of this storage (benchmarks use it to measure cold reads)."""
        if self._cache is not None:
            self._cache.clear(self.cache_identity)

    def close(self) -> None:
        """Release backend resources."""

    # -- backend primitives ---------------------------------------------------

    @abstractmethod
    def _read(self, path: str) -> bytes:
        """Read a whole file; raise StorageFileNotFoundError when missing."""

    @abstractmethod
    def _write(self, path: str, data: bytes) -> None:
        """Create or overwrite a file."""

    @abstractmethod
    def _create_exclusive(self, path: str, data: bytes) -> None:
        """Create a file atomically; raise FileAlreadyExistsError if it exists."""

    @abstractmethod
    def _delete(self, path: str) -> None:
        """Delete a file; a missing file is not an error."""

    @abstractmethod
    def _exists(self, path: str) -> bool:
        """Whether a file exists."""

    @abstractmethod
    def _list(self, prefix: str) -> builtins.list[str]:
        """Paths (relative to the root) of all files starting with ``prefix``."""

    def _create_exclusive_staged(
        self, path: str, data: bytes, before_publish: Callable[[], None]
    ) -> None:
        """An exclusive create that calls ``before_publish`` before the file appears.

        By default the hook runs first; backends with a private staging step
        (a temp file) override this to run it in between. Overrides count
        the create with :meth:`_request` around their own I/O.
        """
        before_publish()
        with self._request("creates", len(data)):
            self._create_exclusive(path, data)

    def _read_many(self, paths: Sequence[str]) -> builtins.list[bytes]:
        """Read whole files side by side; backends with an async client override it."""

        def one(path: str) -> bytes:
            with self._request("reads") as read:
                data = self._read(path)
                read[0] = len(data)
            return data

        return self.concurrently([partial(one, p) for p in paths])

    def _read_tails(self, paths: Sequence[str], limit: int) -> builtins.list[bytes]:
        """The last ``limit`` bytes of each file, side by side."""

        def one(path: str) -> bytes:
            with self._request("reads") as read:
                data = self._read_range(path, -limit, 0)
                read[0] = len(data)
            return data

        return self.concurrently([partial(one, p) for p in paths])

    def _read_range(self, path: str, start: int, end: int) -> bytes:
        """A byte range; by default the whole file, sliced."""
        data = self._read(path)
        return data[start:] if end == 0 and start < 0 else data[start:end]

    def _size(self, path: str) -> int:
        """A file's size; by default the length of the whole file."""
        return len(self._read(path))

    def _create_unique(self, path: str, data: bytes) -> None:
        """Create a uniquely named file; by default an exclusive create."""
        self._create_exclusive(path, data)

    def _list_with_times(self, prefix: str) -> builtins.list[tuple[str, float | None]]:
        """Paths with modification times; backends that know them override this."""
        return [(path, None) for path in self._list(prefix)]


def _is_immutable(path: str) -> bool:
    return path.rsplit("/", 1)[-1] not in MUTABLE_FILES


__all__ = [
    "DEFAULT_CACHE_BYTES",
    "FileAlreadyExistsError",
    "Storage",
    "StorageFileNotFoundError",
]
