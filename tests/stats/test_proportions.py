"""Rates with Wilson or exact intervals, none from fewer than 5 items (against statsmodels)."""

from __future__ import annotations

import math

import pytest
from conftest import reference

from ragworkbook.stats.proportions import proportion, rate_of


@pytest.mark.reference
@pytest.mark.parametrize("k,n", [(0, 12), (12, 12), (3, 7), (47, 48), (5, 5), (0, 5), (26, 50)])
@pytest.mark.parametrize("method,sm_method", [("wilson", "wilson"), ("exact", "beta")])
def test_intervals_match_statsmodels(k, n, method, sm_method):
    sm = reference("statsmodels.stats.proportion")
    low, high = sm.proportion_confint(k, n, alpha=0.05, method=sm_method)
    e = proportion(k, n, method=method)
    assert e.value == k / n and e.n == n
    assert (e.low, e.high) == pytest.approx((low, high), abs=1e-9)


def test_zero_of_n_and_n_of_n_are_not_certainties():
    none = proportion(0, 12)
    assert none.value == 0.0 and none.low == 0.0 and 0.2 < none.high < 0.3  # not [0, 0]
    every = proportion(12, 12)
    assert every.value == 1.0 and every.high == 1.0 and 0.7 < every.low < 0.8  # not [1, 1]
    assert str(none) == f"0.000 [0.000, {none.high:.3f}]"
    assert none.method == "Wilson score interval"
    assert proportion(12, 12, method="exact").method == "exact Clopper-Pearson interval"


@pytest.mark.parametrize("n", [0, 1, 4])
def test_fewer_than_five_items_give_no_rate(n):
    e = proportion(n, n)
    assert e.too_few and math.isnan(e.value) and math.isnan(e.low)
    assert str(e) == f"too few (n = {n})" and e.to_dict()["value"] is None
    assert e.to_dict()["note"] == "too few"
    assert not rate_of([True] * n).excludes(0.5)
    assert proportion(n, n, min_items=0).too_few == (n == 0)  # zero items never give a rate


def test_rate_of_flags_and_bad_input():
    assert rate_of([True, False, True, True, False]).value == 0.6
    with pytest.raises(ValueError, match="0 <= successes <= n"):
        proportion(6, 5)
    with pytest.raises(ValueError, match="whole number"):
        proportion(2.5, 5)
    with pytest.raises(ValueError, match="unknown interval method 'wald'"):
        proportion(2, 5, method="wald")
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        proportion(2, 5, confidence=95)
