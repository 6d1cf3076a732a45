"""Exercises of notebook 14 (the documented-numbers checklist) and their solutions."""

from __future__ import annotations

import copy
import json

import numpy as np
from scipy import stats

from ragworkbook._types import JSONObject
from ragworkbook.datasets import dataset_file
from ragworkbook.judging.datasets import load_ragchecker
from ragworkbook.judging.ragchecker import checking_metrics, example_metrics
from ragworkbook.workbook.exercises import Mistake, Number, Solution, exercise, solves


def _raw_pearson() -> float:
    meta = load_ragchecker()
    delta = np.asarray([np.nan if a is None or b is None else b - a
                        for a, b in (p.predictions["overall"] for p in meta.pairs)])
    delta = np.where(np.isnan(delta), np.nanmedian(delta), delta)
    human = np.asarray([x for p in meta.pairs for x in p.labels["overall"]], dtype=float)
    return round(float(stats.pearsonr(np.repeat(delta, 2), human)[0]) * 100, 2)


# the rescaled figure (61.93) is printed above the exercise on purpose: the question is whether dropping
# the rescaling changes it, so only a cell computing the raw correlation would give the answer away
@exercise("14.1", "Does the rescaling matter?",
          "RAGChecker's meta_eval.py rescales its score differences to [-2, 2] before correlating them with "
          "the human labels. Predict the overall Pearson x 100 without the rescaling (raw differences, "
          "missing ones still replaced by the median), to 2 decimals, then compute it.",
          reveals=[r"code:pearsonr\("], reveals_value=False)
def _raw_answer() -> Number:
    return Number(_raw_pearson(), 2, "Pearson x 100", mistakes=[
        Mistake(_raw_pearson() / 100, "that is the coefficient itself; the task asks for it x 100")],
        low="what does a linear rescaling of one variable do to Pearson's coefficient?",
        high="what does a linear rescaling of one variable do to Pearson's coefficient?")


@solves("14.1")
def _solve_raw() -> Solution:
    v = _raw_pearson()
    return Solution(v, f"{v:.2f}, the documented 61.93: Pearson's coefficient does not change under a linear "
                       "rescaling (nor does Spearman's), so the step only matters for the plots.")


def _results() -> list[JSONObject]:
    text = dataset_file("ragchecker", "example_checking_outputs.json").read_text(encoding="utf-8")
    return json.loads(text)["results"]


def _precision_first() -> float:
    return checking_metrics(_results()[0])["precision"]


@exercise("14.2", "RAGChecker's precision from its claim labels",
          "In RAGChecker's committed example, the first response has 11 claims; the ground-truth answer "
          "entails 8 of them (answer2response). Predict the first result's precision, to 3 decimals (or as a "
          "fraction), then compute it with checking_metrics.",
          reveals=[r"code:checking_metrics\("])
def _precision_answer() -> Number:
    return Number(_precision_first(), 3, "the precision", share=True, mistakes=[
        Mistake(100 * _precision_first(), "RAGChecker prints x 100; the task asks for the fraction"),
        Mistake(checking_metrics(_results()[0])["recall"],
                "that is the recall (ground-truth claims the response states); precision counts the "
                "response's claims the ground truth entails")])


@solves("14.2")
def _solve_precision() -> Solution:
    p = _precision_first()
    return Solution(p, f"8 / 11 = {p:.3f}: the share of the response's claims the ground-truth answer "
                       "entails ('Neutral' and 'Contradiction' both count as not).")


def _precision_with_one_more_in_second() -> float:
    """The printed overall precision (x 100) if the second response had one more claim that the
    ground-truth answer does not entail."""
    alt = copy.deepcopy(_results())
    second = alt[1]
    second["answer2response"].append("Neutral")
    n_chunks = len(second["retrieved2response"][0]) if second["retrieved2response"] else 0
    second["retrieved2response"].append(["Neutral"] * n_chunks)
    return example_metrics(alt)["overall"]["precision"]


def _counts() -> list[tuple[int, int]]:
    """(entailed, claims) of each committed response."""
    return [(sum(lab == "Entailment" for lab in r["answer2response"]), len(r["answer2response"]))
            for r in _results()]


@exercise("14.3", "One more claim",
          "The committed outputs give precision 76.4, the mean of 8/11 and 4/5, x 100. Suppose the claim "
          "extractor had found one more claim in the second response, one the ground-truth answer does not "
          "entail. Predict the printed precision (x 100), to 1 decimal.",
          reveals=[r"code:example_metrics\("])
def _one_more_answer() -> Number:
    (e1, n1), (e2, n2) = _counts()[:2]
    return Number(_precision_with_one_more_in_second(), 1, "the precision", mistakes=[
        Mistake(round(100 * (e1 / (n1 + 1) + e2 / n2) / 2, 1),
                "that adds the claim to the first response; the task adds it to the second"),
        Mistake(round(100 * (e1 + e2) / (n1 + n2 + 1), 1),
                "RAGChecker averages the per-response precisions; it does not pool the claims of both "
                "responses")],
        low="one extra claim moves only the second response's share: 4 entailed of how many?",
        high="the extra claim is not entailed: the second response's share can only fall")


@solves("14.3")
def _solve_one_more() -> Solution:
    v = _precision_with_one_more_in_second()
    (e1, n1), (e2, n2) = _counts()[:2]
    return Solution(v, f"({e1}/{n1} + {e2}/{n2 + 1}) / 2 x 100 = {v:.1f}: one extra claim in one response "
                       "moves RAGChecker's printed precision by several points, which is how the README's "
                       "two blocks of figures can come from the same example (row D3).")
