"""JudgeSample.from_mapping reads RAGAS names, keeps the reference and never gives two questions one id."""

import pytest

from ragworkbook.corpus.answers import question_id
from ragworkbook.judging.results import JudgeSample


def test_ragas_names_and_the_reference_are_kept():
    v01 = JudgeSample.from_mapping({"question": "q?", "answer": "a", "contexts": ["c"], "ground_truth": "g"})
    v02 = JudgeSample.from_mapping({"user_input": "q?", "response": "a", "retrieved_contexts": ["c"],
                                    "reference": "g"})
    assert v01 == v02
    assert v01.reference == "g" and v01.answer == "a" and v01.contexts == ["c"]


def test_ids_without_an_id_are_the_questions_own():
    a = JudgeSample.from_mapping({"question": "first?", "answer": "", "contexts": []})
    b = JudgeSample.from_mapping({"question": "second?", "answer": "", "contexts": []})
    assert a.sample_id == question_id("first?") and a.sample_id != b.sample_id
    assert JudgeSample.from_mapping({"question": "q", "contexts": [], "id": 7}).sample_id == "7"
    given = JudgeSample.from_mapping({"question": "q", "contexts": [], "id": 7}, sample_id="x")
    assert given.sample_id == "x"


def test_conflicting_names_are_an_error():
    with pytest.raises(ValueError, match="'reference' and 'ground_truth' both give the reference"):
        JudgeSample.from_mapping({"question": "q", "contexts": [], "reference": "a", "ground_truth": "b"})
