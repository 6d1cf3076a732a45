"""Exercises of notebook 01 (precision, recall, hit rate) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, close, exercise, solves


def _carbon() -> tuple[list[str], set[str]]:
    """The carbon-pricing ranking (chunk ids in rank order) and its relevant chunks (grade > 0)."""
    import json

    from ragworkbook.paths import data_path

    data = json.loads(data_path("carbon_pricing.json").read_text(encoding="utf-8"))
    ranking = [c["id"] for c in data["chunks"]]
    return ranking, {c["id"] for c in data["chunks"] if c["grade"] > 0}


@exercise("01.1", "Precision and recall at 4",
          "Predict Precision@4 of the carbon-pricing ranking, then compute it with the package.")
def _check_p4(answer: Any) -> tuple[bool, str]:
    from ragworkbook.metrics.retrieval import precision_at_k

    return close(answer, precision_at_k(*_carbon(), 4), what="Precision@4")


@solves("01.1")
def _solve_p4() -> Solution:
    from ragworkbook.metrics.retrieval import precision_at_k

    value = precision_at_k(*_carbon(), 4)
    return Solution(value, "Three of the first four chunks (ranks 2, 3 and 4) have a grade above 0: "
                           f"Precision@4 = 3 / 4 = {value:.2f}.")


def _long() -> tuple[list[str], set[str]]:
    """The 20-document ranking of notebook 01 and its eight relevant documents (two never retrieved)."""
    ranking = [f"d{i:02d}" for i in range(1, 21)]
    return ranking, {"d01", "d03", "d04", "d08", "d12", "d17", "x1", "x2"}


def _first_crossing() -> int:
    from ragworkbook.metrics.retrieval import precision_at_k, recall_at_k

    ranking, relevant = _long()
    return next(k for k in range(1, 21)
                if precision_at_k(ranking, relevant, k) < recall_at_k(ranking, relevant, k))


@exercise("01.2", "Where precision falls below recall",
          "On the 20-document ranking, predict the smallest k at which Precision@k is below Recall@k; "
          "then move the slider (or compute both) and compare.")
def _check_crossing(answer: Any) -> tuple[bool, str]:
    if isinstance(answer, bool) or not isinstance(answer, int):
        return False, f"k should be a whole number, got {type(answer).__name__}"
    want = _first_crossing()
    if answer == want:
        return True, f"Precision@k first drops below Recall@k at k = {want}"
    state = "already below" if answer > want else "not yet below"
    return False, f"at k = {answer} precision is {state} recall"


@solves("01.2")
def _solve_crossing() -> Solution:
    from ragworkbook.metrics.retrieval import precision_at_k, recall_at_k

    ranking, relevant = _long()
    k = _first_crossing()
    p, r = precision_at_k(ranking, relevant, k), recall_at_k(ranking, relevant, k)
    return Solution(k, "With 8 relevant documents, precision = hits / k and recall = hits / 8 cross when k "
                       f"passes 8: at k = {k}, P@{k} = {p:.3f} and Recall@{k} = {r:.3f}. Before that "
                       "precision is the larger, because it divides the same hits by fewer positions.")


def _best_recall_at_3() -> float:
    from itertools import permutations

    from ragworkbook.metrics.retrieval import recall_at_k

    ranking, relevant = _carbon()
    return max(recall_at_k(list(p), relevant, 3) for p in permutations(ranking))


@exercise("01.3", "The best Recall@3 any order can reach",
          "Reorder the five carbon-pricing chunks any way you like: predict the highest Recall@3 an order "
          "can reach, then find it by trying all 120 orders.")
def _check_best(answer: Any) -> tuple[bool, str]:
    return close(answer, _best_recall_at_3(), what="the best Recall@3")


@solves("01.3")
def _solve_best() -> Solution:
    value = _best_recall_at_3()
    return Solution(value, "Four of the five chunks are relevant but only three fit in the top 3, so even a "
                           f"perfect order gives Recall@3 = 3 / 4 = {value:.2f}. A cutoff smaller than the "
                           "number of relevant documents caps recall whatever the ranker does.")
