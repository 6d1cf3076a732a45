"""Does a committed notebook give its exercises away? The rules the notebook test applies.

For every exercise of a notebook (declared in ``nbNN.py``):

- **layout**: one markdown cell ``## Exercise NN.k — title`` that says ``solution("NN.k")`` prints a
  worked solution, then a code cell calling ``check("NN.k", ...)`` on ``None``, whose committed output is
  the single line ``NN.k: not answered yet: ...``;
- **no solution in the notebook**: no code cell calls ``solution("NN.k")``, and no committed output
  shows the verdict ``NN.k: right`` or the solution's explanation;
- **asks before it tells**: no cell above the check cell (markdown, code or output), nor the check cell's
  own source, matches what would reveal the answer: the exercise's ``reveals`` regexes (those prefixed
  ``code:`` only in the source of code cells) and, unless ``reveals_value`` is off, the renderings of the
  solution value (:func:`value_patterns`). An exercise
  whose value has no rendering to look for (a count, True/False) must declare ``reveals``.

Cells *below* an exercise may print its answer: that is the "predict, then run the next cell" order the
exercises are written for. Saved widget state (not a cell output) is not read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragworkbook.workbook.exercises import Exercise, Solution

__all__ = ["Leak", "value_patterns", "reveal_patterns", "cell_text", "audit_notebook"]

_HEADING = re.compile(r"^##\s+Exercise\s+(\d\d\.\d+)\s+—\s+\S", re.MULTILINE)


@dataclass(frozen=True)
class Leak:
    """One broken rule: the ``exercise``, the ``cell`` index (-1: the notebook as a whole), the ``rule``
    and what was found."""

    exercise: str
    cell: int
    rule: str
    found: str

    def __str__(self) -> str:
        where = f"cell {self.cell}" if self.cell >= 0 else "notebook"
        return f"{self.exercise} ({where}): {self.rule}: {self.found}"


def _significant(text: str) -> int:
    digits = text.lstrip("-").replace(".", "").lstrip("0")
    return len(digits)


def value_patterns(value: Any) -> list[str]:
    """Regexes for the renderings of a solution value that would reveal it.

    A non-integral float: its 2-4 decimal renderings (1-4 from 10 up: 28.4 as "28.4") that keep two
    significant digits or more (0.75 as "0.75", "0.750", "0.7500"; a positive value not where a minus
    sign precedes it) and, for a share in (0, 1), its percentages ("75%", "75.0 %"); an integral float:
    "1.00", "1.000", "1.0000"; a string: itself as a word (any case); a list or tuple: its items'
    patterns. An int or a bool has none: too common a sight to look for (declare ``reveals``).
    """
    if isinstance(value, bool) or isinstance(value, int):
        return []
    if isinstance(value, float):
        if math.isnan(value):
            return []
        places = (1, 2, 3, 4) if abs(value) >= 10 else (2, 3, 4)
        shown = {f"{value:.{d}f}" for d in (2, 3, 4)} if value.is_integer() else {
            f"{value:.{d}f}" for d in places if _significant(f"{value:.{d}f}") >= 2}
        # a positive answer is not revealed by its negative (a difference's bound -0.727 is not 0.727);
        # a hyphen after a digit is a range ("0.5-0.727") and still counts
        lead = r"(?<![\d.])" if value < 0 else r"(?<![\d.])(?<!(?<!\d)[-\u2212])"
        pats = [lead + re.escape(s) + r"(?!\d)" for s in sorted(shown)]
        if 0 < value < 1:
            pct = {f"{100 * value:.{d}f}" for d in (0, 1, 2) if _significant(f"{100 * value:.{d}f}") >= 2}
            pats += [lead + re.escape(p) + r"\s?%" for p in sorted(pct)]
        return pats
    if isinstance(value, str):
        return [r"(?<!\w)" + re.escape(value.strip()) + r"(?!\w)"] if value.strip() else []
    if isinstance(value, (list, tuple)):
        return [p for item in value for p in value_patterns(item)]
    return []


def reveal_patterns(ex: Exercise, value: Any) -> list[str]:
    """Everything that would reveal ``ex``'s answer: its ``reveals`` and the value's renderings (of the
    part ``reveals_value(value)`` picks, when it is a function)."""
    if callable(ex.reveals_value):
        return list(ex.reveals) + value_patterns(ex.reveals_value(value))
    return list(ex.reveals) + (value_patterns(value) if ex.reveals_value else [])


def _output_text(output: Mapping[str, Any]) -> str:
    if "text" in output:
        return "".join(output["text"])
    data = output.get("data", {})
    for kind in ("text/plain", "text/markdown", "text/html"):
        if kind in data:
            return "".join(data[kind])
    if output.get("output_type") == "error":
        return "\n".join(output.get("traceback", []))
    return ""


def cell_text(cell: Mapping[str, Any]) -> tuple[str, str]:
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


def audit_notebook(nb: Mapping[str, Any], exercises: Sequence[Exercise],
                   solutions: Mapping[str, Solution]) -> list[Leak]:
    """Every rule of the module docstring that notebook ``nb`` (its JSON) breaks for ``exercises``
    (those of the notebook), given their ``solutions``. Empty when the notebook asks before it tells."""
    cells = nb["cells"]
    texts = [cell_text(c) for c in cells]
    leaks: list[Leak] = []
    declared = {e.id for e in exercises}
    for i, c in enumerate(cells):
        if c["cell_type"] == "markdown":
            for m in _HEADING.finditer(texts[i][0]):
                if m.group(1) not in declared:
                    leaks.append(Leak(m.group(1), i, "layout", "an exercise heading, no exercise declared"))
    for ex in exercises:
        leaks += _audit_one(ex, solutions[ex.id], cells, texts)
    return leaks


def _audit_one(ex: Exercise, sol: Solution, cells: Sequence[Mapping[str, Any]],
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
    for pattern in reveal_patterns(ex, sol.value):
        code_only = pattern.startswith("code:")
        rx = re.compile(pattern.removeprefix("code:"), re.IGNORECASE)
        for i in range(at + 1):
            for part, text in zip(("source", "output"), texts[i], strict=True):
                if (i == at and part == "output") or (code_only and (part == "output"
                                                                     or cells[i]["cell_type"] != "code")):
                    continue
                if m := rx.search(text):
                    yield Leak(ex.id, i, f"answered above ({part} matches {pattern!r})", _excerpt(text, m))
