"""Rogan-Gladen prevalence and the prediction-powered mean, against numbers worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragworkbook.stats.correction import corrected_prevalence, ppi_mean, rogan_gladen


def test_rogan_gladen_by_hand():
    # apparent 0.30, TPR 0.8, TNR 0.9: (0.30 + 0.9 - 1) / (0.8 + 0.9 - 1) = 0.2 / 0.7
    assert rogan_gladen(0.30, 0.8, 0.9) == pytest.approx(0.2 / 0.7)
    # a perfect judge changes nothing
    assert rogan_gladen(0.37, 1.0, 1.0) == pytest.approx(0.37)
    # below the false-positive floor the raw value is negative; clipped to 0
    assert rogan_gladen(0.05, 0.8, 0.9, clip=False) == pytest.approx(-0.05 / 0.7)
    assert rogan_gladen(0.05, 0.8, 0.9) == 0.0


@pytest.mark.parametrize("tpr,tnr", [(0.5, 0.5), (0.3, 0.6), (0.2, 0.1)])
def test_rogan_gladen_refuses_a_judge_at_chance_or_worse(tpr, tnr):
    with pytest.raises(ValueError, match=r"TPR \+ TNR = .* <= 1"):
        rogan_gladen(0.4, tpr, tnr)


def test_rogan_gladen_checks_rates():
    with pytest.raises(ValueError, match="apparent must be a rate between 0 and 1"):
        rogan_gladen(1.2, 0.9, 0.9)


def test_corrected_prevalence_by_hand_and_interval():
    # labelled: 4 positives (judge finds 3: TPR 0.75), 6 negatives (judge flags 1: TNR 5/6)
    human = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    judge = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    judged = [1] * 40 + [0] * 60  # apparent 0.40
    c = corrected_prevalence(judged, judge, human, n_resamples=500)
    expected = (0.40 + 5 / 6 - 1) / (0.75 + 5 / 6 - 1)
    assert (c.tpr, c.tnr, c.apparent) == pytest.approx((0.75, 5 / 6, 0.40))
    assert c.estimate == pytest.approx(expected)
    assert 0.0 <= c.low <= c.estimate <= c.high <= 1.0
    assert c.n_skipped > 0  # with 4 positives some resamples have TPR + TNR <= 1 and are left out
    assert (c.n_judged, c.n_labelled) == (100, 10)
    assert corrected_prevalence(judged, judge, human, n_resamples=500) == c  # seeded
    # the skipped resamples are printed with the interval and named in its method
    assert f"{c.n_skipped} of 500 resamples skipped" in str(c)
    assert c.method.endswith(f"(500 resamples, {c.n_skipped} skipped: TPR + TNR <= 1)")


def test_corrected_prevalence_refuses_bad_input():
    with pytest.raises(ValueError, match="TPR \\+ TNR"):
        corrected_prevalence([1, 0], [1, 0, 1, 0], [0, 1, 1, 0])  # TPR 0.5, TNR 0.5
    with pytest.raises(ValueError, match="need both classes"):
        corrected_prevalence([1, 0], [1, 1], [1, 1])
    with pytest.raises(ValueError, match="must label the same items"):
        corrected_prevalence([1, 0], [1, 1, 0], [1, 0])
    with pytest.raises(ValueError, match="0/1 verdicts"):
        corrected_prevalence([2], [1, 0], [1, 0])


def test_ppi_mean_by_hand():
    judged = [1, 1, 0, 1]  # judge mean 0.75, sample variance 0.25
    lj, lh = [1, 0, 1], [1, 0, 0]  # errors 0, 0, 1: rectifier 1/3, sample variance 1/3
    p = ppi_mean(judged, lj, lh, bounds=None)
    assert p.judge_mean == pytest.approx(0.75) and p.rectifier == pytest.approx(1 / 3)
    assert p.estimate == pytest.approx(0.75 - 1 / 3)
    se = math.sqrt(0.25 / 4 + (1 / 3) / 3)
    assert p.high - p.estimate == pytest.approx(1.959963984540054 * se)
    assert p.estimate - p.low == pytest.approx(1.959963984540054 * se)
    assert (p.n_judged, p.n_labelled) == (4, 3) and not p.clipped
    # by default a share stays in [0, 1]: the normal interval is clipped, and says so
    c = ppi_mean(judged, lj, lh)
    assert p.low < 0 and c.low == 0.0 and c.high == min(1.0, p.high) and c.estimate == p.estimate
    assert c.clipped and c.unclipped == (p.estimate, p.low, p.high) and "clipped to [0, 1]" in str(c)
    assert "minus its mean error on the labelled items 0.333" in str(c)  # subtracted, never "+0.333"
    with pytest.raises(ValueError, match="bounds must be"):
        ppi_mean(judged, lj, lh, bounds=(1.0, 0.0))


def test_ppi_with_an_unbiased_judge_is_the_judge_mean():
    rng = np.random.default_rng(1)
    y = rng.random(30)
    p = ppi_mean(rng.random(200), y, y)  # the judge equals the human on the labelled items
    assert p.rectifier == 0.0 and p.estimate == p.judge_mean


def test_ppi_refuses_bad_input():
    with pytest.raises(ValueError, match="at least 2 values"):
        ppi_mean([1.0], [1.0, 0.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="NaN"):
        ppi_mean([1.0, float("nan")], [1.0, 0.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="must score the same items"):
        ppi_mean([1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 0.0])
