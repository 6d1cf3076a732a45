"""The openai backend against a real server: llama-cpp-python's own OpenAI-compatible server
(``llama_cpp.server``) serving the embedded SmolLM2 file on loopback, started once for the session
(the ``llama_server`` fixture, ``servers.llama_openai``). Nothing is a stand-in here: the requests,
the server's refusal of ``json_schema`` (it takes only ``{"type": "json_object", "schema"}``), its
401 without the key, its 400 for a prompt longer than its context, its ``usage``."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import LLAMA_SERVER_MODEL
from fakes.proxy import PROXY_VARIABLES, LoggingProxy

from ragworkbook.judging.judge import Judge
from ragworkbook.llm import LLMError, get_generator
from ragworkbook.llm.openai_backend import AuthenticationFailed, OpenAIGenerator, openai_models
from ragworkbook.llm.replay import RecordingGenerator, ReplayGenerator

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("clean_env")]

PROMPT = "What is the capital of France?"
Q = {"system": "Answer in one short sentence.", "options": {"num_predict": 12}}
# An enum keeps the grammar-constrained answer valid JSON on every CPU (see test_ollama.py)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "London", "Rome",
                                                                              "Berlin"]}},
          "required": ["city"]}


@pytest.fixture()
def gen(llama_server) -> OpenAIGenerator:
    return OpenAIGenerator(LLAMA_SERVER_MODEL, base_url=llama_server.url, api_key=llama_server.api_key,
                           timeout=120)


def test_the_server_lists_its_model_to_a_client_with_the_key(llama_server, gen):
    assert gen.list_models() == [LLAMA_SERVER_MODEL]
    assert openai_models(llama_server.url, llama_server.api_key) == [LLAMA_SERVER_MODEL]
    assert openai_models(llama_server.url) is None  # no key: refused


def test_a_plain_answer_with_the_servers_token_counts(gen):
    g = gen.chat(PROMPT, **Q)
    assert g.text and (g.backend, g.model, g.attempts) == ("openai", LLAMA_SERVER_MODEL, 1)
    assert 10 < g.usage.prompt_tokens < 100 and 0 < g.usage.completion_tokens <= 12
    assert 0 < g.usage.seconds < 60


def test_the_same_request_gives_the_embedded_backends_answer(gen):
    # the server's repeat_penalty defaults to 1.1, the embedded backend's to 1.0: ask for the same decoding
    options = {"num_predict": 12, "repeat_penalty": 1.0}
    embedded = get_generator(backend="embedded", announce=False).chat(PROMPT, system=Q["system"],
                                                                      options=options)
    assert gen.chat(PROMPT, system=Q["system"], options=options).text == embedded.text


def test_schema_constrained_output_parses_after_the_server_refuses_json_schema(llama_server):
    gen = OpenAIGenerator(LLAMA_SERVER_MODEL, base_url=llama_server.url, api_key=llama_server.api_key)
    g = gen.chat(PROMPT, schema=SCHEMA, options={"num_predict": 24})
    assert g.data["city"] in SCHEMA["properties"]["city"]["enum"]
    assert gen.schema_form == "json_object_schema"  # the real server answered 422 to json_schema
    assert json.loads(g.text) == g.data and g.usage.completion_tokens > 0


def test_async_gives_the_same_answer(gen):
    assert asyncio.run(gen.achat(PROMPT, **Q)).text == gen.chat(PROMPT, **Q).text


def test_without_the_key_the_server_refuses_and_the_error_says_so(llama_server):
    anonymous = OpenAIGenerator(LLAMA_SERVER_MODEL, base_url=llama_server.url)
    said = r"refused the request \(HTTP 401: Invalid API key\); it needs an API key: set OPENAI_API_KEY"
    with pytest.raises(AuthenticationFailed, match=said):
        anonymous.chat(PROMPT, **Q)
    wrong = OpenAIGenerator(LLAMA_SERVER_MODEL, base_url=llama_server.url, api_key="sk-wrong")
    with pytest.raises(AuthenticationFailed, match="the key in OPENAI_API_KEY was refused") as err:
        wrong.chat(PROMPT, **Q)
    assert "sk-wrong" not in str(err.value) and llama_server.api_key not in str(err.value)


def test_a_prompt_longer_than_the_context_is_a_counted_failure(gen):
    long_prompt = "Count the words. " + "word " * 5000
    judge = Judge(gen)
    call = judge.call("too-long", long_prompt, SCHEMA)
    said = "maximum context length is 4096"
    assert call.error.startswith("llm_error: the server at") and said in call.error
    with pytest.raises(LLMError, match=rf"refused the request \(HTTP 400.*{said}") as err:
        gen.chat(long_prompt, schema=SCHEMA)
    assert err.value.usage.attempts == 1


def test_the_environment_chooses_it(llama_server, monkeypatch):
    monkeypatch.setenv("RAGWORKBOOK_BACKEND", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", llama_server.api_key)
    monkeypatch.setenv("RAGWORKBOOK_MODEL", LLAMA_SERVER_MODEL)
    g = get_generator(announce=False).chat(PROMPT, **Q)
    assert g.backend == "openai" and g.text


def test_loopback_never_goes_through_a_proxy(gen, monkeypatch):
    with LoggingProxy() as proxy:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, proxy.url)
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        assert gen.chat(PROMPT, **Q).text
        assert asyncio.run(gen.achat(PROMPT, **Q)).text
        assert proxy.received == []


def test_record_then_replay_is_byte_identical(gen, tmp_path):
    path = tmp_path / "rec.json"
    live = RecordingGenerator(gen, path)
    recorded = [live.chat(PROMPT, **Q), live.chat(PROMPT, schema=SCHEMA, options={"num_predict": 24})]
    first = path.read_bytes()
    assert gen.url not in first.decode() and gen.identity not in first.decode()
    replay = ReplayGenerator(path)
    replayed = [replay.chat(PROMPT, **Q), replay.chat(PROMPT, schema=SCHEMA, options={"num_predict": 24})]
    assert replayed == recorded and [r.text for r in replayed] == [g.text for g in recorded]
    assert all(r.usage.prompt_tokens == g.usage.prompt_tokens and r.usage.completion_tokens
               == g.usage.completion_tokens for r, g in zip(replayed, recorded, strict=True))
    RecordingGenerator(gen, path).chat(PROMPT, **Q)  # recorded again live: the same answer, the same bytes
    assert path.read_bytes() == first
