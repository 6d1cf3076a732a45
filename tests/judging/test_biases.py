"""Judge biases beyond position: verbosity, self-preference, prompt sensitivity."""

from __future__ import annotations

import math

import pytest
from fakes.generators import Echo
from fakes.judges import RuleJudge
from scipy.stats import fisher_exact

from ragworkbook.judging.biases import (
    CLOSED_BOOK_SYSTEM,
    REWORDED_FAITHFULNESS,
    closed_book_answers,
    judge_faithfulness,
    prompt_sensitivity,
    prompt_variant,
    self_preference,
    verbosity_bias,
    word_count,
)
from ragworkbook.judging.judge import Judge
from ragworkbook.judging.prompts import PROMPTS
from ragworkbook.judging.results import JudgeSample
from ragworkbook.llm.base import Generator, LLMError

GOOD_LEN = [10, 12, 30, 8, 40, 5, 20, 9]
BAD_LEN = [20, 6, 10, 16, 20, 25, 10, 18]  # good is longer in pairs 2, 3, 5, 7 (1-based: 2, 3, 5, 7)


def test_a_judge_that_scores_length_has_bias_one():
    good = [float(n) for n in GOOD_LEN]
    bad = [float(n) for n in BAD_LEN]
    v = verbosity_bias(good, bad, GOOD_LEN, BAD_LEN)
    assert v.accuracy_longer == 1.0 and v.accuracy_shorter == 0.0 and v.bias == 1.0
    assert v.prefers_longer.value == 1.0
    assert v.labels_prefer_longer.value == 0.5
    assert v.p_value == pytest.approx(fisher_exact([[4, 0], [0, 4]]).pvalue)


def test_a_perfect_judge_has_no_length_bias():
    v = verbosity_bias([1.0] * 8, [0.0] * 8, GOOD_LEN, BAD_LEN)
    assert v.bias == 0.0 and v.prefers_longer.value == pytest.approx(v.labels_prefer_longer.value)


def test_ties_count_half_and_missing_or_equal_lengths_are_skipped():
    v = verbosity_bias([1.0, 0.5, None, 1.0], [1.0, 0.0, 1.0, 0.0], [10, 5, 3, 4], [5, 10, 9, 4])
    assert v.skipped == 2  # a missing score, equal lengths
    assert (v.ties_longer, v.good_shorter.k, v.good_shorter.n) == (1, 1, 1)
    assert v.accuracy_longer == 0.5 and math.isnan(v.p_value)
    with pytest.raises(ValueError, match="one entry per pair"):
        verbosity_bias([1.0], [1.0, 0.0], [1], [1])


def test_self_preference():
    own = [1.0, 1.0, 1.0, 0.5, None]
    other = [1.0, 0.0, 0.0, 0.5, 0.25, 0.0]
    s = self_preference(own, other)
    assert (s.own.k, s.own.n, s.other.k, s.other.n) == (3, 4, 1, 6)
    assert s.excess == pytest.approx(0.75 - 1 / 6) and (s.unscored_own, s.unscored_other) == (1, 0)
    assert s.p_value == pytest.approx(fisher_exact([[3, 1], [1, 5]]).pvalue)


def test_prompt_sensitivity():
    a = [1.0, 1.0, 0.5, 0.0, None, 1.0]
    b = [1.0, 0.5, 0.5, 1.0, 1.0, 1.0]
    labels = [1, 1, 0, 0, 1, 1]
    p = prompt_sensitivity(a, b, labels=labels)
    assert (p.flips.k, p.flips.n, p.unscored) == (2, 5, 1)
    assert p.agreement_a.value == pytest.approx(5 / 5) and p.agreement_b.value == pytest.approx(3 / 5)
    assert p.mean_a == pytest.approx(3.5 / 5)
    same = prompt_sensitivity([1.0, 0.0], [1.0, 0.0])
    assert same.kappa == 1.0 and same.flips.k == 0 and same.agreement_a is None
    assert math.isnan(prompt_sensitivity([1.0, 1.0], [1.0, 1.0]).kappa)


def test_prompt_variant_swaps_and_restores():
    original = PROMPTS["faithfulness"]
    with prompt_variant("faithfulness", REWORDED_FAITHFULNESS) as old:
        assert PROMPTS["faithfulness"] == REWORDED_FAITHFULNESS and old == original
    assert PROMPTS["faithfulness"] == original
    with pytest.raises(RuntimeError), prompt_variant("faithfulness", REWORDED_FAITHFULNESS):
        raise RuntimeError("boom")
    assert PROMPTS["faithfulness"] == original
    with pytest.raises(ValueError, match="must use the fields \\['context', 'n', 'statements'\\]"):
        with prompt_variant("faithfulness", "Context: {context}"):
            pass
    with pytest.raises(ValueError, match="no prompt 'nope'"):
        with prompt_variant("nope", "x"):
            pass


def test_word_count():
    assert word_count("The model -- it has 8 heads.") == 6
    assert word_count("") == 0


def test_the_reworded_prompt_is_what_the_judge_receives():
    samples = [JudgeSample("q?", "The model has 8 heads. It was trained on Mars.", ["The model has 8 heads."],
                           sample_id="a"),
               JudgeSample("q?", "The encoder has 6 layers.", ["The encoder has 6 layers."], sample_id="b")]
    fake = RuleJudge()
    original = judge_faithfulness(samples, Judge(fake))
    claims = [[it["statement"] for it in r.items] for r in original]
    with prompt_variant("faithfulness", REWORDED_FAITHFULNESS):
        reworded = judge_faithfulness(samples, Judge(fake), claims=claims)
    assert any("can be verified from the context alone" in p for p in fake.prompts)
    # a rule judge reads the fields, not the wording
    assert [r.score for r in original] == [r.score for r in reworded] == [0.5, 1.0]
    assert prompt_sensitivity([r.score for r in original], [r.score for r in reworded]).flips.k == 0
    with pytest.raises(ValueError, match="one entry per pair"):
        judge_faithfulness(samples, Judge(fake), claims=[["x"]])


def test_closed_book_answers_have_no_context_and_a_failure_is_none():
    echo = Echo()
    assert closed_book_answers(["Who won?"], echo) == ["?now ohW (seed 0)"]

    class Down(Generator):
        backend = "down"

        def _chat_once(self, messages, options, schema):
            assert messages[0] == {"role": "system", "content": CLOSED_BOOK_SYSTEM}
            raise LLMError("server down")

    assert closed_book_answers(["Who won?", "When?"], Down("m")) == [None, None]
