"""The cached virtualenv Kartothek 5.3.0 runs in (Python 3.9 from pyenv).

Kartothek's last release needs Python 3.9 with pyarrow 6, pandas 1.3, NumPy
1.21 and dask 2021.9, none of which the test session's environment can hold.
Its virtualenv is made once, from wheels only, with the machine's pyenv
Python :data:`PYTHON_VERSION`, and cached outside the checkout in
``~/.cache/trinity-dbapi/kartothek-venv-<hash of PINS and the Python>``
(``TRINITY_KARTOTHEK_VENV`` overrides the path). It holds only Kartothek and
its dependencies: Kartothek reads our files, never our code.

A cold cache costs about 15 s (31 wheels); a warm one a probe of the interpreter.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

#: Kartothek 5.3.0 and the newest releases of its dependencies that still
#: support it and install from wheels on Python 3.9 (checked with
#: ``pip install --only-binary=:all:``); the rest resolves from Kartothek's own
#: requirements (simplekv, storefact, msgpack, zstandard, ...).
PINS = (
    "kartothek==5.3.0",
    "pyarrow==6.0.1",
    "pandas==1.3.5",
    "numpy==1.21.6",
    "dask[dataframe]==2021.9.1",
)

#: The pyenv Python the virtualenv is made with.
PYTHON_VERSION = "3.9.18"

_PIP_TIMEOUT = 900


class KartothekUnavailable(Exception):
    """The machine has no Python 3.9.18 under pyenv: skip, not fail."""


def cache_key() -> str:
    """Hash of what the cached virtualenv is made from, for its folder name."""
    text = "\n".join(PINS) + f"\npython{PYTHON_VERSION}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def venv_path() -> Path:
    """Where the cached virtualenv lives."""
    override = os.environ.get("TRINITY_KARTOTHEK_VENV")
    if override:
        return Path(override)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "trinity-dbapi" / f"kartothek-venv-{cache_key()}"


def find_python() -> str:
    """The pyenv Python 3.9.18 interpreter.

    Raises:
        KartothekUnavailable: that Python is absent (neither `pyenv prefix`
            nor ``$PYENV_ROOT/versions/3.9.18`` finds it).
    """
    pyenv = shutil.which("pyenv")
    if pyenv is None:
        # pyenv installed but not on PATH (a non-interactive shell): its usual place.
        root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
        python = root / "versions" / PYTHON_VERSION / "bin" / "python3"
        if python.exists():
            return str(python)
        raise KartothekUnavailable(
            f"Kartothek 5.3.0 needs Python 3.9; this test makes its virtualenv with pyenv's "
            f"{PYTHON_VERSION} and there is no pyenv on PATH"
        )
    done = subprocess.run(
        [pyenv, "prefix", PYTHON_VERSION], capture_output=True, text=True, check=False, timeout=60
    )
    python = Path(done.stdout.strip()) / "bin" / "python3"
    if done.returncode != 0 or not done.stdout.strip() or not python.exists():
        raise KartothekUnavailable(
            f"Kartothek 5.3.0 needs Python 3.9; `pyenv prefix {PYTHON_VERSION}` finds no "
            f"interpreter ({done.stderr.strip() or 'no output'}); install it with "
            f"`pyenv install {PYTHON_VERSION}`"
        )
    return str(python)


def ensure_venv() -> Path:
    """The virtualenv's interpreter, making the virtualenv first if it is not cached.

    Made in a temporary folder beside the final one and renamed into place
    under a lock, so a killed run never leaves a half-made cache behind.

    Raises:
        KartothekUnavailable: no Python 3.9.18 (see :func:`find_python`).
        subprocess.CalledProcessError: pip failed (its output is in the error).
    """
    path = venv_path()
    python = path / "bin" / "python"
    if python.exists():
        return python
    base = find_python()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists():  # another run made it while we waited
            return python
        work = Path(tempfile.mkdtemp(prefix=f"{path.name}.", dir=path.parent))
        try:
            subprocess.run([base, "-m", "venv", str(work)], check=True, timeout=300)
            subprocess.run(
                [
                    str(work / "bin" / "python"),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--only-binary=:all:",
                    *PINS,
                ],
                check=True,
                capture_output=True,
                text=True,
                timeout=_PIP_TIMEOUT,
            )
            # Only bin/python is ever run (a link finding the virtualenv by its
            # own location), so the scripts' stale shebangs do not matter.
            work.rename(path)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return python
