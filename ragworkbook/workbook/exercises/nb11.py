"""Exercises of notebook 11 (judging the judge) and their solutions.

The answers that need the judge replay the recorded ``judge-check`` runs of the embedded model
(``ragworkbook/data/recordings/judge_check_*.json``). Every answer is a number declared with the precision
its task asks for (:class:`~ragworkbook.workbook.exercises.checking.Number`); a wrong value gets the hint of
the mistake it equals, never its distance.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from ragworkbook.workbook.exercises import Mistake, Number, Solution, exercise, solves

if TYPE_CHECKING:
    import numpy as np

    from ragworkbook._types import JSON
    from ragworkbook.judging.check import JudgeCheck
    from ragworkbook.metrics.support import WordSupport


@cache
def _check(name: str) -> JudgeCheck:
    from ragworkbook.judging.check import RECORDED_PAIRS, judge_check, recording_path
    from ragworkbook.judging.judge import Judge
    from ragworkbook.llm.replay import ReplayGenerator

    judge = Judge(ReplayGenerator(recording_path(name)))
    return judge_check(name, judge, limit=RECORDED_PAIRS[name], repeats=0)


# --- 11.1 -------------------------------------------------------------------------------------
def _constant_accuracy() -> float:
    from ragworkbook.stats.agreement import pairwise_accuracy

    return pairwise_accuracy([0.7] * 50, [0.7] * 50).accuracy


@exercise("11.1", "A judge that cannot tell",
          "A judge gives every WikiEval answer the same faithfulness, 0.7. Predict its pairwise accuracy as "
          "the package counts it (a tie counts half), to 2 decimals, then compute it with pairwise_accuracy.",
          reveals=[r"code:pairwise_accuracy\(\[0\.7\]"],
          reveals_value=False)  # 0.5, chance, is printed for many other things
def _constant_answer() -> Number:
    hint = "count the pairs: every one is a tie (both answers get 0.7), and each tie is worth half a win"
    return Number(_constant_accuracy(), 2, "the pairwise accuracy", share=True, mistakes=[
        Mistake(0.0, "that counts every tie as a loss; the package counts a tie as half a pair"),
        Mistake(0.7, "0.7 is the score the judge gives, not how often it ranks the good answer first")],
        low=hint, high=hint)


@solves("11.1")
def _solve_constant() -> Solution:
    return Solution(_constant_accuracy(), "Every pair is a tie and each tie counts half: 50 x 0.5 / 50 = "
                                          "0.5, the chance level. Counting ties as losses would give 0.0, "
                                          "which makes a judge that cannot tell look worse than one that "
                                          "guesses.")


# --- 11.2 -------------------------------------------------------------------------------------
def _confusion() -> tuple[np.ndarray, float, float, float]:
    from ragworkbook.stats.agreement import confusion_matrix

    res = _check("wikieval-faithfulness")
    th = res.settings["threshold"]
    truth, judge = [], []  # the construction labels: 1 for the grounded answer of each pair
    for p in res.pairs:
        for label, which in ((1, "good"), (0, "bad")):
            if p[f"{which}_outcome"] == "scored":
                truth.append(label)
                judge.append(int(p[which] >= th))
    m, _ = confusion_matrix(truth, judge, labels=[0, 1])
    n = m.sum()
    p_o = (m[0, 0] + m[1, 1]) / n
    p_e = (m[0].sum() * m[:, 0].sum() + m[1].sum() * m[:, 1].sum()) / n ** 2
    return m, float(p_o), float(p_e), float((p_o - p_e) / (1 - p_e))


@exercise("11.2", "Kappa by hand",
          "From the confusion table of the embedded judge's verdicts on WikiEval faithfulness (printed just "
          "above), compute Cohen's kappa by hand, to 3 decimals: p_o from the diagonal, p_e from the row and "
          "column totals, then (p_o - p_e) / (1 - p_e).",
          reveals=[r"kappa by hand = -?\d"])
def _kappa_answer() -> Number:
    _, p_o, p_e, kappa = _confusion()
    hint = "recompute p_e: for each label, (row total x column total) / n squared, summed over the two labels"
    return Number(kappa, 3, "kappa", mistakes=[
        Mistake(p_o, "that is p_o, the raw agreement: subtract the chance agreement p_e, then divide by "
                     "1 - p_e"),
        Mistake(p_o - p_e, "that is p_o - p_e: divide it by 1 - p_e"),
        Mistake(-kappa, "check the sign: is p_o above or below p_e here?"),
        Mistake(p_e, "that is p_e, the chance agreement; kappa compares p_o with it")],
        low=hint, high=hint)


@solves("11.2")
def _solve_kappa() -> Solution:
    m, p_o, p_e, kappa = _confusion()
    return Solution(kappa, f"table {m.tolist()} (rows: label 0/1, columns: judge 0/1): p_o = {p_o:.3f}, "
                           f"p_e = {p_e:.3f}, kappa = ({p_o:.3f} - {p_e:.3f}) / (1 - {p_e:.3f}) = "
                           f"{kappa:.3f}: below 0, worse than chance.")


# --- 11.3 -------------------------------------------------------------------------------------
_WS_CONTEXT = ("The 80th Venice International Film Festival was held from 30 August to 9 September 2023. "
               "Comandante, directed by Edoardo De Angelis, opened the festival on 30 August.")
_WS_ANSWER = "The film festival commenced on 30 August."


def _paraphrase_support() -> WordSupport:
    from ragworkbook.metrics.support import word_support

    return word_support(_WS_ANSWER, _WS_CONTEXT)


@exercise("11.3", "Word support of a faithful paraphrase",
          f"Context: {_WS_CONTEXT!r}. Answer: {_WS_ANSWER!r} (true, in other words). Predict its word "
          "support, to 3 decimals (or as a fraction): the share of its content words (stop words such as "
          "'the' and 'on' left out, words compared by their stems) that occur in the context.")
def _support_answer() -> Number:
    hint = "list the content words (film, festival, commenced, 30, August) and look for each in the context"
    return Number(_paraphrase_support().score, 3, "the word support", share=True, mistakes=[
        Mistake(1.0, "word support does not know synonyms: is every content word of the answer, as written, "
                     "in the context?"),
        Mistake(4 / 7, "leave the stop words out ('the', 'on'): only the content words are counted"),
        Mistake(5 / 7, "leave the stop words out ('the', 'on'): only the content words are counted")],
        low=hint, high=hint)


@solves("11.3")
def _solve_support() -> Solution:
    ws = _paraphrase_support()
    return Solution(ws.score, f"{ws}: a faithful answer loses support for every word it paraphrases, so a "
                              "low word support is not proof of invention.")


# --- 11.4 -------------------------------------------------------------------------------------
def _position() -> JSON:
    return _check("ragchecker").stats["position_bias"]


@exercise("11.4", "Position bias",
          "On the RAGChecker pairs the embedded judge was asked every pair in both orders. Of its "
          "order-verdicts that preferred an answer, what share preferred the answer shown first? Give it to "
          "3 decimals (or as a fraction); no position bias would be 0.5.",
          reveals=[r"shown first in \d+ of \d+"])
def _first_answer() -> Number:
    rate = float(_position()["rate"].value)
    hint = ("count, over both orders, the verdicts that chose the answer shown first (A when A came first, B "
            "when B came first), and divide by every verdict that chose an answer")
    return Number(rate, 3, "the share", share=True, mistakes=[
        Mistake(1 - rate, "that is the share choosing the answer shown second"),
        Mistake(0.5, "that is a judge without position bias; look at the forward and backward verdicts")],
        low=hint, high=hint)


@solves("11.4")
def _solve_first() -> Solution:
    pb = _position()
    return Solution(float(pb["rate"].value),
                    f"{pb['first']} of {pb['decisive']} decisive order-verdicts chose the answer shown "
                    f"first: {pb['rate']} (Wilson interval). A judge with no position bias would sit near "
                    "0.5, and a pair whose verdict flips with the order is counted inconsistent, not a tie.")


# --- 11.5 -------------------------------------------------------------------------------------
_APPARENT, _TPR, _TNR = 0.32, 0.9, 0.8


def _rg() -> float:
    from ragworkbook.stats.correction import rogan_gladen

    return rogan_gladen(_APPARENT, _TPR, _TNR)


@exercise("11.5", "Correct a judge's hallucination rate",
          "A judge with TPR 0.9 (it catches 90% of hallucinated answers) and TNR 0.8 (it clears 80% of "
          "faithful ones) flags 32% of a system's answers as hallucinated. Predict the true hallucination "
          "rate with the Rogan-Gladen formula, to 3 decimals, then compute it with rogan_gladen.")
def _rg_answer() -> Number:
    hint = "use p = (apparent + TNR - 1) / (TPR + TNR - 1)"
    return Number(_rg(), 3, "the corrected rate", share=True, mistakes=[
        Mistake(_APPARENT, "that is the apparent rate, before the correction"),
        Mistake(_APPARENT + _TNR - 1, "that is the numerator, apparent + TNR - 1: divide it by "
                                      "TPR + TNR - 1"),
        Mistake(_APPARENT / _TPR, "dividing by TPR alone forgets the faithful answers the judge flags "
                                  "(1 - TNR of them)")],
        low=hint, high=hint)


@solves("11.5")
def _solve_rg() -> Solution:
    p = _rg()
    return Solution(p, f"({_APPARENT:.2f} + {_TNR} - 1) / ({_TPR} + {_TNR} - 1) = "
                       f"{_APPARENT + _TNR - 1:.2f} / {_TPR + _TNR - 1:.2f} = {p:.3f}: a fifth of the "
                       "faithful answers are flagged by mistake, so nearly half of the apparent 32% is the "
                       "judge's error.")
