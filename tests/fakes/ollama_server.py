"""A small Ollama-compatible HTTP server for tests, backed by the embedded SmolLM2 model.

It speaks the parts of Ollama's API the ``ollama`` client uses here:
``GET /`` ("Ollama is running"), ``GET /api/version``, ``GET /api/tags``,
``POST /api/show``, ``POST /api/chat`` and ``POST /api/generate`` (plain JSON or
streamed NDJSON with chunked transfer encoding, ``format`` = "json" or a JSON
schema, ``options``), and Ollama's error JSON (``{"error": "..."}``, 404 for an
unknown model). Unset options take Ollama's defaults (temperature 0.8,
repeat_penalty 1.1, top_k 40, top_p 0.9) so tests can see what the client sent.

Usage::

    with FakeOllama() as server:        # 127.0.0.1, ephemeral port, own thread
        client = ollama.Client(host=server.url)
        server.requests                  # every JSON body received
        server.fail_mid_stream_after = 2 # next streamed answer: error after 2 chunks
        server.refuse_think = True       # 400 "does not support thinking" when "think" is sent
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

FAKE_MODEL = "smollm2:135m"
OLLAMA_DEFAULTS = {"temperature": 0.8, "repeat_penalty": 1.1, "top_k": 40, "top_p": 0.9,
                   "num_predict": 128}
_OPTION_MAP = {"temperature": "temperature", "seed": "seed", "num_predict": "max_tokens",
               "top_k": "top_k", "top_p": "top_p", "min_p": "min_p", "repeat_penalty": "repeat_penalty",
               "stop": "stop"}


def now() -> str:
    """The time as Ollama writes it (``created_at``)."""
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def end_headers(self) -> None:
        # One request per connection, so stop() really stops answering (no kept-alive sockets).
        self.send_header("Connection", "close")
        self.close_connection = True
        super().end_headers()

    # --- helpers ---------------------------------------------------------------
    def _send_json(self, obj: Any, status: int = 200) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._send_json({"error": message}, status)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, obj: Any) -> None:
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _body(self) -> dict[str, Any]:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b"{}"
        body = json.loads(raw or b"{}")
        self.server.requests.append({"path": self.path, **body})
        return body

    # --- routes --------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        if self.path == "/":
            body = b"Ollama is running"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/api/version":
            self._send_json({"version": "0.0.0-fake"})
        elif self.path == "/api/tags":
            self._send_json({"models": [self.server.model_entry(m) for m in self.server.models]})
        else:
            self._error(404, "404 page not found")

    def do_POST(self) -> None:
        try:
            body = self._body()
        except json.JSONDecodeError as exc:
            self._error(400, f"invalid JSON body: {exc}")
            return
        if self.path == "/api/show":
            name = body.get("model") or body.get("name") or ""
            if name not in self.server.models:
                self._error(404, f"model '{name}' not found")
                return
            entry = self.server.model_entry(name)
            self._send_json({"modelfile": f"FROM {name}\n", "parameters": "", "template": "{{ .Prompt }}",
                             "details": entry["details"], "model_info": {}, "capabilities": ["completion"]})
        elif self.path in ("/api/chat", "/api/generate"):
            self._generate(body, chat=self.path == "/api/chat")
        else:
            self._error(404, "404 page not found")

    def _generate(self, body: dict[str, Any], chat: bool) -> None:
        model = body.get("model") or ""
        if not model:
            self._error(400, "model is required")
            return
        if model not in self.server.models:
            self._error(404, f'model "{model}" not found, try pulling it first')
            return
        if "think" in body and self.server.refuse_think:
            self._error(400, f'"{model}" does not support thinking')
            return
        if chat:
            messages = body.get("messages") or []
        else:
            messages = ([{"role": "system", "content": body["system"]}] if body.get("system") else [])
            messages.append({"role": "user", "content": body.get("prompt", "")})
        opts = {**OLLAMA_DEFAULTS, **(body.get("options") or {})}
        kw = {_OPTION_MAP[k]: v for k, v in opts.items() if k in _OPTION_MAP and v is not None}
        fmt = body.get("format")
        if fmt == "json":
            kw["response_format"] = {"type": "json_object"}
        elif isinstance(fmt, dict):
            kw["response_format"] = {"type": "json_object", "schema": fmt}
        key = "message" if chat else "response"

        def piece(text: str) -> Any:
            return {"role": "assistant", "content": text} if chat else text

        stream = body.get("stream", True)  # Ollama streams unless told not to
        worker = self.server.worker()
        if not stream:
            out = worker.chat(messages, kw)
            text = out["choices"][0]["message"]["content"] or ""
            self._send_json({"model": model, "created_at": now(), key: piece(text), "done": True,
                             "done_reason": out["choices"][0]["finish_reason"] or "stop",
                             "prompt_eval_count": out["usage"]["prompt_tokens"],
                             "eval_count": out["usage"]["completion_tokens"]})
            return
        chunks = worker.chat(messages, kw, stream=True)  # llama.cpp's stream, gathered in the worker
        self._start_stream()
        fail_after = self.server.fail_mid_stream_after
        self.server.fail_mid_stream_after = None
        n = 0
        reason = "stop"
        for chunk in chunks:
            choice = chunk["choices"][0]
            text = choice["delta"].get("content") or ""
            reason = choice.get("finish_reason") or reason
            if not text:
                continue
            if fail_after is not None and n >= fail_after:
                self._chunk({"error": "fake server: model runner crashed mid-stream"})
                self._end_stream()
                return
            self._chunk({"model": model, "created_at": now(), key: piece(text), "done": False})
            n += 1
        self._chunk({"model": model, "created_at": now(), key: piece(""), "done": True,
                     "done_reason": reason, "eval_count": n})
        self._end_stream()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, models: list[str]):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.models = list(models)
        self.requests: list[dict[str, Any]] = []
        self.fail_mid_stream_after: int | None = None
        self.refuse_think = False  # answer 400 "does not support thinking" to any think field

    def model_entry(self, name: str) -> dict[str, Any]:
        return {"name": name, "model": name, "modified_at": "2026-01-01T00:00:00Z", "size": 98362432,
                "digest": "0" * 64,
                "details": {"format": "gguf", "family": "llama", "families": ["llama"],
                            "parameter_size": "135M", "quantization_level": "Q4_1"}}

    def worker(self) -> Any:
        """The embedded model's worker process (the same one the embedded backend uses)."""
        from ragworkbook.llm.embedded import model_worker

        return model_worker()


class ServerThread:
    """A loopback test server run in a daemon thread: a context manager, or start()/stop().

    ``server`` is an HTTP server bound to ``127.0.0.1:0``; one with a ``stopping`` event
    (threading.Event) has it set first, so handlers that wait can give up."""

    thread_name = "fake-server"

    def __init__(self, server: ThreadingHTTPServer):
        self._server: Any = server
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every ``/api/chat`` body received, in order."""
        return self._server.requests

    def start(self: _T) -> _T:
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        stopping = getattr(self._server, "stopping", None)
        if stopping is not None:
            stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self: _T) -> _T:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


_T = TypeVar("_T", bound=ServerThread)


class FakeOllama(ServerThread):
    """Run the fake server in a daemon thread; use as a context manager or call start()/stop()."""

    thread_name = "fake-ollama"

    def __init__(self, models: list[str] | None = None):
        super().__init__(_Server(models if models is not None else [FAKE_MODEL]))

    @property
    def fail_mid_stream_after(self) -> int | None:
        return self._server.fail_mid_stream_after

    @fail_mid_stream_after.setter
    def fail_mid_stream_after(self, n: int | None) -> None:
        self._server.fail_mid_stream_after = n

    @property
    def refuse_think(self) -> bool:
        return self._server.refuse_think

    @refuse_think.setter
    def refuse_think(self, value: bool) -> None:
        self._server.refuse_think = value
