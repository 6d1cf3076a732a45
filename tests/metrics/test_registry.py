"""The metric registry: one declaration per metric, one parser, names kept as written."""

from __future__ import annotations

import pytest

from ragworkbook.metrics.registry import (
    FAMILIES,
    REGISTRY,
    Metric,
    get_spec,
    known_names,
    parse_metric,
    parse_metrics,
    specs,
)


def _m(name: str, k: int | None = None) -> Metric:
    return Metric(REGISTRY[name], k)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("P@3", _m("precision", 3)), ("precision@3", _m("precision", 3)), ("p_5", _m("precision", 5)),
        ("P_5", _m("precision", 5)), ("P.5", _m("precision", 5)),
        ("recall@3", _m("recall", 3)), ("recall_100", _m("recall", 100)), ("R@5", _m("recall", 5)),
        ("hit_rate@3", _m("hit_rate", 3)), ("success@1", _m("hit_rate", 1)),
        ("success_10", _m("hit_rate", 10)),
        ("mrr", _m("mrr")), ("MRR@5", _m("mrr", 5)), ("recip_rank", _m("mrr")), ("RR@10", _m("mrr", 10)),
        ("map", _m("map")), ("AP", _m("map")), ("map_cut_10", _m("map", 10)),
        ("ndcg@3", _m("ndcg", 3)), ("nDCG@10", _m("ndcg", 10)), ("ndcg_cut_10", _m("ndcg", 10)),
        ("ndcg", _m("ndcg")), ("r_precision", _m("r_precision")), ("Rprec", _m("r_precision")),
        ("RPrec", _m("r_precision")), ("dcg@2", _m("dcg", 2)), ("ERR@10", _m("err", 10)), ("err", _m("err")),
        ("bleu", _m("bleu")), ("ROUGE-L", _m("rouge_l")), ("f1", _m("token_f1")),
        ("groundedness", _m("faithfulness")), ("context_precision_with_reference", _m("context_precision")),
        ("hallucination_rate", _m("hallucination")),
    ],
)
def test_parse_every_spelling(text, expected):
    got = parse_metric(text)
    assert got == expected
    assert got.name == text  # printed as the user wrote it
    assert got.key == expected.key  # compared by metric and cutoff


def test_keys_and_labels():
    m = parse_metric(" ndcg_cut_10 ")
    assert (m.name, m.key, m.kind, m.k, m.family) == ("ndcg_cut_10", "ndcg@10", "ndcg", 10, "retrieval")
    assert str(m) == "ndcg_cut_10"
    assert REGISTRY["precision"].with_k(3).name == "precision@3"
    assert parse_metric("hallucination").higher_is_better is False
    assert parse_metric("faithfulness").higher_is_better is True


def test_parse_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match="unknown metric 'blue'; known metrics: precision@k, recall@k"):
        parse_metric("blue")
    with pytest.raises(ValueError, match="needs a cutoff, e.g. 'precision@10'"):
        parse_metric("P")
    with pytest.raises(ValueError, match="k must be >= 1"):
        parse_metric("ndcg@0")
    with pytest.raises(ValueError, match=r"r_precision takes no cutoff \(its cutoff is R\)"):
        parse_metric("r_precision@3")
    with pytest.raises(ValueError, match="bleu takes no cutoff"):
        parse_metric("bleu@4")
    with pytest.raises(ValueError, match="'bleu' is a generation metric; only retrieval metrics apply"):
        parse_metric("bleu", "retrieval")
    with pytest.raises(TypeError, match="a metric name must be a string"):
        parse_metric(3)


def test_parse_metrics_commas_dedup_and_order():
    got = parse_metrics(["P@3,ndcg@3", "mrr", "precision@3", "recip_rank"])
    assert [m.name for m in got] == ["P@3", "ndcg@3", "mrr"]
    with pytest.raises(ValueError, match="no metric given"):
        parse_metrics(" , ")


def test_every_spec_is_well_formed_and_aliases_are_unique():
    seen = {}
    for s in specs():
        assert s.family in FAMILIES and s.title and s.definition
        for name in (s.name, *s.aliases):
            assert name == name.lower()
            assert seen.setdefault(name, s.name) == s.name
        assert get_spec(s.name) is s
    assert known_names("generation").startswith("bleu, rouge_l")


def test_every_metric_has_exactly_one_implementation():
    """The engines implement exactly the registry's metrics: nothing declared without a kernel,
    no kernel without a declaration."""
    from ragworkbook.judging.metrics import DERIVED, METRICS
    from ragworkbook.metrics.batch import KERNELS
    from ragworkbook.metrics.generation import SCORERS

    assert set(KERNELS) == {s.name for s in specs("retrieval")}
    assert set(SCORERS) == {s.name for s in specs("generation")}
    assert set(METRICS) | set(DERIVED) == {s.name for s in specs("judged")}
    for name, (source, _) in DERIVED.items():
        assert REGISTRY[name].derived_from == source


def test_find_metric_matches_the_spelling_then_the_metric_and_cutoff():
    from ragworkbook.metrics.registry import find_metric

    names = ["recall@3", "ndcg@3", "token_f1"]
    assert find_metric("ndcg@3", names) == "ndcg@3"
    assert find_metric("ndcg_cut_3", names) == "ndcg@3"          # trec_eval's spelling
    assert find_metric("f1", names) == "token_f1"                 # an alias
    assert find_metric("ndcg@5", names) is None                   # another cutoff is another metric
    assert find_metric("mrr", names) is None
    with pytest.raises(ValueError, match="unknown metric"):
        find_metric("nope", names)
