"""A Kartothek data file must hold the dataset's columns (issue 29, item 6).

Kartothek and plateau write every data file of a dataset with the columns of
its ``_common_metadata`` except the partition columns, and refuse a frame
whose columns differ. Our reader matches a Kartothek file's columns by name,
so a file lacking a column, or holding it under another name (``V`` for
``v``), used to read as NULLs for it. ``kartothek.check_file_columns`` refuses
such a file naming it and the column; ``read_rows`` and the import's copy
apply it to each file they read, and ``check_footers`` (the import's
``mode => 'reference'``) to each file's Parquet footer alone.
"""

from __future__ import annotations

import shutil
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import hypothesis
import hypothesis.strategies as st
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trinity_dbapi.errors import CorruptFileError
from trinity_dbapi.format.type_mapping import ID_KEY
from trinity_dbapi.storage.local import LocalStorage
from trinity_dbapi.tables import kartothek
from trinity_dbapi.tables.kartothek_import import check_footers, inspect_dataset

pd = pytest.importorskip("pandas")

PATH = "ds/table/p=a/0123456789abcdef0123456789abcdef.parquet"


def _schema(names: list[str]) -> pa.Schema:
    return pa.schema([(name, pa.int64()) for name in names])


# -- the rule -----------------------------------------------------------------------

NAMES = st.sampled_from(["id", "v", "V", "w", "p", "q", "__index_level_0__", "__index_level_1__"])


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(
    declared=st.lists(NAMES.filter(lambda n: not n.startswith("__")), unique=True, max_size=5),
    in_file=st.lists(NAMES, max_size=7),
    partitioned=st.sets(st.sampled_from(["p", "q"])),
)
def test_a_file_is_read_exactly_when_its_columns_are_the_datasets(
    declared: list[str], in_file: list[str], partitioned: set[str]
) -> None:
    """Refused iff a non-partition column is missing, an unknown one is there, or one twice."""
    partition_by = [name for name in declared if name in partitioned]
    data_columns = [n for n in in_file if not n.startswith("__index_level_")]
    missing = [n for n in declared if n not in partition_by and n not in data_columns]
    extra = [n for n in data_columns if n not in declared]
    twice = [n for n, count in Counter(data_columns).items() if count > 1]
    try:
        kartothek.check_file_columns(PATH, _schema(in_file), _schema(declared), partition_by)
    except CorruptFileError as exc:
        assert missing or extra or twice
        assert exc.path == PATH
        said = exc.problem.split(": every data file")[0]  # what is wrong, before the rule
        assert all(repr(name) in said for name in {*missing, *extra, *twice})
    else:
        assert not (missing or extra or twice)


@pytest.mark.parametrize(
    ("in_file", "message"),
    [
        (["id", "V"], r"lacks column 'v' and holds column 'V', which the dataset's schema lacks"),
        (["id"], r"lacks column 'v':"),
        (["id", "v", "x"], r"holds column 'x', which the dataset's schema lacks"),
        (["id", "v", "v"], r"holds column 'v' twice"),
        ([], r"lacks columns 'id', 'v':"),
    ],
)
def test_the_message_names_the_file_and_the_column(in_file: list[str], message: str) -> None:
    with pytest.raises(CorruptFileError, match=message) as info:
        kartothek.check_file_columns(PATH, _schema(in_file), _schema(["p", "id", "v"]), ["p"])
    assert info.value.path == PATH
    assert "_common_metadata ('p', 'id', 'v')" in info.value.problem


def test_pandas_index_and_partition_columns_may_be_in_a_file() -> None:
    declared = _schema(["p", "id", "v"])
    for in_file in (["id", "v"], ["v", "id"], ["id", "v", "__index_level_0__"], ["p", "id", "v"]):
        kartothek.check_file_columns(PATH, _schema(in_file), declared, ["p"])  # no error


def test_a_lakehouse_file_is_matched_by_column_id() -> None:
    """Our own datasets add and drop columns without rewriting files: exempt from the rule."""

    def with_ids(names: list[str], ids: list[int]) -> pa.Schema:
        return pa.schema(
            [
                pa.field(name, pa.int64(), metadata={ID_KEY: str(i)})
                for name, i in zip(names, ids, strict=True)
            ]
        )

    declared = with_ids(["id", "v", "z"], [1, 2, 4])
    older = with_ids(["id", "v", "x"], [1, 2, 3])  # x dropped, z added since
    assert kartothek.matched_by_id(older, declared)
    kartothek.check_file_columns(PATH, older, declared, [])  # no error
    # A schema without IDs (Kartothek's _common_metadata) checks by name.
    assert not kartothek.matched_by_id(older, _schema(["id", "v", "z"]))
    with pytest.raises(CorruptFileError, match="lacks column 'z'"):
        kartothek.check_file_columns(PATH, older, _schema(["id", "v", "z"]), [])


# -- a plateau dataset with one file rewritten --------------------------------------


@pytest.fixture(scope="module")
def plateau_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    eager = pytest.importorskip(
        "plateau.io.eager", reason="plateau (the test extra) is not installed"
    )
    minimalkv = pytest.importorskip("minimalkv", reason="minimalkv comes with plateau")
    root = tmp_path_factory.mktemp("plateau")
    frames = [
        pd.DataFrame({"id": [1, 2], "p": ["a", "b"], "v": [1.5, 2.5]}),
        pd.DataFrame({"id": [3], "p": ["a"], "v": [3.5]}),
    ]
    store = partial(minimalkv.get_store_from_url, f"hfs://{root}")
    eager.store_dataframes_as_dataset(
        store=store, dataset_uuid="ds", dfs=frames, partition_on=["p"]
    )
    return root


def _rewritten(store: Path, tmp_path: Path, change: Any) -> tuple[Path, str]:
    """A copy of the store whose ``p=b`` file is ``change(table)``; the file's path."""
    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    (victim,) = (copy / "ds" / "table" / "p=b").glob("*.parquet")
    pq.write_table(change(pq.read_table(victim)), victim)
    return copy, str(victim.relative_to(copy))


CHANGES = {
    "renamed": lambda t: t.rename_columns(["V" if n == "v" else n for n in t.column_names]),
    "missing": lambda t: t.drop(["v"]),
    "extra": lambda t: t.append_column("w", pa.array([0] * t.num_rows)),
}


def test_the_datasets_own_files_pass(plateau_store: Path) -> None:
    storage = LocalStorage(plateau_store.as_uri())
    rows = kartothek.read_rows(storage, kartothek.open_dataset(storage, "ds")).to_pylist()
    assert sorted(rows, key=lambda r: r["id"]) == [
        {"p": "a", "id": 1, "v": 1.5},
        {"p": "b", "id": 2, "v": 2.5},
        {"p": "a", "id": 3, "v": 3.5},
    ]
    done: list[int] = []
    assert check_footers(inspect_dataset(storage, "ds"), each_file=done.append) is False
    assert done == [1, 2, 3]


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_read_rows_refuses_the_file(plateau_store: Path, tmp_path: Path, change: str) -> None:
    """Was: row 2 read with v NULL."""
    store, victim = _rewritten(plateau_store, tmp_path, CHANGES[change])
    storage = LocalStorage(store.as_uri())
    with pytest.raises(CorruptFileError, match=r"column '[vVw]'") as info:
        kartothek.read_rows(storage, kartothek.open_dataset(storage, "ds"))
    assert info.value.path == victim


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_check_footers_refuses_the_file(plateau_store: Path, tmp_path: Path, change: str) -> None:
    store, victim = _rewritten(plateau_store, tmp_path, CHANGES[change])
    source = inspect_dataset(LocalStorage(store.as_uri()), "ds")
    with pytest.raises(CorruptFileError, match=r"column '[vVw]'") as info:
        check_footers(source)
    assert info.value.path == victim


def test_check_footers_reads_the_footers_only(plateau_store: Path, tmp_path: Path) -> None:
    """Data pages overwritten with garbage pass: only the footer (schema) is read."""

    def big(table: pa.Table) -> pa.Table:  # a file whose pages are most of its bytes
        n = 200_000
        return pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array([0.5] * n)})

    store, victim = _rewritten(plateau_store, tmp_path, big)
    raw = bytearray((store / victim).read_bytes())
    footer = int.from_bytes(raw[-8:-4], "little") + 8
    assert len(raw) - footer > 100_000
    raw[4 : len(raw) - footer] = b"\xff" * (len(raw) - footer - 4)
    (store / victim).write_bytes(bytes(raw))
    storage = LocalStorage(store.as_uri())
    source = inspect_dataset(storage, "ds")
    reads = storage.stats.reads
    assert check_footers(source) is False
    assert storage.stats.reads == reads  # nothing read whole through the storage
    with pytest.raises(CorruptFileError, match="not a readable Parquet file"):
        kartothek.read_rows(storage, source.meta)  # the rows themselves are garbage
