"""NLI faithfulness: three-way labels per claim, contradiction reported apart, every outcome counted."""

from __future__ import annotations

import pytest
from fakes.context_judges import ContextRuleJudge
from fakes.judges import GarbageJudge, RuleJudge

from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import evaluate_judged, faithfulness
from ragworkbook.judging.nli import LABELS, nli_contradiction, nli_faithfulness, nli_from_labels, nli_schema
from ragworkbook.judging.results import JudgeSample
from ragworkbook.metrics.registry import parse_metric

SAMPLE = JudgeSample(
    question="Which carbon pricing mechanism did Canada introduce in 2023?",
    answer="Canada introduced carbon contracts for difference in 2023. The program started in 2021. "
           "It was praised by everyone.",
    contexts=["Canada introduced carbon contracts for difference in 2023 for industrial emitters."],
    sample_id="carbon",
)


def test_nli_from_labels():
    s = nli_from_labels(["entailment", "contradiction", "neutral", "entailment"])
    assert (s["nli_faithfulness"], s["nli_contradiction"], s["neutral"]) == (0.5, 0.25, 0.25)
    assert s["n_claims"] == 4
    assert s["counts"] == {"entailment": 2, "contradiction": 1, "neutral": 1}
    with pytest.raises(ValueError, match="unknown NLI label"):
        nli_from_labels(["supported"])
    with pytest.raises(ValueError, match="at least one label"):
        nli_from_labels([])
    assert nli_schema()["properties"]["label"]["enum"] == list(LABELS)


def test_contradiction_is_reported_apart_from_unsupported():
    judge = Judge(ContextRuleJudge(), max_concurrency=1)
    f = nli_faithfulness(SAMPLE, judge)
    assert [it["label"] for it in f.items] == ["entailment", "contradiction", "neutral"]
    assert f.score == pytest.approx(1 / 3) and f.detail["nli_contradiction"] == pytest.approx(1 / 3)
    assert f.detail["neutral"] == pytest.approx(1 / 3)
    c = nli_contradiction(SAMPLE, judge)
    assert c.score == pytest.approx(1 / 3) and c.n_model_calls == 0  # every call came from the cache
    assert judge.n_model_calls == 4  # one extraction + three claims
    # the binary faithfulness of the same answer merges the two failures into "not supported"
    ragas = faithfulness(SAMPLE, Judge(RuleJudge()))
    assert [it["verdict"] for it in ragas.items] == [1, 0, 0]
    assert parse_metric("contradiction_rate").higher_is_better is False


def test_given_claims_skip_the_extraction():
    judge = Judge(ContextRuleJudge())
    r = nli_faithfulness(SAMPLE, judge, claims=["Canada introduced carbon contracts in 2023."])
    assert r.score == 1.0 and judge.n_model_calls == 1


def test_outcomes():
    judge = Judge(ContextRuleJudge())
    r = nli_faithfulness(JudgeSample(SAMPLE.question, "", SAMPLE.contexts), judge)
    assert (r.outcome, r.reason) == ("undefined", "empty_answer")
    r = nli_faithfulness(SAMPLE, judge, claims=[" "])
    assert (r.outcome, r.reason) == ("undefined", "no_claims")
    r = nli_contradiction(JudgeSample(SAMPLE.question, SAMPLE.answer, []), judge)
    assert (r.outcome, r.reason, r.score) == ("scored", "empty_context", 0.0)
    assert {it["label"] for it in r.items} == {"neutral"}
    bad = nli_faithfulness(SAMPLE, Judge(GarbageJudge()))
    assert bad.outcome == "failed" and bad.reason == "output_parse_error" and bad.score is None


def test_evaluate_judged_counts_failures():
    samples = [SAMPLE, JudgeSample(SAMPLE.question, "", SAMPLE.contexts, sample_id="empty")]
    rep = evaluate_judged(samples, Judge(ContextRuleJudge(), max_concurrency=1),
                          ["nli_faithfulness", "nli_contradiction"], progress=False)
    agg = rep.aggregates["nli_contradiction"]
    assert (agg.n, agg.undefined, agg.failed) == (1, 1, 0) and agg.mean == pytest.approx(1 / 3)
