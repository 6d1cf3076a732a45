"""Intervals and pair statistics of ragworkbook.stats.agreement, against statsmodels and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import reference

from ragworkbook.stats.agreement import (
    binary_rates,
    cohen_kappa,
    kappa_estimate,
    kappa_standard_error,
    majority_baseline,
    pairwise_accuracy,
    pairwise_accuracy_estimate,
)
from ragworkbook.stats.resampling import bootstrap_statistic


def _labels(table):
    a, b = [], []
    for i, row in enumerate(table):
        for j, n in enumerate(row):
            a += [i] * n
            b += [j] * n
    return a, b


@pytest.mark.reference
@pytest.mark.parametrize("table", [[[12, 2], [2, 8]], [[20, 5, 1], [3, 15, 4], [0, 2, 10]], [[3, 4], [2, 3]]])
def test_kappa_standard_error_matches_statsmodels(table):
    inter_rater = reference("statsmodels.stats.inter_rater")
    ref = inter_rater.cohens_kappa(np.asarray(table))
    a, b = _labels(table)
    k, se, low, high = kappa_standard_error(a, b)
    assert k == pytest.approx(ref.kappa, abs=1e-12)
    assert se == pytest.approx(ref.std_kappa, abs=1e-12)
    assert (low, high) == pytest.approx((ref.kappa_low, ref.kappa_upp), abs=1e-12)


@pytest.mark.reference
def test_bootstrap_kappa_interval_is_close_to_statsmodels_on_a_large_sample():
    inter_rater = reference("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 400)
    b = np.where(rng.random(400) < 0.8, a, 1 - a)
    ref = inter_rater.cohens_kappa(np.histogram2d(a, b, bins=2)[0])
    est = kappa_estimate(a.tolist(), b.tolist(), labels=[0, 1], n_resamples=2000)
    assert est.value == pytest.approx(ref.kappa, abs=1e-12)
    assert est.low == pytest.approx(ref.kappa_low, abs=0.02)
    assert est.high == pytest.approx(ref.kappa_upp, abs=0.02)


def test_kappa_estimate_skips_undefined_resamples_and_is_seeded():
    a, b = [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]
    est = kappa_estimate(a, b, labels=[0, 1], n_resamples=300)
    assert est.value == cohen_kappa(a, b, labels=[0, 1])
    assert est.n_skipped > 0  # resamples with only the 1s: both raters constant and equal
    assert est.to_dict()["n_skipped"] == est.n_skipped
    assert kappa_estimate(a, b, labels=[0, 1], n_resamples=300) == est


def test_kappa_estimate_resamples_groups_and_refuses_fewer_than_five():
    a, b = [1, 0] * 6, [1, 0] * 5 + [0, 1]
    grouped = kappa_estimate(a, b, labels=[0, 1], groups=[i // 2 for i in range(12)], unit="pairs",
                             n_resamples=300)
    assert grouped.value == cohen_kappa(a, b) and grouped.n == 6  # six groups of two items
    assert grouped.method == "percentile bootstrap over pairs (300 resamples, seed 0)"
    assert kappa_estimate(a, b, labels=[0, 1], n_resamples=300).n == 12
    small = kappa_estimate([1, 0], [1, 0], labels=[0, 1])  # a perfect kappa on two items: no number
    assert small.too_few and np.isnan(small.value) and str(small) == "too few (n = 2)"
    with pytest.raises(ValueError, match="one key per item"):
        kappa_estimate(a, b, groups=[0, 1])


def test_pairwise_accuracy_counts_ties_half_or_as_losses():
    good, bad = [1.0, 0.5, 0.2, 0.7, 0.3, None], [0.0, 0.5, 0.9, 0.1, 0.4, 1.0]
    half = pairwise_accuracy(good, bad)
    assert (half.wins, half.ties, half.losses, half.n, half.n_dropped) == (2, 1, 2, 5, 1)
    assert half.accuracy == pytest.approx(2.5 / 5)
    assert pairwise_accuracy(good, bad, ties="loss").accuracy == pytest.approx(2 / 5)
    # a metric that scores everything alike is at chance: 0.5
    assert pairwise_accuracy([0.3] * 5, [0.3] * 5).accuracy == 0.5
    est = pairwise_accuracy_estimate(good, bad, n_resamples=200)
    assert est.value == pytest.approx(2.5 / 5) and est.low <= est.value <= est.high
    assert "over pairs" in est.method
    assert pairwise_accuracy_estimate(good[:3], bad[:3]).too_few
    with pytest.raises(ValueError, match="ties must be 'half' or 'loss'"):
        pairwise_accuracy(good, bad, ties="drop")
    with pytest.raises(ValueError, match="no pair has a score for both"):
        pairwise_accuracy([None], [1.0])


def test_binary_rates_and_majority_baseline():
    labels = [1, 1, 1, 0, 0, None]
    verdicts = [1, 0, 1, 0, 1, 1]
    r = binary_rates(labels, verdicts)
    assert (r.tp, r.fn, r.tn, r.fp, r.n_dropped) == (2, 1, 1, 1, 1)
    assert (r.tpr, r.tnr) == pytest.approx((2 / 3, 1 / 2))
    assert binary_rates([1, 1], [1, 0]).tnr is None
    assert majority_baseline([0, 1, 1, None]) == (1, pytest.approx(2 / 3))
    assert majority_baseline(["B", "A"]) == ("A", 0.5)  # a tie goes to the first label in sorted order
    with pytest.raises(ValueError, match="binary labels"):
        binary_rates([2], [1])


def test_bootstrap_statistic_undefined_empty_and_too_few():
    est = bootstrap_statistic(lambda idx: None, 5)
    assert np.isnan(est.value) and str(est) == "n/a" and est.to_dict()["value"] is None
    assert not est.too_few  # undefined, not too few
    empty = bootstrap_statistic(lambda idx: 1.0, 0)
    assert np.isnan(empty.value) and empty.too_few
    arr = np.array([0.0, 1.0, 1.0, 1.0, 1.0])
    est = bootstrap_statistic(lambda idx: float(arr[idx].mean()), 5, n_resamples=500, unit="pairs")
    assert est.value == 0.8 and 0.0 <= est.low <= 0.8 <= est.high <= 1.0
    assert str(est) == f"0.800 [{est.low:.3f}, {est.high:.3f}]"
    assert est.method == "percentile bootstrap over pairs (500 resamples, seed 0)"
    four = bootstrap_statistic(lambda idx: float(arr[idx].mean()), 4)
    assert four.too_few and str(four) == "too few (n = 4)" and four.to_dict()["note"] == "too few"
    assert not four.excludes(0.5) and est.excludes(-0.1) and not est.excludes(0.8)
