"""How a DuckDB connection reaches a lakehouse's files: local paths or a registered file system."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import duckdb

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
    different credentials, and the connection's own ``s3://`` access, never
    mix. Local roots whose path DuckDB would expand as a glob go the same way.
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
    query; on S3 each glob would be a LIST request. The views only name files
    that a committed version references, so they exist (a missing one fails
    when it is opened).
    """

    def glob(self, path: str, **kwargs: Any) -> Any:
        stripped = self._strip_protocol(path)  # type: ignore[attr-defined]
        if GLOB_CHARS & set(stripped):
            return super().glob(path, **kwargs)  # type: ignore[misc]
        return [stripped]
