"""Every committed notebook asks its exercises before it tells: no solution cell, no verdict "right" in
an output, and nothing above an exercise that gives its answer away (rules in
``ragworkbook.workbook.exercises.audit``)."""

from __future__ import annotations

import json
from functools import cache

import pytest

from ragworkbook.paths import repo_root
from ragworkbook.workbook.exercises import Exercise, Solution, exercises, solution
from ragworkbook.workbook.exercises.audit import audit_notebook, reveal_patterns

NOTEBOOKS = {p.name[:2]: p for p in sorted((repo_root() / "notebooks").glob("[0-9][0-9]_*.ipynb"))}
#: notebooks whose exercises are reworked on another branch this session (11: JUDGE, 13: CONCEPTS): their
#: audit is expected to fail until then, and a strict xfail says when it passes (remove them here then)
PENDING: set[str] = set()
#: notebooks whose solutions load a model (MiniLM): their audit is marked ``model``
NEEDS_MODEL = {"04", "06", "08"}


@cache
def _solution(exercise_id: str) -> Solution:
    return solution(exercise_id, show=False)


def _params():
    for nb in NOTEBOOKS:
        marks = [pytest.mark.model] * (nb in NEEDS_MODEL)
        if nb in PENDING:
            marks.append(pytest.mark.xfail(strict=True, reason=f"notebook {nb}'s exercises are reworked on "
                                                                "another branch"))
        yield pytest.param(nb, id=nb, marks=marks)


@pytest.mark.parametrize("nb", list(_params()))
def test_the_notebook_asks_before_it_tells(nb):
    declared = exercises(nb)
    notebook = json.loads(NOTEBOOKS[nb].read_text(encoding="utf-8"))
    leaks = audit_notebook(notebook, declared, {e.id: _solution(e.id) for e in declared})
    assert not leaks, "\n".join(map(str, leaks))


@pytest.mark.parametrize("ex", [pytest.param(e, id=e.id) for e in exercises()])
def test_every_exercise_says_what_would_reveal_it(ex: Exercise):
    """A value with no rendering to look for (a count, True/False) needs explicit ``reveals``."""
    if ex.reveals:
        return
    if ex.notebook in NEEDS_MODEL or ex.notebook in PENDING:
        pytest.skip("its solution needs a model or is reworked elsewhere; its notebook's audit covers it")
    assert reveal_patterns(ex, _solution(ex.id).value), (
        f"{ex.id}: declare reveals=[...]: its value {_solution(ex.id).value!r} has no rendering to look for")


def test_every_exercise_is_in_its_notebook():
    missing = [e.id for e in exercises() if e.notebook not in NOTEBOOKS]
    assert not missing, f"exercises of notebooks that do not exist: {missing}"
