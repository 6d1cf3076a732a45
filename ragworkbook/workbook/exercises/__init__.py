r"""Exercises with checked solutions: predict, compute, compare.

Every notebook poses a few exercises. Each is declared once, in the module of
its notebook (``ragworkbook.workbook.exercises.nb02`` for notebook 02), with

- a **checker**: given the learner's answer, it says *right*, or *what is off*
  (the likely mistake, a wrong type, a ranking that breaks a stated condition),
  never the distance to the answer (helpers in :mod:`.checking`);
- a **solution**: the answer worked out with the package, with a short
  explanation. It is not in the notebook: ``solution("02.1")`` prints it when
  the learner runs it;
- what would **reveal** it: the solution value's renderings (a default) and
  ``reveals``, regexes for the cells that would give it away (the call that
  computes it, a table that shows it). The notebook test
  (``tests/workbook/test_exercise_notebooks.py``, through :mod:`.audit`) checks
  that no cell above the exercise matches them and that no committed output
  shows a solution or a verdict "right".

In a notebook, after a markdown cell ``## Exercise 02.1 — title`` stating the task::

    from ragworkbook.workbook.exercises import check, solution
    my_answer = None          # your prediction goes here
    check("02.1", my_answer)  # -> "02.1: not answered yet: ..." until you answer

and, when the learner wants it, ``solution("02.1")`` prints the worked solution.
``check`` returns a :class:`CheckResult` that displays as one line (``ok`` is
None while unanswered). The test suite runs every solution through its checker, so
a solution can never go stale, and tries a list of wrong answers on every checker
(``tests/workbook/test_exercise_checkers.py``).

Writing an exercise (in ``nbNN.py``)::

    @exercise("02.1", "NDCG after a swap", "Predict NDCG@5 after swapping c2 and c3.",
              reveals=[r"ndcg_breakdown\(swapped"])
    def _check(answer):                 # -> (ok, message)
        return close(answer, _value(), 1e-3, "NDCG@5",
                     mistakes=[Mistake(_linear(), "that is linear gain; the task asks for exponential")])

    @solves("02.1")
    def _solve():
        return Solution(_value(), "Swapping puts the grade-3 chunk first ...")
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragworkbook.workbook.exercises.checking import (
    Checker,
    Count,
    Expected,
    Mistake,
    Number,
    Numbers,
    close,
    close_each,
    count,
    negated,
    read_bool,
    read_count,
    read_number,
    same_items,
    same_text,
    text_answer,
    yes_no,
)

__all__ = [
    "Exercise",
    "Solution",
    "CheckResult",
    "Mistake",
    "Number",
    "Numbers",
    "Count",
    "exercise",
    "solves",
    "check",
    "solution",
    "exercises",
    "close",
    "close_each",
    "count",
    "negated",
    "read_bool",
    "read_count",
    "read_number",
    "same_items",
    "same_text",
    "text_answer",
    "yes_no",
]


@dataclass(frozen=True)
class Solution:
    """A worked solution: the ``value`` to pass to the checker and an ``explanation``.

    ``shown`` is set on the solution :func:`solution` returns after printing it, so that a notebook
    cell ending in ``solution("NN.k")`` does not display it a second time.
    """

    value: object
    explanation: str = ""
    shown: bool = field(default=False, compare=False, repr=False)

    def render(self, exercise_id: str = "", title: str = "") -> str:
        """The printed form: a heading, the explanation wrapped to 100 columns, the answer."""
        head = f"Solution {exercise_id} — {title}" if exercise_id else "Solution"
        text = textwrap.fill(self.explanation, width=100) if self.explanation else "(no explanation)"
        return f"{head}\n{text}\nanswer: {self.value!r}"

    def _ipython_display_(self) -> None:
        if not self.shown:
            print(self.render())


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
    two sentences, its checker and (once registered) its solution.

    ``reveals``: regexes (any letter case) that match a cell giving the answer away — a table that
    prints it, a sentence that states it; no cell above the exercise may match one. A regex prefixed
    ``code:`` is matched against the source of code cells only (the call that computes the answer, which
    the exercise's own markdown may name as the thing to run afterwards). ``reveals_value``:
    whether the solution value's own renderings (0.75 as "0.75", "0.750", "75%"; a string as itself)
    count too (:func:`ragworkbook.workbook.exercises.audit.value_patterns`); turn it off, with explicit
    ``reveals``, when the value is a common sight that says nothing about this exercise, or give a
    function that picks the part of the value that reveals it (``lambda v: v[1]``).

    ``expects``: for an answer that is a number, a tuple of numbers or a count, the function that gives
    its declaration (:class:`~.checking.Number`, :class:`~.checking.Numbers`, :class:`~.checking.Count`:
    the value, the decimals the task asks for, the named mistakes); the checker is built from it, and the
    tests try the solution rounded to the asked precision, a less precise one and every mistake on it.
    """

    id: str
    notebook: str
    title: str
    task: str
    checker: Callable[[object], tuple[bool, str]]
    solver: Callable[[], Solution] | None = field(default=None, repr=False)
    reveals: tuple[str, ...] = ()
    reveals_value: bool | Callable[[object], object] = True
    expects: Callable[[], Expected] | None = field(default=None, repr=False)


_EXERCISES: dict[str, Exercise] = {}


def exercise(exercise_id: str, title: str, task: str, *, reveals: Sequence[str] = (),
             reveals_value: bool | Callable[[object], object] = True) -> Callable[[Checker], Checker]:
    """Register the decorated function as the checker of ``exercise_id`` ("NN.k", NN the notebook).

    The function is either a checker (one argument, the answer, returning ``(ok, message)``) or, taking
    no argument, the declaration of a numeric answer (it returns a :class:`~.checking.Number`,
    :class:`~.checking.Numbers` or :class:`~.checking.Count`, whose ``check`` is the checker). ``reveals``
    and ``reveals_value`` say what would give the answer away (see :class:`Exercise`).
    """
    notebook, _, number = exercise_id.partition(".")
    if not (len(notebook) == 2 and notebook.isdigit() and number.isdigit()):
        raise ValueError(f"an exercise id is 'NN.k' (notebook NN, exercise k), got {exercise_id!r}")
    if isinstance(reveals, str):
        raise TypeError(f"reveals of {exercise_id} is a list of regexes, got the string {reveals!r}")

    def register(fn: Callable[..., object]) -> Callable[..., object]:
        if exercise_id in _EXERCISES:
            raise ValueError(f"exercise {exercise_id} is declared twice")
        expects: Callable[[], Expected] | None = None
        checker = fn
        if not inspect.signature(fn).parameters:
            expects = fn

            def checker(answer: object) -> tuple[bool, str]:
                return fn().check(answer)

        _EXERCISES[exercise_id] = Exercise(exercise_id, notebook, title, task, checker,
                                           reveals=tuple(reveals), reveals_value=reveals_value,
                                           expects=expects)
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


def check(exercise_id: str, answer: object) -> CheckResult:
    """Check ``answer`` for exercise ``exercise_id`` and return the verdict (it displays as one line).

    ``None`` means not answered yet: the verdict says so and how to see the worked solution.
    """
    ex = _get(exercise_id)
    if answer is None:
        return CheckResult(exercise_id, None, f'replace None with your answer; solution("{exercise_id}") '
                           "prints a worked solution")
    try:
        ok, message = ex.checker(answer)
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        ok, message = False, f"could not check this answer ({exc})"
    return CheckResult(exercise_id, bool(ok), message)


def solution(exercise_id: str, *, show: bool = True) -> Solution:
    """The worked solution of ``exercise_id``, computed by the package; printed unless ``show=False``.

    The returned :class:`Solution` holds the ``value`` (what the checker accepts) and the
    ``explanation``; after printing it does not display again as a cell's last value.
    """
    ex = _get(exercise_id)
    if ex.solver is None:
        raise ValueError(f"exercise {exercise_id} has no solution registered (add one with @solves)")
    sol = ex.solver()
    if show:
        print(sol.render(exercise_id, ex.title))
        sol = dataclasses.replace(sol, shown=True)
    return sol


def exercises(notebook: str | None = None) -> list[Exercise]:
    """Every exercise (of one notebook, "02"), in id order."""
    _load(notebook)
    out = [e for e in _EXERCISES.values() if notebook is None or e.notebook == notebook]
    return sorted(out, key=lambda e: (e.notebook, int(e.id.partition(".")[2])))
