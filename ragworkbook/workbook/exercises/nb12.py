"""Exercises of notebook 12 (end-to-end evaluation) and their solutions."""

from __future__ import annotations

from typing import Any

from ragworkbook.workbook.exercises import Solution, close, exercise, same_items, solves


def _ceiling() -> float:
    from ragworkbook.workbook.quality_model import end_to_end_quality

    return end_to_end_quality(0.2, 1.0, ceiling=0.9)


@exercise("12.1", "The ceiling behind 0.18",
          "Under the product model with a generation ceiling of 0.9, predict the end-to-end quality at "
          "retrieval quality 0.2 and perfect generation; then compute it with end_to_end_quality.")
def _check_ceiling(answer: Any) -> tuple[bool, str]:
    return close(answer, _ceiling(), what="the end-to-end quality")


@solves("12.1")
def _solve_ceiling() -> Solution:
    return Solution(_ceiling(), "0.2 x 1.0 x 0.9 = 0.18, the chapter's figure (B8): the plain product gives "
                                "0.20, "
                                "so 0.18 needs the extra 0.9 factor the chapter never states.")


def _rule_vs_labels() -> list[str]:
    import json

    from ragworkbook.corpus.eval_set import load_eval_set
    from ragworkbook.evaluation.lost_in_the_middle import states_reference
    from ragworkbook.paths import data_path

    path = data_path("author_labels", "naive_rag_embedded_labels.json")
    labels = json.loads(path.read_text(encoding="utf-8"))
    items = {it.id: it for it in load_eval_set()}
    return sorted(rec["id"] for rec in labels["labels"]
                  if states_reference(rec["answer"], items[rec["id"]].reference, items[rec["id"]].keyword)
                  and not rec["correct"])


@exercise("12.2", "An automatic 'correct' that is not",
          "The heatmap section counts an answer as correct when it states the reference's number (or "
          "keyword). "
          "Which answers (ids such as 'q3') does that rule count as correct although the labels written by "
          "the "
          "project's authors say they are not?")
def _check_rule(answer: Any) -> tuple[bool, str]:
    return same_items(answer, _rule_vs_labels(), what="the answers")


@solves("12.2")
def _solve_rule() -> Solution:
    ids = _rule_vs_labels()
    return Solution(ids, f"{', '.join(ids)}: the answer contains the reference's number inside a copied "
                         "table "
                         "fragment glued to other rows' values, so the number check passes while no reader "
                         "would "
                         "take the fact away from it.")


def _edge_position() -> int:
    from ragworkbook.evaluation.lost_in_the_middle import edges_order

    return edges_order([1, 2, 3, 4, 5]).index(2) + 1


@exercise("12.3", "Best chunks at the edges",
          "The placement strategy puts the highest-scored chunks at the start and the end of the context. "
          "With "
          "five retrieved chunks, predict the position (1-5) at which edges_order puts the rank-2 chunk.")
def _check_edge(answer: Any) -> tuple[bool, str]:
    return close(answer, _edge_position(), 0, what="the position")


@solves("12.3")
def _solve_edge() -> Solution:
    from ragworkbook.evaluation.lost_in_the_middle import edges_order

    return Solution(_edge_position(), f"edges_order([1, 2, 3, 4, 5]) = {edges_order([1, 2, 3, 4, 5])}: rank "
                                      "1 "
                                      "first, rank 2 last, the weakest chunk in the middle.")
