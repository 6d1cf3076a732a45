"""Retries that can succeed: each retry changes the request (error fed back, temperature raised),
every attempt is kept on the answer and in the recording, and replays as it was."""

from __future__ import annotations

import asyncio
import json

import pytest
from fakes.generators import Echo

from ragworkbook.judging.judge import Judge
from ragworkbook.llm.base import (
    FEEDBACK_CHARS,
    RETRY_TEMPERATURES,
    Generator,
    OutputParseError,
    request_key,
    retry_request,
)
from ragworkbook.llm.replay import RecordingGenerator, ReplayGenerator

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class Greedy(Generator):
    """Deterministic in its request like a temperature-0 model: the same request gives the same
    output. It answers with JSON only when it has been told what was wrong (a retry's feedback)."""

    backend = "greedy"

    def __init__(self):
        super().__init__("greedy-1")
        self.requests = []

    def _chat_once(self, messages, options, schema):
        self.requests.append((messages, options))
        if any(m["role"] == "assistant" for m in messages):  # its failed output was shown back to it
            return '{"n": 7}'
        return '{"n": 7, "reason": "the answer was cut off at the token li'  # truncated JSON


def test_a_retry_differs_from_the_first_attempt_and_succeeds():
    gen = Greedy()
    g = gen.chat("count", schema=SCHEMA)
    assert g.data == {"n": 7} and g.attempts == 2
    (m0, o0), (m1, o1) = gen.requests
    assert m1 != m0 and o1 != o0
    assert request_key(m0, o0, SCHEMA, gen.model) != request_key(m1, o1, SCHEMA, gen.model)
    # what changed: the failed output and its error are fed back ...
    assert m1[: len(m0)] == m0
    assert m1[len(m0)] == {"role": "assistant", "content": g.raw_outputs[0]}
    assert m1[-1]["role"] == "user" and "not valid JSON" in m1[-1]["content"]
    # ... and the temperature is raised, the seed moved on
    assert (o0["temperature"], o1["temperature"]) == (0.0, RETRY_TEMPERATURES[0])
    assert (o0["seed"], o1["seed"]) == (0, 1)
    # every attempt is kept on the answer
    assert [t["error"] is None for t in g.tries] == [False, True]
    assert g.tries[0]["added_messages"] == [] and g.tries[1]["added_messages"] == m1[len(m0):]
    assert g.tries[1]["options"] == o1 and g.tries[0]["output"] == g.raw_outputs[0]


def test_the_temperature_floor_rises_per_retry_and_never_lowers_a_higher_one():
    msgs = [{"role": "user", "content": "q"}]
    last = {"output": "x", "error": "not valid JSON: Expecting value"}
    temps = [retry_request(msgs, {"temperature": 0.0, "seed": 3}, a, last)[1]["temperature"]
             for a in (1, 2, 3)]
    assert temps == [0.5, 0.8, 0.8]
    assert retry_request(msgs, {"temperature": 0.9, "seed": 0}, 1, last)[1]["temperature"] == 0.9
    assert retry_request(msgs, {"temperature": 0.0, "seed": 3}, 2, last)[1]["seed"] == 5
    same = retry_request(msgs, {"temperature": 0.0, "seed": 3}, 0, None)
    assert same == (msgs, {"temperature": 0.0, "seed": 3}, [])
    with pytest.raises(ValueError, match="needs the previous attempt"):
        retry_request(msgs, {}, 1, None)


def test_a_long_failed_output_is_shown_back_shortened():
    msgs = [{"role": "user", "content": "q"}]
    long = "{" + "a" * 1000
    added = retry_request(msgs, {"temperature": 0.0, "seed": 0}, 1, {"output": long, "error": "e"})[2]
    assert added[0]["content"] == long[:FEEDBACK_CHARS] + " [...]"


def test_a_failure_keeps_every_attempt_and_each_differs():
    gen = Echo()
    with pytest.raises(OutputParseError, match="fed the error back and raised the temperature") as ei:
        gen.chat("bad request", schema=SCHEMA)
    tries = ei.value.tries
    assert len(tries) == 1 + gen.max_retries and all(t["error"] for t in tries)
    assert [t["options"]["temperature"] for t in tries] == [0.0, 0.5, 0.8]
    assert [len(t["added_messages"]) for t in tries] == [0, 2, 2]


def test_async_retries_change_the_request_the_same_way():
    a, b = Greedy(), Greedy()
    ga = a.chat("count", schema=SCHEMA)
    gb = asyncio.run(b.achat("count", schema=SCHEMA))
    assert ga == gb and a.requests == b.requests


def test_the_recording_shows_each_attempt_and_replays_it(tmp_path):
    path = tmp_path / "rec.json"
    live = RecordingGenerator(Greedy(), path).chat("count", schema=SCHEMA)
    entry = next(iter(json.loads(path.read_text(encoding="utf-8"))["entries"].values()))
    assert entry["attempts"] == 2 and len(entry["tries"]) == 2
    assert entry["tries"][1]["options"]["temperature"] == 0.5
    assert entry["tries"][1]["added_messages"][1]["content"].startswith("That reply could not be used:")
    replayed = ReplayGenerator(path).chat("count", schema=SCHEMA)
    assert replayed == live and replayed.tries == live.tries


def test_a_recorded_failure_replays_with_its_attempts(tmp_path):
    path = tmp_path / "rec.json"
    with pytest.raises(OutputParseError) as live:
        RecordingGenerator(Echo(), path).chat("bad request", schema=SCHEMA)
    with pytest.raises(OutputParseError) as again:
        ReplayGenerator(path).chat("bad request", schema=SCHEMA)
    assert again.value.tries == live.value.tries and len(again.value.tries) == 3


def test_a_one_attempt_entry_has_no_tries_field_and_replays_its_single_try(tmp_path):
    path = tmp_path / "rec.json"
    live = RecordingGenerator(Echo(), path).chat("count me", schema=SCHEMA)
    entry = next(iter(json.loads(path.read_text(encoding="utf-8"))["entries"].values()))
    assert "tries" not in entry  # recordings made before retries changed the request look the same
    replayed = ReplayGenerator(path).chat("count me", schema=SCHEMA)
    assert replayed == live and len(replayed.tries) == 1 and replayed.tries[0]["added_messages"] == []


def test_the_judge_keeps_the_attempts_of_a_call():
    call = Judge(Greedy()).call("count", "count", SCHEMA)
    assert call.ok and call.attempts == 2 and len(call.tries) == 2
    assert call.tries[0]["error"].startswith("not valid JSON")
