import pytest

from ragworkbook.evaluation.targets import apply_targets, rate, targets_of, targets_table


@pytest.mark.parametrize(
    "metric,value,expected",
    [
        ("recall@10", 0.59, "poor"),
        ("recall@10", 0.60, "acceptable"),  # boundaries are acceptable
        ("recall@10", 0.80, "acceptable"),
        ("recall@10", 0.81, "good"),
        ("mrr", 0.29, "poor"),
        ("mrr", 0.5, "acceptable"),
        ("mrr@5", 0.51, "good"),
        ("reciprocal_rank", 0.4, "acceptable"),
        ("ndcg@10", 0.49, "poor"),
        ("ndcg@10", 0.71, "good"),
        ("faithfulness", 0.79, "poor"),
        ("faithfulness", 0.85, "acceptable"),
        ("faithfulness", 0.91, "good"),
        ("hallucination_rate", 0.11, "poor"),
        ("hallucination_rate", 0.10, "acceptable"),
        ("hallucination_rate", 0.05, "acceptable"),
        ("hallucination_rate", 0.049, "good"),
        ("hallucination", 0.08, "acceptable"),
    ],
)
def test_rate_general(metric, value, expected):
    assert rate(metric, value) == expected


def test_strict_domain_is_stricter():
    assert rate("faithfulness", 0.93) == "good"
    assert rate("faithfulness", 0.93, domain="strict") == "acceptable"
    assert rate("faithfulness", 0.96, domain="strict") == "good"
    assert rate("hallucination_rate", 0.03, domain="strict") == "acceptable"
    assert rate("hallucination_rate", 0.019, domain="strict") == "good"
    assert targets_of("strict")["recall"] == targets_of()["recall"]  # no strict row: the general one
    with pytest.raises(ValueError, match="unknown domain 'medical'"):
        targets_of("medical")


def test_table_matches_documented_bands():
    t = targets_table()
    assert list(t.index) == ["Recall@10", "MRR", "NDCG@10", "Faithfulness", "Hallucination rate"]
    assert t.loc["Recall@10"].tolist() == ["< 0.60", "0.60-0.80", "> 0.80"]
    assert t.loc["Hallucination rate"].tolist() == ["> 10%", "5%-10%", "< 5%"]
    assert targets_table("strict").loc["Hallucination rate"].tolist() == ["> 10%", "2%-10%", "< 2%"]


def test_apply_targets_mapping_skips_unknown_and_notes_k():
    df = apply_targets({"recall@3": 0.62, "bleu": 30.0, "mrr@3": 0.2, "faithfulness": float("nan")})
    assert list(df["metric"]) == ["recall@3", "mrr@3", "faithfulness"]
    assert list(df["rating"]) == ["acceptable", "poor", "n/a"]
    assert df.loc[0, "note"] == "target is for @10; applied to recall@3"
    assert df.loc[1, "note"] == ""


def test_apply_targets_empty_has_columns():
    df = apply_targets({"bleu": 1.0})
    assert df.empty and "rating" in df.columns


def test_errors_name_the_fix():
    with pytest.raises(ValueError, match="unknown domain 'medical'.*'strict'"):
        rate("mrr", 0.3, domain="medical")
    with pytest.raises(ValueError, match="no target for metric 'bleu'.*Recall@10"):
        rate("bleu", 0.3)
    with pytest.raises(TypeError, match="Report or a mapping"):
        apply_targets([0.3])


# --- the interval is rated too ------------------------------------------------------
@pytest.mark.parametrize("metric,value,ci,expected", [
    ("mrr@3", 0.708, (0.417, 0.917), "good, but the interval reaches acceptable"),   # notebook 12's mrr@3
    ("mrr", 0.6, (0.55, 0.9), "good"),                                                # all of it good
    ("recall@10", 0.7, (0.4, 0.9), "acceptable, but the interval spans poor to good"),
    ("recall@10", 0.55, (0.5, 0.6), "poor, but the interval reaches acceptable"),       # 0.60 is acceptable
    ("hallucination_rate", 0.04, (0.01, 0.12), "good, but the interval spans poor to good"),
    ("ndcg@10", float("nan"), (0.1, 0.2), "n/a"),
    ("ndcg@10", 0.6, (float("nan"), float("nan")), "acceptable"),                     # no interval
])
def test_a_rating_says_which_bands_the_interval_reaches(metric, value, ci, expected):
    assert rate(metric, value, ci=ci) == expected


def test_apply_targets_rates_the_intervals():
    df = apply_targets({"mrr@3": 0.708, "recall@3": 0.439}, intervals={"mrr@3": (0.417, 0.917)})
    assert df["band"].tolist() == ["good", "poor"]
    assert df["rating"].tolist() == ["good, but the interval reaches acceptable", "poor"]
    assert df.loc[0, ["ci_low", "ci_high"]].tolist() == [0.417, 0.917]
