"""Amazon S3 and S3-compatible stores (``s3://``, ``s3a://``) through s3fs.

S3 conditional writes make commits: ``PutObject`` with ``If-None-Match: *``
(``s3fs`` ``pipe_file(mode="create")``). S3 accepts exactly one such PUT per
key and answers every other with ``412 Precondition Failed``; the object
becomes visible only complete. What S3 shares with the other object stores
(requests side by side, one request per existence check, the create's retry)
is :class:`~trinity_dbapi.storage.object_storage.ObjectStorage`'s.

s3fs is imported on the first S3 root, so ``import trinity_dbapi`` stays fast
and s3fs stays optional (``pip install trinity-dbapi[s3]``).

Imports from storage/: object_storage; inside functions: botocore_models.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from functools import partial
from typing import Any

from trinity_dbapi.errors import NotSupportedError
from trinity_dbapi.storage.object_storage import ObjectStorage

__all__ = ["MAX_CONNECTIONS", "S3Storage"]

#: Connections an S3 storage keeps open (botocore's ``max_pool_connections``)
#: unless its options say otherwise.
MAX_CONNECTIONS = 64

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


class S3Storage(ObjectStorage):
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
        options = self.consistent(storage_options)
        # botocore keeps 10 connections per client by default, which would put
        # a scan of 30 files in 3 rounds; a batch may have 64 requests in flight.
        config = dict(options.get("config_kwargs") or {})
        config.setdefault("max_pool_connections", MAX_CONNECTIONS)
        options["config_kwargs"] = config
        _no_tls_for_plain_http(options)
        make = partial(_s3_filesystem_class(), **options)
        super().__init__(
            root_uri, make(), storage_options=options, cache_bytes=cache_bytes, reopen=make
        )

    def prepare(self) -> None:
        # botocore's client: about 30 ms of Python (its models, its event
        # handlers) before the first request can go out.
        with contextlib.suppress(Exception):
            self.fs.connect()

    def _get_options(self) -> dict[str, Any]:
        # One GET: otherwise s3fs first sends a HEAD to decide whether to
        # fetch the object in parallel ranges.
        return {"max_concurrency": 1}

    async def _head(self, full: str) -> int:
        reply = await self.fs._call_s3("head_object", Bucket=self._bucket, Key=self._key(full))
        return int(reply["ContentLength"])

    def _put_if_absent(self, full: str, data: bytes) -> None:
        # Sends If-None-Match: * (also on the multipart completion of large
        # bodies); open(mode="xb") is NOT used: s3fs skips the condition for
        # an empty body and silently overwrites.
        self.fs.pipe_file(full, data, mode="create")

    def _lost(self, exc: BaseException) -> bool:
        return isinstance(exc, FileExistsError) or _s3_error_code(exc) in (
            "PreconditionFailed",
            "412",
        )

    def _in_flight(self, exc: BaseException) -> bool:
        # S3 answers 409 when a conditional PUT races another write to the key.
        return _s3_error_code(exc) == "ConditionalRequestConflict"


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
