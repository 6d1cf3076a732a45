"""Every exercise's solution passes its checker; check() and solution() behave as the contract says."""

from __future__ import annotations

import pytest

from ragworkbook.workbook.exercises import CheckResult, Solution, check, exercise, exercises, solution

ALL = exercises()
#: Exercises whose solution loads a model (MiniLM, BERTScore, the embedded LLM): their case is marked
#: ``model`` (a fast test that loads one fails, see tests/conftest.py).
NEEDS_MODEL: set[str] = {"04.2", "06.1", "08.2", "08.3"}  # MiniLM: dense retrieval, similarity, dedup


def test_there_are_exercises_and_ids_are_unique():
    ids = [e.id for e in ALL]
    assert ids and len(ids) == len(set(ids))
    assert all(e.solver is not None for e in ALL), [e.id for e in ALL if e.solver is None]


@pytest.mark.parametrize("ex", [pytest.param(e, id=e.id, marks=[pytest.mark.model] * (e.id in NEEDS_MODEL))
                                for e in ALL])
def test_every_solution_passes_its_checker(ex):
    sol = solution(ex.id, show=False)
    result = check(ex.id, sol.value)
    assert result.ok is True, str(result)
    assert repr(result).startswith(f"{ex.id}: right:")
    assert sol.explanation


def test_a_hand_worked_answer_is_right():
    """The checker's value is worked out here, not by the package: grades 0, 2, 3, 1 in the top 4."""
    assert check("01.1", 3 / 4).ok is True
    assert check("01.1", "3/4").ok is True
    assert solution("01.1", show=False).value == 0.75


def test_unanswered_and_wrong_answers():
    unanswered = check("01.1", None)
    assert unanswered.ok is None
    assert repr(unanswered) == ('01.1: not answered yet: replace None with your answer; solution("01.1") '
                                "prints a worked solution")
    wrong = check("01.1", 0.25)
    assert wrong.ok is False and "too low" in wrong.message and isinstance(wrong, CheckResult)
    assert not wrong
    assert check("01.1", [0.75]).message.startswith("Precision@4 should be a number")
    with pytest.raises(ValueError, match="no exercise '01.99'"):
        check("01.99", 1)


def test_solution_prints_once_and_returns_the_value(capsys):
    sol = solution("01.1")
    printed = capsys.readouterr().out
    assert printed.startswith("Solution 01.1 — ") and "answer: 0.75" in printed
    assert sol.value == 0.75 and sol.shown
    sol._ipython_display_()  # a cell ending in solution(...) shows nothing more
    assert capsys.readouterr().out == ""
    Solution(0.5, "half")._ipython_display_()  # a solution not printed yet displays itself
    assert "half" in capsys.readouterr().out
    assert solution("01.1", show=False) == Solution(0.75, sol.explanation)
    assert capsys.readouterr().out == ""


def test_declaring_an_exercise_badly_is_refused():
    with pytest.raises(ValueError, match="'NN.k'"):
        exercise("1.1", "t", "task")
    with pytest.raises(TypeError, match="list of regexes"):
        exercise("99.1", "t", "task", reveals=r"\bx\b")
    with pytest.raises(ValueError, match="declared twice"):
        exercise("01.1", "t", "task")(lambda a: (True, ""))


@pytest.mark.model
def test_the_dense_rank_a_task_states_is_the_retrievers():
    """04.1's task says dense retrieval ranks p05-c02 16th: the checker's hint relies on it."""
    from ragworkbook.workbook.exercises import nb04

    _, eval_set, _ = nb04._setup()
    assert nb04._rank(nb04._dense(), eval_set["q1"].question) == nb04._DENSE_RANK
