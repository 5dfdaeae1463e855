"""The statement cache keeps repeated texts parsed, within a bound in bytes.

Issue 14, item 12: an ``lru_cache(maxsize=512)`` kept every parsed tree of
the last 512 texts, whatever their size: 40 distinct 5 MB statements kept
about 340 MB after their connections closed.
"""

from __future__ import annotations

import gc
import threading
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as hs

from trinity_dbapi.sql import statement_cache
from trinity_dbapi.sql.statement_cache import StatementCache
from trinity_dbapi.sql.statements import STATEMENT_CACHE, parse


def _big(i: int, columns: int) -> str:
    """A distinct select list of ``columns`` aliased columns (about 24 characters each)."""
    return "SELECT " + ",".join(f"col_{j} AS alias_{j}" for j in range(columns)) + f" FROM t{i}"


def test_big_distinct_statements_keep_a_bounded_amount_of_memory() -> None:
    # The default bound (64 MiB) scaled down to 4 MiB so that the test
    # stays quick under tracemalloc; the accounting is the same.
    bound = 4 * 2**20
    STATEMENT_CACHE.clear()
    STATEMENT_CACHE.resize(bound, bound // 2)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        # 12 texts of ~15 KB: each parsed tree weighs ~1 MB, ~12 MB in all.
        for i in range(12):
            statements = parse(_big(i, 600))
            assert len(statements) == 1
            del statements
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
        kept = len(STATEMENT_CACHE)
    finally:
        tracemalloc.stop()
        STATEMENT_CACHE.resize(statement_cache.DEFAULT_MAX_BYTES, statement_cache.MAX_ENTRY_BYTES)
        STATEMENT_CACHE.clear()
    assert 1 <= kept < 12
    # The estimate is generous (600 bytes a node): what is really kept stays
    # under 1.5 times the bound (an unbounded cache kept all ~12 MB).
    assert retained < bound * 1.5, f"{retained / 2**20:.1f} MiB retained"


def test_the_default_bound_holds_for_the_texts_of_the_issue() -> None:
    # 40 distinct texts of the issue's kind by the estimate, without parsing
    # them: the accounting alone must keep the total under the bound.
    cache: StatementCache[int] = StatementCache(
        lambda sql: 0, lambda value: 5 * 2**20 * 60 // 600 * 600
    )
    for i in range(40):
        cache.get(f"SELECT {i}")
    assert cache.size_bytes <= statement_cache.DEFAULT_MAX_BYTES
    assert len(cache) == 0  # each is over the entry bound: none is kept


def test_a_text_over_the_entry_bound_is_parsed_but_not_kept() -> None:
    STATEMENT_CACHE.clear()
    text = "SELECT '" + "x" * (statement_cache.MAX_ENTRY_BYTES + 1) + "'"
    assert parse(text)[0].param_count == 0
    assert len(STATEMENT_CACHE) == 0
    assert STATEMENT_CACHE.size_bytes == 0


def test_repeated_small_texts_hit_the_cache() -> None:
    STATEMENT_CACHE.clear()
    hits = STATEMENT_CACHE.hits
    first = parse("SELECT ? + 1 FROM t")
    second = parse("SELECT ? + 1 FROM t")
    assert STATEMENT_CACHE.hits == hits + 1
    assert first[0] is second[0]  # the same parsed tree, not parsed again
    assert len(STATEMENT_CACHE) == 1
    assert 0 < STATEMENT_CACHE.size_bytes < 100_000


def test_the_cache_still_hits_after_big_texts_passed_through() -> None:
    STATEMENT_CACHE.clear()
    parse("SELECT 1")
    for i in range(3):
        parse(_big(i, 1_000))  # ~2.4 MB each by the estimate: kept
    hits = STATEMENT_CACHE.hits
    parse("SELECT 1")
    assert STATEMENT_CACHE.hits == hits + 1
    STATEMENT_CACHE.clear()


@settings(max_examples=60, deadline=None)
@given(
    sizes=hs.lists(hs.integers(min_value=1, max_value=400), min_size=1, max_size=60),
    bound=hs.integers(min_value=1, max_value=2_000),
)
def test_the_bound_holds_for_any_sequence_and_recent_entries_stay(
    sizes: list[int], bound: int
) -> None:
    # Texts of various sizes through a small cache: the accounting never goes
    # over the bound, and the last text kept is always found again.
    cache: StatementCache[int] = StatementCache(len, lambda value: value, max_bytes=bound)
    for index, size in enumerate(sizes):
        text = f"{index:04d}" + "x" * size
        assert cache.get(text) == len(text)
        assert cache.size_bytes <= bound
        assert cache.size_bytes == sum(size for _, size in cache._entries.values())
    cache.resize(bound // 2)
    assert cache.size_bytes <= bound // 2


def test_threads_share_the_cache_and_its_accounting_stays_exact() -> None:
    cache: StatementCache[int] = StatementCache(len, lambda value: 100, max_bytes=10_000)
    texts = [f"SELECT {i}" for i in range(300)]
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(2_000):
                text = texts[(i * 7 + offset) % len(texts)]
                assert cache.get(text) == len(text)
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert cache.size_bytes <= 10_000
    assert cache.size_bytes == sum(size for _, size in cache._entries.values())
