"""Faithfulness, hallucination rate and claim support: three summaries of the same verdicts."""

from __future__ import annotations

import pytest

from ragworkbook.evaluation.hallucination import summarize_claims, summarize_faithfulness
from ragworkbook.judging.metrics import hallucination
from ragworkbook.judging.results import JudgedResult


def test_same_faithfulness_different_rates():
    spread = summarize_claims([[1, 1, 1, 1, 0]] * 5)  # one unsupported claim in every answer
    concentrated = summarize_claims([[0, 0, 0, 0, 0]] + [[1, 1, 1, 1, 1]] * 4)  # one answer made up
    assert spread.faithfulness == pytest.approx(0.8) == concentrated.faithfulness
    assert spread.rate.value == 1.0 and concentrated.rate.value == pytest.approx(0.2)
    assert spread.claim_support.value == pytest.approx(0.8)


def test_claim_support_weights_long_answers():
    s = summarize_claims([[1], [1], [0, 0, 0, 0, 0, 0, 1, 1]])
    assert s.faithfulness == pytest.approx((1 + 1 + 0.25) / 3)
    assert s.claim_support.value == pytest.approx(4 / 10)
    assert (s.rate.k, s.rate.n) == (1, 3)
    assert "1 of 3" in str(s) and "claim support 0.400 (4 of 10 claims)" in str(s)


def test_unscored_answers_are_counted_not_read_as_clean():
    s = summarize_claims([[1, 0], [], None, [1]])
    assert (s.scored, s.undefined, s.total) == (2, 2, 4)
    assert s.rate.value == 0.5 and "2 undefined, 0 failed" in str(s)


def _result(score, verdicts=None, outcome="scored"):
    items = [{"statement": f"c{i}", "verdict": v} for i, v in enumerate(verdicts or [])]
    return JudgedResult("faithfulness", "x", score, outcome, items=items)


def test_from_judged_results_agrees_with_the_registry_flag():
    results = [_result(1.0, [1, 1]), _result(0.5, [1, 0]), _result(None, outcome="failed"),
               _result(None, outcome="undefined"), _result(0.0, [0])]
    s = summarize_faithfulness(results)
    assert (s.scored, s.failed, s.undefined) == (3, 1, 1)
    flags = [hallucination(r).score for r in results if r.score is not None]
    assert s.rate.value == pytest.approx(sum(flags) / len(flags))  # the registry's hallucination mean
    assert s.faithfulness == pytest.approx(0.5) and s.claim_support.value == pytest.approx(3 / 5)


def test_from_plain_scores_claim_support_is_unknown():
    s = summarize_faithfulness([1.0, 0.9, None, 0.5])
    assert s.claim_support is None and s.rate.value == pytest.approx(2 / 3) and s.undefined == 1


def test_bad_input():
    with pytest.raises(ValueError, match="a claim verdict is 1 .supported. or 0"):
        summarize_claims([[1, 2]])
    with pytest.raises(TypeError, match="got a string"):
        summarize_claims(["10"])
    with pytest.raises(ValueError, match="a number from 0 to 1"):
        summarize_faithfulness([1.5])
    with pytest.raises(ValueError, match="not faithfulness"):
        summarize_faithfulness([JudgedResult("answer_relevancy", "x", 0.5)])
