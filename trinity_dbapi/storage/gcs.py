"""Google Cloud Storage (``gs://``, ``gcs://``) through gcsfs.

GCS conditional writes make commits: an upload with ``ifGenerationMatch=0``
creates the object only if it has no live generation, and GCS answers every
other such upload with ``412 Precondition Failed`` (gcsfs raises
``FileExistsError``); the object is visible only complete. gcsfs sends large
bodies as resumable uploads, and an emulator (fake-gcs-server) ignores the
condition there, so every exclusive create here is one multipart upload
whatever its size: the condition is then checked on the one request that
makes the object, on GCS and on its emulator alike. What GCS shares with
the other object stores is
:class:`~trinity_dbapi.storage.object_storage.ObjectStorage`'s.

The file system is gcsfs's plain JSON API client (``gcsfs.core``), not the
class ``gcsfs.GCSFileSystem`` names by default since 2026: that one asks
Google's Storage Control API about every bucket (zonal and hierarchical
buckets), a round trip per bucket that an emulator never answers.

gcsfs is imported on the first GCS root (``pip install trinity-dbapi[gcs]``).

Imports from storage/: object_storage, uri.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from trinity_dbapi.errors import NotSupportedError
from trinity_dbapi.storage.object_storage import ObjectStorage
from trinity_dbapi.storage.uri import check_path

__all__ = ["GCSStorage"]

#: gcsfs's threshold for a resumable upload; a create goes as one multipart
#: upload above it too (a chunk size past the body), in steps of 256 KiB.
_CHUNK = 50 * 2**20
_CHUNK_STEP = 2**18


class GCSStorage(ObjectStorage):
    """Storage on Google Cloud Storage or its emulator (``gs://``, ``gcs://``).

    Args:
        root_uri: a ``gs://bucket/prefix`` root URI.
        storage_options: passed to gcsfs's ``GCSFileSystem`` (``token``: a
            service-account JSON file, its content as a dict, ``"anon"``,
            ``"google_default"`` or credentials; ``project``,
            ``endpoint_url``, ...). The listings cache is always disabled, as
            for S3.
        cache_bytes: the immutable-file cache (:class:`~trinity_dbapi.storage.Storage`).

    Raises:
        NotSupportedError: gcsfs is not installed.
    """

    def __init__(
        self,
        root_uri: str,
        *,
        storage_options: Mapping[str, Any] | None = None,
        cache_bytes: int | None = None,
    ) -> None:
        try:
            from gcsfs.core import GCSFileSystem
        except ImportError as exc:
            raise NotSupportedError(
                "gs:// root URIs need the gcsfs package: pip install trinity-dbapi[gcs]"
            ) from exc
        options = self.consistent(storage_options)
        make = partial(GCSFileSystem, **options)
        super().__init__(
            root_uri, make(), storage_options=options, cache_bytes=cache_bytes, reopen=make
        )

    async def _head(self, full: str) -> int:
        # One GET of the object's metadata (fs._info would list the "folder" on a miss).
        found = await self.fs._get_object(full)
        return int(found["size"])

    def _put_if_absent(self, full: str, data: bytes) -> None:
        chunk = max(_CHUNK, (len(data) // _CHUNK_STEP + 1) * _CHUNK_STEP)
        self.fs.pipe_file(full, data, mode="create", chunksize=chunk)

    def _list(self, prefix: str) -> list[str]:
        check_path(prefix, is_prefix=True)
        with self._errors("list", prefix):
            # One objects.list per 1,000 objects under <root key>/<prefix>, no
            # delimiter: gcsfs's find lists once more when nothing is found,
            # looking for the prefix as an object of its own.
            objects, _ = self._sync(
                self.fs._do_list_objects(self._base, delimiter="", prefix=prefix)
            )
        return self._filter([found["name"] for found in objects], prefix)
