"""Risk-coverage curves (ragworkbook.evaluation.abstention) against a brute-force reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragworkbook.evaluation.abstention import (
    choose_threshold,
    oracle_aurc,
    plot_risk_coverage,
    risk_coverage,
    selective_result,
)


def brute_force(confidence, loss):
    """For every distinct threshold t, answer the items with confidence >= t (written plainly)."""
    rows = []
    for t in sorted(set(confidence), reverse=True):
        answered = [y for c, y in zip(confidence, loss, strict=True) if c >= t]
        rows.append((t, len(answered), sum(answered) / len(answered)))
    return rows


items = st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=n, max_size=n),
    st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n)))


@settings(max_examples=200, deadline=None)
@given(items)
def test_curve_matches_brute_force_with_ties(data):
    confidence, loss = data
    curve = risk_coverage(confidence, loss)
    ref = brute_force(confidence, loss)
    assert curve.thresholds.tolist() == [t for t, _, _ in ref]
    assert curve.answered.tolist() == [k for _, k, _ in ref]
    assert curve.risk == pytest.approx([r for _, _, r in ref])
    assert curve.coverage[-1] == 1.0 and curve.overall_risk == pytest.approx(np.mean(loss))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30, unique=True),
       st.randoms(use_true_random=False))
def test_aurc_without_ties_is_the_mean_of_the_top_i_risks(confidence, rnd):
    loss = [rnd.randint(0, 1) for _ in confidence]
    order = np.argsort(-np.asarray(confidence))
    y = np.asarray(loss, dtype=float)[order]
    expected = np.mean(np.cumsum(y) / np.arange(1, len(y) + 1))  # Geifman & El-Yaniv's definition
    assert risk_coverage(confidence, loss).aurc == pytest.approx(expected)


def test_a_hand_worked_curve_with_ties():
    # confidence 0.9 (right), 0.9 (wrong), 0.5 (right), 0.1 (wrong)
    curve = risk_coverage([0.9, 0.5, 0.9, 0.1], [0, 0, 1, 1])
    assert curve.thresholds.tolist() == [0.9, 0.5, 0.1]
    assert curve.coverage.tolist() == [0.5, 0.75, 1.0]
    assert curve.risk.tolist() == pytest.approx([0.5, 1 / 3, 0.5])
    # step integral: 0.5 * 0.5 + (1/3) * 0.25 + 0.5 * 0.25
    assert curve.aurc == pytest.approx(0.25 + 1 / 12 + 0.125)
    assert curve.at_coverage(0.8) == 1 and curve.at_coverage(1.0) == 2
    ci = curve.interval(0)
    assert (ci.k, ci.n) == (1, 2)
    frame = curve.to_frame()
    assert list(frame.columns) == ["threshold", "answered", "coverage", "risk", "risk_low", "risk_high"]
    with pytest.raises(ValueError, match="smallest coverage is 0.500"):
        curve.at_coverage(0.25)


def test_a_perfect_signal_reaches_the_oracle_and_a_reversed_one_is_worst():
    loss = [0, 0, 0, 1, 1]
    perfect = risk_coverage([5, 4, 3, 2, 1], loss)
    reversed_ = risk_coverage([1, 2, 3, 4, 5], loss)
    assert perfect.aurc == pytest.approx(oracle_aurc(loss))
    assert perfect.risk[:3].tolist() == [0, 0, 0]
    assert reversed_.aurc > perfect.aurc
    constant = risk_coverage([1] * 5, loss)  # one threshold: everything or nothing
    assert constant.coverage.tolist() == [1.0] and constant.aurc == pytest.approx(0.4)


def test_fractional_losses_have_no_proportion_interval():
    curve = risk_coverage([0.2, 0.8], [0.5, 0.0])
    assert not curve.binary and curve.risk.tolist() == [0.0, 0.25]
    with pytest.raises(ValueError, match="needs binary losses"):
        curve.interval(0)
    assert "risk_low" not in curve.to_frame()


def test_threshold_chosen_on_calibration_items_and_applied_to_others():
    cal_c, cal_y = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0, 0, 0, 1, 0, 1]
    t = choose_threshold(cal_c, cal_y, max_risk=0.25)
    assert t == 0.5  # answering down to 0.5: 1 wrong of 5 = 0.2; down to 0.4: 2 of 6
    assert choose_threshold(cal_c, cal_y, max_risk=0.0) == 0.7
    assert choose_threshold([0.9, 0.1], [1, 1], max_risk=0.5) is None
    res = selective_result([0.95, 0.55, 0.45, 0.3], [0, 1, 1, 0], t)
    assert (res.answered, res.n, res.coverage, res.risk) == (2, 4, 0.5, 0.5)
    assert (res.risk_interval.k, res.risk_interval.n) == (1, 2)
    with pytest.raises(ValueError, match="max_risk is a risk from 0 to 1"):
        choose_threshold(cal_c, cal_y, max_risk=2)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="one confidence per loss"):
        risk_coverage([0.1, 0.2], [1])
    with pytest.raises(ValueError, match="2 items have no confidence .* items 1, 2"):
        risk_coverage([0.1, None, float("nan")], [1, 0, 0])
    with pytest.raises(ValueError, match="from 0 .right. to 1 .wrong."):
        risk_coverage([0.1, 0.2], [1, 2])
    with pytest.raises(ValueError, match="no items"):
        risk_coverage([], [])
    with pytest.raises(TypeError, match="not strings"):
        risk_coverage("0.1", "1")


def test_plot_draws_one_line_per_signal():
    import matplotlib

    matplotlib.use("Agg")
    fig = plot_risk_coverage({"a": risk_coverage([3, 2, 1], [0, 1, 1]),
                              "b": risk_coverage([1, 2, 3], [0, 1, 1])})
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels[0].startswith("a (AURC") and labels[1].startswith("b (AURC")
    assert labels[2] == "answer everything (0.67)"
