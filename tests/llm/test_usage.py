"""Usage accounting: what a request cost (model calls, the backend's own token counts, seconds), on every
answer and every failed call, kept by a recording and given back by its replay; never invented."""

from __future__ import annotations

import asyncio
import json

import pytest
from fakes.faulty_ollama import FAKE_MODEL, FaultyOllama

from ragworkbook.llm import Generation, Generator, LLMError, OutputParseError, Reply, Usage
from ragworkbook.llm.ollama_backend import OllamaGenerator
from ragworkbook.llm.replay import Recording, RecordingGenerator, ReplayGenerator, make_entry

pytestmark = pytest.mark.usefixtures("clean_env")

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class Counted(Generator):
    """Answers from a list: a Reply (with counts), a plain string (none) or an exception to raise."""

    backend = "counted"

    def __init__(self, outputs):
        super().__init__("counted-model")
        self.outputs = list(outputs)

    def _chat_once(self, messages, options, schema):
        out = self.outputs.pop(0)
        if isinstance(out, BaseException):
            raise out
        return out


def test_usage_adds_up_and_an_unknown_part_makes_the_total_unknown():
    a, b = Usage(1, 10, 2, 0.5), Usage(2, 7, 3, 0.25)
    assert a + b == Usage(3, 17, 5, 0.75) and (a + b).total_tokens == 22
    assert a + Usage(1, None, 4, 1.0) == Usage(2, None, 6, 1.5)
    assert Usage(1, None, None, None).total_tokens is None
    assert Usage.from_counts(Usage(2, 5, 6, 0.12345).counts(), 2) == Usage(2, 5, 6, 0.123)


def test_a_reply_gives_its_counts_summed_over_the_attempts():
    gen = Counted([Reply("not json", 30, 4), Reply('{"n": 3}', 52, 6)])
    g = gen.chat("count", schema=SCHEMA)
    assert g.data == {"n": 3} and g.attempts == 2
    assert (g.usage.attempts, g.usage.prompt_tokens, g.usage.completion_tokens) == (2, 82, 10)
    assert g.usage.seconds >= 0
    assert "usage" not in repr(g) and g == Generation(**{**g.__dict__, "usage": None})  # not in the answer


def test_a_plain_string_reports_no_tokens_but_its_seconds():
    g = Counted(["hello"]).chat("hi")
    assert (g.usage.attempts, g.usage.prompt_tokens, g.usage.completion_tokens) == (1, None, None)
    assert g.usage.seconds is not None


def test_counts_that_are_not_counts_are_dropped_not_guessed():
    g = Counted([Reply("x", -1, True)]).chat("hi")
    assert (g.usage.prompt_tokens, g.usage.completion_tokens) == (None, None)


def test_a_parse_failure_carries_the_cost_of_every_attempt():
    gen = Counted([Reply("a", 5, 1), Reply("b", 9, 1), Reply("c", 13, 1)])
    with pytest.raises(OutputParseError) as err:
        gen.chat("count", schema=SCHEMA)
    usage = err.value.usage
    assert (usage.attempts, usage.prompt_tokens, usage.completion_tokens) == (3, 27, 3)


def test_a_failed_call_carries_its_seconds_and_the_attempts_before_it():
    gen = Counted([Reply("not json", 5, 1), LLMError("server gone")])
    with pytest.raises(LLMError, match="server gone") as err:
        gen.chat("count", schema=SCHEMA)
    usage = err.value.usage
    assert usage.attempts == 2 and usage.prompt_tokens is None  # the failed attempt's count is unknown
    assert usage.seconds >= 0
    with pytest.raises(LLMError) as err:
        asyncio.run(Counted([LLMError("down")]).achat("hi"))
    assert err.value.usage.attempts == 1
    assert LLMError("raised outside a call").usage is None


def test_async_counts_like_sync():
    g = asyncio.run(Counted([Reply("bad", 3, 1), Reply('{"n": 1}', 4, 2)]).achat("count", schema=SCHEMA))
    assert (g.usage.attempts, g.usage.prompt_tokens, g.usage.completion_tokens) == (2, 7, 3)


def test_ollama_reports_the_servers_counts():
    with FaultyOllama() as server:  # prompt_eval_count / eval_count count words there
        for stream in (True, False):
            g = OllamaGenerator(FAKE_MODEL, host=server.url, stream=stream, timeout=10).chat("Reply OK now.")
            assert g.text == "OK" and (g.usage.prompt_tokens, g.usage.completion_tokens) == (3, 1)
        g = asyncio.run(OllamaGenerator(FAKE_MODEL, host=server.url, timeout=10).achat("Reply OK now."))
        assert (g.usage.prompt_tokens, g.usage.completion_tokens) == (3, 1)


# --- recordings ---------------------------------------------------------------------------------------------
def test_a_recording_stores_the_counts_and_replays_them(tmp_path):
    path = tmp_path / "rec.json"
    live = RecordingGenerator(Counted([Reply("hello", 12, 2), Reply("a", 5, 1), Reply("b", 6, 1),
                                       Reply("c", 7, 1)]), path)
    g = live.chat("hi")
    with pytest.raises(OutputParseError):
        live.chat("count", schema=SCHEMA)
    entries = json.loads(path.read_text())["entries"]
    stored = {e.get("text", "error"): e["usage"] for e in entries.values()}
    assert stored["hello"] == {"prompt_tokens": 12, "completion_tokens": 2,
                               "seconds": round(g.usage.seconds, 3)}
    assert (stored["error"]["prompt_tokens"], stored["error"]["completion_tokens"]) == (18, 3)
    replay = ReplayGenerator(path)
    r = replay.chat("hi")
    assert r == g and (r.usage.attempts, r.usage.prompt_tokens, r.usage.completion_tokens) == (1, 12, 2)
    with pytest.raises(OutputParseError) as err:
        replay.chat("count", schema=SCHEMA)
    assert (err.value.usage.attempts, err.value.usage.prompt_tokens) == (3, 18)


def test_an_old_entry_without_counts_replays_with_none_and_gets_them_when_re_recorded(tmp_path):
    path = tmp_path / "rec.json"
    old = make_entry("counted", "counted-model", [{"role": "user", "content": "hi"}],
                     {"temperature": 0.0, "seed": 0, "num_predict": 256}, None,
                     Generation(text="hello", backend="counted", model="counted-model",
                                raw_outputs=["hello"]))
    assert "usage" not in old
    g = Counted(["hello"]).chat("hi")
    Recording(path).put(g.key, old)
    assert ReplayGenerator(path).chat("hi").usage is None  # not recorded: never a guess
    before = json.loads(path.read_text())["entries"][g.key]
    RecordingGenerator(Counted([Reply("hello", 4, 1)]), path).chat("hi")
    after = json.loads(path.read_text())["entries"][g.key]
    assert after["usage"]["prompt_tokens"] == 4 and after["recorded_at"] == before["recorded_at"]
    assert after["checksum"] != before["checksum"]
    again = path.read_bytes()
    RecordingGenerator(Counted([Reply("hello", 99, 9)]), path).chat("hi")  # same answer: kept as it was
    assert path.read_bytes() == again


@pytest.mark.parametrize("usage,said", [
    ([1, 2], "has an array as 'usage'"),
    ({"prompt_tokens": -3}, "has -3 as usage.prompt_tokens; a token count is a whole number >= 0 or null"),
    ({"completion_tokens": 1.5}, "has 1.5 as usage.completion_tokens"),
    ({"seconds": "fast"}, "has 'fast' as usage.seconds"),
])
def test_a_damaged_usage_is_named(tmp_path, usage, said):
    path = tmp_path / "rec.json"
    RecordingGenerator(Counted([Reply("hello", 4, 1)]), path).chat("hi")
    doc = json.loads(path.read_text())
    (entry,) = doc["entries"].values()
    entry["usage"] = usage
    del entry["checksum"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=f"entry [0-9a-f]{{64}} {said}"):
        Recording(path)
