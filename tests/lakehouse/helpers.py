"""Helpers shared by the transaction tests: lakehouse access, replay, fault injection."""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from trinity_dbapi.errors import StorageError
from trinity_dbapi.format.definitions import Column, DataType, TableDefinition
from trinity_dbapi.lakehouse import Lakehouse, Snapshot
from trinity_dbapi.storage import Storage

#: ``(uri, storage_options)`` as yielded by the ``backend`` fixture.
Backend = tuple[str, dict[str, Any]]

#: A transaction's writes: key -> value, None for a delete.
Writes = Mapping[str, "str | None"]


def open_lake(backend: Backend) -> Lakehouse:
    """A freshly opened :class:`Lakehouse` (new storage, cold caches) at ``backend``."""
    uri, options = backend
    return Lakehouse.open(uri, storage_options=options)


def table_def(name: str, *extra: str) -> TableDefinition:
    """A small parquet table definition: a non-null ``id`` plus ``extra`` int4 columns."""
    columns = [Column(1, "id", DataType("int8"), nullable=False)]
    columns += [Column(i + 2, c, DataType("int4")) for i, c in enumerate(extra)]
    return TableDefinition(name, tuple(columns), table_format="parquet")


def apply_writes(state: dict[str, str], writes: Writes) -> dict[str, str]:
    """Apply ``writes`` (None deletes) to ``state`` in place and return it."""
    for key, value in writes.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return state


def replay(initial: Mapping[str, str], commits: Iterable[tuple[int, Writes]]) -> dict[str, str]:
    """The state after applying ``(version, writes)`` commits in version order."""
    state = dict(initial)
    for _, writes in sorted(commits, key=lambda c: c[0]):
        apply_writes(state, writes)
    return state


def full_state(snap: Snapshot) -> dict[str, str]:
    """Every key and value of a snapshot."""
    return dict(snap.scan())


class FaultyStorage(Storage):
    """A storage that delegates to ``inner`` and fails exactly one write-type operation.

    Write-type operations are ``create_exclusive``, ``write`` and ``delete``;
    they are counted from :meth:`arm`. The ``fail_at``-th one raises
    :class:`StorageError`: with ``after=False`` before touching the inner
    storage (a failed request), with ``after=True`` after performing it (the
    request succeeded but its response was lost). Counting is thread-safe,
    since node files of one level are created in parallel.

    The wrapper has no cache of its own, so every read reaches ``inner``.
    """

    def __init__(self, inner: Storage) -> None:
        super().__init__(inner.root_uri, cache_bytes=0)
        self.inner = inner
        self.fail_at: int | None = None
        self.after = False
        self.count = 0
        self.log: list[tuple[str, str]] = []
        self.failed: tuple[str, str] | None = None
        self._lock = threading.Lock()

    def arm(self, fail_at: int | None, *, after: bool = False) -> None:
        """Start counting write-type operations; fail the ``fail_at``-th (None: never)."""
        with self._lock:
            self.fail_at, self.after, self.count = fail_at, after, 0
            self.log, self.failed = [], None

    def _mutate(self, op: str, path: str, perform: Any) -> None:
        with self._lock:
            self.count += 1
            hit = self.count == self.fail_at
            self.log.append((op, path))
            if hit:
                self.failed = (op, path)
        if hit and not self.after:
            raise StorageError(f"injected failure before {op} of {path!r}", path=path)
        perform()
        if hit:
            raise StorageError(f"injected failure after {op} of {path!r}", path=path)

    def _read(self, path: str) -> bytes:
        return self.inner.read(path)

    def _write(self, path: str, data: bytes) -> None:
        self._mutate("write", path, lambda: self.inner.write(path, data))

    def _create_exclusive(self, path: str, data: bytes) -> None:
        self._mutate("create", path, lambda: self.inner.create_exclusive(path, data))

    def _delete(self, path: str) -> None:
        self._mutate("delete", path, lambda: self.inner.delete(path))

    def _exists(self, path: str) -> bool:
        return self.inner.exists(path)

    def _list(self, prefix: str) -> builtins.list[str]:
        return self.inner.list(prefix)
