"""Uncertainty for small eval sets: bootstrap confidence intervals and paired tests.

With 8 questions a mean such as Recall@3 = 0.625 could easily be 0.3 or 0.9 on
another 8 questions of the same kind; these functions say how easily.

- :func:`bootstrap_ci` — percentile bootstrap CI of a mean (vectorised numpy,
  seeded, reproducible across runs). Agrees with
  ``scipy.stats.bootstrap(method="percentile")`` up to resampling noise.
- :func:`bootstrap_statistic` — percentile bootstrap CI of any statistic of
  paired items (kappa, a pairwise accuracy), resampling the items (or pairs);
  resamples on which the statistic is undefined are skipped and counted. An
  :class:`Estimate` says what its interval resamples (``method``), and from fewer
  than :data:`MIN_ITEMS` (5) items there is no number at all: "too few".
- :func:`paired_test` — two systems scored on the same questions: the
  two-sided sign-flip randomisation test on the per-question differences
  (exact enumeration of all ``2**n`` sign patterns when that is at most
  ``n_resamples``, else Monte Carlo), or a bootstrap test; plus the interval
  of the mean difference **obtained by inverting the same test**: the shifts
  ``delta`` that the test would not reject for ``mean(a - b) = delta`` at level
  ``1 - confidence``. So the interval excludes 0 exactly when ``p < 1 -
  confidence``: the interval and the verdict never contradict each other. (A
  percentile bootstrap interval of the mean difference, the usual companion,
  is anti-conservative with 8 pairs: it can exclude 0 while the exact test
  gives p = 0.25.) With few pairs no difference can be significant, and the
  interval is then unbounded (-inf, inf). The exact randomisation p-value
  equals ``scipy.stats.permutation_test(..., permutation_type="samples")``'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ConfidenceInterval", "Estimate", "MIN_ITEMS", "TOO_FEW", "too_few", "PairedTestResult",
           "bootstrap_ci", "bootstrap_statistic", "paired_test", "bootstrap_means"]

_TOL = 1e-12  # relative tolerance when comparing resampled statistics with the observed one
_BATCH = 2_000_000  # max resample cells held in memory at once


@dataclass(frozen=True)
class ConfidenceInterval:
    """A mean with its confidence interval: ``mean``, ``low``, ``high``, sample size ``n``, ``confidence``."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float = 0.95

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def as_tuple(self) -> tuple[float, float, float]:
        """``(mean, low, high)``."""
        return (self.mean, self.low, self.high)


#: The fewest items a rate or an interval is computed from: below it, "too few" (no number).
MIN_ITEMS = 5
#: The note of an :class:`Estimate` computed from fewer than :data:`MIN_ITEMS` items.
TOO_FEW = "too few"


@dataclass(frozen=True)
class Estimate:
    """A statistic with its interval, and what the interval is.

    ``value`` is the statistic on all ``n`` items; ``low``/``high`` the interval at
    ``confidence``; ``method`` says how it was made and what it resamples ("percentile
    bootstrap over pairs (2000 resamples, seed 0)", "Wilson score interval"); for a bootstrap,
    ``n_skipped`` counts the resamples on which the statistic was undefined (left out).
    ``value`` is NaN (and the interval too) when the statistic is undefined on the data, and
    when there were fewer than :data:`MIN_ITEMS` items: then ``note`` is :data:`TOO_FEW`.
    """

    value: float
    low: float
    high: float
    n: int
    confidence: float = 0.95
    n_resamples: int = 0
    n_skipped: int = 0
    method: str = ""
    note: str = ""

    @property
    def too_few(self) -> bool:
        """True when no number was computed because there were fewer than :data:`MIN_ITEMS` items."""
        return self.note == TOO_FEW

    def __str__(self) -> str:
        if self.too_few:
            return f"{TOO_FEW} (n = {self.n})"
        if math.isnan(self.value):
            return "n/a"
        if math.isnan(self.low):
            return f"{self.value:.3f} [n/a]"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def excludes(self, x: float) -> bool:
        """Whether the interval lies entirely above or below ``x`` (False when there is none)."""
        if math.isnan(self.low) or math.isnan(self.high):
            return False
        return self.low > x or self.high < x

    def to_dict(self) -> dict[str, Any]:
        """``{"value", "low", "high", "n", "confidence", "method"}`` (NaN as None), plus ``note``
        when there is one and ``n_skipped`` when resamples were skipped, for JSON."""
        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        out: dict[str, Any] = {"value": num(self.value), "low": num(self.low), "high": num(self.high),
                               "n": self.n, "confidence": self.confidence, "method": self.method}
        if self.note:
            out["note"] = self.note
        if self.n_skipped:
            out["n_skipped"] = self.n_skipped
            out["n_resamples"] = self.n_resamples
        return out


def too_few(n: int, confidence: float = 0.95, method: str = "") -> Estimate:
    """The :class:`Estimate` of a statistic over fewer than :data:`MIN_ITEMS` items: no number."""
    nan = float("nan")
    return Estimate(nan, nan, nan, int(n), confidence, 0, 0, method, TOO_FEW)


@dataclass(frozen=True)
class PairedTestResult:
    """Paired comparison of ``a`` and ``b``: mean of ``a - b``, two-sided p-value, and the interval
    of the difference that inverts the same test (``ci_method`` names it; ``confidence`` its level)."""

    mean_diff: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    method: str
    n_resamples: int = 0
    exact: bool = False
    confidence: float = 0.95
    ci_method: str = ""

    def __str__(self) -> str:
        return (
            f"mean diff {self.mean_diff:+.3f} [{self.ci_low:+.3f}, {self.ci_high:+.3f}], "
            f"p = {self.p_value:.3f} ({self.method}{', exact' if self.exact else ''}, n = {self.n})"
        )


def _as_values(values: Sequence[float] | np.ndarray, name: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one score per question), got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: a confidence interval needs at least one value")
    if not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr)).tolist()
        raise ValueError(
            f"{name} contains NaN or infinite values at positions {bad}; "
            "drop or fix the failed items explicitly before averaging"
        )
    return arr


def _check_common(confidence: float, n_resamples: int) -> None:
    if not (0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")


def bootstrap_means(
    values: Sequence[float] | np.ndarray, n_resamples: int = 10_000, seed: int = 0
) -> np.ndarray:
    """Means of ``n_resamples`` resamples (with replacement, same size) of ``values``.

    Resample indices come from ``numpy.random.default_rng(seed).integers``,
    drawn in batches, so the result depends only on (values, n_resamples, seed).
    """
    arr = _as_values(values)
    _check_common(0.5, n_resamples)
    rng = np.random.default_rng(seed)
    n = arr.size
    per = max(1, _BATCH // n)
    out = np.empty(n_resamples)
    for s in range(0, n_resamples, per):
        m = min(per, n_resamples - s)
        idx = rng.integers(0, n, size=(m, n))
        out[s : s + m] = arr[idx].mean(axis=1)
    return out


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0
) -> ConfidenceInterval:
    """Percentile bootstrap confidence interval of the mean of ``values``.

    ``low``/``high`` are the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
    quantiles (numpy's default linear interpolation) of the resampled means.
    One value gives a zero-width interval; all-equal values too. NaN or empty
    input is an error (a failed item must be handled, not averaged away).
    """
    arr = _as_values(values)
    _check_common(confidence, n_resamples)
    means = bootstrap_means(arr, n_resamples, seed)
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return ConfidenceInterval(
        mean=float(arr.mean()), low=float(low), high=float(high), n=int(arr.size), confidence=confidence
    )


def bootstrap_statistic(statistic: Callable[[np.ndarray], float | None], n: int, *,
                        confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0,
                        unit: str = "items", min_items: int = MIN_ITEMS) -> Estimate:
    """Percentile bootstrap interval of ``statistic`` over ``n`` items (``unit`` names them in
    the estimate's ``method``: "pairs", "items").

    ``statistic(idx)`` computes the statistic on the items at the integer positions
    ``idx`` (with repeats); it returns None (or NaN) when the statistic is undefined
    on that sample, and such resamples are skipped and counted (``n_skipped``).
    Resample indices come from ``numpy.random.default_rng(seed).integers(0, n, n)``,
    one resample after the other, so the result depends only on the data,
    ``n_resamples`` and ``seed``. With fewer than ``min_items`` items (default
    :data:`MIN_ITEMS`) there is no number: the estimate is "too few" (:func:`too_few`).
    With an undefined statistic on the full sample every number is NaN.
    """
    _check_common(confidence, n_resamples)
    nan = float("nan")
    method = f"percentile bootstrap over {unit} ({n_resamples} resamples, seed {seed})"
    if n < min_items:
        return too_few(n, confidence, method)
    full = statistic(np.arange(n))
    if full is None or math.isnan(float(full)):
        return Estimate(nan, nan, nan, n, confidence, 0, 0, method)
    rng = np.random.default_rng(seed)
    values = []
    skipped = 0
    for _ in range(n_resamples):
        v = statistic(rng.integers(0, n, size=n))
        if v is None or math.isnan(float(v)):
            skipped += 1
        else:
            values.append(float(v))
    if not values:
        return Estimate(float(full), nan, nan, n, confidence, n_resamples, skipped, method)
    alpha = 1.0 - confidence
    low, high = np.quantile(np.asarray(values), [alpha / 2, 1 - alpha / 2])
    return Estimate(float(full), float(low), float(high), n, confidence, n_resamples, skipped, method)


def _sign_patterns(n: int, n_resamples: int, seed: int) -> tuple[np.ndarray, bool]:
    """Every sign pattern (exact, when ``2**n <= n_resamples``) or ``n_resamples`` random ones."""
    if 2**n <= n_resamples:
        codes = np.arange(2**n, dtype=np.int64)[:, None]
        return (1 - 2 * ((codes >> np.arange(n)) & 1)).astype(np.float64), True
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, n)), False


def _sign_flip_p_at(d: np.ndarray, signs: np.ndarray, exact: bool, delta: float = 0.0) -> float:
    """Two-sided sign-flip p-value of ``mean(d) = delta`` with the given sign patterns."""
    x = d - delta
    obs = abs(x.mean())
    thresh = obs * (1 - _TOL) if obs > 0 else 0.0
    count = 0
    per = max(1, _BATCH // d.size)
    for s in range(0, signs.shape[0], per):
        count += int(np.sum(np.abs(signs[s:s + per] @ x) / d.size >= thresh))
    if exact:
        return count / signs.shape[0]
    return (count + 1) / (signs.shape[0] + 1)  # the observed pattern counts as one resample


def _sign_flip_p(d: np.ndarray, n_resamples: int, seed: int) -> tuple[float, bool, int]:
    signs, exact = _sign_patterns(d.size, n_resamples, seed)
    return _sign_flip_p_at(d, signs, exact), exact, signs.shape[0]


def _randomization_interval(d: np.ndarray, alpha: float, n_resamples: int, seed: int) -> tuple[float, float]:
    """The shifts ``delta`` with sign-flip p-value of ``mean(d) = delta`` at least ``alpha`` (hull).

    The p-value is a step function of ``delta`` whose steps lie where
    ``|sum s_i (d_i - delta)| = |sum (d_i - delta)|`` for some pattern ``s``. With every pattern
    enumerated and at most 1,024 of them, it is evaluated at each step and between steps, so the
    bounds are exact; otherwise each bound is found by bisection, the same patterns being used for
    every ``delta``. Unbounded (``-inf``/``inf``) when even the most extreme shift keeps
    ``p >= alpha`` (too few pairs for any difference to be significant).
    """
    n = d.size
    signs, exact = _sign_patterns(n, n_resamples, seed)
    mean = float(d.mean())
    if np.all(d == d[0]):
        return mean, mean  # no variation: only delta = mean is not rejected
    smallest_p = (2 / signs.shape[0]) if exact else 1 / (signs.shape[0] + 1)
    if smallest_p >= alpha:
        return -math.inf, math.inf
    if exact and signs.shape[0] <= 1024:
        sd, ss, total = signs @ d, signs.sum(axis=1), d.sum()
        cand = []
        for sign in (1.0, -1.0):
            denom = ss - sign * n
            ok = np.abs(denom) > 1e-12
            cand.append((sd[ok] - sign * total) / denom[ok])
        points = np.unique(np.concatenate(cand))
        grid = np.concatenate([points, (points[1:] + points[:-1]) / 2, [mean]])
        obs = np.abs(total - n * grid)
        stats = np.abs(sd[None, :] - grid[:, None] * ss[None, :])
        pvals = np.mean(stats >= (obs * (1 - _TOL))[:, None], axis=1)
        accepted = grid[pvals >= alpha]
        return float(accepted.min()), float(accepted.max())
    spread = float(np.abs(d - mean).max()) * 4 + 1e-12
    bounds = []
    for direction in (-1.0, 1.0):
        inside, outside = mean, mean + direction * spread
        while _sign_flip_p_at(d, signs, exact, outside) >= alpha:  # widen until rejected
            outside = mean + 2 * (outside - mean)
        for _ in range(60):
            mid = (inside + outside) / 2
            if _sign_flip_p_at(d, signs, exact, mid) >= alpha:
                inside = mid
            else:
                outside = mid
        bounds.append(inside)
    return bounds[0], bounds[1]


def _bootstrap_test_interval(centred: np.ndarray, mean: float, alpha: float) -> tuple[float, float, float]:
    """The bootstrap test's p-value function inverted: ``mean +- h`` with ``h`` the shift at which
    ``(count(|centred| >= |mean - delta|) + 1) / (N + 1)`` falls below ``alpha``."""
    a = np.sort(np.abs(centred))[::-1]
    k = math.ceil(alpha * (a.size + 1) - 1)  # need at least k resamples as extreme as the shift
    if k <= 0:
        return -math.inf, math.inf, math.inf
    h = float(a[k - 1])
    return mean - h, mean + h, h


def paired_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    method: str = "randomization",
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedTestResult:
    """Two-sided paired test of ``mean(a - b) = 0`` over the same questions, with a CI of the difference.

    ``method="randomization"`` (sign-flip permutation test): under the null the
    sign of each per-question difference is arbitrary; the p-value is the share
    of sign patterns whose ``|mean|`` is at least the observed ``|mean|``
    (exact over all ``2**n`` patterns when ``2**n <= n_resamples``, else a
    Monte Carlo estimate ``(count + 1) / (n_resamples + 1)``).
    ``method="bootstrap"``: the differences are centred on 0 and resampled; the
    p-value is ``(count(|mean*| >= |observed|) + 1) / (n_resamples + 1)``.
    The interval (``ci_low``, ``ci_high``) inverts the same test at level
    ``1 - confidence``: the shifts ``delta`` for which the test of ``mean(a - b) =
    delta`` gives ``p >= 1 - confidence``. It excludes 0 exactly when
    ``p_value < 1 - confidence``, and is ``(-inf, inf)`` when no difference could
    be significant with so few pairs (3 pairs: the exact test never goes below
    p = 0.25). All differences zero gives p = 1. ``a`` and ``b`` must have the
    same length.
    """
    a_arr = _as_values(a, "a")
    b_arr = _as_values(b, "b")
    if a_arr.shape != b_arr.shape:
        raise ValueError(
            f"a paired test needs the same questions in both: len(a) = {a_arr.size}, len(b) = {b_arr.size}"
        )
    _check_common(confidence, n_resamples)
    d = a_arr - b_arr
    n = d.size
    alpha = 1.0 - confidence
    if method in ("randomization", "randomisation", "permutation"):
        if np.all(d == 0):
            p, exact, used = 1.0, True, 0
        else:
            p, exact, used = _sign_flip_p(d, n_resamples, seed)
        low, high = _randomization_interval(d, alpha, n_resamples, seed)
        method, ci_method = "randomization", "inverted sign-flip test"
    elif method == "bootstrap":
        obs = abs(d.mean())
        if np.all(d == d[0]):
            p = 1.0 if obs == 0 else 1.0 / (n_resamples + 1)
            low = high = float(d.mean())
        else:
            centred = bootstrap_means(d - d.mean(), n_resamples, seed + 1)
            thresh = obs * (1 - _TOL)
            p = float((np.sum(np.abs(centred) >= thresh) + 1) / (n_resamples + 1))
            low, high, _ = _bootstrap_test_interval(centred, float(d.mean()), alpha)
        exact, used = False, n_resamples
        ci_method = "inverted bootstrap test"
    else:
        raise ValueError(f"unknown method {method!r}: use 'randomization' or 'bootstrap'")
    return PairedTestResult(
        mean_diff=float(d.mean()),
        p_value=float(min(1.0, p)),
        ci_low=float(low),
        ci_high=float(high),
        n=n,
        method=method,
        n_resamples=used,
        exact=exact,
        confidence=confidence,
        ci_method=ci_method,
    )
