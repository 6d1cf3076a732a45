"""Single-query retrieval metrics: worked examples, conventions, bad input, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import reference
from hypothesis import given, settings
from hypothesis import strategies as st

from ragworkbook.metrics.retrieval import (
    average_precision,
    dcg_at_k,
    dcg_from_grades,
    gain_values,
    hit_rate_at_k,
    ndcg_at_k,
    ndcg_from_grades,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
)

# --------------------------------------------------------------------------- documented numbers


def test_a1_recall():
    ranking = ["doc_3", "doc_7", "doc_1", "doc_5", "doc_2"]
    relevant = {"doc_1", "doc_5", "doc_9"}
    assert round(recall_at_k(ranking, relevant, 3), 2) == 0.33
    assert round(recall_at_k(ranking, relevant, 5), 2) == 0.67


def test_a2_mrr():
    rankings = [["x", "r"], ["x", "y", "r"], ["r"]]
    mrr = np.mean([reciprocal_rank(r, {"r"}) for r in rankings])
    assert round(mrr, 3) == 0.611


def test_a3_snippet_definition():
    grades = [3, 0, 2, 1, 0]
    assert round(ndcg_from_grades(grades, 3), 3) == 0.840
    assert round(ndcg_from_grades(grades, 5), 3) == 0.930


def test_carbon_pricing_b1_to_b4_and_b9(carbon_ranking, carbon_grades):
    ranking, grades = carbon_ranking, carbon_grades
    assert [grades[d] for d in ranking] == [0, 2, 3, 1, 1]
    assert round(precision_at_k(ranking, grades, 3), 3) == 0.667
    assert recall_at_k(ranking, grades, 3) == 0.5
    assert precision_at_k(ranking, grades, 5) == 0.8
    assert recall_at_k(ranking, grades, 5) == 1.0
    assert reciprocal_rank(ranking, grades) == 0.5
    assert round(ndcg_at_k(ranking, grades, 5, gain="exponential"), 3) == 0.632
    assert round(ndcg_at_k(ranking, grades, 5), 3) == 0.689
    assert round(average_precision(ranking, grades), 3) == 0.679
    g = gain_values([3, 2], "exponential")
    assert round(g[0] / g[1], 1) == 2.3


# --------------------------------------------------------------------------- DCG by hand and by reference

# grades in rank order, cutoff, gain -> DCG worked out by hand (discount log2(rank + 1): 1, 1.585, 2, ...)
HAND_DCG = [
    ([3, 0, 2, 1, 0], 1, "linear", 3.0),
    ([3, 0, 2, 1, 0], 3, "linear", 3 / 1 + 0 + 2 / 2),  # 4.0
    ([3, 0, 2, 1, 0], 3, "exponential", 7 / 1 + 0 + 3 / 2),  # 8.5
    ([0, 2, 3, 1, 1], 5, "linear", 0 + 2 / math.log2(3) + 3 / 2 + 1 / math.log2(5) + 1 / math.log2(6)),
    ([0, 2, 3, 1, 1], 5, "exponential", 0 + 3 / math.log2(3) + 7 / 2 + 1 / math.log2(5) + 1 / math.log2(6)),
    ([0, 2, 3, 1, 1], 8, "linear", 3.5794),  # k beyond the ranking adds nothing
    ([0, 0, 0], 3, "linear", 0.0),
    ([-1, 2], 2, "exponential", 3 / math.log2(3)),  # a negative grade has gain 0
]


@pytest.mark.parametrize("grades, k, gain, expected", HAND_DCG)
def test_dcg_by_hand(grades, k, gain, expected):
    ranking = [f"d{i}" for i in range(len(grades))]
    relevance = dict(zip(ranking, grades, strict=True))
    assert dcg_at_k(ranking, relevance, k, gain) == pytest.approx(expected, abs=5e-5)
    assert dcg_from_grades(grades, k, gain) == pytest.approx(expected, abs=5e-5)


def test_ndcg_by_hand_on_the_carbon_example(carbon_ranking, carbon_grades):
    # ideal order 3, 2, 1, 1, 0: IDCG@3 = 3 + 2/log2(3) + 1/2; DCG@3 = 0 + 2/log2(3) + 3/2
    idcg3 = 3 + 2 / math.log2(3) + 1 / 2
    dcg3 = 2 / math.log2(3) + 3 / 2
    assert ndcg_at_k(carbon_ranking, carbon_grades, 3) == pytest.approx(dcg3 / idcg3)
    assert ndcg_from_grades([0, 2, 3, 1, 1], 3) == pytest.approx(dcg3 / idcg3)
    # an unretrieved grade-3 document enters the ideal only: IDCG@3 = 3 + 3/log2(3) + 2/2
    with_missing = {**carbon_grades, "unretrieved": 3}
    assert ndcg_at_k(carbon_ranking, with_missing, 3) == pytest.approx(dcg3 / (3 + 3 / math.log2(3) + 1))


@pytest.mark.reference
@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-1, 3), min_size=2, max_size=12), st.integers(1, 15),
       st.sampled_from(["linear", "exponential"]))
def test_dcg_and_ndcg_equal_scikit_learn(grades, k, gain):
    """scikit-learn's dcg_score / ndcg_score (two documents at least) rank by y_score: scores falling
    with the rank give our order. Its gain is y_true itself, so the exponential gain goes in as
    2**grade - 1."""
    skm = reference("sklearn.metrics")
    ranking = [f"d{i}" for i in range(len(grades))]
    relevance = dict(zip(ranking, grades, strict=True))
    positive = np.maximum(grades, 0)
    y_true = [positive if gain == "linear" else np.exp2(positive) - 1]
    y_score = [np.arange(len(grades), 0, -1, dtype=float)]
    assert dcg_at_k(ranking, relevance, k, gain) == pytest.approx(skm.dcg_score(y_true, y_score, k=k))
    if positive.any():  # every judged document is in the ranking: the same ideal as scikit-learn's
        assert ndcg_at_k(ranking, relevance, k, gain) == pytest.approx(skm.ndcg_score(y_true, y_score, k=k))
    else:
        assert ndcg_at_k(ranking, relevance, k, gain) == 0.0


# --------------------------------------------------------------------------- conventions


def test_k_beyond_ranking_divides_by_k():
    assert precision_at_k(["a", "b"], {"a"}, 10) == 0.1
    assert recall_at_k(["a", "b"], {"a"}, 10) == 1.0


def test_grades_at_or_below_zero_are_not_relevant():
    rel = {"a": 0, "b": -1, "c": 2}
    assert precision_at_k(["a", "b", "c"], rel, 3) == pytest.approx(1 / 3)
    assert recall_at_k(["a", "b", "c"], rel, 3) == 1.0
    assert dcg_at_k(["b"], rel, 1) == 0.0


def test_no_relevant_documents_gives_zero():
    for f in (recall_at_k, hit_rate_at_k, precision_at_k):
        assert f(["a"], {"a": 0}, 1) == 0.0
    assert reciprocal_rank(["a"], set()) == 0.0
    assert average_precision(["a"], {"a": 0}) == 0.0
    assert r_precision(["a"], {}) == 0.0
    assert ndcg_at_k(["a"], {"a": 0}, 1) == 0.0


def test_ideal_uses_all_judged_documents():
    # "z" is relevant but not retrieved: NDCG < 1 although the ranking is sorted.
    assert ndcg_at_k(["a", "b"], {"a": 2, "b": 1, "z": 3}, 2) < 1.0
    assert ndcg_at_k(["a", "b"], {"a": 2, "b": 1}, 2) == 1.0


def test_reciprocal_rank_with_cutoff_and_ap_denominator():
    assert reciprocal_rank(["x", "y", "a"], {"a"}, k=2) == 0.0
    assert reciprocal_rank(["x", "y", "a"], {"a"}, k=3) == pytest.approx(1 / 3)
    # AP@2 divides by all 3 relevant documents (trec_eval map_cut).
    assert average_precision(["a", "b", "c"], {"a", "b", "c"}, k=2) == pytest.approx(2 / 3)


def test_r_precision():
    assert r_precision(["a", "x", "b", "c"], {"a", "b", "c"}) == pytest.approx(2 / 3)


def test_relevant_as_list_and_array_ranking():
    assert precision_at_k(np.array(["a", "b"]), ["b"], 2) == 0.5
    assert hit_rate_at_k(("x", "b"), ["b"], 1) == 0.0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("k", [0, -1, 1.5, "3", True, None])
def test_bad_k(k):
    with pytest.raises(ValueError, match="k must be a positive integer"):
        precision_at_k(["a"], {"a"}, k)


def test_ranking_must_be_a_sequence():
    with pytest.raises(TypeError, match="got the string 'abc'"):
        precision_at_k("abc", {"a"}, 1)
    with pytest.raises(TypeError, match="a set or dict has no rank order"):
        recall_at_k({"a", "b"}, {"a"}, 1)
    with pytest.raises(TypeError, match="a set or dict has no rank order"):
        ndcg_at_k({"a": 1}, {"a": 1}, 1)


def test_duplicates_in_ranking_are_an_error():
    with pytest.raises(ValueError, match="duplicate document 'a' at rank 3"):
        precision_at_k(["a", "b", "a"], {"a"}, 3)


def test_unknown_gain():
    with pytest.raises(ValueError, match="unknown gain 'exp'.*'linear'.*'exponential'"):
        ndcg_at_k(["a"], {"a": 1}, 1, gain="exp")
    with pytest.raises(ValueError, match="unknown gain"):
        dcg_from_grades([1], 1, gain="log")


def test_nan_grades():
    with pytest.raises(ValueError, match="NaN"):
        ndcg_from_grades([1, float("nan")], 2)
    with pytest.raises(ValueError, match="grade of 'a' is NaN"):
        ndcg_at_k(["a"], {"a": math.nan}, 1)


def test_inconsistent_ideal_grades():
    with pytest.raises(ValueError, match=r"DCG \(3\.0000\) exceeds the ideal DCG \(1\.0000\)"):
        ndcg_from_grades([3], 1, ideal_grades=[1])
    with pytest.raises(ValueError, match="exceeds the ideal DCG"):
        ndcg_from_grades([1], 1, ideal_grades=[0])
    assert ndcg_from_grades([1, 2], 2, ideal_grades=[2, 1, 3]) < 1.0


def test_relevant_as_string_is_refused():
    with pytest.raises(TypeError, match="got the string"):
        recall_at_k(["a"], "a", 1)


# --------------------------------------------------------------------------- properties

docs = st.lists(st.integers(0, 30), unique=True, max_size=25)
grades_st = st.dictionaries(st.integers(0, 30), st.integers(-1, 3), max_size=20)
ks = st.integers(1, 30)


@settings(max_examples=150, deadline=None)
@given(docs, grades_st, ks, st.sampled_from(["linear", "exponential"]))
def test_every_metric_in_unit_interval(ranking, rel, k, gain):
    vals = [
        precision_at_k(ranking, rel, k), recall_at_k(ranking, rel, k), hit_rate_at_k(ranking, rel, k),
        reciprocal_rank(ranking, rel), reciprocal_rank(ranking, rel, k), average_precision(ranking, rel),
        average_precision(ranking, rel, k), r_precision(ranking, rel), ndcg_at_k(ranking, rel, k, gain),
    ]
    assert all(0.0 <= v <= 1.0 + 1e-12 for v in vals), vals


@settings(max_examples=100, deadline=None)
@given(grades_st, ks, st.sampled_from(["linear", "exponential"]))
def test_ideal_ranking_has_ndcg_one(rel, k, gain):
    ideal = sorted(rel, key=lambda d: -rel[d])
    expected = 1.0 if any(g > 0 for g in rel.values()) else 0.0
    assert ndcg_at_k(ideal, rel, k, gain) == pytest.approx(expected)


@settings(max_examples=100, deadline=None)
@given(docs, grades_st)
def test_recall_never_falls_with_k_and_precision_times_k_is_hits(ranking, rel):
    recalls = [recall_at_k(ranking, rel, k) for k in range(1, 30)]
    assert all(a <= b for a, b in zip(recalls, recalls[1:], strict=False))
    for k in range(1, 30):
        hits = sum(1 for d in ranking[:k] if rel.get(d, 0) > 0)
        assert round(precision_at_k(ranking, rel, k) * k) == hits


# --------------------------------------------------------------------------- cumulative gain

def test_cumulative_gain_of_the_carbon_example(carbon_ranking, carbon_grades):
    """Grades 0, 2, 3, 1, 1 in rank order: CG@3 = 0 + 2 + 3 linear, 0 + 3 + 7 exponential."""
    from ragworkbook.metrics.retrieval import cg_from_grades, cumulative_gain

    assert cumulative_gain(carbon_ranking, carbon_grades, 3) == 5.0
    assert cumulative_gain(carbon_ranking, carbon_grades, 3, gain="exponential") == 10.0
    assert cumulative_gain(carbon_ranking, carbon_grades, 5) == 7.0
    assert cg_from_grades([0, 2, 3, 1, 1], 7) == 7.0  # k beyond the list adds nothing
    with pytest.raises(ValueError, match="gain"):
        cumulative_gain(carbon_ranking, carbon_grades, 3, gain="quadratic")
    with pytest.raises(ValueError, match="k must be"):
        cumulative_gain(carbon_ranking, carbon_grades, 0)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=12), ks, st.sampled_from(["linear", "exponential"]),
       st.randoms())
def test_cumulative_gain_ignores_order_and_bounds_dcg(grades, k, gain, rnd):
    from ragworkbook.metrics.retrieval import cg_from_grades

    cg = cg_from_grades(grades, k, gain)
    top = list(grades[:k])
    rnd.shuffle(top)
    assert cg_from_grades(top + list(grades[k:]), k, gain) == pytest.approx(cg)
    assert cg == pytest.approx(float(np.sum(gain_values(grades[:k], gain))))
    assert dcg_from_grades(grades, k, gain) <= cg + 1e-12
