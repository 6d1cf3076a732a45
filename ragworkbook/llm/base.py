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
    # Not part of the answer: left out of repr and == so a replayed answer prints and
    # compares exactly like the live one it was recorded from.
    replayed: bool = field(default=False, repr=False, compare=False)


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
    def _chat_once(self, messages: list[dict[str, str]], options: dict[str, Any],
                   schema: Mapping[str, Any] | None) -> str:
        """Return the raw text of one completion."""

    async def _achat_once(self, messages: list[dict[str, str]], options: dict[str, Any],
                          schema: Mapping[str, Any] | None) -> str:
        """Async :meth:`_chat_once` (default: runs it in a worker thread)."""
        return await asyncio.to_thread(self._chat_once, messages, options, schema)

    # --- public API --------------------------------------------------------------
    def chat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
             schema: Mapping[str, Any] | None = None,
             options: Mapping[str, Any] | None = None) -> Generation:
        """Generate one answer; with ``schema``, parse and validate it (bounded retries)."""
        messages, opts, key = self._prepare(prompt_or_messages, system, schema, options)
        raws: list[str] = []
        for attempt in range(self._attempts(schema)):
            raws.append(self._chat_once(messages, _attempt_options(opts, attempt), schema))
            gen = self._accept(raws, schema, key)
            if gen is not None:
                return gen
        raise self._parse_error(raws, schema)

    async def achat(self, prompt_or_messages: str | Sequence[Message], *, system: str | None = None,
                    schema: Mapping[str, Any] | None = None,
                    options: Mapping[str, Any] | None = None) -> Generation:
        """Async :meth:`chat`: same request, same answer, same retries."""
        messages, opts, key = self._prepare(prompt_or_messages, system, schema, options)
        raws: list[str] = []
        for attempt in range(self._attempts(schema)):
            raws.append(await self._achat_once(messages, _attempt_options(opts, attempt), schema))
            gen = self._accept(raws, schema, key)
            if gen is not None:
                return gen
        raise self._parse_error(raws, schema)

    # --- shared by chat/achat ----------------------------------------------------
    def _prepare(self, prompt_or_messages: str | Sequence[Message], system: str | None,
                 schema: Mapping[str, Any] | None, options: Mapping[str, Any] | None
                 ) -> tuple[list[dict[str, str]], dict[str, Any], str]:
        messages = build_messages(prompt_or_messages, system)
        opts = merge_options(options)
        return messages, opts, request_key(messages, opts, schema, self.model)

    def _attempts(self, schema: Mapping[str, Any] | None) -> int:
        return 1 + (self.max_retries if schema is not None else 0)

    def _accept(self, raws: list[str], schema: Mapping[str, Any] | None, key: str) -> Generation | None:
        """The Generation for the last raw output, or None when it does not parse."""
        text = raws[-1]
        if schema is None:
            return Generation(text=text, backend=self.backend, model=self.model, key=key,
                              attempts=len(raws), raw_outputs=list(raws))
        try:
            data = parse_json_output(text, schema)
        except ValueError:
            return None
        return Generation(text=text, backend=self.backend, model=self.model, data=data,
                          key=key, attempts=len(raws), raw_outputs=list(raws))

    def _parse_error(self, raws: list[str], schema: Mapping[str, Any] | None) -> OutputParseError:
        try:
            parse_json_output(raws[-1], schema or {})
            reason = "unknown"
        except ValueError as exc:
            reason = str(exc)
        return OutputParseError(
            f"{self.backend}:{self.model} output did not match the JSON schema after "
            f"{len(raws)} attempts ({reason}); raw outputs kept on .raw_outputs. Try a larger "
            "num_predict (a truncated answer is invalid JSON) or a simpler schema.",
            raws,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} backend={self.backend!r} model={self.model!r}>"


def _attempt_options(opts: dict[str, Any], attempt: int) -> dict[str, Any]:
    """Options for retry number ``attempt``: a retry changes the seed so a sampling
    backend can give a different answer (at temperature 0 it usually does not)."""
    return opts if attempt == 0 else {**opts, "seed": int(opts.get("seed", 0)) + attempt}


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
