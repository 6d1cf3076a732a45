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
    return REGISTRY[name].with_k(k)


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


def test_parameters_are_typed_bound_and_shown_in_the_key():
    m = parse_metric("ndcg@10(gain=exponential)")
    assert (m.k, m.kwargs["gain"], m.key, m.name) == (10, "exponential", "ndcg@10(gain=exponential)",
                                                      "ndcg@10(gain=exponential)")
    assert parse_metric("ndcg(gain=exponential)@10") == m
    assert parse_metric("ndcg@10") != m and parse_metric("ndcg@10").key == "ndcg@10"
    assert parse_metric("err@20(max_grade=3)").kwargs == {"k": 20, "max_grade": 3.0}
    assert parse_metric("iprec_at_recall@0.5").kwargs == {"level": 0.5}
    assert parse_metric("utility(coefficients=2,-1,0,0)").kwargs == {"coefficients": (2.0, -1.0, 0.0, 0.0)}
    # evaluation-wide defaults fill what a name leaves unset; the name wins, and keeps its label
    d = parse_metric("ndcg@5", defaults={"gain": "exponential"})
    assert (d.kwargs["gain"], d.name) == ("exponential", "ndcg@5")
    assert parse_metric("ndcg@5(gain=linear)", defaults={"gain": "exponential"}).kwargs["gain"] == "linear"
    assert [x.name for x in parse_metrics("ndcg@3(gain=exponential),mrr")] == ["ndcg@3(gain=exponential)",
                                                                             "mrr"]


def test_parameter_errors_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"gain must be one of linear, exponential; got 'exp'"):
        parse_metric("ndcg@3(gain=exp)")
    with pytest.raises(ValueError, match=r"ndcg has no parameter 'gian' \(its parameters: k, gain, gains\)"):
        parse_metric("ndcg@3(gian=exponential)")
    with pytest.raises(ValueError, match="level must be <= 1, got 1.5"):
        parse_metric("iprec_at_recall@1.5")
    with pytest.raises(ValueError, match="needs its parameter level"):
        parse_metric("iprec_at_recall")
    with pytest.raises(ValueError, match="k must be a whole number, got '2.5'"):
        parse_metric("P@2.5")
    with pytest.raises(ValueError, match="write parameters as name=value"):
        parse_metric("ndcg@3(exponential)")


def test_requirement_flags_and_aggregates():
    assert REGISTRY["ndcg"].graded and REGISTRY["ndcg"].all_relevant
    assert REGISTRY["dcg"].graded and not REGISTRY["dcg"].all_relevant
    assert not REGISTRY["precision"].graded and not REGISTRY["precision"].all_relevant
    assert REGISTRY["gm_map"].aggregate == "geometric" and not REGISTRY["gm_map"].per_query
    assert REGISTRY["num_ret"].aggregate == "sum" and REGISTRY["num_ret"].value == "count"
    assert REGISTRY["relstring"].aggregate == "none" and REGISTRY["relstring"].value == "text"
    assert [t.name for t in REGISTRY["map"].trec] == ["map", "map_cut"]
    assert "official" in REGISTRY["bpref"].trec[0].sets


def test_register_a_metric_with_parameters_and_remove_it():
    from ragworkbook.metrics.registry import MetricSpec, Param, registered

    spec = MetricSpec("fake_metric", "retrieval", "fake", "a metric of a test",
                      params=(Param("k", int, None, "cutoff", required=True, low=1),
                              Param("beta", float, 1.0, "weight", low=0.0)), needs=frozenset({"relevance"}))
    with registered(spec):
        assert parse_metric("fake_metric@3(beta=2)").kwargs == {"k": 3, "beta": 2.0}
        assert "fake_metric@k" in known_names("retrieval")
        with pytest.raises(ValueError, match="already registered"):
            from ragworkbook.metrics.registry import register

            register(spec)
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric("fake_metric@3")


def test_a_run_wide_option_reaches_only_the_parameters_that_declare_it():
    """``--max-grade`` is ERR's option: a new metric's own ``max_grade`` keeps its default."""
    from ragworkbook.metrics.registry import MetricSpec, Param, registered

    sdcg = MetricSpec("sdcg", "retrieval", "scaled DCG", "DCG over its maximum at the top grade",
                      params=(Param("k", int, None, "cutoff", low=1),
                              Param("max_grade", float, 3.0, "the top grade", low=1e-300)),
                      needs=frozenset({"relevance"}), graded=True)
    with registered(sdcg):
        run_wide = {"gain": "exponential", "max_grade": 10.0}
        assert parse_metric("sdcg@5", defaults=run_wide).kwargs == {"k": 5, "max_grade": 3.0}
        assert parse_metric("err@5", defaults=run_wide).kwargs == {"k": 5, "max_grade": 10.0}
        assert parse_metric("ndcg@5", defaults=run_wide).kwargs["gain"] == "exponential"
        assert parse_metric("sdcg@5(max_grade=10)", defaults=run_wide).kwargs["max_grade"] == 10.0


def test_a_name_without_its_cutoff_is_taken_at_the_run_cutoff_once():
    from ragworkbook.metrics.registry import parse_at_cutoff

    assert parse_at_cutoff("recall", 3).name == "recall@3"  # a required cutoff, taken at k
    assert parse_at_cutoff("mrr", 5).name == "mrr@5"  # an optional one too
    assert parse_at_cutoff("ndcg(gain=exponential)", 4) == parse_metric("ndcg@4(gain=exponential)")
    assert parse_at_cutoff("P@10", 3).name == "P@10"  # a cutoff given is kept, as written
    assert parse_at_cutoff("bleu", 3).name == "bleu"  # no cutoff to take
    m = parse_metric("recall@2")
    assert parse_at_cutoff(m, 3) is m  # a Metric is not parsed again
    with pytest.raises(ValueError, match="unknown metric"):
        parse_at_cutoff("recal", 3)
