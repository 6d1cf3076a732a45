"""Drift of reference-free scores between windows (ragworkbook.evaluation.monitoring)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import rel_entr
from scipy.stats import ks_2samp

from ragworkbook.evaluation.monitoring import (
    PSI_FLOOR,
    drift,
    drift_series,
    false_alarm_rate,
    psi,
    psi_band,
    psi_chance_level,
    psi_shares,
)

rng = np.random.default_rng(0)
BASE = rng.normal(0.6, 0.1, 300)
SAME = rng.normal(0.6, 0.1, 300)
SHIFTED = rng.normal(0.45, 0.12, 300)


def test_psi_is_the_symmetric_kl_of_the_binned_shares():
    edges, b, c = psi_shares(BASE, SHIFTED)
    assert len(edges) == 11 and np.isinf(edges[0]) and np.isinf(edges[-1])
    assert b == pytest.approx(np.full(10, 0.1), abs=1e-3)  # deciles of the baseline hold a tenth each
    assert psi(BASE, SHIFTED) == pytest.approx(float(np.sum(rel_entr(c, b) + rel_entr(b, c))))


def test_psi_by_hand_on_two_bins():
    base = [0, 0, 1, 1]  # median edge 0.5: shares 1/2, 1/2
    cur = [0, 1, 1, 1]  # shares 1/4, 3/4
    expected = (0.25 - 0.5) * np.log(0.25 / 0.5) + (0.75 - 0.5) * np.log(0.75 / 0.5)
    assert psi(base, cur, bins=2) == pytest.approx(expected)
    assert psi(base, base, bins=2) == 0.0


def test_an_empty_bin_is_floored_not_infinite():
    value = psi([0, 0, 1, 1], [1, 1, 1, 1], bins=2)
    assert np.isfinite(value) and value > 1
    _, _, c = psi_shares([0, 0, 1, 1], [1, 1, 1, 1], bins=2)
    assert c.min() == pytest.approx(PSI_FLOOR, rel=1e-3)


def test_psi_bands():
    assert [psi_band(v) for v in (0.0, 0.099, 0.1, 0.24, 0.25, 3)] == [
        "stable", "stable", "moderate shift", "moderate shift", "major shift", "major shift"]
    with pytest.raises(ValueError, match="a PSI is a number >= 0"):
        psi_band(-1)


def test_drift_uses_scipy_ks_and_flags_a_shift_not_noise():
    quiet = drift(BASE, SAME)
    loud = drift(BASE, SHIFTED)
    ref = ks_2samp(BASE, SHIFTED)
    assert (loud.ks_statistic, loud.ks_p) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
    assert loud.status == "alert" and loud.psi_band == "major shift" and loud.mean_diff < 0
    assert loud.mean_diff_p < 0.001 and len(loud.reasons) == 2
    assert quiet.status == "ok" and quiet.reasons == ()


def test_watch_when_only_one_condition_holds():
    big = rng.normal(0.6, 0.1, 5000)
    slightly = rng.normal(0.62, 0.1, 5000)  # significant with 5,000 a window, but small
    d = drift(big, slightly)
    assert d.ks_p < 0.01 and d.psi < 0.25 and d.status == "watch"


def test_permutation_test_can_be_skipped():
    assert np.isnan(drift(BASE, SAME, n_resamples=0).mean_diff_p)


def test_series_and_false_alarms():
    table = drift_series(BASE, {"w1": SAME, "w2": SHIFTED})
    assert table.index.tolist() == ["w1", "w2"] and table["status"].tolist() == ["ok", "alert"]
    fa = false_alarm_rate(np.concatenate([BASE, SAME]), 200, 100, trials=50, seed=1)
    assert fa.n == 50 and fa.value <= 0.1  # nothing changed: the rule rarely fires
    loose = false_alarm_rate(np.concatenate([BASE, SAME]), 20, 10, trials=50, seed=1, psi_alert=0.05,
                             fires_on="watch")
    assert loose.value > fa.value  # small windows and a low PSI bar: noise fires it


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="current has 1 missing scores"):
        drift(BASE, [0.1, None, 0.3])
    with pytest.raises(ValueError, match="baseline needs at least 2 scores"):
        drift([0.1], SAME)
    with pytest.raises(ValueError, match="bins must be a whole number >= 2"):
        psi(BASE, SAME, bins=1)
    with pytest.raises(ValueError, match="no windows"):
        drift_series(BASE, {})
    with pytest.raises(ValueError, match="sum at most the pool's"):
        false_alarm_rate(BASE, 200, 200)
    with pytest.raises(TypeError, match="not a string"):
        drift("0.1 0.2", SAME)


@pytest.mark.parametrize("n_b,n_c,bins", [(2000, 1000, 10), (1000, 1000, 5), (400, 400, 4)])
def test_psi_chance_level_is_the_mean_psi_of_no_change_draws(n_b, n_c, bins):
    g = np.random.default_rng(5)
    values = [psi(g.normal(size=n_b), g.normal(size=n_c), bins=bins) for _ in range(300)]
    assert np.mean(values) == pytest.approx(psi_chance_level(n_b, n_c, bins), rel=0.15)
    with pytest.raises(ValueError, match="bins >= 2"):
        psi_chance_level(10, 10, 1)
