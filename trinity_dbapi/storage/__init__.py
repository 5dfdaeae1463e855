"""Storage back ends for Trinity Lakehouses (see docs/storage.md).

:func:`open_storage` turns a root URI into a :class:`Storage`:

=========================  =================  ====================================
URI                        back end           exclusive create
=========================  =================  ====================================
``file://``, a path        ``LocalStorage``   temp file + fsync + ``os.link``
``memory://``              ``MemoryStorage``  process-wide lock (in-process only)
``s3://``, ``s3a://``      ``S3Storage``      ``PutObject`` + ``If-None-Match: *``
``gs://``, ``gcs://``      ``GCSStorage``     upload with ``ifGenerationMatch=0``
``abfs[s]://``, ``az://``  ``AzureStorage``   Put Blob + ``If-None-Match: *``
anything else              ``FsspecStorage``  not supported (cannot commit)
=========================  =================  ====================================

Back-end modules are imported on first use so ``import trinity_dbapi`` stays
cheap.

Floors, bottom to top: a module imports only modules on floors below its
own; each module's docstring ends with the ones it imports.

1. ``redact`` (secrets kept out of messages), ``cache`` (immutable files,
   process-wide), ``rounds`` (requests and rounds counted, batches run side
   by side), ``botocore_models``
2. ``base`` (the storage interface), ``uri`` (root URI rules)
3. ``local``, ``fsspec_storage``
4. ``object_storage`` (what every store that commits shares)
5. ``s3``, ``gcs``, ``azure``
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trinity_dbapi.storage.base import Storage
from trinity_dbapi.storage.rounds import StorageStats
from trinity_dbapi.storage.uri import normalize_root_uri


def open_storage(
    uri: str,
    *,
    storage_options: Mapping[str, Any] | None = None,
    cache_bytes: int | None = None,
) -> Storage:
    """Open the storage at a root URI.

    Args:
        uri: the root URI (``s3://bucket/lake``, ``memory://x/lake``,
            ``file:///abs/lake``) or a plain local path (``./lake``).
        storage_options: passed unchanged to the fsspec file system (for S3:
            ``key``, ``secret``, ``token``, ``endpoint_url``, ``client_kwargs``...);
            ignored by ``file://`` and ``memory://``. Never shown in messages.
        cache_bytes: the immutable-file cache (:class:`~trinity_dbapi.storage.Storage`).

    Returns:
        A :class:`Storage` rooted at the normalised URI.

    Raises:
        InvalidURIError: the URI breaks the root URI rules.
        NotSupportedError: the back end's package (s3fs, or the fsspec
            implementation of the scheme) is not installed.

    Example:
        >>> storage = open_storage("memory://doc-example/lake")
        >>> storage.create_exclusive("a.txt", b"hello")
        >>> storage.read("a.txt")
        b'hello'
    """
    root = normalize_root_uri(uri)
    scheme = root.split("://", 1)[0]
    options = dict(storage_options or {})
    if scheme == "file":
        from trinity_dbapi.storage.local import LocalStorage

        return LocalStorage(root, cache_bytes=cache_bytes)
    if scheme == "memory":
        from trinity_dbapi.storage.fsspec_storage import MemoryStorage

        return MemoryStorage(root, cache_bytes=cache_bytes)
    if scheme in ("s3", "s3a"):
        from trinity_dbapi.storage.s3 import S3Storage

        return S3Storage(root, storage_options=options, cache_bytes=cache_bytes)
    if scheme in ("gs", "gcs"):
        from trinity_dbapi.storage.gcs import GCSStorage

        return GCSStorage(root, storage_options=options, cache_bytes=cache_bytes)
    if scheme in ("abfs", "abfss", "az"):
        from trinity_dbapi.storage.azure import AzureStorage

        return AzureStorage(root, storage_options=options, cache_bytes=cache_bytes)
    return _open_generic(root, scheme, options, cache_bytes)


def open_beside(storage: Storage, uri: str) -> Storage:
    """Open the storage at ``uri`` the way ``storage`` was opened, where that fits.

    A root of the same kind as ``storage`` (another S3 bucket or prefix) is
    reached through ``storage``'s own file system object, so with its
    credentials and endpoint; any other kind is opened with
    :func:`open_storage` and no options (the environment's credentials).
    Referenced Kartothek datasets are read this way.

    Raises:
        InvalidURIError: the URI breaks the root URI rules.
        NotSupportedError: the back end's package is not installed.
    """
    from trinity_dbapi.storage.fsspec_storage import FsspecStorage

    root = normalize_root_uri(uri)
    same_kind = storage.root_uri.split("://", 1)[0] == root.split("://", 1)[0]
    if same_kind and isinstance(storage, FsspecStorage) and storage.scheme not in ("memory",):
        return storage.beside(root)
    return open_storage(root)


def _open_generic(
    root: str, scheme: str, options: dict[str, Any], cache_bytes: int | None
) -> Storage:
    import fsspec

    from trinity_dbapi.errors import NotSupportedError
    from trinity_dbapi.storage.fsspec_storage import FsspecStorage

    try:
        fs = fsspec.filesystem(scheme, **options)
    except (ImportError, ValueError) as exc:
        # fsspec raises ValueError for unknown protocols and ImportError when the
        # implementation package (gcsfs, adlfs, ...) is missing. Its message names
        # only the protocol and package, never the options.
        raise NotSupportedError(
            f"no storage for {scheme}:// root URIs: {exc}; supported with commits: "
            "file://, memory://, s3://, gs://, abfs:// (install the fsspec implementation for "
            f"{scheme}:// to read it)"
        ) from exc
    return FsspecStorage(root, fs, storage_options=options, cache_bytes=cache_bytes)


__all__ = [
    "DEFAULT_CACHE_BYTES",
    "Storage",
    "StorageStats",
    "normalize_root_uri",
    "open_beside",
    "open_storage",
]
