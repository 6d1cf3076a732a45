"""Exercises of notebook 11 (judging the judge) and their solutions.

The answers that need the judge replay the recorded ``judge-check`` runs of the embedded model
(``ragworkbook/data/recordings/judge_check_*.json``). A checker reads a number with
:func:`~ragworkbook.workbook.exercises.checking.read_number` (a number or a sentence: "about 0.98",
"47 of 48", "98%"; several numbers or a negation refused) and points at the mistake a wrong value
suggests, never at its distance.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ragworkbook.workbook.exercises import Solution, exercise, solves
from ragworkbook.workbook.exercises.checking import read_number


def _near(x: float, y: float, tol: float) -> bool:
    return abs(x - y) <= tol


@cache
def _check(name: str) -> Any:
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
          "the package counts it (a tie counts half), then compute it with pairwise_accuracy.")
def _check_constant(answer: Any) -> tuple[bool, str]:
    x, why = read_number(answer, "the pairwise accuracy", share=True)
    if x is None:
        return False, why
    expected = _constant_accuracy()
    if _near(x, expected, 1e-3):
        return True, "every pair is a tie, and a tie counts half: the chance level"
    if _near(x, 0.0, 1e-3):
        return False, "that counts every tie as a loss; the package counts a tie as half a pair"
    if _near(x, 0.7, 1e-3):
        return False, "0.7 is the score the judge gives, not how often it ranks the good answer first"
    if x > 1 or x < 0:
        return False, "a pairwise accuracy is a share of pairs, between 0 and 1"
    return False, ("count the pairs: every one is a tie (both answers get 0.7), and each tie is worth "
                   "half a win")


@solves("11.1")
def _solve_constant() -> Solution:
    return Solution(_constant_accuracy(), "Every pair is a tie and each tie counts half: 50 x 0.5 / 50 = "
                                          "0.5, the chance level. Counting ties as losses would give 0.0, "
                                          "which makes a judge that cannot tell look worse than one that "
                                          "guesses.")


# --- 11.2 -------------------------------------------------------------------------------------
def _confusion() -> Any:
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
          "above), compute Cohen's kappa by hand: p_o from the diagonal, p_e from the row and column "
          "totals, then (p_o - p_e) / (1 - p_e).")
def _check_kappa(answer: Any) -> tuple[bool, str]:
    x, why = read_number(answer, "kappa")
    if x is None:
        return False, why
    _, p_o, p_e, kappa = _confusion()
    if _near(x, kappa, 5e-3):
        return True, "the judge agrees with the labels less often than chance would"
    if _near(x, p_o, 5e-3):
        return False, ("that is p_o, the raw agreement: subtract the chance agreement p_e, then divide by "
                       "1 - p_e")
    if _near(x, p_o - p_e, 5e-3):
        return False, "that is p_o - p_e: divide it by 1 - p_e"
    if _near(x, -kappa, 5e-3):
        return False, "check the sign: is p_o above or below p_e here?"
    if _near(x, p_e, 5e-3):
        return False, "that is p_e, the chance agreement; kappa compares p_o with it"
    return False, ("recompute p_e: for each label, (row total x column total) / n squared, summed over "
                   "the two labels")


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


def _paraphrase_support() -> Any:
    from ragworkbook.metrics.support import word_support

    return word_support(_WS_ANSWER, _WS_CONTEXT)


@exercise("11.3", "Word support of a faithful paraphrase",
          f"Context: {_WS_CONTEXT!r}. Answer: {_WS_ANSWER!r} (true, in other words). Predict its word "
          "support: the share of its content words (stop words such as 'the' and 'on' left out, words "
          "compared by their stems) that occur in the context.")
def _check_support(answer: Any) -> tuple[bool, str]:
    x, why = read_number(answer, "the word support", share=True)
    if x is None:
        return False, why
    ws = _paraphrase_support()
    if _near(x, ws.score, 5e-3):
        return True, f"{ws.supported} of {ws.total} content words; 'commenced' is not the context's word"
    if _near(x, 1.0, 5e-3):
        return False, ("word support does not know synonyms: is every content word of the answer, as "
                       "written, in the context?")
    if _near(x, 4 / 7, 5e-3) or _near(x, 5 / 7, 5e-3):
        return False, "leave the stop words out ('the', 'on'): only the content words are counted"
    return False, ("list the content words (film, festival, commenced, 30, August) and look for each in "
                   "the context")


@solves("11.3")
def _solve_support() -> Solution:
    ws = _paraphrase_support()
    return Solution(ws.score, f"{ws}: a faithful answer loses support for every word it paraphrases, so a "
                              "low word support is not proof of invention.")


# --- 11.4 -------------------------------------------------------------------------------------
def _position() -> Any:
    return _check("ragchecker").stats["position_bias"]


@exercise("11.4", "Position bias",
          "On the RAGChecker pairs the embedded judge was asked every pair in both orders. Of its "
          "order-verdicts that preferred an answer, what share preferred the answer shown first? "
          "(No position bias: 0.5.)")
def _check_first(answer: Any) -> tuple[bool, str]:
    x, why = read_number(answer, "the share", share=True)
    if x is None:
        return False, why
    pb = _position()
    rate = float(pb["rate"].value)
    if _near(x, rate, 5e-3):
        return True, f"{pb['first']} of {pb['decisive']} decisive order-verdicts chose the answer shown first"
    if _near(x, 1 - rate, 5e-3):
        return False, "that is the share choosing the answer shown second"
    if x > 1:
        return False, "a share is between 0 and 1 (write 3 of 4 as 0.75, or as '3 of 4')"
    if _near(x, 0.5, 0.05):
        return False, "that is a judge without position bias; look at the forward and backward verdicts"
    return False, ("count, over both orders, the verdicts that chose the answer shown first (A when A came "
                   "first, B when B came first), and divide by every verdict that chose an answer")


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
          "rate with the Rogan-Gladen formula, then compute it with rogan_gladen.")
def _check_rg(answer: Any) -> tuple[bool, str]:
    x, why = read_number(answer, "the corrected rate", share=True)
    if x is None:
        return False, why
    if _near(x, _rg(), 2e-3):
        return True, "nearly half of the apparent 32% is the judge flagging faithful answers"
    if _near(x, _APPARENT, 2e-3):
        return False, "that is the apparent rate, before the correction"
    if _near(x, _APPARENT + _TNR - 1, 2e-3):
        return False, "that is the numerator, apparent + TNR - 1: divide it by TPR + TNR - 1"
    if _near(x, _APPARENT / _TPR, 2e-3):
        return False, "dividing by TPR alone forgets the faithful answers the judge flags (1 - TNR of them)"
    return False, "use p = (apparent + TNR - 1) / (TPR + TNR - 1)"


@solves("11.5")
def _solve_rg() -> Solution:
    p = _rg()
    return Solution(p, f"({_APPARENT:.2f} + {_TNR} - 1) / ({_TPR} + {_TNR} - 1) = "
                       f"{_APPARENT + _TNR - 1:.2f} / {_TPR + _TNR - 1:.2f} = {p:.3f}: a fifth of the "
                       "faithful answers are flagged by mistake, so nearly half of the apparent 32% is the "
                       "judge's error.")
