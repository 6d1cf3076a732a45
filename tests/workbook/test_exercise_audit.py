"""The notebook audit catches each way a notebook can give an exercise away (synthetic notebooks)."""

from __future__ import annotations

import re

import pytest

from ragworkbook.workbook.exercises import Exercise, Solution
from ragworkbook.workbook.exercises.audit import (
    audit_course,
    audit_notebook,
    course_patterns,
    distinctive,
    value_patterns,
)
from ragworkbook.workbook.exercises.checking import Number

EX = Exercise("01.9", "01", "A share", "Predict it.", lambda a: (True, ""),
              reveals=(r"code:precision_at_k\(", r"three quarters"))
SOL = Solution(0.75, "Three of the four chunks are relevant, so the share is three quarters.")


def md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def code(text, out=None):
    outputs = [] if out is None else [{"output_type": "stream", "name": "stdout", "text": out}]
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": outputs, "execution_count": 1}


HEAD = md('## Exercise 01.9 — a share\n\nPredict it. `solution("01.9")` prints a worked solution.')
CHECK = code('from ragworkbook.workbook.exercises import check, solution\n\nmy_share = None  # e.g. 0.5\n'
             'check("01.9", my_share)',
             '01.9: not answered yet: replace None with your answer; solution("01.9") prints a worked '
             'solution')


def leaks(*cells):
    return audit_notebook({"cells": list(cells)}, [EX], {EX.id: SOL})


def test_a_notebook_that_asks_before_it_tells_passes():
    below = code("print(precision_at_k(r, g, 4))", "0.500")  # below, the computation on other numbers
    assert leaks(md("# 01"), code("x = 1", "1"), HEAD, CHECK, below) == []


@pytest.mark.parametrize("out", ["0.750", "P@4 = 75%", "three quarters"])
def test_an_output_below_the_exercise_that_shows_the_answer_is_caught(out):
    found = leaks(HEAD, CHECK, code("print(precision_at_k(r, g, 4))", out))
    assert [x.rule.split(" (")[0] for x in found] == ["shown in an output"], [str(x) for x in found]


def test_another_notebooks_output_prose_and_widget_state_are_read():
    other = {"cells": [code("print(p)", "P@4 is three quarters"), md("It is three quarters.")],
             "metadata": {"widgets": {"application/vnd.jupyter.widget-state+json": {"state": {"m1": {
                 "model_name": "HTMLModel", "state": {"value": "<b>three quarters</b>"}}}}}}}
    found = audit_course({"01": {"cells": [HEAD, CHECK]}, "02": other}, [EX], {EX.id: SOL})
    assert sorted((x.notebook, x.cell) for x in found) == [("02", -2), ("02", 0), ("02", 1)], [
        str(x) for x in found]
    assert any(str(x).startswith("01.9 (02 cell 0): shown in an output") for x in found)


def test_in_another_notebook_a_common_value_says_nothing_a_distinctive_one_does():
    assert not distinctive(0.75) and not distinctive(0.625) and not distinctive(2.0)
    assert distinctive(9 / 14) and distinctive(0.0078125) and distinctive(0.98846)
    other = {"cells": [code("print(x)", "recall 0.750, ROUGE-2 0.6429, NDCG 0.99")]}
    rouge = Exercise("05.9", "05", "t", "to 4 decimals", lambda a: (True, ""))
    found = audit_course({"01": {"cells": [HEAD, CHECK]}, "02": other}, [EX, rouge],
                         {EX.id: SOL, rouge.id: Solution(9 / 14, "nine of fourteen")})
    assert [(x.exercise, x.notebook) for x in found if x.notebook == "02"] == [("05.9", "02")]


def test_the_precision_asked_sets_what_reveals_it_elsewhere():
    ndcg = Exercise("02.9", "02", "t", "to 3 decimals", lambda a: (True, ""),
                    expects=lambda: Number(0.98846, 3, "NDCG"))
    pats = course_patterns(ndcg, 0.98846)
    assert any(re.search(p, "0.988") for p in pats) and not any(re.search(p, "it is 0.99") for p in pats)


@pytest.mark.parametrize("cells,rule", [
    ((code("print(p)", "P@4 = 0.750"), HEAD, CHECK), "shown in an output"),     # the value printed above
    ((code("p = 0.75"), HEAD, CHECK), "answered above (source"),                  # ... or typed above
    ((md("The share is 75%."), HEAD, CHECK), "answered above (source"),           # ... or stated in the prose
    ((code("precision_at_k(r, g, 4)"), HEAD, CHECK), "answered above (source"),   # the call that computes it
    ((md("It is three quarters."), HEAD, CHECK), "answered above (source"),      # a declared sentence
    ((HEAD, CHECK, code('solution("01.9")')), "solution in the notebook"),       # a solution cell, even below
    ((HEAD, CHECK, code("print(check('01.9', s))", "01.9: right: ok")), "verdict shown"),
    ((HEAD, CHECK, code("print(why)", SOL.explanation)), "solution shown"),
    ((md("## Exercise 01.9 — a share\n\nPredict it."), CHECK), "layout"),        # never says solution(...)
    ((HEAD, code('check("01.9", 0.5)', "01.9: not yet: too low")), "layout"),    # not left as None
    ((HEAD,), "layout"),                                                          # no check cell
    ((HEAD, CHECK, md("## Exercise 01.8 — stray")), "layout"),                    # a heading nobody declares
])
def test_each_way_of_giving_it_away_is_caught(cells, rule):
    found = leaks(*cells)
    assert any(leak.rule.startswith(rule) for leak in found), [str(x) for x in found]


def test_a_code_only_reveal_ignores_prose_and_outputs():
    prose = md("Then run `precision_at_k(r, g, 4)` and compare.")
    shown = code("print('x')", "precision_at_k( is in an output")
    assert leaks(prose, shown, HEAD, CHECK) == []


def test_the_check_cells_own_example_counts():
    cell = code('my_share = None  # e.g. 0.75\ncheck("01.9", my_share)', CHECK["outputs"][0]["text"])
    assert any("answered above" in leak.rule for leak in leaks(HEAD, cell))


def test_value_patterns():
    assert value_patterns(4) == [] and value_patterns(True) == []
    pats = value_patterns(0.75)
    for shown in ("0.75", "0.750", "0.7500", "75%", "75.0 %"):
        assert any(re.search(p, f"it is {shown}.") for p in pats), shown
    lead = r"(?<![\d.])(?<!(?<!\d)[-\u2212])"
    assert value_patterns(0.0078) == [lead + r"0\.0078(?!\d)", lead + r"0\.008(?!\d)", lead + r"0\.78\s?%"]
    # a positive answer is not found in its negative (a difference's bound), but is in a range
    assert not any(re.search(p, "[-0.727, -0.42]") for p in value_patterns(0.7273))
    assert any(re.search(p, "between 0.5-0.727") for p in value_patterns(0.7273))
    assert any(re.search(p, "a change of -0.727") for p in value_patterns(-0.7273))
    assert value_patterns(["Pdrop"]) == [r"(?<!\w)Pdrop(?!\w)"]
    assert not re.search(pats[0], "10.75") and not re.search(pats[0], "0.7512")
