"""How long a notebook takes to read, and what its opening promises.

The count (one convention for the whole course, so that every notebook's stated time means the same):

- **prose**: the words of the markdown cells at 180 words a minute (a word is a run of characters between
  spaces holding a letter or a digit; an embedded image, an HTML tag and a URL are not words);
- **code**: the non-blank lines of the code cells at 12 lines a minute;
- **output**: the lines a learner reads in the committed outputs at 40 lines a minute: printed text, the
  plain-text form of a displayed value (a table's rows), an error's traceback; a figure or a widget counts
  no lines (a widget's plain text is its repr, not what the learner sees).

A lesson states its time in its opening as "**Time:** about N minutes", N being the count rounded up to the
next multiple of 5 (:func:`stated_minutes`). The opening is the first markdown cell; it says what the learner
will do and learn and what it needs (:data:`OPENING_PARTS`), and a picture follows it within the first
:data:`PICTURE_WITHIN` cells (:func:`has_opening_picture`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ragworkbook._types import JSON, JSONObject

__all__ = ["WORDS_PER_MINUTE", "CODE_LINES_PER_MINUTE", "OUTPUT_LINES_PER_MINUTE", "OPENING_PARTS",
           "PICTURE_WITHIN", "ReadingTime", "reading_time", "stated_minutes", "opening_minutes",
           "missing_opening_parts", "has_opening_picture", "figure_count", "load_notebook"]

WORDS_PER_MINUTE = 180
CODE_LINES_PER_MINUTE = 12
OUTPUT_LINES_PER_MINUTE = 40
#: what a lesson's opening says, as the bold labels that start its lines
OPENING_PARTS = ("You will do", "You will learn", "You need", "Time")
#: the opening picture stands in one of the first cells (the opening itself counts as the first)
PICTURE_WITHIN = 3

_IMAGE_MD = re.compile(r"!\[[^\]]*\]\([^)]*\)|<img\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_URL = re.compile(r"\bhttps?://\S+")
_WORD = re.compile(r"[A-Za-z0-9]")
_TIME = re.compile(r"\*\*Time:?\*\*:?\s*about\s+(\d+)\s+minutes", re.IGNORECASE)
_IMAGE_KINDS = ("image/png", "image/svg+xml", "image/jpeg")
_WIDGET = "application/vnd.jupyter.widget-view+json"


@dataclass(frozen=True)
class ReadingTime:
    """A notebook's reading count: ``words`` of prose, ``code_lines``, ``output_lines``; ``minutes`` is
    words / 180 + code lines / 12 + output lines / 40."""

    words: int
    code_lines: int
    output_lines: int

    @property
    def minutes(self) -> float:
        return (self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE
                + self.output_lines / OUTPUT_LINES_PER_MINUTE)

    def __str__(self) -> str:
        return (f"{self.minutes:5.1f} min ({self.words} words, {self.code_lines} code lines, "
                f"{self.output_lines} output lines)")


def _source(cell: Mapping[str, JSON]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _text(value: JSON) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def prose_words(markdown: str) -> int:
    """The words of a markdown text: images, HTML tags and URLs taken out, then every run between spaces
    that holds a letter or a digit (a formula's symbols are read, its punctuation is not)."""
    text = _URL.sub(" ", _TAG.sub(" ", _IMAGE_MD.sub(" ", markdown)))
    return sum(1 for w in text.split() if _WORD.search(w))


def _output_lines(output: Mapping[str, JSON]) -> int:
    kind = output.get("output_type")
    if kind == "stream":
        return len(_text(output.get("text", "")).rstrip("\n").splitlines())
    if kind == "error":
        return len(output.get("traceback", []))
    data = output.get("data", {})
    if _WIDGET in data or any(k in data for k in _IMAGE_KINDS):
        return 0
    if "text/plain" in data:
        return len(_text(data["text/plain"]).rstrip("\n").splitlines())
    if "text/markdown" in data:
        return len(_text(data["text/markdown"]).rstrip("\n").splitlines())
    return 0


def reading_time(nb: Mapping[str, JSON]) -> ReadingTime:
    """The reading count of a notebook (its JSON): see the module docstring for what counts."""
    words = code = out = 0
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            words += prose_words(_source(cell))
        elif cell["cell_type"] == "code":
            code += sum(1 for line in _source(cell).splitlines() if line.strip())
            out += sum(_output_lines(o) for o in cell.get("outputs", []))
    return ReadingTime(words, code, out)


def stated_minutes(minutes: float) -> int:
    """The time a lesson states for a count of ``minutes``: rounded up to the next multiple of 5."""
    return max(5, 5 * math.ceil(minutes / 5 - 1e-9))


def _opening(nb: Mapping[str, JSON]) -> str:
    first = next((c for c in nb["cells"] if c["cell_type"] == "markdown"), None)
    return _source(first) if first is not None else ""


def opening_minutes(nb: Mapping[str, JSON]) -> int | None:
    """The minutes the opening states ("**Time:** about 25 minutes"), or None."""
    m = _TIME.search(_opening(nb))
    return int(m.group(1)) if m else None


def missing_opening_parts(nb: Mapping[str, JSON]) -> list[str]:
    """The parts of :data:`OPENING_PARTS` the opening does not state as a bold label ("**You need:**")."""
    text = _opening(nb)
    return [p for p in OPENING_PARTS
            if not re.search(r"\*\*" + re.escape(p) + r":?\*\*", text, re.IGNORECASE)]


def _has_picture(cell: Mapping[str, JSON]) -> bool:
    if cell["cell_type"] == "markdown":
        return bool(_IMAGE_MD.search(_source(cell)))
    return any(k in o.get("data", {}) for o in cell.get("outputs", []) for k in _IMAGE_KINDS)


def has_opening_picture(nb: Mapping[str, JSON]) -> bool:
    """Whether one of the first :data:`PICTURE_WITHIN` cells holds a picture: an image in markdown (a file,
    an attachment) or a figure a code cell drew."""
    return any(_has_picture(c) for c in nb["cells"][:PICTURE_WITHIN])


def figure_count(nb: Mapping[str, JSON]) -> int:
    """How many figures the code cells draw (image outputs)."""
    return sum(1 for c in nb["cells"] if c["cell_type"] == "code"
               for o in c.get("outputs", []) if any(k in o.get("data", {}) for k in _IMAGE_KINDS))


def load_notebook(path: str | Path) -> JSONObject:
    """A notebook's JSON."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def main() -> None:  # pragma: no cover - a report for authors: python -m ragworkbook.workbook.reading_time
    from ragworkbook.paths import repo_root

    total = 0.0
    for path in sorted((repo_root() / "notebooks").glob("*.ipynb")):
        t = reading_time(load_notebook(path))
        lesson = path.name[:2].isdigit()
        total += t.minutes if lesson else 0.0
        print(f"{path.name[:40]:40s} {t}" + ("" if lesson else "  (appendix, not in the total)"))
    print(f"{'course total':40s} {total:5.1f} min ({total / 60:.1f} h)")


if __name__ == "__main__":  # pragma: no cover
    main()
