"""A toy model of end-to-end RAG quality, and the retrieval x generation heatmap.

The textbook's heatmap (NUMBERS.md B8) makes one point: a generator cannot
answer from context it was never given, so retrieval quality caps the
end-to-end quality. The simplest model of that is a product,

    quality = retrieval_quality * generation_quality,

where ``retrieval_quality`` is the probability that the needed context was
retrieved and ``generation_quality`` the probability that the generator
answers correctly *given* the right context. With retrieval 0.2 and perfect
generation (1.0) the product gives **0.2**, not the 0.18 the chapter prints.

One model that does give 0.18 adds a *generation ceiling*: even a "perfect"
generator turns right context into a right answer at most ``ceiling`` of the
time, ``quality = retrieval * min(generation, 1) * ceiling``; with a ceiling
of 0.9, ``0.2 * 1.0 * 0.9 = 0.18``. The chapter states neither model, so the
workbook reports the documented figure as matching the ceiling model only.

Conventions: both qualities are fractions in [0, 1] (ValueError otherwise);
``ceiling`` is in (0, 1].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

__all__ = ["end_to_end_quality", "quality_grid", "plot_quality_heatmap", "ceiling_for"]


def _check_fraction(x: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if (arr < 0).any() or (arr > 1).any():
        raise ValueError(f"{name} must be a fraction in [0, 1], got {x!r}")
    return arr


def end_to_end_quality(retrieval: float | Sequence[float], generation: float | Sequence[float],
                       ceiling: float = 1.0) -> float | np.ndarray:
    """``retrieval * generation * ceiling`` (elementwise; a float for scalar inputs).

    ``ceiling`` = 1.0 is the plain product model; ``ceiling`` = 0.9 reproduces
    the textbook's 0.18 for retrieval 0.2 and perfect generation.
    """
    r = _check_fraction(retrieval, "retrieval")
    g = _check_fraction(generation, "generation")
    if not 0 < float(ceiling) <= 1:
        raise ValueError(f"ceiling must be in (0, 1], got {ceiling!r}")
    out = r * g * float(ceiling)
    return float(out) if out.ndim == 0 else out


def ceiling_for(retrieval: float, generation: float, quality: float) -> float:
    """The generation ceiling that makes the product model give ``quality``:
    ``quality / (retrieval * generation)`` (ValueError if that is 0 or above 1)."""
    denom = float(retrieval) * float(generation)
    if denom <= 0:
        raise ValueError("retrieval * generation must be positive to solve for a ceiling")
    c = float(quality) / denom
    if not 0 < c <= 1:
        raise ValueError(f"no ceiling in (0, 1] gives {quality} (needs {c:.3f})")
    return c


def quality_grid(steps: int = 11, ceiling: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(retrieval_levels, generation_levels, quality)`` on an evenly spaced grid over [0, 1];
    ``quality[i, j]`` is for generation level ``i`` (rows) and retrieval level ``j`` (columns)."""
    if steps < 2:
        raise ValueError(f"steps must be at least 2, got {steps}")
    levels = np.round(np.linspace(0.0, 1.0, steps), 10)
    r, g = np.meshgrid(levels, levels)
    return levels, levels, end_to_end_quality(r, g, ceiling)


def plot_quality_heatmap(steps: int = 6, ceiling: float = 1.0, ax: Axes | None = None,
                         points: Sequence[tuple[float, float, str]] = ()) -> Axes:
    """Draw the retrieval x generation heatmap (matplotlib) and return the Axes.

    ``points``: optional ``(retrieval, generation, label)`` markers, e.g. a
    measured pipeline placed on the map.
    """
    import matplotlib.pyplot as plt

    rl, gl, q = quality_grid(steps, ceiling)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    im = ax.imshow(q, origin="lower", cmap="viridis", vmin=0, vmax=1,
                   extent=(-0.5, steps - 0.5, -0.5, steps - 0.5))
    ax.set_xticks(range(steps), [f"{x:.1f}" for x in rl])
    ax.set_yticks(range(steps), [f"{x:.1f}" for x in gl])
    for i in range(steps):
        for j in range(steps):
            ax.text(j, i, f"{q[i, j]:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if q[i, j] < 0.5 else "black")
    scale = steps - 1
    for r, g, label in points:
        ax.plot(r * scale, g * scale, marker="o", color="red")
        ax.annotate(label, (r * scale, g * scale), textcoords="offset points", xytext=(5, 5), color="red")
    ax.set_xlabel("retrieval quality")
    ax.set_ylabel("generation quality (given the right context)")
    title = "end-to-end quality = retrieval x generation"
    if ceiling != 1.0:
        title += f" x {ceiling:g}"
    ax.set_title(title, fontsize=9)
    ax.figure.colorbar(im, ax=ax, fraction=0.046)
    return ax
