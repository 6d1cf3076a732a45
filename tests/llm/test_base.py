"""The generation interface: message building, defaults, schema parsing, bounded retries (sync and async)."""

from __future__ import annotations

import asyncio

import pytest

from ragworkbook.llm import (
    DEFAULT_OPTIONS,
    Generation,
    Generator,
    OutputParseError,
    default_model,
    request_key,
)
from ragworkbook.llm.base import build_messages, merge_options

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class Scripted(Generator):
    """Answers from a list, one per call; records the options of each call."""

    backend = "scripted"

    def __init__(self, outputs):
        super().__init__("scripted-model")
        self.outputs = list(outputs)
        self.calls = []

    def _chat_once(self, messages, options, schema):
        self.calls.append(options)
        return self.outputs.pop(0)


def test_defaults_are_greedy_and_seeded():
    assert DEFAULT_OPTIONS == {"temperature": 0.0, "seed": 0, "num_predict": 256}
    assert merge_options({"num_predict": 8}) == {"temperature": 0.0, "seed": 0, "num_predict": 8}


def test_build_messages_puts_system_first_and_validates():
    msgs = build_messages([{"role": "user", "content": "q"}], system="s")
    assert msgs == [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    with pytest.raises(TypeError, match="message 0 must be a mapping with 'role' and 'content'"):
        build_messages([{"content": "no role"}])


def test_request_key_changes_with_every_part():
    m = [{"role": "user", "content": "q"}]
    base = request_key(m, DEFAULT_OPTIONS, None, "m")
    assert base == request_key(list(m), dict(DEFAULT_OPTIONS), None, "m")
    assert base != request_key([{"role": "user", "content": "q2"}], DEFAULT_OPTIONS, None, "m")
    assert base != request_key(m, {**DEFAULT_OPTIONS, "seed": 1}, None, "m")
    assert base != request_key(m, DEFAULT_OPTIONS, SCHEMA, "m")
    assert base != request_key(m, DEFAULT_OPTIONS, None, "m2")


def test_plain_answer_is_not_parsed():
    g = Scripted(["hello"]).chat("hi")
    assert (g.text, g.data, g.attempts, g.raw_outputs) == ("hello", None, 1, ["hello"])
    assert g.backend == "scripted" and g.model == "scripted-model" and len(g.key) == 64


def test_schema_retry_then_success_changes_seed():
    gen = Scripted(["not json", '{"n": "x"}', '{"n": 3}'])
    g = gen.chat("count", schema=SCHEMA)
    assert g.data == {"n": 3} and g.attempts == 3
    assert g.raw_outputs == ["not json", '{"n": "x"}', '{"n": 3}']
    assert [c["seed"] for c in gen.calls] == [0, 1, 2]


def test_schema_failure_keeps_every_raw_output():
    gen = Scripted(["a", "b", "c", "never used"])
    with pytest.raises(OutputParseError, match="did not match the JSON schema after 3 attempts") as ei:
        gen.chat("count", schema=SCHEMA)
    assert ei.value.raw_outputs == ["a", "b", "c"]
    assert "num_predict" in str(ei.value)  # says what to try


def test_async_chat_has_the_same_semantics():
    gen = Scripted(["bad", '{"n": 1}'])
    g = asyncio.run(gen.achat("count", schema=SCHEMA))
    assert g.data == {"n": 1} and g.attempts == 2
    with pytest.raises(OutputParseError):
        asyncio.run(Scripted(["x", "y", "z"]).achat("count", schema=SCHEMA))


def test_replayed_flag_is_not_part_of_equality_or_repr():
    a = Generation(text="t", backend="embedded", model="m")
    b = Generation(text="t", backend="embedded", model="m", replayed=True)
    assert a == b and repr(a) == repr(b) and "replayed" not in repr(b)


def test_default_models():
    assert default_model("ollama") == "qwen3:4b"
    assert default_model("embedded") == "SmolLM2-135M-Instruct.Q4_1"
    with pytest.raises(ValueError, match="unknown backend 'gpt'"):
        default_model("gpt")
