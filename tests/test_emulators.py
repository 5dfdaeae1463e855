"""The emulators' guards: CI cannot go green without them, nor with one that ignores preconditions.

A contributor's machine without an emulator skips its tests, saying why; CI
(``TRINITY_REQUIRE_EMULATORS=1``, exported by ``.ci/run`` before any leg)
fails them instead. And an emulator is trusted only once it has refused a
second conditional create: :func:`tests.emulators.prove_refuses_a_second_create`
is shown here to catch a store that overwrites.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tests import emulators
from trinity_dbapi.storage import open_storage

ROOT = Path(__file__).resolve().parent.parent


def _run_missing(tmp_path: Path, require: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_guard.py").write_text(
        textwrap.dedent(
            """
            from tests import emulators

            def test_needs_an_emulator():
                emulators.missing("the frobnicator emulator is not installed")
            """
        )
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    if require is not None:
        env["TRINITY_REQUIRE_EMULATORS"] = require
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"),
            *("--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path / "test_guard.py")),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_missing_emulator_skips_on_a_contributors_machine(tmp_path: Path) -> None:
    done = _run_missing(tmp_path, None)
    assert done.returncode == 0, done.stdout
    assert "1 skipped" in done.stdout
    assert "the frobnicator emulator is not installed" in done.stdout


def test_a_missing_emulator_fails_in_ci(tmp_path: Path) -> None:
    done = _run_missing(tmp_path, "1")
    assert done.returncode == 1, done.stdout
    assert "1 failed" in done.stdout
    assert "TRINITY_REQUIRE_EMULATORS=1" in done.stdout


def test_ci_requires_the_emulators_and_installs_what_azurite_needs() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    exported = script.index("export TRINITY_REQUIRE_EMULATORS=1")
    assert exported < script.index('leg "quickstart tests"')
    assert exported < script.index('leg "process campaigns"')
    assert "apt-get install -y -qq nodejs npm" in script


class _Overwriting:
    """A store that ignores the precondition: every create overwrites."""

    def __init__(self) -> None:
        self.storage = open_storage(f"memory://overwriting-{uuid.uuid4().hex}/probe")

    def create_exclusive(self, path: str, data: bytes) -> None:
        self.storage.write(path, data)

    def __getattr__(self, name: str) -> object:
        return getattr(self.storage, name)


def test_the_proof_refuses_an_emulator_that_ignores_preconditions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import trinity_dbapi.storage

    monkeypatch.setattr(trinity_dbapi.storage, "open_storage", lambda *a, **k: _Overwriting())
    with pytest.raises(RuntimeError, match="accepted a second conditional create"):
        emulators.prove_refuses_a_second_create("memory://x/probe", {}, "pretend emulator")


def test_the_proof_accepts_a_store_that_refuses() -> None:
    uri = f"memory://refusing-{uuid.uuid4().hex}/probe"
    emulators.prove_refuses_a_second_create(uri, {}, "memory store")
    assert open_storage(uri).list("") == []
