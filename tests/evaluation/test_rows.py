"""Typed rows: a ScoredQuestion is written as the report's row dict (keys in the format's order) and read
back unchanged; scoring returns new rows and leaves its inputs alone; ScoringInfo sums batches."""

from __future__ import annotations

import json

from ragworkbook.evaluation.evaluate import resolve_metrics, score_rows
from ragworkbook.evaluation.rows import RecordRelevance, RowError, ScoredQuestion, ScoringInfo
from ragworkbook.outcomes import FAILED, UNDEFINED, Unscored


def _row(**kw):
    base = dict(id="q1", question="What colour?", reference="Red.", answer="Red.", context_ids=["c1", None],
                contexts=["It is red.", "noise"])
    return ScoredQuestion(**{**base, **kw})


def test_a_pipeline_row_is_written_in_the_report_order_and_read_back():
    row = _row(metrics={"recall@2": 1.0, "faithfulness": None},
               unscored={"faithfulness": Unscored(FAILED, "timeout", "slow")},
               ranking=["c1", "<context 2>", "c9"], judgments={"faithfulness": {"outcome": "failed"}})
    d = row.to_dict()
    assert list(d) == ["id", "question", "reference", "answer", "context_ids", "contexts", "metrics",
                       "unscored", "ranking", "judgments"]
    assert d["unscored"] == {"faithfulness": {"outcome": "failed", "reason": "timeout", "message": "slow"}}
    back = ScoredQuestion.from_dict(json.loads(json.dumps(d)))
    assert back == row and json.dumps(back.to_dict()) == json.dumps(d)


def test_an_answers_row_keeps_its_relevance_and_a_failed_row_its_error():
    row = _row(relevance=RecordRelevance("keyword", "sha256:ab"), reference_contexts=["It is red."])
    assert list(row.to_dict())[-3:] == ["relevance", "reference_contexts", "relevance_key"]
    none = _row(relevance=RecordRelevance(None)).to_dict()
    assert none["relevance"] is None and "relevance_key" not in none  # no relevance: no key
    failed = _row(answer="", error=RowError("model_not_found", "pull it")).to_dict()
    assert failed["error"] == {"reason": "model_not_found", "message": "pull it"}
    assert ScoredQuestion.from_dict({**failed, "future_field": 1}).to_dict()["future_field"] == 1


def test_the_ranking_is_the_stored_one_else_the_context_ids():
    assert _row().ranked_ids == ["c1", "<context 2>"]
    assert _row(ranking=["c2", "c1"]).ranked_ids == ["c2", "c1"]


def test_with_scores_replaces_only_the_metrics_named():
    row = _row(metrics={"bleu": 0.5, "token_f1": None},
               unscored={"token_f1": Unscored(FAILED, "not_scored", "")})
    scored = _row(metrics={"token_f1": 1.0}, judgments={"faithfulness": {"outcome": "scored"}})
    out = row.with_scores(scored, ["token_f1"])
    assert out.metrics == {"bleu": 0.5, "token_f1": 1.0} and out.unscored == {}
    assert out.judgments == {"faithfulness": {"outcome": "scored"}}
    assert row.metrics["token_f1"] is None  # the row given is not changed


def test_score_rows_returns_new_rows_and_leaves_its_inputs_alone():
    wanted = resolve_metrics(["recall@2", "token_f1"], k=2, have_qrels=True, have_judge=False)
    rows = [_row(), _row(id="q2", reference=None)]
    why = Unscored(UNDEFINED, "no_reference", "none")
    got = score_rows(rows, wanted, rankings={"q1": ["c1", "x"], "q2": ["x"]}, qrels={"q1": {"c1": 1}},
                     unscored={"q2": {"token_f1": why}})
    assert [r.metrics for r in got.rows] == [{"recall@2": 1.0, "token_f1": 1.0},
                                             {"recall@2": 0.0, "token_f1": None}]
    assert got.rows[1].unscored == {"token_f1": why}
    assert all(r.metrics == {} and r.unscored == {} for r in rows)
    assert got.info.to_dict() == {"retrieval_depth": 2}


def test_scoring_info_sums_batches_in_the_meta_order():
    total = ScoringInfo(judge_model_calls=0, judge_reliability={})
    total.add(ScoringInfo(retrieval_depth=3, judge="ollama:m", judge_model_calls=2,
                          judge_reliability={"faithfulness": {"status": "unmeasured"}}))
    total.add(ScoringInfo(retrieval_depth=5, judge_model_calls=1))
    assert total.to_dict() == {"retrieval_depth": 5, "judge": "ollama:m", "judge_model_calls": 3,
                               "judge_reliability": {"faithfulness": {"status": "unmeasured"}}}
    assert list(total.to_dict()) == ["retrieval_depth", "judge", "judge_model_calls", "judge_reliability"]
