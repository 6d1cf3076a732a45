"""A stand-in Ollama server that runs no model and misbehaves on request: fault injection for tests.

It speaks the parts of Ollama's API the ``ollama`` client uses (``GET /api/tags``,
``GET /api/version``, ``POST /api/chat``, plain JSON or streamed NDJSON) and
answers without any model:

- a request with a JSON schema (``format``) is answered by the rule-based judge of
  ``fakes.judges`` (:class:`~fakes.judges.RuleJudge`: it reads the data fields of the
  prompt, so judged metrics come out as real numbers);
- a plain request is answered with the first sentence of its first context block
  (``[1] ...`` in the naive RAG prompt), else with ``"OK"``;
- the final part carries ``prompt_eval_count`` / ``eval_count`` as Ollama's does, counting
  words (those of every message, of the answer) where Ollama counts tokens.

Faults (:meth:`FaultyOllama.add_fault`), each for the requests that match (a
substring of the first user message, the kind of request) and a number of times:

========================  ==================================================================
``"500"``                 HTTP 500 with Ollama's error JSON
``"invalid_json"``        HTTP 200 whose body is not JSON (an HTML page from a proxy)
``"bad_shape"``           HTTP 200 with JSON that is not Ollama's reply (a list)
``"schema"``              a well-formed reply whose content breaks the requested JSON schema
``"drop"``                the connection closes midway (after a first chunk when streaming)
``"cut"``                 the reply ends cleanly but unfinished: half the answer, never ``"done": true``
``"slow"``                the reply comes after ``slow_seconds`` (longer than the client's timeout)
``"unknown_model"``       404 ``model "..." not found, try pulling it first``
========================  ==================================================================

Bounded: it listens on 127.0.0.1 only (ephemeral port), reads at most
:data:`MAX_BODY` bytes of a request, waits at most ``slow_seconds`` (and not at
all once stopped), and its threads are daemons.

Usage::

    with FaultyOllama() as server:                 # OLLAMA_HOST=server.url
        server.add_fault("500", match="Which optimizer?", kind="answer")
        server.add_fault("schema", kind="judge", times=3)
        server.requests                            # every chat body received
        server.faults_served                       # [(fault, first user message)]
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fakes.judges import RuleJudge, first_prompt
from fakes.ollama_server import ServerThread, now

FAKE_MODEL = "fake:1b"
FAULTS = ("500", "invalid_json", "bad_shape", "schema", "drop", "cut", "slow", "unknown_model")
MAX_BODY = 10_000_000
_CONTEXT = re.compile(r"^\[1\] (.+?)(?:\.|\n|$)", flags=re.M)


def plain_answer(messages: list[dict[str, str]]) -> str:
    """The fake's answer to a request without a schema: the first sentence of context [1], else "OK"."""
    m = _CONTEXT.search(first_prompt(messages))
    return (m.group(1).strip() + ".") if m else "OK"


@dataclass
class Fault:
    """Answer requests that match with ``fault``: ``match`` in the first user message (None: any),
    ``kind`` "answer" (no schema), "judge" (a schema) or "any"; ``times`` None = always."""

    fault: str
    match: str | None = None
    kind: str = "any"
    times: int | None = None

    def applies(self, body: dict[str, Any]) -> bool:
        if self.times is not None and self.times <= 0:
            return False
        is_judge = isinstance(body.get("format"), dict)
        if self.kind == "judge" and not is_judge or self.kind == "answer" and is_judge:
            return False
        if self.match is not None:
            try:
                if self.match not in first_prompt(body.get("messages") or []):
                    return False
            except StopIteration:
                return False
        return True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def end_headers(self) -> None:
        self.send_header("Connection", "close")
        self.close_connection = True
        super().end_headers()

    def _send(self, body: bytes, status: int = 200, ctype: str = "application/json; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, obj: Any, status: int = 200) -> None:
        self._send(json.dumps(obj).encode(), status)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self) -> None:
        if self.path == "/api/tags":
            self._send_json({"models": [{"name": m, "model": m, "modified_at": "2026-01-01T00:00:00Z",
                                         "size": 1, "digest": "0" * 64, "details": {}}
                                        for m in self.server.models]})
        elif self.path == "/api/version":
            self._send_json({"version": "0.0.0-faulty"})
        elif self.path == "/":
            self._send(b"Ollama is running", ctype="text/plain")
        else:
            self._send_json({"error": "404 page not found"}, 404)

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            self._send_json({"error": "request too large"}, 413)
            return
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json({"error": f"invalid JSON body: {exc}"}, 400)
            return
        if self.path != "/api/chat":
            self._send_json({"error": "404 page not found"}, 404)
            return
        self.server.record(body)
        fault = self.server.fault_for(body)
        model = body.get("model") or ""
        if fault == "unknown_model" or model not in self.server.models:
            self._send_json({"error": f'model "{model}" not found, try pulling it first'}, 404)
            return
        if fault == "500":
            self._send_json({"error": "fake: llama runner process has terminated"}, 500)
            return
        if fault == "invalid_json":
            self._send(b"<html><body>502 Bad Gateway</body></html>", ctype="text/html")
            return
        if fault == "bad_shape":
            self._send_json(["not", "an", "ollama", "reply"])
            return
        if fault == "slow" and self.server.stopping.wait(self.server.slow_seconds):
            return
        messages = body.get("messages") or []
        schema = body.get("format") if isinstance(body.get("format"), dict) else None
        if fault == "schema":
            text = json.dumps({"unexpected": "field"})
        elif schema is not None:
            text = RuleJudge()._chat_once(messages, body.get("options") or {}, schema)
        else:
            text = plain_answer(messages)
        # word counts stand in for token counts: what the client passes on as the answer's usage
        reply = {"model": model, "created_at": now(), "message": {"role": "assistant", "content": text},
                 "done": True, "done_reason": "stop",
                 "prompt_eval_count": sum(len(m.get("content", "").split()) for m in messages),
                 "eval_count": len(text.split())}
        if not body.get("stream", True):
            if fault == "cut":
                self._send_json({**reply, "message": {"role": "assistant", "content": text[: len(text) // 2]},
                                 "done": False})
                return
            if fault == "drop":  # promise the whole body, send half of it, hang up
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                return
            self._send_json(reply)
            return
        self._start_stream()
        half = max(1, len(text) // 2)
        first = {"model": model, "created_at": now(),
                 "message": {"role": "assistant", "content": text[:half]}, "done": False}
        self._chunk((json.dumps(first) + "\n").encode())
        if fault == "drop":  # no terminating chunk: the peer closes mid-body
            return
        if fault == "cut":  # a clean end of the body, but the answer never said done
            self._end_stream()
            return
        rest = {**first, "message": {"role": "assistant", "content": text[half:]}}
        self._chunk((json.dumps(rest) + "\n").encode())
        done = {**reply, "message": {"role": "assistant", "content": ""}}
        self._chunk((json.dumps(done) + "\n").encode())
        self._end_stream()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, models: list[str], slow_seconds: float):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.models = list(models)
        self.slow_seconds = slow_seconds
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.faults: list[Fault] = []
        self.requests: list[dict[str, Any]] = []
        self.faults_served: list[tuple[str, str]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that hung up: quiet
        pass

    def record(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(body)

    def fault_for(self, body: dict[str, Any]) -> str | None:
        with self.lock:
            for f in self.faults:
                if f.applies(body):
                    if f.times is not None:
                        f.times -= 1
                    try:
                        prompt = first_prompt(body.get("messages") or [])
                    except StopIteration:
                        prompt = ""
                    self.faults_served.append((f.fault, prompt))
                    return f.fault
        return None


class FaultyOllama(ServerThread):
    """Run the faulty server in a daemon thread; a context manager, or start()/stop()."""

    thread_name = "faulty-ollama"

    def __init__(self, models: list[str] | None = None, slow_seconds: float = 3.0):
        super().__init__(_Server(models if models is not None else [FAKE_MODEL], slow_seconds))

    @property
    def faults_served(self) -> list[tuple[str, str]]:
        """``(fault, first user message)`` of every request answered with a fault."""
        return self._server.faults_served

    def add_fault(self, fault: str, *, match: str | None = None, kind: str = "any",
                  times: int | None = None) -> None:
        """Answer the matching requests with ``fault`` (see the module docstring); the first rule
        that applies wins."""
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; one of {FAULTS}")
        if kind not in ("any", "answer", "judge"):
            raise ValueError(f"kind must be any, answer or judge, got {kind!r}")
        with self._server.lock:
            self._server.faults.append(Fault(fault, match, kind, times))

    def clear_faults(self) -> None:
        with self._server.lock:
            self._server.faults.clear()
