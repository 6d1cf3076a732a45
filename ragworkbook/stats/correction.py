"""Judge scores corrected for the judge's measured errors: Rogan-Gladen prevalence and PPI.

A judge that misses some hallucinations and flags some faithful answers gives a
biased rate. Two standard corrections use a small set of items labelled by
people (where both the judge's verdict and the human label are known) to
remove that bias from the judge's verdicts on many more items:

- :func:`rogan_gladen` / :func:`corrected_prevalence` - Rogan & Gladen (1978): a
  test with sensitivity ``TPR`` and specificity ``TNR`` that reports an apparent
  prevalence ``q`` implies the true prevalence

  ``p = (q + TNR - 1) / (TPR + TNR - 1)``,

  clipped to [0, 1]. Undefined when ``TPR + TNR <= 1`` (the judge is no better than
  chance, or inverted): we refuse rather than return a number. The interval is a
  percentile bootstrap that resamples the labelled items (re-estimating TPR and
  TNR) and the judged items (re-estimating ``q``) independently; resamples with
  ``TPR + TNR <= 1`` are skipped, counted and printed with the interval (the
  interval is then over the resamples that had a judge better than chance, so many
  skipped resamples mean the interval understates the uncertainty).
- :func:`ppi_mean` - prediction-powered inference for a mean (Angelopoulos et al.
  2023, the correction ARES applies to its judges): with judge scores ``f`` on
  ``N`` unlabelled items and on ``n`` labelled items whose human scores are ``y``,

  ``theta = mean(f_unlabelled) - mean(f_labelled - y)``,

  the judge's mean minus its average error on the labelled items (the
  *rectifier*), with the normal interval
  ``theta -/+ z sqrt(var(f_unlabelled) / N + var(f_labelled - y) / n)`` (sample
  variances, ddof = 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragworkbook.stats.resampling import Estimate

__all__ = ["rogan_gladen", "CorrectedPrevalence", "corrected_prevalence", "PPIEstimate", "ppi_mean"]


def rogan_gladen(apparent: float, tpr: float, tnr: float, *, clip: bool = True) -> float:
    """The Rogan-Gladen prevalence ``(apparent + tnr - 1) / (tpr + tnr - 1)``.

    ``apparent`` is the share of items the judge flags positive, ``tpr``/``tnr`` its
    sensitivity and specificity. ``clip`` keeps the result in [0, 1] (a raw value
    outside it means the apparent rate is not consistent with the rates, e.g. by
    sampling noise). Raises ValueError when ``tpr + tnr <= 1``: such a judge carries
    no information about the prevalence (or is inverted), and the formula divides by
    zero or flips sign.
    """
    for name, v in (("apparent", apparent), ("tpr", tpr), ("tnr", tnr)):
        if not 0.0 <= float(v) <= 1.0:
            raise ValueError(f"{name} must be a rate between 0 and 1, got {v}")
    youden = tpr + tnr - 1.0
    if youden <= 0:
        raise ValueError(
            f"cannot correct: TPR + TNR = {tpr + tnr:.3f} <= 1, so the judge's verdicts carry no information "
            "about the prevalence (a judge at chance or worse); measure a better judge first"
        )
    p = (apparent + tnr - 1.0) / youden
    return min(1.0, max(0.0, p)) if clip else p


@dataclass(frozen=True)
class CorrectedPrevalence:
    """A prevalence corrected with :func:`rogan_gladen`, and what went into it.

    ``interval`` is the corrected prevalence as an :class:`~ragworkbook.stats.resampling.Estimate`
    over the ``n_judged`` items: its percentile bootstrap interval over ``n_resamples``
    resamples of the labelled and the judged items (drawn independently), of which
    ``n_skipped`` had ``TPR + TNR <= 1`` and were left out (:attr:`method` says so).
    ``apparent`` is the judge's raw positive rate on the judged items; ``tpr`` and ``tnr``
    were measured on the ``n_labelled`` labelled items. ``estimate``, ``low``, ``high`` and
    the counts read the interval.
    """

    interval: Estimate
    apparent: float
    tpr: float
    tnr: float
    n_labelled: int

    @property
    def estimate(self) -> float:
        """The corrected prevalence."""
        return self.interval.value

    @property
    def low(self) -> float:
        return self.interval.low

    @property
    def high(self) -> float:
        return self.interval.high

    @property
    def confidence(self) -> float:
        return self.interval.confidence

    @property
    def n_judged(self) -> int:
        return self.interval.n

    @property
    def n_resamples(self) -> int:
        return self.interval.n_resamples

    @property
    def n_skipped(self) -> int:
        return self.interval.n_skipped

    @property
    def method(self) -> str:
        """What the interval resamples, and how many resamples were skipped."""
        return self.interval.method

    def __str__(self) -> str:
        interval = "[n/a]" if math.isnan(self.low) else f"[{self.low:.3f}, {self.high:.3f}]"
        return (f"{self.estimate:.3f} {interval} (apparent {self.apparent:.3f}, TPR {self.tpr:.3f}, "
                f"TNR {self.tnr:.3f}; {self.n_skipped} of {self.n_resamples} resamples skipped)")


def _binary_array(x: Sequence[int | bool], name: str) -> np.ndarray:
    arr = np.asarray([int(v) for v in x], dtype=int)
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if not np.isin(arr, (0, 1)).all():
        raise ValueError(f"{name} must hold 0/1 verdicts")
    return arr


def _rates(h: np.ndarray, j: np.ndarray) -> tuple[float, float] | None:
    pos, neg = h == 1, h == 0
    if not pos.any() or not neg.any():
        return None
    return float(j[pos].mean()), float(1 - j[neg].mean())


def corrected_prevalence(judged: Sequence[int | bool], labelled_judge: Sequence[int | bool],
                         labelled_human: Sequence[int | bool], *, confidence: float = 0.95,
                         n_resamples: int = 2000, seed: int = 0) -> CorrectedPrevalence:
    """The prevalence of positives among ``judged`` (the judge's 0/1 verdicts on unlabelled items),
    corrected with the TPR and TNR the judge has on the labelled items
    (``labelled_judge[i]`` vs ``labelled_human[i]``), with a bootstrap interval.

    Raises ValueError when the labelled items lack a class or ``TPR + TNR <= 1``.
    """
    from ragworkbook.stats.resampling import _check_common

    _check_common(confidence, n_resamples)
    f = _binary_array(judged, "judged")
    lj, lh = _binary_array(labelled_judge, "labelled_judge"), _binary_array(labelled_human, "labelled_human")
    if lj.size != lh.size:
        raise ValueError("labelled_judge and labelled_human must label the same items "
                         f"({lj.size} vs {lh.size})")
    rates = _rates(lh, lj)
    if rates is None:
        raise ValueError("the labelled items need both classes (some 1s and some 0s) to measure TPR and TNR")
    tpr, tnr = rates
    apparent = float(f.mean())
    est = rogan_gladen(apparent, tpr, tnr)
    rng = np.random.default_rng(seed)
    values, skipped = [], 0
    for _ in range(n_resamples):
        q = float(f[rng.integers(0, f.size, f.size)].mean())
        idx = rng.integers(0, lh.size, lh.size)
        r = _rates(lh[idx], lj[idx])
        if r is None or r[0] + r[1] <= 1.0:
            skipped += 1
            continue
        values.append(rogan_gladen(q, *r))
    alpha = 1.0 - confidence
    if values:
        low, high = (float(x) for x in np.quantile(values, [alpha / 2, 1 - alpha / 2]))
    else:
        low = high = math.nan
    method = (f"percentile bootstrap over the labelled and the judged items, independently "
              f"({n_resamples} resamples, {skipped} skipped: TPR + TNR <= 1)")
    interval = Estimate(est, low, high, int(f.size), confidence, n_resamples, skipped, method)
    return CorrectedPrevalence(interval, apparent, tpr, tnr, int(lh.size))


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered mean: ``estimate`` = ``judge_mean`` - ``rectifier``, with its
    normal interval; ``n_judged`` unlabelled and ``n_labelled`` labelled items. With
    ``bounds`` the estimate and the interval are clipped to them; ``unclipped`` keeps
    ``(estimate, low, high)`` as computed and ``clipped`` says whether anything moved."""

    estimate: float
    low: float
    high: float
    judge_mean: float
    rectifier: float
    n_judged: int
    n_labelled: int
    confidence: float = 0.95
    bounds: tuple[float, float] | None = (0.0, 1.0)
    unclipped: tuple[float, float, float] | None = None

    @property
    def clipped(self) -> bool:
        """Whether the estimate or the interval was clipped to ``bounds``."""
        return self.unclipped is not None and self.unclipped != (self.estimate, self.low, self.high)

    @property
    def method(self) -> str:
        """How the interval was made."""
        b = self.bounds
        return ("normal interval of the prediction-powered mean (judge variance on the unlabelled items + "
                "error variance on the labelled items)" + (f", clipped to [{b[0]:g}, {b[1]:g}]" if b else ""))

    def __str__(self) -> str:
        b = self.bounds
        clip = f", clipped to [{b[0]:g}, {b[1]:g}]" if self.clipped and b else ""
        return (f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}] (the judge's mean "
                f"{self.judge_mean:.3f} minus its mean error on the labelled items "
                f"{self.rectifier:.3f}{clip})")


def _float_array(x: Sequence[float], name: str) -> np.ndarray:
    arr = np.asarray(list(x), dtype=float)
    if arr.size < 2:
        raise ValueError(f"{name} needs at least 2 values (a sample variance), got {arr.size}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has NaN or infinite values: drop failed judgments explicitly first")
    return arr


def ppi_mean(judged: Sequence[float], labelled_judge: Sequence[float], labelled_human: Sequence[float], *,
             confidence: float = 0.95, bounds: tuple[float, float] | None = (0.0, 1.0)) -> PPIEstimate:
    """Prediction-powered mean of a score: the judge's mean on the ``judged`` (unlabelled) items,
    corrected by its mean error ``labelled_judge - labelled_human`` on the labelled items.

    Interval: ``estimate -/+ z * sqrt(var(judged) / N + var(labelled_judge - labelled_human) / n)``
    with sample variances (ddof = 1) and ``z`` the normal quantile for ``confidence``. ``bounds``
    (default [0, 1], the range of a share or a judged score; None: no clipping) clips the
    estimate and the interval.
    """
    from scipy.stats import norm

    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if bounds is not None and not bounds[0] < bounds[1]:
        raise ValueError(f"bounds must be (low, high) with low < high, got {bounds}")
    f = _float_array(judged, "judged")
    lj, lh = _float_array(labelled_judge, "labelled_judge"), _float_array(labelled_human, "labelled_human")
    if lj.size != lh.size:
        raise ValueError("labelled_judge and labelled_human must score the same items "
                         f"({lj.size} vs {lh.size})")
    err = lj - lh
    judge_mean, rectifier = float(f.mean()), float(err.mean())
    est = judge_mean - rectifier
    se = math.sqrt(float(f.var(ddof=1)) / f.size + float(err.var(ddof=1)) / err.size)
    z = float(norm.ppf(0.5 + confidence / 2))
    raw = (est, est - z * se, est + z * se)
    if bounds is not None:
        lo, hi = bounds
        est, low, high = (min(hi, max(lo, x)) for x in raw)
    else:
        est, low, high = raw
    return PPIEstimate(est, low, high, judge_mean, rectifier, int(f.size), int(err.size), confidence, bounds,
                       raw)
