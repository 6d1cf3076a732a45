"""ragworkbook.stats.agreement against scikit-learn and statsmodels."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import reference
from hypothesis import given, settings
from hypothesis import strategies as st

from ragworkbook.stats.agreement import (
    accuracy,
    cohen_kappa,
    confusion_matrix,
    kappa_interpretation,
    paired_labels,
    pairwise_preference,
    run_variance,
)

labels_pair = st.integers(2, 30).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 3), min_size=n, max_size=n),
                        st.lists(st.integers(0, 3), min_size=n, max_size=n)))


def sklearn_kappa(*args, **kwargs) -> float:
    """scikit-learn's Cohen's kappa, its 0/0 warning silenced (it then gives NaN)."""
    skm = reference("sklearn.metrics")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", reference("sklearn.exceptions").UndefinedMetricWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        return skm.cohen_kappa_score(*args, **kwargs)


@pytest.mark.reference
@settings(max_examples=200, deadline=None)  # the first example imports scikit-learn
@given(labels_pair, st.sampled_from([None, "linear", "quadratic"]))
def test_kappa_matches_sklearn(pair, weights):
    a, b = pair
    labs = [0, 1, 2, 3]
    ref = sklearn_kappa(a, b, labels=labs, weights=weights)
    ours = cohen_kappa(a, b, labels=labs, weights=weights)
    if np.isnan(ref):  # sklearn: 0/0 when both raters use one and the same label
        assert len(set(a) | set(b)) == 1 and ours == 1.0  # our convention: full agreement
    else:
        assert ours == pytest.approx(ref, abs=1e-12)


@pytest.mark.reference
def test_kappa_matches_statsmodels_and_a_hand_example():
    cohens_kappa = reference("statsmodels.stats.inter_rater").cohens_kappa

    a = [1, 1, 0, 1, 0, 0, 1, 1, 1, 0]
    b = [1, 0, 0, 1, 0, 1, 1, 1, 1, 1]
    # p_o = 7/10; p_e = 0.6*0.7 + 0.4*0.3 = 0.54; kappa = 0.16/0.46
    assert cohen_kappa(a, b) == pytest.approx(0.16 / 0.46)
    table, _ = confusion_matrix(a, b)
    assert cohen_kappa(a, b) == pytest.approx(cohens_kappa(table).kappa)
    assert accuracy(a, b) == 0.7


@pytest.mark.reference
def test_confusion_matches_sklearn_and_strings():
    skm = reference("sklearn.metrics")
    a = ["yes", "no", "yes", "yes"]
    b = ["yes", "yes", "no", "yes"]
    m, labs = confusion_matrix(a, b)
    assert labs == ["no", "yes"]
    assert m.tolist() == [[0, 1], [1, 2]]  # rows: rater a; columns: rater b
    assert (m == skm.confusion_matrix(a, b, labels=labs)).all()
    with pytest.raises(ValueError, match="not in labels"):
        confusion_matrix(a, b, labels=["yes"])


def test_none_labels_are_dropped_and_counted():
    p = paired_labels([1, None, 0, 1], [1, 1, None, 0])
    assert (p.a, p.b, p.n_dropped, p.dropped_index) == ([1, 1], [1, 0], 2, [1, 2])
    assert accuracy([1, None, 0, 1], [1, 1, None, 0]) == 0.5
    with pytest.raises(ValueError, match="every judgment failed"):
        cohen_kappa([None, None], [1, 0])
    with pytest.raises(ValueError, match="different numbers of items"):
        accuracy([1, 0], [1])
    with pytest.raises(ValueError, match="weights"):
        cohen_kappa([1], [1], weights="cubic")


@pytest.mark.reference
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_degenerate_kappa():
    cohens_kappa = reference("statsmodels.stats.inter_rater").cohens_kappa

    # one label used by both raters for everything: chance agreement is 1, kappa is 0/0
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0  # our documented convention
    assert np.isnan(sklearn_kappa([1, 1, 1], [1, 1, 1], labels=[0, 1]))  # scikit-learn: NaN
    assert np.isnan(cohens_kappa(np.array([[3, 0], [0, 0]])).kappa)  # statsmodels: NaN
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert kappa_interpretation(0.5) == "moderate"
    assert kappa_interpretation(-0.1).startswith("poor")
    assert kappa_interpretation(0.95) == "almost perfect"


def test_pairwise_preference():
    p = pairwise_preference([0.9, 0.5, 0.7, None, 0.2], [0.8, 0.5, 0.9, 0.1, 0.1])
    assert (p.wins, p.ties, p.losses, p.n, p.n_dropped) == (2, 1, 1, 4, 1)
    assert p.win_rate == pytest.approx(2 / 3) and p.win_rate_ties_half == pytest.approx(2.5 / 4)
    p = pairwise_preference([0.9, 0.5], [0.85, 0.5], tie_tolerance=0.1)
    assert (p.wins, p.ties, p.losses, p.win_rate) == (0, 2, 0, None)
    p = pairwise_preference(preferences=["A", "B", "tie", "A", None])
    assert (p.wins, p.losses, p.ties, p.n_dropped) == (2, 1, 1, 1)
    with pytest.raises(ValueError, match="'A', 'B', 'tie'"):
        pairwise_preference(preferences=["a"])
    with pytest.raises(ValueError, match="not both"):
        pairwise_preference([1], [1], preferences=["A"])


def test_run_variance():
    rv = run_variance([[1.0, 0.5, None], [1.0, 0.0, 1.0], [1.0, 0.5, 1.0]])
    assert rv.n_runs == 3 and rv.n_items == 3 and rv.n_failed == 1
    assert rv.run_means == pytest.approx([0.75, 2 / 3, 2.5 / 3])
    assert rv.std == pytest.approx(np.std(rv.run_means, ddof=1))
    assert rv.flip_rate == pytest.approx(1 / 3)  # only the second item changes
    assert rv.item_std == pytest.approx((0 + np.std([0.5, 0, 0.5], ddof=1) + 0) / 3)
    assert run_variance([[1, 0]]).std == 0.0
    with pytest.raises(ValueError, match="same items"):
        run_variance([[1, 0], [1]])
    with pytest.raises(ValueError, match="every judgment failed"):
        run_variance([[None, None]])
