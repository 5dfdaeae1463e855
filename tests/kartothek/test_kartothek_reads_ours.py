"""Kartothek 5.3.0 itself reads a lakehouse made through SQL, unmodified.

The lakehouse gets a partitioned table and an indexed one, each after INSERT,
UPDATE, DELETE and ALTER TABLE ADD COLUMN; then Kartothek's ``read_table``,
run in its own Python 3.9 virtualenv (tests/kartothek/venv.py) by
tests/kartothek/read_with_kartothek.py, must give the rows SELECT gives,
compared as JSON lines, with and without predicates (on the partition column
and on the indexed column).
"""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.tables import managed

from . import venv

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
    conn = trinity_dbapi.connect(str(root), create=True, autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE NAMESPACE s")
    cur.execute("CREATE TABLE s.p (id INT8, day DATE, name VARCHAR, x FLOAT8) PARTITIONED BY (day)")
    cur.execute(
        "INSERT INTO s.p VALUES (1, DATE '2024-01-01', 'a', 1.5), (2, DATE '2024-01-01', 'b', 2.5),"
        " (3, DATE '2024-01-02', 'c', NULL), (4, DATE '2024-01-03', 'd', 4.25)"
    )
    cur.execute("UPDATE s.p SET name = 'bb', x = 20.5 WHERE id = 2")
    cur.execute("DELETE FROM s.p WHERE id = 4")
    cur.execute("ALTER TABLE s.p ADD COLUMN n INT4")
    cur.execute("INSERT INTO s.p VALUES (5, DATE '2024-01-03', 'e', 5.5, 50)")
    cur.execute("CREATE TABLE s.i (id INT8, k VARCHAR, v INT8)")
    cur.execute("CREATE INDEX by_k ON s.i (k)")
    cur.execute("INSERT INTO s.i VALUES (1, 'x', 10), (2, 'y', 20), (3, 'x', 30)")
    cur.execute("INSERT INTO s.i VALUES (4, 'z', 40)")
    cur.execute("UPDATE s.i SET v = 31 WHERE id = 3")
    cur.execute("DELETE FROM s.i WHERE k = 'y'")
    cur.execute("ALTER TABLE s.i ADD COLUMN w VARCHAR")
    cur.execute("INSERT INTO s.i VALUES (5, 'x', 50, 'new')")
    conn.close()
    return root


def _uuid(root: Path, table: str) -> str:
    definition = Lakehouse.open(str(root)).begin(read_only=True).load_table("s", table)
    return definition.format_properties[managed.DATASET_UUID]


def _select(root: Path, sql: str) -> list[dict[str, Any]]:
    with trinity_dbapi.connect(str(root)) as conn:
        cur = conn.cursor()
        cur.execute(sql)
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()
    out = []
    for row in rows:
        values = [v.isoformat() if isinstance(v, datetime.date) else v for v in row]
        out.append(dict(zip(names, values, strict=True)))
    return sorted(out, key=lambda r: r["id"])


def _kartothek(
    python: Path, root: Path, table: str, predicates: Any = None
) -> list[dict[str, Any]]:
    args = [str(python), str(SCRIPT), str(root), _uuid(root, table)]
    if predicates is not None:
        args.append(json.dumps(predicates))
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return sorted(rows, key=lambda r: r["id"])


def test_kartothek_reads_the_partitioned_table(kartothek_python: Path, lake: Path) -> None:
    expected = _select(lake, "SELECT * FROM s.p")
    assert [r["id"] for r in expected] == [1, 2, 3, 5]
    assert _kartothek(kartothek_python, lake, "p") == expected


def test_kartothek_prunes_on_the_partition_column(kartothek_python: Path, lake: Path) -> None:
    expected = _select(lake, "SELECT * FROM s.p WHERE day = DATE '2024-01-01'")
    assert [r["id"] for r in expected] == [1, 2]
    got = _kartothek(kartothek_python, lake, "p", [[["day", "==", "date:2024-01-01"]]])
    assert got == expected
    expected = _select(lake, "SELECT * FROM s.p WHERE day >= DATE '2024-01-02'")
    got = _kartothek(kartothek_python, lake, "p", [[["day", ">=", "date:2024-01-02"]]])
    assert got == expected and [r["id"] for r in got] == [3, 5]


def test_kartothek_reads_the_indexed_table(kartothek_python: Path, lake: Path) -> None:
    expected = _select(lake, "SELECT * FROM s.i")
    assert [r["id"] for r in expected] == [1, 3, 4, 5]
    assert _kartothek(kartothek_python, lake, "i") == expected
    expected = _select(lake, "SELECT * FROM s.i WHERE k = 'x'")
    assert [r["id"] for r in expected] == [1, 3, 5]
    assert _kartothek(kartothek_python, lake, "i", [[["k", "==", "x"]]]) == expected
