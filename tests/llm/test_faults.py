"""Fault injection: the Ollama backend and the judge against a server that misbehaves.

The stand-in server (``fakes.faulty_ollama``) runs no model. Every fault becomes an
:class:`LLMError` naming the server and what came back (never a bare JSONDecodeError or
TypeError); in a judge it is a counted failure of the sample it hit, never the end of the
run, and nothing failed is cached as an answer.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from fakes.faulty_ollama import FAKE_MODEL, FaultyOllama
from fakes.judges import CARBON, first_prompt

from ragworkbook.judging.judge import Judge, generator_identity
from ragworkbook.judging.metrics import evaluate_judged
from ragworkbook.judging.results import JudgeSample
from ragworkbook.llm import LLMError, ModelNotFound, OutputParseError, get_generator, ollama_timeout
from ragworkbook.llm.ollama_backend import OllamaGenerator

pytestmark = pytest.mark.usefixtures("clean_env")

SCHEMA = {"type": "object", "properties": {"reason": {"type": "string"}, "verdict": {"type": "integer"}},
          "required": ["reason", "verdict"]}
PROMPT = "Question: Which optimizer?\nContext:\n[1] They used Adam.\n\nReply with a verdict."

#: fault -> (error class, what the message says)
EXPECTED = {
    "500": (LLMError, "returned an error (HTTP 500, model 'fake:1b'): fake: llama runner process has "
                      "terminated"),
    "invalid_json": (LLMError, "did not answer like an Ollama server (model 'fake:1b'): got "
                               "'<html><body>502 Bad Gateway</body></html>'"),
    "bad_shape": (LLMError, "did not answer like an Ollama server (model 'fake:1b'): got JSON the client "
                            "cannot read"),
    "schema": (OutputParseError, "output did not match the JSON schema after 3 attempts"),
    "drop": (LLMError, "failed (model 'fake:1b'): RemoteProtocolError: peer closed connection"),
    "cut": (LLMError, "ended before it was complete"),
    "slow": (LLMError, "did not answer within 0.3 s (model 'fake:1b'); allow longer with --ollama-timeout"),
    "unknown_model": (ModelNotFound, "pull it with `ollama pull fake:1b`"),
}


@pytest.fixture(scope="module")
def server():
    with FaultyOllama(slow_seconds=1.5) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_faults(server):
    server.clear_faults()
    yield
    server.clear_faults()


def generator(server, stream=True, timeout=0.3):
    return OllamaGenerator(FAKE_MODEL, host=server.url, stream=stream, timeout=timeout)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "plain"])
@pytest.mark.parametrize("fault", list(EXPECTED))
def test_every_fault_is_an_llm_error_naming_the_server(server, fault, stream):
    server.add_fault(fault)
    cls, said = EXPECTED[fault]
    with pytest.raises(cls) as err:
        generator(server, stream).chat(PROMPT, schema=SCHEMA)
    assert said in str(err.value)
    assert server.url.split("//")[1] in str(err.value) or fault == "schema"
    assert not isinstance(err.value, json.JSONDecodeError)
    # async: the same error
    server.clear_faults()
    server.add_fault(fault)
    with pytest.raises(cls) as aerr:
        asyncio.run(generator(server, stream).achat(PROMPT, schema=SCHEMA))
    assert said in str(aerr.value) and "fake:1b" in str(aerr.value)


def test_without_a_fault_the_fake_answers_like_a_judge(server):
    g = generator(server).chat(PROMPT, schema=SCHEMA)
    assert set(g.data) == {"reason", "verdict"} and g.backend == "ollama"
    assert generator(server).chat("Context:\n[1] The model used 8 heads. More.\n\nQ?").text == \
        "The model used 8 heads."


def test_a_long_error_page_is_shortened(server):
    """A proxy's HTML error page is not pasted whole into the message."""
    g = generator(server)
    exc = g._bad_reply(json.JSONDecodeError("Expecting value", "<html>" + "x" * 5000, 0))
    assert len(str(exc)) < 500 and "..." in str(exc)


# --- the timeout: argument, environment variable ---------------------------------------------
def test_timeout_from_the_argument_the_environment_or_the_default(monkeypatch):
    assert ollama_timeout() == 300.0
    monkeypatch.setenv("RAGWORKBOOK_OLLAMA_TIMEOUT", "12.5")
    assert ollama_timeout() == 12.5 and ollama_timeout(3) == 3.0
    assert OllamaGenerator(FAKE_MODEL).timeout == 12.5
    assert get_generator(backend="ollama", announce=False, timeout=7).timeout == 7.0
    monkeypatch.setenv("RAGWORKBOOK_OLLAMA_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="RAGWORKBOOK_OLLAMA_TIMEOUT must be a number of seconds, got 's"):
        OllamaGenerator(FAKE_MODEL)
    monkeypatch.setenv("RAGWORKBOOK_OLLAMA_TIMEOUT", "-1")
    with pytest.raises(ValueError, match="RAGWORKBOOK_OLLAMA_TIMEOUT must be a positive number"):
        ollama_timeout()
    with pytest.raises(ValueError, match="timeout must be a positive number of seconds, got 0"):
        ollama_timeout(0)


def test_the_environment_timeout_bounds_a_slow_reply(server, monkeypatch):
    server.add_fault("slow")
    monkeypatch.setenv("RAGWORKBOOK_OLLAMA_TIMEOUT", "0.2")
    with pytest.raises(LLMError, match="did not answer within 0.2 s"):
        OllamaGenerator(FAKE_MODEL, host=server.url).chat("hi")


# --- in a judge: one sample fails, the others are scored, nothing failed is cached -----------------
SAMPLES = [
    CARBON,
    JudgeSample("Which optimizer?", "They used Adam.", ["The Adam optimizer was used for training."],
                "They used Adam.", "adam"),
    JudgeSample("What dropout?", "Dropout was 0.1.", ["Residual dropout Pdrop = 0.1 was applied."],
                "Dropout was 0.1.", "dropout"),
]
METRICS = ["faithfulness", "context_precision", "context_recall", "context_relevance"]
REASONS = {"500": "llm_error", "invalid_json": "llm_error", "bad_shape": "llm_error",
           "schema": "output_parse_error", "drop": "llm_error", "cut": "llm_error", "slow": "llm_error"}


@pytest.mark.parametrize("fault", list(REASONS))
def test_a_fault_for_one_sample_is_a_counted_failure_of_that_sample_only(server, tmp_path, fault):
    cache = tmp_path / "judge_cache.json"
    server.add_fault(fault, match="Which optimizer?")
    judge = Judge(generator(server), cache_path=cache)
    rep = evaluate_judged(SAMPLES, judge, METRICS, progress=False)
    for m in METRICS:
        by_id = {r.sample_id: r for r in rep.results[m]}
        bad = by_id["adam"]
        assert (bad.outcome, bad.reason) == ("failed", REASONS[fault]), (m, bad)
        assert FAKE_MODEL in bad.error
        assert all(r.outcome != "failed" for sid, r in by_id.items() if sid != "adam")
        a = rep.aggregates[m]
        assert a.failed == 1 and a.n + a.undefined == 2
    # nothing failed is in the cache file: every entry there is an answer
    entries = json.loads(cache.read_text())["entries"]
    assert entries and all(e["error"] is None and e["data"] is not None for e in entries.values())
    # the server is fixed: a new judge on the same cache asks again only what failed, and scores it
    server.clear_faults()
    before = len(server.requests)
    again = evaluate_judged(SAMPLES, Judge(generator(server), cache_path=cache), METRICS, progress=False)
    asked = server.requests[before:]
    assert asked and all("Adam" in first_prompt(r["messages"]) for r in asked)  # only that sample
    for m in METRICS:
        assert all(r.outcome != "failed" for r in again.results[m])


def test_an_unknown_model_stops_the_judge_with_the_pull_command(server):
    """Not a judgment that failed, a judge that cannot work: it propagates, saying what to do."""
    server.add_fault("unknown_model")
    with pytest.raises(ModelNotFound, match="ollama pull fake:1b"):
        evaluate_judged([CARBON], Judge(generator(server)), ["faithfulness"], progress=False)


def test_schema_failures_are_not_cached_unless_asked(server):
    server.add_fault("schema", times=3)  # the first request and its two retries
    judge = Judge(generator(server))
    assert judge.cache_failures is False  # a live judge
    first = judge.call("verdict", PROMPT, SCHEMA)
    assert first.error.startswith("output_parse_error")
    second = judge.call("verdict", PROMPT, SCHEMA)  # asked again: the server answers now
    assert second.ok and not second.cached and judge.n_model_calls == 2
    server.add_fault("schema", times=3)
    keeping = Judge(generator(server), cache_failures=True)
    assert keeping.call("verdict", PROMPT, SCHEMA).error is not None
    assert keeping.call("verdict", PROMPT, SCHEMA).cached


def test_the_cache_key_has_the_server(server):
    here, there = generator(server), OllamaGenerator(FAKE_MODEL, host="http://127.0.0.1:1")
    assert generator_identity(here) == f"ollama@{server.url}"
    assert Judge(here).cache_key(PROMPT, SCHEMA) != Judge(there).cache_key(PROMPT, SCHEMA)
    assert Judge(here).cache_key(PROMPT, SCHEMA) == Judge(generator(server)).cache_key(PROMPT, SCHEMA)


def test_a_strict_replay_keeps_its_parse_failures_since_they_cannot_change(tmp_path):
    from fakes.judges import GarbageJudge

    from ragworkbook.llm.replay import RecordingGenerator, ReplayGenerator

    path = tmp_path / "rec.json"
    Judge(RecordingGenerator(GarbageJudge(), path)).call("verdict", PROMPT, SCHEMA)
    judge = Judge(ReplayGenerator(path))
    assert judge.cache_failures is True
    assert judge.call("verdict", PROMPT, SCHEMA).error.startswith("output_parse_error")
    assert judge.call("verdict", PROMPT, SCHEMA).cached and judge.n_model_calls == 1
