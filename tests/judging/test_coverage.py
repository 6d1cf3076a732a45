"""Completeness and utilization: the sentence split, the formulas, the judge's calls and every outcome."""

from __future__ import annotations

import pytest
from fakes.context_judges import ContextRuleJudge
from fakes.judges import GarbageJudge

from ragworkbook.judging.coverage import (
    completeness,
    context_units,
    coverage_from_verdicts,
    coverage_schema,
    utilization,
)
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.metrics import evaluate_judged
from ragworkbook.judging.results import JudgeSample
from ragworkbook.metrics.registry import parse_metric

SAMPLE = JudgeSample(
    question="Which optimizer did they use for training?",
    answer="They trained with the Adam optimizer.",
    contexts=["Training used the Adam optimizer with beta1 = 0.9. "
              "The learning rate followed a warm-up schedule.",
              "The weather in Paris was sunny on the day of the conference dinner."],
    sample_id="opt",
)


def test_context_units_split_sentences_and_lines_and_join_fragments():
    text = "ning rate. The encoder has six layers.\n- 8\n- dropout is 0.1 in the base model\nEnd."
    assert context_units(text) == ["ning rate. The encoder has six layers.",
                                   "- 8 - dropout is 0.1 in the base model End."]
    assert context_units("Short.") == ["Short."]
    assert context_units("   ") == []


def test_coverage_from_verdicts():
    cov = coverage_from_verdicts([1, 1, 0, 0], [1, 0, 1, 0])
    assert cov["utilization"] == 0.5 and cov["completeness"] == 0.5 and cov["relevance"] == 0.5
    assert (cov["n"], cov["n_relevant"], cov["n_used"], cov["n_relevant_used"], cov["n_used_irrelevant"]) == (
        4, 2, 2, 1, 1)
    padded = coverage_from_verdicts([1, 0, 0, 0], [1, 0, 0, 0])
    assert padded["completeness"] == 1.0 and padded["utilization"] == 0.25
    assert coverage_from_verdicts([0, 0], [1, 0])["completeness"] is None
    with pytest.raises(ValueError, match="2 relevance verdicts but 1 use verdicts"):
        coverage_from_verdicts([1, 0], [1])
    with pytest.raises(ValueError, match="the context is empty"):
        coverage_from_verdicts([], [])
    with pytest.raises(ValueError, match="a verdict must be 0/1"):
        coverage_from_verdicts([2], [1])


def test_schema_counts_the_sentences():
    s = coverage_schema(3)["properties"]["sentences"]
    assert s["minItems"] == s["maxItems"] == 3
    with pytest.raises(ValueError):
        coverage_schema(0)


def test_scores_from_the_rule_judge():
    judge = Judge(ContextRuleJudge(), max_concurrency=1)
    c = completeness(SAMPLE, judge)
    u = utilization(SAMPLE, judge)
    # three sentences: only the first is relevant (shares "optimizer", "training") and used (3 of 6 words)
    assert [(it["rank"], it["relevant"], it["used"]) for it in c.items] == [(1, 1, 1), (1, 0, 0), (2, 0, 0)]
    assert c.score == 1.0 and c.outcome == "scored" and c.detail["utilization"] == pytest.approx(1 / 3)
    assert u.score == pytest.approx(1 / 3) and u.detail["completeness"] == 1.0
    assert judge.n_model_calls == 2  # one per chunk; utilization reused completeness's calls
    assert u.n_model_calls == 0 and c.n_model_calls == 2


def test_outcomes():
    judge = Judge(ContextRuleJudge())
    empty_answer = JudgeSample(SAMPLE.question, "  ", SAMPLE.contexts, sample_id="e")
    assert utilization(empty_answer, judge).score == 0.0
    assert utilization(empty_answer, judge).reason == "empty_answer"
    r = completeness(empty_answer, judge)
    assert (r.outcome, r.reason, r.score) == ("undefined", "empty_answer", None)
    no_context = JudgeSample(SAMPLE.question, SAMPLE.answer, [], sample_id="n")
    for fn in (completeness, utilization):
        r = fn(no_context, judge)
        assert (r.outcome, r.reason) == ("undefined", "empty_context")
    irrelevant = JudgeSample(SAMPLE.question, SAMPLE.answer, [SAMPLE.contexts[1]], sample_id="i")
    r = completeness(irrelevant, judge)
    assert (r.outcome, r.reason) == ("undefined", "no_relevant_context") and r.items
    assert utilization(irrelevant, judge).score == 0.0
    assert judge.n_model_calls == 1


def test_a_failed_call_is_a_failed_sample_with_its_raw_outputs():
    gen = GarbageJudge()
    r = completeness(SAMPLE, Judge(gen))
    assert r.outcome == "failed" and r.score is None and r.reason == "output_parse_error"
    assert r.raw_outputs and "Here is my verdict" in r.raw_outputs[0]
    assert gen.calls == 2 * (1 + gen.max_retries)  # two chunks, each retried


def test_registered_and_run_by_evaluate_judged():
    assert parse_metric("context_utilization").key == "utilization"
    assert parse_metric("completeness").family == "judged"
    judge = Judge(ContextRuleJudge(), max_concurrency=1)
    irrelevant = JudgeSample(SAMPLE.question, SAMPLE.answer, [SAMPLE.contexts[1]], sample_id="i")
    rep = evaluate_judged([SAMPLE, irrelevant], judge, ["completeness", "utilization"], progress=False)
    agg = rep.aggregates["completeness"]
    assert (agg.mean, agg.n, agg.undefined, agg.failed) == (1.0, 1, 1, 0)
    assert rep.aggregates["utilization"].n == 2
    assert rep.aggregates["utilization"].mean == pytest.approx((1 / 3 + 0) / 2)
    assert rep.n_model_calls == 2  # the Paris chunk, same question and answer, is judged once for both
