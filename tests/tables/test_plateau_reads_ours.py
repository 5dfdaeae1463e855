"""plateau 4.6 (Kartothek's maintained fork) reads a lakehouse made through SQL, unmodified.

Run in the main environment (plateau is the test extra). The lakehouse of
tests/kartothek/our_tables.py: a partitioned table and an indexed one, each
after INSERT, UPDATE, DELETE and ALTER TABLE ADD COLUMN; plateau's
``read_table`` on a minimalkv store of the lakehouse root must give the rows
SELECT gives (both as ``rows_json`` values), with and without predicates on
the partition and the indexed column. Then the per-type probe pins what
plateau gives for every partition column type (NULL partitions included) and
every non-partition type, bugs included: docs/datasets.md, "Compatibility at
a glance", is this test's table.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.kartothek import our_tables
from tests.kartothek.rows_json import dtypes, frame_rows
from trinity_dbapi.tables import layout

eager = pytest.importorskip("plateau.io.eager", reason="plateau (the test extra) is not installed")
minimalkv = pytest.importorskip("minimalkv", reason="minimalkv comes with plateau")

pytestmark = pytest.mark.filterwarnings("ignore")

#: pandas' dtype for text (``str`` from pandas 3, ``object`` before).
TEXT = str(pytest.importorskip("pandas").Series(["x"]).dtype)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plateau") / "lake"
    our_tables.build_lake(root)
    return root


@pytest.fixture(scope="module")
def probe_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("plateau-probe") / "lake"
    our_tables.build_probe_lake(root)
    return root


def _read(root: Path, table: str, predicates: Any = None) -> Any:
    store = minimalkv.get_store_from_url(f"hfs://{root}")
    uuid = our_tables.dataset_uuid(root, table)
    return eager.read_table(dataset_uuid=uuid, store=store, predicates=predicates)


def _plateau(root: Path, table: str, predicates: Any = None) -> list[dict[str, Any]]:
    return sorted(frame_rows(_read(root, table, predicates)), key=lambda r: r["id"])


def test_common_metadata_carries_pandas_metadata(lake: Path) -> None:
    # plateau builds its empty frame from _common_metadata's "pandas" key.
    uuid = our_tables.dataset_uuid(lake, "p")
    schema = pq.read_schema(lake / layout.common_metadata_path(uuid))
    pandas = json.loads(schema.metadata[b"pandas"])
    assert pandas["index_columns"] == []
    assert [(c["name"], c["pandas_type"]) for c in pandas["columns"]] == [
        ("id", "int64"),
        ("day", "date"),
        ("name", "unicode"),
        ("x", "float64"),
        ("n", "int32"),
    ]
    assert {c["numpy_type"] for c in pandas["columns"]} == {"object"}


def test_plateau_reads_the_partitioned_table(lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.p")
    assert [r["id"] for r in expected] == [1, 2, 3, 5]
    assert expected[1] == {"id": 2, "day": "2024-01-01", "name": "bb", "x": 20.5, "n": None}
    assert _plateau(lake, "p") == expected


def test_plateau_prunes_on_the_partition_column(lake: Path) -> None:
    day = datetime.date(2024, 1, 1)
    expected = our_tables.select_rows(lake, "SELECT * FROM s.p WHERE day = DATE '2024-01-01'")
    assert [r["id"] for r in expected] == [1, 2]
    assert _plateau(lake, "p", [[("day", "==", day)]]) == expected
    expected = our_tables.select_rows(lake, "SELECT * FROM s.p WHERE day >= DATE '2024-01-02'")
    got = _plateau(lake, "p", [[("day", ">=", datetime.date(2024, 1, 2))]])
    assert got == expected and [r["id"] for r in got] == [3, 5]


def test_plateau_reads_the_indexed_table(lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.i")
    assert [r["id"] for r in expected] == [1, 3, 4, 5]
    assert _plateau(lake, "i") == expected
    expected = our_tables.select_rows(lake, "SELECT * FROM s.i WHERE k = 'x'")
    assert [r["id"] for r in expected] == [1, 3, 5]
    assert _plateau(lake, "i", [[("k", "==", "x")]]) == expected


def test_plateau_uses_our_index(lake: Path) -> None:
    # The index of s.i is found by plateau's own metadata reader and narrows the files.
    store = minimalkv.get_store_from_url(f"hfs://{lake}")
    uuid = our_tables.dataset_uuid(lake, "i")
    from plateau.core.dataset import DatasetMetadata

    meta = DatasetMetadata.load_from_store(uuid, store).load_all_indices(store)
    index = meta.indices["k"]
    found = index.eval_operator("==", "x")
    assert found and found < set(meta.partitions)
    assert sorted(index.observed_values()) == ["x", "z"]


# -- the per-type probe -------------------------------------------------------------

#: plateau 4.6.2's ``read_table`` of ``s.p_<type>``: dtype of ``k`` and its values for ids 1, 2,
#: or the error. SQL holds the two values of our_tables.PARTITION_TYPES.
PLATEAU_PARTITIONS: dict[str, Any] = {
    "int2": ("int16", [1, -2]),
    "int4": ("int32", [100000, -3]),
    "int8": ("int64", [1099511627776, -1]),
    "float4": ("float32", [1.5, -0.25]),
    "float8": ("float64", [2.5, 0.001]),
    "decimal": ("object", ["1.50", "-2.25"]),  # the text, not a Decimal
    "varchar": (TEXT, ["a b", "süd/1"]),
    "boolean": ("bool", [True, True]),  # BUG: np.bool_("false") is True
    "date": ("object", ["2024-01-01", "2024-02-29"]),  # datetime.date objects
    "timestamp": ("datetime64[ns]", ["2024-01-01T10:30:00", "2024-01-02T00:00:00.123456"]),
    "timestamptz": "RuntimeError: Unexpected object encountered",
}

#: The same for ``s.n_<type>``: id 1 holds the first value, id 2 NULL.
PLATEAU_NULL_PARTITIONS: dict[str, Any] = {
    "int2": "ValueError: invalid literal for int() with base 10: '__HIVE_DEFAULT_PARTITION__'",
    "int4": "ValueError: invalid literal for int() with base 10: '__HIVE_DEFAULT_PARTITION__'",
    "int8": "ValueError: invalid literal for int() with base 10: '__HIVE_DEFAULT_PARTITION__'",
    "float4": "ValueError: could not convert string to float: '__HIVE_DEFAULT_PARTITION__'",
    "float8": "ValueError: could not convert string to float: '__HIVE_DEFAULT_PARTITION__'",
    "decimal": ("object", ["1.50", "__HIVE_DEFAULT_PARTITION__"]),
    "varchar": (TEXT, ["a b", "__HIVE_DEFAULT_PARTITION__"]),
    "boolean": ("bool", [True, True]),
    "date": "DateParseError: Unknown datetime string format",
    "timestamp": "DateParseError: Unknown datetime string format",
    "timestamptz": "RuntimeError: Unexpected object encountered",
}


def _outcome(root: Path, table: str) -> Any:
    try:
        frame = _read(root, table)
    except Exception as exc:  # noqa: BLE001 (the probe pins every failure as it is)
        return f"{type(exc).__name__}: {exc}"
    rows = sorted(frame_rows(frame), key=lambda r: r["id"])
    assert [(r["id"], r["v"]) for r in rows] == [(1, 10), (2, 20)]
    return dtypes(frame)["k"], [r["k"] for r in rows]


@pytest.mark.parametrize(
    ("prefix", "expected"), [("p", PLATEAU_PARTITIONS), ("n", PLATEAU_NULL_PARTITIONS)]
)
def test_plateau_per_partition_type(probe_lake: Path, prefix: str, expected: Any) -> None:
    got = {name: _outcome(probe_lake, f"{prefix}_{name}") for name in our_tables.PARTITION_TYPES}
    for name, want in expected.items():
        if isinstance(want, str):
            assert isinstance(got[name], str) and got[name].startswith(want), (name, got[name])
        else:
            assert got[name] == want, name


def test_select_gives_the_written_partition_values(probe_lake: Path) -> None:
    # What the probe compares with: SELECT returns the values written, NULL as None.
    rows = our_tables.select_rows(probe_lake, "SELECT * FROM s.p_boolean")
    assert [r["k"] for r in rows] == [True, False]
    rows = our_tables.select_rows(probe_lake, "SELECT * FROM s.n_decimal")
    assert [r["k"] for r in rows] == ["1.50", None]


def test_plateau_per_non_partition_type(probe_lake: Path) -> None:
    frame = _read(probe_lake, "w")
    assert sorted(frame_rows(frame), key=lambda r: r["id"]) == our_tables.WIDE_ROWS
    assert our_tables.select_rows(probe_lake, "SELECT * FROM s.w") == our_tables.WIDE_ROWS
    assert dtypes(frame) == {
        "id": "int64",
        "b": "object",  # booleans with a NULL
        "i2": "float64",  # integers with a NULL
        "i4": "float64",
        "i8": "float64",
        "f4": "float32",
        "f8": "float64",
        "d": "object",  # decimal.Decimal
        "c": TEXT,
        "vc": TEXT,
        "dt": "object",  # datetime.date
        "t": "object",  # datetime.time
        "ttz": "object",
        "ts0": "datetime64[ns]",
        "ts3": "datetime64[ns]",
        "ts": "datetime64[ns]",
        "ts9": "datetime64[ns]",
        "tstz": "datetime64[ns, UTC]",
        "fx": "object",  # bytes
        "bin": "object",
        "st": "object",  # dict
        "m": "object",  # list of (key, value) tuples
        "l": "object",  # numpy array
    }
