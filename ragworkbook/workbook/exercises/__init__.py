"""Exercises with checked solutions: predict, compute, compare.

Every notebook poses a few exercises. Each is declared once, in the module of
its notebook (``ragworkbook.workbook.exercises.nb02`` for notebook 02), with

- a **checker**: given the learner's answer, it says *right*, or *what is off*
  (a wrong value, a wrong type, a ranking that breaks a stated condition);
- a **solution**: the answer worked out with the package, with a short
  explanation. It is kept out of the notebook's first read: the notebook shows
  it in a collapsed cell, and the modules are the solutions' home.

In a notebook::

    from ragworkbook.workbook.exercises import check
    my_answer = None          # your prediction goes here
    check("02.1", my_answer)  # -> "02.1: not answered yet ..." until you answer

and, in the collapsed solution cell::

    from ragworkbook.workbook.exercises import check, solution
    sol = solution("02.1")
    print(sol.explanation)
    check("02.1", sol.value)

``check`` returns a :class:`CheckResult` that displays as one line (``ok`` is
None while unanswered). The test suite runs every solution through its checker, so
a solution can never go stale.

Writing an exercise (in ``nbNN.py``)::

    @exercise("02.1", "NDCG after a swap", "Predict NDCG@5 after swapping c2 and c3.")
    def _check(answer):                 # -> (ok, message)
        return close(answer, _value(), 1e-3)

    @solves("02.1")
    def _solve():
        return Solution(_value(), "Swapping puts the grade-3 chunk first ...")
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Exercise",
    "Solution",
    "CheckResult",
    "exercise",
    "close_each",
    "solves",
    "check",
    "solution",
    "exercises",
    "close",
    "same_items",
]


@dataclass(frozen=True)
class Solution:
    """A worked solution: the ``value`` to pass to the checker and an ``explanation``."""

    value: Any
    explanation: str = ""


@dataclass(frozen=True)
class CheckResult:
    """The checker's verdict: ``ok`` (True, False, or None while unanswered) and one line of ``message``."""

    exercise: str
    ok: bool | None
    message: str

    def __str__(self) -> str:
        head = {True: "right", False: "not yet", None: "not answered yet"}[self.ok]
        return f"{self.exercise}: {head}: {self.message}"

    __repr__ = __str__  # a notebook cell ending in check(...) shows the verdict line

    def __bool__(self) -> bool:
        return bool(self.ok)


@dataclass
class Exercise:
    """One exercise: ``id`` ("02.1"), its ``notebook`` ("02"), a ``title``, the ``task`` in one or
    two sentences, its checker and (once registered) its solution."""

    id: str
    notebook: str
    title: str
    task: str
    checker: Callable[[Any], tuple[bool, str]]
    solver: Callable[[], Solution] | None = field(default=None, repr=False)


_EXERCISES: dict[str, Exercise] = {}


def exercise(exercise_id: str, title: str, task: str) -> Callable[[Callable[[Any], tuple[bool, str]]],
                                                                  Callable[[Any], tuple[bool, str]]]:
    """Register the decorated function as the checker of ``exercise_id`` ("NN.k", NN the notebook)."""
    notebook, _, number = exercise_id.partition(".")
    if not (len(notebook) == 2 and notebook.isdigit() and number.isdigit()):
        raise ValueError(f"an exercise id is 'NN.k' (notebook NN, exercise k), got {exercise_id!r}")

    def register(fn: Callable[[Any], tuple[bool, str]]) -> Callable[[Any], tuple[bool, str]]:
        if exercise_id in _EXERCISES:
            raise ValueError(f"exercise {exercise_id} is declared twice")
        _EXERCISES[exercise_id] = Exercise(exercise_id, notebook, title, task, fn)
        return fn

    return register


def solves(exercise_id: str) -> Callable[[Callable[[], Solution]], Callable[[], Solution]]:
    """Register the decorated function as the solution of ``exercise_id`` (declared just before)."""

    def register(fn: Callable[[], Solution]) -> Callable[[], Solution]:
        if exercise_id not in _EXERCISES:
            raise ValueError(f"solution for {exercise_id}, which is not declared: declare it with @exercise")
        _EXERCISES[exercise_id].solver = fn
        return fn

    return register


def _load(notebook: str | None = None) -> None:
    names = [f"nb{notebook}"] if notebook else [m.name for m in pkgutil.iter_modules(__path__)
                                                 if m.name.startswith("nb")]
    for name in names:
        try:
            importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise


def _get(exercise_id: str) -> Exercise:
    _load(exercise_id.partition(".")[0] if "." in exercise_id else None)
    try:
        return _EXERCISES[exercise_id]
    except KeyError:
        known = ", ".join(sorted(_EXERCISES)) or "none"
        raise ValueError(f"no exercise {exercise_id!r}; exercises of that notebook: {known}") from None


def check(exercise_id: str, answer: Any) -> CheckResult:
    """Check ``answer`` for exercise ``exercise_id`` and return the verdict (it displays as one line).

    ``None`` means not answered yet: the verdict says so and points at the solution cell.
    """
    ex = _get(exercise_id)
    if answer is None:
        result = CheckResult(exercise_id, None, "replace None with your answer; the worked solution is "
                             "in the collapsed cell below")
    else:
        try:
            ok, message = ex.checker(answer)
        except (TypeError, ValueError, KeyError, IndexError) as exc:
            ok, message = False, f"could not check this answer ({exc})"
        result = CheckResult(exercise_id, bool(ok), message)
    return result


def solution(exercise_id: str) -> Solution:
    """The worked solution of ``exercise_id`` (computed by the package)."""
    ex = _get(exercise_id)
    if ex.solver is None:
        raise ValueError(f"exercise {exercise_id} has no solution registered (add one with @solves)")
    return ex.solver()


def exercises(notebook: str | None = None) -> list[Exercise]:
    """Every exercise (of one notebook, "02"), in id order."""
    _load(notebook)
    out = [e for e in _EXERCISES.values() if notebook is None or e.notebook == notebook]
    return sorted(out, key=lambda e: (e.notebook, int(e.id.partition(".")[2])))


# --- helpers for checkers ---------------------------------------------------------------------
def close(answer: Any, expected: float, tol: float = 1e-3, what: str = "the value") -> tuple[bool, str]:
    """Is ``answer`` a number within ``tol`` of ``expected``? The message says how far off it is."""
    if isinstance(answer, bool) or not isinstance(answer, (int, float)):
        return False, f"{what} should be a number, got {type(answer).__name__}"
    if math.isnan(float(answer)):
        return False, f"{what} is NaN"
    if abs(float(answer) - expected) <= tol:
        return True, f"{what} is {expected:.4g}"
    off = float(answer) - expected
    return False, f"{what} {float(answer):.4g} is too {'high' if off > 0 else 'low'} (off by {abs(off):.3g})"


def close_each(answer: Any, expected: Sequence[float], what: Sequence[str],
               tol: float = 1e-3) -> tuple[bool, str]:
    """Is ``answer`` a tuple of numbers, each within ``tol`` of ``expected`` (in the order of
    ``what``, their names)? The message says, for each, right or how far off."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__len__") or len(answer) != len(expected):
        count = {2: "two", 3: "three", 4: "four"}.get(len(expected), str(len(expected)))
        return False, f"give {count} numbers: ({', '.join(what)})"
    results = [close(a, e, tol, w) for a, e, w in zip(answer, expected, what, strict=True)]
    return all(ok for ok, _ in results), "; ".join(msg for _, msg in results)


def same_items(answer: Any, expected: Sequence[Any], what: str = "the items") -> tuple[bool, str]:
    """Does ``answer`` hold exactly the ``expected`` items (any order)? The message names the difference."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return False, f"{what} should be a list, got {type(answer).__name__}"
    got, want = set(answer), set(expected)
    if got == want:
        return True, f"{what} are {sorted(want)}"
    parts = []
    if want - got:
        parts.append(f"missing {sorted(want - got)}")
    if got - want:
        parts.append(f"not expected {sorted(got - want)}")
    return False, f"{what}: " + "; ".join(parts)
