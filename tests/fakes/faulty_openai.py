"""A stand-in OpenAI-compatible server that runs no model and misbehaves on request: the fault shapes a
real server cannot be made to produce on demand.

It speaks the parts of the chat-completions API the openai backend uses (``GET /v1/models``,
``POST /v1/chat/completions``, whole JSON answers with ``usage``) and answers without any model:

- a request with a JSON schema (in any of the forms of
  :data:`ragworkbook.llm.openai_backend.SCHEMA_FORMS` that carries one) is answered by the rule-based
  judge of ``fakes.judges`` when it knows the schema, else with the simplest object the schema
  accepts (enum: its first value, integer 1, number 0.5, string "x", boolean true);
- a plain request (or a form that carries no schema) is answered with the first sentence of its first
  context block (``[1] ...``), else with ``"OK"``;
- ``usage`` counts words, not tokens (``prompt_tokens``: the words of every message;
  ``completion_tokens``: the words of the answer), so tests can check that the counts are passed on.

Faults (:meth:`FaultyOpenAI.add_fault`), each for the requests that match (a substring of the first
user message, the kind of request) and a number of times:

=================  ================================================================================
``"500"``          HTTP 500 with OpenAI's error JSON
``"invalid_json"`` HTTP 200 whose body is not JSON (a proxy's HTML page)
``"bad_shape"``    HTTP 200 with JSON that is not a chat completion
``"schema"``       a well-formed completion whose content breaks the requested JSON schema
``"drop"``         the connection closes midway through the body
``"slow"``         the answer comes after ``slow_seconds`` (longer than the client's timeout)
``"unknown_model"`` 404 ``The model `...` does not exist`` (OpenAI's words)
``"401"``          401 ``Incorrect API key provided: <the key it got>`` (a server quoting the key)
``"429"``          429 with ``Retry-After: 0``
``"context"``      400 ``Requested tokens exceed context window`` (llama-cpp-python's words)
=================  ================================================================================

``refuse_forms``: the schema forms the server refuses, each with HTTP 422 and a message naming it
(as pydantic-based servers do), e.g. ``{"json_schema"}`` for llama-cpp-python's server;
``refuse_status = 500`` refuses them as that server really does, with a 500 whose message is the
validation error.

Bounded: 127.0.0.1 only (ephemeral port), at most :data:`MAX_BODY` bytes read per request, waits at
most ``slow_seconds`` (and not at all once stopped), daemon threads.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fakes.faulty_ollama import plain_answer
from fakes.judges import RuleJudge, first_prompt, schema_kind
from fakes.ollama_server import ServerThread

FAKE_MODEL = "stand-in-1b"
FAULTS = ("500", "invalid_json", "bad_shape", "schema", "drop", "slow", "unknown_model", "401", "429",
          "context")
MAX_BODY = 10_000_000


def schema_form(body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """Which form a request asks for structured output in, and the schema it carries (if any)."""
    rf = body.get("response_format")
    if isinstance(rf, dict) and rf.get("type") == "json_schema":
        return "json_schema", (rf.get("json_schema") or {}).get("schema")
    if isinstance(rf, dict) and rf.get("type") == "json_object":
        return ("json_object_schema", rf["schema"]) if "schema" in rf else ("json_object", None)
    if "guided_json" in body:
        return "guided_json", body["guided_json"]
    return "none", None


def simplest(schema: dict[str, Any]) -> Any:
    """The simplest value ``schema`` accepts (objects: every property; see the module docstring)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: simplest(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [simplest(schema.get("items") or {"type": "string"})] * int(schema.get("minItems", 1))
    return {"integer": 1, "number": 0.5, "boolean": True, "null": None}.get(kind, "x")


def _words(text: str) -> int:
    return len(text.split())


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
        is_judge = schema_form(body)[0] != "none"
        if self.kind == "judge" and not is_judge or self.kind == "answer" and is_judge:
            return False
        if self.match is not None:
            try:
                return self.match in first_prompt(body.get("messages") or [])
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

    def _send(self, body: bytes, status: int = 200, ctype: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _send_json(self, obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self._send(json.dumps(obj).encode(), status, headers=headers)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self._send_json({"error": {"message": message, "type": "invalid_request_error"}}, status, headers)

    def do_GET(self) -> None:
        self.server.record({"path": self.path, "method": "GET", "headers": dict(self.headers)})
        if self.path == "/v1/models":
            self._send_json({"object": "list", "data": [{"id": m, "object": "model", "owned_by": "me"}
                                                        for m in self.server.models]})
        else:
            self._send_json({"detail": "Not Found"}, 404)

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        if n > MAX_BODY:
            self._error(413, "request too large")
            return
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except json.JSONDecodeError as exc:
            self._error(400, f"invalid JSON body: {exc}")
            return
        self.server.record({"path": self.path, "method": "POST", "headers": dict(self.headers), **body})
        if self.path != "/v1/chat/completions":
            self._send_json({"detail": "Not Found"}, 404)
            return
        form, schema = schema_form(body)
        if form in self.server.refuse_forms:
            detail = [{"type": "literal_error", "loc": ["body", "response_format"],
                       "msg": f"this server does not take the {form} form"}]
            if self.server.refuse_status == 422:
                self._send_json({"detail": detail}, 422)
            else:  # llama-cpp-python's server: its validation error as a server error
                self._error(self.server.refuse_status, f"1 validation error: {detail[0]}")
            return
        fault = self.server.fault_for(body)
        model = body.get("model") or ""
        if fault == "unknown_model" or model not in self.server.models:
            self._error(404, f"The model `{model}` does not exist or you do not have access to it.")
            return
        if fault == "401":
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            self._error(401, f"Incorrect API key provided: {key}.")
            return
        if fault == "429":
            self._error(429, "Rate limit reached, slow down", headers={"Retry-After": "0"})
            return
        if fault == "context":
            self._error(400, "Requested tokens (5000) exceed context window of 4096")
            return
        if fault == "500":
            self._error(500, "stand-in: the model runner crashed")
            return
        if fault == "invalid_json":
            self._send(b"<html><body>502 Bad Gateway</body></html>", ctype="text/html")
            return
        if fault == "bad_shape":
            self._send_json({"object": "chat.completion", "choices": []})
            return
        if fault == "slow" and self.server.stopping.wait(self.server.slow_seconds):
            return
        messages = body.get("messages") or []
        if fault == "schema":
            text = json.dumps({"unexpected": "field"})
        elif schema is not None:
            try:
                schema_kind(schema)
                text = RuleJudge()._chat_once(messages, {}, schema)
            except AssertionError:  # not one of the judge's schemas
                text = json.dumps(simplest(schema))
        else:
            text = plain_answer(messages)
        text = self.server.prefix + text
        reply = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                              "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": sum(_words(m.get("content", "")) for m in messages),
                           "completion_tokens": _words(text),
                           "total_tokens": 0}}
        if fault == "drop":  # promise the whole body, send half of it, hang up
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            return
        self._send_json(reply)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, models: list[str], slow_seconds: float):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.models = list(models)
        self.slow_seconds = slow_seconds
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.faults: list[Fault] = []
        self.refuse_forms: set[str] = set()
        self.refuse_status = 422
        self.prefix = ""
        self.requests: list[dict[str, Any]] = []

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
                    return f.fault
        return None


class FaultyOpenAI(ServerThread):
    """Run the stand-in in a daemon thread; a context manager, or start()/stop(). ``url`` is the API's
    base URL (``.../v1``); ``requests`` every request received (``path``, ``method``, ``headers`` and the
    JSON body's fields)."""

    thread_name = "faulty-openai"

    def __init__(self, models: list[str] | None = None, slow_seconds: float = 3.0):
        super().__init__(_Server(models if models is not None else [FAKE_MODEL], slow_seconds))

    @property
    def url(self) -> str:
        return super().url + "/v1"

    @property
    def refuse_forms(self) -> set[str]:
        return self._server.refuse_forms

    @refuse_forms.setter
    def refuse_forms(self, forms: set[str]) -> None:
        self._server.refuse_forms = set(forms)

    @property
    def refuse_status(self) -> int:
        """The status of a refused form: 422 with FastAPI's ``detail`` (default), or e.g. 500 with the
        validation error as OpenAI's error message (llama-cpp-python's server)."""
        return self._server.refuse_status

    @refuse_status.setter
    def refuse_status(self, status: int) -> None:
        self._server.refuse_status = status

    @property
    def prefix(self) -> str:
        """Text put before every answer (e.g. a ``<think>...</think>`` block)."""
        return self._server.prefix

    @prefix.setter
    def prefix(self, text: str) -> None:
        self._server.prefix = text

    def chats(self) -> list[dict[str, Any]]:
        """The chat-completion requests received, in order."""
        return [r for r in self.requests if r["path"] == "/v1/chat/completions"]

    def add_fault(self, fault: str, *, match: str | None = None, kind: str = "any",
                  times: int | None = None) -> None:
        """Answer the matching requests with ``fault`` (see the module docstring); the first rule that
        applies wins."""
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; one of {FAULTS}")
        if kind not in ("any", "answer", "judge"):
            raise ValueError(f"kind must be any, answer or judge, got {kind!r}")
        with self._server.lock:
            self._server.faults.append(Fault(fault, match, kind, times))
