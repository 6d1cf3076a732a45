"""The checkers of the course's exercises refuse wrong answers and say what is off (each answer here is
wrong). Every exercise needs at least one entry in WRONG: add yours with the exercise."""

from __future__ import annotations

import pytest

from ragworkbook.workbook.exercises import check, exercises

REFERENCE = "The big model achieved a BLEU score of 28.4 on English-to-German translation."
WRONG = [
    ("00.1", 3, "too early"),
    ("00.1", "4", "whole number"),
    ("00.2", "answers", "no model to answer with"),
    ("00.2", "KeyError", "is not what it raises"),
    ("01.2", 5, "not yet below"),
    ("01.3", 1.0, "too high"),
    ("02.1", 0.632, "too low"),
    ("02.2", ["eu-cbam", "canada-federal-2019", "canada-ccfd-2023", "pricing-mechanisms",
              "provincial-clean-fuel"], "not above 0.500"),
    ("02.2", ["eu-cbam"], "exactly once"),
    ("02.3", (0.75, 0.679), "AP 0.679 is too low"),
    ("02.3", 0.75, "two numbers"),
    ("03.1", 1, "is not the count"),
    ("03.2", ["Pdrop", "N = 6"], "not expected: ['N = 6']"),
    ("03.3", 11, "too many"),
    ("04.1", 3, "too high"),
    ("04.2", [1, 2, 3, 4], "drops page 5"),
    ("04.2", [5, 14, 15, 16], "still outside the top 3"),
    ("04.3", 0.05, "too high"),
    ("05.1", REFERENCE, "it is not wrong"),
    ("05.1", "It was 41.0.", "not above 30"),
    ("05.2", 1.0, "too high"),
    ("05.3", 1.0, "too high"),
    ("06.1", REFERENCE, "not below"),
    ("06.1", "It scored 41.0 BLEU.", "does not state 28.4"),
    ("06.2", False, "compute |28 - 28.4| / 28.4"),
    ("06.2", "yes", "True or False"),
    ("07.1", ["q1"], "missing"),
    ("07.2", "yes", "True or False"),
    ("08.1", 1.0, "too high"),
    ("10.1", (1.0, 0.5), "completeness 1 is too high"),
    ("10.3", 1.0, "too high"),
    ("13.1", 5, "still passes"),
    ("13.1", 9, "between 1 and 8"),
    ("13.1", 7, "already fails with fewer"),
    ("13.1", "6.5", "whole number"),
    ("13.2", "r3", "too early"),
    ("13.2", "r5", "too late"),
    ("13.2", "never", "against r1"),
    ("13.2", "r1", "baseline itself"),
    ("13.2", "v4", "one of the labels r2, r3, r4, r5"),
    ("13.2", 4, "got int"),
    ("13.3", 0.05, "one week"),
    ("13.3", 0, "still rejects in 5%"),
    ("13.3", 49.4, "stays quiet"),
    ("13.3", "It is not 2.6 alerts", "not what it is not"),
    ("13.3", 10, "too high"),
    ("16.1", 0.5, "mean faithfulness"),
    ("16.1", 7 / 12, "over all claims"),
    ("16.1", "37.5%", "complement"),
    ("16.1", 0.3, "too low"),
    ("16.1", "The rate is not 0.625.", "not what it is not"),
    ("16.1", 62.5, "not between 0 and 1"),
    ("16.2", 0.304, "what the numeric check gives"),
    ("16.2", 0, "alike"),
    ("16.2", 0.8, "too high"),
    ("17.1", 0.671, "raw agreement"),
    ("17.1", 0.413, "five-point scale"),
    ("17.1", 0.698, "quadratically weighted"),
    ("17.1", 0.9, "correct for chance"),
    ("17.1", "kappa is not 0.509", "not what it is not"),
    ("17.2", 381, "worst case"),
    ("17.2", 982, "0.05 wide in all"),
    ("17.2", 62, "too few"),
    ("17.2", 2.5, "whole number"),
    ("17.3", 9, "whole batch"),
    ("17.3", 8, "one repeat is still counted"),
    ("17.3", 4, "too few"),
    ("18.1", 0.72, "answer-relevance pairs"),
    ("18.1", 0.5, "too high"),
    ("18.1", "28", "not between 0 and 1"),
    ("18.1", 0.1, "too low"),
    ("18.2", 10 / 39, "the sign"),
    ("18.2", 8 / 15 - 12 / 15, "left out of both"),
    ("18.2", 0.0, "too high"),
    ("18.3", 39 / 54, "stay the same"),
    ("18.3", 0.6, "too high"),
    ("18.3", 0.05, "too low"),
    ("18.3", "The share is not 0.278", "not what it is not"),
]


#: checkers that run the dense retriever or embed the answer (MiniLM)
NEEDS_MODEL = {"04.2", "06.1"}


@pytest.mark.parametrize("exercise_id,answer,says", [
    pytest.param(e, a, s, id=f"{e}-{i}", marks=[pytest.mark.model] * (e in NEEDS_MODEL))
    for i, (e, a, s) in enumerate(WRONG)])
def test_a_wrong_answer_is_refused_with_a_reason(exercise_id, answer, says):
    result = check(exercise_id, answer)
    assert result.ok is False, str(result)
    assert says in result.message, result.message


#: exercises reworked on another branch this session (11: JUDGE, 13: CONCEPTS) that have no entry yet; a
#: strict xfail says when their entries are in (remove them here then)
PENDING: set[str] = {"11.1", "11.2", "11.3", "11.4"}


@pytest.mark.parametrize("ex", [
    pytest.param(e, id=e.id, marks=[pytest.mark.xfail(strict=True, reason="reworked on another branch")]
                 * (e.id in PENDING)) for e in exercises()])
def test_every_exercise_has_wrong_answers_to_refuse(ex):
    assert any(e == ex.id for e, _, _ in WRONG), f"add wrong answers for {ex.id} to WRONG"
