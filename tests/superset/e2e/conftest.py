"""Fixtures of the Superset end-to-end test: a virtualenv, a lakehouse, a server, a browser.

Fixtures (all session-scoped, so Superset starts once):
    superset_venv: the cached virtualenv with Superset 6.1 and this checkout
        (tests/superset/e2e/venv.py); skips where no Python 3.11 exists.
    lake: a lakehouse made through the driver of the test session.
    superset: a Superset web server on 127.0.0.1, with a fresh SQLite metadata
        database (``superset db upgrade``, ``fab create-admin``, ``init``);
        stopped at the end of the session.
    api: a logged-in REST client of that server (JWT and CSRF token).
    chromium: the paths of Debian's ``chromium`` and ``chromedriver``,
        installed with apt-get when absent; skips where apt-get is not there.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import trinity_dbapi
from tests.superset.e2e import venv as venv_mod

USERNAME = "admin"
PASSWORD = "trinity-e2e-password"

#: The orders of the lakehouse: (id, day, ts, amount, customer). The first two
#: are one version, the last two the next, so time travel has something to see.
FIRST_ORDERS = [
    (1, "2026-03-01", "2026-03-01 09:15:00+00", "12.50", "ada"),
    (2, "2026-03-01", "2026-03-01 17:40:00+00", "7.25", "bob"),
]
LATER_ORDERS = [
    (3, "2026-03-02", "2026-03-02 08:00:00+00", "30.00", "ada"),
    (4, "2026-03-03", "2026-03-03 23:59:59+00", "0.75", "cy"),
]

_SERVER_START_TIMEOUT = 120
_CLI_TIMEOUT = 600


@dataclass(frozen=True)
class Lake:
    """The lakehouse Superset is pointed at.

    Attributes:
        path: Its folder (absolute).
        first_version: The lakehouse version right after the first insert.
        uri: Its SQLAlchemy URI.
    """

    path: Path
    first_version: int

    @property
    def uri(self) -> str:
        """``trinity:///`` followed by the absolute path."""
        return f"trinity:///{self.path}"

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` run through this checkout's driver (the expected answer)."""
        with trinity_dbapi.connect(str(self.path), read_only=True) as conn:
            return [tuple(row) for row in conn.cursor().execute(sql).fetchall()]


def _values(rows: list[tuple[Any, ...]]) -> str:
    return ", ".join(
        f"({i}, DATE '{d}', TIMESTAMPTZ '{ts}', {a}, '{c}')" for i, d, ts, a, c in rows
    )


@pytest.fixture(scope="session")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    path = tmp_path_factory.mktemp("superset") / "lake"
    with trinity_dbapi.connect(str(path), autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE NAMESPACE sales")
        cur.execute("CREATE NAMESPACE lab")  # where SQL Lab may write
        cur.execute(
            "CREATE TABLE sales.orders (id INT8, day DATE, ts TIMESTAMPTZ,"
            " amount DECIMAL(10, 2), customer VARCHAR, PRIMARY KEY (id))"
            " PARTITIONED BY (day) COMMENT 'One row per order'"
        )
        cur.execute("CREATE TABLE sales.scratch (x INT8)")
        cur.execute(f"INSERT INTO sales.orders VALUES {_values(FIRST_ORDERS)}")
        first = cur.execute("SELECT max(version) FROM system.versions").fetchone()[0]
        cur.execute(f"INSERT INTO sales.orders VALUES {_values(LATER_ORDERS)}")
    return Lake(path=path, first_version=int(first))


@pytest.fixture(scope="session")
def superset_venv() -> venv_mod.SupersetVenv:
    try:
        return venv_mod.prepare()
    except venv_mod.SupersetUnavailable as exc:
        pytest.skip(str(exc))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A running Superset web server.

    Attributes:
        base: Its URL, ``http://127.0.0.1:PORT``.
        log: The file its output goes to.
        home: Its folder (config, metadata database, log).
        env: The environment its commands run with.
    """

    base: str
    log: Path
    home: Path
    env: dict[str, str]

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the server's output, for failure messages."""
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-chars:]
        return ""


def _superset_cli(venv: venv_mod.SupersetVenv, env: dict[str, str], home: Path, *args: str) -> None:
    done = subprocess.run(
        [str(venv.superset), *args],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        check=False,
        timeout=_CLI_TIMEOUT,
    )
    assert done.returncode == 0, (
        f"superset {' '.join(args)} failed ({done.returncode}):\n"
        f"{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    )


@pytest.fixture(scope="session")
def superset(
    superset_venv: venv_mod.SupersetVenv, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("superset-home")
    config = home / "superset_config.py"
    config.write_text(
        f"SECRET_KEY = {os.urandom(24).hex()!r}\n"
        f"SQLALCHEMY_DATABASE_URI = {'sqlite:///' + str(home / 'superset.db')!r}\n"
        f"DATA_DIR = {str(home)!r}\n"
        "WTF_CSRF_ENABLED = True\n"  # the default: the REST client must send the token
        "TALISMAN_ENABLED = False\n"
        "FEATURE_FLAGS = {}\n"
    )
    env = venv_mod.clean_env(SUPERSET_CONFIG_PATH=str(config), SUPERSET_HOME=str(home))
    _superset_cli(superset_venv, env, home, "db", "upgrade")
    _superset_cli(
        superset_venv, env, home,
        "fab", "create-admin", "--username", USERNAME, "--firstname", "Ada",
        "--lastname", "Lake", "--email", "ada@example.com", "--password", PASSWORD,
    )  # fmt: skip
    _superset_cli(superset_venv, env, home, "init")
    port = _free_port()
    log = home / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                str(superset_venv.superset),
                "run",
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "--with-threads",
            ],
            env=env,
            cwd=home,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the finalizer stops all of it
        )
    server = Server(base=f"http://127.0.0.1:{port}", log=log, home=home, env=env)
    try:
        _wait_healthy(server, process)
        yield server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)


def _wait_healthy(server: Server, process: subprocess.Popen[bytes]) -> None:
    import requests

    deadline = time.monotonic() + _SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"superset run exited with {process.returncode}:\n{server.log_tail()}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(server.base + "/health", timeout=2).text == "OK":
                return
        time.sleep(0.5)
    pytest.fail(
        f"superset run did not answer /health in {_SERVER_START_TIMEOUT} s:\n{server.log_tail()}"
    )


class Api:
    """A logged-in client of Superset's REST API that checks every status."""

    def __init__(self, server: Server) -> None:
        import requests

        self.server = server
        self.session = requests.Session()
        login = self.session.post(
            server.base + "/api/v1/security/login",
            json={"username": USERNAME, "password": PASSWORD, "provider": "db", "refresh": True},
            timeout=60,
        )
        assert login.status_code == 200, login.text
        self.session.headers["Authorization"] = "Bearer " + login.json()["access_token"]
        # Superset keeps CSRF protection on for the API's POST and PUT calls: the
        # token, the session cookie it belongs to (kept by the Session) and a Referer.
        token = self.call("GET", "/api/v1/security/csrf_token/")["result"]
        self.session.headers["X-CSRFToken"] = token
        self.session.headers["Referer"] = server.base + "/"

    def call(self, method: str, path: str, expect: int | None = 200, **kwargs: Any) -> Any:
        """Send a request; its JSON answer, after checking the status is ``expect``.

        ``expect=None`` takes any error status (4xx or 5xx).
        """
        response = self.session.request(method, self.server.base + path, timeout=120, **kwargs)
        ok = response.status_code >= 400 if expect is None else response.status_code == expect
        if not ok:
            pytest.fail(
                f"{method} {path} answered {response.status_code}, not {expect}:\n"
                f"{response.text[:3000]}\n--- server log ---\n{self.server.log_tail()}"
            )
        return response.json()

    def get(self, path: str, **kwargs: Any) -> Any:
        """``call("GET", path)``."""
        return self.call("GET", path, **kwargs)

    def post(self, path: str, payload: dict[str, Any], expect: int | None = 200) -> Any:
        """``call("POST", path)`` with a JSON body."""
        return self.call("POST", path, expect=expect, json=payload)


@pytest.fixture(scope="session")
def api(superset: Server) -> Api:
    return Api(superset)


@pytest.fixture(scope="session")
def chromium() -> dict[str, str]:
    """Debian's chromium and chromedriver, installed with apt-get when absent."""
    paths = {"chromium": shutil.which("chromium"), "chromedriver": shutil.which("chromedriver")}
    if all(paths.values()):
        return {k: str(v) for k, v in paths.items()}
    apt = shutil.which("apt-get")
    if apt is None:
        pytest.skip("headless Chromium is not installed and there is no apt-get to install it")
    if os.geteuid() != 0:
        pytest.skip("headless Chromium is not installed and apt-get needs root to install it")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for args in (
        ["update"],
        ["install", "-y", "--no-install-recommends", "chromium", "chromium-driver"],
    ):
        done = subprocess.run(
            [apt, *args], env=env, capture_output=True, text=True, check=False, timeout=1200
        )
        assert done.returncode == 0, (
            f"apt-get {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    paths = {"chromium": shutil.which("chromium"), "chromedriver": shutil.which("chromedriver")}
    assert all(paths.values()), f"apt-get installed chromium, yet these are missing: {paths}"
    return {k: str(v) for k, v in paths.items()}


def epoch_ms(moment: datetime) -> int:
    """Milliseconds since the epoch of an aware datetime: how Superset's JSON gives times."""
    return round(moment.timestamp() * 1000)


def as_decimal(number: Any) -> Decimal:
    """A JSON number as the Decimal it prints as (12.5 -> Decimal('12.5'))."""
    return Decimal(str(number))


def dumps(value: Any) -> str:
    """JSON text, for the ``params`` and ``query_context`` fields Superset takes as strings."""
    return json.dumps(value)
