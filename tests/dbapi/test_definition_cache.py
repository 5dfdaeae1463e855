"""A connection's definition cache: statements and threads share it; connect() validates it.

Counts, never timings: definition files read from storage (``.binpb`` reads,
cache hits of the storage's byte cache included) and definitions parsed.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.errors import ProgrammingError
from trinity_dbapi.format.definitions import NamespaceDefinition, TableDefinition

WARM_STATEMENTS = 200


class Counts:
    """Definition files asked of the connection's storage, and definitions parsed."""

    def __init__(self, conn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads = 0
        self.parses = 0
        storage = conn.lakehouse.storage
        original_read = storage.read

        def read(path: str) -> bytes:
            if path.endswith(".binpb") and "_lakehouse_def" not in path:
                self.reads += 1
            return original_read(path)

        monkeypatch.setattr(storage, "read", read)
        for kind in (TableDefinition, NamespaceDefinition):
            original = kind.from_bytes.__func__  # type: ignore[attr-defined]

            def counted(cls: Any, data: bytes, path: str, _original: Any = original) -> Any:
                self.parses += 1
                return _original(cls, data, path)

            monkeypatch.setattr(kind, "from_bytes", classmethod(counted))

    def take(self) -> tuple[int, int]:
        """The counts so far, then zero."""
        taken = (self.reads, self.parses)
        self.reads = self.parses = 0
        return taken


def _connect(**options: Any) -> Any:
    conn = trinity_dbapi.connect(f"memory://dcache-{uuid.uuid4().hex}", autocommit=True, **options)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE ns")
    cur.execute("CREATE TABLE ns.t (id INT8, name VARCHAR)")
    cur.execute("INSERT INTO ns.t VALUES (1, 'a'), (2, 'b')")
    return conn


def test_a_second_describe_reads_no_definition_file(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = _connect()
    counts = Counts(conn, monkeypatch)
    cur = conn.cursor()
    first = cur.execute("DESCRIBE ns.t").fetchall()
    counts.take()
    assert cur.execute("DESCRIBE ns.t").fetchall() == first
    assert counts.take() == (0, 0)


def test_warm_statements_read_and_parse_no_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = _connect()
    counts = Counts(conn, monkeypatch)
    cur = conn.cursor()
    cur.execute("DESCRIBE ns.t").fetchall()
    cur.execute("SELECT count(*) FROM ns.t").fetchall()
    counts.take()
    for i in range(WARM_STATEMENTS // 2):
        assert len(cur.execute("DESCRIBE ns.t").fetchall()) == 2
        assert cur.execute("SELECT count(*) FROM ns.t WHERE id > ?", [i % 2]).fetchall() == [
            (2 - i % 2,)
        ]
    assert counts.take() == (0, 0)


def test_without_the_cache_every_statement_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = _connect(definition_cache_bytes=0)
    assert conn.lakehouse.definition_cache.max_bytes == 0
    counts = Counts(conn, monkeypatch)
    cur = conn.cursor()
    for _ in range(5):
        assert len(cur.execute("DESCRIBE ns.t").fetchall()) == 2
    reads, parses = counts.take()
    assert reads >= 5 and parses >= 5


def test_a_changed_table_is_seen_at_once() -> None:
    conn = _connect()
    cur = conn.cursor()
    assert len(cur.execute("DESCRIBE ns.t").fetchall()) == 2
    other = trinity_dbapi.connect(conn.lakehouse.storage.root_uri, autocommit=True)
    other.cursor().execute("ALTER TABLE ns.t ADD COLUMN extra INT4")
    assert len(cur.execute("DESCRIBE ns.t").fetchall()) == 3


def test_uncommitted_definitions_stay_in_their_transaction() -> None:
    conn = _connect()
    uri = conn.lakehouse.storage.root_uri
    writer = trinity_dbapi.connect(uri)  # not autocommit: one open transaction
    wcur = writer.cursor()
    wcur.execute("ALTER TABLE ns.t ADD COLUMN extra INT4")
    wcur.execute("CREATE TABLE ns.fresh (id INT8)")
    assert len(wcur.execute("DESCRIBE ns.t").fetchall()) == 3
    cache = writer.lakehouse.definition_cache
    staged = set(writer.session.transaction()._files)
    assert staged and not staged & set(cache._items)
    assert len(conn.cursor().execute("DESCRIBE ns.t").fetchall()) == 2
    writer.rollback()
    assert len(wcur.execute("DESCRIBE ns.t").fetchall()) == 2
    with pytest.raises(trinity_dbapi.Error, match="fresh"):
        wcur.execute("DESCRIBE ns.fresh")


def test_time_travel_through_the_connection() -> None:
    conn = _connect()
    cur = conn.cursor()
    before = conn.lakehouse.latest_version()
    cur.execute("ALTER TABLE ns.t ADD COLUMN extra INT4")
    cur.execute("INSERT INTO ns.t VALUES (3, 'c', 7)")
    for _ in range(3):
        old = cur.execute(f"SELECT * FROM ns.t FOR SYSTEM_VERSION AS OF {before} ORDER BY id")
        assert old.fetchall() == [(1, "a"), (2, "b")]
        new = cur.execute("SELECT * FROM ns.t ORDER BY id").fetchall()
        assert new == [(1, "a", None), (2, "b", None), (3, "c", 7)]


def test_threads_sharing_a_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = _connect()
    cur = conn.cursor()
    for i in range(8):
        cur.execute(f"CREATE TABLE ns.u{i} ({', '.join(f'c{j} INT4' for j in range(i + 1))})")
    counts = Counts(conn, monkeypatch)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            mine = conn.cursor()  # cursors are per thread; the connection is shared
            for n in range(30):
                i = (n + offset) % 8
                assert len(mine.execute(f"DESCRIBE ns.u{i}").fetchall()) == i + 1
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    reads, parses = counts.take()
    # 120 statements read and parse each of the 10 definitions (ns, t, u0..u7) at most once.
    assert reads <= 10 and parses <= 10, (reads, parses)


@pytest.mark.parametrize("bad", [-1, 2.5, "1024", True, None])
def test_connect_rejects_a_bad_cache_bound(bad: object) -> None:
    with pytest.raises(ProgrammingError, match="definition_cache_bytes"):
        trinity_dbapi.connect(f"memory://dcache-{uuid.uuid4().hex}", definition_cache_bytes=bad)


def test_connect_sets_the_bound() -> None:
    conn = _connect(definition_cache_bytes=4096)
    assert conn.lakehouse.definition_cache.max_bytes == 4096
    assert _connect().lakehouse.definition_cache.max_bytes == 32 * 1024 * 1024
