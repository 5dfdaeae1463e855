"""CI's own rules: the demo's check, the legs of .ci/run, the README's stated test time, a quick start.

.ci/check_demo.py fails CI unless the demo left tables that hold rows; every
marker the default run deselects has a leg of .ci/run that runs it, and every
test file is collected by the default run or by one of those legs, so moving
tests out of the default run never stops them running in CI.
"""

from __future__ import annotations

import configparser
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import trinity_dbapi
from tests.conftest import LEG_MARKERS

CHECK = Path(__file__).resolve().parent.parent / ".ci" / "check_demo.py"


def _check(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _lake(folder: Path, *statements: str) -> None:
    with trinity_dbapi.connect(str(folder), autocommit=True) as conn:
        for sql in statements:
            conn.execute(sql)


def test_no_lakehouse_fails(tmp_path: Path) -> None:
    done = _check(tmp_path / "none")
    assert done.returncode == 1
    assert "no lakehouse at" in done.stderr
    assert not (tmp_path / "none").exists()  # read-only: nothing created


def test_a_lakehouse_without_tables_fails(tmp_path: Path) -> None:
    _lake(tmp_path / "lake", "CREATE NAMESPACE shop")
    done = _check(tmp_path / "lake")
    assert (done.returncode, done.stdout) == (1, "")
    assert "has no tables" in done.stderr


@pytest.mark.parametrize("partitioned", [False, True])
def test_a_table_without_rows_fails(tmp_path: Path, partitioned: bool) -> None:
    partitions = " PARTITIONED BY (p)" if partitioned else ""
    _lake(
        tmp_path / "lake",
        "CREATE NAMESPACE shop",
        "CREATE TABLE shop.full (x INT8, p INT4)",
        f'CREATE TABLE shop."empty-one" (x INT8, p INT4){partitions}',
        "INSERT INTO shop.full VALUES (1, 1), (2, 1)",
    )
    done = _check(tmp_path / "lake")
    assert done.returncode == 1
    assert done.stdout.splitlines() == ["shop.empty-one: 0 rows", "shop.full: 2 rows"]
    assert "tables without rows: shop.empty-one" in done.stderr


def test_tables_holding_rows_pass(tmp_path: Path) -> None:
    _lake(
        tmp_path / "lake",
        "CREATE NAMESPACE shop",
        "CREATE TABLE shop.orders (x INT8)",
        "INSERT INTO shop.orders SELECT * FROM range(1500)",
    )
    done = _check(tmp_path / "lake")
    assert (done.returncode, done.stdout, done.stderr) == (0, "shop.orders: 1,500 rows\n", "")


ROOT = CHECK.parent.parent


def _pytest_legs() -> list[list[str]]:
    """The pytest arguments of each leg of .ci/run that runs pytest itself."""
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("\\\n", " ")
    legs = []
    for line in run.splitlines():
        if line.startswith("leg ") and "python -m pytest" in line:
            args = shlex.split(line.split("python -m pytest", 1)[1])
            while "-n" in args:  # the workers change no selection
                del args[args.index("-n") : args.index("-n") + 2]
            legs.append([arg for arg in args if arg != "-q"])  # -qq lists files, not tests
    return legs


def test_every_test_the_default_run_leaves_out_has_its_ci_leg() -> None:
    # `leg NAME python -m pytest ... -m MARKER PATH...`: one per left-out marker.
    markers = [args[args.index("-m") + 1] for args in _pytest_legs() if "-m" in args]
    assert sorted(markers) == sorted(LEG_MARKERS)
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    declared = config["tool:pytest"]["markers"].strip().splitlines()
    assert set(LEG_MARKERS) <= {line.split(":")[0].strip() for line in declared}


def _collected_files(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}


def test_every_test_file_runs_in_the_default_run_or_a_named_leg() -> None:
    """No test file is silently orphaned: each one's tests are collected by the
    README's test command (its default selection) or by a leg of .ci/run."""
    on_disk = {path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").rglob("test_*.py")}
    # SQLAlchemy's compliance suite runs under its own plugin in a subprocess
    # of tests/sqlalchemy/test_compliance.py (conftest.py's collect_ignore).
    runner = (ROOT / "tests" / "sqlalchemy" / "test_compliance.py").read_text(encoding="utf-8")
    assert '"tests/sqlalchemy_suite"' in runner
    on_disk = {path for path in on_disk if not path.startswith("tests/sqlalchemy_suite/")}
    legs = _pytest_legs()
    assert len(legs) >= len(LEG_MARKERS)
    collected = _collected_files()
    for args in legs:
        collected |= _collected_files(*args)
    assert sorted(on_disk - collected) == []


def test_the_default_run_leaves_out_exactly_the_leg_markers(tmp_path: Path) -> None:
    """A leg's test is deselected unless -m names its marker; slow ones are skipped."""
    shutil.copy(ROOT / "setup.cfg", tmp_path)
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path)
    (tmp_path / "test_legs.py").write_text(
        "import pytest\n"
        "def test_plain(): pass\n"
        "@pytest.mark.slow\ndef test_slow(): pass\n"
        "@pytest.mark.s3\ndef test_s3(): pass\n"
        + "".join(f"@pytest.mark.{name}\ndef test_{name}(): pass\n" for name in LEG_MARKERS)
    )

    def selected(*args: str) -> list[str]:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"),
                *("--rootdir", str(tmp_path), str(tmp_path / "test_legs.py"), *args),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return sorted(line.split("::")[1] for line in done.stdout.splitlines() if "::" in line)

    assert selected() == ["test_plain", "test_s3", "test_slow"]
    assert selected("-m", "not s3") == ["test_plain", "test_slow"]
    assert selected("-m", "superset") == ["test_superset"]
    assert selected("-m", "kartothek or bench") == ["test_bench", "test_kartothek"]


def test_ci_reads_the_test_time_the_readme_states() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "quickstart.py"), "--test-minutes"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert 1 <= int(done.stdout) <= 20
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "-n auto" in readme.split("## Quickstart")[1].split("## ")[0]


def test_the_shared_fixtures_start_nothing_heavy() -> None:
    """conftest files import no server, engine or Spark: a single test file starts in
    about a second; the fixtures that need them import them when first used."""
    heavy = ("moto", "werkzeug", "s3fs", "botocore", "pyspark", "duckdb", "pandas", "sqlalchemy")
    code = (
        "import sys, tests.conftest, tests.spark.conftest\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "[]"
