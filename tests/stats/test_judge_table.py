"""One table of labels and verdicts -> every judge-check figure (ragworkbook.stats.judge_table)."""

from __future__ import annotations

import math

from ragworkbook.stats.judge_table import JudgeTable, PairChoice, Rating, judge_statistics


def _binary_table() -> JudgeTable:
    # 6 questions, a good (1) and a bad (0) item each; the judge calls every item good but q5's bad one
    ratings = tuple(Rating(f"q{i}", label, 1 if (i, label) != (5, 0) else 0)
                    for i in range(6) for label in (1, 0))
    pairs = tuple(PairChoice.from_scores(f"q{i}", (1.0, 0.0 if i == 5 else 1.0), (0.9, 0.1))
                  for i in range(6))
    return JudgeTable(ratings, pairs, (0, 1), positive=1, negative=0,
                      repeats=((1, 1, None), (1, 0, 1)), flags={"parse_failure": [False] * 11 + [True]})


def test_binary_labels_give_rates_kappa_and_the_baseline_difference():
    st = judge_statistics(_binary_table(), n_resamples=200)
    assert st.tpr.value == 1.0 and math.isclose(st.tnr.value, 1 / 6)
    assert math.isclose(st.agreement.value, 7 / 12) and st.agreement.n == 12
    assert "pairs" in st.kappa.method  # the two items of a question are resampled together
    pa = st.pairwise_accuracy
    assert (pa.wins, pa.ties, pa.losses) == (1, 5, 0) and math.isclose(pa.value, 3.5 / 6)
    assert st.baseline_accuracy.value == 1.0
    assert st.difference.estimate.n == 6 and math.isclose(st.difference.estimate.value, -2.5 / 6)
    assert st.difference.verdict in ("worse", "not shown different") and 0 < st.difference.p_value <= 1
    assert (st.majority_label, st.majority_agreement) == (0, 0.5)
    assert math.isclose(st.rates["parse_failure"].value, 1 / 12)
    sc = st.self_consistency
    assert (sc.compared, sc.failed, sc.flip_rate.n) == (2, 1, 2) and sc.flip_rate.too_few
    assert st.by_rater == {} and st.between_raters is None and st.preference is None


def test_two_raters_pool_by_unit_and_give_the_ceiling():
    truth = [("A", "A"), ("B", "B"), ("A", "tie"), ("B", "A"), ("tie", "tie"), ("A", "A")] * 2
    judge = ["A", "B", "inconsistent", None, "tie", "B"] * 2
    ratings = tuple(Rating(i, h, judge[i], str(n + 1), "A")
                    for i, hs in enumerate(truth) for n, h in enumerate(hs))
    st = judge_statistics(JudgeTable(ratings, (), ("A", "tie", "B"), preference=("A", "B")), n_resamples=200)
    # 8 answered units (a verdict in A, tie, B) x 2 raters, resampled by unit
    assert st.agreement.n == 16 and "8 pairs of labels" in st.agreement.method
    assert math.isclose(st.agreement.value, 12 / 16)
    assert set(st.by_rater) == {"1", "2"} and math.isclose(st.by_rater["1"].agreement.value, 6 / 8)
    assert math.isclose(st.between_raters.agreement.value, 8 / 12)
    assert st.baseline is not None and st.baseline.agreement.n == 24
    assert math.isclose(st.preference.value, 6 / 18)  # B among the 18 decisive labels (A or B)
