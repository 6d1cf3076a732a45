"""Every exercise's solution passes its own checker; the checker catches a wrong answer."""

from __future__ import annotations

import pytest

from ragworkbook.workbook.exercises import CheckResult, check, close, exercises, same_items, solution

ALL = exercises()
#: Exercises whose solution loads a model (MiniLM, BERTScore, the embedded LLM): their case is marked
#: ``model`` (a fast test that loads one fails, see tests/conftest.py).
NEEDS_MODEL: set[str] = set()


def test_there_are_exercises_and_ids_are_unique():
    ids = [e.id for e in ALL]
    assert ids and len(ids) == len(set(ids))
    assert all(e.solver is not None for e in ALL), [e.id for e in ALL if e.solver is None]


@pytest.mark.parametrize("ex", [pytest.param(e, id=e.id, marks=[pytest.mark.model] * (e.id in NEEDS_MODEL))
                                for e in ALL])
def test_every_solution_passes_its_checker(ex):
    sol = solution(ex.id)
    result = check(ex.id, sol.value)
    assert result.ok is True, str(result)
    assert repr(result).startswith(f"{ex.id}: right:")
    assert sol.explanation


def test_a_hand_worked_answer_is_right():
    """The checker's value is worked out here, not by the package: grades 0, 2, 3, 1 in the top 4."""
    assert check("01.1", 3 / 4).ok is True
    assert solution("01.1").value == 0.75


def test_unanswered_and_wrong_answers():
    assert check("01.1", None).ok is None
    assert "not answered yet" in repr(check("01.1", None))
    wrong = check("01.1", 0.5)
    assert wrong.ok is False and "too low" in wrong.message and isinstance(wrong, CheckResult)
    assert not wrong
    assert check("01.1", "0.75").message == "Precision@4 should be a number, got str"
    with pytest.raises(ValueError, match="no exercise '01.99'"):
        check("01.99", 1)


def test_checker_helpers():
    assert close(0.3334, 1 / 3)[0] and not close(0.5, 1 / 3)[0]
    assert same_items(["b", "a"], ["a", "b"])[0]
    ok, msg = same_items(["a", "c"], ["a", "b"])
    assert not ok and "missing ['b']" in msg and "not expected ['c']" in msg
