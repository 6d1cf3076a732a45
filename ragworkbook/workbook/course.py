"""The course as notebook 00 shows it: every lesson with its title, the minutes its opening states, and
whether it is on the core path; the appendices beside it (reference, not in the course total)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ragworkbook.workbook.reading_time import opening_minutes

__all__ = ["CORE_PATH", "Lesson", "lessons"]

#: the lessons a learner who wants the whole of RAG evaluation in the least time reads, in order: the
#: retrieval metrics and their ground truth, the answer metrics, the pipeline, the judged metrics, how far
#: to trust the judge, the end-to-end report
CORE_PATH = ("01", "02", "03", "04", "05", "06", "07", "09", "11", "12")


@dataclass(frozen=True)
class Lesson:
    """One notebook: ``number`` ("02", "A1"), ``title`` (its first heading, less the number), the
    ``minutes`` its opening states (None: none stated), ``core`` (on :data:`CORE_PATH`) and ``file``."""

    number: str
    title: str
    minutes: int | None
    core: bool
    file: str


def lessons(folder: str | Path = ".") -> list[Lesson]:
    """The notebooks of ``folder`` (``NN_*.ipynb`` lessons, then ``AN_*.ipynb`` appendices) as lessons."""
    out = []
    paths = sorted(Path(folder).glob("[0-9][0-9]_*.ipynb")) + sorted(Path(folder).glob("A[0-9]_*.ipynb"))
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        first = next((c for c in nb["cells"] if c["cell_type"] == "markdown"), None)
        line = "".join(first["source"]).splitlines()[0] if first else ""
        title = re.sub(r"^#+\s*\S+\s*·\s*", "", line).strip() or "(no title)"
        number = path.name.split("_")[0]
        out.append(Lesson(number, title, opening_minutes(nb), number in CORE_PATH, path.name))
    return out
