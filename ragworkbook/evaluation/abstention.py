"""Abstention and coverage: answering less to be right more often (selective answering).

A RAG system may decline to answer ("I could not find this in the documents") when a signal
says the answer is likely unsupported: the judge's faithfulness, the retriever's top score, the
share of the answer's words found in the context. Each threshold on that signal trades
**coverage** (the share of questions answered) for **selective risk** (the share of answered
questions that are wrong, here hallucinated). The **risk-coverage curve** draws that trade-off
for every threshold at once (Geifman & El-Yaniv, 2017, "Selective classification for deep
neural networks").

Conventions (each tested):

- an item is answered when its ``confidence`` is **at least** the threshold; the curve has one
  point per distinct confidence value (from the highest, coverage 1/n or more, to the lowest,
  coverage 1), so tied items are answered or withheld together, never split by their order;
- ``loss`` is 1 for a wrong (hallucinated) answer and 0 for a right one; fractional losses
  (1 - faithfulness) are allowed, and the risk is then their mean;
- **AURC**, the area under the risk-coverage curve, is the sum over points of risk times the
  coverage the point adds (a step integral from coverage 0): with no ties it equals the usual
  ``(1/n) sum_i risk(top i)``. Lower is better. A signal that ranks at random has, on average,
  an AURC equal to the overall risk; a perfect ranking the **oracle AURC** of
  :func:`oracle_aurc`;
- items without a confidence (None or NaN: the judge failed) are refused (ValueError naming
  them): decide first whether such an item is answered or withheld, and say so.

Choosing a threshold on the data it is then reported on flatters it. :func:`choose_threshold`
picks it on one part of the data (calibration) for a target risk; report the risk and coverage
it gives on another part.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragworkbook.stats.sample_size import Proportion, proportion

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["RiskCoverage", "risk_coverage", "oracle_aurc", "choose_threshold", "SelectiveResult",
           "selective_result", "plot_risk_coverage"]


@dataclass(frozen=True)
class RiskCoverage:
    """A risk-coverage curve: one point per distinct threshold, from the highest threshold (fewest
    answered) to the lowest (every item answered).

    ``thresholds[j]``: answer the items with confidence >= it; ``answered[j]``: how many;
    ``coverage[j]`` = answered / n; ``risk[j]``: mean loss of the answered items;
    ``errors[j]``: their summed loss; ``n``: all items; ``overall_risk``: the risk at coverage 1.
    """

    thresholds: np.ndarray
    answered: np.ndarray
    coverage: np.ndarray
    risk: np.ndarray
    errors: np.ndarray
    n: int
    binary: bool

    @property
    def overall_risk(self) -> float:
        return float(self.risk[-1])

    @property
    def aurc(self) -> float:
        """Area under the curve: ``sum_j risk_j (coverage_j - coverage_{j-1})``, coverage_{-1} = 0."""
        widths = np.diff(np.concatenate([[0.0], self.coverage]))
        return float(np.sum(self.risk * widths))

    def interval(self, j: int, confidence: float = 0.95) -> Proportion:
        """The Wilson interval of the risk at point ``j`` (binary losses only)."""
        if not self.binary:
            raise ValueError("an interval for a proportion needs binary losses (0/1); these are fractional")
        return proportion(int(round(self.errors[j])), int(self.answered[j]), confidence)

    def at_coverage(self, coverage: float) -> int:
        """The index of the point with the largest coverage not above ``coverage`` (ValueError when
        even the highest threshold answers more)."""
        ok = np.flatnonzero(self.coverage <= coverage + 1e-12)
        if not ok.size:
            raise ValueError(f"no threshold answers at most {coverage:.3f} of the items; the smallest "
                             f"coverage is {self.coverage[0]:.3f} (ties at the top)")
        return int(ok[-1])

    def to_frame(self) -> pd.DataFrame:
        """One row per point: threshold, answered, coverage, risk (and, for binary losses, the Wilson
        interval of the risk)."""
        import pandas as pd

        df = pd.DataFrame({"threshold": self.thresholds, "answered": self.answered,
                           "coverage": self.coverage, "risk": self.risk})
        if self.binary:
            cis = [self.interval(j) for j in range(len(self.thresholds))]
            df["risk_low"] = [c.low for c in cis]
            df["risk_high"] = [c.high for c in cis]
        return df


def _arrays(confidence: Sequence[float], loss: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(confidence, (str, bytes)) or isinstance(loss, (str, bytes)):
        raise TypeError("confidence and loss must be sequences of numbers, not strings")
    if len(confidence) != len(loss):
        raise ValueError(f"one confidence per loss: got {len(confidence)} confidences and {len(loss)} losses")
    if not len(loss):
        raise ValueError("no items: a risk-coverage curve needs at least one")
    missing = [i for i, c in enumerate(confidence) if c is None or (isinstance(c, float) and math.isnan(c))]
    if missing:
        shown = ", ".join(map(str, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise ValueError(f"{len(missing)} items have no confidence (None or NaN; items {shown}): decide "
                         "whether they are answered or withheld, then give them a value")
    c = np.asarray(confidence, dtype=float)
    y = np.asarray([np.nan if v is None else v for v in loss], dtype=float)
    if np.isnan(y).any() or (y < 0).any() or (y > 1).any():
        raise ValueError("every loss must be a number from 0 (right) to 1 (wrong)")
    return c, y


def risk_coverage(confidence: Sequence[float], loss: Sequence[float]) -> RiskCoverage:
    """The risk-coverage curve of answering the items whose ``confidence`` is at least a threshold
    (see the module docstring for the conventions)."""
    c, y = _arrays(confidence, loss)
    order = np.argsort(-c, kind="stable")
    c_sorted, y_sorted = c[order], y[order]
    cum = np.cumsum(y_sorted)
    # the last position of each distinct value (values descending)
    last = np.flatnonzero(np.r_[c_sorted[1:] != c_sorted[:-1], True])
    answered = last + 1
    errors = cum[last]
    binary = bool(np.all((y == 0) | (y == 1)))
    return RiskCoverage(thresholds=c_sorted[last], answered=answered, coverage=answered / len(y),
                        risk=errors / answered, errors=errors, n=len(y), binary=binary)


def oracle_aurc(loss: Sequence[float]) -> float:
    """The AURC of a perfect signal, which answers the right items first (the lowest AURC any
    signal can reach on these losses)."""
    y = np.sort(np.asarray(loss, dtype=float))
    n = len(y)
    if not n:
        raise ValueError("no items")
    return float(np.sum(np.cumsum(y) / np.arange(1, n + 1)) / n)


def choose_threshold(confidence: Sequence[float], loss: Sequence[float], max_risk: float) -> float | None:
    """The lowest threshold (the most answered) whose selective risk on these items is at most
    ``max_risk``; None when no threshold reaches it. Pick it on calibration items, report it on
    others (:func:`selective_result`)."""
    if not 0 <= max_risk <= 1:
        raise ValueError(f"max_risk is a risk from 0 to 1, got {max_risk!r}")
    curve = risk_coverage(confidence, loss)
    ok = np.flatnonzero(curve.risk <= max_risk + 1e-12)
    return float(curve.thresholds[ok[-1]]) if ok.size else None


@dataclass(frozen=True)
class SelectiveResult:
    """What a fixed threshold gives on some items: ``answered`` of ``n`` (coverage) and the risk
    among the answered (a Proportion with its Wilson interval for binary losses)."""

    threshold: float
    answered: int
    n: int
    risk: float
    risk_interval: Proportion | None

    @property
    def coverage(self) -> float:
        return self.answered / self.n


def selective_result(confidence: Sequence[float], loss: Sequence[float], threshold: float) -> SelectiveResult:
    """Apply a fixed threshold (answer when confidence >= threshold) to items and measure it."""
    c, y = _arrays(confidence, loss)
    take = c >= threshold
    k = int(take.sum())
    risk = float(y[take].mean()) if k else math.nan
    binary = bool(np.all((y == 0) | (y == 1)))
    ci = proportion(int(y[take].sum()), k) if binary else None
    return SelectiveResult(float(threshold), k, len(y), risk, ci)


def plot_risk_coverage(curves: Mapping[str, RiskCoverage], *, title: str = "",
                       ylabel: str = "hallucination rate among answered") -> Figure:
    """Risk against coverage, one line per signal (matplotlib ``Figure``); binary curves get their
    95% Wilson band; the overall risk (answering everything) is the dotted line."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    for name, cur in curves.items():
        line, = ax.step(cur.coverage, cur.risk, where="post", marker="o", markersize=3,
                        label=f"{name} (AURC {cur.aurc:.3f})")
        if cur.binary:
            frame = cur.to_frame()
            ax.fill_between(cur.coverage, frame["risk_low"], frame["risk_high"], step="post", alpha=0.12,
                            color=line.get_color())
    first = next(iter(curves.values()))
    ax.axhline(first.overall_risk, ls=":", color="grey",
               label=f"answer everything ({first.overall_risk:.2f})")
    ax.set_xlabel("coverage (share of questions answered)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
