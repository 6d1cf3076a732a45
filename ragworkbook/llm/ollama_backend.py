"""The Ollama backend: the official ``ollama`` Python client talking to an Ollama server.

- Server: ``host=`` or ``$OLLAMA_HOST`` (default ``http://127.0.0.1:11434``),
  normalised by :func:`ragworkbook.llm.host.ollama_host`. Start one with ``ollama serve``.
  A server on this machine (loopback) is reached directly, never through ``http_proxy``
  (:func:`ragworkbook.llm.host.client_options`): prompts stay on the machine.
- Model: default ``qwen3:4b``; get it with ``ollama pull qwen3:4b``.
- Options go to Ollama as they are (``temperature``, ``seed``, ``num_predict``,
  ``top_k``, ``repeat_penalty``, ...), except that ``repeat_penalty`` defaults to
  1.0 instead of Ollama's 1.1: the penalty changes temperature-0 answers, and
  with it off both live backends do plain greedy decoding for the same request.
- A JSON schema is sent as ``format=<schema>`` (Ollama's structured outputs).
- ``stream=True`` (the default) reads the answer as NDJSON chunks, so the read
  timeout applies between chunks rather than to the whole answer; an error the
  server sends mid-stream raises :class:`LLMError` with the server's message.
- Thinking models (qwen3): ``think=False`` (the default) asks Ollama to answer
  without a thinking phase, so the answer gets the whole ``num_predict`` budget
  (with thinking on, qwen3 can spend 256 tokens before answering). If a server
  refuses the ``think`` field for a model ("does not support thinking"), the
  request is sent again without it. ``think=None`` sends nothing (the server's
  default: qwen3 thinks); ``think=True`` asks for thinking. A
  ``<think>...</think>`` preamble in the content is removed; an answer cut off
  while still thinking raises :class:`LLMError` saying so. The returned text is
  stripped of surrounding whitespace.
- Timeout: ``timeout=`` seconds, else ``$RAGWORKBOOK_OLLAMA_TIMEOUT``, else 300 s
  (:func:`ragworkbook.llm.host.ollama_timeout`); the commands that talk to a server take
  ``--ollama-timeout``. It bounds the connection and each read (each chunk when
  streaming).
- Usage: the token counts of the answer are the server's own, ``prompt_eval_count`` and
  ``eval_count`` of its final part (None when the server leaves one out);
  ``Generation.usage.seconds`` is the wall time of the call (see :class:`~ragworkbook.llm.base.Usage`).
- Sync calls use ``ollama.Client``; :meth:`OllamaGenerator.achat` uses
  ``ollama.AsyncClient`` (one per call, so it works under any event loop).

Errors: no server -> :class:`BackendUnavailable` (says ``ollama serve``), model
not pulled -> :class:`ModelNotFound` (says ``ollama pull MODEL``), any other
server error -> :class:`LLMError` with the server's message and HTTP status. A
reply that is not Ollama's (not JSON, e.g. a proxy's HTML page, or JSON of
another shape), a stream that breaks off or ends before its final ``done`` part,
and a timeout are :class:`LLMError` too, naming the server and what came back:
errors of one request, which a judge counts as a failed judgment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, TypedDict

from ragworkbook._types import JSON
from ragworkbook.llm.base import (
    MAX_ANSWER_CHARS,
    BackendUnavailable,
    Generator,
    LLMError,
    ModelNotFound,
    Reply,
    answer_too_long,
    connection_failed,
    timed_out,
    token_count,
)
from ragworkbook.llm.host import client_options, ollama_host, ollama_timeout
from ragworkbook.llm.request import Options, Schema

if TYPE_CHECKING:
    import ollama

DEFAULT_TIMEOUT = 300.0
_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)
#: What the client raises when it cannot read a reply: not JSON (``json.JSONDecodeError``, a
#: ValueError), JSON that is not a reply (pydantic's ValidationError is a ValueError; a list gives a
#: TypeError or an AttributeError).
_REPLY_ERRORS = (ValueError, TypeError, AttributeError)
_SNIPPET = 200


def _request_errors() -> tuple[type[BaseException], ...]:
    import httpx
    import ollama

    return (ConnectionError, ollama.ResponseError, httpx.HTTPError)


def _content(part: ollama.ChatResponse) -> str:
    """The text of one part of an answer (thinking included: it counts toward the cap too)."""
    message = getattr(part, "message", None)
    return (getattr(message, "content", None) or "") + (getattr(message, "thinking", None) or "")


def _snippet(text: str, n: int = _SNIPPET) -> str:
    """``text`` for an error message: one line, at most ``n`` characters, quoted."""
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[: n - 3] + "...")


def _require_ollama() -> ModuleType:
    try:
        import ollama
    except ImportError as exc:
        raise BackendUnavailable(
            f"the ollama backend needs the ollama client: `pip install ollama` ({exc})"
        ) from exc
    return ollama


def ollama_options(options: Mapping[str, JSON]) -> Options:
    """The ``options`` sent to Ollama: ours, with ``repeat_penalty`` 1.0 unless set."""
    opts = {k: v for k, v in options.items() if v is not None}
    opts.setdefault("repeat_penalty", 1.0)
    return opts


#: What to do about an answer cut off while thinking, on Ollama.
THINKING_FIX = "pass think=False (get_generator(..., think=False)) or a larger options['num_predict']"


def strip_thinking(text: str, fix: str = THINKING_FIX) -> str:
    """Drop a leading ``<think>...</think>`` block and surrounding whitespace.

    Raises :class:`LLMError` when the text is an unfinished ``<think>`` block (the
    token budget ran out before the answer), saying ``fix``.
    """
    if text.lstrip().startswith("<think>") and "</think>" not in text:
        raise LLMError(f"the model used the whole num_predict budget thinking and gave no answer: {fix}")
    return _THINK.sub("", text, count=1).strip()


class _ChatRequest(TypedDict, total=False):
    """The arguments of one ``ollama.Client.chat`` call."""

    model: str
    messages: list[dict[str, str]]
    options: Options
    format: JSON
    stream: bool
    think: bool | None


class OllamaGenerator(Generator):
    """Chat with a model served by Ollama, through the official client."""

    backend = "ollama"

    def __init__(self, model: str, *, host: str | None = None, stream: bool = True,
                 timeout: float | None = None, think: bool | None = False):
        super().__init__(model)
        self.host = ollama_host(host)
        self.stream = stream
        self.timeout = ollama_timeout(timeout)
        self.think = think
        self._send_think = think is not None
        self._client: ollama.Client | None = None

    @property
    def identity(self) -> str:
        """``ollama@<server URL>``: answers of two servers are not interchangeable (a judge's cache
        keeps them apart)."""
        return f"ollama@{self.host}"

    # --- clients -----------------------------------------------------------------
    @property
    def client(self) -> ollama.Client:
        """The ``ollama.Client`` (created on first use)."""
        if self._client is None:
            self._client = _require_ollama().Client(host=self.host, timeout=self.timeout,
                                                    **client_options(self.host))
        return self._client

    def _request(self, messages: list[dict[str, str]], options: Options,
                 schema: Schema | None) -> _ChatRequest:
        req: _ChatRequest = {"model": self.model, "messages": messages, "options": ollama_options(options),
               "format": dict(schema) if schema is not None else None, "stream": self.stream}
        if self._send_think:
            req["think"] = self.think
        return req

    def _think_refused(self, exc: BaseException) -> bool:
        """True (and stop sending ``think``) when the server refused the think field for this model."""
        import ollama

        if (isinstance(exc, ollama.ResponseError) and self._send_think and not self.think
                and "does not support thinking" in str(exc.error)):
            self._send_think = False
            return True
        return False

    # --- error translation -----------------------------------------------------------
    def _failure(self, exc: BaseException) -> LLMError | None:
        """The error a failed request means; None when it is to be sent again (without ``think``,
        which the model refused)."""
        if isinstance(exc, _REPLY_ERRORS):  # the client could not read the reply
            return self._bad_reply(exc)
        if self._think_refused(exc):
            return None
        return self._translate(exc)

    def _translate(self, exc: BaseException) -> LLMError:
        import httpx
        import ollama

        if isinstance(exc, (ConnectionError, httpx.ConnectError)):
            return BackendUnavailable(
                f"no Ollama server answering at {self.host}: start one with `ollama serve` (or point "
                "OLLAMA_HOST at a running server), or use the embedded model: RAGWORKBOOK_BACKEND=embedded"
            )
        if isinstance(exc, ollama.ResponseError):
            msg = str(exc.error)
            if exc.status_code == 404 and "not found" in msg.lower():
                return ModelNotFound(
                    f"model {self.model!r} is not available on the Ollama server at {self.host} "
                    f"(server said: {msg}); pull it with `ollama pull {self.model}`"
                )
            status = f"HTTP {exc.status_code}" if exc.status_code and exc.status_code > 0 else "mid-stream"
            shown = msg if len(msg) <= _SNIPPET else _snippet(msg)
            return LLMError(f"the Ollama server at {self.host} returned an error ({status}, model "
                            f"{self.model!r}): {shown}")
        server = f"the Ollama server at {self.host}"
        if isinstance(exc, httpx.TimeoutException):
            return timed_out(server, self.timeout, self.model, "--ollama-timeout",
                             "RAGWORKBOOK_OLLAMA_TIMEOUT")
        if isinstance(exc, httpx.HTTPError):
            return connection_failed(server, self.model, exc)
        return LLMError(f"the Ollama request failed: {type(exc).__name__}: {exc}")

    # --- generation -------------------------------------------------------------------
    def _chat_once(self, messages: list[dict[str, str]], options: Options,
                   schema: Schema | None) -> Reply:
        for _ in range(2):
            try:
                resp = self.client.chat(**self._request(messages, options, schema))
                return self._reply([resp] if not self.stream else self._parts(resp))
            except (*_REPLY_ERRORS, *_request_errors()) as exc:
                if (error := self._failure(exc)) is not None:
                    raise error from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _achat_once(self, messages: list[dict[str, str]], options: Options,
                          schema: Schema | None) -> Reply:
        client = _require_ollama().AsyncClient(host=self.host, timeout=self.timeout,
                                               **client_options(self.host))
        try:
            for _ in range(2):
                try:
                    resp = await client.chat(**self._request(messages, options, schema))
                    if not self.stream:
                        return self._reply([resp])
                    parts, size = [], 0
                    async for part in resp:
                        parts.append(part)
                        size += len(_content(part))
                        if size > MAX_ANSWER_CHARS:
                            raise answer_too_long(self.backend, self.model)
                    return self._reply(parts)
                except (*_REPLY_ERRORS, *_request_errors()) as exc:
                    if (error := self._failure(exc)) is not None:
                        raise error from None
            raise AssertionError("unreachable")  # pragma: no cover
        finally:
            await client.close()

    def _parts(self, stream: Iterable[ollama.ChatResponse]) -> list[ollama.ChatResponse]:
        """The parts of a streamed answer, read until it is done or runs past
        :data:`~ragworkbook.llm.base.MAX_ANSWER_CHARS` (AnswerTooLong: the rest is never read)."""
        parts, size = [], 0
        try:
            for part in stream:
                parts.append(part)
                size += len(_content(part))
                if size > MAX_ANSWER_CHARS:
                    raise answer_too_long(self.backend, self.model)
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()
        return parts

    def _reply(self, parts: list[ollama.ChatResponse]) -> Reply:
        """The answer of a stream's parts (or of the one reply), thinking stripped, with the server's
        token counts (its final part's ``prompt_eval_count`` and ``eval_count``)."""
        text = strip_thinking(self._joined(parts))
        return Reply(text, token_count(getattr(parts[-1], "prompt_eval_count", None)),
                     token_count(getattr(parts[-1], "eval_count", None)))

    def _joined(self, parts: list[ollama.ChatResponse]) -> str:
        """The text of an answer (the parts of a stream, or the one reply); LLMError when it ended
        before its final part (``"done": true``)."""
        if not parts or not getattr(parts[-1], "done", False):
            how = f"{len(parts)} streamed parts, none marked done" if self.stream else "not marked done"
            raise LLMError(
                f"the answer of the Ollama server at {self.host} (model {self.model!r}) ended before it "
                f"was complete ({how}); the server may have restarted or run out of memory: see its log, "
                "then run again"
            )
        return "".join(part.message.content or "" for part in parts)

    def _bad_reply(self, exc: BaseException) -> LLMError:
        """The error for a reply the client could not read (not JSON, or JSON of another shape)."""
        doc = getattr(exc, "doc", None)  # json.JSONDecodeError keeps the text it failed on
        if isinstance(doc, str):
            got = f"got {_snippet(doc)} ({exc})"
        else:
            got = f"got JSON the client cannot read ({type(exc).__name__}: {_snippet(str(exc))})"
        return LLMError(
            f"the server at {self.host} did not answer like an Ollama server (model {self.model!r}): "
            f"{got}; check that OLLAMA_HOST points at `ollama serve` and not at a proxy or another service"
        )

    def list_models(self) -> list[str]:
        """Names of the models the server has pulled (``GET /api/tags``)."""
        try:
            return sorted(m.model for m in self.client.list().models if m.model)
        except _REPLY_ERRORS as exc:
            raise self._bad_reply(exc) from None
        except _request_errors() as exc:
            raise self._translate(exc) from None

    def __repr__(self) -> str:
        return f"<OllamaGenerator model={self.model!r} host={self.host!r}>"
