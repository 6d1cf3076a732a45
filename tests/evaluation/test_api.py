"""``ragworkbook.evaluate``: records or a DataFrame in, a result with to_pandas/summary/save out, through
the same engine as ``ragworkbook eval --answers``."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest
from fakes.judges import CARBON, RuleJudge

import ragworkbook
from ragworkbook.evaluation.api import EvaluationResult, as_judge
from ragworkbook.evaluation.outputs import evaluate_outputs
from ragworkbook.evaluation.report import Report

RECORDS = [
    {"id": "q1", "question": "Which pair scored 28.4 BLEU?", "answer": "English to German scored 28.4 BLEU.",
     "contexts": ["The big model reached 28.4 BLEU on English to German.", "Training took 3.5 days."],
     "reference": "English to German, 28.4 BLEU."},
    {"id": "q2", "question": "How many heads?", "answer": "Eight heads.",
     "contexts": ["The model uses 8 parallel attention heads."], "reference": "8 heads"},
    {"id": "q3", "question": "Which optimizer?", "answer": "Adam.", "contexts": ["They used Adam."]},
]


def test_the_top_level_namespace_has_evaluate_and_importing_it_stays_cheap():
    assert ragworkbook.evaluate is ragworkbook.evaluation.api.evaluate
    assert "evaluate" in ragworkbook.__all__
    code = ("import ragworkbook, sys; "
            "print('pandas' in sys.modules, 'ragworkbook.evaluation.api' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ragworkbook.nope  # noqa: B018


def test_records_and_a_dataframe_give_the_report_of_eval_answers(tmp_path):
    metrics = ["exact_match", "token_f1", "rouge_l"]
    result = ragworkbook.evaluate(RECORDS, metrics=metrics, progress=False)
    assert isinstance(result, EvaluationResult) and result.metrics == metrics
    same = evaluate_outputs(RECORDS, metrics=metrics, progress=False)  # the engine, called directly
    assert result.report.to_dict()["rows"] == same.to_dict()["rows"]
    df = pd.DataFrame(RECORDS)
    from_df = ragworkbook.evaluate(df, metrics="exact_match,token_f1,rouge_l", progress=False)
    assert from_df.report.to_dict()["rows"] == result.report.to_dict()["rows"]
    # a RAGAS 0.2 frame (its column names) is read the same way
    ragas = df.rename(columns={"question": "user_input", "answer": "response",
                               "contexts": "retrieved_contexts"})
    assert ragworkbook.evaluate(ragas, metrics=metrics, progress=False)["token_f1"] == result["token_f1"]


def test_to_pandas_summary_and_the_unscored():
    result = ragworkbook.evaluate(RECORDS, metrics=["exact_match", "token_f1"], progress=False)
    table = result.to_pandas()
    assert list(table.index) == ["q1", "q2", "q3"]
    assert {"question", "answer", "reference", "exact_match", "token_f1", "unscored"} <= set(table.columns)
    assert pd.isna(table.loc["q3", "token_f1"])  # no reference: undefined, never 0
    assert result.unscored("token_f1")["q3"].reason == "no_reference"
    summary = result.summary()
    assert summary.loc["token_f1", "n"] == 2 and summary.loc["token_f1", "undefined"] == 1
    values = [v for v in result["token_f1"] if v is not None]
    assert summary.loc["token_f1", "mean"] == pytest.approx(sum(values) / 2)
    assert summary.loc["token_f1", "ci_low"] <= summary.loc["token_f1", "mean"] <= summary.loc["token_f1",
                                                                                               "ci_high"]
    assert "'token_f1': " in repr(result) and "1 undefined" in repr(result)
    assert result.ledger() is None  # nothing judged


def test_a_judge_the_ledger_and_save(tmp_path):
    gen = RuleJudge()
    records = [{"question": CARBON.question, "answer": CARBON.answer, "contexts": CARBON.contexts,
                "reference": CARBON.reference}]
    result = ragworkbook.evaluate(records, metrics=["faithfulness", "hallucination", "context_recall"],
                                  judge=gen, progress=False)
    assert result.summary().loc["faithfulness", "n"] == 1
    led = result.ledger()
    assert led.loc["total", "requests"] == gen.calls == 3
    assert led.loc["hallucination", "derived_from"] == "faithfulness"
    path = result.save(tmp_path / "out" / "report.json")
    back = Report.load(path)
    assert back.to_dict() == json.loads(json.dumps(result.report.to_dict()))


def test_bad_input_names_the_record_and_the_field():
    with pytest.raises(ValueError, match="record 2"):
        ragworkbook.evaluate([RECORDS[0], {"answer": "no question"}], metrics=["token_f1"], progress=False)
    with pytest.raises(ValueError, match="is judged by an LLM: pass judge="):
        ragworkbook.evaluate(RECORDS, metrics=["faithfulness"], progress=False)


def test_a_judge_given_by_name(monkeypatch):
    import ragworkbook.llm as llm

    seen = {}
    monkeypatch.setattr(llm, "get_generator", lambda **kw: seen.update(kw) or RuleJudge())
    assert isinstance(as_judge("ollama:qwen2.5:7b"), RuleJudge)
    assert seen == {"backend": "ollama", "model": "qwen2.5:7b"}
    as_judge("embedded")
    assert seen == {"backend": "embedded", "model": None}
    gen = RuleJudge()
    assert as_judge(gen) is gen and as_judge(None) is None
    with pytest.raises(ValueError, match="give a backend"):
        as_judge(":model")
