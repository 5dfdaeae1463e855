"""Node files: the exact on-disk layout of seed 001, and rejection of corrupt files."""

from __future__ import annotations

import pyarrow as pa
import pytest

from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.format.node_file import Message, NodeData, decode_node, encode_node

ORDER = 4


def _rows(data: bytes) -> list[tuple[str | None, ...]]:
    table = pa.ipc.open_file(pa.py_buffer(data)).read_all()
    return list(zip(*(table.column(i).to_pylist() for i in range(4))))


def _ipc(rows: list[tuple[str | None, ...]]) -> bytes:
    cols = [pa.array([r[i] for r in rows], pa.string()) for i in range(4)]
    table = pa.table(cols, names=["key", "value", "pnode", "txn"])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


INTERNAL = NodeData(
    system={"created_at_millis": "1700000000000"},
    keys=["b", "d"],
    values=["vb", "vd"],
    children=["c0.arrow", "c1.arrow", "c2.arrow"],
    buffer=[Message("a", "va", "t1"), Message("e", None, "t2")],
)


def test_golden_layout_of_an_internal_node() -> None:
    rows = _rows(encode_node(INTERNAL, ORDER, compression="none"))
    assert rows == [
        ("created_at_millis", "1700000000000", None, None),
        ("n_keys", "2", None, None),
        (None, None, "c0.arrow", None),  # leftmost child
        ("b", "vb", "c1.arrow", None),  # key, value, child right of the key
        ("d", "vd", "c2.arrow", None),
        (None, None, None, None),  # padding to exactly ORDER rows
        ("a", "va", None, "t1"),  # write buffer: set
        ("e", None, None, "t2"),  # write buffer: delete
    ]


def test_golden_layout_of_a_leaf() -> None:
    leaf = NodeData(system={}, keys=["x"], values=["1"], children=None, buffer=[])
    assert _rows(encode_node(leaf, ORDER, compression="none")) == [
        ("n_keys", "1", None, None),
        (None, None, None, None),
        ("x", "1", None, None),
        (None, None, None, None),
        (None, None, None, None),
    ]


@pytest.mark.parametrize("compression", ["zstd", "lz4", "none"])
def test_round_trip(compression: str) -> None:
    decoded = decode_node(encode_node(INTERNAL, ORDER, compression=compression), "n.arrow", ORDER)
    assert decoded == INTERNAL


def test_unknown_system_keys_are_tolerated() -> None:
    rows = _rows(encode_node(INTERNAL, ORDER, compression="none"))
    data = _ipc([("future_key", "anything", None, None), *rows])
    decoded = decode_node(data, "n.arrow", ORDER)
    assert decoded.system == {"future_key": "anything", "created_at_millis": "1700000000000"}
    assert decoded.keys == ["b", "d"]


def _corrupt(rows: list[tuple[str | None, ...]], match: str) -> None:
    with pytest.raises(CorruptFileError, match=match) as info:
        decode_node(_ipc(rows), "bad-node.arrow", ORDER)
    assert info.value.path == "bad-node.arrow"
    assert "bad-node.arrow" in str(info.value)


def test_n_keys_mismatch_is_corruption() -> None:
    rows = _rows(encode_node(INTERNAL, ORDER, compression="none"))
    rows[1] = ("n_keys", "3", None, None)
    _corrupt(rows, "NULL key or value")
    rows[1] = ("n_keys", "1", None, None)
    _corrupt(rows, "empty padding")
    rows[1] = ("n_keys", "many", None, None)
    _corrupt(rows, "not a number")


def test_unsorted_keys_are_corruption() -> None:
    rows = _rows(encode_node(INTERNAL, ORDER, compression="none"))
    rows[3], rows[4] = rows[4], rows[3]
    _corrupt(rows, "strictly ascending")


def test_wrong_row_counts_are_corruption() -> None:
    rows = _rows(encode_node(INTERNAL, ORDER, compression="none"))
    _corrupt(rows[:4], "expected exactly 4")  # key table cut short
    without_padding = rows[:5] + rows[6:]
    _corrupt(without_padding, "should be empty padding")
    _corrupt([r for r in rows if r[0] != "n_keys"], "'n_keys' is missing")
    _corrupt([("created_at_millis", "1", None, None)], "no row with NULL key and NULL value")


def test_buffer_rows_need_key_and_txn() -> None:
    rows = _rows(encode_node(INTERNAL, ORDER, compression="none"))
    rows[-1] = ("e", None, None, None)
    _corrupt(rows, "needs a key and a txn")


def test_truncated_and_foreign_files_are_corruption() -> None:
    data = encode_node(INTERNAL, ORDER)
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        with pytest.raises(CorruptFileError, match="not a readable Arrow IPC file"):
            decode_node(data[:cut], "cut.arrow", ORDER)
    table = pa.table({"a": [1]})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    with pytest.raises(CorruptFileError, match="schema"):
        decode_node(sink.getvalue().to_pybytes(), "foreign.arrow", ORDER)


def test_too_many_keys_for_the_order_are_refused_on_write() -> None:
    node = NodeData(keys=["a", "b", "c", "d"], values=["1", "2", "3", "4"])
    with pytest.raises(ValueError, match="at most 3 keys"):
        encode_node(node, ORDER)


def test_a_cached_buffer_table_encodes_exactly_like_a_fresh_one() -> None:
    """Reusing the Arrow table of a buffer prefix must not change a single byte."""
    from trinity_dbapi.format.node_file import encode_node_and_buffer

    old = [Message(f"k{i}", None if i % 5 == 0 else f"v{i}", f"t{i % 3}") for i in range(40)]
    first, table = encode_node_and_buffer(NodeData(keys=["m"], values=["x"], buffer=old), ORDER)
    grown = [*old, Message("z", "new", "t9")]
    cached = NodeData(keys=["m"], values=["x"], buffer=grown, buffer_arrow=(old, table))
    fresh = NodeData(keys=["m"], values=["x"], buffer=list(grown))
    assert encode_node(cached, ORDER) == encode_node(fresh, ORDER)
    # a buffer that no longer starts with the cached messages ignores the cache
    flushed = grown[10:]
    stale = NodeData(keys=["m"], values=["x"], buffer=flushed, buffer_arrow=(old, table))
    assert decode_node(encode_node(stale, ORDER), "n", ORDER).buffer == flushed
    # a decoded node carries its buffer table for the next encoding
    decoded = decode_node(first, "n", ORDER)
    assert decoded.buffer == old and decoded.buffer_arrow is not None
    assert decoded.buffer_arrow[1].num_rows == len(old)
