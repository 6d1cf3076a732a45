"""The pairwise judge: one prompt with both answers, asked in both orders; flips are inconsistent."""

from __future__ import annotations

import json

import pytest

from ragworkbook.judging.judge import Judge
from ragworkbook.judging.pairwise import pairwise, pairwise_many, position_bias
from ragworkbook.llm.base import Generator


def _answers(prompt: str) -> tuple[str, str]:
    first = prompt.split("Answer 1: ", 1)[1].split("\n\nAnswer 2: ", 1)[0]
    second = prompt.split("Answer 2: ", 1)[1].split("\n\n", 1)[0]
    return first, second


class Picky(Generator):
    """Prefers the answer that contains the reference's number; 'first' always picks answer 1."""

    backend = "fake"

    def __init__(self, style: str = "content"):
        super().__init__(f"picky-{style}")
        self.style = style
        self.prompts = []

    def _chat_once(self, messages, options, schema):
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        self.prompts.append(prompt)
        if self.style == "garbage":
            return "I think the first one"
        if self.style == "first":
            better = "1"
        else:
            first, second = _answers(prompt)
            better = "1" if "28.4" in first else "2" if "28.4" in second else "tie"
        return json.dumps({"better": better, "reason": "compared with the reference"})


Q, REF = "What BLEU score on English-to-German?", "28.4 BLEU."
GOOD, BAD = "It reached 28.4 BLEU.", "It reached 41.0 BLEU."


def test_both_orders_are_asked_with_both_answers_in_one_prompt():
    gen = Picky()
    r = pairwise(Q, GOOD, BAD, Judge(gen), reference=REF, pair_id="p1")
    assert len(gen.prompts) == 2
    assert _answers(gen.prompts[0]) == (GOOD, BAD) and _answers(gen.prompts[1]) == (BAD, GOOD)
    assert all(f"Reference answer: {REF}" in p and f"Question: {Q}" in p for p in gen.prompts)
    assert (r.forward, r.backward, r.verdict, r.consistent) == ("A", "A", "A", True)
    assert r.first_shown_chosen == [True, False]
    assert pairwise(Q, BAD, GOOD, Judge(Picky()), reference=REF).verdict == "B"


def test_a_verdict_that_flips_with_the_order_is_inconsistent_not_a_tie():
    r = pairwise(Q, GOOD, BAD, Judge(Picky("first")), reference=REF)
    assert (r.forward, r.backward) == ("A", "B")
    assert r.verdict == "inconsistent" and r.consistent is False and r.outcome == "scored"
    assert r.first_shown_chosen == [True, True]


def test_a_consistent_tie():
    r = pairwise(Q, BAD, BAD + " Really.", Judge(Picky()), context="Table: 28.4 En-De, 41.0 En-Fr.")
    assert r.verdict == "tie" and r.consistent and r.first_shown_chosen == []


def test_a_failed_call_fails_the_pair_and_keeps_the_error():
    r = pairwise(Q, GOOD, BAD, Judge(Picky("garbage")), reference=REF)
    assert r.outcome == "failed" and r.verdict is None and r.consistent is None
    assert "output_parse_error" in r.error and len(r.calls) == 2


def test_position_bias_counts_decisive_order_verdicts():
    pairs = [{"question": Q, "answer_a": GOOD, "answer_b": BAD, "reference": REF, "pair_id": "x"},
             {"question": Q, "answer_a": BAD, "answer_b": GOOD, "reference": REF, "pair_id": "y"}]
    fair = pairwise_many(pairs, Judge(Picky()), progress=False)
    assert [r.verdict for r in fair] == ["A", "B"] and position_bias(fair) == (2, 4)
    biased = pairwise_many(pairs, Judge(Picky("first")), progress=False)
    assert position_bias(biased) == (4, 4)
    assert [r.pair_id for r in biased] == ["x", "y"]


def test_give_a_reference_or_a_context():
    with pytest.raises(ValueError, match="exactly one of reference="):
        pairwise(Q, GOOD, BAD, Judge(Picky()))
    with pytest.raises(ValueError, match="exactly one of reference="):
        pairwise(Q, GOOD, BAD, Judge(Picky()), reference=REF, context="c")
