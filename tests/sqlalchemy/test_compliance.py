"""SQLAlchemy's dialect compliance suite, run in a subprocess, against the documented counts.

The suite (``tests/sqlalchemy_suite``) brings its own pytest plugin, which
would take over this session, so it runs in a child pytest. Its result must
have no failures or errors, and exactly the passed and skipped counts that
``docs/sqlalchemy.md`` states, so a change in what the dialect supports is
seen and documented.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "sqlalchemy.md"
#: The run's counts, until docs/sqlalchemy.md states them.
FALLBACK_COUNTS = {"passed": 838, "skipped": 597}
#: The documented counts: a line of exactly this form per SQLAlchemy line
#: ("Compliance suite: ..." for 2.x, "Compliance suite on SQLAlchemy 1.4: ...").
DOCUMENTED = re.compile(
    r"^Compliance suite(?: on SQLAlchemy (\d+\.\d+))?: (\d+) passed, (\d+) skipped$",
    re.MULTILINE,
)
#: pytest's final summary line: "838 passed, 597 skipped, 2 warnings in 39.33s".
SUMMARY = re.compile(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s", re.MULTILINE)


def suite_line() -> str:
    """The SQLAlchemy line whose suite runs: "1.4", or "" for the 2.x line.

    The suite itself differs between the lines (1.4's has fewer cases), so
    its counts are documented per line; this picks which line to compare.
    """
    import sqlalchemy

    return "1.4" if sqlalchemy.__version__.startswith("1.4.") else ""


def documented_counts(line: str = "") -> dict[str, int]:
    """The passed and skipped counts that docs/sqlalchemy.md states for a SQLAlchemy line."""
    if not DOCS.exists():
        return dict(FALLBACK_COUNTS)
    found = [f for f in DOCUMENTED.findall(DOCS.read_text(encoding="utf-8")) if f[0] == line]
    shown = f" on SQLAlchemy {line}" if line else ""
    assert len(found) == 1, (
        f"{DOCS} must hold exactly one line 'Compliance suite{shown}: N passed, M skipped', "
        f"found {len(found)}"
    )
    _, passed, skipped = found[0]
    return {"passed": int(passed), "skipped": int(skipped)}


def summary_counts(output: str) -> dict[str, int]:
    """The counts of pytest's last summary line, by outcome ("errors" as "error")."""
    lines = SUMMARY.findall(output)
    assert lines, f"no pytest summary line in the output:\n{output[-3000:]}"
    counts: dict[str, int] = {}
    for part in lines[-1].split(", "):
        number, outcome = part.split(" ", 1)
        counts[outcome.rstrip("s") if outcome in ("errors", "warnings") else outcome] = int(number)
    return counts


def test_summary_parsing() -> None:
    output = (
        "...\nFAILED x::y - boom\n"
        "= 3 failed, 830 passed, 597 skipped, 1 xfailed, 2 warnings, 4 errors in 39.33s =\n"
    )
    assert summary_counts(output) == {
        "failed": 3,
        "passed": 830,
        "skipped": 597,
        "xfailed": 1,
        "warning": 2,
        "error": 4,
    }
    assert summary_counts("838 passed, 597 skipped, 2 warnings in 39.33s\n") == {
        "passed": 838,
        "skipped": 597,
        "warning": 2,
    }


def test_documented_counts_parsing(tmp_path: Path) -> None:
    text = (
        "# SQLAlchemy\n\nCompliance suite: 838 passed, 597 skipped\n\n"
        "Compliance suite on SQLAlchemy 1.4: 341 passed, 275 skipped\nmore text\n"
    )
    found = DOCUMENTED.findall(text)
    assert found == [("", "838", "597"), ("1.4", "341", "275")]
    assert DOCUMENTED.findall("Compliance suite: 838 passed, 597 skipped, 1 failed\n") == []


def test_both_lines_are_documented() -> None:
    assert documented_counts("")["passed"] > documented_counts("1.4")["passed"] > 0


def test_compliance_suite(tmp_path: Path) -> None:
    expected = documented_counts(suite_line())
    command = [
        sys.executable,
        "-m",
        "pytest",
        "tests/sqlalchemy_suite",
        "--dburi",
        f"trinity:///{tmp_path}/lake",
        "-q",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "-p",
        "no:randomly",
    ]
    try:
        completed = subprocess.run(
            command,
            cwd=ROOT,
            env={**os.environ, "TRINITY_SQLA_SUITE": "1"},
            capture_output=True,
            text=True,
            timeout=540,  # ~40 s normally; under pytest-timeout's 600 s
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the compliance suite did not finish in {error.timeout} s")
    output = completed.stdout + completed.stderr
    counts = summary_counts(output)
    failures = "\n".join(
        line for line in output.splitlines() if line.startswith(("FAILED", "ERROR"))
    )
    assert (counts.get("failed", 0), counts.get("error", 0)) == (0, 0), failures
    assert {"passed": counts.get("passed", 0), "skipped": counts.get("skipped", 0)} == expected
    assert completed.returncode == 0, output[-3000:]
