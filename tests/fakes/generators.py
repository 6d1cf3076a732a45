"""A deterministic stand-in for a live generation backend (no model, no network)."""

from __future__ import annotations

import json

from ragworkbook.llm.base import Generator


class Echo(Generator):
    """A deterministic stand-in for a live backend: answers with the request's (first) user message
    reversed; a schema request whose message says "bad" never parses, retries included."""

    backend = "echo"

    def __init__(self, model="echo-1"):
        super().__init__(model)
        self.calls = 0

    def _chat_once(self, messages, options, schema):
        self.calls += 1
        text = next(m["content"] for m in messages if m["role"] == "user")  # not a retry's feedback
        if schema is not None:
            return json.dumps({"n": len(text)}) if "bad" not in text else "not json"
        return text[::-1] + f" (seed {options['seed']})"
