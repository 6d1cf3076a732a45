"""Exercises of notebook 16 (the hallucination rate, and abstention) and their solutions."""

from __future__ import annotations

import json

from ragworkbook.evaluation.abstention import risk_coverage
from ragworkbook.evaluation.hallucination import HallucinationSummary, summarize_claims
from ragworkbook.judging.datasets import load_wikieval
from ragworkbook.metrics.numeric import check_numbers
from ragworkbook.paths import data_path
from ragworkbook.workbook.exercises import Mistake, Number, Solution, exercise, solves


def author_verdicts() -> dict[str, list[int]]:
    """Per answer of the naive RAG run, the claim labels written by the project's authors (1 = supported)."""
    doc = json.loads(data_path("author_labels", "naive_rag_embedded_labels.json").read_text(encoding="utf-8"))
    return {rec["id"]: [int(c["supported"]) for c in rec["claims"]] for rec in doc["labels"]}


def _summary() -> HallucinationSummary:
    return summarize_claims(list(author_verdicts().values()))


@exercise("16.1", "The hallucination rate of eight answers",
          "From the claim table (labels written by the project's authors), compute the hallucination rate of "
          "the eight answers, to 2 decimals (or as a fraction): the share of answers with at least one "
          "unsupported claim.",
          reveals=[r"hallucination rate 0\.62", r"code:summarize_claims\("])
def _rate_answer() -> Number:
    s = _summary()
    mistakes = [
        Mistake(s.faithfulness, "that is the mean faithfulness (the mean share of supported claims per "
                                "answer); the rate counts answers with any unsupported claim"),
        Mistake(1 - s.faithfulness, "that is one minus the mean faithfulness, an average over claims per "
                                    "answer; the rate counts whole answers"),
        Mistake(1 - s.claim_support.value, "that is the share of unsupported claims over all claims; the "
                                           "rate counts answers, not claims"),
        Mistake(s.claim_support.value, "that is the share of supported claims over all claims"),
        Mistake(1 - s.rate.value, "that is the share of answers whose every claim is supported: the "
                                  "complement of what is asked")]
    distinct: list[Mistake] = []  # one hint per value (a mean faithfulness of 0.5 is its own complement)
    for m in mistakes:
        if all(abs(m.value - d.value) > 0.005 for d in distinct) and abs(m.value - s.rate.value) > 0.005:
            distinct.append(m)
    return Number(s.rate.value, 2, "the hallucination rate", share=True, mistakes=distinct,
                  low="an answer counts as soon as one of its claims is unsupported, even if others are "
                      "supported",
                  high="an answer with every claim supported does not count")


@solves("16.1")
def _solve_rate() -> Solution:
    s = _summary()
    hit = [i for i, vs in author_verdicts().items() if min(vs) == 0]
    return Solution(s.rate.value, f"{len(hit)} of {s.scored} answers ({', '.join(hit)}) have at least one "
                                  f"claim marked unsupported: {s.rate.value:.3f}. Their mean faithfulness is "
                                  f"{s.faithfulness:.3f}: q5 and q8 each have one supported and one "
                                  "unsupported claim, and count half in faithfulness but fully in the rate.")


def numeric_signal() -> tuple[list[float], list[int]]:
    """WikiEval's 100 faithfulness answers: confidence = minus the count of the answer's numbers that its
    context does not contain (:func:`~ragworkbook.metrics.numeric.check_numbers`), loss = 1 for the
    ungrounded answer (construction labels)."""
    conf, loss = [], []
    for p in load_wikieval("faithfulness").pairs:
        for item, y in ((p.good, 0), (p.bad, 1)):
            conf.append(-float(len(check_numbers(item.answer or "", item.context or "").unsupported)))
            loss.append(y)
    return conf, loss


def _random_rate() -> float:
    _, loss = numeric_signal()
    return sum(loss) / len(loss)


@exercise("16.2", "Abstaining at random",
          "The numeric check answers only the WikiEval answers with no number missing from their context and "
          "withholds the others. Suppose instead the system withheld as many answers, chosen at random. "
          "Predict the expected hallucination rate among the answers it gives, to 2 decimals.",
          reveals=[r"random \(mean of", r"flat at the overall"], reveals_value=False)
def _random_answer() -> Number:
    conf, loss = numeric_signal()
    curve = risk_coverage(conf, loss)
    numeric_risk = float(curve.risk[list(curve.thresholds).index(0.0)])
    return Number(_random_rate(), 2, "the expected rate", share=True, mistakes=[
        Mistake(numeric_risk, "that is what the numeric check gives; a random choice knows nothing about "
                              "which answers are ungrounded"),
        Mistake(0.0, "withholding answers at random removes right and wrong ones alike")],
        low="a random choice removes wrong answers no more often than right ones",
        high="withholding answers at random cannot make the answered ones worse on average")


@solves("16.2")
def _solve_random() -> Solution:
    rate = _random_rate()
    return Solution(rate, "A random choice withholds right and wrong answers in proportion, so the "
                          f"answered ones keep the overall rate, {rate:.2f}, at every coverage: the "
                          "risk-coverage curve of a signal that knows nothing is flat at the overall risk. "
                          "Abstention helps only as much as its signal is correlated with the errors.")
