"""Every command of README.md runs, and prints what the README says it prints.

The Quickstart's two commands are run by CI exactly as written (``.ci/run``
reads them with ``.ci/quickstart.py``, checked here). The tour's blocks run
here in order, in the folder where ``trinity-demo`` made its lakehouse: each
``python`` block in one shared scope, each ``bash`` block in a shell, and
what each prints must equal the ``text`` block after it. The Spark block runs
in ``tests/spark/test_readme_spark.py``, on the session's Spark.
"""

from __future__ import annotations

import configparser
import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: A fenced block and the ```text block right after it (what it prints).
EXAMPLE = re.compile(r"```(python|bash)\n(.*?)```(?:\n\n```text\n(.*?)```)?", re.DOTALL)


def tour_examples() -> list[tuple[str, str, str, str | None]]:
    """(section, kind, code, printed) of each block of the README's tour, in order."""
    text = README.read_text(encoding="utf-8")
    tour = text[text.index("## A short tour") : text.index("## Documentation")]
    examples = []
    for section in re.split(r"^### ", tour, flags=re.MULTILINE)[1:]:
        title = section.splitlines()[0]
        examples += [(title, *match.groups()) for match in EXAMPLE.finditer(section)]
    return examples


def bin_path() -> str:
    """PATH with this interpreter's scripts first: ``trinity`` and ``trinity-demo``."""
    return os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def make_demo_lakehouse(folder: Path) -> None:
    """Run ``trinity-demo`` in ``folder``, as the Quickstart does."""
    done = subprocess.run(
        ["trinity-demo"],
        cwd=folder,
        env={**os.environ, "PATH": bin_path()},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("readme")
    make_demo_lakehouse(folder)
    return folder


def test_the_tour_runs_and_prints_what_it_says(
    demo_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demo_folder)
    scope: dict[str, object] = {}
    ran = []
    for section, kind, code, printed in tour_examples():
        if section == "Spark":
            continue
        assert printed is not None, f"the {section} example is not followed by its output"
        if kind == "bash":
            done = subprocess.run(
                ["bash", "-c", code],
                env={**os.environ, "PATH": bin_path()},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert (done.returncode, done.stderr) == (0, ""), code
            output = done.stdout
        else:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(code, scope)  # noqa: S102
            output = buffer.getvalue()
        assert output == printed, f"the {section} {kind} example"
        ran.append((section, kind))
    assert ran == [("SQL", "python"), ("SQL", "bash"), ("pandas", "python"), ("DuckDB", "python")]


def test_the_tour_covers_sql_pandas_duckdb_and_spark() -> None:
    sections = [section for section, _, _, _ in tour_examples()]
    assert sorted(set(sections)) == ["DuckDB", "SQL", "Spark", "pandas"]


def _load_quickstart() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("quickstart", ROOT / ".ci" / "quickstart.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ci_reads_the_two_quickstart_commands() -> None:
    quickstart = _load_quickstart()
    commands = quickstart.quickstart_commands(README.read_text(encoding="utf-8"))  # type: ignore[attr-defined]
    assert commands == [
        "pip install . && trinity-demo",
        'pip install ".[test]" && python -m pytest -n auto',
    ]
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "quickstart.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == commands


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("# x\n", "no '## Quickstart' section"),
        ("## Quickstart\n```bash\na\n```\n", "exactly two commands"),
        ("## Quickstart\n```bash\na\nb\n```\n```bash\nc\n```\n", "one command line"),
        ("## Quickstart\n```bash\na\n```\n## Next\n```bash\nb\n```\n", "exactly two commands"),
    ],
)
def test_ci_refuses_a_quickstart_it_cannot_run_exactly(text: str, error: str) -> None:
    quickstart = _load_quickstart()
    with pytest.raises(ValueError, match=error):
        quickstart.quickstart_commands(text)  # type: ignore[attr-defined]


def test_python_examples_are_formatted_as_ruff_formats_them() -> None:
    for section, kind, code, _ in tour_examples():
        if kind != "python":
            continue
        done = subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--diff", "--line-length", "100", "-"],
            input=code,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"the {section} example:\n{done.stdout}"


def test_every_extra_the_readme_installs_exists() -> None:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    extras = set(config["options.extras_require"])
    named = re.findall(r'pip install "\.\[(\w+)\]"', README.read_text(encoding="utf-8"))
    assert {"test", "pandas", "spark"} <= set(named)
    assert set(named) <= extras


def test_every_link_of_the_readme_exists() -> None:
    links = re.findall(r"\]\(([^)#]+)\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link]
    assert len(local) >= 10
    assert [link for link in local if not (ROOT / link).exists()] == []
