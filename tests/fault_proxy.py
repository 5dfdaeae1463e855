"""A fault-injecting HTTP/1.1 reverse proxy to put in front of a storage emulator.

Tests point a store's client at :attr:`FaultProxy.endpoint` and arm
:class:`Rule` objects; every request is forwarded to the emulator unless a
rule matches it, and then the rule decides what the client sees:

* ``fail_before``: the request never reaches the emulator; the client gets
  ``status`` (a 503 "slow down": nothing happened at the store).
* ``drop_after``: the emulator carries the request out, then the connection is
  closed without a reply (a response lost on the network after it took effect).
* ``status_after``: the emulator carries the request out, and the client gets
  ``status`` instead of the real reply (a 500 after the write happened).

Only the standard library: a :class:`http.server.ThreadingHTTPServer` whose
handler reads each request whole (``Content-Length`` or chunked, after
answering ``Expect: 100-continue``), so a rule can look at the body (GCS names
the object of an upload in it, not in the URL), and sends it upstream on a
fresh connection: an upstream connection kept alive could have been closed by
the emulator while idle, and sending a write again on a new one would be an
unplanned fault of the proxy's own. Client connections stay alive between
requests, as the clients expect of a store. An emulator that cannot be
reached is answered ``502``.
"""

from __future__ import annotations

import contextlib
import http.client
import re
import socket
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

__all__ = ["FaultProxy", "Request", "Rule", "Seen"]

Action = Literal["fail_before", "drop_after", "status_after"]

#: Headers that describe one hop, not the request: never forwarded as they are.
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "expect",  # answered here: the body is read before anything goes upstream
        "content-length",  # set again from the body actually forwarded
    }
)


@dataclass(frozen=True)
class Request:
    """One request as the proxy received it (the body de-chunked)."""

    method: str
    target: str  # path and query, as sent
    headers: dict[str, str]  # lower-case names (the last of repeated ones)
    body: bytes
    #: The headers as sent, repeats and case kept: what is forwarded.
    pairs: tuple[tuple[str, str], ...] = ()


@dataclass
class Rule:
    """Fault the first ``times`` requests that match ``method``, ``target`` and ``when``.

    ``target`` is a regular expression searched in the path and query;
    ``when`` may look at anything else (a header, the body).
    """

    method: str
    target: str
    action: Action
    status: int = 503
    times: int = 1
    when: Callable[[Request], bool] | None = None
    #: The faulty reply's body and headers (a store's own error document).
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    #: How many requests this rule faulted so far.
    fired: int = 0

    def matches(self, request: Request) -> bool:
        return (
            self.method.upper() == request.method
            and re.search(self.target, request.target) is not None
            and (self.when is None or self.when(request))
        )


@dataclass(frozen=True)
class Seen:
    """A request the proxy handled and what the client got: a status, or None (dropped)."""

    method: str
    target: str
    status: int | None
    fault: Action | None
    request: Request = field(compare=False, repr=False)
    rule: Rule | None = field(default=None, compare=False)


class FaultProxy:
    """A reverse proxy on a free port of 127.0.0.1 to ``upstream`` (``http://host:port[/path]``).

    :attr:`endpoint` is ``upstream`` with the proxy's address: the path
    (Azurite's ``/devstoreaccount1``) is kept, requests are forwarded verbatim.
    """

    def __init__(self, upstream: str) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        if parsed.scheme != "http" or parsed.hostname is None:
            raise ValueError(f"the proxy forwards plain http:// only, not {upstream!r}")
        self.upstream = (parsed.hostname, parsed.port or 80)
        self._rules: list[Rule] = []
        self._seen: list[Seen] = []
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self
        port = self._server.server_address[1]
        self.endpoint = urllib.parse.urlunsplit(
            ("http", f"127.0.0.1:{port}", parsed.path, "", "")
        ).rstrip("/")
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"fault-proxy-{port}", daemon=True
        )
        self._thread.start()

    def arm(self, rule: Rule) -> Rule:
        """Add ``rule`` (checked after the rules armed before it); return it."""
        with self._lock:
            self._rules.append(rule)
        return rule

    def disarm(self) -> None:
        """Remove every rule: from now on everything is forwarded."""
        with self._lock:
            self._rules.clear()

    @property
    def seen(self) -> list[Seen]:
        """Every request handled so far, in the order their replies were decided."""
        with self._lock:
            return list(self._seen)

    @property
    def faulted(self) -> list[Seen]:
        """The requests a rule faulted."""
        return [seen for seen in self.seen if seen.fault is not None]

    def clear_log(self) -> None:
        """Forget the requests seen so far (the rules and their counts stay)."""
        with self._lock:
            self._seen.clear()

    def stop(self) -> None:
        """Stop serving and close every client connection still open."""
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            # Handler threads block reading a kept-alive connection: end them.
            with contextlib.suppress(OSError):  # already closed by its client
                connection.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)

    # -- used by the handler ---------------------------------------------------

    def _take(self, request: Request) -> Rule | None:
        """The rule that faults ``request``, counted as fired; None to forward it."""
        with self._lock:
            for rule in self._rules:
                if rule.fired < rule.times and rule.matches(request):
                    rule.fired += 1
                    return rule
        return None

    def _record(self, request: Request, status: int | None, rule: Rule | None) -> None:
        with self._lock:
            fault = None if rule is None else rule.action
            self._seen.append(Seen(request.method, request.target, status, fault, request, rule))

    def _forward(self, request: Request) -> tuple[int, str, list[tuple[str, str]], bytes]:
        """Send ``request`` to the emulator on a new connection; its whole reply."""
        connection = http.client.HTTPConnection(*self.upstream, timeout=60)
        try:
            connection.putrequest(
                request.method, request.target, skip_host=True, skip_accept_encoding=True
            )
            for name, value in request.pairs:
                if name.lower() not in _HOP_BY_HOP:
                    connection.putheader(name, value)
            if request.body or request.method in ("PUT", "POST", "PATCH"):
                connection.putheader("Content-Length", str(len(request.body)))
            connection.endheaders(request.body or None)
            reply = connection.getresponse()
            body = reply.read()
            return reply.status, reply.reason, reply.getheaders(), body
        finally:
            connection.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a test's end never waits on a client that keeps its connection
    proxy: FaultProxy


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, and "100 Continue" where asked for
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.proxy._lock:
            self.server.proxy._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.proxy._lock:
            self.server.proxy._connections.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per request on stderr would drown a test's output

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline(1024).split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailers: nothing a store needs
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline(1024)  # the CRLF after each chunk
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _proxy(self) -> None:
        proxy = self.server.proxy
        request = Request(
            self.command,
            self.path,
            {name.lower(): value for name, value in self.headers.items()},
            self._read_body(),  # read whole even when failed: the connection stays usable
            tuple(self.headers.items()),
        )
        rule = proxy._take(request)
        if rule is not None and rule.action == "fail_before":
            proxy._record(request, rule.status, rule)
            self._reply(rule.status, "Injected Fault", list(rule.headers), rule.body)
            return
        try:
            status, reason, headers, body = proxy._forward(request)
        except (OSError, http.client.HTTPException) as exc:
            proxy._record(request, 502, None)
            self._reply(502, "Bad Gateway", [], f"upstream: {exc!r}".encode())
            return
        if rule is not None and rule.action == "drop_after":
            proxy._record(request, None, rule)
            # No reply at all: the client sees its connection closed mid-request.
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if rule is not None:  # status_after: the write happened, the client hears otherwise
            proxy._record(request, rule.status, rule)
            self._reply(rule.status, "Injected Fault", list(rule.headers), rule.body)
            return
        proxy._record(request, status, None)
        self._reply(status, reason, headers, body)

    def _reply(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes) -> None:
        self.send_response_only(status, reason)
        length = None
        for name, value in headers:
            if name.lower() == "content-length":
                length = value
            elif name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        if self.command == "HEAD":
            # No body follows a HEAD; its Content-Length is the object's size.
            self.send_header("Content-Length", length or "0")
        elif status >= 200 and status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)
        self.wfile.flush()

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = do_OPTIONS = _proxy
