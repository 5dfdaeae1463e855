"""A moto S3 server on 127.0.0.1 that waits before answering each request.

``benchmarks/object_store.py`` runs it in a process of its own (so the
server's Python never competes with the client's for one interpreter lock):
``python benchmarks/s3_latency.py --latency-ms 20`` prints ``PORT <n>`` on
its first line and serves until killed. Every request first sleeps the
latency (about one round trip to S3 in-region at 20 ms), then moto answers
it; the sleep is per request, so concurrent requests overlap their waits as
they do on a real network.

The server counts what it answered by kind (``GET``, ``HEAD``, ``PUT``,
``LIST``, ``DELETE``, ``POST``) and by bytes sent; ``GET /_stats`` returns
the counts as JSON and ``POST /_stats`` resets them. The stats requests do
not wait and are not counted.

Connections are kept alive (as S3 keeps them), with the request body read
whole before moto sees it, the way ``tests/conftest.py`` serves moto.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import sys
import threading
import time
from collections import Counter
from typing import Any, ClassVar


def _kind(environ: dict[str, Any]) -> str:
    method = str(environ.get("REQUEST_METHOD", "GET"))
    query = str(environ.get("QUERY_STRING", ""))
    path = str(environ.get("PATH_INFO", "/"))
    bucket_level = path.strip("/").count("/") == 0
    if method == "GET" and (bucket_level or "list-type" in query):
        return "LIST"
    if method == "GET" and "HTTP_RANGE" in environ:
        return "GET_RANGE"
    return method


class LatencyMiddleware:
    """A WSGI middleware: sleep, count, then call moto's app."""

    def __init__(self, app: Any, latency_s: float) -> None:
        self.app = app
        self.latency_s = latency_s
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ.get("PATH_INFO") == "/_stats":
            if environ.get("REQUEST_METHOD") == "POST":
                with self.lock:
                    self.counts.clear()
            with self.lock:
                body = json.dumps(dict(self.counts)).encode()
            start_response(
                "200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            )
            return [body]
        if self.latency_s:
            time.sleep(self.latency_s)
        kind = _kind(environ)
        with self.lock:
            self.counts[kind] += 1
            self.counts["requests"] += 1
        return self.app(environ, start_response)


def _serialize_conditional_puts() -> None:
    """Make moto's conditional PUTs atomic, as on S3 (``tests/conftest.py`` does the same).

    moto checks ``If-None-Match: *`` and stores the object in two steps
    without a lock, so two concurrent creators of a key could both win.
    """
    import functools

    from moto.s3.responses import S3Response

    lock = threading.Lock()
    for name in ("put_object", "_key_response_post"):
        original = getattr(S3Response, name, None)
        if original is None:
            continue

        def locked(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            with lock:
                return _original(*args, **kwargs)

        setattr(S3Response, name, functools.wraps(original)(locked))


def make_server(latency_ms: float, port: int = 0, *, serialize: bool = True) -> Any:
    """A werkzeug server (not started) serving moto's S3 behind the latency.

    ``serialize``: make moto's conditional PUTs atomic (the test suite's
    fixture does it itself, undoing it after).
    """
    if serialize:
        _serialize_conditional_puts()
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import make_server as werkzeug_server

    class Dispatcher(DomainDispatcherApplication):  # type: ignore[misc]
        hosts: ClassVar[dict[str | None, Any]] = {}

        def get_backend_for_host(self, host: str | None) -> Any:
            if host not in self.hosts:
                self.hosts[host] = super().get_backend_for_host(host)
            return self.hosts[host]

    class KeepAliveHandler(MotoRequestHandler):  # type: ignore[misc]
        disable_nagle_algorithm = True
        keep_alive = False

        def handle_one_request(self) -> None:
            self.keep_alive = False
            connection_reader = self.rfile
            try:
                super().handle_one_request()
            finally:
                self.rfile = connection_reader

        def make_environ(self) -> dict[str, Any]:
            environ: dict[str, Any] = super().make_environ()
            length = environ.get("CONTENT_LENGTH") or "0"
            if not environ.get("wsgi.input_terminated") and length.isdigit():
                environ["wsgi.input"] = io.BytesIO(self.rfile.read(int(length)))
                self.keep_alive = True
                self.rfile = io.BytesIO()
            return environ

        def send_header(self, keyword: str, value: str) -> None:
            if self.keep_alive and keyword.lower() == "connection" and value.lower() == "close":
                return
            super().send_header(keyword, value)

        def log_request(self, *args: Any, **kwargs: Any) -> None:
            pass

    app = LatencyMiddleware(Dispatcher(create_backend_app), latency_ms / 1000)
    return werkzeug_server("127.0.0.1", port, app, threaded=True, request_handler=KeepAliveHandler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(name, "testing")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server(args.latency_ms, args.port)
    print(f"PORT {server.server_address[1]}", flush=True)
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
