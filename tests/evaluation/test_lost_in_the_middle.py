"""ragworkbook.evaluation.lost_in_the_middle with a fake retriever and a position-sensitive pipeline."""

from dataclasses import dataclass

import pytest
from fakes.pipelines import tiny_eval_set

from ragworkbook.evaluation.lost_in_the_middle import (
    lost_in_the_middle,
    place,
    position_summary,
    states_reference,
)


@dataclass
class H:
    id: str


class FakeRetriever:
    def search(self, q, k):
        return [H(f"c{i}") for i in range(1, 8)][:k]


class FirstChunkPipeline:
    """Answers correctly only when the gold chunk comes first."""

    def answer_from(self, question, chunks):
        return "It used 8 heads." if chunks[0].id == "c3" else "It used 16 heads."


EVAL = tiny_eval_set(1)  # q1: how many heads (8)


def test_place():
    assert place("g", ["a", "b"], 1) == ["g", "a", "b"]
    assert place("g", ["a", "b"], 3) == ["a", "b", "g"]
    with pytest.raises(ValueError, match="position must be between 1 and 3"):
        place("g", ["a", "b"], 4)


def test_states_reference():
    assert states_reference("Eight? No: 8 heads.", "They used 8 heads.")
    assert not states_reference("They used 16 heads.", "They used 8 heads.")
    assert states_reference("the adam optimizer", "They used Adam.", keyword="Adam")
    with pytest.raises(ValueError, match="pass the keyword"):
        states_reference("x", "They used Adam.")


def test_experiment_moves_only_the_gold_chunk():
    trials = lost_in_the_middle(FirstChunkPipeline(), EVAL, {"q1": {"c3": 1}}, retriever=FakeRetriever(),
                                n_contexts=4, progress=False)
    assert [t.position for t in trials] == [1, 2, 3, 4]
    assert trials[0].order == ["c3", "c1", "c2", "c4"]
    assert trials[3].order == ["c1", "c2", "c4", "c3"]
    assert [t.correct for t in trials] == [True, False, False, False]
    s = position_summary(trials)
    assert s.loc[1, "correct"] == 1.0 and s.loc[2, "correct"] == 0.0 and s["n"].tolist() == [1, 1, 1, 1]


def test_question_without_gold_is_skipped():
    assert lost_in_the_middle(FirstChunkPipeline(), EVAL, {"q1": {}}, retriever=FakeRetriever(),
                              progress=False) == []


def test_bad_setups_say_what_is_missing():
    qrels = {"q1": {"c3": 1}}
    with pytest.raises(ValueError, match="n_contexts must be at least 2"):
        lost_in_the_middle(FirstChunkPipeline(), EVAL, qrels, retriever=FakeRetriever(), n_contexts=1,
                           progress=False)
    with pytest.raises(ValueError, match=r"pass retriever=\.\.\."):
        lost_in_the_middle(FirstChunkPipeline(), EVAL, qrels, progress=False)

    class AnswerOnly:
        retriever = FakeRetriever()

        def answer(self, question):  # retrieves by itself: cannot take a given chunk order
            return "8"

    with pytest.raises(TypeError, match=r"AnswerOnly has no method to answer from given chunks"):
        lost_in_the_middle(AnswerOnly(), EVAL, qrels, progress=False)
