"""The README and the documentation pages a learner reads beside the course give no exercise's answer: each
page is read as prose, against every exercise's reveal patterns (the rules of
``ragworkbook.workbook.exercises.audit`` for another notebook's prose)."""

from __future__ import annotations

from functools import cache

import pytest

from ragworkbook.paths import repo_root
from ragworkbook.workbook.exercises import exercises, solution
from ragworkbook.workbook.exercises.audit import audit_outputs

#: exercises whose solution loads a model are read by the notebooks' own ``model`` test
MODEL_EXERCISES = {"04.2", "06.1", "08.2", "08.3"}
#: exercises a page documents on purpose, with the reason
DOCUMENTED = {"15.2": "the README's reference lists the reasons a metric is undefined (incomplete_relevance "
                      "among them); the exercise asks which metrics a keyword leaves defined, by reasoning"}
PAGES = [p for p in [repo_root() / "README.md", *sorted((repo_root() / "docs").glob("*.md"))] if p.exists()]


@cache
def _solutions():
    return {e.id: solution(e.id, show=False) for e in exercises() if e.id not in MODEL_EXERCISES}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_page_gives_no_answer_away(page):
    cells = [{"cell_type": "markdown", "source": page.read_text(encoding="utf-8")}]
    others = [e for e in exercises() if e.id not in MODEL_EXERCISES and e.id not in DOCUMENTED]
    leaks = audit_outputs({"cells": cells}, others, _solutions(), page.name)
    assert not leaks, "\n".join(map(str, leaks))
