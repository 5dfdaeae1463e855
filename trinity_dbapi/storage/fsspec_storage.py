"""Storages on fsspec file systems: a generic one and in-memory.

* :class:`FsspecStorage` works on any fsspec file system for reads, writes,
  lists and deletes, but cannot promise that exactly one concurrent creator of
  a file wins, so it refuses ``create_exclusive`` (and therefore commits).
* :class:`MemoryStorage` (``memory://``) makes create-exclusive atomic with a
  process-wide lock. fsspec's memory file system is a per-process dict, so the
  lock is all that is needed, and nothing is shared between processes anyway.

The object stores that can commit build on :class:`FsspecStorage` in
``object_storage.py`` (what they share) and one module each: ``s3.py``,
``gcs.py``.

Imports from storage/: base, redact, uri.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Iterator, Mapping
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
from trinity_dbapi.storage.redact import Redactor
from trinity_dbapi.storage.uri import check_path, normalize_root_uri

#: Schemes whose storage can commit (guarantees a single exclusive creator).
COMMIT_SCHEMES = ("file", "memory", "s3", "s3a", "gs", "gcs", "abfs", "abfss", "az")

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
        self._options = dict(storage_options or {})
        self._identity = root_uri + _options_digest(storage_options)

    def beside(self, root_uri: str) -> FsspecStorage:
        """Another root on this storage's file system, with its options and cache.

        The same file system object (so the same credentials and endpoint),
        the same secrets kept out of messages, and files cached under the
        same credentials' digest: another user's storage of that root never
        reads them from the cache.
        """
        sibling = FsspecStorage(root_uri, self.fs, storage_options=self._options)
        sibling._cache = self._cache
        return sibling

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


__all__ = ["COMMIT_SCHEMES", "FsspecStorage", "MemoryStorage"]


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
