"""The placement strategy (best chunks at the start and end) measured on fixed chunks."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ragworkbook.corpus.eval_set import eval_set_from_records
from ragworkbook.evaluation.lost_in_the_middle import (
    PLACEMENTS,
    edges_order,
    placement_experiment,
    placement_summary,
)


@dataclass
class H:
    id: str


class Retriever:
    def search(self, q, k):
        return [H(f"c{i}") for i in range(1, 6)][:k]


class EdgeReader:
    """Reads only the first and last chunk: answers right when the gold chunk c2 is at an edge."""

    def answer_from(self, question, chunks):
        return "It used 8 heads." if "c2" in (chunks[0].id, chunks[-1].id) else "It used 16 heads."


EVAL = eval_set_from_records([{"id": "q1", "question": "How many heads?", "keyword": "h = 8",
                               "reference": "The base model used 8 attention heads."}])


def test_edges_order_puts_the_best_at_both_ends():
    assert edges_order([1, 2, 3, 4, 5]) == [1, 3, 5, 4, 2]
    assert edges_order([1, 2, 3, 4]) == [1, 3, 4, 2]
    assert edges_order([1]) == [1] and edges_order([]) == []


def test_placement_experiment_finds_the_edge_effect():
    trials = placement_experiment(EdgeReader(), EVAL, {"q1": {"c2": 1}}, retriever=Retriever(), k=5,
                                  progress=False)
    by = {t.placement: t for t in trials}
    assert list(by) == list(PLACEMENTS)
    assert by["retrieval order"].order == ["c1", "c2", "c3", "c4", "c5"]
    assert by["retrieval order"].relevant_positions == [2] and not by["retrieval order"].correct
    edges = by["edges (best at start and end)"]
    assert edges.relevant_positions == [5] and edges.correct
    assert by["reversed (best last)"].relevant_positions == [4] and not by["reversed (best last)"].correct
    s = placement_summary(trials)
    assert list(s.index) == list(PLACEMENTS)
    assert s["correct"].tolist() == [0.0, 1.0, 0.0] and s["n"].tolist() == [1, 1, 1]
    assert s["first_relevant_position"].tolist() == [2.0, 5.0, 4.0]


def test_placement_errors():
    with pytest.raises(ValueError, match="unknown placement 'random'"):
        placement_experiment(EdgeReader(), EVAL, {}, retriever=Retriever(), placements=["random"])
    with pytest.raises(ValueError, match="pass retriever="):
        placement_experiment(EdgeReader(), EVAL, {})
    assert placement_summary([]).empty
