"""Does the committed course give its exercises away? The rules the notebook tests apply.

For every exercise (declared in ``nbNN.py``), in its own notebook:

- **layout**: one markdown cell ``## Exercise NN.k — title`` that says ``solution("NN.k")`` prints a
  worked solution, then a code cell calling ``check("NN.k", ...)`` on ``None``, whose committed output is
  the single line ``NN.k: not answered yet: ...``;
- **no solution in the notebook**: no code cell calls ``solution("NN.k")``, and no committed output
  shows the verdict ``NN.k: right`` or the solution's explanation;
- **asks before it tells**: no cell source above the check cell (markdown or code), nor the check cell's
  own source, nor a markdown cell below it, matches what would reveal the answer: the exercise's
  ``reveals`` regexes (those prefixed ``code:`` only in the source of code cells) and, unless
  ``reveals_value`` is off, the renderings of the solution value (:func:`value_patterns`). An exercise
  whose value has no rendering to look for (a count, True/False) must declare ``reveals``.

And in the whole course, both directions: **no committed output shows an answer**: no output of any cell
(above the exercise, below it, in another notebook), no saved widget state and no prose of another
notebook matches an exercise's
reveal patterns: its ``reveals`` not prefixed ``code:`` everywhere; in its own notebook every rendering of
its value; in another notebook the renderings of a :func:`distinctive` value (not a simple fraction such
as 0.5 or 0.75, which every notebook prints for other reasons) at the precisions an answer is accepted in.
A lesson that must show the computation does it on other numbers, or leaves the result out of its
output.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ragworkbook._types import JSON
from ragworkbook.workbook.exercises import Exercise, Solution

__all__ = ["Leak", "value_patterns", "reveal_patterns", "course_patterns", "distinctive", "cell_text",
           "audit_notebook", "audit_outputs", "audit_course"]

_HEADING = re.compile(r"^##\s+Exercise\s+(\d\d\.\d+)\s+—\s+\S", re.MULTILINE)


@dataclass(frozen=True)
class Leak:
    """One broken rule: the ``exercise``, the ``cell`` index (-1: the notebook as a whole), the ``rule``
    and what was found."""

    exercise: str
    cell: int
    rule: str
    found: str
    notebook: str = ""

    def __str__(self) -> str:
        where = f"cell {self.cell}" if self.cell >= 0 else "widget state" if self.cell == -2 else "notebook"
        return f"{self.exercise} ({self.notebook + ' ' if self.notebook else ''}{where}): {self.rule}: " \
               f"{self.found}"


def _significant(text: str) -> int:
    digits = text.lstrip("-").replace(".", "").lstrip("0")
    return len(digits)


def value_patterns(value: object, min_decimals: int = 0) -> list[str]:
    """Regexes for the renderings of a solution value that would reveal it.

    A non-integral float: its 2-4 decimal renderings (1-4 from 10 up: 28.4 as "28.4") that keep two
    significant digits or more (0.75 as "0.75", "0.750", "0.7500"; a positive value not where a minus
    sign precedes it), its 3-4 decimal renderings with one ("0.0078" as "0.008") and, for a share in
    (0, 1), its percentages ("75%", "75.0 %"); an integral float: "1.00", "1.000", "1.0000"; a string:
    itself as a word (any case); a list or tuple: its items' patterns. An int or a bool has none: too
    common a sight to look for (declare ``reveals``). ``min_decimals``: only the renderings with at least
    that many decimals (a percentage counts two more), up to ``min_decimals`` itself when it is above 4.
    """
    if isinstance(value, bool) or isinstance(value, int):
        return []
    if isinstance(value, float):
        if math.isnan(value):
            return []
        top = max(4, min_decimals)
        places = [d for d in range(1 if abs(value) >= 10 else 2, top + 1) if d >= min_decimals]
        shown = {f"{value:.{d}f}" for d in places if d >= 2} if value.is_integer() else {
            f"{value:.{d}f}" for d in places
            if _significant(f"{value:.{d}f}") >= 2 or (d >= 3 and _significant(f"{value:.{d}f}") == 1)}
        # a positive answer is not revealed by its negative (a difference's bound -0.727 is not 0.727);
        # a hyphen after a digit is a range ("0.5-0.727") and still counts
        lead = r"(?<![\d.])" if value < 0 else r"(?<![\d.])(?<!(?<!\d)[-\u2212])"
        pats = [lead + re.escape(s) + r"(?!\d)" for s in sorted(shown)]
        if 0 < value < 1:
            pct = {f"{100 * value:.{d}f}" for d in (0, 1, 2)
                   if d + 2 >= min_decimals and _significant(f"{100 * value:.{d}f}") >= 2}
            pats += [lead + re.escape(p) + r"\s?%" for p in sorted(pct)]
        return pats
    if isinstance(value, str):
        return [r"(?<!\w)" + re.escape(value.strip()) + r"(?!\w)"] if value.strip() else []
    if isinstance(value, (list, tuple)):
        return [p for item in value for p in value_patterns(item, min_decimals)]
    return []


#: a value equal to a fraction with a denominator up to this (0.5, 0.75, 0.625) is too common a sight to
#: say anything about one exercise outside its own notebook
COMMON_DENOMINATOR = 10


def distinctive(value: float) -> bool:
    """Whether a solution value says something outside its own notebook: not whole, and not a simple
    fraction (a denominator up to :data:`COMMON_DENOMINATOR`)."""
    if value.is_integer():
        return False
    f = Fraction(value).limit_denominator(COMMON_DENOMINATOR)
    return abs(float(f) - value) > 1e-9


def course_patterns(ex: Exercise, value: object) -> list[str]:
    """What would reveal ``ex``'s answer in another notebook's output: its ``reveals`` (not ``code:``) and
    the renderings of its :func:`distinctive` values at the precisions an answer is accepted in (at least
    the decimals its task asks for, when it declares them)."""
    pats = [p for p in ex.reveals if not p.startswith("code:")]
    if not ex.reveals_value:
        return pats
    picked = ex.reveals_value(value) if callable(ex.reveals_value) else value
    items = list(picked) if isinstance(picked, (list, tuple)) else [picked]
    asked = _asked_decimals(ex, len(items))
    for item, decimals in zip(items, asked, strict=True):
        if isinstance(item, float) and distinctive(item):
            pats += value_patterns(item, decimals)
        elif isinstance(item, str):
            pats += value_patterns(item)
    return pats


def _asked_decimals(ex: Exercise, n: int) -> list[int]:
    """The decimals each of ``n`` value parts is asked to (0 where the exercise declares none)."""
    expected = ex.expects() if ex.expects is not None else None
    parts = getattr(expected, "parts", None) or ([expected] if expected is not None else [])
    decimals = [getattr(p, "decimals", 0) for p in parts]
    if callable(ex.reveals_value) and len(decimals) != n:  # a picked part: its own declaration
        picked = ex.reveals_value(tuple(range(len(decimals))))
        decimals = [decimals[i] for i in (picked if isinstance(picked, (list, tuple)) else [picked])]
    return decimals if len(decimals) == n else [0] * n


def reveal_patterns(ex: Exercise, value: object) -> list[str]:
    """Everything that would reveal ``ex``'s answer: its ``reveals`` and the value's renderings (of the
    part ``reveals_value(value)`` picks, when it is a function)."""
    if callable(ex.reveals_value):
        return list(ex.reveals) + value_patterns(ex.reveals_value(value))
    return list(ex.reveals) + (value_patterns(value) if ex.reveals_value else [])


def _output_text(output: Mapping[str, JSON]) -> str:
    if "text" in output:
        return "".join(output["text"])
    data = output.get("data", {})
    for kind in ("text/plain", "text/markdown", "text/html"):
        if kind in data:
            return "".join(data[kind])
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    return ""


def cell_text(cell: Mapping[str, JSON]) -> tuple[str, str]:
    """A cell's (source, text of its committed outputs)."""
    source = "".join(cell.get("source", ""))
    outputs = "\n".join(_output_text(o) for o in cell.get("outputs", []))
    return source, outputs


def _excerpt(text: str, m: re.Match[str]) -> str:
    a, b = max(0, m.start() - 40), min(len(text), m.end() + 40)
    return " ".join(text[a:b].split())


def _check_call(exercise_id: str) -> re.Pattern[str]:
    return re.compile(r"\bcheck\(\s*['\"]" + re.escape(exercise_id) + r"['\"]\s*,")


def _solution_call(exercise_id: str) -> re.Pattern[str]:
    return re.compile(r"\bsolution\(\s*['\"]" + re.escape(exercise_id) + r"['\"]")


def _widget_text(nb: Mapping[str, JSON]) -> str:
    """Every string of a notebook's saved widget state (what JupyterLab renders before anything runs)."""
    state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    found: list[str] = []
    skip = {"_model_module", "_view_module", "_model_name", "_view_name", "_model_module_version",
            "_view_module_version", "layout", "style"}

    def walk(x: JSON) -> None:
        if isinstance(x, str):
            found.append(x)
        elif isinstance(x, Mapping):
            for k, v in x.items():
                if k not in skip:
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(state.get("state", {}))
    return "\n".join(found)


def audit_outputs(nb: Mapping[str, JSON], exercises: Sequence[Exercise], solutions: Mapping[str, Solution],
                  name: str = "", *, own: bool = False) -> list[Leak]:
    """The outputs of notebook ``nb`` (named ``name`` in the leaks) that show the answer of one of
    ``exercises``: every committed output but an exercise's own check cell, and the saved widget state;
    in another notebook, its prose too. In the exercises' ``own`` notebook every rendering of the value
    counts (:func:`reveal_patterns`; its prose is read by the layout rules), in another one those of
    :func:`course_patterns`."""
    cells = nb["cells"]
    texts = [cell_text(c) for c in cells]
    widgets = _widget_text(nb)
    leaks: list[Leak] = []
    for ex in exercises:
        own_check = _check_call(ex.id)
        value = solutions[ex.id].value
        patterns = reveal_patterns(ex, value) if own else course_patterns(ex, value)
        for rx in [re.compile(p, re.IGNORECASE) for p in patterns if not p.startswith("code:")]:
            for i, (source, output) in enumerate(texts):
                if cells[i]["cell_type"] == "markdown":
                    if not own and (m := rx.search(source)):  # own notebook's prose: _audit_one
                        leaks.append(Leak(ex.id, i, f"shown in prose ({rx.pattern!r})", _excerpt(source, m),
                                          name))
                    continue
                if own_check.search(source):
                    continue
                if m := rx.search(output):
                    leaks.append(Leak(ex.id, i, f"shown in an output ({rx.pattern!r})", _excerpt(output, m),
                                      name))
            if m := rx.search(widgets):
                leaks.append(Leak(ex.id, -2, f"shown in the saved widget state ({rx.pattern!r})",
                                  _excerpt(widgets, m), name))
    return leaks


def audit_notebook(nb: Mapping[str, JSON], exercises: Sequence[Exercise],
                   solutions: Mapping[str, Solution], name: str = "") -> list[Leak]:
    """Every rule of the module docstring that notebook ``nb`` (its JSON) breaks for ``exercises``
    (those of the notebook), given their ``solutions``: the layout, nothing above that tells, no output
    anywhere in it that shows an answer. Empty when the notebook asks before it tells."""
    cells = nb["cells"]
    texts = [cell_text(c) for c in cells]
    leaks: list[Leak] = []
    declared = {e.id for e in exercises}
    for i, c in enumerate(cells):
        if c["cell_type"] == "markdown":
            for m in _HEADING.finditer(texts[i][0]):
                if m.group(1) not in declared:
                    leaks.append(Leak(m.group(1), i, "layout", "an exercise heading, no exercise declared",
                                      name))
    for ex in exercises:
        leaks += [Leak(x.exercise, x.cell, x.rule, x.found, name)
                  for x in _audit_one(ex, solutions[ex.id], cells, texts)]
    return leaks + audit_outputs(nb, exercises, solutions, name, own=True)


def audit_course(notebooks: Mapping[str, Mapping[str, JSON]], exercises: Sequence[Exercise],
                 solutions: Mapping[str, Solution]) -> list[Leak]:
    """Every rule broken in the course: ``notebooks`` maps a notebook's name ("02", "A1") to its JSON;
    each is audited for its own exercises (:func:`audit_notebook`) and its outputs for every other
    notebook's (:func:`audit_outputs`)."""
    leaks: list[Leak] = []
    for name, nb in notebooks.items():
        own = [e for e in exercises if e.notebook == name]
        others = [e for e in exercises if e.notebook != name]
        leaks += audit_notebook(nb, own, solutions, name) + audit_outputs(nb, others, solutions, name)
    return leaks


def _audit_one(ex: Exercise, sol: Solution, cells: Sequence[Mapping[str, JSON]],
               texts: Sequence[tuple[str, str]]) -> Iterable[Leak]:
    heading = re.compile(r"^##\s+Exercise\s+" + re.escape(ex.id) + r"\s+—\s+\S", re.MULTILINE)
    heads = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and heading.search(texts[i][0])]
    if len(heads) != 1:
        yield Leak(ex.id, -1, "layout", f"{len(heads)} markdown cells '## Exercise {ex.id} — title' (want 1)")
        return
    head = heads[0]
    if not _solution_call(ex.id).search(texts[head][0]):
        yield Leak(ex.id, head, "layout", f"the exercise's markdown does not say that solution({ex.id!r}) "
                                          "prints a worked solution")
    call = _check_call(ex.id)
    checks = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and call.search(texts[i][0])]
    if not checks or checks[0] < head:
        yield Leak(ex.id, head, "layout", f"no code cell calling check({ex.id!r}, ...) after the heading")
        return
    at = checks[0]
    if not re.search(r"=\s*None\b", texts[at][0]):
        yield Leak(ex.id, at, "layout", "the check cell does not check an answer left as None")
    outputs = texts[at][1].strip()
    if not (outputs.startswith(f"{ex.id}: not answered yet: ") and "\n" not in outputs):
        yield Leak(ex.id, at, "layout", f"the check cell's output is not one line '{ex.id}: not answered "
                                        f"yet: ...': {outputs[:80]!r}")
    explanation = " ".join(sol.explanation.split())[:60]
    solution_call = _solution_call(ex.id)
    for i, c in enumerate(cells):
        source, output = texts[i]
        if c["cell_type"] == "code" and (m := solution_call.search(source)):
            yield Leak(ex.id, i, "solution in the notebook", _excerpt(source, m))
        if f"{ex.id}: right" in output:
            yield Leak(ex.id, i, "verdict shown", f"'{ex.id}: right' in a committed output")
        if len(explanation) >= 30 and explanation in " ".join(output.split()):
            yield Leak(ex.id, i, "solution shown", f"the solution's explanation in an output: "
                                                   f"{explanation!r}")
    for pattern in reveal_patterns(ex, sol.value):  # outputs: audit_outputs, above and below
        code_only = pattern.startswith("code:")
        rx = re.compile(pattern.removeprefix("code:"), re.IGNORECASE)
        for i in range(len(cells)):
            below = i > at
            if (code_only and cells[i]["cell_type"] != "code") or (below and (
                    code_only or cells[i]["cell_type"] != "markdown")):
                continue
            if m := rx.search(texts[i][0]):
                where = "told in prose below" if below else "answered above"
                yield Leak(ex.id, i, f"{where} (source matches {pattern!r})", _excerpt(texts[i][0], m))
