"""Exercises of notebook 01 (precision, recall, hit rate) and their solutions."""

from __future__ import annotations

from itertools import permutations

from ragworkbook.metrics.retrieval import precision_at_k, recall_at_k
from ragworkbook.workbook.exercises import Count, Mistake, Number, Solution, exercise, solves
from ragworkbook.workbook.exercises.examples import carbon as _carbon


def _relevant(min_grade: int = 1) -> set[str]:
    return {d for d, g in _carbon()[1].items() if g >= min_grade}


@exercise("01.1", "Precision at 4",
          "Predict Precision@4 of the carbon-pricing ranking to 2 decimals, then compute it with the "
          "package.",
          reveals=[r"code:precision_at_k\([^)]*,\s*4\)", r"P@4\s*="])
def _p4() -> Number:
    ranking, _ = _carbon()
    recount = "count the chunks with a grade above 0 among the first four again"
    return Number(precision_at_k(ranking, _relevant(), 4), 2, "Precision@4", share=True, mistakes=[
        Mistake(precision_at_k(ranking, _relevant(2), 4),
                "a chunk is relevant when its grade is above 0, not only when it is 2 or more"),
        Mistake(precision_at_k(ranking, set(ranking), 4), "the chunk at rank 1 has grade 0: is it relevant?"),
        Mistake(sum(d in _relevant() for d in ranking[:4]) / len(ranking),
                "Precision@4 divides the hits by k = 4, not by the five chunks retrieved")],
        low=recount, high=recount)


@solves("01.1")
def _solve_p4() -> Solution:
    ranking, grades = _carbon()
    value = precision_at_k(ranking, _relevant(), 4)
    top = ", ".join(str(grades[d]) for d in ranking[:4])
    return Solution(value, f"The first four chunks have grades {top}: three are above 0, so Precision@4 = "
                           f"3 / 4 = {value:.2f}. Recall@4 is also 3/4 here, by coincidence: four chunks are "
                           "relevant, the same number as k.")


def _long() -> tuple[list[str], set[str]]:
    """The 20-document ranking of notebook 01, with the five relevant documents of the exercise (the
    plotted question has eight, two never retrieved)."""
    ranking = [f"d{i:02d}" for i in range(1, 21)]
    return ranking, {"d01", "d03", "d04", "d08", "d12"}


def _first_crossing() -> int:
    ranking, relevant = _long()
    return next(k for k in range(1, 21)
                if precision_at_k(ranking, relevant, k) < recall_at_k(ranking, relevant, k))


@exercise("01.2", "Where precision falls below recall",
          "On the 20-document ranking, with only d01, d03, d04, d08 and d12 relevant, predict the smallest k "
          "at which Precision@k is below Recall@k.",
          reveals=[r"code:\{\s*['\"]d01['\"],\s*['\"]d03['\"],\s*['\"]d04['\"],\s*['\"]d08['\"],\s*['\"]d12['\"]\s*\}"])
def _crossing() -> Count:
    ranking, relevant = _long()
    equal = [k for k in range(1, 21)
             if precision_at_k(ranking, relevant, k) == recall_at_k(ranking, relevant, k)]
    return Count(_first_crossing(), "k", mistakes=[
        Mistake(k, f"at k = {k} precision and recall are equal (both divide the same hits by {k}); the "
                   "question asks where precision is below") for k in equal] + [
        Mistake(9, "that is where the plotted ranking crosses, with 8 relevant documents; this question has "
                   "5")],
        more="at that k precision is already below recall: try a smaller one",
        fewer="at that k precision is still above recall: precision divides the hits by k, recall by the "
              "number of relevant documents")


@solves("01.2")
def _solve_crossing() -> Solution:
    ranking, relevant = _long()
    k = _first_crossing()
    p, r = precision_at_k(ranking, relevant, k), recall_at_k(ranking, relevant, k)
    n = len(relevant)
    return Solution(k, f"With {n} relevant documents, precision = hits / k and recall = hits / {n}: "
                       f"precision is the larger while k < {n}, they are equal at k = {n}, and precision is "
                       f"below from the next k on: at k = {k}, P@{k} = {p:.3f} and Recall@{k} = {r:.3f}. "
                       "Where the relevant documents sit does not matter, only how many there are.")


def _best_recall_at_3() -> float:
    ranking, _ = _carbon()
    return max(recall_at_k(list(p), _relevant(), 3) for p in permutations(ranking))


# 0.75 is also the 20-document ranking's recall ceiling (printed above the exercise): a coincidence, not
# this exercise's answer, so only what computes the best order reveals it
@exercise("01.3", "The best Recall@3 any order can reach",
          "Reorder the five carbon-pricing chunks any way you like: predict the highest Recall@3 an order "
          "can reach (to 2 decimals), then find it by trying all 120 orders.",
          reveals=[r"code:permutations\("], reveals_value=False)
def _best() -> Number:
    ranking, _ = _carbon()
    return Number(_best_recall_at_3(), 2, "the best Recall@3", share=True, mistakes=[
        Mistake(1.0, "how many chunks are relevant (grade above 0), and how many fit in the top 3?"),
        Mistake(3 / len(ranking),
                "recall divides by the number of relevant chunks, not by the five retrieved")],
        low="put the relevant chunks first: how many of them fit in the top 3?",
        high="put the relevant chunks first: how many of them fit in the top 3?")


@solves("01.3")
def _solve_best() -> Solution:
    value = _best_recall_at_3()
    n = len(_relevant())
    return Solution(value, f"{n} of the five chunks are relevant but only three fit in the top 3, so even a "
                           f"perfect order gives Recall@3 = 3 / {n} = {value:.2f}. A cutoff smaller than the "
                           "number of relevant documents caps recall whatever the ranker does.")
