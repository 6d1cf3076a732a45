"""Rates with intervals that mean something: Wilson score or exact (Clopper-Pearson) intervals.

A rate such as "the judge agreed with the annotators on 41 of 50 items" is a
binomial proportion. Its interval should not be a bootstrap: resampling 0 of 12
successes gives 0 every time, and the percentile interval [0, 0] claims a
certainty 12 items cannot give. The Wilson score interval (Wilson 1927) is the
standard choice (it stays inside [0, 1], is not degenerate at 0 of n or n of n,
and covers close to its nominal level for small n); the exact Clopper-Pearson
interval is the conservative alternative. Both come from
``scipy.stats.binomtest(k, n).proportion_ci`` and agree with
``statsmodels.stats.proportion.proportion_confint`` (``method="wilson"`` /
``"beta"``).

Conventions: from fewer than :data:`~ragworkbook.stats.resampling.MIN_ITEMS` (5)
items there is no rate and no interval: the estimate is "too few"
(:func:`~ragworkbook.stats.resampling.too_few`). Zero items is "too few" too, not
an error, so a rate over a filtered subset can always be printed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragworkbook.stats.resampling import MIN_ITEMS, Estimate, too_few

__all__ = ["PROPORTION_METHODS", "proportion", "rate_of"]

#: Interval methods: name -> (scipy's name, what the estimate's ``method`` says).
PROPORTION_METHODS = {"wilson": ("wilson", "Wilson score interval"),
                      "exact": ("exact", "exact Clopper-Pearson interval")}


def proportion(successes: int, n: int, *, confidence: float = 0.95, method: str = "wilson",
               min_items: int = MIN_ITEMS) -> Estimate:
    """``successes / n`` with its ``method`` interval (``"wilson"`` or ``"exact"``) at ``confidence``.

    Fewer than ``min_items`` items: a "too few" estimate (no number). ValueError for counts that
    are not whole numbers with ``0 <= successes <= n``, an unknown method or a confidence outside
    (0, 1).
    """
    if method not in PROPORTION_METHODS:
        raise ValueError(f"unknown interval method {method!r}: use one of {', '.join(PROPORTION_METHODS)}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence}")
    for name, v in (("successes", successes), ("n", n)):
        if isinstance(v, bool) or int(v) != v:
            raise ValueError(f"{name} must be a whole number, got {v!r}")
    successes, n = int(successes), int(n)
    if not 0 <= successes <= n:
        raise ValueError(f"a proportion needs 0 <= successes <= n, got {successes} of {n}")
    scipy_name, label = PROPORTION_METHODS[method]
    if n < max(min_items, 1):
        return too_few(n, confidence, label)
    from scipy.stats import binomtest

    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method=scipy_name)
    return Estimate(successes / n, float(ci.low), float(ci.high), n, confidence, method=label)


def rate_of(flags: Sequence[bool], *, confidence: float = 0.95, method: str = "wilson",
            min_items: int = MIN_ITEMS) -> Estimate:
    """The share of true ``flags`` as a :func:`proportion` (each flag one item)."""
    flags = [bool(f) for f in flags]
    return proportion(sum(flags), len(flags), confidence=confidence, method=method, min_items=min_items)
