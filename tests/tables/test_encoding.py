"""Which columns of a data file are dictionary encoded: decided from its first rows."""

from __future__ import annotations

import decimal
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.tables.helpers import simple_schema
from trinity_dbapi.storage import open_storage
from trinity_dbapi.tables.encoding import DICTIONARY_PAGE_LIMIT, SAMPLE_ROWS, dictionary_columns
from trinity_dbapi.tables.metadata import DatasetMetadata
from trinity_dbapi.tables.reader import read_table
from trinity_dbapi.tables.writer import new_dataset, write_data

ROWS = 50_000
DICTIONARY = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}


def _encodings(data: bytes) -> dict[str, set[str]]:
    """Column path -> the encodings its chunks used, over every row group."""
    meta = pq.read_metadata(io.BytesIO(data))
    found: dict[str, set[str]] = {}
    for group in range(meta.num_row_groups):
        for i in range(meta.num_columns):
            chunk = meta.row_group(group).column(i)
            found.setdefault(chunk.path_in_schema, set()).update(chunk.encodings)
    return found


def _written(table: pa.Table) -> dict[str, set[str]]:
    sink = io.BytesIO()
    pq.write_table(
        table,
        sink,
        use_dictionary=dictionary_columns(table),
        dictionary_pagesize_limit=DICTIONARY_PAGE_LIMIT,
    )
    return _encodings(sink.getvalue())


def test_low_cardinality_columns_keep_the_dictionary() -> None:
    table = pa.table({"day": pa.array([i % 366 for i in range(ROWS)], pa.int32())})
    assert dictionary_columns(table) is True
    assert _written(table)["day"] & DICTIONARY


def test_unique_values_are_written_plainly_from_the_start() -> None:
    table = pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "name": pa.array([f"name{i}" for i in range(ROWS)]),
            "score": pa.array([i * 0.5 for i in range(ROWS)]),
            "shop": pa.array(["abc"[i % 3] for i in range(ROWS)]),
        }
    )
    assert dictionary_columns(table) == ["shop"]
    encodings = _written(table)
    assert not encodings["id"] & DICTIONARY
    assert not encodings["name"] & DICTIONARY
    assert not encodings["score"] & DICTIONARY
    assert encodings["shop"] & DICTIONARY


def test_the_decision_is_the_dictionary_page_size() -> None:
    # 8-byte values: the page holds 8,192 of them. At that many distinct
    # values the dictionary still fits; one more and it would not.
    fits = DICTIONARY_PAGE_LIMIT // 8
    for distinct, keep in ((fits, True), (fits + 1, False)):
        values = pa.array([i % distinct for i in range(SAMPLE_ROWS)], pa.int64())
        assert (dictionary_columns(pa.table({"v": values})) is True) is keep


def test_strings_count_their_bytes_and_length_prefixes() -> None:
    # 2,000 distinct 30-byte strings: 68,000 bytes with the 4-byte lengths.
    long = [f"{i:030d}" for i in range(2000)]
    assert dictionary_columns(pa.table({"s": long * 5})) == []
    # The same count of 20-byte strings: 48,000 bytes, fits.
    short = [f"{i:020d}" for i in range(2000)]
    assert dictionary_columns(pa.table({"s": short * 5})) is True


def test_decimals_are_measured_at_their_stored_width() -> None:
    # DECIMAL(10, 2) is stored in 5 bytes, not Arrow's 16: 10,000 distinct
    # values (50,000 bytes) keep the dictionary.
    values = pa.array([decimal.Decimal(i) / 100 for i in range(10_000)] * 2, pa.decimal128(10, 2))
    assert dictionary_columns(pa.table({"d": values})) is True


def test_nulls_booleans_and_small_inputs_keep_the_default() -> None:
    table = pa.table(
        {
            "none": pa.nulls(ROWS, pa.int64()),
            "flag": pa.array([i % 2 == 0 for i in range(ROWS)]),
            "id": pa.array(range(ROWS), pa.int64()),
        }
    )
    assert dictionary_columns(table) == ["none", "flag"]
    # Fewer rows than one dictionary page can hold: decided without counting.
    assert dictionary_columns(table.slice(0, 100)) is True


def test_nested_columns_keep_the_dictionary_on_every_leaf() -> None:
    table = pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "s": pa.array([{"a": i % 3, "b": "xy"[i % 2]} for i in range(ROWS)]),
            "l": pa.array([[i % 5] for i in range(ROWS)]),
        }
    )
    keep = dictionary_columns(table)
    assert keep == ["s.a", "s.b", "l.list.element"]
    encodings = _written(table)
    assert not encodings["id"] & DICTIONARY
    for path in keep:
        assert encodings[path] & DICTIONARY, path


def test_data_files_written_plainly_read_back_the_same(tmp_path: Path) -> None:
    storage = open_storage(f"file://{tmp_path / 'lake'}")
    schema = simple_schema(id="int8", name="varchar", day="int4")
    data = pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "name": pa.array([f"name{i}" for i in range(ROWS)]),
            "day": pa.array([i % 366 for i in range(ROWS)], pa.int32()),
        }
    )
    meta: DatasetMetadata = new_dataset(storage, schema, [])
    files = write_data(storage, meta, schema, [], data)
    meta = meta.with_partitions(files)
    (path,) = files.values()
    encodings = _encodings(storage.read(path))
    assert not encodings["id"] & DICTIONARY
    assert not encodings["name"] & DICTIONARY
    assert encodings["day"] & DICTIONARY
    back = read_table(storage, meta, schema, [])
    assert back.select(["id", "name", "day"]).to_pydict() == data.to_pydict()


def test_leaves_are_counted_per_column_even_with_dots_in_names() -> None:
    rows = SAMPLE_ROWS
    table = pa.table(
        {
            "a.b": pa.array(range(rows), pa.int64()),
            "m": pa.array(
                [[("k", [i % 3])] for i in range(rows)], pa.map_(pa.string(), pa.list_(pa.int8()))
            ),
            "a": pa.array([{"b": i % 2} for i in range(rows)]),
        }
    )
    keep = dictionary_columns(table)
    assert keep == ["m.key_value.key", "m.key_value.value.list.element", "a.b"]
    encodings = _written(table)
    assert encodings["m.key_value.key"] & DICTIONARY
    assert encodings["m.key_value.value.list.element"] & DICTIONARY
