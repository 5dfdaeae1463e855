"""Kartothek 5.3.0 reads a float partition's two zeros back with their signs.

-0.0 and 0.0 are two partition directories, ``f=-0`` and ``f=0``
(docs/datasets.md, "Partition directories", rule 10a). Kartothek builds the
partition column with ``numpy.float64('-0')``: run in its own virtualenv
(tests/kartothek/venv.py), its ``read_table`` must give each row's sign, and
its predicate ``f == 0.0`` both rows (SQL equality).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import trinity_dbapi

from . import our_tables, venv

pytestmark = pytest.mark.kartothek

#: Run by Kartothek's Python: each row's id and the sign and text of ``f``, as JSON.
SCRIPT = """
import json, math, sys, warnings
warnings.simplefilter("ignore")
from kartothek.io.eager import read_table
from storefact import get_store_from_url
store = get_store_from_url("hfs://" + sys.argv[1])
predicates = [[tuple(c) for c in conj] for conj in json.loads(sys.argv[3]) or []] or None
df = read_table(dataset_uuid=sys.argv[2], store=lambda: store, table="table", predicates=predicates)
rows = [[int(i), repr(float(f)), math.copysign(1.0, float(f))] for i, f in zip(df["id"], df["f"])]
print(json.dumps({"dtype": str(df["f"].dtype), "rows": sorted(rows)}))
"""


@pytest.fixture(scope="module")
def kartothek_python() -> Path:
    try:
        return venv.ensure_venv()
    except venv.KartothekUnavailable as exc:
        pytest.skip(str(exc))


def _read(python: Path, root: Path, table: str, predicates: object = None) -> dict[str, object]:
    args = [str(python), "-c", SCRIPT, str(root), our_tables.dataset_uuid(root, table)]
    done = subprocess.run(
        [*args, json.dumps(predicates)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(("sql_type", "dtype"), [("FLOAT4", "float32"), ("FLOAT8", "float64")])
def test_kartothek_reads_each_zero_with_its_sign(
    kartothek_python: Path, tmp_path: Path, sql_type: str, dtype: str
) -> None:
    root = tmp_path / "lake"
    with trinity_dbapi.connect(str(root), create=True, autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE NAMESPACE s")
        cur.execute(f"CREATE TABLE s.z (id INT8, f {sql_type}, v INT4) PARTITIONED BY (f)")
        cur.executemany("INSERT INTO s.z VALUES (?, ?, ?)", [(1, 0.0, 10), (2, -0.0, 20)])
    read = _read(kartothek_python, root, "z")
    assert read == {"dtype": dtype, "rows": [[1, "0.0", 1.0], [2, "-0.0", -1.0]]}
    both = _read(kartothek_python, root, "z", [[["f", "==", 0.0]]])
    assert [row[0] for row in both["rows"]] == [1, 2]  # type: ignore[index]
