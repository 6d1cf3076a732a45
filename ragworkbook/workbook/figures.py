"""The pictures the lessons open with and draw: a ranking as a row of chunks, the course map, chunk windows
over a page, the n-grams two sentences share, a token-similarity matrix, a pipeline as a row of steps, the
RAG triad, a funnel of counts, a table of counts (a confusion matrix, two annotators' cross-table) and
estimates with their intervals.

Each function draws one matplotlib figure from values the caller computed with the package, and returns
it (a notebook shows it with ``plt.show()``); nothing here computes a metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

__all__ = ["draw_ranking", "draw_course_map", "draw_windows", "draw_ngram_matches", "draw_similarity",
           "draw_flow", "draw_triad", "draw_funnel", "draw_counts", "draw_intervals"]

#: colours by grade 0..3 (0: not relevant), and for the two kinds of lesson in the course map
_GRADE = ["#d9d9d9", "#c7e9c0", "#74c476", "#238b45"]
_CORE, _OPTIONAL = "#3182bd", "#bdd7e7"


def _plt() -> ModuleType:
    import matplotlib.pyplot as plt  # a heavy import, only when a figure is drawn

    return plt


def draw_ranking(ranking: Sequence[str], relevance: Mapping[str, float], cutoffs: Sequence[int] = (),
                 missing: Sequence[str] = (), title: str = "", labels: Sequence[str] | None = None,
                 ranks: Sequence[int] | None = None) -> Figure:
    """A ranking as a row of boxes, rank 1 on the left, shaded by grade (grey: not relevant); a dashed
    line after each of the ``cutoffs``; the relevant documents never retrieved (``missing``) to the right.
    ``ranks``: the rank to print under each box, when the row skips some (1, 2, 3, 16)."""
    plt = _plt()
    n = len(ranking) + len(missing)
    fig, ax = plt.subplots(figsize=(min(1.7 * n + 1, 11), 1.9))
    names = list(labels) if labels is not None else list(ranking)
    for i, doc in enumerate(ranking):
        grade = int(relevance.get(doc, 0))
        ax.add_patch(plt.Rectangle((i + 0.05, 0), 0.9, 1, color=_GRADE[min(grade, 3)]))
        ax.text(i + 0.5, 0.62, names[i].replace("-", "-\n", 1) if len(names[i]) > 12 else names[i],
                ha="center", va="center", fontsize=8)
        ax.text(i + 0.5, 0.15, f"grade {grade}" if grade > 1 or max(relevance.values(), default=0) > 1
                else ("relevant" if grade else "not relevant"), ha="center", va="center", fontsize=7)
        rank = ranks[i] if ranks is not None else i + 1
        ax.text(i + 0.5, -0.18, f"rank {rank}", ha="center", va="top", fontsize=8, color="#555")
    for j, doc in enumerate(missing):
        x = len(ranking) + 0.4 + j
        ax.add_patch(plt.Rectangle((x + 0.05, 0), 0.9, 1, fill=False, ls=":", ec=_GRADE[2], lw=1.5))
        ax.text(x + 0.5, 0.62, doc, ha="center", va="center", fontsize=8)
        ax.text(x + 0.5, 0.15, "never\nretrieved", ha="center", va="center", fontsize=7)
    for k in cutoffs:
        ax.axvline(k, ls="--", color="#d62728", lw=1.2)
        ax.text(k, 1.08, f"k = {k}", ha="center", fontsize=8, color="#d62728")
    ax.set_xlim(-0.1, n + 0.5)
    ax.set_ylim(-0.45, 1.3)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def draw_course_map(lessons: Sequence[tuple[str, str, int | None, bool]]) -> Figure:
    """The course as a grid of boxes, one a lesson (number, short title, stated minutes, core path or
    not), core lessons dark, the others light."""
    plt = _plt()
    cols = 5
    rows = (len(lessons) + cols - 1) // cols
    fig, ax = plt.subplots(figsize=(11, 1.25 * rows + 0.5))
    for i, (number, title, minutes, core) in enumerate(lessons):
        x, y = i % cols, rows - 1 - i // cols
        ax.add_patch(plt.Rectangle((x * 2.2, y * 1.25), 2.0, 1.05, color=_CORE if core else _OPTIONAL))
        colour = "white" if core else "#222"
        ax.text(x * 2.2 + 0.1, y * 1.25 + 0.82, number, fontsize=11, weight="bold", color=colour, va="center")
        ax.text(x * 2.2 + 1.9, y * 1.25 + 0.82, f"{minutes} min" if minutes else "", fontsize=8,
                color=colour, ha="right", va="center")
        short = title if len(title) <= 30 else title[:28].rsplit(" ", 1)[0] + " …"
        words, line, lines = short.split(), "", []
        for w in words:
            if len(line) + len(w) > 17 and line:
                lines.append(line)
                line = w
            else:
                line = f"{line} {w}".strip()
        lines.append(line)
        ax.text(x * 2.2 + 0.1, y * 1.25 + 0.35, "\n".join(lines[:2]), fontsize=8, color=colour, va="center")
    ax.set_xlim(-0.1, cols * 2.2)
    ax.set_ylim(-0.6, rows * 1.25)
    ax.axis("off")
    ax.add_patch(plt.Rectangle((0, -0.5), 0.3, 0.3, color=_CORE))
    ax.text(0.4, -0.35, "core path", fontsize=8, va="center")
    ax.add_patch(plt.Rectangle((2.2, -0.5), 0.3, 0.3, color=_OPTIONAL))
    ax.text(2.6, -0.35, "optional: read when you need it", fontsize=8, va="center")
    fig.tight_layout()
    return fig


def draw_windows(length: int, windows: Sequence[tuple[int, int]], marks: Sequence[tuple[int, int, str]] = (),
                 title: str = "") -> Figure:
    """Chunk ``windows`` ((start, end) offsets) over a page of ``length`` characters, one bar a window,
    stacked so that overlaps show; ``marks`` are (start, end, label) spans of the page (a keyword)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(10, 0.45 * len(windows) + 1.1))
    ax.add_patch(plt.Rectangle((0, len(windows)), length, 0.6, color="#bdbdbd"))
    ax.text(length / 2, len(windows) + 0.3, f"page text ({length} characters)", ha="center", va="center",
            fontsize=8)
    for i, (start, end) in enumerate(windows):
        y = len(windows) - 1 - i
        ax.add_patch(plt.Rectangle((start, y + 0.1), end - start, 0.7, color=_CORE, alpha=0.75))
        ax.text(start + 8, y + 0.45, f"window {i + 1}: {start}-{end}", va="center", fontsize=7, color="white")
    for start, end, label in marks:
        ax.axvspan(start, end, color="#d62728", alpha=0.6)
        ax.text(end + 6, len(windows) + 0.3, label, va="center", fontsize=8, color="#d62728")
    ax.set_xlim(0, length * 1.02)
    ax.set_ylim(0, len(windows) + 0.7)
    ax.set_yticks([])
    ax.set_xlabel("character offset in the page")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def draw_ngram_matches(candidate: Sequence[str], reference: Sequence[str], n: int = 2,
                       title: str = "") -> Figure:
    """The ``candidate``'s tokens in a row above the ``reference``'s, each n-gram of the candidate that the
    reference also holds drawn as a green bar under its tokens (red: not in the reference)."""
    plt = _plt()
    ref_grams = {tuple(reference[i:i + n]) for i in range(len(reference) - n + 1)}
    width = max(len(candidate), len(reference))
    fig, ax = plt.subplots(figsize=(min(0.62 * width + 1, 14), 2.6))
    for row, (tokens, y) in enumerate(((candidate, 2.0), (reference, 0.0))):
        for i, tok in enumerate(tokens):
            ax.text(i + 0.5, y + 0.45, tok, ha="center", va="center", fontsize=8, rotation=0 if len(tok) < 7
                    else 20)
        ax.text(-0.3, y + 0.45, ("answer", "reference")[row], ha="right", va="center", fontsize=9)
    for i in range(len(candidate) - n + 1):
        hit = tuple(candidate[i:i + n]) in ref_grams
        level = 1.45 - 0.22 * (i % 2)
        ax.plot([i + 0.15, i + n - 0.15], [level, level], lw=5, solid_capstyle="butt",
                color="#31a354" if hit else "#de2d26", alpha=0.85)
    ax.set_xlim(-2.2, width + 0.2)
    ax.set_ylim(-0.2, 2.9)
    ax.axis("off")
    ax.set_title(title or f"the answer's {n}-grams: green when the reference has them", fontsize=10)
    fig.tight_layout()
    return fig


def draw_similarity(matrix: ArrayLike, rows: Sequence[str], cols: Sequence[str], title: str = "") -> Figure:
    """A token-similarity matrix as a heatmap (``rows`` by ``cols`` tokens), the best match of each row
    outlined: BERTScore's greedy matching from the rows' side."""
    import numpy as np

    plt = _plt()
    m = np.asarray(matrix, dtype=float)
    fig, ax = plt.subplots(figsize=(min(0.34 * len(cols) + 2.5, 13), 0.3 * len(rows) + 1.8))
    im = ax.imshow(m, cmap="viridis", vmin=float(m.min()), vmax=1.0)
    for i, j in enumerate(m.argmax(axis=1)):
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="#ff7f0e", lw=2))
    ax.set_xticks(range(len(cols)), cols, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.03, label="cosine similarity")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def draw_flow(steps: Sequence[str], notes: Sequence[str] = (), title: str = "",
              highlight: Sequence[int] = ()) -> Figure:
    """A pipeline as a row of boxes joined by arrows, left to right; ``notes`` (one per step, may be "")
    are printed under the boxes; the steps at the ``highlight`` indices are drawn dark."""
    plt = _plt()
    n = len(steps)
    fig, ax = plt.subplots(figsize=(min(2.3 * n + 0.5, 13), 1.9 if notes else 1.4))
    for i, step in enumerate(steps):
        dark = i in highlight
        ax.add_patch(plt.Rectangle((i * 2.3, 0), 1.8, 1, color=_CORE if dark else _OPTIONAL))
        ax.text(i * 2.3 + 0.9, 0.5, step, ha="center", va="center", fontsize=8, wrap=True,
                color="white" if dark else "#222")
        if i < n - 1:
            ax.annotate("", xy=(i * 2.3 + 2.25, 0.5), xytext=(i * 2.3 + 1.85, 0.5),
                        arrowprops={"arrowstyle": "->", "color": "#555", "lw": 1.5})
        if i < len(notes) and notes[i]:
            ax.text(i * 2.3 + 0.9, -0.15, notes[i], ha="center", va="top", fontsize=7, color="#555")
    ax.set_xlim(-0.1, n * 2.3 - 0.4)
    ax.set_ylim(-0.75 if notes else -0.1, 1.15)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def draw_triad(legs: Mapping[str, str] | None = None, title: str = "") -> Figure:
    """The RAG triad: question, context and answer at the corners of a triangle, one judged check on each
    edge (context relevance, groundedness, answer relevance); ``legs`` maps a check to a text printed under
    its name (a score)."""
    plt = _plt()
    legs = dict(legs or {})
    corners = {"question": (0.0, 0.0), "context": (1.0, 1.5), "answer": (2.0, 0.0)}
    edges = [("question", "context", "context relevance"), ("context", "answer", "groundedness"),
             ("answer", "question", "answer relevance")]
    fig, ax = plt.subplots(figsize=(6.8, 3.8))
    for a, b, name in edges:
        (x0, y0), (x1, y1) = corners[a], corners[b]
        ax.plot([x0, x1], [y0, y1], color="#888", lw=2, zorder=1)
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        dy = -0.28 if name == "answer relevance" else 0.0
        dx = {"context relevance": -0.75, "groundedness": 0.75}.get(name, 0.0)
        label = name + (f"\n{legs[name]}" if name in legs else "")
        ax.text(mx + dx, my + dy, label, ha="center", va="center", fontsize=9, color="#d62728")
    for name, (x, y) in corners.items():
        ax.add_patch(plt.Circle((x, y), 0.26, color=_CORE, zorder=2))
        ax.text(x, y, name, ha="center", va="center", fontsize=8, color="white", zorder=3)
    ax.set_xlim(-1.6, 3.6)
    ax.set_ylim(-0.6, 1.9)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def draw_funnel(stages: Sequence[tuple[str, int]], title: str = "") -> Figure:
    """Counts that shrink stage by stage (candidates, then what each filter leaves) as horizontal bars,
    the first on top, each labelled with its count."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(stages) + 1.0))
    top = max((c for _, c in stages), default=1) or 1
    for i, (name, value) in enumerate(stages):
        y = len(stages) - 1 - i
        ax.barh(y, value, left=(top - value) / 2, color=_CORE if i in (0, len(stages) - 1) else _OPTIONAL)
        ax.text(top + top * 0.02, y, f"{name}: {value}", va="center", fontsize=8)
    ax.set_xlim(0, top * 1.6)
    ax.set_yticks([])
    ax.set_xticks([])
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def draw_counts(matrix: ArrayLike, rows: Sequence[str], cols: Sequence[str], row_title: str = "",
                col_title: str = "", title: str = "") -> Figure:
    """A table of counts as a shaded grid with each count written in its cell: a confusion matrix (a judge
    against labels), two annotators' cross-table."""
    import numpy as np

    plt = _plt()
    m = np.asarray(matrix, dtype=float)
    fig, ax = plt.subplots(figsize=(1.1 * len(cols) + 2.4, 0.7 * len(rows) + 1.6))
    ax.imshow(m, cmap="Blues", vmin=0, vmax=max(float(m.max()), 1.0))
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            v = m[i, j]
            ax.text(j, i, f"{v:g}", ha="center", va="center", fontsize=10,
                    color="white" if v > 0.6 * m.max() else "#222")
    ax.set_xticks(range(len(cols)), cols, fontsize=8)
    ax.set_yticks(range(len(rows)), rows, fontsize=8)
    ax.set_xlabel(col_title, fontsize=9)
    ax.set_ylabel(row_title, fontsize=9)
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    if title:
        ax.set_title(title, fontsize=10, pad=28)
    fig.tight_layout()
    return fig


def draw_intervals(estimates: Sequence[tuple[str, float, float, float]], reference: float | None = None,
                   reference_label: str = "", xlabel: str = "", title: str = "") -> Figure:
    """Estimates with their intervals, one row each: (label, value, low, high), the first on top; a dashed
    vertical line at ``reference`` (chance, zero, a target)."""
    plt = _plt()
    n = len(estimates)
    fig, ax = plt.subplots(figsize=(8, 0.45 * n + 1.2))
    for i, (_, value, low, high) in enumerate(estimates):
        y = n - 1 - i
        ax.plot([low, high], [y, y], color=_CORE, lw=2.5)
        ax.plot([value], [y], "o", color="#08306b")
    ax.set_yticks(range(n), [e[0] for e in reversed(estimates)], fontsize=8)
    if reference is not None:
        ax.axvline(reference, ls="--", color="#d62728", lw=1.2)
        if reference_label:
            ax.text(reference, n - 0.4, reference_label, color="#d62728", fontsize=8, ha="center")
    ax.set_ylim(-0.6, n - 0.1 + (0.4 if reference_label else 0))
    if xlabel:
        ax.set_xlabel(xlabel, fontsize=9)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
