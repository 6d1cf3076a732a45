"""The main job, live: `ragworkbook eval --backend embedded --judge` on one question, end to end.

Nothing is replayed: the retriever embeds, the embedded model answers in its worker process, the
same model judges. SmolLM2-135M is often wrong, so only what must hold is asserted: the command
succeeds, every judged metric of the question is either a value or a counted failure with its
reason, and the report on disk is the one printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ragworkbook.evaluation.report import Report
from ragworkbook.paths import data_path

pytestmark = pytest.mark.model

JUDGED = ("faithfulness", "answer_relevancy", "context_precision", "context_recall")


def test_one_question_judged_live_with_the_embedded_model(tmp_path, no_ollama):
    items = json.loads(data_path("eval_set.json").read_text(encoding="utf-8"))["items"]
    eval_set = tmp_path / "one.json"
    eval_set.write_text(json.dumps({"name": "one", "items": items[:1]}), encoding="utf-8")
    out = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGWORKBOOK_") or k in (
        "RAGWORKBOOK_CACHE", "RAGWORKBOOK_LLM_THREADS")}
    env["OLLAMA_HOST"] = no_ollama
    done = subprocess.run(
        [sys.executable, "-m", "ragworkbook", "eval", "--backend", "embedded", "--judge", "--eval-set",
         str(eval_set), "--out", str(out), "--no-progress"],
        env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "1 questions, embedded:SmolLM2-135M-Instruct.Q4_1, dense retrieval, k=3" in done.stdout
    report = Report.load(out)
    (row,) = report.rows
    assert row["answer"].strip() and not row.get("error")
    for name in JUDGED:
        agg = report.aggregates[name]
        assert agg.n + agg.failed + agg.undefined == 1, name  # a value, or a counted failure / undefined
        assert name in done.stdout
    assert report.meta["backend"] == "embedded" and report.meta.get("judge")
