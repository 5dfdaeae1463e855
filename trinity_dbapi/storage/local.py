"""Local POSIX file system storage for ``file://`` root URIs.

Exclusive create (FORMAT-NOTES section 1): the content is written to a hidden
temp file (``.tmp-<uuid4>``) in the target's directory, flushed and fsynced, and
then hard-linked into place with :func:`os.link`. ``link`` fails atomically with
``EEXIST`` when the target exists, so exactly one of several concurrent creators
wins, and because the winner links an already complete file no reader can ever
see it half-written. The temp file is always unlinked afterwards and the
directory is fsynced so the new entry survives a crash. There is never a
check-then-write window.

Overwrites (only ``_latest_hint.txt``) use temp file + fsync + :func:`os.replace`,
which is atomic too: readers see the old or the new content, never a mix.

Imports from storage/: base, uri.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from trinity_dbapi.errors import (
    ExclusiveCreateNotSupportedError,
    FileAlreadyExistsError,
    InvalidURIError,
    StorageError,
    StorageFileNotFoundError,
)
from trinity_dbapi.storage.base import Storage
from trinity_dbapi.storage.uri import check_path, normalize_root_uri

#: Name prefix of in-flight temp files; they are never listed.
TEMP_PREFIX = ".tmp-"

# errno values meaning "this file system cannot make hard links".
_NO_LINK_ERRNOS = frozenset(
    code
    for code in (
        getattr(errno, "EPERM", None),
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        getattr(errno, "ENOSYS", None),
    )
    if code is not None
)


class LocalStorage(Storage):
    """Storage on a local (POSIX) file system.

    Args:
        root_uri: a ``file://`` root URI or a plain local path; it is normalised
            with :func:`normalize_root_uri`.
        cache_bytes: the immutable-file cache (:class:`~trinity_dbapi.storage.Storage`).

    The root directory is created lazily, by the first write.
    """

    def __init__(self, root_uri: str, *, cache_bytes: int | None = None) -> None:
        root_uri = normalize_root_uri(root_uri)
        if not root_uri.startswith("file://"):
            raise InvalidURIError(
                root_uri, f"LocalStorage needs a file:// root URI, got {root_uri!r}"
            )
        super().__init__(root_uri, cache_bytes=cache_bytes)
        self.root_dir = _uri_to_os_path(root_uri)
        self._made_dirs: set[str] = set()

    # -- accessors ------------------------------------------------------------

    @property
    def local_root(self) -> str:
        """The root folder, without a trailing ``/``."""
        return self.root_dir.rstrip("/")

    def fsspec_filesystem(self) -> tuple[Any, str]:
        """fsspec's local file system and the root folder (no trailing ``/``)."""
        from fsspec.implementations.local import LocalFileSystem

        return LocalFileSystem(), self.root_dir.rstrip("/")

    # -- helpers --------------------------------------------------------------

    def _os_path(self, path: str) -> str:
        check_path(path)
        return os.path.join(self.root_dir, *path.split("/"))

    @contextlib.contextmanager
    def _errors(self, operation: str, path: str) -> Iterator[None]:
        # Turn OS errors into the driver's hierarchy, naming the storage path.
        # Our own errors are not OSErrors and pass through untouched.
        try:
            yield
        except OSError as exc:
            hint = ""
            root = os.path.normpath(self.root_dir)  # "x/" of a file x does not exist
            if os.path.exists(root) and not os.path.isdir(root):
                hint = (
                    "; the root is a file, not a folder: give the path of a folder "
                    "(it is created if missing)"
                )
            raise StorageError(
                f"{operation} of {path!r} under {self.root_uri} failed: "
                f"{type(exc).__name__}: {exc.strerror or exc}{hint}",
                path=path,
            ) from exc

    def _write_temp(self, directory: str, data: bytes, *, sync: bool = True) -> str:
        if directory not in self._made_dirs:  # one makedirs per directory, not per file
            os.makedirs(directory, exist_ok=True)
            self._made_dirs.add(directory)
        temp = os.path.join(directory, f"{TEMP_PREFIX}{uuid.uuid4()}")
        try:
            try:
                handle = open(temp, "xb")  # noqa: SIM115 - closed by the with below
            except FileNotFoundError:  # the directory was removed behind our back
                os.makedirs(directory, exist_ok=True)
                handle = open(temp, "xb")  # noqa: SIM115
            with handle:
                handle.write(data)
                if sync:
                    handle.flush()
                    os.fsync(handle.fileno())
        except BaseException:
            _unlink_quietly(temp)
            raise
        return temp

    # -- primitives -----------------------------------------------------------

    def _read(self, path: str) -> bytes:
        full = self._os_path(path)
        with self._errors("read", path):
            try:
                with open(full, "rb") as handle:
                    return handle.read()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
                # A directory is not a file: object stores would say "no such key".
                raise StorageFileNotFoundError(
                    f"file {path!r} does not exist under {self.root_uri}", path=path
                ) from exc

    def create_unique_later(self, path: str, data: bytes) -> None:
        """:meth:`create_unique` now: a local file costs no round trip to hide.

        Readers on a local root (DuckDB, Arrow) open its files by path, not
        through this storage, so a file must be on disk before anyone can
        read it, even within the transaction that wrote it.
        """
        self.create_unique(path, data)

    def _read_range(self, path: str, start: int, end: int) -> bytes:
        full = self._os_path(path)
        with self._errors("read", path):
            try:
                with open(full, "rb") as handle:
                    if end == 0 and start < 0:
                        handle.seek(max(0, os.fstat(handle.fileno()).st_size + start))
                        return handle.read()
                    handle.seek(start)
                    return handle.read(max(0, end - start))
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
                raise StorageFileNotFoundError(
                    f"file {path!r} does not exist under {self.root_uri}", path=path
                ) from exc

    def _size(self, path: str) -> int:
        full = self._os_path(path)
        with self._errors("size", path):
            try:
                if os.path.isdir(full):
                    raise FileNotFoundError(full)
                return os.path.getsize(full)
            except (FileNotFoundError, NotADirectoryError) as exc:
                raise StorageFileNotFoundError(
                    f"file {path!r} does not exist under {self.root_uri}", path=path
                ) from exc

    def _write(self, path: str, data: bytes) -> None:
        # Overwrites serve only the latest-version hint, which is best effort:
        # readers probe forward past a stale hint. The rename keeps it atomic
        # (never seen half-written); an fsync would only make it durable.
        full = self._os_path(path)
        directory = os.path.dirname(full)
        with self._errors("write", path):
            if self._overwrite_in_place(full, data):
                return
            temp = self._write_temp(directory, data, sync=False)
            try:
                os.replace(temp, full)
            except BaseException:
                _unlink_quietly(temp)
                raise

    @staticmethod
    def _overwrite_in_place(full: str, data: bytes) -> bool:
        """Overwrite a file of the same size with one ``pwrite``; False if it is not one.

        The hint is written at a fixed width, so each update is one small
        write into an existing file: no new inode, no rename. A reader racing
        it could at worst see a torn number, which it treats like any stale
        or garbage hint (it probes forward from a version that exists).
        """
        try:
            fd = os.open(full, os.O_WRONLY)
        except FileNotFoundError:
            return False
        try:
            if os.fstat(fd).st_size != len(data):
                return False
            return os.pwrite(fd, data, 0) == len(data)
        finally:
            os.close(fd)

    def _create_exclusive(self, path: str, data: bytes) -> None:
        self._publish(path, data, None)

    def _create_exclusive_staged(
        self, path: str, data: bytes, before_publish: Callable[[], None]
    ) -> None:
        # Counted from the link: the temp file is private work that overlaps
        # the files the hook waits for.
        self._publish(path, data, before_publish)

    def _publish(self, path: str, data: bytes, before_publish: Callable[[], None] | None) -> None:
        full = self._os_path(path)
        directory = os.path.dirname(full)
        with self._errors("exclusive create", path):
            temp = self._write_temp(directory, data)
            try:
                if before_publish is not None:
                    before_publish()  # the temp's sync overlapped the caller's I/O
                    with self._request("creates", len(data)):
                        os.link(temp, full)
                else:
                    os.link(temp, full)
            except FileExistsError as exc:
                raise FileAlreadyExistsError(
                    f"file {path!r} already exists under {self.root_uri}: another "
                    "writer created it first",
                    path=path,
                ) from exc
            except OSError as exc:
                if exc.errno in _NO_LINK_ERRNOS:
                    raise ExclusiveCreateNotSupportedError(
                        f"the file system under {self.root_uri} cannot create hard "
                        f"links ({exc.strerror}), which LocalStorage needs for atomic "
                        "exclusive create; put the lakehouse on a POSIX file system "
                        "such as ext4, xfs, apfs or tmpfs",
                        uri=self.root_uri,
                    ) from exc
                raise
            finally:
                _unlink_quietly(temp)
            _fsync_directory(directory)

    def _create_unique(self, path: str, data: bytes) -> None:
        # Straight to the final name with O_EXCL: no temporary file, link or
        # unlink. A crash mid-write leaves a partial file that no root points
        # at; garbage collection removes it.
        full = self._os_path(path)
        directory = os.path.dirname(full)
        with self._errors("create", path):
            if directory not in self._made_dirs:
                os.makedirs(directory, exist_ok=True)
                self._made_dirs.add(directory)
            try:
                with open(full, "xb") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
            except FileExistsError as exc:
                raise FileAlreadyExistsError(
                    f"file {path!r} already exists under {self.root_uri}", path=path
                ) from exc
            except BaseException:
                _unlink_quietly(full)
                raise
            _fsync_directory(directory)

    def _delete(self, path: str) -> None:
        full = self._os_path(path)
        with self._errors("delete", path):
            try:
                os.unlink(full)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return  # no such file: deleting it is a no-op by contract

    def _exists(self, path: str) -> bool:
        return os.path.isfile(self._os_path(path))

    def _list(self, prefix: str) -> list[str]:
        return self._files_under(prefix, temporary=False)

    def _files_under(self, prefix: str, *, temporary: bool) -> list[str]:
        check_path(prefix, is_prefix=True)
        # The prefix is a string prefix: "a/b" matches "a/b.txt" and "a/bc/d".
        # Walk only the deepest directory the prefix fully names.
        directory, _, _ = prefix.rpartition("/")
        start = os.path.join(self.root_dir, *directory.split("/")) if directory else self.root_dir
        out: list[str] = []
        with self._errors("list", prefix):
            self._walk(
                start, f"{directory}/" if directory else "", prefix, out, temporary=temporary
            )
        return out

    def _list_with_times(self, prefix: str) -> list[tuple[str, float | None]]:
        # Include temporary files: a writer killed between writing its temp
        # file and linking it leaves one behind, and only GC removes it.
        timed: list[tuple[str, float | None]] = []
        for rel in self._files_under(prefix, temporary=True):
            try:
                timed.append((rel, os.stat(self._os_path_unchecked(rel)).st_mtime))
            except FileNotFoundError:
                continue  # deleted meanwhile
        return timed

    def _os_path_unchecked(self, path: str) -> str:
        return os.path.join(self.root_dir, *path.split("/"))

    def _walk(
        self, os_dir: str, rel_dir: str, prefix: str, out: list[str], *, temporary: bool = False
    ) -> None:
        try:
            entries = list(os.scandir(os_dir))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            if entry.name.startswith(TEMP_PREFIX) and not temporary:
                continue
            rel = rel_dir + entry.name
            if entry.is_dir():
                # Descend only if something below could still match the prefix.
                if (rel + "/").startswith(prefix) or prefix.startswith(rel + "/"):
                    self._walk(entry.path, rel + "/", prefix, out, temporary=temporary)
            elif rel.startswith(prefix) and entry.is_file():
                out.append(rel)


def _uri_to_os_path(root_uri: str) -> str:
    path = root_uri[len("file://") :]
    if os.name == "nt" and len(path) > 2 and path[2] == ":":
        path = path[1:]  # file:///C:/x/ -> C:/x/
    return path


def _unlink_quietly(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _fsync_directory(directory: str) -> None:
    # Make the new directory entry durable; not possible (nor needed) on Windows.
    if os.name == "nt":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["TEMP_PREFIX", "LocalStorage"]
