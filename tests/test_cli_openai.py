"""``ragworkbook eval --backend openai --judge`` end to end, in a fresh process, against a real
OpenAI-compatible server (llama-cpp-python's, serving the embedded SmolLM2 file on loopback: the
``llama_server`` fixture), on a one-question eval set; and the command line's choices."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import LLAMA_SERVER_MODEL, REPO

from ragworkbook.cli import BACKEND_CHOICES, build_parser
from ragworkbook.llm.defaults import BACKENDS
from ragworkbook.paths import data_path


def test_every_backend_is_a_choice_of_the_command_line():
    assert BACKEND_CHOICES == list(BACKENDS)
    args = build_parser().parse_args(["eval", "--backend", "openai", "--model", "m", "--timeout", "9"])
    assert (args.backend, args.model, args.ollama_timeout) == ("openai", "m", 9.0)
    assert build_parser().parse_args(["eval", "--ollama-timeout", "7"]).ollama_timeout == 7.0


def test_the_openai_backend_without_a_model_is_a_usage_error(tmp_path, monkeypatch, capsys):
    from conftest import free_port

    from ragworkbook.cli import main

    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    monkeypatch.delenv("RAGWORKBOOK_MODEL", raising=False)
    assert main(["eval", "--backend", "openai", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert ("ragworkbook eval: error: the openai backend has no default model: give the name the server "
            "serves it under with --model NAME") in err and "Traceback" not in err


@pytest.mark.model
def test_eval_with_the_judge_on_a_real_openai_compatible_server(llama_server, tmp_path):
    full = json.loads(data_path("eval_set.json").read_text(encoding="utf-8"))
    one = {**full, "name": "attention-1", "items": full["items"][3:4]}  # q4: the optimizer
    eval_set = tmp_path / "one.json"
    eval_set.write_text(json.dumps(one), encoding="utf-8")
    out = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGWORKBOOK_", "OPENAI_")) or k in (
        "RAGWORKBOOK_CACHE", "RAGWORKBOOK_LLM_THREADS")}
    env.update(OPENAI_BASE_URL=llama_server.url, OPENAI_API_KEY=llama_server.api_key,
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]))
    # two judged metrics of the four (faithfulness: claims then verdicts; answer relevancy: questions then
    # embeddings), so the test takes about a minute: every judged metric goes through the same judge calls
    cmd = [sys.executable, "-m", "ragworkbook", "eval", "--backend", "openai", "--model", LLAMA_SERVER_MODEL,
           "--judge", "--metric", "hit_rate@3,token_f1,faithfulness,answer_relevancy", "--eval-set",
           str(eval_set), "--out", str(out), "--no-progress"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"using openai backend ({LLAMA_SERVER_MODEL}) at {llama_server.url}" in proc.stdout
    assert f"1 questions, openai:{LLAMA_SERVER_MODEL}" in proc.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["meta"]["backend"] == "openai" and report["meta"]["model"] == LLAMA_SERVER_MODEL
    (row,) = report["rows"]
    assert row["id"] == "q4" and row["answer"]
    assert set(report["aggregates"]) == {"hit_rate@3", "token_f1", "faithfulness", "answer_relevancy"}
    for name in ("faithfulness", "answer_relevancy"):  # computed, or counted as failed: never dropped
        agg = report["aggregates"][name]
        assert agg["n"] + agg.get("failed", 0) + agg.get("undefined", 0) == 1, (name, agg)
    # the ledger: the server's own usage counts and the seconds of each metric's judge requests
    ledger = report["meta"]["judge_ledger"]
    for name in ("faithfulness", "answer_relevancy"):
        cost = ledger["metrics"][name]
        assert cost["requests"] >= 1 and cost["calls"] >= cost["requests"], (name, cost)
        assert cost["seconds"] > 0, (name, cost)
        assert cost["prompt_tokens"] > 0 and cost["tokens_unreported"] <= cost["failed"], (name, cost)
    assert ledger["total"]["requests"] == report["meta"]["judge_model_calls"]
    assert f"judge cost (openai:{LLAMA_SERVER_MODEL}, live;" in proc.stdout
    print(proc.stdout)  # the table and its ledger, for the record (pytest -s)
    for text in (proc.stdout, proc.stderr, out.read_text(encoding="utf-8")):
        assert llama_server.api_key not in text
