"""Exercises of notebook 11 (judge meta-evaluation) and their solutions.

The solutions that need the judge replay the recorded ``judge-check`` runs of the embedded model
(``ragworkbook/data/recordings/judge_check_*.json``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ragworkbook.workbook.exercises import Solution, close, exercise, solves


@cache
def _check(name: str) -> Any:
    from ragworkbook.judging.check import RECORDED_PAIRS, judge_check, recording_path
    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.replay import ReplayGenerator

    judge = Judge(ReplayGenerator(recording_path(name)))
    return judge_check(name, judge, limit=RECORDED_PAIRS[name], repeats=0)


def _constant_accuracy() -> float:
    from ragworkbook.stats.agreement import pairwise_accuracy

    return pairwise_accuracy([0.7] * 50, [0.7] * 50).accuracy


@exercise("11.1", "A judge that cannot tell",
          "A judge gives every WikiEval answer the same faithfulness, 0.7. Predict its pairwise accuracy as "
          "the "
          "package counts it (a tie counts half), then compute it with pairwise_accuracy.")
def _check_constant(answer: Any) -> tuple[bool, str]:
    return close(answer, _constant_accuracy(), what="the pairwise accuracy")


@solves("11.1")
def _solve_constant() -> Solution:
    return Solution(_constant_accuracy(), "Every pair is a tie and each tie counts half: 50 x 0.5 / 50 = "
                                          "0.5, "
                                          "the chance level. Counting ties as losses would give 0.0, which "
                                          "makes a "
                                          "judge that cannot tell look worse than one that guesses.")


def _kappa_ff() -> float:
    return float(_check("wikieval-faithfulness").stats["kappa"].value)


@exercise("11.2", "Kappa by hand",
          "From the confusion table of the embedded judge's verdicts on WikiEval faithfulness (printed in "
          "section 2), compute Cohen's kappa by hand: p_o from the diagonal, p_e from the row and column "
          "totals, then (p_o - p_e) / (1 - p_e).")
def _check_kappa(answer: Any) -> tuple[bool, str]:
    return close(answer, _kappa_ff(), 5e-3, what="kappa")


@solves("11.2")
def _solve_kappa() -> Solution:
    from ragworkbook.stats.agreement import confusion_matrix

    res = _check("wikieval-faithfulness")
    th = res.settings["threshold"]
    human, judge = [], []
    for p in res.pairs:
        for label, which in ((1, "good"), (0, "bad")):
            if p[f"{which}_outcome"] == "scored":
                human.append(label)
                judge.append(int(p[which] >= th))
    m, _ = confusion_matrix(human, judge, labels=[0, 1])
    n = m.sum()
    p_o = (m[0, 0] + m[1, 1]) / n
    p_e = (m[0].sum() * m[:, 0].sum() + m[1].sum() * m[:, 1].sum()) / n ** 2
    kappa = (p_o - p_e) / (1 - p_e)
    return Solution(float(kappa), f"table {m.tolist()} (rows: human 0/1, columns: judge 0/1): p_o = "
                                  f"{p_o:.3f}, "
                                  f"p_e = {p_e:.3f}, kappa = {kappa:.3f}.")


def _rg() -> float:
    from ragworkbook.stats.correction import rogan_gladen

    return rogan_gladen(0.30, 0.9, 0.8)


@exercise("11.3", "Correct a judge's hallucination rate",
          "A judge with TPR 0.9 (it catches 90% of hallucinated answers) and TNR 0.8 (it clears 80% of "
          "faithful "
          "ones) flags 30% of a system's answers as hallucinated. Predict the true hallucination rate with "
          "the "
          "Rogan-Gladen formula, then compute it with rogan_gladen.")
def _check_rg(answer: Any) -> tuple[bool, str]:
    return close(answer, _rg(), what="the corrected rate")


@solves("11.3")
def _solve_rg() -> Solution:
    return Solution(_rg(), "(0.30 + 0.8 - 1) / (0.9 + 0.8 - 1) = 0.10 / 0.70 = 0.143: a fifth of the "
                           "faithful "
                           "answers are flagged by mistake, so most of the apparent 30% is the judge's "
                           "error.")


def _first_shown() -> float:
    return float(_check("ragchecker").stats["position_bias"]["rate"].value)


@exercise("11.4", "Position bias",
          "On the RAGChecker pairs the embedded judge was asked every pair in both orders. Of its verdicts "
          "that "
          "preferred an answer, what share preferred the answer shown first? (No position bias: 0.5.)")
def _check_first(answer: Any) -> tuple[bool, str]:
    return close(answer, _first_shown(), 5e-3, what="the share")


@solves("11.4")
def _solve_first() -> Solution:
    pb = _check("ragchecker").stats["position_bias"]
    return Solution(float(pb["rate"].value), f"{pb['first']} of {pb['decisive']} decisive verdicts chose the "
                                             "answer "
                                             f"shown first: {pb['rate']}. A judge with no position bias "
                                             "would sit "
                                             "near 0.5, and a pair whose verdict flips with the order is "
                                             "counted "
                                             "inconsistent, not a tie.")
