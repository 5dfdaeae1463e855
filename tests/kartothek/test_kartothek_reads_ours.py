"""Kartothek 5.3.0 itself reads a lakehouse made through SQL, unmodified.

The lakehouse of tests/kartothek/our_tables.py gets a partitioned table and
an indexed one, each after INSERT, UPDATE, DELETE and ALTER TABLE ADD COLUMN;
then Kartothek's ``read_table``, run in its own Python 3.9 virtualenv
(tests/kartothek/venv.py) by tests/kartothek/read_with_kartothek.py, must give
the rows SELECT gives, compared as ``rows_json`` values, with and without
predicates (on the partition column and on the indexed column).

The per-type probe pins what Kartothek gives for every partition column type
(NULL partitions included) and every non-partition type, bugs included, all
tables in one Kartothek process: docs/datasets.md, "Compatibility at a
glance", is this test's table.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from . import our_tables, venv

pytestmark = pytest.mark.kartothek

SCRIPT = Path(__file__).with_name("read_with_kartothek.py")


@pytest.fixture(scope="module")
def kartothek_python() -> Path:
    try:
        return venv.ensure_venv()
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kartothek") / "lake"
    our_tables.build_lake(root)
    return root


def _run(args: list[str]) -> list[Any]:
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def _kartothek(
    python: Path, root: Path, table: str, predicates: Any = None
) -> list[dict[str, Any]]:
    args = [str(python), str(SCRIPT), str(root), our_tables.dataset_uuid(root, table)]
    if predicates is not None:
        args.append(json.dumps(predicates))
    return sorted(_run(args), key=lambda r: r["id"])


def test_kartothek_reads_the_partitioned_table(kartothek_python: Path, lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.p")
    assert [r["id"] for r in expected] == [1, 2, 3, 5]
    assert _kartothek(kartothek_python, lake, "p") == expected


def test_kartothek_prunes_on_the_partition_column(kartothek_python: Path, lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.p WHERE day = DATE '2024-01-01'")
    assert [r["id"] for r in expected] == [1, 2]
    got = _kartothek(kartothek_python, lake, "p", [[["day", "==", "date:2024-01-01"]]])
    assert got == expected
    expected = our_tables.select_rows(lake, "SELECT * FROM s.p WHERE day >= DATE '2024-01-02'")
    got = _kartothek(kartothek_python, lake, "p", [[["day", ">=", "date:2024-01-02"]]])
    assert got == expected and [r["id"] for r in got] == [3, 5]


def test_kartothek_reads_the_indexed_table(kartothek_python: Path, lake: Path) -> None:
    expected = our_tables.select_rows(lake, "SELECT * FROM s.i")
    assert [r["id"] for r in expected] == [1, 3, 4, 5]
    assert _kartothek(kartothek_python, lake, "i") == expected
    expected = our_tables.select_rows(lake, "SELECT * FROM s.i WHERE k = 'x'")
    assert [r["id"] for r in expected] == [1, 3, 5]
    assert _kartothek(kartothek_python, lake, "i", [[["k", "==", "x"]]]) == expected


# -- the per-type probe -------------------------------------------------------------

#: Kartothek 5.3.0's ``read_table`` of ``s.p_<type>``: dtype of ``k`` and its values for
#: ids 1, 2, or the start of the error. SQL holds the values of our_tables.PARTITION_TYPES.
KARTOTHEK_PARTITIONS: dict[str, Any] = {
    "int2": ("int16", [1, -2]),
    "int4": ("int32", [100000, -3]),
    "int8": ("int64", [1099511627776, -1]),
    "float4": ("float32", [1.5, -0.25]),
    "float8": ("float64", [2.5, 0.001]),
    "decimal": ("object", ["1.50", "-2.25"]),  # the text, not a Decimal
    "varchar": ("object", ["a b", "süd/1"]),
    "boolean": ("bool", [True, True]),  # BUG: np.bool_("false") is True
    "date": ("datetime64[ns]", ["2024-01-01", "2024-02-29"]),
    "timestamp": ("datetime64[ns]", ["2024-01-01T10:30:00", "2024-01-02T00:00:00.123456"]),
    "timestamptz": "RuntimeError: Unexepected object encountered",  # sic
}

#: The same for ``s.n_<type>``: id 1 holds the first value, id 2 NULL.
KARTOTHEK_NULL_PARTITIONS: dict[str, Any] = {
    "int2": "ValueError: invalid literal for int() with base 10: '__HIVE_DEFAULT_PARTITION__'",
    "int4": "ValueError: invalid literal for int() with base 10: '__HIVE_DEFAULT_PARTITION__'",
    "int8": "ValueError: invalid literal for int() with base 10: '__HIVE_DEFAULT_PARTITION__'",
    "float4": "ValueError: could not convert string to float: '__HIVE_DEFAULT_PARTITION__'",
    "float8": "ValueError: could not convert string to float: '__HIVE_DEFAULT_PARTITION__'",
    "decimal": ("object", ["1.50", "__HIVE_DEFAULT_PARTITION__"]),
    "varchar": ("object", ["a b", "__HIVE_DEFAULT_PARTITION__"]),
    "boolean": ("bool", [True, True]),
    "date": "ValueError: could not convert string to Timestamp",
    "timestamp": "ValueError: could not convert string to Timestamp",
    "timestamptz": "RuntimeError: Unexepected object encountered",
}

#: Kartothek's dtypes of ``s.w`` (our_tables.WIDE_COLUMNS); the values are WIDE_ROWS.
KARTOTHEK_WIDE_DTYPES = {
    "id": "int64",
    "b": "object",  # booleans with a NULL
    "i2": "float64",  # integers with a NULL (pandas 1.3)
    "i4": "float64",
    "i8": "float64",
    "f4": "float32",
    "f8": "float64",
    "d": "object",  # decimal.Decimal
    "c": "object",
    "vc": "object",
    "dt": "datetime64[ns]",  # DATE as a timestamp at midnight
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


@pytest.fixture(scope="module")
def probe(kartothek_python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Kartothek's ``--probe`` output per table name, from one process."""
    root = tmp_path_factory.mktemp("kartothek-probe") / "lake"
    our_tables.build_probe_lake(root)
    names = ["w"] + [f"{p}_{t}" for p in "pn" for t in our_tables.PARTITION_TYPES]
    uuids = [our_tables.dataset_uuid(root, name) for name in names]
    results = _run([str(kartothek_python), str(SCRIPT), "--probe", str(root), *uuids])
    assert [r["uuid"] for r in results] == uuids
    assert our_tables.select_rows(root, "SELECT * FROM s.w") == our_tables.WIDE_ROWS
    return dict(zip(names, results, strict=True))


def _outcome(result: dict[str, Any]) -> Any:
    if "error" in result:
        return result["error"]
    rows = sorted(result["rows"], key=lambda r: r["id"])
    assert [(r["id"], r["v"]) for r in rows] == [(1, 10), (2, 20)]
    return result["dtypes"]["k"], [r["k"] for r in rows]


@pytest.mark.parametrize(
    ("prefix", "expected"), [("p", KARTOTHEK_PARTITIONS), ("n", KARTOTHEK_NULL_PARTITIONS)]
)
def test_kartothek_per_partition_type(probe: dict[str, Any], prefix: str, expected: Any) -> None:
    for name, want in expected.items():
        got = _outcome(probe[f"{prefix}_{name}"])
        if isinstance(want, str):
            assert isinstance(got, str) and got.startswith(want), (name, got)
        else:
            assert got == want, name


def test_kartothek_per_non_partition_type(probe: dict[str, Any]) -> None:
    result = probe["w"]
    assert sorted(result["rows"], key=lambda r: r["id"]) == our_tables.WIDE_ROWS
    assert result["dtypes"] == KARTOTHEK_WIDE_DTYPES
