"""How a DuckDB connection reaches a lakehouse's files: local paths or a registered file system.

Imports from duckdb/: nothing.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import duckdb
from fsspec import AbstractFileSystem

from trinity_dbapi.errors import NotSupportedError

if TYPE_CHECKING:
    from trinity_dbapi.storage import Storage

#: Characters DuckDB expands as a glob in a file name.
GLOB_CHARS = frozenset("*?[{")


class FileAccess:
    """How DuckDB reaches the lakehouse's files: local paths, or a registered fsspec file system.

    A non-local storage's file system is registered (once, on first use) as
    a ``DirFileSystem`` rooted at the lakehouse root under a protocol private
    to the attachment, ``trinity-<token>://``, so two lakehouses with
    different credentials, and the connection's own ``s3://``, ``gs://`` or
    ``az://`` access, never mix. Local roots whose path DuckDB would expand
    as a glob go the same way.
    """

    def __init__(self, storage: Storage, token: str) -> None:
        self.storage = storage
        self.protocol = f"trinity-{token[:16]}"
        self._fs: Any = None
        self._registered_on: duckdb.DuckDBPyConnection | None = None
        self._local_root: str | None = None
        if storage.local_root is not None:
            root = storage.local_root + "/"
            if not GLOB_CHARS & set(root):
                self._local_root = root

    def path(self, relative: str) -> str:
        """What DuckDB reads for a file path relative to the lakehouse root."""
        if self._local_root is not None:
            return self._local_root + relative
        return f"{self.protocol}://{relative}"

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        """Register the file system in ``con`` if views need it (idempotent)."""
        if self._local_root is not None or self._registered_on is not None:
            return
        con.register_filesystem(self._filesystem())
        self._registered_on = con

    def close(self, con: duckdb.DuckDBPyConnection) -> None:
        if self._registered_on is not None:
            with contextlib.suppress(duckdb.Error):
                con.unregister_filesystem(self.protocol)
            self._registered_on = None

    def _filesystem(self) -> Any:
        from fsspec.implementations.dirfs import DirFileSystem

        if self.storage.local_root is None:
            # Through the storage: one request per file (its tail, or the
            # whole file, which the process's cache then serves to every
            # later query), no HEADs, and the storage's credentials and counters.
            cls = type(
                "TrinityRootFileSystem",
                (_KnownFiles, _StorageFileSystem),
                {"protocol": self.protocol, "cachable": False},
            )
            return cls(self.storage)
        reached = self.storage.fsspec_filesystem()
        if reached is None:
            raise NotSupportedError(
                "the DuckDB bridge reads local and fsspec storages, "
                f"not {type(self.storage).__name__}"
            )
        fs, root = reached
        # A class per attachment: DuckDB routes paths by the class's protocol.
        cls = type(
            "TrinityRootFileSystem",
            (_KnownFiles, DirFileSystem),
            {"protocol": self.protocol, "cachable": False},
        )
        return cls(path=root, fs=fs)


class _KnownFiles:
    """File system mixin: a path without wildcards globs to itself, without a request.

    DuckDB globs every path of a ``read_parquet`` list each time it binds a
    query; on an object store each glob would be a LIST request. The views
    only name files that a committed version references, so they exist (a
    missing one fails when it is opened).
    """

    def glob(self, path: str, **kwargs: Any) -> Any:
        stripped = self._strip_protocol(path)  # type: ignore[attr-defined]
        if GLOB_CHARS & set(stripped):
            return super().glob(path, **kwargs)  # type: ignore[misc]
        return [stripped]


class _StorageFileSystem(AbstractFileSystem):  # type: ignore[misc]
    """A read-only fsspec file system over a storage's files (paths relative to its root).

    DuckDB asks a file's size, then opens it: the size comes from the file's
    one request (a suffix-range GET bringing a small file whole), and the
    open from the bytes that request cached; a big file is read in ranges.
    """

    def __init__(self, storage: Storage, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.storage = storage

    def _fetched(self, path: str) -> tuple[bytes, bool]:
        from trinity_dbapi.errors import StorageFileNotFoundError
        from trinity_dbapi.tables.remote_files import WHOLE_FILE_BYTES

        try:
            return self.storage.read_tails([path], WHOLE_FILE_BYTES)[0]
        except StorageFileNotFoundError as exc:
            raise FileNotFoundError(path) from exc

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        path = self._strip_protocol(path)
        data, whole = self._fetched(path)
        size = len(data) if whole else self.storage.size(path)
        return {"name": path, "size": size, "type": "file"}

    def modified(self, path: str) -> Any:
        import datetime

        # Every file DuckDB reads here is immutable: one time is always true.
        return datetime.datetime.fromtimestamp(0, tz=datetime.timezone.utc)

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        info = self.info(path)
        return [info] if detail else [info["name"]]

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        import io

        from trinity_dbapi.tables.remote_files import ranged_file

        if mode != "rb":
            raise NotSupportedError(f"the lakehouse's files are read-only here, not {mode!r}")
        path = self._strip_protocol(path)
        data, whole = self._fetched(path)
        return io.BytesIO(data) if whole else ranged_file(self.storage, path, data)
