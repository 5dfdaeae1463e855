"""botocore's model files, kept parsed on disk so that a new process's first S3 client is quick.

A new botocore client parses about 3.5 MB of JSON before it can send a
request (``endpoints.json``, the S3 model and its endpoint rules) and lists
the 400-odd folders of botocore's data twice: 60-140 ms of a fresh process,
more than the first request's round trip to S3 in-region. A Spark task, a
Superset worker or a ``trinity -c`` pays it before its first request. This
module keeps what botocore parsed, as ``marshal`` data, in
``$XDG_CACHE_HOME/trinity-dbapi/botocore-<version>/`` (``~/.cache`` without
it), where the next process reads it in about a third of the time.

What may be cached, and when it is trusted:

* Only botocore's own data folder, which a botocore release ships and never
  changes: each entry is keyed by botocore's version and checked against the
  size and modification time of the file it was parsed from, so a reinstalled
  or patched botocore is parsed again.
* Nothing when the user has models of their own (``~/.aws/models`` or
  ``AWS_DATA_PATH`` exists): those may shadow or add to the built-in ones, and
  botocore then loads exactly as it always does.
* The folder is the user's own (mode 0700); an entry is read only if the
  user owns it, nobody else may write it, and its digest matches, so a
  truncated, corrupt or foreign file is parsed again from botocore's JSON,
  never trusted. The data is botocore's public model, the same for every
  user: no credential, request or answer is ever written here.

Set ``TRINITY_DBAPI_BOTOCORE_CACHE=0`` to turn the cache off. Any error here
(a read-only home, a full disk) costs the speed-up, never a request.

Imports from storage/: nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import struct
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

#: Bumped when the layout of an entry changes.
FORMAT = 1
_MAGIC = b"TRBC%d\n" % FORMAT
#: After the magic: the payload's SHA-256 and the length of the stamp that follows.
_HEAD = struct.Struct(">32sI")


def install(session: Any) -> bool:
    """Make ``session`` (a botocore or aiobotocore session) load its models through the cache.

    Call before the session creates a client. Returns whether the cache is
    in use (it is not when turned off, when the user has models of their own,
    or when there is no cache folder to be had).
    """
    if os.environ.get("TRINITY_DBAPI_BOTOCORE_CACHE", "1").strip() in ("0", "false", "no"):
        return False
    try:
        loader = _loader(session.get_config_variable("data_path"))
    except Exception:  # noqa: BLE001 - a botocore this does not know: load as botocore does
        return False
    if loader is None:
        return False
    session.register_component("data_loader", loader)
    return True


def cache_folder() -> Path:
    """The folder of the current botocore's entries (not created here)."""
    import botocore

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trinity-dbapi" / f"botocore-{botocore.__version__}"


def _loader(data_path: str | None) -> Any:
    """A botocore ``Loader`` as ``create_loader(data_path)`` makes it, caching built-in files."""
    from botocore.loaders import JSONFileLoader, Loader

    extra = [
        os.path.expanduser(os.path.expandvars(path))
        for path in (data_path.split(os.pathsep) if data_path else [])
    ]
    builtin = os.path.realpath(Loader.BUILTIN_DATA_PATH)
    own = [*extra, Loader.CUSTOMER_DATA_PATH]
    if any(os.path.exists(path) and os.path.realpath(path) != builtin for path in own):
        return None  # the user's models may shadow or add to botocore's: no cache
    folder = cache_folder()

    class CachingFileLoader(JSONFileLoader):  # type: ignore[misc]
        def load_file(self, file_path: str) -> Any:
            source = _model_file(file_path)
            if source is None or not source.startswith(builtin + os.sep):
                return super().load_file(file_path)
            return _cached(
                folder, builtin, source, lambda: super(CachingFileLoader, self).load_file(file_path)
            )

    class CachingLoader(Loader):  # type: ignore[misc]
        def list_available_services(self, type_name: str) -> Any:
            # botocore lists every service folder and stats a file in each
            # to check a service name; only the built-in folder is searched.
            key = ("list_available_services", type_name)
            if key not in self._cache:
                parse = partial(super().list_available_services, type_name)
                self._cache[key] = _cached(
                    folder, builtin, builtin, parse, name=f"services-{type_name}"
                )
            return self._cache[key]

    return CachingLoader(extra_search_paths=extra or None, file_loader=CachingFileLoader())


def _model_file(file_path: str) -> str | None:
    """The file botocore's ``JSONFileLoader`` reads for ``file_path`` (it tries these in turn)."""
    for candidate in (file_path + ".json", file_path + ".json.gz"):
        if os.path.isfile(candidate):
            return os.path.realpath(candidate)
    return None


def _cached(
    folder: Path, builtin: str, source: str, parse: Callable[[], Any], *, name: str = ""
) -> Any:
    """What ``parse()`` gives for ``source`` (a file or folder of botocore's), from the cache.

    The answer is always plain data (dicts, where botocore's parser makes
    ``OrderedDict``s, in the same order), hit or miss, so that a process
    behaves the same whichever it was.
    """
    try:
        info = os.stat(source)
    except OSError:
        return parse()
    stamp = f"{source}\0{info.st_size}\0{info.st_mtime_ns}".encode()
    entry = folder / ((name or os.path.relpath(source, builtin).replace(os.sep, "__")) + ".marshal")
    data = _read(entry, stamp)
    if data is not None:
        return data
    data = parse()
    if data is None:
        return None
    try:
        payload = marshal.dumps(_plain(data))
    except ValueError:
        return data  # a type marshal cannot hold: not cached
    _write(folder, entry, stamp, payload)
    return marshal.loads(payload)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _read(entry: Path, stamp: bytes) -> Any:
    try:
        with open(entry, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_uid != os.getuid() or info.st_mode & 0o022:
                return None  # another user's, or writable by others: never trusted
            blob = handle.read()
    except OSError:
        return None
    if not blob.startswith(_MAGIC) or len(blob) < _HEAD.size + len(_MAGIC):
        return None
    digest, length = _HEAD.unpack_from(blob, len(_MAGIC))
    start = len(_MAGIC) + _HEAD.size
    stored, payload = blob[start : start + length], blob[start + length :]
    if stored != stamp or hashlib.sha256(payload).digest() != digest:
        return None  # botocore changed since, or a torn or corrupt entry
    try:
        return marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None


def _write(folder: Path, entry: Path, stamp: bytes, payload: bytes) -> None:
    blob = _MAGIC + _HEAD.pack(hashlib.sha256(payload).digest(), len(stamp)) + stamp + payload
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Written whole under a temporary name, then renamed: a reader never
        # sees half an entry, and two processes writing one entry both win.
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(blob)
            os.replace(temporary, entry)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
