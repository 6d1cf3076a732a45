"""A rubric metric judged live: `ragworkbook eval --answers FILE --backend embedded --judge --rubric FILE`
on one answer. Nothing is replayed; SmolLM2-135M is often wrong, so only what must hold is asserted: the
command succeeds, the value is a point of the rubric's scale normalised to 0-1 (or a counted failure with
its reason), and the ledger charges the rubric its one request with llama.cpp's token counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ragworkbook.evaluation.report import Report

pytestmark = pytest.mark.model


def test_a_rubric_judged_live_with_the_embedded_model(tmp_path, no_ollama):
    rubric = tmp_path / "rubric.json"
    rubric.write_text(json.dumps({"name": "states_a_number", "criterion": "the answer gives the number the "
                                  "question asks for", "scale": [1, 3], "evidence": ["question", "answer"]}))
    answers = tmp_path / "one.jsonl"
    record = {"id": "q1", "question": "How many attention heads does the base model use?",
              "answer": "The base model uses 8 attention heads.",
              "contexts": ["We employ h = 8 parallel attention layers, or heads."]}
    answers.write_text(json.dumps(record) + "\n")
    out = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGWORKBOOK_") or k in (
        "RAGWORKBOOK_CACHE", "RAGWORKBOOK_LLM_THREADS")}
    env["OLLAMA_HOST"] = no_ollama
    done = subprocess.run(
        [sys.executable, "-m", "ragworkbook", "eval", "--answers", str(answers), "--backend", "embedded",
         "--judge", "--rubric", str(rubric), "--out", str(out), "--no-progress"],
        env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "states_a_number" in done.stdout
    report = Report.load(out)
    assert report.metrics == ["states_a_number"]
    agg = report.aggregates["states_a_number"]
    assert agg.n + agg.failed == 1
    value = report.rows[0]["metrics"]["states_a_number"]
    if agg.n:
        assert value in (0.0, 0.5, 1.0)  # 1, 2, 3 on the scale 1..3
    cost = report.meta["judge_ledger"]["metrics"]["states_a_number"]
    assert cost["requests"] == 1 and cost["seconds"] > 0
    assert cost["prompt_tokens"] > 0 or cost["failed"]
    print(done.stdout)
