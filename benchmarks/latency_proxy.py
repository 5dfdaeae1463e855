"""An HTTP proxy on 127.0.0.1 that waits before passing each request to a storage emulator.

``benchmarks/object_store.py`` puts one in front of fake-gcs-server and one in
front of Azurite, in a process of its own each, so that every request to
those emulators costs the same round trip as a request to the moto server
behind ``benchmarks/s3_latency.py``: ``python benchmarks/latency_proxy.py
--upstream http://127.0.0.1:<port> --flavour gcs --latency-ms 20`` prints
``PORT <n>`` on its first line and serves until killed. Every request first
sleeps the latency, then goes to the emulator; the sleep is per request, so
concurrent requests overlap their waits as they do on a network (one thread
per client connection, each with its own kept-alive connection upstream).

The proxy counts what it passed on by kind, named as ``s3_latency.py`` names
S3's: ``GET`` (a whole object), ``GET_RANGE`` (a ranged read), ``HEAD`` (an
object's metadata: Azure's Get Blob Properties, GCS's object resource),
``PUT`` (an upload: Azure's Put Blob, Put Block and Put Block List, GCS's
upload ``POST``), ``LIST``, ``DELETE``, and the method for anything else
(the Azure SDK sends a range with every download: Azure's reads all count
as ``GET_RANGE``).
``GET /_stats`` returns the counts as JSON and ``POST /_stats`` resets them;
the stats requests do not wait and are not counted. A client that hangs up
before its answer is sent (a writer process ending with a request in
flight) is counted as ``client_gone`` (``LATENCY_PROXY_DEBUG=1`` prints
each one on stderr).

The request's ``Host`` header is passed on unchanged, so an emulator that
writes its own address into an answer (a resumable upload's ``Location``)
writes the proxy's. Bodies are read whole before they are passed on, both
ways (the benchmark's objects are a few MiB at most); the answer goes back
with its ``Content-Length`` (a ``HEAD``'s unchanged) and its encoding as sent.
One answer is changed: Azurite (3.35) ignores a blob listing's ``startFrom``,
which the proxy applies as Azure does (:func:`azure_start_from`), so that
delta-rs can read its log there.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Headers of one connection, not of the request or answer they travel with.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)


def kind(flavour: str, method: str, path: str, query: str, headers: Any) -> str:
    """What one request to the emulator is, in ``s3_latency.py``'s names."""
    ranged = "range" in headers or "x-ms-range" in headers
    params = urllib.parse.parse_qs(query)
    if flavour == "gcs":
        if path.startswith("/upload/"):
            return "PUT"
        if method == "GET":
            if params.get("alt") == ["media"] or path.startswith("/download/"):
                return "GET_RANGE" if ranged else "GET"
            if path.rstrip("/").endswith("/o"):
                return "LIST"
            if "/o/" in path:
                return "HEAD"  # the object's resource: its size and generation
        return method
    if flavour == "azure":
        if method == "GET" and params.get("comp") == ["list"]:
            return "LIST"
        if method == "GET":
            return "GET_RANGE" if ranged else "GET"
        return method
    return method


def azure_start_from(query: str, payload: bytes) -> bytes:
    """A List Blobs answer without the blobs before its ``startFrom``, as Azure answers.

    Azurite (3.35) ignores ``startFrom``, the name a listing begins at, and
    lists the container from its first blob; delta-rs (object_store) lists a
    table's log from the version it knows, and a listing that begins at
    version 0 makes it fail ("Invalid table version"). Every other answer
    passes unchanged.
    """
    params = urllib.parse.parse_qs(query)
    start = params.get("startFrom", [""])[0]
    if params.get("comp") != ["list"] or not start:
        return payload
    import xml.etree.ElementTree as ET

    root = ET.fromstring(payload)
    blobs = root.find("Blobs")
    if blobs is None:
        return payload
    for blob in list(blobs.findall("Blob")):
        if (blob.findtext("Name") or "") < start:
            blobs.remove(blob)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True))


class Proxy(ThreadingHTTPServer):
    daemon_threads = True
    # A scan sends a hundred requests at once: let them all queue.
    request_queue_size = 256

    def __init__(self, port: int, upstream: str, flavour: str, latency_s: float) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.flavour = flavour
        self.latency_s = latency_s
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: Proxy

    def setup(self) -> None:
        super().setup()
        self.upstream: http.client.HTTPConnection | None = None

    def finish(self) -> None:
        super().finish()
        if self.upstream is not None:
            self.upstream.close()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.forward()

    do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    def body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers, then the blank line
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def forward(self) -> None:
        path, _, query = self.path.partition("?")
        if path == "/_stats":
            self.stats()
            return
        data = self.body()
        proxy = self.server
        if proxy.latency_s:
            time.sleep(proxy.latency_s)
        headers = {
            k: v
            for k, v in self.headers.items()
            if k.lower() not in HOP_BY_HOP and k.lower() != "content-length"
        }
        if data or "Content-Length" in self.headers or "Transfer-Encoding" in self.headers:
            headers["Content-Length"] = str(len(data))
        with proxy.lock:
            proxy.counts[kind(proxy.flavour, self.command, path, query, self.headers)] += 1
            proxy.counts["requests"] += 1
        reply = self.send_upstream(headers, data)
        payload = reply.read()
        if proxy.flavour == "azure" and reply.status == 200 and self.command == "GET":
            payload = azure_start_from(query, payload)
        self.send_response_only(reply.status, reply.reason)
        for key, value in reply.getheaders():
            lowered = key.lower()
            if lowered in HOP_BY_HOP or (lowered == "content-length" and self.command != "HEAD"):
                continue
            self.send_header(key, value)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        try:
            if self.command != "HEAD" and payload:
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            # The client hung up before its answer came: counted, not an error here.
            with proxy.lock:
                proxy.counts["client_gone"] += 1
            self.close_connection = True
            if os.environ.get("LATENCY_PROXY_DEBUG"):
                print(f"client gone: {self.command} {self.path}", file=sys.stderr, flush=True)
        if reply.will_close:
            self.upstream_close()

    def send_upstream(self, headers: dict[str, str], data: bytes) -> Any:
        """The emulator's answer, on this connection's kept-alive connection to it."""
        while True:
            reused = self.upstream is not None
            if self.upstream is None:
                self.upstream = http.client.HTTPConnection(*self.server.upstream, timeout=120)
                self.upstream.connect()
                self.upstream.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                self.upstream.request(self.command, self.path, body=data, headers=headers)
                return self.upstream.getresponse()
            except (http.client.HTTPException, ConnectionError):
                # The emulator closed an idle kept-alive connection: once more
                # on a new one (a new connection's failure is the emulator's).
                self.upstream_close()
                if not reused:
                    raise

    def upstream_close(self) -> None:
        if self.upstream is not None:
            self.upstream.close()
            self.upstream = None

    def stats(self) -> None:
        proxy = self.server
        self.body()
        with proxy.lock:
            if self.command == "POST":
                proxy.counts.clear()
            body = json.dumps(dict(proxy.counts)).encode()
        self.send_response_only(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="the emulator, http://host:port")
    parser.add_argument("--flavour", choices=("gcs", "azure"), required=True)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = Proxy(args.port, args.upstream, args.flavour, args.latency_ms / 1000)
    print(f"PORT {server.server_address[1]}", flush=True)
    # Ctrl-C reaches the whole process group: end quietly, the benchmark reports.
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()


if __name__ == "__main__":
    main()
