"""Proportions with their intervals, and how many items an interval of a given width needs.

A human evaluation, a spot check or a judge-check ends in proportions: the share of answers
with a hallucination, the share of items two annotators label alike, the share of pairs the
judge gets right. This module gives

- :func:`proportion`: ``k`` of ``n`` with the **Wilson score interval** (computed by scipy:
  ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``). Unlike the textbook Wald
  interval ``p +- z sqrt(p (1 - p) / n)``, it stays inside [0, 1] and does not collapse to a
  single point at 0 of n or n of n;
- :func:`interval_width`: the width (high - low) of the Wilson or Wald interval expected at a
  proportion ``p`` with ``n`` items (``k = p n``, which may be fractional);
- :func:`items_for_width`: the smallest ``n`` whose interval at ``p`` is at most ``width`` wide
  (the question to ask *before* labelling: "to know the hallucination rate to within +-0.05,
  how many answers must we label?"). With ``method="wald"`` it is the textbook formula
  ``n = ceil(z^2 p (1 - p) / (width / 2)^2)`` (statsmodels'
  ``samplesize_confint_proportion``, rounded up);
- :func:`items_to_spot`: how many items a spot check must read to see at least one error
  with a given probability when a share ``rate`` of all items is wrong:
  ``n = ceil(log(1 - confidence) / log(1 - rate))`` (read 59 items to see a 5% error rate
  with 95% probability).

Conventions: ``confidence`` is two-sided (0.95 means z = 1.96); ``p`` is the proportion you
expect (0.5, the worst case, when you have no idea).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ragworkbook.stats.proportions import proportion as shared_proportion

__all__ = ["Proportion", "proportion", "interval_width", "items_for_width", "items_to_spot"]

_METHODS = ("wilson", "wald")


@dataclass(frozen=True)
class Proportion:
    """``k`` of ``n`` with its Wilson interval [``low``, ``high``] at ``confidence``; the value and
    bounds are NaN when ``n`` is 0."""

    k: int
    n: int
    low: float
    high: float
    confidence: float = 0.95

    @property
    def value(self) -> float:
        """``k / n`` (NaN for 0 items)."""
        return self.k / self.n if self.n else math.nan

    @property
    def width(self) -> float:
        return self.high - self.low

    def __str__(self) -> str:
        if not self.n:
            return "n/a (0 items)"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}] ({self.k} of {self.n})"


def _check_confidence(confidence: float) -> float:
    if isinstance(confidence, bool) or not 0 < float(confidence) < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def proportion(k: int, n: int, confidence: float = 0.95) -> Proportion:
    """``k`` successes of ``n`` with the Wilson score interval, as ``k`` of ``n``: the interval and
    the checks (ValueError unless ``0 <= k <= n`` are whole numbers) are
    :func:`ragworkbook.stats.proportions.proportion`'s; 0 items give NaN bounds."""
    est = shared_proportion(k, n, confidence=confidence, method="wilson", min_items=1)
    if est.too_few:  # 0 items
        return Proportion(0, 0, math.nan, math.nan, confidence)
    return Proportion(int(k), int(n), float(est.low), float(est.high), confidence)


def _check_p(p: float, method: str) -> float:
    if method not in _METHODS:
        raise ValueError(f"unknown interval method {method!r}; choose one of: {', '.join(_METHODS)}")
    if isinstance(p, bool) or not 0 <= float(p) <= 1 or math.isnan(float(p)):
        raise ValueError(f"the expected proportion p must be between 0 and 1, got {p!r}")
    if method == "wald" and float(p) in (0.0, 1.0):
        raise ValueError("the Wald interval has width 0 at p = 0 or 1 whatever n is; use method='wilson'")
    return float(p)


def interval_width(p: float, n: int | np.ndarray, confidence: float = 0.95, method: str = "wilson"
                   ) -> float | np.ndarray:
    """The width (high - low, before clipping to [0, 1]) of the interval at proportion ``p`` with
    ``n`` items: Wilson ``2 z sqrt(p (1 - p) n + z^2 / 4) / (n + z^2)``, Wald
    ``2 z sqrt(p (1 - p) / n)``. ``n`` may be an array."""
    p = _check_p(p, method)
    z = float(norm.ppf(0.5 + _check_confidence(confidence) / 2))
    nn = np.asarray(n, dtype=float)
    if np.any(nn < 1):
        raise ValueError("n must be at least 1")
    if method == "wald":
        w = 2 * z * np.sqrt(p * (1 - p) / nn)
    else:
        w = 2 * z * np.sqrt(p * (1 - p) * nn + z * z / 4) / (nn + z * z)
    return float(w) if np.ndim(w) == 0 else w


def items_for_width(width: float, p: float = 0.5, confidence: float = 0.95, method: str = "wilson") -> int:
    """The smallest number of items whose interval at proportion ``p`` is at most ``width`` wide
    (full width: ``width=0.1`` means +-0.05)."""
    if isinstance(width, bool) or not 0 < float(width) < 1:
        raise ValueError(f"width is the full width of the interval, between 0 and 1, got {width!r}")
    p = _check_p(p, method)
    z = float(norm.ppf(0.5 + _check_confidence(confidence) / 2))
    half = float(width) / 2
    if method == "wald":
        return max(1, math.ceil(z * z * p * (1 - p) / (half * half) - 1e-9))
    # The Wilson width is below the Wald width plus a little and falls with n past its peak: scan up to a
    # safe bound (the Wald n, or the n at which the z^2 term alone fits) and take the first n that fits.
    bound = math.ceil(z * z * max(p * (1 - p), 1e-12) / (half * half)) + math.ceil(z * z / width) + 10
    n = np.arange(1, bound + 1)
    fits = np.flatnonzero(interval_width(p, n, confidence, "wilson") <= float(width) + 1e-12)
    if not fits.size:  # pragma: no cover - the bound always fits
        raise RuntimeError("no sample size found below the bound")
    first = int(fits[0])
    # past the first fit the width keeps falling; report the first n from which every larger n fits
    later = np.flatnonzero(interval_width(p, n[first:], confidence, "wilson") > float(width) + 1e-12)
    return int(n[first + int(later[-1]) + 1]) if later.size else int(n[first])


def items_to_spot(rate: float, confidence: float = 0.95) -> int:
    """How many items a random spot check must read so that, when a share ``rate`` of all items is
    wrong, it finds at least one wrong item with probability ``confidence``:
    the smallest n with ``1 - (1 - rate)^n >= confidence``."""
    if isinstance(rate, bool) or not 0 < float(rate) < 1:
        raise ValueError(f"rate (the share of wrong items) must be strictly between 0 and 1, got {rate!r}")
    confidence = _check_confidence(confidence)
    n = math.ceil(math.log(1 - confidence) / math.log(1 - float(rate)) - 1e-12)
    return max(1, n)
