"""The openai backend against a stand-in server (tests/fakes/faulty_openai.py) for what a real server cannot
be made to do on demand: 500s, timeouts, malformed replies, refused schema forms, 401/404/429. The real
server (llama-cpp-python's) is in test_openai_live.py."""

from __future__ import annotations

import asyncio
import json

import pytest
from conftest import free_port
from fakes.faulty_openai import FAKE_MODEL, FaultyOpenAI
from fakes.proxy import PROXY_VARIABLES, LoggingProxy

from ragworkbook.judging.judge import Judge
from ragworkbook.llm import (
    BackendUnavailable,
    LLMError,
    ModelNotFound,
    OutputParseError,
    Usage,
    get_generator,
)
from ragworkbook.llm.openai_backend import (
    DEFAULT_OPENAI_BASE_URL,
    SCHEMA_FORMS,
    AuthenticationFailed,
    OpenAIGenerator,
    openai_base_url,
    openai_models,
    openai_options,
    openai_timeout,
)
from ragworkbook.llm.replay import RecordingGenerator, ReplayGenerator

pytestmark = pytest.mark.usefixtures("clean_env")

SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Rome"]}},
          "required": ["city"]}
KEY = "sk-stand-in-0123456789abcdef"


@pytest.fixture()
def server():
    with FaultyOpenAI(slow_seconds=5.0) as srv:
        yield srv


def gen_for(server, **kw) -> OpenAIGenerator:
    return OpenAIGenerator(FAKE_MODEL, base_url=server.url, **{"timeout": 10, **kw})


# --- settings -------------------------------------------------------------------------------------
def test_options_map_to_request_fields_and_unknown_ones_are_named():
    assert openai_options({"temperature": 0, "seed": 0, "num_predict": 256}) == {
        "temperature": 0.0, "seed": 0, "max_tokens": 256}
    given = {"num_predict": -1, "stop": "\n", "top_k": 1, "repeat_penalty": 1.0, "min_p": None}
    assert openai_options(given) == {"stop": ["\n"], "top_k": 1, "repeat_penalty": 1.0}
    with pytest.raises(ValueError, match=r"unknown option\(s\) for the openai backend: num_ctx; supported: "
                                         r"frequency_penalty, min_p, num_predict, presence_penalty, "
                                         r"repeat_penalty, seed, stop, temperature, top_k, top_p"):
        openai_options({"num_ctx": 8192})
    with pytest.raises(ValueError, match="num_predict must be a positive number of tokens"):
        openai_options({"num_predict": 0})


def test_base_url_default_environment_and_bad_values(monkeypatch):
    assert openai_base_url() == DEFAULT_OPENAI_BASE_URL == "http://127.0.0.1:8080/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:1234/v1/")
    assert openai_base_url() == "http://localhost:1234/v1"
    assert openai_base_url("https://api.example.com/v1") == "https://api.example.com/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:s3cret@127.0.0.1:99999/v1")
    said = r"^OPENAI_BASE_URL='http://\*\*\*@127.0.0.1:99999/v1' is not a server URL \(port out of range"
    with pytest.raises(ValueError, match=said) as err:
        openai_base_url()
    assert "s3cret" not in str(err.value)
    with pytest.raises(ValueError, match=r"^base_url='ftp://x' is not a server URL \(unknown scheme 'ftp'"):
        openai_base_url("ftp://x")


def test_timeout_from_the_argument_or_the_environment(monkeypatch):
    assert openai_timeout() == 300.0 and openai_timeout(5) == 5.0
    monkeypatch.setenv("RAGWORKBOOK_OPENAI_TIMEOUT", "12.5")
    assert openai_timeout() == 12.5
    monkeypatch.setenv("RAGWORKBOOK_OPENAI_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="RAGWORKBOOK_OPENAI_TIMEOUT must be a number of seconds, got 'so"):
        openai_timeout()


def test_the_model_is_required_and_the_error_lists_the_served_ones(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    said = rf"has no default model: .*--model NAME.*; the server at {server.url} serves: {FAKE_MODEL}$"
    with pytest.raises(ValueError, match=said):
        get_generator(backend="openai", announce=False)
    monkeypatch.setenv("RAGWORKBOOK_MODEL", FAKE_MODEL)
    gen = get_generator(backend="openai", announce=False)
    assert (gen.backend, gen.model, gen.base_url) == ("openai", FAKE_MODEL, server.url)
    with pytest.raises(TypeError, match="that the openai backend does not take; it takes: api_key, base_url, "
                                        "timeout"):
        get_generator(backend="openai", announce=False, think=False)


def test_the_backend_is_chosen_from_the_environment(server, monkeypatch, capsys):
    monkeypatch.setenv("RAGWORKBOOK_BACKEND", "openai")
    gen = get_generator(model=FAKE_MODEL, base_url=server.url)
    assert isinstance(gen, OpenAIGenerator)
    assert f"using openai backend ({FAKE_MODEL}) at {server.url}" in capsys.readouterr().out


# --- requests and answers -------------------------------------------------------------------------
def test_the_request_and_the_answer_with_the_servers_counts(server):
    g = gen_for(server).chat("Reply OK.", system="Be brief.")
    assert (g.text, g.backend, g.model, g.attempts) == ("OK", "openai", FAKE_MODEL, 1)
    sent = server.chats()[-1]
    assert sent["model"] == FAKE_MODEL and sent["stream"] is False
    assert sent["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Reply OK."}]
    assert (sent["temperature"], sent["seed"], sent["max_tokens"]) == (0.0, 0, 256)
    assert not {"top_k", "repeat_penalty", "min_p", "response_format"} & set(sent)  # nothing OpenAI refuses
    assert "authorization" not in {h.lower() for h in sent["headers"]}  # no key, no header
    # the stand-in counts words
    assert (g.usage.attempts, g.usage.prompt_tokens, g.usage.completion_tokens) == (1, 4, 1)
    assert 0 < g.usage.seconds < 10


def test_the_key_is_sent_as_a_bearer_token(server):
    gen_for(server, api_key=KEY).chat("Reply OK.")
    assert server.chats()[-1]["headers"]["Authorization"] == f"Bearer {KEY}"


def test_async_gives_the_same_answer(server):
    gen = gen_for(server)
    assert asyncio.run(gen.achat("Reply OK.")).text == gen.chat("Reply OK.").text == "OK"


def test_a_thinking_block_is_removed(server):
    server.prefix = "<think>the user wants OK</think>\n"
    assert gen_for(server).chat("Reply OK.").text == "OK"
    server.prefix = "<think>still thinking"
    with pytest.raises(LLMError, match=r"whole num_predict budget thinking.*larger options\['num_predict'\]"):
        gen_for(server).chat("Reply OK.")


# --- structured output: the forms a server takes -----------------------------------------------------
def test_a_server_that_takes_json_schema_gets_it_once_and_for_all(server):
    gen = gen_for(server)
    g = gen.chat("Which city?", schema=SCHEMA)
    assert g.data == {"city": "Paris"} and gen.schema_form == "json_schema"
    rf = server.chats()[-1]["response_format"]
    assert rf == {"type": "json_schema", "json_schema": {"name": "response", "schema": SCHEMA}}


def test_a_refused_form_falls_back_and_the_working_one_is_kept(server):
    server.refuse_forms = {"json_schema"}  # llama-cpp-python's server: only {"type": "json_object", "schema"}
    gen = gen_for(server)
    assert gen.chat("Which city?", schema=SCHEMA).data == {"city": "Paris"}
    sent = [r.get("response_format", {}).get("type") for r in server.chats()]
    assert sent == ["json_schema", "json_object"]
    assert gen.schema_form == "json_object_schema"
    gen.chat("Which city, again?", schema=SCHEMA)
    assert len(server.chats()) == 3  # decided: no second probe
    assert server.chats()[-1]["response_format"] == {"type": "json_object", "schema": SCHEMA}


def test_a_refusal_as_a_server_error_naming_the_field_falls_back_too(server):
    server.refuse_forms, server.refuse_status = {"json_schema"}, 500  # llama-cpp-python's server
    gen = gen_for(server)
    assert gen.chat("Which city?", schema=SCHEMA).data == {"city": "Paris"}
    assert gen.schema_form == "json_object_schema" and len(server.chats()) == 2


def test_a_server_error_that_does_not_name_the_field_is_not_a_refusal(server):
    server.add_fault("500")
    gen = gen_for(server)
    with pytest.raises(LLMError, match=r"returned an error \(HTTP 500"):
        gen.chat("Which city?", schema=SCHEMA)
    assert len(server.chats()) == 1 and gen.schema_form is None


def test_a_server_that_takes_no_form_is_asked_without_one_and_its_answer_still_validated(server):
    server.refuse_forms = set(SCHEMA_FORMS) - {"none"}
    gen = gen_for(server)
    with pytest.raises(OutputParseError) as err:  # a stand-in with no schema answers plain text
        gen.chat("Which city?", schema=SCHEMA)
    assert gen.schema_form == "none" and len(server.chats()) == len(SCHEMA_FORMS) + 2  # + 2 retries
    assert err.value.usage.attempts == 3


def test_every_form_refused_is_an_error_that_names_the_forms(server):
    server.refuse_forms = set(SCHEMA_FORMS)
    gen = gen_for(server)
    said = (r"refused every form of structured output \(json_schema, json_object_schema, guided_json, "
            r"json_object, none; .*json_schema: HTTP 422: .*does not take the json_schema form.*"
            r"none: HTTP 422")
    with pytest.raises(LLMError, match=said) as err:
        gen.chat("Which city?", schema=SCHEMA)
    assert gen.schema_form is None and len(server.chats()) == len(SCHEMA_FORMS)
    assert err.value.usage.attempts == 1 and err.value.usage.prompt_tokens is None


def test_a_request_refused_whatever_the_form_stops_after_two(server):
    server.add_fault("context")  # the prompt is too long: the form is not the problem
    gen = gen_for(server)
    said = r"refused the request \(HTTP 400, model .*\): Requested tokens \(5000\) exceed context window"
    with pytest.raises(LLMError, match=said):
        gen.chat("Which city?", schema=SCHEMA)
    assert len(server.chats()) == 2 and gen.schema_form is None


# --- faults ---------------------------------------------------------------------------------------------
def test_a_broken_answer_is_retried_and_every_attempt_counted(server):
    server.add_fault("schema", times=1)
    g = gen_for(server).chat("Which city?", schema=SCHEMA)
    assert g.attempts == 2 and g.data == {"city": "Paris"}
    first, second = server.chats()
    assert "could not be used" in second["messages"][-1]["content"] and second["temperature"] == 0.5
    assert g.usage.attempts == 2
    assert g.usage.completion_tokens == 2 + 2  # '{"unexpected": "field"}' then '{"city": "Paris"}'
    assert g.usage.prompt_tokens == 2 + sum(len(m["content"].split()) for m in second["messages"])


@pytest.mark.parametrize("fault,said", [
    ("500", r"returned an error \(HTTP 500, model 'stand-in-1b'\): stand-in: the model runner crashed"),
    ("invalid_json", r"did not answer like an OpenAI-compatible server .*'<html><body>502 Bad Gateway"
                     r"</body></html>', not JSON; check that OPENAI_BASE_URL"),
    ("bad_shape", r"did not answer like an OpenAI-compatible server .*without "
                  r"choices\[0\]\.message\.content"),
    ("drop", r"the connection to the server at http://127\.0\.0\.1:\d+/v1 failed \(model 'stand-in-1b'\): "
             r"RemoteProtocolError"),
])
def test_a_failed_request_is_an_llm_error_that_says_what_came_back(server, fault, said):
    server.add_fault(fault)
    with pytest.raises(LLMError, match=said) as err:
        gen_for(server).chat("Reply OK.")
    assert not isinstance(err.value, BackendUnavailable)
    assert err.value.usage.attempts == 1 and err.value.usage.completion_tokens is None
    assert err.value.usage.seconds > 0


def test_a_timeout_names_the_setting_and_counts_its_seconds(server):
    server.add_fault("slow")
    said = (r"did not answer within 0.5 s \(model 'stand-in-1b'\); allow longer with --timeout SECONDS or "
            r"RAGWORKBOOK_OPENAI_TIMEOUT")
    with pytest.raises(LLMError, match=said) as err:
        gen_for(server, timeout=0.5).chat("Reply OK.")
    assert 0.5 <= err.value.usage.seconds < 5


def test_a_busy_server_is_asked_again_as_it_says_then_given_up(server):
    server.add_fault("429", times=2)
    assert gen_for(server).chat("Reply OK.").text == "OK" and len(server.chats()) == 3
    server.add_fault("429")
    with pytest.raises(LLMError, match=r"rate-limiting the requests \(HTTP 429.*\): Rate limit reached"):
        gen_for(server).chat("Reply OK.")


def test_a_judge_counts_a_failed_call_and_keeps_going(server):
    server.add_fault("500", match="first")
    judge = Judge(gen_for(server))
    bad = judge.call("q", "the first question", SCHEMA)
    good = judge.call("q", "the second question", SCHEMA)
    assert bad.error.startswith("llm_error: the server at") and good.ok and judge.n_model_calls == 2


def test_no_server_says_where_and_how_to_start_one():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(BackendUnavailable, match=rf"no OpenAI-compatible server answering at {url} "
                                                 r"\(OPENAI_BASE_URL\): start one, e.g. `llama-server -m "
                                                 r"MODEL.gguf --port 8080`") as err:
        OpenAIGenerator("m", base_url=url).chat("hi")
    assert err.value.usage.attempts == 1
    assert openai_models(url) is None


def test_a_model_the_server_does_not_serve_lists_the_ones_it_does(server):
    said = (rf"model 'llama-9000' is not served by the server at {server.url} \(server said: The model "
            rf"`llama-9000` does not exist.*\); it serves: {FAKE_MODEL}\. Give one of its models with "
            r"--model NAME")
    with pytest.raises(ModelNotFound, match=said):
        OpenAIGenerator("llama-9000", base_url=server.url).chat("hi")


def test_a_url_without_the_api_path_says_so(server):
    base = server.url.removesuffix("/v1")
    said = (r"has no chat-completions endpoint .*HTTP 404: Not Found\): set OPENAI_BASE_URL to the API's "
            rf"base URL; the base URL usually ends in /v1: try OPENAI_BASE_URL={base}/v1")
    with pytest.raises(BackendUnavailable, match=said):
        OpenAIGenerator(FAKE_MODEL, base_url=base).chat("hi")


# --- the key and the URL's credentials are never shown ----------------------------------------------------
def test_a_refused_key_is_named_and_never_shown(server):
    server.add_fault("401")  # the stand-in quotes the key it got, as OpenAI does
    gen = gen_for(server, api_key=KEY)
    said = (r"refused the request \(HTTP 401: Incorrect API key provided: \*\*\*\.\); the key in "
            r"OPENAI_API_KEY was refused")
    with pytest.raises(AuthenticationFailed, match=said) as err:
        gen.chat("hi")
    assert isinstance(err.value, BackendUnavailable)  # a judge stops: no judgment can succeed
    with pytest.raises(AuthenticationFailed, match="it needs an API key: set OPENAI_API_KEY"):
        gen_for(server).chat("hi")
    for shown in (repr(gen), gen.identity, gen.url, str(err.value), repr(err.value)):
        assert KEY not in shown


def test_credentials_in_the_url_are_never_shown(server):
    url = server.url.replace("http://", "http://me:pa55word@")
    gen = OpenAIGenerator(FAKE_MODEL, base_url=url, timeout=10)
    assert gen.chat("Reply OK.").text == "OK"  # sent (as basic auth), never shown
    server.add_fault("500")
    with pytest.raises(LLMError) as err:
        gen.chat("Reply OK.")
    for shown in (repr(gen), gen.identity, str(err.value)):
        assert "pa55word" not in shown and "***@127.0.0.1" in shown


def test_a_recording_holds_neither_the_key_nor_the_url(server, tmp_path):
    path = tmp_path / "rec.json"
    rec = RecordingGenerator(gen_for(server, api_key=KEY), path)
    rec.chat("Reply OK.")
    text = path.read_text(encoding="utf-8")
    assert KEY not in text and server.url not in text and '"backend": "openai"' in text


# --- proxies --------------------------------------------------------------------------------------------
@pytest.fixture()
def proxied(monkeypatch):
    with LoggingProxy() as proxy:
        for name in PROXY_VARIABLES:
            monkeypatch.setenv(name, proxy.url)
        for name in ("no_proxy", "NO_PROXY"):
            monkeypatch.delenv(name, raising=False)
        yield proxy


def test_a_local_server_is_reached_directly_with_a_proxy_set(server, proxied):
    gen = gen_for(server, api_key=KEY)
    assert gen.chat("Reply OK.").text == "OK"
    assert asyncio.run(gen.achat("Reply OK.")).text == "OK"
    assert gen.list_models() == [FAKE_MODEL] and openai_models(server.url) == [FAKE_MODEL]
    assert proxied.received == [] and len(server.chats()) == 2


def test_a_remote_server_goes_as_the_environment_says(proxied):
    gen = OpenAIGenerator("m", base_url="http://10.255.255.1:8080/v1", api_key=KEY, timeout=5)
    with pytest.raises(LLMError, match=r"returned an error \(HTTP 502"):
        gen.chat("Reply OK.")
    (received,) = proxied.received
    assert received["request"].startswith("POST http://10.255.255.1:8080/v1/chat/completions")
    assert json.loads(received["body"])["messages"] == [{"role": "user", "content": "Reply OK."}]


# --- record and replay ----------------------------------------------------------------------------------
def test_record_then_replay_gives_the_same_answers_and_counts(server, tmp_path):
    path = tmp_path / "rec.json"
    live = RecordingGenerator(gen_for(server), path)
    server.add_fault("schema", kind="judge", times=1)
    plain, judged = live.chat("Reply OK."), live.chat("Which city?", schema=SCHEMA)
    first = path.read_bytes()
    replay = ReplayGenerator(path)
    again = replay.chat("Reply OK."), replay.chat("Which city?", schema=SCHEMA)
    assert again == (plain, judged) and all(g.replayed for g in again)
    for live_g, replayed in zip((plain, judged), again, strict=True):
        assert replayed.usage == Usage(live_g.attempts, live_g.usage.prompt_tokens,
                                       live_g.usage.completion_tokens, round(live_g.usage.seconds, 3))
    assert judged.usage.attempts == 2
    RecordingGenerator(gen_for(server), path).chat("Reply OK.")  # the same answer again, other seconds
    assert path.read_bytes() == first


def test_the_real_servers_packages_are_in_the_dev_extra():
    from conftest import declared_in_extra

    # llama-cpp-python's `server` extra, by name: test_openai_live.py starts that server
    for name in ("fastapi", "uvicorn", "sse-starlette", "starlette-context", "pydantic-settings", "PyYAML"):
        assert declared_in_extra(name, "dev"), name
