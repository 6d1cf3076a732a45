"""The ollama backend over real HTTP: the official client against tests/fakes/ollama_server.py.

The fake server speaks Ollama's API and answers with the embedded SmolLM2 model,
so nothing about the client is mocked: requests, NDJSON streaming, error JSON and
connection failures all go through ``ollama.Client`` / ``ollama.AsyncClient``.
"""

from __future__ import annotations

import asyncio
import json

import ollama
import pytest
from conftest import free_port
from fakes.ollama_server import FAKE_MODEL, FakeOllama

from ragworkbook.llm import (
    BackendUnavailable,
    LLMError,
    ModelNotFound,
    get_generator,
    ollama_available,
    ollama_host,
)
from ragworkbook.llm.ollama_backend import OllamaGenerator, strip_thinking

Q = {"system": "Answer in one short sentence.", "options": {"num_predict": 12}}
PROMPT = "What is the capital of France?"
# An enum keeps the grammar-constrained answer valid JSON on every CPU: with a free string and maxLength,
# llama.cpp's grammar let SmolLM2 put a raw newline inside the string on one machine (invalid JSON, an
# OutputParseError after 3 attempts) and not on another.
SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "London", "Rome",
                                                                              "Berlin"]}},
          "required": ["city"]}


@pytest.fixture(scope="module")
def server():
    with FakeOllama() as srv:
        yield srv


@pytest.fixture(autouse=True)
def no_ollama_host(clean_env, monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)


@pytest.fixture(scope="module")
def embedded_answer():
    return get_generator(backend="embedded", announce=False).chat(PROMPT, **Q).text


@pytest.mark.model
def test_the_fake_server_speaks_ollama_to_the_official_client(server):
    client = ollama.Client(host=server.url)
    assert [m.model for m in client.list().models] == [FAKE_MODEL]
    resp = client.chat(model=FAKE_MODEL, messages=[{"role": "user", "content": "hi"}],
                       options={"temperature": 0, "num_predict": 4})
    assert resp.message.role == "assistant" and resp.message.content and resp.done
    parts = list(client.generate(model=FAKE_MODEL, prompt="hi", stream=True,
                                 options={"temperature": 0, "num_predict": 4}))
    assert parts[-1].done and "".join(p.response for p in parts)


@pytest.mark.model
@pytest.mark.parametrize("stream", [True, False])
def test_plain_and_streamed_answers_match_the_embedded_backend(server, embedded_answer, stream):
    gen = OllamaGenerator(FAKE_MODEL, host=server.url, stream=stream)
    g = gen.chat(PROMPT, **Q)
    assert (g.backend, g.model) == ("ollama", FAKE_MODEL)
    # Same model, same greedy decoding: the HTTP round trip changes nothing.
    assert g.text == embedded_answer
    sent = server.requests[-1]
    assert sent["path"] == "/api/chat" and sent["stream"] is stream
    assert sent["options"] == {"temperature": 0.0, "seed": 0, "num_predict": 12, "repeat_penalty": 1.0}
    assert sent["messages"][0] == {"role": "system", "content": Q["system"]}


@pytest.mark.model
def test_async_chat_uses_the_async_client(server, embedded_answer):
    gen = OllamaGenerator(FAKE_MODEL, host=server.url)

    async def run():
        return await asyncio.gather(gen.achat(PROMPT, **Q), gen.achat(PROMPT, **Q))

    a, b = asyncio.run(run())
    assert a.text == b.text == embedded_answer
    # a second event loop works too (one AsyncClient per call)
    assert asyncio.run(gen.achat(PROMPT, **Q)).text == embedded_answer


@pytest.mark.model
def test_schema_is_sent_as_format_and_parsed(server):
    gen = OllamaGenerator(FAKE_MODEL, host=server.url)
    g = gen.chat("Which city is the capital of France?", schema=SCHEMA, options={"num_predict": 30})
    assert server.requests[-1]["format"] == SCHEMA
    assert isinstance(g.data, dict) and isinstance(g.data["city"], str)
    assert json.loads(g.text) == g.data  # what the server answered, parsed


@pytest.mark.model
def test_repeat_penalty_can_be_set_explicitly(server):
    gen = OllamaGenerator(FAKE_MODEL, host=server.url)
    gen.chat("hi", options={"num_predict": 2, "repeat_penalty": 1.1})
    assert server.requests[-1]["options"]["repeat_penalty"] == 1.1


def test_unknown_model_names_the_pull_command(server):
    gen = OllamaGenerator("qwen3:4b", host=server.url)
    with pytest.raises(ModelNotFound, match=r"pull it with `ollama pull qwen3:4b`"):
        gen.chat("hi")
    with pytest.raises(ModelNotFound, match=r"ollama pull qwen3:4b"):
        asyncio.run(gen.achat("hi"))


@pytest.mark.model
def test_error_mid_stream_is_reported(server):
    gen = OllamaGenerator(FAKE_MODEL, host=server.url)
    server.fail_mid_stream_after = 2
    said = r"error \(mid-stream, model 'smollm2:135m'\): fake server: model runner crashed"
    with pytest.raises(LLMError, match=said):
        gen.chat("Tell me a long story.", options={"num_predict": 20})
    server.fail_mid_stream_after = 2
    with pytest.raises(LLMError, match=r"mid-stream"):
        asyncio.run(gen.achat("Tell me a long story.", options={"num_predict": 20}))


@pytest.mark.parametrize("stream", [True, False])
def test_server_down_says_how_to_start_one(stream):
    host = f"http://127.0.0.1:{free_port()}"
    gen = OllamaGenerator(FAKE_MODEL, host=host, stream=stream)
    with pytest.raises(BackendUnavailable, match=r"no Ollama server answering at .*`ollama serve`"):
        gen.chat("hi")
    with pytest.raises(BackendUnavailable, match=r"RAGWORKBOOK_BACKEND=embedded"):
        asyncio.run(gen.achat("hi"))
    assert not ollama_available(host)


def test_auto_picks_ollama_when_a_server_answers(server, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    monkeypatch.setenv("RAGWORKBOOK_MODEL", FAKE_MODEL)
    assert ollama_available()
    gen = get_generator()
    assert gen.backend == "ollama" and gen.model == FAKE_MODEL and gen.host == server.url
    out = capsys.readouterr().out
    assert out == f"ragworkbook: using ollama backend ({FAKE_MODEL}) at {server.url}\n"
    get_generator()
    assert capsys.readouterr().out == ""  # printed once per process


def test_auto_falls_back_to_embedded(monkeypatch, capsys):
    host = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("OLLAMA_HOST", host)
    gen = get_generator()
    assert gen.backend == "embedded"
    assert capsys.readouterr().out == (
        f"ragworkbook: using embedded backend (SmolLM2-135M-Instruct.Q4_1) - no Ollama server at {host}\n")


def test_default_ollama_model_and_host(monkeypatch):
    gen = get_generator(backend="ollama", announce=False)
    assert gen.model == "qwen3:4b" and gen.host == "http://127.0.0.1:11434"
    monkeypatch.setenv("OLLAMA_HOST", "example.com:8080")
    assert ollama_host() == "http://example.com:8080"
    assert ollama_host("https://example.com") == "https://example.com:443"


def test_thinking_preamble_is_removed():
    assert strip_thinking("<think>\nhmm\n</think>\n\nParis.") == "Paris."
    assert strip_thinking("  Paris. ") == "Paris."


def test_auto_says_when_the_model_is_not_pulled(server, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    gen = get_generator()
    assert gen.backend == "ollama" and gen.model == "qwen3:4b"
    assert capsys.readouterr().out.endswith("- model not pulled yet: run `ollama pull qwen3:4b`\n")


def test_backend_options_are_routed_and_checked(server):
    # auto may end on either backend: options of the other one are dropped
    gen = get_generator(host=server.url, stream=False, model=FAKE_MODEL, announce=False)
    assert gen.backend == "ollama" and gen.stream is False
    host = f"http://127.0.0.1:{free_port()}"
    assert get_generator(host=host, n_ctx=4096, announce=False).backend == "embedded"
    with pytest.raises(TypeError, match="n_ctx that the ollama backend does not take"):
        get_generator(backend="ollama", n_ctx=2048)
    with pytest.raises(TypeError, match="colour"):
        get_generator(colour="red")


@pytest.mark.model
def test_thinking_is_off_by_default_and_a_refusal_is_handled(server):
    OllamaGenerator(FAKE_MODEL, host=server.url).chat("hi", options={"num_predict": 2})
    assert server.requests[-1]["think"] is False
    OllamaGenerator(FAKE_MODEL, host=server.url, think=None).chat("hi", options={"num_predict": 2})
    assert "think" not in server.requests[-1]
    server.refuse_think = True
    try:
        gen = OllamaGenerator(FAKE_MODEL, host=server.url)
        n = len(server.requests)
        assert gen.chat("hi", options={"num_predict": 2}).text
        assert [("think" in r) for r in server.requests[n:]] == [True, False]  # refused, then resent
        gen.chat("hi again", options={"num_predict": 2})
        assert "think" not in server.requests[-1]  # remembered
        fresh = OllamaGenerator(FAKE_MODEL, host=server.url)
        assert asyncio.run(fresh.achat("hi", options={"num_predict": 2})).text
        with pytest.raises(LLMError, match=r"HTTP 400.*does not support thinking"):
            OllamaGenerator(FAKE_MODEL, host=server.url, think=True).chat("hi")  # asked for it
    finally:
        server.refuse_think = False


def test_answer_cut_off_while_thinking_is_an_error():
    with pytest.raises(LLMError, match="whole num_predict budget thinking.*think=False"):
        strip_thinking("<think>\nLet me consider the question carefully and")


def test_listing_models(server):
    from ragworkbook.llm import ollama_models

    assert OllamaGenerator(FAKE_MODEL, host=server.url).list_models() == [FAKE_MODEL]
    assert ollama_models(server.url) == [FAKE_MODEL]
    assert ollama_models(f"http://127.0.0.1:{free_port()}") is None
    with pytest.raises(BackendUnavailable, match="ollama serve"):
        OllamaGenerator(FAKE_MODEL, host=f"http://127.0.0.1:{free_port()}").list_models()
