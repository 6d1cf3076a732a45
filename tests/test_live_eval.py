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
    # the ledger: llama.cpp's own token counts and the seconds of every judge request, per metric
    ledger = report.meta["judge_ledger"]
    assert ledger["mode"] == "live" and set(JUDGED) <= set(ledger["metrics"])
    total = ledger["total"]
    assert total["requests"] == report.meta["judge_model_calls"] > 0
    assert total["calls"] >= total["requests"] and total["cache_hits"] == 0
    assert total["tokens_unreported"] <= total["failed"]  # only a request that got no answer lacks its counts
    assert total["prompt_tokens"] > 0 and total["completion_tokens"] > 0 and total["seconds"] > 0
    assert sum(m["requests"] for m in ledger["metrics"].values()) == total["requests"]
    assert "judge cost (embedded:SmolLM2-135M-Instruct.Q4_1, live;" in done.stdout
    print(done.stdout)  # the table and its ledger, for the record (pytest -s)

