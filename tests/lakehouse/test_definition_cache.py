"""The lakehouse's definition cache: parsed definitions by immutable file path.

Checks the byte bound and its LRU eviction, that a repeated load neither reads
nor parses, that a definition staged by an uncommitted transaction never
enters the cache nor reaches another transaction, that time travel gets each
version's own definition, and that threads sharing one handle agree.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.lakehouse.helpers import table_def
from trinity_dbapi.errors import NoSuchTableError, ProgrammingError
from trinity_dbapi.format.definitions import NamespaceDefinition, TableDefinition
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.definition_cache import (
    DEFAULT_DEFINITION_CACHE_BYTES,
    DefinitionCache,
    check_cache_bytes,
)


class Parses:
    """Counts ``TableDefinition`` / ``NamespaceDefinition`` parses."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        for kind in (TableDefinition, NamespaceDefinition):
            original = kind.from_bytes.__func__  # type: ignore[attr-defined]

            def counted(cls: Any, data: bytes, path: str, _original: Any = original) -> Any:
                self.count += 1
                return _original(cls, data, path)

            monkeypatch.setattr(kind, "from_bytes", classmethod(counted))


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Parses:
    return Parses(monkeypatch)


@pytest.fixture
def lake() -> Iterator[Lakehouse]:
    lake = Lakehouse.create(f"memory://dcache-{uuid.uuid4().hex}")
    with lake.begin() as txn:
        txn.create_namespace("ns")
        for i in range(3):
            txn.create_table("ns", table_def(f"t{i}", "a"))
    yield lake


def _definition_reads(lake: Lakehouse) -> list[str]:
    """Wrap the storage's reads; the returned list collects definition file paths read."""
    seen: list[str] = []
    original = lake.storage.read

    def read(path: str) -> bytes:
        if path.endswith(".binpb") and "_lakehouse_def" not in path:
            seen.append(path)
        return original(path)

    lake.storage.read = read  # type: ignore[method-assign]
    return seen


# -- the cache on its own ---------------------------------------------------------------


def _file(name: str, columns: int) -> tuple[str, bytes]:
    definition = table_def(name, *(f"c{i}" for i in range(columns)))
    return f"table-{name}.binpb", definition.to_bytes()


def test_eviction_is_by_bytes_least_recently_used_first() -> None:
    files = dict(_file(f"t{i}", 3) for i in range(4))
    size = len(next(iter(files.values())))
    assert all(len(data) == size for data in files.values())
    reads: list[str] = []

    def read(path: str) -> bytes:
        reads.append(path)
        return files[path]

    cache = DefinitionCache(max_bytes=3 * size)
    paths = sorted(files)
    for path in paths[:3]:
        cache.load(path, TableDefinition, read)
    assert cache.size_bytes == 3 * size and len(cache) == 3
    cache.load(paths[0], TableDefinition, read)  # paths[0] is now the most recent
    cache.load(paths[3], TableDefinition, read)  # evicts paths[1], the least recent
    assert paths[1] not in cache and paths[0] in cache and paths[3] in cache
    assert cache.stats.evictions == 1 and cache.size_bytes == 3 * size
    assert reads == [*paths[:3], paths[3]]
    cache.max_bytes = size  # shrinking evicts at once
    assert list(cache._items) == [paths[3]] and cache.size_bytes == size
    cache.max_bytes = size - 1  # a file larger than the bound is never kept
    assert len(cache) == 0
    assert cache.load(paths[0], TableDefinition, read).name == "t0"
    assert len(cache) == 0 and cache.size_bytes == 0


def test_zero_bytes_keeps_nothing() -> None:
    path, data = _file("t", 1)
    cache = DefinitionCache(max_bytes=0)
    first = cache.load(path, TableDefinition, lambda _: data)
    assert cache.load(path, TableDefinition, lambda _: data) == first
    assert len(cache) == 0 and cache.stats.misses == 2


@pytest.mark.parametrize("bad", [-1, 1.5, "32", True, None])
def test_bad_bound_names_the_option(bad: object) -> None:
    with pytest.raises(ProgrammingError, match="definition_cache_bytes"):
        check_cache_bytes(bad)
    with pytest.raises(ProgrammingError, match="definition_cache_bytes"):
        DefinitionCache().max_bytes = bad  # type: ignore[assignment]
    assert DefinitionCache().max_bytes == DEFAULT_DEFINITION_CACHE_BYTES


# -- through transactions -------------------------------------------------------------------


def test_a_repeated_load_reads_and_parses_nothing(lake: Lakehouse, parses: Parses) -> None:
    reads = _definition_reads(lake)
    first = lake.begin(read_only=True).load_table("ns", "t1")
    assert len(reads) == 1 and parses.count == 1
    for _ in range(50):
        txn = lake.begin(read_only=True)
        assert txn.load_table("ns", "t1") is first
        assert txn.peek_table("ns", "t1") is first
        txn.load_namespace("ns")
    assert len(reads) == 2 and parses.count == 2  # t1 once, ns once


def test_staged_definitions_never_enter_the_cache(lake: Lakehouse, parses: Parses) -> None:
    writer = lake.begin()
    writer.create_table("ns", table_def("new", "x"))
    writer.replace_table("ns", table_def("t0", "a", "b"))
    assert [c.name for c in writer.load_table("ns", "t0").columns] == ["id", "a", "b"]
    assert writer.load_table("ns", "new").name == "new"
    staged = set(writer._files)
    assert staged and not staged & set(lake.definition_cache._items)
    other = lake.begin(read_only=True)
    with pytest.raises(NoSuchTableError):
        other.load_table("ns", "new")
    assert [c.name for c in other.load_table("ns", "t0").columns] == ["id", "a"]
    writer.abort()
    assert not staged & set(lake.definition_cache._items)
    after = lake.begin(read_only=True)
    with pytest.raises(NoSuchTableError):
        after.load_table("ns", "new")
    assert [c.name for c in after.load_table("ns", "t0").columns] == ["id", "a"]


def test_committed_definitions_are_cached_after_the_commit(lake: Lakehouse) -> None:
    with lake.begin() as writer:
        writer.replace_table("ns", table_def("t0", "a", "b"))
    reads = _definition_reads(lake)
    for _ in range(3):
        assert len(lake.begin(read_only=True).load_table("ns", "t0").columns) == 3
    assert len(reads) == 1


def test_time_travel_gets_each_versions_definition(lake: Lakehouse, parses: Parses) -> None:
    v1 = lake.latest_version()
    with lake.begin() as txn:
        txn.replace_table("ns", table_def("t0", "a", "b"))
    v2 = lake.latest_version()
    with lake.begin() as txn:
        txn.drop_table("ns", "t0")
    # The commit parsed its table's new definition from its own bytes (to
    # publish derived files, lakehouse/derived.py): count time travel's parses
    # alone, from a cold cache.
    lake.definition_cache.clear()
    parses.count = 0
    for _ in range(3):
        old = lake.begin(read_only=True, version=v1).load_table("ns", "t0")
        new = lake.begin(read_only=True, version=v2).load_table("ns", "t0")
        assert [c.name for c in old.columns] == ["id", "a"]
        assert [c.name for c in new.columns] == ["id", "a", "b"]
        with pytest.raises(NoSuchTableError):
            lake.begin(read_only=True).load_table("ns", "t0")
    assert parses.count == 2


def test_threads_sharing_a_handle_agree(lake: Lakehouse) -> None:
    with lake.begin() as txn:
        for i in range(3, 30):
            txn.create_table("ns", table_def(f"t{i}", *(f"c{j}" for j in range(i % 5))))
    size = len(table_def("t10", "c0").to_bytes())
    lake.definition_cache.max_bytes = 8 * size  # far fewer than 30 tables: constant eviction
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for round_ in range(20):
                txn = lake.begin(read_only=True)
                for i in range(3, 30):
                    j = (i + offset + round_) % 27 + 3
                    definition = txn.load_table("ns", f"t{j}")
                    assert definition.name == f"t{j}"
                    assert len(definition.columns) == 1 + j % 5
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    cache = lake.definition_cache
    assert cache.size_bytes <= cache.max_bytes
    assert cache.stats.evictions > 0
    # Hits among the threads depend on how the GIL interleaves them (a thread
    # that runs its rounds alone cycles 27 tables through 8 entries: no hit),
    # so the cache's answer after all that churn is checked on its own.
    hits = cache.stats.hits
    for _ in range(2):
        assert lake.begin(read_only=True).load_table("ns", "t3").name == "t3"
    assert cache.stats.hits > hits
