"""ragworkbook.stats.sample_size against statsmodels' intervals, by formula and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import reference
from scipy.stats import binom

from ragworkbook.stats.sample_size import interval_width, items_for_width, items_to_spot, proportion


@pytest.mark.reference
@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (7, 59), (1, 1), (250, 500)])
def test_proportion_is_statsmodels_wilson(k, n):
    confint = reference("statsmodels.stats.proportion").proportion_confint
    low, high = confint(k, n, alpha=0.05, method="wilson")
    p = proportion(k, n)
    assert (p.low, p.high) == pytest.approx((low, high), abs=1e-12)
    assert p.value == k / n
    assert str(p).endswith(f"({k} of {n})")


def test_proportion_edges_and_bad_input():
    empty = proportion(0, 0)
    assert math.isnan(empty.value) and math.isnan(empty.low) and str(empty) == "n/a (0 items)"
    assert proportion(4.0, 8).k == 4  # a whole float is a count
    # the checks are stats.proportions.proportion's (k is its `successes`)
    with pytest.raises(ValueError, match="needs 0 <= successes <= n, got 5 of 4"):
        proportion(5, 4)
    with pytest.raises(ValueError, match="successes must be a whole number, got 1.5"):
        proportion(1.5, 4)
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        proportion(1, 4, confidence=95)


@pytest.mark.reference
@pytest.mark.parametrize("p", [0.05, 0.2, 0.5, 0.9])
@pytest.mark.parametrize("n", [7, 30, 101, 1000])
def test_interval_width_is_the_width_of_statsmodels_interval(p, n):
    confint = reference("statsmodels.stats.proportion").proportion_confint
    low, high = confint(p * n, n, alpha=0.05, method="wilson")  # statsmodels takes a fractional count
    assert interval_width(p, n) == pytest.approx(high - low, rel=1e-9)
    low, high = confint(p * n, n, alpha=0.05, method="normal")
    if 0 < low and high < 1:  # statsmodels clips the Wald interval to [0, 1]; our width is the formula's
        assert interval_width(p, n, method="wald") == pytest.approx(high - low, rel=1e-9)
    else:
        assert interval_width(p, n, method="wald") > high - low


@pytest.mark.reference
@pytest.mark.parametrize("p,width", [(0.5, 0.1), (0.2, 0.1), (0.1, 0.05), (0.5, 0.2), (0.85, 0.1)])
def test_wald_sample_size_is_statsmodels_formula(p, width):
    samplesize = reference("statsmodels.stats.proportion").samplesize_confint_proportion
    assert items_for_width(width, p, method="wald") == math.ceil(samplesize(p, width / 2, alpha=0.05))


@pytest.mark.reference
@pytest.mark.parametrize("p,width", [(0.5, 0.1), (0.2, 0.1), (0.05, 0.05), (0.5, 0.3), (0.0, 0.1),
                                     (0.97, 0.1)])
def test_wilson_sample_size_is_the_smallest_n_that_fits(p, width):
    confint = reference("statsmodels.stats.proportion").proportion_confint
    n = items_for_width(width, p)

    def w(m: int) -> float:
        low, high = confint(p * m, m, alpha=0.05, method="wilson")
        return high - low

    assert w(n) <= width + 1e-12
    assert w(n - 1) > width
    assert all(w(m) <= width + 1e-12 for m in range(n, n + 50))  # and it stays inside from there on


def test_wilson_sample_size_by_simulation():
    """At the n it returns for p = 0.2 and width 0.1, the Wilson intervals of simulated samples (scipy)
    are about 0.1 wide and cover the true p about 95% of the time."""
    n = items_for_width(0.1, 0.2)
    assert 230 <= n <= 260  # the textbook Wald answer is 246
    k = np.random.default_rng(0).binomial(n, 0.2, size=2000)
    cis = [proportion(int(x), n) for x in k]
    widths = np.array([c.width for c in cis])
    assert abs(np.median(widths) - 0.1) < 0.005
    coverage = np.mean([c.low <= 0.2 <= c.high for c in cis])
    assert 0.93 <= coverage <= 0.97


def test_sample_size_bad_input():
    with pytest.raises(ValueError, match="full width of the interval"):
        items_for_width(0)
    with pytest.raises(ValueError, match="expected proportion p must be between 0 and 1"):
        items_for_width(0.1, 1.5)
    with pytest.raises(ValueError, match="width 0 at p = 0 or 1"):
        items_for_width(0.1, 0.0, method="wald")
    with pytest.raises(ValueError, match="unknown interval method 'exact'"):
        interval_width(0.5, 10, method="exact")
    with pytest.raises(ValueError, match="n must be at least 1"):
        interval_width(0.5, 0)


@pytest.mark.parametrize("rate,confidence", [(0.05, 0.95), (0.01, 0.9), (0.2, 0.99), (0.5, 0.5)])
def test_items_to_spot_is_the_smallest_n_that_sees_an_error(rate, confidence):
    n = items_to_spot(rate, confidence)
    seen = 1 - binom.pmf(0, np.arange(1, n + 1), rate)  # P(at least one wrong item among m)
    assert seen[-1] >= confidence - 1e-12
    assert n == 1 or seen[-2] < confidence - 1e-12
    assert items_to_spot(0.05) == 59


def test_items_to_spot_bad_input():
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        items_to_spot(0)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        items_to_spot(0.1, confidence=1)
