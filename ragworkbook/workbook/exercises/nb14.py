"""Exercises of notebook 14 (the documented-numbers checklist) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, close, exercise, solves


def _raw_pearson() -> float:
    import numpy as np
    from scipy import stats

    from ragworkbook.judging.datasets import load_ragchecker

    meta = load_ragchecker()
    delta = np.asarray([np.nan if a is None or b is None else b - a
                        for a, b in (p.predictions["overall"] for p in meta.pairs)])
    delta = np.where(np.isnan(delta), np.nanmedian(delta), delta)
    human = np.asarray([x for p in meta.pairs for x in p.labels["overall"]], dtype=float)
    return round(float(stats.pearsonr(np.repeat(delta, 2), human)[0]) * 100, 2)


@exercise("14.1", "Does the rescaling matter?",
          "RAGChecker's meta_eval.py rescales its score differences to [-2, 2] before correlating them with "
          "the "
          "human labels. Predict the overall Pearson x 100 without the rescaling (raw differences, missing "
          "ones "
          "still replaced by the median), then compute it.")
def _check_raw(answer: Any) -> tuple[bool, str]:
    return close(answer, _raw_pearson(), 0.005, what="Pearson x 100")


@solves("14.1")
def _solve_raw() -> Solution:
    v = _raw_pearson()
    return Solution(v, f"{v:.2f}, the documented 61.93: Pearson's coefficient does not change under a linear "
                       "rescaling (nor does Spearman's), so the step only matters for the plots.")


def _precision_first() -> float:
    import json

    from ragworkbook.judging.ragchecker import checking_metrics
    from ragworkbook.paths import data_path

    results = json.loads(data_path("ragchecker", "example_checking_outputs.json").read_text(encoding="utf-8"))
    return checking_metrics(results["results"][0])["precision"]


@exercise("14.2", "RAGChecker's precision from its claim labels",
          "In RAGChecker's committed example, the first response has 11 claims; the ground-truth answer "
          "entails "
          "8 of them (answer2response). Predict the first result's precision (a fraction), then compute it "
          "with "
          "checking_metrics.")
def _check_precision(answer: Any) -> tuple[bool, str]:
    return close(answer, _precision_first(), what="the precision")


@solves("14.2")
def _solve_precision() -> Solution:
    return Solution(_precision_first(), "8 / 11 = 0.727: the share of the response's claims the ground-truth "
                                        "answer entails ('Neutral' and 'Contradiction' both count as not).")


def _precision_with_one_more() -> float:
    from ragworkbook.workbook.reproduce import reproduce_row

    return reproduce_row("D3").details["with_one_more_claim"]["overall"]["precision"]


@exercise("14.3", "One more claim",
          "Row D3: the committed outputs give precision 76.4 (the mean of 8/11 and 4/5, x 100). Suppose the "
          "claim "
          "extractor had found one more claim in the first response, one the ground-truth answer does not "
          "entail. Predict the printed precision (x 100, one decimal).")
def _check_one_more(answer: Any) -> tuple[bool, str]:
    return close(answer, _precision_with_one_more(), 0.05, what="the precision")


@solves("14.3")
def _solve_one_more() -> Solution:
    v = _precision_with_one_more()
    return Solution(v, f"(8/12 + 4/5) / 2 x 100 = {v:.1f}, the README's CLI figure: one extra claim in one "
                       "response is enough to move RAGChecker's printed precision by three points.")
