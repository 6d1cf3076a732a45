"""Exercises of notebook 02 (ranking metrics: MRR, MAP, cumulative gain, NDCG) and their solutions."""

from __future__ import annotations

from collections import Counter
from itertools import permutations

from ragworkbook.metrics.batch import score_ranking
from ragworkbook.metrics.retrieval import (
    cumulative_gain,
    dcg_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
)
from ragworkbook.workbook.exercises import Mistake, Number, Numbers, Solution, exercise, solves
from ragworkbook.workbook.exercises.examples import carbon as _carbon
from ragworkbook.workbook.widgets import ndcg_breakdown


def _best_first() -> list[str]:
    """The carbon ranking with the grade-3 chunk moved to rank 1 (the others keep their order)."""
    ranking, grades = _carbon()
    best = max(ranking, key=lambda d: grades[d])
    return [best] + [d for d in ranking if d != best]


def _cg3() -> tuple[float, float]:
    _, grades = _carbon()
    return (cumulative_gain(_carbon()[0], grades, 3, gain="exponential"),
            cumulative_gain(_best_first(), grades, 3, gain="exponential"))


@exercise("02.4", "Cumulative gain, before the discount",
          "With exponential gain, predict CG@3 of the carbon-pricing ranking and CG@3 after the grade-3 "
          "chunk moves to rank 1 (the others keep their order). Answer with the pair (before, after) of "
          "whole numbers.",
          reveals=[r"code:cumulative_gain\(", r"code:cg_from_grades\(", r"(?<![A-Za-z])CG@3\s*="])
def _cg() -> Numbers:
    ranking, grades = _carbon()
    linear = Mistake(cumulative_gain(ranking, grades, 3),
                     "that is linear gain (the grades themselves); the task asks for 2^grade - 1")
    dcg = [Mistake(dcg_at_k(r, grades, 3, gain="exponential"),
                   "that is DCG@3: cumulative gain adds the gains without dividing by log2(rank + 1)")
           for r in (ranking, _best_first())]
    before, after = _cg3()
    return Numbers((Number(before, 0, "CG@3 before", mistakes=(linear, dcg[0])),
                    Number(after, 0, "CG@3 after", mistakes=(linear, dcg[1]))))


@solves("02.4")
def _solve_cg() -> Solution:
    ranking, grades = _carbon()
    before, after = _cg3()
    top = [grades[d] for d in ranking[:3]]
    moved = [grades[d] for d in _best_first()[:3]]
    return Solution((before, after),
                    f"The top 3 hold grades {top}, gains {[2 ** g - 1 for g in top]}: CG@3 = {before:g}. "
                    f"Moving the grade-3 chunk first gives grades {moved} in the top 3: the same chunks, "
                    f"so CG@3 = {after:g} again. Cumulative gain sees the top k as a bag; dividing each gain "
                    "by log2(rank + 1) is what makes DCG reward the better order.")


def _swapped() -> list[str]:
    """The carbon ranking with ranks 1 and 3 swapped (the grade-3 chunk first, the EU chunk third)."""
    ranking, _ = _carbon()
    ranking[0], ranking[2] = ranking[2], ranking[0]
    return ranking


def _ndcg_swapped(gain: str = "exponential") -> float:
    return ndcg_at_k(_swapped(), _carbon()[1], 5, gain=gain)


@exercise("02.1", "NDCG after a swap",
          "Swap the chunks at ranks 1 and 3 of the carbon-pricing ranking (the grade-3 chunk moves to the "
          "top, the EU chunk to rank 3). Predict NDCG@5 with exponential gain to 3 decimals, then make the "
          "move in the widget and compare.",
          reveals=[r"code:_swapped|swap\(0,\s*2\)"])
def _swap() -> Number:
    ranking, grades = _carbon()
    recompute = "work out each rank's gain / log2(rank + 1) again, and divide their sum by IDCG@5"
    return Number(_ndcg_swapped(), 3, "NDCG@5 after the swap", share=True, mistakes=[
        Mistake(_ndcg_swapped("linear"), "that is linear gain; the task asks for exponential (2^grade - 1)"),
        Mistake(dcg_at_k(_swapped(), grades, 5, gain="exponential"),
                "that is DCG@5: divide by the ideal DCG@5 to normalise"),
        Mistake(ndcg_at_k(ranking, grades, 5, gain="exponential"), "that is NDCG@5 before the swap")],
        low=recompute, high=recompute)


@solves("02.1")
def _solve_swap() -> Solution:
    ranking, grades = _carbon()
    before = ndcg_breakdown(ranking, grades, 5, "exponential")
    after = ndcg_breakdown(_swapped(), grades, 5, "exponential")
    return Solution(after["ndcg"],
                    f"IDCG@5 does not change ({after['idcg']:.3f}): the same chunks are judged. DCG@5 goes "
                    f"from {before['dcg']:.3f} to {after['dcg']:.3f} because the gain 7 of the grade-3 "
                    "chunk is now divided by log2(2) = 1 instead of log2(4) = 2, and the EU chunk's gain "
                    f"is 0 wherever it sits: NDCG@5 = {after['dcg']:.3f} / {after['idcg']:.3f} = "
                    f"{after['ndcg']:.3f}.")


def _answering() -> set[str]:
    """The chunks that answer the question on their own: grade 2 or more."""
    _, grades = _carbon()
    return {d for d, g in grades.items() if g >= 2}


def _rr_and_recall(ranking: list[str]) -> tuple[float, float]:
    rel = _answering()
    return reciprocal_rank(ranking, rel), recall_at_k(ranking, rel, 3)


# the answer is an order of the five chunk ids, which every table of the notebook shows: what would
# reveal it is a cell computing MRR and recall with "grade 2 or more" as relevance
@exercise("02.2", "MRR up, Recall@3 down",
          "Call a chunk relevant when its grade is 2 or more (it answers the question). Find an order of "
          "the five carbon-pricing chunks whose reciprocal rank is higher than the original order's and "
          "whose Recall@3 is lower. Predict first: is it possible?",
          reveals=[r"code:(?:grade|g)\w*\s*>=\s*2"], reveals_value=False)
def _check_mrr_recall(answer: object) -> tuple[bool, str]:
    ranking, _ = _carbon()
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return False, f"give the order as a list of the five chunk ids, got {type(answer).__name__}"
    answer = list(answer)
    if Counter(answer) != Counter(ranking):
        return False, f"use each of the five chunk ids exactly once: {ranking}"
    rr0, rec0 = _rr_and_recall(ranking)
    rr, rec = _rr_and_recall(answer)
    problems = []
    if not rr > rr0:
        problems.append(f"its reciprocal rank is {rr:.3f}, not above the original order's {rr0:.3f}")
    if not rec < rec0:
        problems.append(f"its Recall@3 is {rec:.3f}, not below the original order's {rec0:.3f}")
    if problems:
        return False, "; ".join(problems)
    return True, f"reciprocal rank {rr0:.3f} -> {rr:.3f} while Recall@3 {rec0:.3f} -> {rec:.3f}"


@solves("02.2")
def _solve_mrr_recall() -> Solution:
    ranking, _ = _carbon()
    rr0, rec0 = _rr_and_recall(ranking)
    for order in permutations(ranking):
        rr, rec = _rr_and_recall(list(order))
        if rr > rr0 and rec < rec0:
            return Solution(list(order),
                            "Two chunks answer the question (grades 2 and 3). The original order has them "
                            f"at ranks 2 and 3: reciprocal rank {rr0:.2f}, Recall@3 {rec0:.2f}. Putting one "
                            f"of them first and the other below rank 3 gives reciprocal rank {rr:.2f} and "
                            f"Recall@3 {rec:.2f}: MRR only looks at the first relevant chunk, so it cannot "
                            "see the second one leave the context.")
    raise AssertionError("no order raises MRR and lowers Recall@3")  # pragma: no cover


def _eu_third() -> list[str]:
    """The carbon ranking with the EU chunk moved from rank 1 to rank 3."""
    ranking, _ = _carbon()
    eu = ranking.pop(0)
    ranking.insert(2, eu)
    return ranking


def _rprec_and_ap() -> tuple[float, float]:
    scores = score_ranking(_eu_third(), _carbon()[1], ["r_precision", "map"])
    return scores["r_precision"], scores["map"]


# R-precision does not change with the move, and the original order's (0.75) is printed above: that is
# the point of the exercise, so only AP's value reveals it
@exercise("02.3", "R-precision and AP after a move",
          "Move the EU chunk of the carbon-pricing ranking from rank 1 to rank 3 (the two Canadian "
          "federal chunks move up). Predict R-precision to 2 decimals and AP to 4 decimals; which "
          "of the two changes? Answer with the pair (r_precision, ap).",
          reveals=[r"code:_eu_third|insert\(2,"], reveals_value=lambda v: v[1])
def _rprec_ap() -> Numbers:
    ranking, grades = _carbon()
    before = score_ranking(ranking, grades, ["r_precision", "map"])
    r_prec, ap = _rprec_and_ap()
    return Numbers((
        Number(r_prec, 2, "R-precision", share=True, mistakes=[
            Mistake(1.0, "R = 4 relevant chunks: how many of them are in the top 4 after the move?")]),
        Number(ap, 4, "AP", share=True, mistakes=[
            Mistake(before["map"], "that is AP before the move: the relevant chunks now sit at ranks 1, 2, "
                                   "4, 5"),
            Mistake(1.0, "AP is 1 only when every relevant chunk comes before every irrelevant one")])))


@solves("02.3")
def _solve_rprec_ap() -> Solution:
    ranking, grades = _carbon()
    before = score_ranking(ranking, grades, ["r_precision", "map"])
    r_prec, ap = _rprec_and_ap()
    return Solution((r_prec, ap),
                    "Four chunks are relevant, so R = 4 and R-precision is Precision@4: three relevant "
                    f"chunks in the top 4 before and after the move ({before['r_precision']:.2f} and "
                    f"{r_prec:.2f}). R-precision ignores the order inside its cutoff. AP does not: the "
                    "relevant chunks now sit at ranks 1, 2, 4 and 5, so AP = (1 + 1 + 3/4 + 4/5) / 4 = "
                    f"{ap:.4f}, up from {before['map']:.4f}.")
