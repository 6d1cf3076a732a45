"""Bootstrap CIs and paired tests, checked against scipy.stats."""

import numpy as np
import pytest
from conftest import reference

from ragworkbook.stats.resampling import bootstrap_ci, bootstrap_means, paired_test


def test_bootstrap_ci_basic_and_reproducible():
    v = [0, 1, 1, 0.5, 1, 0, 1, 1]
    ci = bootstrap_ci(v)
    assert ci.mean == pytest.approx(np.mean(v)) and ci.n == 8
    assert ci.low < ci.mean < ci.high
    assert bootstrap_ci(v) == ci  # same seed, same numbers
    assert not np.array_equal(bootstrap_means(v, 100, seed=1), bootstrap_means(v, 100, seed=0))
    assert str(ci).startswith(f"{ci.mean:.3f} [")


@pytest.mark.reference
def test_bootstrap_ci_matches_scipy_percentile():
    sst = reference("scipy.stats")
    rng = np.random.default_rng(5)
    v = rng.random(40)
    ours = bootstrap_ci(v, n_resamples=20_000, seed=3)
    ref = sst.bootstrap(
        (v,), np.mean, method="percentile", n_resamples=20_000, random_state=3, confidence_level=0.95
    ).confidence_interval
    assert ours.low == pytest.approx(ref.low, abs=0.01)
    assert ours.high == pytest.approx(ref.high, abs=0.01)


def test_bootstrap_definition_matches_quantiles():
    """The documented definition, written out with numpy: resample indices from
    default_rng(seed).integers, the means of the resamples, their 5% and 95% quantiles."""
    v = np.array([0.0, 1.0, 0.25, 0.75, 1.0])
    means = v[np.random.default_rng(7).integers(0, v.size, size=(5000, v.size))].mean(axis=1)
    np.testing.assert_array_equal(bootstrap_means(v, 5000, seed=7), means)
    ci = bootstrap_ci(v, n_resamples=5000, seed=7, confidence=0.9)
    assert (ci.low, ci.high) == tuple(np.quantile(means, [0.05, 0.95]))
    assert ci.low < 0.4 < 0.8 < ci.high  # a wide interval around the mean 0.6 of five values


def test_bootstrap_degenerate_and_errors():
    assert bootstrap_ci([0.5]).as_tuple() == (0.5, 0.5, 0.5)
    assert bootstrap_ci([1, 1, 1]).as_tuple() == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="empty"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match=r"NaN or infinite values at positions \[1\]"):
        bootstrap_ci([1.0, float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1, 2], confidence=95)
    with pytest.raises(ValueError, match="one-dimensional"):
        bootstrap_ci([[1, 2]])
    with pytest.raises(ValueError, match="n_resamples must be a positive integer, got 0"):
        bootstrap_ci([1, 2], n_resamples=0)
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        paired_test([1, 2], [2, 1], n_resamples=1.5)


def _scipy_paired_p(a, b, n_resamples=10_000):
    sst = reference("scipy.stats")
    res = sst.permutation_test(
        (np.asarray(a, float), np.asarray(b, float)),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=n_resamples,
        random_state=0,
    )
    return res.pvalue


@pytest.mark.reference
@pytest.mark.parametrize(
    "a, b",
    [
        ([1, 1, 0.5, 1, 0, 1, 1, 0.33], [0, 1, 0.5, 0, 0, 1, 0.5, 0]),
        ([0.2, 0.4, 0.9, 0.1, 0.3], [0.1, 0.5, 0.6, 0.1, 0.0]),
        ([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1]),
    ],
)
def test_exact_randomization_equals_scipy(a, b):
    ours = paired_test(a, b)
    assert ours.exact and ours.method == "randomization"
    assert ours.p_value == pytest.approx(_scipy_paired_p(a, b), abs=1e-12)
    assert ours.mean_diff == pytest.approx(np.mean(np.subtract(a, b)))
    assert ours.ci_low <= ours.mean_diff <= ours.ci_high


def test_monte_carlo_randomization_close_to_exact():
    rng = np.random.default_rng(1)
    a = rng.random(16)
    b = a - rng.normal(0.05, 0.1, 16)
    exact = paired_test(a, b, n_resamples=2**16)
    mc = paired_test(a, b, n_resamples=20_000)
    assert exact.exact and not mc.exact
    assert mc.p_value == pytest.approx(exact.p_value, abs=0.02)


def test_bootstrap_method_and_edge_cases():
    a = [0.9, 0.8, 0.95, 0.7, 0.85, 0.9, 0.75, 0.8, 0.9, 0.85]
    b = [0.1, 0.2, 0.15, 0.3, 0.2, 0.1, 0.25, 0.2, 0.1, 0.15]
    r = paired_test(a, b, method="bootstrap")
    # every difference is far above 0: no centred resample reaches it, p = (0 + 1) / (n + 1)
    assert r.method == "bootstrap" and r.p_value == 1 / 10_001
    same = paired_test([0.3, 0.5], [0.3, 0.5])
    assert same.p_value == 1.0 and same.mean_diff == 0.0
    with pytest.raises(ValueError, match="same questions"):
        paired_test([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="unknown method"):
        paired_test([1, 2], [2, 1], method="t-test")
    assert "p = " in str(r)
