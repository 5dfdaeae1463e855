"""How readers reach the data files of a root that is not on the local disk.

On object storage every request costs a round trip, so the files of a scan
are fetched before the scan, all at once (:func:`fetch`): one request per
file, a suffix-range GET of :data:`WHOLE_FILE_BYTES` that brings a small
file whole and a big one's footer, with no HEAD to learn a size first; a big
file's remainder then comes in one more round of ranged GETs
(:func:`fetch_whole`). A file the dataset's file facts record as big is
read in ranged GETs covering it at once instead: one round, no HEAD. Arrow then scans the bytes in memory: no Arrow thread
calls back into Python while DuckDB drives the scan. Files past
:data:`FETCH_BYTES` are read when the scan opens them, through
:class:`StorageFiles`, an Arrow file system on the storage (so its counters,
its cache and its credentials apply), as are footers read alone
(``system.data_files``). Data files are immutable, so the whole ones go into
the process's cache (:mod:`trinity_dbapi.storage.cache`), keyed by who reads
them: the next statement over the same version, on any connection with the
same credentials, reads no data file at all.

Imports from tables/: nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from trinity_dbapi.errors import Error, StorageFileNotFoundError
from trinity_dbapi.storage import Storage

__all__ = [
    "FETCH_BYTES",
    "WHOLE_FILE_BYTES",
    "StorageFiles",
    "fetch",
    "fetch_whole",
    "filesystem",
    "ranged_file",
]

#: A file up to this size comes whole in its one request; a bigger one's last
#: this many bytes (its footer, and often its last row groups).
WHOLE_FILE_BYTES = 8 * 1024 * 1024

#: Bytes of one scan fetched up front at most.
FETCH_BYTES = 512 * 1024 * 1024

#: Files asked for in one round.
FETCH_BATCH = 256


#: A big file's remainder is read in ranges of this size, side by side.
RANGE_BYTES = 8 * 1024 * 1024


def fetch_whole(
    storage: Storage, paths: Sequence[str], sizes: Mapping[str, int] | None = None
) -> dict[str, bytes]:
    """The files of a scan, whole, in as few rounds as their sizes allow: path -> bytes.

    ``sizes`` are the sizes the file facts give (path -> bytes). A file known
    to be big is read in ranged GETs covering it, side by side with the
    other big ones, in one round; the others come in one round of suffix
    GETs (:func:`fetch`), and those of them that turn out big cost a round
    of HEADs and a round of ranged GETs for what their tails left out. At most :data:`FETCH_BYTES` are held; files
    past that are left out (the caller reads them through :class:`StorageFiles`).
    """
    known = dict(sizes or {})
    unique = list(dict.fromkeys(paths))
    big = [p for p in unique if known.get(p, 0) > WHOLE_FILE_BYTES]
    whole: dict[str, bytes] = {}
    held = 0
    if big:
        chosen = []
        for path in big:
            if held + known[path] <= FETCH_BYTES:
                held += known[path]
                chosen.append(path)
        try:
            read = _read_in_ranges(storage, {path: (known[path], b"") for path in chosen})
        except Error:
            read = {}  # read below as files of unknown size: their own errors are raised there
        # A size the facts got wrong (a damaged metadata file) must not make a
        # file look truncated: such a file is read again as one of unknown size.
        fine = {p: d for p, d in read.items() if len(d) == known[p] and d[-4:] == b"PAR1"}
        whole.update(fine)
        for path in chosen:
            if path not in fine:
                del known[path]
        held = sum(len(data) for data in fine.values())
        taken = set(fine) | {p for p in big if p not in chosen}
        unique = [p for p in unique if p not in taken]
    got = fetch(storage, unique) if unique else {}
    whole.update({path: data for path, (data, complete) in got.items() if complete})
    partial = {path: data for path, (data, complete) in got.items() if not complete}
    if not partial:
        return whole
    held = sum(len(data) for data in whole.values())
    # Files the facts did not know as big: their sizes come from the store.
    chosen = list(partial)
    wanted: dict[str, tuple[int, bytes]] = {}
    for path, size in zip(chosen, storage.sizes(chosen)):
        if held + size > FETCH_BYTES:
            continue
        held += size
        wanted[path] = (size, partial[path])
    whole.update(_read_in_ranges(storage, wanted))
    return whole


def _read_in_ranges(storage: Storage, files: Mapping[str, tuple[int, bytes]]) -> dict[str, bytes]:
    """Each file (path -> (size, its tail already read)) whole, its rest in one round of ranges."""
    ranges: list[tuple[str, int, int]] = []
    for path, (size, tail) in files.items():
        rest = size - len(tail)
        ranges.extend(
            (path, start, min(start + RANGE_BYTES, rest)) for start in range(0, rest, RANGE_BYTES)
        )
    pieces: dict[str, list[bytes]] = {path: [] for path in files}
    for (path, _, _), data in zip(ranges, storage.read_ranges(ranges)):
        pieces[path].append(data)
    return {path: b"".join([*pieces[path], files[path][1]]) for path in files}


def fetch(storage: Storage, paths: Sequence[str]) -> dict[str, tuple[bytes, bool]]:
    """The files of a scan, fetched side by side: path -> (bytes, whether whole).

    Stops adding batches once :data:`FETCH_BYTES` are held; the rest are
    left for :class:`StorageFiles` to read on open.
    """
    held: dict[str, tuple[bytes, bool]] = {}
    size = 0
    unique = list(dict.fromkeys(paths))
    for start in range(0, len(unique), FETCH_BATCH):
        if size >= FETCH_BYTES:
            break
        batch = unique[start : start + FETCH_BATCH]
        try:
            fetched = storage.read_tails(batch, WHOLE_FILE_BYTES)
        except StorageFileNotFoundError:
            # A file is gone (an expired version's, or damage): the scan opens
            # each on its own, and the missing one fails as that file's error.
            continue
        for path, got in zip(batch, fetched):
            held[path] = got
            size += len(got[0])
    return held


class _RangedFile:
    """A read-only file over a storage object of which the tail is known."""

    def __init__(self, storage: Storage, path: str, tail: bytes) -> None:
        self.storage = storage
        self.path = path
        self.tail = tail
        self._size: int | None = None
        self.position = 0
        self.closed = False

    def size(self) -> int:
        if self._size is None:
            self._size = self.storage.size(self.path)
        return self._size

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.position, 2: self.size()}[whence]
        self.position = base + offset
        return self.position

    def tell(self) -> int:
        return self.position

    def read(self, length: int = -1) -> bytes:
        size = self.size()
        end = size if length is None or length < 0 else min(size, self.position + length)
        start = self.position
        if end <= start:
            return b""
        tail_start = size - len(self.tail)
        if start >= tail_start:
            data = self.tail[start - tail_start : end - tail_start]
        else:
            data = self.storage.read_range(self.path, start, end)
        self.position = start + len(data)
        return data

    def close(self) -> None:
        self.closed = True


class StorageFiles(pafs.FileSystemHandler):  # type: ignore[misc]
    """An Arrow file system handler reading a storage's files through the storage.

    Paths are relative to the storage's root. A file the storage has cached
    opens from memory; any other one costs one request to open (its tail, or
    the whole file), then ranged reads if it is big.

    A missing file opens as an empty one: pyarrow's threaded scanner can
    deadlock when a Python file system raises while it opens a fragment
    (pyarrow 26), whereas an empty file fails in C++ ("Parquet file size is
    0 bytes"), which the query reports as that file's ``CorruptFileError``.
    """

    def __init__(self, storage: Storage) -> None:
        super().__init__()
        self.storage = storage

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StorageFiles) and other.storage is self.storage

    def __ne__(self, other: object) -> bool:
        return not self == other

    def get_type_name(self) -> str:
        return "trinity-storage"

    def normalize_path(self, path: str) -> str:
        return path

    def _open(self, path: str) -> Any:
        try:
            data, whole = self.storage.read_tails([path], WHOLE_FILE_BYTES)[0]
        except StorageFileNotFoundError:
            return pa.BufferReader(b"")
        if whole:
            return pa.BufferReader(data)
        return pa.PythonFile(_RangedFile(self.storage, path, data), mode="r")

    def open_input_file(self, path: str) -> Any:
        return self._open(path)

    def open_input_stream(self, path: str) -> Any:
        return self._open(path)

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        infos = []
        for path in paths:
            try:
                size = self.storage.size(path)
            except StorageFileNotFoundError:
                infos.append(pafs.FileInfo(path, pafs.FileType.NotFound))
                continue
            infos.append(pafs.FileInfo(path, pafs.FileType.File, size=size))
        return infos

    def get_file_info_selector(self, selector: Any) -> list[pafs.FileInfo]:
        raise NotImplementedError("the scan names its files; nothing lists them")

    def create_dir(self, path: str, recursive: bool) -> None:
        raise NotImplementedError("read-only")

    def delete_dir(self, path: str) -> None:
        raise NotImplementedError("read-only")

    def delete_dir_contents(self, path: str, missing_dir_ok: bool = False) -> None:
        raise NotImplementedError("read-only")

    def delete_root_dir_contents(self) -> None:
        raise NotImplementedError("read-only")

    def delete_file(self, path: str) -> None:
        raise NotImplementedError("read-only")

    def move(self, src: str, dest: str) -> None:
        raise NotImplementedError("read-only")

    def copy_file(self, src: str, dest: str) -> None:
        raise NotImplementedError("read-only")

    def open_output_stream(self, path: str, metadata: Any = None) -> Any:
        raise NotImplementedError("read-only")

    def open_append_stream(self, path: str, metadata: Any = None) -> Any:
        raise NotImplementedError("read-only")


def ranged_file(storage: Storage, path: str, tail: bytes) -> Any:
    """A seekable binary file over a big file of ``storage`` whose tail is known."""
    return _RangedFile(storage, path, tail)


def filesystem(storage: Storage) -> pafs.PyFileSystem:
    """An Arrow file system over ``storage`` (:class:`StorageFiles`)."""
    return pafs.PyFileSystem(StorageFiles(storage))
