"""The interval of a paired difference inverts the test that gives the verdict: they never disagree."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragworkbook.stats.resampling import paired_test


def _brute_force_interval(d: np.ndarray, alpha: float) -> tuple[float, float]:
    """Every sign pattern, a fine grid of shifts: the accepted shifts' hull (the definition, spelled out)."""
    n = d.size
    codes = np.arange(2**n)[:, None]
    signs = 1 - 2 * ((codes >> np.arange(n)) & 1)
    grid = np.linspace(d.mean() - 3 * np.ptp(d), d.mean() + 3 * np.ptp(d), 20001)
    accepted = []
    for delta in grid:
        x = d - delta
        p = np.mean(np.abs((signs * x).mean(axis=1)) >= abs(x.mean()) * (1 - 1e-12))
        if p >= alpha:
            accepted.append(delta)
    return min(accepted), max(accepted)


@pytest.mark.parametrize("seed", range(5))
def test_exact_interval_equals_the_definition(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=8), rng.normal(size=8)
    r = paired_test(a, b)
    lo, hi = _brute_force_interval(a - b, 0.05)
    step = 6 * np.ptp(a - b) / 20000
    assert r.ci_low == pytest.approx(lo, abs=step) and r.ci_high == pytest.approx(hi, abs=step)
    assert r.ci_method == "inverted sign-flip test" and r.confidence == 0.95


@pytest.mark.parametrize("method,n", [("randomization", 8), ("randomization", 12), ("randomization", 40),
                                      ("bootstrap", 8), ("bootstrap", 40)])
def test_interval_excludes_zero_exactly_when_p_is_below_alpha(method, n):
    rng = np.random.default_rng(n)
    checked = {True: 0, False: 0}
    for _ in range(60):
        a = rng.normal(size=n)
        b = a + rng.normal(0.5, 1.0, size=n)
        r = paired_test(a, b, method=method, n_resamples=3000)
        excludes = not (r.ci_low <= 0.0 <= r.ci_high)
        assert excludes == (r.p_value < 0.05), r
        checked[excludes] += 1
    assert checked[True] and checked[False]  # both verdicts occurred


def test_a_percentile_bootstrap_can_contradict_the_exact_test_ours_cannot():
    """8 pairs (four questions worse, four unchanged) where a percentile bootstrap interval of the
    mean difference excludes 0 although the exact sign-flip test gives p = 0.125: the interval that
    inverts the test includes 0, as the verdict says."""
    d = np.array([-0.5, -0.333, -0.25, -0.2, 0.0, 0.0, 0.0, 0.0])
    r = paired_test(d, np.zeros(8))
    rng = np.random.default_rng(0)
    boot = d[rng.integers(0, 8, size=(10_000, 8))].mean(axis=1)
    assert np.quantile(boot, 0.975) < 0  # the percentile interval excludes 0 ...
    assert r.p_value == pytest.approx(32 / 256)  # all four nonzero differences of one sign: 2 * 2**4
    assert r.ci_low < 0 <= r.ci_high  # ... the test and its interval do not


def test_too_few_pairs_give_an_unbounded_interval():
    r = paired_test([0.9, 0.8, 1.0], [0.1, 0.2, 0.0])
    assert r.p_value == pytest.approx(0.25)  # 3 pairs: 2 of 8 sign patterns are as extreme
    assert (r.ci_low, r.ci_high) == (-math.inf, math.inf)
    same = paired_test([0.5, 0.5], [0.3, 0.3])
    assert same.ci_low == same.ci_high == pytest.approx(0.2)
