"""HTTP faults between a client and its object store: each commit lands once or not at all.

Every store (S3 on moto, GCS on fake-gcs-server, Azure on Azurite) is reached
through its own :class:`~tests.fault_proxy.FaultProxy`; a statement
``INSERT INTO ns.t VALUES (<n>)`` runs through the proxy while one rule
faults one kind of write of that commit:

* ``fail_before``: a 503 answered before the write reaches the store (the
  root node file's conditional create, or the table's Parquet data file).
* ``drop_after``: the store carries out the write, the reply is lost (the
  connection is closed without an answer).
* ``status_after``: the store carries out the write, the client is told 500
  (the root's create, or the latest-version hint written right after it).

Each fault fires once (the client's retry goes through) or on every attempt
(the client gives up; when the root's create had taken effect, the lakehouse
reads the root back, finds its own bytes and the commit succeeds). One more case loses the root's reply and then fails
every attempt of the read that would tell the lakehouse whether the root
that "already exists" is its own. Whatever happens, afterwards the version is
exactly one higher (or unchanged when the statement failed before the commit
point), the table holds the row once (or not at all), there is one root node
file per version, a second connection straight to the emulator sees the same,
and a later commit through the proxy works. A statement that fails raises a
:class:`~trinity_dbapi.errors.StorageError` (a PEP 249 ``OperationalError``):
never an ``InternalError``, nor a conflict's "nothing was committed" for a
version that is in. Each test also checks that its fault fired, as often as
the client's retries predict.

The clients' waits between retries are shortened here (:func:`quick_backoff`),
never their number: the Azure SDK waits about 1.75 s before its first retry
(the storage's ``RETRY_BACKOFF``; 15 s by its own default) and gcsfs 1 to 2 s.
"""

from __future__ import annotations

import asyncio
import http.client
import itertools
import json
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Literal

import pytest

import trinity_dbapi
from tests.conftest import CLOUD_PARAMS, create_bucket, s3_options
from tests.fault_proxy import Action, FaultProxy, Request, Rule
from trinity_dbapi.errors import Error, StorageError
from trinity_dbapi.format.paths import root_node_file_name, root_node_version
from trinity_dbapi.lakehouse import Lakehouse
from trinity_dbapi.storage import open_storage

#: Times enough for a fault to outlast every retry of every client.
ALWAYS = 1000

#: Attempts each client makes at one request that never succeeds (the first and
#: its retries): botocore's legacy mode tries 5 times in all; gcsfs's
#: ``retry_request`` 6 times; the Azure SDK's ``ExponentialRetry`` 1 + 3.
ATTEMPTS = {"s3": 5, "gcs": 6, "azure": 4}


def attempts(kind: str, status: int) -> int:
    """How often a client tries a request that is answered ``status`` every time.

    S3's 503 is ``SlowDown``, which s3fs retries itself too: 5 botocore calls.
    """
    return ATTEMPTS[kind] * (5 if kind == "s3" and status == 503 else 1)


#: How many times more a lost reply may be tried: s3fs tries a botocore call
#: that ended in a connection error 5 times, and aiohttp sends an idempotent
#: request (PUT, not GCS's POST) once more when a kept-alive connection it
#: reused closes without a reply (which connection it reuses varies).
DROPS = {"s3": 5 * 2, "gcs": 1, "azure": 2}

#: What each store answers a conditional create whose object exists.
EXISTS = {"s3": 412, "gcs": 412, "azure": 409}

_values = itertools.count(1)


@dataclass
class Store:
    """A lakehouse on one emulator, reached through a fault proxy (and directly)."""

    kind: Literal["s3", "gcs", "azure"]
    proxy: FaultProxy
    uri: str
    options: dict[str, Any]  # through the proxy
    direct: dict[str, Any]  # to the emulator itself


@dataclass(frozen=True)
class State:
    """What a fresh connection straight to the emulator sees."""

    latest: int
    rows: list[int]
    roots: int


def _make_store(request: pytest.FixtureRequest, kind: Literal["s3", "gcs", "azure"]) -> Store:
    from tests import emulators

    options: Callable[[str], dict[str, Any]]
    if kind == "s3":
        endpoint = request.getfixturevalue("moto_server")
        bucket, scheme, options = create_bucket(endpoint), "s3", s3_options
    elif kind == "gcs":
        endpoint = request.getfixturevalue("gcs_server")
        bucket, scheme, options = emulators.create_gcs_bucket(endpoint), "gs", emulators.gcs_options
    else:
        endpoint = request.getfixturevalue("azure_server")
        bucket = emulators.create_azure_container(endpoint)
        scheme, options = "abfs", emulators.azure_options
    proxy = FaultProxy(endpoint)
    return Store(
        kind, proxy, f"{scheme}://{bucket}/lake", options(proxy.endpoint), options(endpoint)
    )


@pytest.fixture(scope="module", params=CLOUD_PARAMS)
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    """A lakehouse with ``ns.t`` holding one row, made through a proxy that faults nothing yet."""
    made = _make_store(request, request.param)
    try:
        with trinity_dbapi.connect(made.uri, storage_options=made.options, autocommit=True) as con:
            cursor = con.cursor()
            cursor.execute("CREATE NAMESPACE ns")
            cursor.execute("CREATE TABLE ns.t (id INT8)")
            cursor.execute("INSERT INTO ns.t VALUES (0)")
        yield made
    finally:
        made.proxy.stop()


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shorten the clients' waits between retries; how often they retry stays theirs.

    Azure: ``ExponentialRetry`` waits 15 s, then 18 s, then 24 s (adlfs makes
    the service client, passing no retry settings through). gcsfs sleeps
    ``1 + 2**(n-1)`` s plus jitter before retry ``n`` (its count is fixed when
    its class is made). botocore's waits (under a second, then doubling) are
    shortened the same way, so every test runs in about a second.
    """
    from aiobotocore.endpoint import AioEndpoint
    from azure.storage.blob._shared import policies_async
    from gcsfs import retry

    real_sleep = asyncio.sleep

    class _Asyncio:
        @staticmethod
        def sleep(seconds: float) -> Awaitable[None]:
            return real_sleep(min(seconds, 0.01))

    monkeypatch.setattr(policies_async.ExponentialRetry, "get_backoff_time", lambda *_: 0.01)
    monkeypatch.setattr(retry, "asyncio", _Asyncio)

    async def botocore_sleep(_: AioEndpoint, seconds: float) -> None:
        await real_sleep(min(seconds, 0.01))

    monkeypatch.setattr(AioEndpoint, "_sleep", botocore_sleep)


@pytest.fixture
def clean_store(store: Store) -> Iterator[Store]:
    """``store`` with no rule armed and no request logged yet."""
    store.proxy.disarm()
    store.proxy.clear_log()
    yield store
    store.proxy.disarm()


# -- what a request is about, as each store says it ----------------------------------------


def object_name(kind: str, request: Request) -> str | None:
    """The path under the lake's root that ``request`` writes or reads whole; else None."""
    path = urllib.parse.unquote(urllib.parse.urlsplit(request.target).path)
    if kind == "gcs":
        if request.method == "GET" and path.startswith("/download/"):
            key: str | None = path.split("/o/", 1)[1]  # /download/storage/v1/b/<bucket>/o/<key>
        elif request.method == "POST" and path.startswith("/upload/"):
            # An upload names its object in the JSON part of the multipart body.
            found = re.search(rb'"name":\s*("(?:[^"\\]|\\.)*")', request.body[:4096])
            key = json.loads(found.group(1)) if found else None
        else:
            return None
    elif request.method in ("PUT", "GET"):
        parts = path.lstrip("/").split("/")  # Azure: account, container, key; S3: bucket, key
        key = "/".join(parts[2:] if kind == "azure" else parts[1:])
    else:
        return None
    return key.removeprefix("lake/") if key and key.startswith("lake/") else None


def conditional(kind: str, request: Request) -> bool:
    """Whether ``request`` is a create-if-absent (what a commit's files are written with)."""
    if kind == "gcs":
        return "ifGenerationMatch=0" in request.target
    return request.headers.get("if-none-match") == "*"


def store_error(kind: str, status: int) -> tuple[bytes, tuple[tuple[str, str], ...]]:
    """A store's own error reply for ``status``, body and headers, as its client reads it."""
    message = "fault injected by the test proxy"
    if kind == "gcs":  # no "invalid" in it: gcsfs would take that for a bad request
        body = json.dumps({"error": {"code": status, "message": message}}).encode()
        return body, (("Content-Type", "application/json"),)
    codes = {
        "s3": {503: "SlowDown", 500: "InternalError"},
        "azure": {503: "ServerBusy", 500: "InternalError"},
    }
    code = codes[kind][status]
    body = f"<Error><Code>{code}</Code><Message>{message}</Message></Error>".encode()
    headers = (("Content-Type", "application/xml"),)
    return body, headers + ((("x-ms-error-code", code),) if kind == "azure" else ())


# -- the faults -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One fault on one write of a commit and what must come of it."""

    write: Literal["root", "data", "hint"]
    action: Action
    status: int  # of the faulty reply (none for drop_after)
    times: int
    raises: bool  # the statement fails
    committed: bool  # the version is in anyway
    #: The root's read-back (after "exists") fails too, on every attempt the client makes.
    read_back_fails: bool = False

    def rule(self, store: Store, version: int) -> Rule:
        """The fault on the write."""
        names = {
            "root": re.escape(root_node_file_name(version)),
            "data": r"[0-9a-f-]{36}/table/[0-9a-f-]{36}\.parquet",
            "hint": r"_latest_hint\.txt",
        }
        name_re = re.compile(names[self.write])
        creates = self.write != "hint"  # the hint is overwritten, everything else created
        kind = store.kind

        def when(request: Request) -> bool:
            name = object_name(kind, request)
            return (
                name is not None
                and name_re.fullmatch(name) is not None
                and conditional(kind, request) == creates
            )

        body, headers = store_error(kind, self.status) if self.status else (b"", ())
        method = "POST" if kind == "gcs" else "PUT"
        return Rule(method, "", self.action, self.status, self.times, when, body, headers)

    def read_rule(self, store: Store, version: int) -> Rule:
        """A 503 on every attempt of one whole read of root ``version``."""
        kind, name = store.kind, root_node_file_name(version)
        body, headers = store_error(kind, 503)

        def when(request: Request) -> bool:
            return object_name(kind, request) == name

        return Rule("GET", "", "fail_before", 503, attempts(kind, 503), when, body, headers)


CASES = {
    # (a) nothing reached the store: the client's retry succeeds, or it gives up.
    "503-before-root": Case("root", "fail_before", 503, 1, raises=False, committed=True),
    "503-before-data": Case("data", "fail_before", 503, 1, raises=False, committed=True),
    "503-before-root-always": Case(
        "root", "fail_before", 503, ALWAYS, raises=True, committed=False
    ),
    "503-before-data-always": Case(
        "data", "fail_before", 503, ALWAYS, raises=True, committed=False
    ),
    # (b) the root was created, its reply lost: the retry meets "exists", and the
    # lakehouse knows its own root; when every reply is lost, the client gives up
    # and the lakehouse reads the root back: its own, so the commit succeeds;
    # when the root cannot be read back to tell, an error, the version in.
    "lost-root-reply": Case("root", "drop_after", 0, 1, raises=False, committed=True),
    "lost-data-reply": Case("data", "drop_after", 0, 1, raises=False, committed=True),
    "lost-root-reply-always": Case("root", "drop_after", 0, ALWAYS, raises=False, committed=True),
    "lost-root-reply-unreadable": Case(
        "root", "drop_after", 0, 1, raises=True, committed=True, read_back_fails=True
    ),
    # (c) a 500 after the write took effect: on the root, then on the hint written after it.
    "500-after-root": Case("root", "status_after", 500, 1, raises=False, committed=True),
    "500-after-root-always": Case(
        "root", "status_after", 500, ALWAYS, raises=False, committed=True
    ),
    "500-after-hint": Case("hint", "status_after", 500, 1, raises=False, committed=True),
    "500-after-hint-always": Case(
        "hint", "status_after", 500, ALWAYS, raises=False, committed=True
    ),
}


def state(store: Store) -> State:
    """The latest version, the table's rows and the count of root node files, asked of the
    emulator itself (not through the proxy) by a new connection."""
    latest = Lakehouse.open(store.uri, storage_options=store.direct).latest_version()
    with trinity_dbapi.connect(
        store.uri, storage_options=store.direct, create=False, autocommit=True
    ) as con:
        rows = _rows(con)
    storage = open_storage(store.uri, storage_options=store.direct)
    try:
        roots = sum(root_node_version(name) is not None for name in storage.list("_"))
    finally:
        storage.close()
    return State(latest, rows, roots)


def _rows(con: trinity_dbapi.Connection) -> list[int]:
    cursor = con.cursor()
    cursor.execute("SELECT id FROM ns.t ORDER BY id")
    return [row[0] for row in cursor.fetchall()]


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_fault_commits_once_or_not_at_all(clean_store: Store, case: Case) -> None:
    store = clean_store
    before = state(store)
    assert before.roots == before.latest + 1
    value = next(_values)
    with trinity_dbapi.connect(store.uri, storage_options=store.options, autocommit=True) as con:
        assert _rows(con) == before.rows  # opened before the fault is armed
        rule = store.proxy.arm(case.rule(store, before.latest + 1))
        if case.read_back_fails:
            reading = store.proxy.arm(case.read_rule(store, before.latest + 1))
        error: Error | None = None
        started = time.monotonic()
        try:
            con.cursor().execute(f"INSERT INTO ns.t VALUES ({value})")
        except Error as exc:
            error = exc
        took = time.monotonic() - started
        store.proxy.disarm()
        tries = [seen for seen in store.proxy.seen if rule.matches(seen.request)]

        # The fault fired, as often as the client tried the write.
        faulted = [seen for seen in store.proxy.faulted if seen.rule is rule]
        assert rule.fired == len(faulted) == len(tries) - (case.times == 1), tries
        if case.times == 1:
            # One retry, and it went through: "exists" when the faulted create
            # had taken effect, the write's own success otherwise.
            assert rule.fired == 1 and len(tries) == 2, tries
            retry = tries[1].status
            if case.action != "fail_before" and case.write != "hint":
                assert retry == EXISTS[store.kind], tries
            else:
                assert retry is not None and 200 <= retry < 300, tries
        elif case.action == "drop_after":
            assert ATTEMPTS[store.kind] <= rule.fired <= ATTEMPTS[store.kind] * DROPS[store.kind]
        else:
            assert rule.fired == attempts(store.kind, case.status)

        if case.raises:
            # A storage error, never "nothing was committed" (a conflict) nor a
            # misuse, and no InternalError.
            assert error is not None, "the statement succeeded although it could not have"
            assert isinstance(error, StorageError), f"{type(error).__name__}: {error}"
        else:
            assert error is None, f"{type(error).__name__}: {error}"
        if case.read_back_fails:
            assert reading.fired == attempts(store.kind, 503)  # one read's every attempt
            assert "may have been made" in str(error)
        assert took < 15, took  # no client waited out its real backoff

        # Exactly one new version holding the row, or none; one root per version.
        after = state(store)
        added = int(case.committed)
        assert after.latest == before.latest + added
        assert after.rows == sorted(before.rows + [value] * added)
        assert after.roots == after.latest + 1
        # The connection that met the fault sees the same, and commits again.
        assert _rows(con) == after.rows
        later = next(_values)
        con.cursor().execute(f"INSERT INTO ns.t VALUES ({later})")
        assert _rows(con) == sorted([*after.rows, later])
    final = state(store)
    assert final.latest == after.latest + 1
    assert final.rows == sorted([*after.rows, later])
    assert final.roots == final.latest + 1


class _Blobs(BaseHTTPRequestHandler):
    """A store in a dict, to test the proxy alone: PUT keeps a body, GET and HEAD give it."""

    protocol_version = "HTTP/1.1"
    blobs: ClassVar[dict[str, bytes]] = {}

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_PUT(self) -> None:
        self.blobs[self.path] = self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(201, b"")

    def do_GET(self) -> None:
        self._answer(200, self.blobs[self.path])

    def do_HEAD(self) -> None:
        self._answer(200, self.blobs[self.path])

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


def test_proxy_relays_chunked_bodies_on_kept_alive_connections() -> None:
    """The proxy itself: a chunked 3 MiB body after ``Expect: 100-continue``, then a
    fault and a normal request on the same connection; a dropped reply closes it."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Blobs)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    proxy = FaultProxy(f"http://127.0.0.1:{upstream.server_address[1]}")
    try:
        host, port = urllib.parse.urlsplit(proxy.endpoint).netloc.split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        body = os.urandom(3 * 2**20 + 5)
        chunks = (body[i : i + 2**16] for i in range(0, len(body), 2**16))
        connection.request("PUT", "/b/big", chunks, {"Expect": "100-continue"}, encode_chunked=True)
        reply = connection.getresponse()
        assert (reply.status, reply.read()) == (201, b"")
        failing = proxy.arm(Rule("GET", r"/big$", "fail_before", status=503, body=b"busy"))
        for status, content in ((503, b"busy"), (200, body)):  # one connection throughout
            connection.request("GET", "/b/big")
            reply = connection.getresponse()
            assert (reply.status, reply.read()) == (status, content)
        connection.request("HEAD", "/b/big")
        reply = connection.getresponse()
        assert (reply.status, reply.getheader("Content-Length"), reply.read()) == (
            200,
            str(len(body)),
            b"",
        )
        dropping = proxy.arm(Rule("PUT", r"/big$", "drop_after"))
        connection.request("PUT", "/b/big", b"new")
        with pytest.raises(http.client.RemoteDisconnected):
            connection.getresponse()
        connection.close()
        assert _Blobs.blobs["/b/big"] == b"new"  # carried out, though nobody heard
        assert (failing.fired, dropping.fired) == (1, 1)
        assert [(seen.method, seen.status, seen.fault) for seen in proxy.seen] == [
            ("PUT", 201, None),
            ("GET", 503, "fail_before"),
            ("GET", 200, None),
            ("HEAD", 200, None),
            ("PUT", None, "drop_after"),
        ]
        assert proxy.seen[0].request.body == body
    finally:
        proxy.stop()
        upstream.shutdown()
        upstream.server_close()
