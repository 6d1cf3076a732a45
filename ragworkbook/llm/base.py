"""The one generation interface every backend implements.

A *request* is a chat: a list of ``{"role": ..., "content": ...}`` messages
(an optional system prompt first), generation options, and an optional JSON
schema. When a schema is given the backend constrains decoding to it (Ollama's
``format``, llama.cpp's grammar) and the parsed object is returned in
``Generation.data``; output that still does not parse is retried a bounded
number of times and then raises :class:`OutputParseError` carrying every raw
output.

Defaults: temperature 0 and seed 0, so the same request gives the same answer.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_OPTIONS: dict[str, Any] = {"temperature": 0.0, "seed": 0, "num_predict": 256}


class LLMError(RuntimeError):
    """Base class of every generation error."""


class BackendUnavailable(LLMError):
    """The backend cannot be used (no server answering, a package missing)."""


class ModelNotFound(LLMError):
    """The requested model is not available to the backend (message says how to get it)."""


class OutputParseError(LLMError):
    """Structured output did not parse/validate after the allowed retries.

    ``raw_outputs`` keeps every attempt's text for inspection.
    """

    def __init__(self, message: str, raw_outputs: Sequence[str] = ()):
        super().__init__(message)
        self.raw_outputs = list(raw_outputs)


class ReplayMissError(LLMError):
    """Strict replay found no recording for a request (message names what changed)."""


Message = Mapping[str, str]


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


def merge_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Default options (temperature 0, seed 0, num_predict 256) updated with ``options``."""
    merged = dict(DEFAULT_OPTIONS)
    if options:
        merged.update(options)
    return merged


def request_key(messages: Sequence[Message], options: Mapping[str, Any],
                schema: Mapping[str, Any] | None, model: str) -> str:
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
    data: Any = None
    key: str = ""
    attempts: int = 1
    raw_outputs: list[str] = field(default_factory=list)
    replayed: bool = False


class Generator(ABC):
    """A chat generator. Subclasses implement :meth:`_chat_once`; the base handles
    message building, defaults, schema parsing and bounded retries."""

    backend: str = "base"
    max_retries: int = 2

    def __init__(self, model: str):
        self.model = model

    # --- to implement -----------------------------------------------------------
    @abstractmethod
    def _chat_once(self, messages: list[dict[str, str]], options: dict[str, Any],
                   schema: Mapping[str, Any] | None) -> str:
        """Return the raw text of one completion."""

    # --- public API --------------------------------------------------------------
    def chat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
             schema: Mapping[str, Any] | None = None,
             options: Mapping[str, Any] | None = None) -> Generation:
        """Generate one answer; with ``schema``, parse and validate it (bounded retries)."""
        messages = build_messages(prompt_or_messages, system)
        opts = merge_options(options)
        key = request_key(messages, opts, schema, self.model)
        raws: list[str] = []
        attempts = 1 + (self.max_retries if schema is not None else 0)
        last_err: Exception | None = None
        for attempt in range(attempts):
            # A retry changes the seed so a deterministic backend can give a different answer.
            o = opts if attempt == 0 else {**opts, "seed": int(opts.get("seed", 0)) + attempt}
            text = self._chat_once(messages, o, schema)
            raws.append(text)
            if schema is None:
                return Generation(text=text, backend=self.backend, model=self.model, key=key,
                                  attempts=1, raw_outputs=raws)
            try:
                data = parse_json_output(text, schema)
            except ValueError as exc:
                last_err = exc
                continue
            return Generation(text=text, backend=self.backend, model=self.model, data=data,
                              key=key, attempts=attempt + 1, raw_outputs=raws)
        raise OutputParseError(
            f"{self.backend}:{self.model} output did not match the JSON schema after "
            f"{attempts} attempts ({last_err}); raw outputs kept on .raw_outputs",
            raws,
        )

    async def achat(self, prompt_or_messages: str | Sequence[Message], **kwargs: Any) -> Generation:
        """Async :meth:`chat` (default: runs :meth:`chat` in a worker thread)."""
        return await asyncio.to_thread(self.chat, prompt_or_messages, **kwargs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} backend={self.backend!r} model={self.model!r}>"


def parse_json_output(text: str, schema: Mapping[str, Any]) -> Any:
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
