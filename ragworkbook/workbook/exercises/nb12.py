"""Exercises of notebook 12 (end-to-end evaluation) and their solutions."""

from __future__ import annotations

import json

from ragworkbook.corpus.eval_set import load_eval_set
from ragworkbook.evaluation.lost_in_the_middle import edges_order, states_reference
from ragworkbook.paths import data_path
from ragworkbook.workbook.exercises import Count, Mistake, Number, Solution, exercise, same_items, solves
from ragworkbook.workbook.quality_model import end_to_end_quality

_TARGET, _CEILING = 0.5, 0.9


def _retrieval_needed() -> float:
    """The retrieval quality at which the product model with a 0.9 ceiling reaches 0.5 with perfect
    generation (the model is linear in retrieval quality)."""
    return _TARGET / end_to_end_quality(1.0, 1.0, ceiling=_CEILING)


@exercise("12.1", "The retrieval a target needs",
          "Under the product model with the chapter's implied generation ceiling of 0.9, what retrieval "
          "quality does an end-to-end quality of 0.5 need, with perfect generation? Give it to 3 decimals "
          "(or as a fraction).",
          # 0.56 is too common a sight (a bound of an interval) to look for: the longer renderings only
          reveals=[r"code:end_to_end_quality\([^)]*0\.5", r"code:ceiling_for\([^)]*0\.5",
                   r"(?<![\d.])0\.5556(?!\d)", r"(?<![\d.])0\.556(?!\d)", r"(?<![\d.])55\.6\s?%"],
          reveals_value=False)
def _ceiling_answer() -> Number:
    return Number(_retrieval_needed(), 3, "the retrieval quality", share=True, mistakes=[
        Mistake(_TARGET, "that ignores the ceiling: with it, perfect retrieval gives only 0.9"),
        Mistake(end_to_end_quality(_TARGET, 1.0, ceiling=_CEILING),
                "that is the end-to-end quality at retrieval 0.5; the task asks the other way round")],
        low="with a ceiling below 1, retrieval must be higher than the target itself",
        high="the model is a product: retrieval x generation x ceiling")


@solves("12.1")
def _solve_ceiling() -> Solution:
    r = _retrieval_needed()
    return Solution(r, f"quality = retrieval x generation x ceiling, so with generation 1.0 and the 0.9 "
                       f"ceiling, 0.5 needs retrieval = 0.5 / 0.9 = {r:.3f} "
                       f"(check: end_to_end_quality({r:.3f}, 1.0, ceiling=0.9) = "
                       f"{end_to_end_quality(r, 1.0, ceiling=_CEILING):.3f}). The same 0.9 gives the "
                       "chapter's 0.18 at retrieval 0.2 (B8).")


def _rule_vs_labels() -> list[str]:
    path = data_path("author_labels", "naive_rag_embedded_labels.json")
    labels = json.loads(path.read_text(encoding="utf-8"))
    items = {it.id: it for it in load_eval_set()}
    return sorted(rec["id"] for rec in labels["labels"]
                  if states_reference(rec["answer"], items[rec["id"]].reference, items[rec["id"]].keyword)
                  and not rec["correct"])


# the ids are printed everywhere; the rule's column beside the labels reveals it
@exercise("12.2", "An automatic 'correct' that is not",
          "The heatmap section counts an answer as correct when it states the reference's number (or "
          "keyword). Which answers (ids such as 'q3') does that rule count as correct although the labels "
          "written by the project's authors say they are not?",
          reveals=[r"code:states_reference\(", r"disagree on one answer", r"q5's answer"],
          reveals_value=False)
def _check_rule(answer: object) -> tuple[bool, str]:
    return same_items(answer, _rule_vs_labels(), what="the answers")


@solves("12.2")
def _solve_rule() -> Solution:
    ids = _rule_vs_labels()
    return Solution(ids, f"{', '.join(ids)}: the answer contains the reference's number inside a copied "
                         "table fragment glued to other rows' values, so the number check passes while no "
                         "reader would take the fact away from it.")


def _edge_position() -> int:
    return edges_order([1, 2, 3, 4, 5]).index(2) + 1


@exercise("12.3", "Best chunks at the edges",
          "The placement strategy puts the highest-scored chunks at the start and the end of the "
          "context. With five retrieved chunks, predict the position (1-5) at which edges_order puts the "
          "rank-2 chunk (a whole number).",
          reveals=[r"code:edges_order\(\[1, 2, 3, 4, 5\]", r"\[1, 3, 5, 4, 2\]"])
def _edge_answer() -> Count:
    return Count(_edge_position(), "the position", mistakes=[
        Mistake(2, "that is where it sits in retrieval order; the strategy moves the strong chunks to the "
                   "two ends"),
        Mistake(3, "the middle is where the weakest chunk goes")],
        fewer="the best chunk takes the start: where does the next best go?")


@solves("12.3")
def _solve_edge() -> Solution:
    return Solution(_edge_position(), f"edges_order([1, 2, 3, 4, 5]) = {edges_order([1, 2, 3, 4, 5])}: rank "
                                      "1 first, rank 2 last, the weakest chunk in the middle.")
