"""A logging HTTP proxy on loopback: it records every request it receives and forwards none.

Point ``http_proxy`` / ``HTTP_PROXY`` / ``all_proxy`` at :attr:`LoggingProxy.url` and
whatever is sent through the proxy lands in :attr:`LoggingProxy.received` (the request line,
and the body of a POST: a prompt sent through a proxy would be there), answered with ``502``.
A client that reaches a local server directly leaves it empty.

Bounded: 127.0.0.1 only (ephemeral port), at most :data:`MAX_BODY` bytes read per request,
daemon threads.

Usage::

    with LoggingProxy() as proxy:
        monkeypatch.setenv("http_proxy", proxy.url)
        ...
        assert proxy.received == []
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fakes.ollama_server import ServerThread

MAX_BODY = 1_000_000
#: the environment variables urllib and httpx read a proxy from
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _log_and_refuse(self) -> None:
        n = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
        body = self.rfile.read(n) if n else b""
        with self.server.lock:
            self.server.received.append({"request": self.requestline,
                                         "body": body.decode("utf-8", "replace")})
        payload = b"proxy: refused (a test proxy forwards nothing)"
        self.send_response(502)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True

    do_GET = do_POST = do_CONNECT = do_HEAD = _log_and_refuse  # noqa: N815 - http.server's names


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.received: list[dict[str, str]] = []
        self.requests = self.received


class LoggingProxy(ServerThread):
    """The proxy, as a context manager (see the module docstring)."""

    thread_name = "logging-proxy"

    def __init__(self) -> None:
        super().__init__(_Server())

    @property
    def received(self) -> list[dict[str, str]]:
        """Every request the proxy received: ``{"request": request line, "body": ...}``."""
        return self._server.received
