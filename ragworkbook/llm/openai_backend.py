"""The openai backend: any server that speaks the OpenAI chat-completions API (vLLM, llama.cpp's
server, LM Studio, LocalAI, Ollama's ``/v1``, hosted endpoints), over plain HTTP with httpx.

- Server: ``base_url=``, else ``$OPENAI_BASE_URL``, else ``http://127.0.0.1:8080/v1`` (llama.cpp's
  ``llama-server`` on its default port): a server on this machine is the common case, and nothing
  leaves the machine unless a URL says so. The URL is the API's base, as the OpenAI clients take
  it: it usually ends in ``/v1`` (requests go to ``BASE/chat/completions`` and ``BASE/models``). A
  server on this machine (loopback, by address: :func:`ragworkbook.llm.host.is_local`) is reached
  directly, never through ``http_proxy``; a remote one as the environment says.
- Key: ``api_key=``, else ``$OPENAI_API_KEY``, sent as ``Authorization: Bearer``; optional (local
  servers take none). It is never printed: not in the generator's repr, not in an error (a server's
  message that quotes it shows ``***``), not in a recording or a report. A user name, password or
  query in the URL is shown as ``***`` too (:func:`ragworkbook.llm.host.redact_url`).
- Model: required (``model=``, ``--model``, ``$RAGWORKBOOK_MODEL``): servers name their models
  differently, and a recording is keyed by the name. A model the server does not serve gives
  :class:`ModelNotFound` listing what ``GET BASE/models`` says it serves.
- Options, as on the other backends (defaults temperature 0, seed 0, num_predict 256):
  ``temperature``, ``seed``, ``num_predict`` (sent as ``max_tokens``; -1 sends none: the server's
  limit), ``top_p``, ``stop``, ``presence_penalty``, ``frequency_penalty``, and the extensions most
  local servers take (llama.cpp, LM Studio, LocalAI; sent only when given, since OpenAI itself
  refuses unknown fields) ``top_k``, ``min_p``, ``repeat_penalty``. Another option is a ValueError
  naming these. Temperature 0 is greedy decoding with the server's own defaults for the rest:
  llama-cpp-python's server applies ``repeat_penalty`` 1.1 unless told otherwise, the embedded
  backend 1.0.
- A JSON schema is sent as ``response_format={"type": "json_schema", "json_schema": {"name":
  "response", "schema": ...}}``. A server that refuses that form (HTTP 400 or 422, or a server error
  naming the field: llama-cpp-python's server answers 500 to a ``json_schema`` it does not know) is
  asked again with the next form it may take: ``{"type": "json_object", "schema": ...}``
  (llama.cpp's servers),
  ``guided_json`` (older vLLM), ``{"type": "json_object"}``, then no constraint at all (the answer is
  still parsed and validated, with the base class's retries). The first form that works is kept for
  every later request of the generator (:attr:`OpenAIGenerator.schema_form`). Nothing is kept when
  every form is refused, or when two forms in a row are refused with the same message: then the
  request, not the form, is what the server refuses (a prompt too long for its context, say), and
  that is the error.
- The answer is read whole (not streamed), so that the server's ``usage`` comes with it: its
  ``prompt_tokens`` and ``completion_tokens`` are the counts of ``Generation.usage``. A leading
  ``<think>...</think>`` block is removed and the text stripped.
- Timeout: ``timeout=`` seconds, else ``$RAGWORKBOOK_OPENAI_TIMEOUT``, else 300
  (:func:`openai_timeout`); the commands take ``--timeout``. It bounds connecting and the wait for
  the whole answer. A server that answers 429 or 503 (busy, loading the model) is asked again
  after the ``Retry-After`` it gives (1 s, then 2 s, when it gives none), at most twice and never
  waiting more than 10 s.

Errors: no server -> :class:`BackendUnavailable` (names ``OPENAI_BASE_URL`` and how to start a
server); 401/403 -> :class:`AuthenticationFailed` (a ``BackendUnavailable``: names
``OPENAI_API_KEY``); the model not served -> :class:`ModelNotFound`; no chat-completions endpoint
at the URL -> ``BackendUnavailable`` (the URL usually ends in ``/v1``). Every other refusal or
server error, a timeout, a dropped connection or a reply that is not a chat completion is an
:class:`LLMError` naming the server, the model and what came back: errors of one request, which
a judge counts as a failed judgment.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from ragworkbook._types import JSON, JSONObject
from ragworkbook.llm.base import (
    BackendUnavailable,
    Generator,
    LLMError,
    ModelNotFound,
    Reply,
    connection_failed,
    timed_out,
    token_count,
)
from ragworkbook.llm.host import is_local, redact_url, seconds_setting
from ragworkbook.llm.ollama_backend import strip_thinking
from ragworkbook.llm.request import Options, Schema

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_OPENAI_BASE_URL", "DEFAULT_OPENAI_TIMEOUT", "SCHEMA_FORMS", "AuthenticationFailed",
           "OpenAIGenerator", "openai_api_key", "openai_base_url", "openai_models", "openai_options",
           "openai_timeout", "schema_fields"]

DEFAULT_OPENAI_BASE_URL = "http://127.0.0.1:8080/v1"
DEFAULT_OPENAI_TIMEOUT = 300.0
#: How a JSON schema is sent, in the order tried (see the module docstring).
SCHEMA_FORMS = ("json_schema", "json_object_schema", "guided_json", "json_object", "none")
#: Option -> request field; the last three are extensions OpenAI itself does not take.
_OPTION_MAP = {
    "temperature": "temperature", "seed": "seed", "num_predict": "max_tokens", "top_p": "top_p",
    "stop": "stop", "presence_penalty": "presence_penalty", "frequency_penalty": "frequency_penalty",
    "top_k": "top_k", "min_p": "min_p", "repeat_penalty": "repeat_penalty",
}
#: At most this many extra requests after a 429/503, waiting at most this long each.
BUSY_RETRIES = 2
BUSY_MAX_WAIT = 10.0
_SNIPPET = 300
_START_A_SERVER = (
    "start one, e.g. `llama-server -m MODEL.gguf --port 8080` (llama.cpp), `python -m llama_cpp.server "
    "--model MODEL.gguf --port 8080` (llama-cpp-python), `vllm serve MODEL --port 8080`, or LM Studio's "
    "server (http://127.0.0.1:1234/v1), or point OPENAI_BASE_URL at a running server (its URL usually "
    "ends in /v1)"
)
_FORM_FIELD = re.compile(r"response_format|json_schema|guided_json")
_MODEL_MISSING = re.compile(r"not (?:be )?found|does not exist|no such|unknown model|not loaded|"
                            r"invalid model|not available", re.IGNORECASE)


class AuthenticationFailed(BackendUnavailable):
    """The server refused the request's credentials (HTTP 401 or 403): set ``OPENAI_API_KEY``."""


def openai_base_url(base_url: str | None = None) -> str:
    """The API's base URL: ``base_url``, else ``$OPENAI_BASE_URL``, else ``http://127.0.0.1:8080/v1``.

    No scheme means http; a trailing ``/`` is dropped. ValueError naming ``OPENAI_BASE_URL`` (or
    ``base_url``) when the value is not an http(s) URL with a host.
    """
    from_env = base_url is None
    raw = (os.environ.get("OPENAI_BASE_URL", "") if from_env else base_url).strip()
    if not raw:
        return DEFAULT_OPENAI_BASE_URL
    url = raw if "://" in raw else f"http://{raw}"
    split = urllib.parse.urlsplit(url)
    why = None
    if split.scheme not in ("http", "https"):
        why = f"unknown scheme {split.scheme!r}; use http or https"
    else:
        try:
            split.port  # noqa: B018 - raises on a port out of range or not a number
        except ValueError as exc:
            why = str(exc).lower()
        if why is None and not split.hostname:
            why = "no host"
    if why is not None:
        what = f"OPENAI_BASE_URL={redact_url(raw)!r}" if from_env else f"base_url={redact_url(raw)!r}"
        fix = "set OPENAI_BASE_URL to" if from_env else "give"
        raise ValueError(f"{what} is not a server URL ({why}): {fix} the API's base URL, e.g. "
                         f"{DEFAULT_OPENAI_BASE_URL}")
    return url.rstrip("/")


def openai_timeout(timeout: float | None = None) -> float:
    """Seconds to wait for the server: ``timeout``, else ``$RAGWORKBOOK_OPENAI_TIMEOUT``, else 300."""
    return seconds_setting(timeout, "RAGWORKBOOK_OPENAI_TIMEOUT", DEFAULT_OPENAI_TIMEOUT)


def openai_api_key(api_key: str | None = None) -> str | None:
    """``api_key``, else ``$OPENAI_API_KEY``; None when neither is set (local servers need none)."""
    key = (os.environ.get("OPENAI_API_KEY", "") if api_key is None else api_key).strip()
    return key or None


def openai_options(options: Mapping[str, JSON]) -> JSONObject:
    """The request fields for our ``options`` (see the module docstring); ValueError for an option
    this backend does not take, or a ``num_predict`` that is no positive number of tokens (or -1)."""
    unknown = sorted(set(options) - set(_OPTION_MAP))
    if unknown:
        raise ValueError(f"unknown option(s) for the openai backend: {', '.join(unknown)}; "
                         f"supported: {', '.join(sorted(_OPTION_MAP))}")
    out: JSONObject = {}
    for name, value in options.items():
        if value is not None:
            out[_OPTION_MAP[name]] = value
    if "temperature" in out:
        out["temperature"] = float(out["temperature"])
    if "seed" in out:
        out["seed"] = int(out["seed"])
    if "max_tokens" in out:
        n = int(out["max_tokens"])
        if n == -1:  # Ollama's "no limit": the server's own
            del out["max_tokens"]
        elif n <= 0:
            raise ValueError(f"num_predict must be a positive number of tokens (or -1: no limit), got {n}")
        else:
            out["max_tokens"] = n
    if isinstance(out.get("stop"), str):
        out["stop"] = [out["stop"]]
    return out


def schema_fields(form: str, schema: Schema) -> JSONObject:
    """The request fields that ask for ``schema`` in one of the :data:`SCHEMA_FORMS`."""
    if form == "json_schema":
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": "response", "schema": dict(schema)}}}
    if form == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": dict(schema)}}
    if form == "guided_json":
        return {"guided_json": dict(schema)}
    if form == "json_object":
        return {"response_format": {"type": "json_object"}}
    if form == "none":
        return {}
    raise ValueError(f"unknown schema form {form!r}; one of: {', '.join(SCHEMA_FORMS)}")


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def openai_models(base_url: str | None = None, api_key: str | None = None,
                  timeout: float = 0.5) -> list[str] | None:
    """The models the server at ``base_url`` (default :func:`openai_base_url`) lists at
    ``GET BASE/models``, sorted; None when no server answers there with a model list."""
    import httpx

    url = openai_base_url(base_url)
    try:
        with httpx.Client(timeout=timeout, trust_env=not is_local(url)) as client:
            resp = client.get(f"{url}/models", headers=_headers(openai_api_key(api_key)))
        return _model_ids(resp.json()) if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def _model_ids(doc: JSON) -> list[str] | None:
    data = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(data, list):
        return None
    return sorted(str(m["id"]) for m in data if isinstance(m, dict) and m.get("id") is not None)


def _snippet(text: str, n: int = _SNIPPET) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _refuses_form(status: int, message: str) -> bool:
    """Whether an answer may be a refusal of the schema form: a 400 or 422, or a server error that names
    the field the form is sent in (llama-cpp-python's server answers its request validation error with a
    500 naming ``response_format``)."""
    return status in (400, 422) or (status >= 500 and bool(_FORM_FIELD.search(message)))


class _ClientOptions(TypedDict):
    """The arguments of the ``httpx.Client`` / ``httpx.AsyncClient`` a generator sends with."""

    timeout: httpx.Timeout
    trust_env: bool
    headers: dict[str, str]


@dataclass(frozen=True)
class _Refusal:
    """A 400/422 answer to one schema form: the server may take another."""

    status: int
    message: str
    form: str


class OpenAIGenerator(Generator):
    """Chat with a model served by any OpenAI-compatible server (see the module docstring)."""

    backend = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float | None = None):
        if not model or not str(model).strip():
            raise ValueError("the openai backend needs a model name: --model NAME (or RAGWORKBOOK_MODEL, or "
                             "get_generator(backend='openai', model=NAME))")
        super().__init__(str(model).strip())
        self.base_url = openai_base_url(base_url)
        self.timeout = openai_timeout(timeout)
        self.__key = openai_api_key(api_key)
        self._local = is_local(self.base_url)
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        #: the schema form this server takes (None until a schema request has been answered)
        self.schema_form: str | None = None

    # --- what may be shown -------------------------------------------------------------
    @property
    def url(self) -> str:
        """The base URL as it may be shown (credentials in it replaced by ``***``)."""
        return redact_url(self.base_url)

    @property
    def identity(self) -> str:
        """``openai@<server URL>``: answers of two servers are not interchangeable (a judge's cache keeps
        them apart)."""
        return f"openai@{self.url}"

    def _scrub(self, text: str) -> str:
        """``text`` without the key or the URL's credentials."""
        if self.__key:
            text = text.replace(self.__key, "***")
        return text.replace(self.base_url, self.url)

    def __repr__(self) -> str:
        return f"<OpenAIGenerator model={self.model!r} url={self.url!r}>"

    # --- HTTP ----------------------------------------------------------------------------
    def _client_kwargs(self) -> _ClientOptions:
        import httpx

        return _ClientOptions(timeout=httpx.Timeout(self.timeout), trust_env=not self._local,
                              headers={**_headers(self.__key), "Content-Type": "application/json"})

    @property
    def client(self) -> httpx.Client:
        """The ``httpx.Client`` of the sync calls (created on first use; thread-safe)."""
        if self._client is None:
            import httpx

            with self._lock:
                if self._client is None:
                    self._client = httpx.Client(**self._client_kwargs())
        return self._client

    def _payload(self, messages: list[dict[str, str]], options: Options) -> JSONObject:
        return {"model": self.model, "messages": messages, **openai_options(options), "stream": False}

    def _forms(self, schema: Schema | None) -> list[str | None]:
        if schema is None:
            return [None]
        return [self.schema_form] if self.schema_form is not None else list(SCHEMA_FORMS)

    @staticmethod
    def _body(payload: JSONObject, form: str | None, schema: Schema | None) -> bytes:
        fields = schema_fields(form, schema) if form is not None and schema is not None else {}
        return json.dumps({**payload, **fields}, ensure_ascii=False).encode("utf-8")

    def _chat_once(self, messages: list[dict[str, str]], options: Options,
                   schema: Schema | None) -> Reply:
        payload = self._payload(messages, options)
        forms = self._forms(schema)
        refusals: list[_Refusal] = []
        for i, form in enumerate(forms):
            resp = self._post(functools.partial(self.client.post, f"{self.base_url}/chat/completions",
                                                content=self._body(payload, form, schema)))
            outcome = self._settle(resp, form, schema, refusals, more=i + 1 < len(forms))
            if isinstance(outcome, Reply):
                return outcome
            refusals.append(outcome)
        raise AssertionError("unreachable")  # pragma: no cover - the last form settles or raises

    async def _achat_once(self, messages: list[dict[str, str]], options: Options,
                          schema: Schema | None) -> Reply:
        import httpx

        payload = self._payload(messages, options)
        forms = self._forms(schema)
        refusals: list[_Refusal] = []
        async with httpx.AsyncClient(**self._client_kwargs()) as client:  # one per call: any event loop
            for i, form in enumerate(forms):
                body = self._body(payload, form, schema)
                resp = await self._apost(client, f"{self.base_url}/chat/completions", body)
                outcome = self._settle(resp, form, schema, refusals, more=i + 1 < len(forms))
                if isinstance(outcome, Reply):
                    return outcome
                refusals.append(outcome)
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(self, send: Callable[[], httpx.Response]) -> httpx.Response:
        """``send()`` (one request), again after a 429/503 as the server asks (bounded); transport
        errors translated."""
        import httpx

        for attempt in range(BUSY_RETRIES + 1):
            try:
                resp = send()
            except httpx.HTTPError as exc:
                raise self._transport_error(exc) from None
            wait = self._busy_wait(resp, attempt)
            if wait is None:
                return resp
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _apost(self, client: httpx.AsyncClient, url: str, body: bytes) -> httpx.Response:
        import asyncio

        import httpx

        for attempt in range(BUSY_RETRIES + 1):
            try:
                resp = await client.post(url, content=body)
            except httpx.HTTPError as exc:
                raise self._transport_error(exc) from None
            wait = self._busy_wait(resp, attempt)
            if wait is None:
                return resp
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _busy_wait(resp: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before asking again (None: take this answer as it is)."""
        if resp.status_code not in (429, 503) or attempt >= BUSY_RETRIES:
            return None
        try:
            wait = float(resp.headers.get("retry-after", ""))
        except ValueError:
            wait = float(attempt + 1)
        return wait if 0 <= wait <= BUSY_MAX_WAIT else None

    # --- answers and errors ------------------------------------------------------------------
    def _settle(self, resp: httpx.Response, form: str | None, schema: Schema | None,
                refusals: list[_Refusal], more: bool) -> Reply | _Refusal:
        """The reply of a successful answer (keeping the schema form that worked), a refusal of the schema
        form when another may work, or raise the error the answer means.

        A form refused with the same status and message as the form before it shows that the server
        refuses the request itself (a prompt too long for its context, say): that is the error."""
        if 200 <= resp.status_code < 300:
            reply = self._read(resp)
            if schema is not None and self.schema_form is None:
                self.schema_form = form
            return reply
        message = self._message(resp)
        if self._model_missing(resp.status_code, message):
            raise self._not_served(message)
        if form is not None and self.schema_form is None and _refuses_form(resp.status_code, message):
            refusal = _Refusal(resp.status_code, message, form)
            same = bool(refusals) and (refusals[-1].status, refusals[-1].message) == (refusal.status, message)
            if same:
                raise self._http_error(resp.status_code, message)
            if more:
                return refusal
            first = refusals[0] if refusals else refusal
            raise LLMError(f"the server at {self.url} refused every form of structured output "
                           f"({', '.join(SCHEMA_FORMS)}; model {self.model!r}): {first.form}: HTTP "
                           f"{first.status}: {first.message}; {refusal.form}: HTTP {refusal.status}: "
                           f"{refusal.message}")
        raise self._http_error(resp.status_code, message)

    def _message(self, resp: httpx.Response) -> str:
        """The server's error message: OpenAI's ``{"error": {"message"}}``, ``{"error": "..."}``,
        ``{"message"}``, FastAPI's ``{"detail"}``, else the start of the body; scrubbed."""
        try:
            doc = resp.json()
        except ValueError:
            return _snippet(self._scrub(resp.text or "(no body)"))
        msg: JSON = doc
        if isinstance(doc, dict):
            err = doc.get("error")
            if isinstance(err, dict) and err.get("message"):
                msg = err["message"]
            elif isinstance(err, str) and err:
                msg = err
            elif doc.get("message"):
                msg = doc["message"]
            elif doc.get("detail"):
                msg = doc["detail"]
        if not isinstance(msg, str):
            msg = json.dumps(msg, ensure_ascii=False)
        return _snippet(self._scrub(msg))

    @staticmethod
    def _model_missing(status: int, message: str) -> bool:
        return status in (400, 404) and "model" in message.lower() and bool(_MODEL_MISSING.search(message))

    def _not_served(self, message: str) -> ModelNotFound:
        try:
            served = self.list_models()
        except LLMError:
            served = None
        listed = (f"it serves: {', '.join(served)}" if served
                  else "it did not list its models (GET /models)")
        return ModelNotFound(f"model {self.model!r} is not served by the server at {self.url} (server said: "
                             f"{message}); {listed}. Give one of its models with --model NAME (or "
                             "RAGWORKBOOK_MODEL), or load the model on the server")

    def _http_error(self, status: int, message: str) -> LLMError:
        if status in (401, 403):
            fix = ("the key in OPENAI_API_KEY was refused: set OPENAI_API_KEY to a key this server accepts"
                   if self.__key else "it needs an API key: set OPENAI_API_KEY")
            return AuthenticationFailed(f"the server at {self.url} refused the request (HTTP {status}: "
                                        f"{message}); {fix}")
        if status in (404, 405):
            hint = ("" if self.base_url.endswith("/v1") else
                    f"; the base URL usually ends in /v1: try OPENAI_BASE_URL={self.url}/v1")
            return BackendUnavailable(f"the server at {self.url} has no chat-completions endpoint "
                                      f"({self.url}/chat/completions: HTTP {status}: {message}): set "
                                      f"OPENAI_BASE_URL to the API's base URL{hint}")
        if status == 429:
            return LLMError(f"the server at {self.url} is rate-limiting the requests (HTTP 429, model "
                            f"{self.model!r}): {message}; run fewer requests at once, or wait")
        what = "refused the request" if 400 <= status < 500 else "returned an error"
        return LLMError(f"the server at {self.url} {what} (HTTP {status}, model {self.model!r}): {message}")

    def _transport_error(self, exc: BaseException) -> LLMError:
        import httpx

        if isinstance(exc, httpx.ConnectError):
            return BackendUnavailable(f"no OpenAI-compatible server answering at {self.url} "
                                      f"(OPENAI_BASE_URL): {_START_A_SERVER}; or use another backend "
                                      "(--backend embedded)")
        server = f"the server at {self.url}"
        if isinstance(exc, httpx.TimeoutException):
            return timed_out(server, self.timeout, self.model, "--timeout", "RAGWORKBOOK_OPENAI_TIMEOUT")
        return connection_failed(server, self.model, exc, self._scrub(str(exc)))

    def _bad_reply(self, got: str) -> LLMError:
        return LLMError(f"the server at {self.url} did not answer like an OpenAI-compatible server (model "
                        f"{self.model!r}): {got}; check that OPENAI_BASE_URL points at the API's base URL "
                        "(usually ending in /v1) and not at a proxy or another service")

    def _read(self, resp: httpx.Response) -> Reply:
        """The answer of a chat completion, with the server's token counts."""
        try:
            doc = resp.json()
        except ValueError:
            raise self._bad_reply(f"got {_snippet(self._scrub(resp.text))!r}, not JSON") from None
        choices = doc.get("choices") if isinstance(doc, dict) else None
        if isinstance(doc, dict) and not choices and doc.get("error"):
            raise LLMError(f"the server at {self.url} returned an error (HTTP {resp.status_code}, model "
                           f"{self.model!r}): {self._message(resp)}")
        message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(
            choices[0], dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(content, (str, type(None))):
            raise self._bad_reply(f"got JSON without choices[0].message.content "
                                  f"({_snippet(self._scrub(json.dumps(doc, ensure_ascii=False)), 200)})")
        if content is None and message.get("refusal"):
            raise LLMError(f"the model {self.model!r} at {self.url} refused to answer: "
                           f"{_snippet(str(message['refusal']))}")
        text = strip_thinking(content or "", fix="give it a larger options['num_predict'], or turn its "
                              "thinking off on the server")
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        return Reply(text, token_count(usage.get("prompt_tokens")),
                     token_count(usage.get("completion_tokens")))

    def list_models(self) -> list[str]:
        """The models the server lists (``GET BASE/models``), sorted; errors as for a chat request."""
        resp = self._post(functools.partial(self.client.get, f"{self.base_url}/models"))
        if not 200 <= resp.status_code < 300:
            raise self._http_error(resp.status_code, self._message(resp))
        try:
            ids = _model_ids(resp.json())
        except ValueError:
            ids = None
        if ids is None:
            raise self._bad_reply(f"GET /models gave {_snippet(self._scrub(resp.text), 200)!r}, not a model "
                                  "list")
        return ids

    def close(self) -> None:
        """Close the sync client's connections (a new one is made on the next call)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
