"""The human-evaluation protocol's tools: blind sheets, spot checks, annotator agreement, sign test."""

from __future__ import annotations

import pytest
from conftest import reference
from scipy.stats import binomtest

from ragworkbook.evaluation.human_eval import (
    annotator_agreement,
    blind_pairs,
    preference_summary,
    spot_check_sample,
    unblind,
)

ITEMS = [(f"i{k}", f"question {k}", f"answer A{k}", f"answer B{k}") for k in range(20)]


def test_blind_sheet_hides_the_order_and_unblinds_back():
    sheet = blind_pairs(ITEMS, seed=3)
    firsts = [p.first_is for p in sheet]
    assert set(firsts) == {"A", "B"}  # both orders occur
    for p, (_, _, a, b) in zip(sheet, ITEMS, strict=True):
        assert {p.answer_1, p.answer_2} == {a, b}
        assert (p.answer_1 == a) == (p.first_is == "A")
        assert "first_is" not in p.sheet_row() and "A" not in "".join(p.sheet_row())
    # an annotator who always picks what is shown first
    back = unblind({p.item_id: "1" for p in sheet}, sheet)
    assert [back[p.item_id] for p in sheet] == firsts
    assert unblind({p.item_id: "TIE" for p in sheet}, sheet)["i0"] == "tie"
    assert blind_pairs(ITEMS, seed=3) == sheet  # seeded


def test_unblind_refuses_what_it_cannot_map():
    sheet = blind_pairs(ITEMS[:2])
    with pytest.raises(ValueError, match="no choice for 1 items: i1"):
        unblind({"i0": "1"}, sheet)
    with pytest.raises(ValueError, match="not on the sheet: x"):
        unblind({"i0": "1", "i1": "2", "x": "1"}, sheet)
    with pytest.raises(ValueError, match="item i1: the choice is '1', '2' or 'tie', got 'A'"):
        unblind({"i0": "1", "i1": "A"}, sheet)
    with pytest.raises(ValueError, match="repeated: i0"):
        blind_pairs([ITEMS[0], ITEMS[0]])


def test_spot_check_sample_is_seeded_and_in_order():
    ids = [f"q{k:03d}" for k in range(100)]
    s = spot_check_sample(ids, 10, seed=7)
    assert len(s) == 10 and s == sorted(s) and s == spot_check_sample(ids, 10, seed=7)
    assert s != spot_check_sample(ids, 10, seed=8)
    with pytest.raises(ValueError, match="n must be a whole number from 1 to 100"):
        spot_check_sample(ids, 0, seed=1)


@pytest.mark.reference
def test_annotator_agreement_matches_sklearn():
    skm = reference("sklearn.metrics")
    a = [-2, -1, 0, 1, 2, 2, 1, 0, -1, -2, 0, 1]
    b = [-2, 0, 0, 2, 2, 1, 1, -1, -1, -1, 1, 1]
    ag = annotator_agreement(a, b, [-2, -1, 0, 1, 2], n_resamples=200)
    assert ag.exact.value == pytest.approx(6 / 12)
    assert ag.kappa.value == pytest.approx(skm.cohen_kappa_score(a, b))
    assert ag.weighted_kappa.value == pytest.approx(skm.cohen_kappa_score(a, b, weights="quadratic"))
    assert ag.within_one.value == 1.0
    assert ag.kappa.low <= ag.kappa.value <= ag.kappa.high
    nominal = annotator_agreement(["x", "y"], ["x", "x"], ["x", "y"], ordinal=False, n_resamples=50)
    assert nominal.weighted_kappa is None and nominal.within_one is None


def test_annotator_agreement_bad_input():
    with pytest.raises(ValueError, match="label 3 is not on the scale"):
        annotator_agreement([3], [1], [0, 1])
    with pytest.raises(ValueError, match="same items: 2 and 1 labels"):
        annotator_agreement([0, 1], [1], [0, 1])


def test_preference_summary_is_the_sign_test():
    v = ["B"] * 9 + ["A"] * 3 + ["tie"] * 4
    s = preference_summary(v)
    assert (s.a, s.b, s.ties) == (3, 9, 4)
    assert s.win_rate_b.value == 0.75 and s.win_rate_b.n == 12
    assert s.p_value == pytest.approx(binomtest(9, 12, 0.5).pvalue)
    with pytest.raises(ValueError, match="a verdict is 'A', 'B' or 'tie', got 'C'"):
        preference_summary(["A", "c"])
