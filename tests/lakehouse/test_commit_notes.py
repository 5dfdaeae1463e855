"""Who committed a version and why: the author and commit message system rows of its root."""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa
import pytest

from trinity_dbapi.errors import DataError, ProgrammingError, TransactionClosedError
from trinity_dbapi.format import keys as system_keys
from trinity_dbapi.format.paths import root_node_file_name
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.lakehouse.commit_point import (
    MAX_AUTHOR_BYTES,
    MAX_COMMIT_MESSAGE_BYTES,
    check_author,
    check_commit_message,
    commit_notes,
)

#: The system rows the seeds define, and the project's older extension.
SEED_ROOT_ROWS = {"created_at_millis", "lakehouse_def", "previous_root", "n_keys"}


def _lake(name: str, author: str | None = None) -> Lakehouse:
    lake = Lakehouse.create(f"memory://commit-notes-{name}")
    lake.author = author
    return lake


def _commit(lake: Lakehouse, key: str, message: str | None = None) -> int:
    txn = lake.begin()
    txn.message = message
    txn.put(key, "v")
    return txn.commit().version


def _notes(lake: Lakehouse, version: int) -> tuple[str | None, str | None]:
    info = [i for i in lake.history() if i.version == version]
    assert len(info) == 1
    return info[0].author, info[0].commit_message


def test_author_and_message_are_recorded_only_when_given() -> None:
    lake = _lake("given", author="ana")
    first = _commit(lake, "a", "first load\n\nwith a body\tand a tab")
    second = _commit(lake, "b")
    lake.author = None
    third = _commit(lake, "c", "")  # an empty message is no message
    assert _notes(lake, 0) == (None, None)
    assert _notes(lake, first) == ("ana", "first load\n\nwith a body\tand a tab")
    assert _notes(lake, second) == ("ana", None)
    assert _notes(lake, third) == (None, None)
    # Recorded as system rows of the root, and absent where there is no value.
    assert lake.snapshot(first).root.system[system_keys.AUTHOR] == "ana"
    assert system_keys.COMMIT_MESSAGE not in lake.snapshot(second).root.system
    assert not {system_keys.AUTHOR, system_keys.COMMIT_MESSAGE} & set(
        lake.snapshot(third).root.system
    )
    # Another handle (another process, say) reads them from storage.
    reopened = Lakehouse.open(lake.storage)
    assert [(i.author, i.commit_message) for i in reopened.history()][1:] == [
        ("ana", "first load\n\nwith a body\tand a tab"),
        ("ana", None),
        (None, None),
    ]


def test_a_transaction_takes_the_handles_author_and_may_name_another() -> None:
    lake = _lake("override", author="ana")
    txn = lake.begin()
    assert (txn.author, txn.message) == ("ana", None)
    txn.author = "bo"
    txn.message = "by bo"
    txn.put("k", "v")
    version = txn.commit().version
    assert _notes(lake, version) == ("bo", "by bo")
    with pytest.raises(TransactionClosedError):
        txn.message = "too late"
    quiet = lake.begin()
    quiet.author = None  # this commit names nobody
    quiet.put("q", "v")
    assert _notes(lake, quiet.commit().version) == (None, None)


def test_the_notes_survive_a_rebase_and_retry() -> None:
    lake = _lake("retry", author="ana")
    other = Lakehouse.open(lake.storage)
    other.author = "bo"
    loser = lake.begin()
    loser.message = "ana's change"
    loser.put("ana", "1")
    winner = other.begin()
    winner.message = "bo's change"
    winner.put("bo", "1")
    assert winner.commit().version == 1
    committed = loser.commit()  # lost version 1, rebased on it, made version 2
    assert (committed.version, loser.attempts) == (2, 2)
    assert _notes(lake, 1) == ("bo", "bo's change")
    assert _notes(lake, 2) == ("ana", "ana's change")
    assert committed.get("bo") == "1"  # really rebased


def test_blind_commits_and_exports_record_the_author() -> None:
    lake = _lake("blind", author="ops")
    _commit(lake, "a", "load")
    compacted = lake.maintenance.compact()
    rolled = lake.maintenance.rollback(0)
    lake.maintenance.export_snapshot("eod", version=1)  # a definition-only commit
    assert _notes(lake, compacted.version) == ("ops", None)
    assert _notes(lake, rolled.version) == ("ops", None)
    assert rolled.rollback_from_root == root_node_file_name(compacted.version)
    assert lake.latest_version() == rolled.version + 1
    assert _notes(lake, lake.latest_version()) == ("ops", None)


def test_a_seeds_only_reader_reads_a_version_with_notes_unchanged() -> None:
    """Rows before the first all-NULL row are system rows; unknown ones are skipped (seed 001)."""
    lake = _lake("seeds", author="ana")
    for i in range(3):
        txn = lake.begin()
        txn.message = f"load {i}"
        txn.put(f"key{i}", f"value{i}")
        if i == 2:
            txn.delete("key0")
        snap = txn.commit()
    data = lake.storage.read(root_node_file_name(snap.version))
    system, content = _seed_reader(data)
    assert set(system) == SEED_ROOT_ROWS | {"txn_id", "trinity.author", "trinity.commit_message"}
    assert (system["trinity.author"], system["trinity.commit_message"]) == ("ana", "load 2")
    assert system["previous_root"] == root_node_file_name(snap.version - 1)
    assert content == dict(snap.scan()) == {"key1": "value1", "key2": "value2"}


def _seed_reader(data: bytes) -> tuple[dict[str, str], dict[str, str]]:
    """A leaf root read by the seeds' rules alone: its system rows, and its keys with the buffer applied."""
    table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    rows: list[Any] = list(
        zip(*(table.column(name).to_pylist() for name in ("key", "value", "pnode", "txn")))
    )
    system = {k: v for k, v, _, _ in itertools.takewhile(lambda r: r[:2] != (None, None), rows)}
    rest = rows[len(system) :]
    assert rest[0] == (None, None, None, None)  # a leaf: no leftmost child
    content = {k: v for k, v, p, t in rest[1:] if k is not None and t is None and p is None}
    for key, value, _, txn in rest[1:]:
        if txn is not None:  # a buffered message: None deletes
            if value is None:
                content.pop(key, None)
            else:
                content[key] = value
    return system, content


# -- what a version may record -----------------------------------------------------------


def test_checks_of_the_author() -> None:
    assert check_author(None) is None
    assert check_author("Ana María <ana@example.com>") == "Ana María <ana@example.com>"
    assert check_author("é" * (MAX_AUTHOR_BYTES // 2)) == "é" * (MAX_AUTHOR_BYTES // 2)
    with pytest.raises(ProgrammingError, match="the author must be a str or None, not int"):
        check_author(7)
    with pytest.raises(DataError, match="the author is empty"):
        check_author("")
    with pytest.raises(DataError, match=r"holds '\\n' at position 3, .*it is one line"):
        check_author("ana\nbo")
    with pytest.raises(DataError, match=r"holds '\\x00' at position 1"):
        check_author("a\x00")
    with pytest.raises(DataError, match="lone surrogate"):
        check_author("a\udc80")
    with pytest.raises(DataError, match=f"257 bytes of UTF-8, over the {MAX_AUTHOR_BYTES}"):
        check_author("a" * (MAX_AUTHOR_BYTES + 1))


def test_checks_of_the_commit_message() -> None:
    assert check_commit_message(None) is None
    assert check_commit_message("") is None
    assert check_commit_message("subject\n\nbody\twith tab") == "subject\n\nbody\twith tab"
    assert len(check_commit_message("m" * MAX_COMMIT_MESSAGE_BYTES) or "") == 4096
    with pytest.raises(ProgrammingError, match="the commit message must be a str or None"):
        check_commit_message(b"bytes")
    with pytest.raises(DataError, match=r"'\\r' at position 7.*line feeds and tabs"):
        check_commit_message("subject\r\nbody")
    with pytest.raises(DataError, match=r"'\\x1b'"):
        check_commit_message("\x1b[31mred")
    with pytest.raises(DataError, match="4097 bytes of UTF-8, over the 4096"):
        check_commit_message("m" * (MAX_COMMIT_MESSAGE_BYTES + 1))
    with pytest.raises(DataError):
        lake = _lake("bad-message")
        lake.begin().message = "bell\x07"
    assert commit_notes(None, None) == {}
    assert commit_notes("ana", "m") == {"trinity.author": "ana", "trinity.commit_message": "m"}
