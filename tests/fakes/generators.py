"""A deterministic stand-in for a live generation backend (no model, no network)."""

from __future__ import annotations

import json

from ragworkbook.llm.base import Generator


class Echo(Generator):
    """A deterministic stand-in for a live backend: answers with the last user message reversed."""

    backend = "echo"

    def __init__(self, model="echo-1"):
        super().__init__(model)
        self.calls = 0

    def _chat_once(self, messages, options, schema):
        self.calls += 1
        text = messages[-1]["content"]
        if schema is not None:
            return json.dumps({"n": len(text)}) if "bad" not in text else "not json"
        return text[::-1] + f" (seed {options['seed']})"
