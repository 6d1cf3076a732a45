"""The one generation interface every backend implements.

A *request* is a chat: a list of ``{"role": ..., "content": ...}`` messages
(an optional system prompt first), generation options, and an optional JSON
schema. When a schema is given the backend constrains decoding to it (Ollama's
``format``, llama.cpp's grammar) and the parsed object is returned in
``Generation.data``; output that still does not parse is retried a bounded
number of times and then raises :class:`OutputParseError` carrying every attempt.

Defaults: temperature 0 and seed 0, so the same request gives the same answer.

Retries change the request (:func:`retry_request`), because at temperature 0
the same request gives the same broken answer again. Retry number ``k`` (1, 2,
...) sends **both**:

- **the error fed back**: the original messages, then the failed output as an
  ``assistant`` message (its first :data:`FEEDBACK_CHARS` characters), then a
  ``user`` message naming the parse or schema error and asking for a short
  reply with only the JSON;
- **a raised temperature**: ``max(temperature, RETRY_TEMPERATURES[k - 1])``
  (0.5, then 0.8), with the seed moved on by ``k`` so a sampling backend draws
  a new answer.

Every attempt is kept on ``Generation.tries`` (and on the error): the options
it was sent with, the messages added to the original request, the raw output
and the error it gave. A recording stores them (``"tries"``) for every request
that needed more than one attempt.

Usage (:class:`Usage`, on ``Generation.usage`` and on every :class:`LLMError` the base
class raises from a live call): the model calls a request took (its attempts), the
prompt and completion tokens the backend itself reported, summed over the attempts,
and the seconds they took (wall time of each attempt, measured around the backend's
call, summed). A backend reports its token counts by returning a :class:`Reply` from
``_chat_once``; one that returns a plain string reports none (``None``: unknown, never
guessed). A token total is None as soon as one attempt's count is unknown (an attempt
that failed before the server answered reports none). These are the figures a ledger
of calls, tokens and seconds sums.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from ragworkbook._types import JSON
from ragworkbook.llm.request import Message, Options, Schema, Try

DEFAULT_OPTIONS: Options = {"temperature": 0.0, "seed": 0, "num_predict": 256}

#: Temperature floor of retry 1, 2, ... (later retries use the last value).
RETRY_TEMPERATURES: tuple[float, ...] = (0.5, 0.8)
#: How much of a failed output is shown back to the model on a retry.
FEEDBACK_CHARS = 300


class LLMError(RuntimeError):
    """Base class of every generation error.

    ``usage``: what the failed request cost before it failed (attempts, tokens when the
    backend reported them, seconds), set by :class:`Generator` on errors of a live call;
    None when unknown (an error raised outside a call, or replayed from a recording that
    has no counts).
    """

    usage: Usage | None = None


class BackendUnavailable(LLMError):
    """The backend cannot be used (no server answering, a package missing)."""


class ModelNotFound(LLMError):
    """The requested model is not available to the backend (message says how to get it)."""


class OutputParseError(LLMError):
    """Structured output did not parse/validate after the allowed retries.

    ``raw_outputs`` keeps every attempt's text for inspection; ``tries`` every
    attempt's options, added messages, output and error (see :func:`retry_request`).
    """

    def __init__(self, message: str, raw_outputs: Sequence[str] = (),
                 tries: Sequence[Try] = ()):
        super().__init__(message)
        self.raw_outputs = list(raw_outputs)
        self.tries: list[Try] = [Try(**t) for t in tries]


class ReplayMissError(LLMError):
    """Strict replay found no recording for a request (message names what changed)."""


#: The longest answer a generator returns, in characters: a server that ignores ``num_predict`` and
#: streams megabytes is cut off here (:class:`AnswerTooLong`) instead of filling the memory and the report.
MAX_ANSWER_CHARS = 100_000


class AnswerTooLong(LLMError):
    """The answer ran past :data:`MAX_ANSWER_CHARS` characters (a server that ignores ``num_predict``);
    the rest of it was not read."""


def answer_too_long(backend: str, model: str, size: int | None = None) -> AnswerTooLong:
    """The error for an answer over :data:`MAX_ANSWER_CHARS` (``size``: its length when known)."""
    got = f"{size:,} characters" if size is not None else f"over {MAX_ANSWER_CHARS:,} characters"
    return AnswerTooLong(f"{backend}:{model} sent an answer of {got}; answers are read up to "
                         f"{MAX_ANSWER_CHARS:,} (ragworkbook.llm.base.MAX_ANSWER_CHARS) and the rest is "
                         "dropped: the server ignores num_predict, or the model runs on; lower num_predict "
                         "or check the server")




_N = TypeVar("_N", int, float)


def timed_out(server: str, seconds: float, model: str, option: str, variable: str) -> LLMError:
    """The error of a request ``server`` ("the server at URL") did not answer within ``seconds``;
    ``option`` and ``variable`` are the command-line option and environment variable that allow longer."""
    return LLMError(f"{server} did not answer within {seconds:g} s (model {model!r}); allow longer with "
                    f"{option} SECONDS or {variable} (in Python: timeout=), or use a smaller model")


def connection_failed(server: str, model: str, exc: BaseException, shown: str | None = None) -> LLMError:
    """The error of a connection to ``server`` that failed with ``exc`` (``shown``: its text as it may be
    shown, default ``str(exc)``)."""
    return LLMError(f"the connection to {server} failed (model {model!r}): {type(exc).__name__}: "
                    f"{str(exc) if shown is None else shown}")


def _add(a: _N | None, b: _N | None) -> _N | None:
    return None if a is None or b is None else a + b


@dataclass(frozen=True)
class Usage:
    """What one request cost, by the backend's own counts, summed over its attempts.

    ``attempts``: model calls made (1, plus one per retry); ``prompt_tokens`` /
    ``completion_tokens``: the tokens the backend reported (Ollama's ``prompt_eval_count`` /
    ``eval_count``, an OpenAI-compatible server's ``usage``), None when any attempt's count is
    unknown; ``seconds``: wall time of the attempts (None: not recorded). ``a + b`` sums two
    usages; a total of which one part is unknown is unknown.
    """

    attempts: int = 1
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float | None = None

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(self.attempts + other.attempts, _add(self.prompt_tokens, other.prompt_tokens),
                     _add(self.completion_tokens, other.completion_tokens), _add(self.seconds, other.seconds))

    @property
    def total_tokens(self) -> int | None:
        """Prompt plus completion tokens (None when either is unknown)."""
        return _add(self.prompt_tokens, self.completion_tokens)

    def counts(self) -> dict[str, int | float | None]:
        """``{"prompt_tokens", "completion_tokens", "seconds"}`` as a recording stores them (seconds
        rounded to the millisecond)."""
        seconds = None if self.seconds is None else round(self.seconds, 3)
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "seconds": seconds}

    @classmethod
    def from_counts(cls, counts: Mapping[str, JSON], attempts: int = 1) -> Usage:
        """The Usage of a recording's ``"usage"`` object (see :meth:`counts`)."""
        seconds = counts.get("seconds")
        return cls(attempts, counts.get("prompt_tokens"), counts.get("completion_tokens"),
                   None if seconds is None else float(seconds))


@dataclass(frozen=True)
class Reply:
    """One attempt's raw answer with the token counts the backend reported (None: not reported).

    What a backend's ``_chat_once`` returns when it knows its counts (a plain ``str`` means it
    does not)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def token_count(value: object) -> int | None:
    """A token count a server reported, or None when it is missing or not a count (never a guess)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def build_messages(
    prompt_or_messages: str | Sequence[Message], system: str | None = None
) -> list[dict[str, str]]:
    """Normalise a prompt string or a message list, prepending ``system`` if given."""
    if isinstance(prompt_or_messages, str):
        msgs = [{"role": "user", "content": prompt_or_messages}]
    else:
        msgs = []
        for i, m in enumerate(prompt_or_messages):
            if not isinstance(m, Mapping) or "role" not in m or "content" not in m:
                raise TypeError(f"message {i} must be a mapping with 'role' and 'content', got {m!r}")
            msgs.append({"role": str(m["role"]), "content": str(m["content"])})
    if system is not None:
        msgs = [{"role": "system", "content": system}] + [m for m in msgs if m["role"] != "system"]
    return msgs


def merge_options(options: Mapping[str, JSON] | None) -> Options:
    """Default options (temperature 0, seed 0, num_predict 256) updated with ``options``."""
    merged = dict(DEFAULT_OPTIONS)
    if options:
        merged.update(options)
    return merged


def request_key(messages: Sequence[Message], options: Mapping[str, JSON],
                schema: Schema | None, model: str) -> str:
    """SHA-256 over everything that determines an answer (canonical JSON)."""
    payload = {"messages": list(messages), "options": dict(options), "schema": schema, "model": model}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class Generation:
    """One answer. ``data`` is the parsed JSON when a schema was requested."""

    text: str
    backend: str
    model: str
    data: JSON = None
    key: str = ""
    attempts: int = 1
    raw_outputs: list[str] = field(default_factory=list)
    #: every attempt: ``{"options", "added_messages", "output", "error"}`` (see :func:`retry_request`);
    #: compared, but left out of the repr (which stays as short as before)
    tries: list[Try] = field(default_factory=list, repr=False)
    # Not part of the answer: left out of repr and == so a replayed answer prints and
    # compares exactly like the live one it was recorded from.
    replayed: bool = field(default=False, repr=False, compare=False)
    #: what the request cost (attempts, tokens, seconds; :class:`Usage`): measured on a live call,
    #: read back on a replay (None when the recording holds no counts)
    usage: Usage | None = field(default=None, repr=False, compare=False)


class Generator(ABC):
    """A chat generator. Subclasses implement :meth:`_chat_once`; the base handles
    message building, defaults, schema parsing and bounded retries."""

    backend: str = "base"
    max_retries: int = 2
    #: "live" (a backend answers), "record" (live, answers saved) or "replay" (answers read back)
    mode: str = "live"

    def __init__(self, model: str):
        self.model = model

    # --- to implement -----------------------------------------------------------
    @abstractmethod
    def _chat_once(self, messages: list[dict[str, str]], options: Options,
                   schema: Schema | None) -> str | Reply:
        """Return the raw text of one completion (a :class:`Reply` when the backend knows its token
        counts)."""

    async def _achat_once(self, messages: list[dict[str, str]], options: Options,
                          schema: Schema | None) -> str | Reply:
        """Async :meth:`_chat_once` (default: runs it in a worker thread)."""
        return await asyncio.to_thread(self._chat_once, messages, options, schema)

    # --- public API --------------------------------------------------------------
    def chat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
             schema: Schema | None = None, options: Mapping[str, JSON] | None = None) -> Generation:
        """Generate one answer; with ``schema``, parse and validate it (bounded retries)."""
        run = _Attempts(self, prompt_or_messages, system, schema, options)
        for msgs, opts in run:
            with run.timed():
                reply = self._chat_once(msgs, opts, schema)
            if (answer := run.answered(reply)) is not None:
                return answer
        raise run.parse_error()

    async def achat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
                    schema: Schema | None = None, options: Mapping[str, JSON] | None = None) -> Generation:
        """Async :meth:`chat`: same request, same answer, same retries."""
        run = _Attempts(self, prompt_or_messages, system, schema, options)
        for msgs, opts in run:
            with run.timed():
                reply = await self._achat_once(msgs, opts, schema)
            if (answer := run.answered(reply)) is not None:
                return answer
        raise run.parse_error()

    # --- shared by chat/achat ----------------------------------------------------
    def _generation(self, tries: list[Try], schema: Schema | None,
                    key: str, usage: Usage | None = None) -> Generation:
        """The Generation for the last (successful) attempt."""
        text = tries[-1]["output"]
        data = parse_json_output(text, schema) if schema is not None else None
        return Generation(text=text, backend=self.backend, model=self.model, data=data, key=key,
                          attempts=len(tries), raw_outputs=[t["output"] for t in tries], tries=tries,
                          usage=usage)

    def _parse_error(self, tries: list[Try], usage: Usage | None = None) -> OutputParseError:
        exc = OutputParseError(
            f"{self.backend}:{self.model} output did not match the JSON schema after "
            f"{len(tries)} attempts ({tries[-1]['error']}); each retry fed the error back and raised "
            "the temperature; every attempt is kept on .tries and .raw_outputs. Try a larger "
            "num_predict (a truncated answer is invalid JSON), a simpler schema or a larger model.",
            [t["output"] for t in tries], tries,
        )
        exc.usage = usage
        return exc

    def __repr__(self) -> str:
        return f"<{type(self).__name__} backend={self.backend!r} model={self.model!r}>"


class _Attempts:
    """The attempts of one :meth:`Generator.chat` / :meth:`Generator.achat` call: iterating gives each
    attempt's ``(messages, options)`` (see :func:`retry_request`); the caller sends it and reports the
    reply (:meth:`answered`) or the error (:meth:`failed`)."""

    def __init__(self, generator: Generator, prompt_or_messages: str | Sequence[Message],
                 system: str | None, schema: Schema | None, options: Mapping[str, JSON] | None):
        self.generator = generator
        self.schema = schema
        self.messages = build_messages(prompt_or_messages, system)
        self.options = merge_options(options)
        self.key = request_key(self.messages, self.options, schema, generator.model)
        self.tries: list[Try] = []
        self.usage: Usage | None = None
        self._added: list[dict[str, str]] = []
        self._sent: Options = self.options
        self._start = 0.0

    def __iter__(self) -> Iterator[tuple[list[dict[str, str]], Options]]:
        retries = self.generator.max_retries if self.schema is not None else 0
        for attempt in range(1 + retries):
            msgs, self._sent, self._added = retry_request(self.messages, self.options, attempt,
                                                          self.tries[-1] if self.tries else None)
            yield msgs, self._sent

    @contextmanager
    def timed(self) -> Iterator[None]:
        """Time one attempt; an :class:`LLMError` it raises leaves with the cost of the request so far
        (the failed attempt's tokens unknown)."""
        self._start = time.perf_counter()
        try:
            yield
        except LLMError as exc:
            _with_usage(exc, self.usage, time.perf_counter() - self._start)
            raise

    def answered(self, reply: str | Reply) -> Generation | None:
        """The Generation when ``reply`` (of the attempt just timed) is usable; None when it fails the
        schema (retry); raises :class:`AnswerTooLong` for an answer over :data:`MAX_ANSWER_CHARS`."""
        gen = self.generator
        self.usage = _spent(self.usage, reply, time.perf_counter() - self._start)
        text = _text(reply)
        if len(text) > MAX_ANSWER_CHARS:
            too_long = answer_too_long(gen.backend, gen.model, len(text))
            too_long.usage = self.usage
            raise too_long
        self.tries.append(_try(self._sent, self._added, text, self.schema))
        if self.tries[-1]["error"] is None:
            return gen._generation(self.tries, self.schema, self.key, self.usage)
        return None

    def parse_error(self) -> OutputParseError:
        """The error once every attempt failed the schema."""
        return self.generator._parse_error(self.tries, self.usage)


def retry_request(messages: list[dict[str, str]], options: Options, attempt: int,
                  last: Try | None) -> tuple[list[dict[str, str]], Options, list[dict[str, str]]]:
    """The messages and options of attempt number ``attempt`` (0 = the request as asked).

    A retry (``attempt >= 1``) changes the request in two ways: the failed output
    of the previous attempt (``last``, a ``tries`` entry) is shown back with its
    error, and the temperature is raised to at least ``RETRY_TEMPERATURES[attempt - 1]``
    (the seed moves on by ``attempt``). Returns ``(messages, options, added)``,
    ``added`` being the messages appended to the original ones.
    """
    if attempt == 0:
        return messages, options, []
    if last is None:
        raise ValueError("a retry needs the previous attempt (its output and error)")
    output = str(last["output"])
    shown = output if len(output) <= FEEDBACK_CHARS else output[:FEEDBACK_CHARS] + " [...]"
    added = [
        {"role": "assistant", "content": shown},
        {"role": "user", "content": (
            f"That reply could not be used: {last['error']}. Reply again with only the JSON "
            "object in the requested format, and keep every text in it short so the reply is "
            "complete."
        )},
    ]
    floor = RETRY_TEMPERATURES[min(attempt, len(RETRY_TEMPERATURES)) - 1]
    opts = {**options, "temperature": max(float(options.get("temperature", 0.0)), floor),
            "seed": int(options.get("seed", 0)) + attempt}
    return messages + added, opts, added


def _text(reply: str | Reply) -> str:
    return reply.text if isinstance(reply, Reply) else reply


def _spent(usage: Usage | None, reply: str | Reply, seconds: float) -> Usage:
    """``usage`` plus one answered attempt: its reported counts (none for a plain string) and seconds."""
    if isinstance(reply, Reply):
        this = Usage(1, token_count(reply.prompt_tokens), token_count(reply.completion_tokens), seconds)
    else:
        this = Usage(1, None, None, seconds)
    return this if usage is None else usage + this


def _with_usage(exc: LLMError, usage: Usage | None, seconds: float) -> None:
    """Set on ``exc`` the cost of its request: the attempts so far plus the failed one (its tokens
    unknown)."""
    failed = Usage(1, None, None, seconds)
    exc.usage = failed if usage is None else usage + failed


def _try(options: Options, added: list[dict[str, str]], output: str, schema: Schema | None) -> Try:
    """One attempt as kept on ``Generation.tries``: what was added to the request, and what came back."""
    error = None
    if schema is not None:
        try:
            parse_json_output(output, schema)
        except ValueError as exc:
            error = str(exc)
    return Try(options=dict(options), added_messages=[dict(m) for m in added], output=output, error=error)


def parse_json_output(text: str, schema: Schema) -> JSON:
    """Parse ``text`` as JSON and validate it against ``schema``; ValueError if either fails."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    import jsonschema

    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        raise ValueError(f"JSON does not match the schema: {exc.message}") from None
    return data
