"""The virtualenv the Superset end-to-end test runs Superset in.

Superset 6.1 pins SQLAlchemy 1.4, sqlglot 28 and pandas 2.1, so it cannot run
in the test session's own environment. It gets a virtualenv of its own, made
the way docs/superset.md tells a user to install it::

    pip install apache-superset==6.1.0 rich cachetools "flask-caching<2.4" <checkout>

The virtualenv is cached outside the checkout (CI runs from fresh clones), in
``~/.cache/trinity-dbapi/superset-venv-<hash of PINS and the Python version>``
(``TRINITY_SUPERSET_VENV`` overrides the path). Every run then:

1. asks pip to resolve that same command (``--dry-run --report``): this proves
   the ranges of the checkout under test admit Superset's pins, and it lists
   what a real install would add (a dependency the checkout gained since the
   cache was made, say);
2. installs what the dry run listed, if anything besides this package;
3. reinstalls this package from the checkout (``--no-deps --force-reinstall``),
   so Superset always runs the code under test and never a stale copy.

A cold cache costs minutes (Superset's wheel and its ~150 dependencies); a warm
one costs the resolve and one small wheel build.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

#: What a user installs beside this package. Superset 6.1.0 imports ``rich``
#: and ``cachetools`` without declaring them, and Flask-Caching 2.4 removed
#: an import path 6.1.0 still uses; docs/superset.md says the same.
PINS = ("apache-superset==6.1.0", "rich", "cachetools", "flask-caching<2.4")

#: The Python Superset 6.1 runs on here (its classifiers: 3.10 to 3.12).
PYTHON_VERSION = "3.11"

#: The files a wheel of this package is built from (no tests, no build/).
_SOURCE_ITEMS = ("setup.cfg", "pyproject.toml", "README.md", "trinity_dbapi")

#: The checkout under test.
ROOT = Path(__file__).resolve().parents[3]

_PIP_TIMEOUT = 1800


class SupersetUnavailable(Exception):
    """The machine cannot make the virtualenv (no Python 3.11): skip, not fail."""


@dataclass
class SupersetVenv:
    """A ready virtualenv and what preparing it took.

    Attributes:
        path: The virtualenv's folder.
        cold: Whether it was made from nothing in this run.
        seconds: Wall time of the preparation, by step.
        resolved: What the dry-run resolve would have installed
            (``name==version``); with a warm cache, only this package.
    """

    path: Path
    cold: bool
    seconds: dict[str, float] = field(default_factory=dict)
    resolved: list[str] = field(default_factory=list)

    @property
    def python(self) -> Path:
        """The virtualenv's interpreter."""
        return self.path / "bin" / "python"

    @property
    def superset(self) -> Path:
        """Superset's command line script."""
        return self.path / "bin" / "superset"


def cache_key() -> str:
    """Hash of what the cached virtualenv is made from, for its folder name."""
    text = "\n".join(PINS) + f"\npython{PYTHON_VERSION}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def venv_path() -> Path:
    """Where the cached virtualenv lives."""
    override = os.environ.get("TRINITY_SUPERSET_VENV")
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "trinity-dbapi" / f"superset-venv-{cache_key()}"


def find_python() -> str:
    """The Python 3.11 interpreter to make the virtualenv with.

    Raises:
        SupersetUnavailable: There is none on PATH nor under pyenv.
    """
    candidates = []
    found = shutil.which(f"python{PYTHON_VERSION}")
    if found:
        candidates.append(found)
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run(
            [pyenv, "prefix", PYTHON_VERSION],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if done.returncode == 0 and done.stdout.strip():
            candidates.append(str(Path(done.stdout.strip()) / "bin" / "python3"))
    for candidate in candidates:
        probe = subprocess.run(
            [candidate, "-c", "import sys, venv, ensurepip; print(sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if (
            probe.returncode == 0
            and probe.stdout.strip() == f"({PYTHON_VERSION.replace('.', ', ')})"
        ):
            return candidate
    raise SupersetUnavailable(
        f"Superset 6.1 needs Python {PYTHON_VERSION} for its virtualenv and none was found "
        f"(tried python{PYTHON_VERSION} on PATH and `pyenv prefix {PYTHON_VERSION}`)"
    )


def source_copy(dest: Path, source: Path | None = None) -> Path:
    """Copy the files a wheel is built from, so pip's build leaves the checkout alone.

    Args:
        dest: An empty folder to copy into.
        source: The tree to copy; the checkout under test unless
            ``TRINITY_SUPERSET_SOURCE`` names another (for development only).

    Returns:
        ``dest``.
    """
    source = source or Path(os.environ.get("TRINITY_SUPERSET_SOURCE") or ROOT)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    dest.mkdir(parents=True, exist_ok=True)
    for item in _SOURCE_ITEMS:
        origin = source / item
        if origin.is_dir():
            shutil.copytree(origin, dest / item, ignore=ignore)
        else:
            shutil.copy2(origin, dest / item)
    return dest


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock next to the virtualenv (two sessions, one cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment for the virtualenv's processes.

    Without ``PYTHONPATH`` (the test session may put the checkout first on it,
    which would shadow the installed copy and its older dependencies' view).
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(python), "-m", "pip", *args],
        env=clean_env(),
        cwd=python.parent,  # not the checkout: its folder would shadow site-packages
        capture_output=True,
        text=True,
        check=False,
        timeout=_PIP_TIMEOUT,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"pip {' '.join(args)} failed ({done.returncode}):\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return done


def _would_install(python: Path, source: Path) -> list[str]:
    """Resolve the user's install command without installing: ``name==version`` items."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        _pip(python, "install", "--dry-run", "--report", str(report), *PINS, str(source))
        items = json.loads(report.read_text())["install"]
    return sorted(f"{i['metadata']['name']}=={i['metadata']['version']}" for i in items)


def prepare() -> SupersetVenv:
    """Make or refresh the cached virtualenv and install the checkout into it.

    Returns:
        The ready virtualenv.

    Raises:
        SupersetUnavailable: No Python 3.11 on this machine.
        RuntimeError: pip failed, for instance because the user's install
            command does not resolve (a test failure, not a skip).
    """
    path = venv_path()
    marker = path / ".trinity-complete"
    seconds: dict[str, float] = {}
    with _locked(path), tempfile.TemporaryDirectory(prefix="trinity-ss-src-") as tmp:
        source = source_copy(Path(tmp) / "trinity-dbapi")
        # A cache whose interpreter went away (a Python upgrade) is made again.
        cold = not marker.exists() or not (path / "bin" / "python").exists()
        if cold:
            python = find_python()
            start = time.monotonic()
            shutil.rmtree(path, ignore_errors=True)  # a half-made one from a killed run
            subprocess.run([python, "-m", "venv", str(path)], check=True, timeout=300)
            venv = SupersetVenv(path, cold=True, seconds=seconds)
            # A first install of exactly the command docs/superset.md gives.
            _pip(venv.python, "install", *PINS, str(source))
            marker.write_text(" ".join(PINS) + "\n")
            seconds["cold install"] = time.monotonic() - start
        venv = SupersetVenv(path, cold=cold, seconds=seconds)
        start = time.monotonic()
        venv.resolved = _would_install(venv.python, source)
        seconds["resolve"] = time.monotonic() - start
        missing = [item for item in venv.resolved if not item.startswith("trinity-dbapi==")]
        if missing:
            start = time.monotonic()
            _pip(venv.python, "install", *PINS, str(source))
            seconds["new dependencies"] = time.monotonic() - start
        start = time.monotonic()
        _pip(venv.python, "install", "--no-deps", "--force-reinstall", str(source))
        _pip(venv.python, "check")
        seconds["reinstall"] = time.monotonic() - start
    return venv
