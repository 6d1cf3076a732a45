"""The checkers of the course's exercises refuse wrong answers, say what is off without giving the answer
away, and accept the reasonable forms of a right one.

Every exercise needs at least one entry in WRONG: add yours with the exercise (a test requires it).
The issue's examples (issue 19) are marked; the others are our own.
"""

from __future__ import annotations

import re

import pytest

from ragworkbook.workbook.exercises import check, exercises, solution
from ragworkbook.workbook.exercises.audit import reveal_patterns

REFERENCE = "The big model achieved a BLEU score of 28.4 on English-to-German translation."
C3 = ("The paper reports that their big model achieved a BLEU score of 41.0 on the WMT 2014 "
      "English-to-German translation task.")
CARBON = ["eu-cbam", "canada-federal-2019", "canada-ccfd-2023", "pricing-mechanisms", "provincial-clean-fuel"]

#: (exercise, wrong answer, a phrase the message must contain)
WRONG = [
    ("00.1", 3, "the number of relevant documents"),
    ("00.1", 2, "too few"),
    ("00.1", 5, "does a smaller k reach it already"),
    ("00.1", 4.5, "whole number"),
    ("00.1", "four and a half", "write a fraction as a number"),
    ("00.2", "answers", "no model to answer with"),
    ("00.2", "KeyError", "is not what it raises"),
    ("01.1", 0, "too low"),                          # issue: "off by 0.75"
    ("01.1", 0.5, "not only when it is 2 or more"),
    ("01.1", 1.0, "rank 1 has grade 0"),
    ("01.1", "It is not 0.75", "not what it is not"),
    ("01.2", 4, "still above recall"),
    ("01.2", 5, "equal"),
    ("01.2", 9, "with 8 relevant documents"),
    ("01.3", 1.0, "how many fit in the top 3"),
    ("01.3", 0.6, "not by the five retrieved"),
    ("02.1", 0.5, "too low"),                        # issue: "off by 0.488"
    ("02.1", 0.632, "before the swap"),
    ("02.2", CARBON, "not above the original order's 0.500"),
    ("02.2", ["eu-cbam"], "exactly once"),
    ("02.3", (0.75, 0.679), "that is AP before the move"),
    ("02.3", 0.75, "two numbers"),
    ("02.4", (5, 5), "linear gain"),
    ("02.4", (10, 12), "CG@3 after 12 is too high"),
    ("03.1", 3, "what 'Adam' alone matches"),
    ("03.1", 2, "too many"),
    ("03.2", 1, "consecutive windows share 30 characters"),
    ("03.3", ["dmodel", "Pdrop"], "not expected: ['Pdrop']"),
    ("03.3", [], "1 is missing"),
    ("04.1", 16, "the dense retriever's rank"),      # issue: "off by 40"
    ("04.1", 3, "further down"),
    ("04.2", [1, 2, 3, 4], "drops page 5"),
    ("04.2", [5, 14, 15, 16], "still outside the top 3"),
    ("04.2", [5], "you can keep more pages"),        # issue: [5] was right, the prediction never checked
    ("04.3", 0.05, "the usual threshold"),
    ("04.3", 1 / 256, "one-sided"),
    ("05.1", REFERENCE, "it is not wrong"),
    ("05.1", "It was 41.0.", "not above 30"),
    ("05.1", C3, "the C3 answer itself"),
    ("05.1", REFERENCE.replace("28.4", "0.284"), "28.4 on another scale"),   # issue: was right
    ("05.1", REFERENCE.replace("achieved", "did not achieve"), "negates"),
    ("05.2", 1.0, "precision"),
    ("05.2", 0.25, "that is the recall"),
    ("05.3", 1.0, "shorter than the reference"),
    ("05.3", 0.5, "too high"),
    ("05.4", 0.6, "ROUGE-1"),
    ("05.4", "1/3", "F-measure"),
    ("05.5", "between", "not an average"),
    ("05.5", "below", "can adding a reference take a match away"),
    ("05.5", "maybe", "answer 'above', 'between' or 'below'"),
    ("06.1", REFERENCE, "not below"),
    ("06.1", "It scored 41.0 BLEU.", "a correct answer states the reference's score"),
    ("06.1", "It is not 28.4 BLEU.", "not what it is not"),                   # issue: was right
    ("06.1", "28.4 BLEU on English-to-French.", "English-to-German"),        # issue: was right
    ("06.1", "zzz 28.4", "which number is the BLEU"),                        # issue: was right
    ("06.2", False, "compute |28 - 28.4| / 28.4"),
    ("06.2", "perhaps", "True or False"),
    ("07.1", ["q1"], "not expected: ['q1']"),
    ("07.1", ["q5", "q6"], "2 are missing"),
    ("07.2", False, "read the answer"),
    ("07.2", "perhaps", "True or False"),
    ("08.1", 1.0, "not one sentence of the chunk copied whole"),
    ("08.1", 0.9, "one unbroken run"),
    ("08.2", 300, "too many"),
    ("08.2", 0, "too few"),
    ("08.3", 0.1, "too low"),
    ("09.1", 0.8, "relevant / retrieved"),
    ("09.1", 0.679, "before the move"),
    ("09.2", 0.745833, "averages the undefined answer in as a 0"),
    ("09.3", ["q1"], "not expected: ['q1']"),
    ("10.1", (1.0, 0.5), "completeness counts only the used sentences that are relevant"),
    ("10.1", (0.5, 1 / 6), "utilization counts every used sentence"),
    ("10.2", 3, "too few"),
    ("10.3", 1 / 3, "SQuAD normalisation drops the article"),
    ("10.3", 1.0, "share no token"),
    ("12.1", 0.5, "ignores the ceiling"),
    ("12.1", 0.45, "the other way round"),
    ("12.2", ["q6"], "not expected: ['q6']"),
    ("12.3", 2, "retrieval order"),
    ("12.3", 3, "weakest chunk"),
    # --- notebook 11 (JUDGE, issue 18) ---
    ("11.1", 0, "counts every tie as a loss"),
    ("11.1", "It is not 0.5", "not what it is not"),
    ("11.1", "0.5 or 0.25", "states several numbers (0.5, 0.25)"),
    ("11.2", 0.429, "that is p_o, the raw agreement"),
    ("11.2", 0.162, "check the sign"),
    ("11.3", 1.0, "does not know synonyms"),
    ("11.3", 4 / 7, "leave the stop words out"),
    ("11.4", 0.5, "a judge without position bias"),
    ("11.4", "1 of 48", "the share choosing the answer shown second"),
    ("11.4", "10 of 48", "count, over both orders"),
    ("11.5", 0.32, "the apparent rate"),
    ("11.5", "0.12", "divide it by TPR + TNR - 1"),
    # --- end notebook 11 ---
    ("13.1", 5, "still passes"),
    ("13.1", 9, "too many"),
    ("14.1", 0.6193, "x 100"),
    ("14.1", 50.0, "linear rescaling"),
    ("14.2", 72.7, "RAGChecker prints x 100"),
    ("14.2", 0.5, "that is the recall"),
    ("14.2", 0.6, "too low"),
    ("14.3", 73.3, "adds the claim to the first response"),
    ("14.3", 75.0, "can only fall"),
    ("15.1", 1 / 3, "too low"),
    ("15.1", 1.0, "recall divides by every relevant id"),
    ("15.2", ["precision@3", "recall@3"], "not expected: ['recall@3']"),
    ("15.3", True, "a lower mean is not yet a significant loss"),
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
    ("18.1", 36, "not the longer"),
    ("18.1", 25, "too many"),
    ("18.1", "0.28", "whole number"),
    ("18.1", 5, "too few"),
    ("18.2", 10 / 39, "the sign"),
    ("18.2", 8 / 15 - 12 / 15, "left out of both"),
    ("18.2", 0.0, "too high"),
    ("18.3", 39, "stay the same"),
    ("18.3", 30, "too many"),
    ("18.3", 2, "too few"),
    ("18.3", "The number is not 15", "not what it is not"),
]

#: (exercise, a right answer in another reasonable form than the solution's)
RIGHT_FORMS = [
    ("00.1", 4.0),                      # issue: 4.0 was refused
    ("00.1", "4"),
    ("00.1", "four"),
    ("00.2", "replaymisserror"),
    ("01.1", "3/4"),
    ("01.1", "75%"),
    ("01.1", "Precision@4 is 0.75."),
    ("03.3", ["DMODEL"]),               # issue: refused on case
    ("03.3", "dmodel"),
    ("06.2", "yes"),
    ("07.2", "TRUE"),
    ("05.5", "Above both"),
    ("12.3", 5.0),
    ("15.3", "no"),
    ("11.2", "kappa = \u22120.162"),      # a typeset minus
    ("11.4", "47 of 48"),               # a count read as a share
]

#: checkers that run the dense retriever, embed the answer (MiniLM) or replay a run that needs it
NEEDS_MODEL = {"04.2", "06.1", "08.2", "08.3"}
#: exercises reworked on another branch this session (11: JUDGE, 13: CONCEPTS) that have no entry yet; a
#: strict xfail says when their entries are in (remove them here then)
PENDING: set[str] = set()


def _marks(exercise_id: str) -> list:
    return [pytest.mark.model] * (exercise_id in NEEDS_MODEL)


@pytest.mark.parametrize("exercise_id,answer,says", [
    pytest.param(e, a, s, id=f"{e}-{i}", marks=_marks(e)) for i, (e, a, s) in enumerate(WRONG)])
def test_a_wrong_answer_is_refused_with_a_reason(exercise_id, answer, says):
    result = check(exercise_id, answer)
    assert result.ok is False, str(result)
    assert says in result.message, result.message
    assert "off by" not in result.message  # the mistake, never the distance


@pytest.mark.parametrize("exercise_id,answer,says", [
    pytest.param(e, a, s, id=f"{e}-{i}", marks=_marks(e)) for i, (e, a, s) in enumerate(WRONG)
    ])
def test_feedback_on_a_wrong_answer_does_not_give_the_answer(exercise_id, answer, says):
    """The message of a refusal never shows the answer (its renderings, as the notebook audit reads them)."""
    ex = next(e for e in exercises(exercise_id[:2]) if e.id == exercise_id)
    message = check(exercise_id, answer).message
    for pattern in reveal_patterns(ex, solution(exercise_id, show=False).value):
        if not pattern.startswith("code:"):
            assert not re.search(pattern, message, re.IGNORECASE), (pattern, message)


@pytest.mark.parametrize("exercise_id,answer", [
    pytest.param(e, a, id=f"{e}-{i}", marks=_marks(e)) for i, (e, a) in enumerate(RIGHT_FORMS)])
def test_a_right_answer_in_another_form_is_accepted(exercise_id, answer):
    result = check(exercise_id, answer)
    assert result.ok is True, str(result)


@pytest.mark.parametrize("ex", [
    pytest.param(e, id=e.id, marks=[pytest.mark.xfail(strict=True, reason="reworked on another branch")]
                 * (e.id in PENDING)) for e in exercises()])
def test_every_exercise_has_wrong_answers_to_refuse(ex):
    assert any(e == ex.id for e, _, _ in WRONG), f"add wrong answers for {ex.id} to WRONG"
