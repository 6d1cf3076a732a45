"""Batch metrics: agreement with pytrec_eval and ranx, the array API, conventions, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import reference

from ragworkbook.metrics.batch import (
    Columns,
    RunResult,
    evaluate_arrays,
    evaluate_columns,
    evaluate_rankings,
    evaluate_run,
)

OURS_TO_TREC = {
    "P@1": "P_1", "P@3": "P_3", "P@10": "P_10", "recall@3": "recall_3", "recall@10": "recall_10",
    "hit_rate@1": "success_1", "hit_rate@5": "success_5", "mrr": "recip_rank", "map": "map",
    "map@5": "map_cut_5", "r_precision": "Rprec", "ndcg@3": "ndcg_cut_3", "ndcg@10": "ndcg_cut_10",
    "ndcg": "ndcg",
}
TREC_MEASURES = {"P.1,3,10", "recall.3,10", "success.1,5", "recip_rank", "map", "map_cut.5", "Rprec",
                 "ndcg_cut.3,10", "ndcg"}
OURS_TO_RANX = {
    "P@3": "precision@3", "P@10": "precision@10", "recall@3": "recall@3", "recall@10": "recall@10",
    "hit_rate@1": "hit_rate@1", "hit_rate@5": "hit_rate@5", "mrr": "mrr", "mrr@3": "mrr@3", "map": "map",
    "r_precision": "r-precision", "ndcg@3": "ndcg@3", "ndcg@10": "ndcg@10",
}


def random_collection(seed: int, n_queries: int = 60, ties: bool = True, empty_queries: bool = True):
    """Graded qrels (0-3) and a run with scores; with ``ties``, scores are drawn from few values."""
    rng = np.random.default_rng(seed)
    pool = [f"d{j}" for j in range(80)]
    qrels, run = {}, {}
    for i in range(n_queries):
        q = f"q{i}"
        judged = rng.choice(pool, int(rng.integers(1, 20)), replace=False)
        qrels[q] = {d: int(rng.integers(0, 4)) for d in judged}
        if empty_queries and i % 17 == 0:
            qrels[q] = {d: 0 for d in judged}
        retrieved = rng.choice(pool, int(rng.integers(1, 40)), replace=False)
        if ties:
            scores = rng.integers(0, 6, size=len(retrieved)).astype(float) / 2
        else:
            scores = rng.permutation(len(retrieved)) + rng.random() * 0.5
        run[q] = {d: float(s) for d, s in zip(retrieved, scores, strict=True)}
    return qrels, run


@pytest.fixture(scope="module")
def ranx_lib():
    """ranx compiles its metrics with numba on first use: import it once per module."""
    ranx = reference("ranx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qrels, run = random_collection(0, 5, ties=False)
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), list(OURS_TO_RANX.values()) + ["ndcg_burges@5"])
    return ranx


def ranx_eval(ranx, qrels, run, metrics):
    """ranx per-query scores as {metric: {qid: value}}."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        qrels_obj = ranx.Qrels(qrels)
        scores = ranx.evaluate(qrels_obj, ranx.Run(run), metrics, return_mean=False)
    if not isinstance(scores, dict):
        scores = {metrics[0]: scores}
    qids = qrels_obj.get_query_ids()
    return {m: dict(zip(qids, np.asarray(v).tolist(), strict=True)) for m, v in scores.items()}


# --------------------------------------------------------------------------- references


@pytest.mark.reference
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_agrees_with_pytrec_eval_including_ties(seed):
    pytrec_eval = reference("pytrec_eval")
    qrels, run = random_collection(seed, ties=True)
    ref = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    ours = evaluate_run(qrels, run, list(OURS_TO_TREC))
    assert sorted(ref) == ours.query_ids  # queries without relevant docs included (scored 0) by both
    for q, row in ours.per_query.items():
        for name, trec in OURS_TO_TREC.items():
            assert row[name] == pytest.approx(ref[q][trec], abs=1e-9), (q, name)
    for name, trec in OURS_TO_TREC.items():
        assert ours.mean[name] == pytest.approx(np.mean([ref[q][trec] for q in ref]), abs=1e-9)


@pytest.mark.reference
@pytest.mark.parametrize("seed", [4, 5])
def test_agrees_with_ranx_without_ties(ranx_lib, seed):
    qrels, run = random_collection(seed, ties=False)
    ref = ranx_eval(ranx_lib, qrels, run, list(OURS_TO_RANX.values()))
    ours = evaluate_run(qrels, run, list(OURS_TO_RANX))
    assert ours.query_ids == sorted(qrels)
    for name, rname in OURS_TO_RANX.items():
        expected = [ref[rname][q] for q in ours.query_ids]
        np.testing.assert_allclose(ours.values[name], expected, atol=1e-9, rtol=0, err_msg=name)


@pytest.mark.reference
def test_exponential_gain_agrees_with_ranx_ndcg_burges(ranx_lib):
    qrels, run = random_collection(6, ties=False)
    ref = ranx_eval(ranx_lib, qrels, run, ["ndcg_burges@5", "ndcg_burges@10"])
    ours = evaluate_run(qrels, run, ["ndcg@5", "ndcg@10"], gain="exponential")
    for k in (5, 10):
        expected = [ref[f"ndcg_burges@{k}"][q] for q in ours.query_ids]
        np.testing.assert_allclose(ours.values[f"ndcg@{k}"], expected, atol=1e-9, rtol=0)


@pytest.mark.reference
def test_ties_differ_from_ranx_and_we_follow_trec_eval(ranx_lib):
    # Every document tied: trec_eval (and we) rank by doc id descending, so "d9" comes first.
    qrels = {"q": {"d1": 1}}
    run = {"q": {f"d{j}": 1.0 for j in range(1, 10)}}
    ours = evaluate_run(qrels, run, "mrr").mean["mrr"]
    assert ours == pytest.approx(1 / 9)  # d9, d8, ..., d1: the relevant d1 is last
    ranx_rr = ranx_eval(ranx_lib, qrels, run, ["mrr"])["mrr"]["q"]
    # ranx's unstable argsort puts tied documents in another order: document the difference.
    assert ranx_rr != pytest.approx(ours)


@pytest.mark.reference
def test_score_precision_float64_like_trec_eval_10_float32_like_pytrec_eval():
    pytrec_eval = reference("pytrec_eval")
    # 1 + 2e-10 and 1 + 1e-10 are equal in float32. trec_eval 10 (the C trec_eval of the conformance
    # suite, measured: recip_rank 1.0000) reads scores as doubles and puts "a" first; pytrec_eval
    # (trec_eval 9 code, float scores) sees a tie and puts "b" (the larger id) first.
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0000000002, "b": 1.0000000001}}
    trec9 = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"]
    assert trec9 == 0.5
    for api in (evaluate_run, _via_columns):
        assert api(qrels, run, "mrr").mean["mrr"] == 1.0
        assert api(qrels, run, "mrr", score_precision="float32").mean["mrr"] == trec9


def _via_columns(qrels, run, metrics, **kw):
    return evaluate_columns(Columns.from_dict(qrels), Columns.from_dict(run), metrics, **kw)


def float32_resolution_collection(seed: int, n_queries: int = 40):
    """Graded qrels and a run whose scores come in clusters closer than float32 resolution (as sums
    of float64 term weights do): many pairs differ in float64 and tie in float32."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(n_queries):
        docs = [f"d{j:03d}" for j in rng.choice(300, 60, replace=False)]
        base = rng.integers(0, 12, size=60) / 4 + 5.0
        scores = base + rng.integers(0, 4, size=60) * 1e-12  # below float32's 5e-7 at 5.0
        run[f"q{i}"] = dict(zip(docs, scores.tolist(), strict=True))
        qrels[f"q{i}"] = {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 20, replace=False)}
    return qrels, run


@pytest.mark.reference
@pytest.mark.parametrize("seed", [11, 12])
def test_float32_precision_agrees_with_pytrec_eval_on_every_query(seed):
    pytrec_eval = reference("pytrec_eval")
    qrels, run = float32_resolution_collection(seed)
    ref = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    for api in (evaluate_run, _via_columns):
        f32 = api(qrels, run, list(OURS_TO_TREC), score_precision="float32")
        f64 = api(qrels, run, list(OURS_TO_TREC))
        differ = 0
        for q in ref:
            for name, trec in OURS_TO_TREC.items():
                assert f32.per_query[q][name] == pytest.approx(ref[q][trec], abs=1e-12), (q, name)
            differ += any(f64.per_query[q][n] != pytest.approx(ref[q][t], abs=1e-12)
                          for n, t in OURS_TO_TREC.items())
        assert differ > 0  # the collection does exercise float32 ties


@pytest.mark.reference
@pytest.mark.parametrize("level", [2, 3])
def test_relevance_level_agrees_with_pytrec_eval(level):
    pytrec_eval = reference("pytrec_eval")
    qrels, run = random_collection(13, ties=True)
    measures = {"P.5", "recall.10", "success.3", "recip_rank", "map", "Rprec", "ndcg_cut.5", "ndcg"}
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
    names = {"P@5": "P_5", "recall@10": "recall_10", "hit_rate@3": "success_3", "mrr": "recip_rank",
             "map": "map", "r_precision": "Rprec", "ndcg@5": "ndcg_cut_5", "ndcg": "ndcg"}
    for api in (evaluate_run, _via_columns):
        ours = api(qrels, run, list(names), relevance_level=level)
        for q in ref:
            for name, trec in names.items():
                assert ours.per_query[q][name] == pytest.approx(ref[q][trec], abs=1e-12), (q, name)


def test_depth_cuts_the_ranking_after_sorting():
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 0.1, "b": 0.9, "c": 0.5, "x": 0.7}}  # ranking b x c a
    for api in (evaluate_run, _via_columns):
        cut = api(qrels, run, "P@4,recall@4,map", depth=2).mean
        assert cut == {"P@4": 0.25, "recall@4": pytest.approx(1 / 3), "map": pytest.approx(1 / 3)}
        assert api(qrels, run, "recall@4").mean["recall@4"] == 1.0
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        evaluate_run(qrels, run, "mrr", depth=0)


@pytest.mark.reference
def test_err_agrees_with_ir_measures_gdeval():
    ir_measures = reference("ir_measures")
    import shutil

    if shutil.which("perl") is None:
        pytest.fail("perl is needed for ir_measures' gdeval provider (ERR)")
    rng = np.random.default_rng(14)
    qrels, run = {}, {}
    for i in range(30):  # gdeval needs numeric query ids and grades 0..4
        docs = [f"d{j}" for j in rng.choice(200, 40, replace=False)]
        run[str(100 + i)] = dict(zip(docs, rng.permutation(40).astype(float).tolist(), strict=True))
        qrels[str(100 + i)] = {d: int(rng.integers(0, 5)) for d in rng.choice(docs, 15, replace=False)}
    measures = [ir_measures.ERR @ 5, ir_measures.ERR @ 20]
    ref = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)}
    for api in (evaluate_run, _via_columns):
        ours = api(qrels, run, "err@5,err@20")  # max_grade 4 by default, gdeval's MAX_JUDGMENT
        for q, row in ours.per_query.items():
            for k in (5, 20):
                # gdeval prints 5 decimals: the same digits
                assert f"{row[f'err@{k}']:.5f}" == f"{ref[(q, f'ERR@{k}')]:.5f}", (q, k)


def test_err_hand_worked():
    # grades in rank order 2, 0, 4, 1 on the 0-4 scale: R = (2^g - 1) / 16 = 3/16, 0, 15/16, 1/16;
    # ERR = 3/16 + 0 + (13/16)(15/16)/3 + (13/16)(1)(1/16)(1/16)/4 = 0.44219970703125
    qrels = {"q": {"a": 2, "b": 0, "c": 4, "d": 1}}
    run = {"q": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    for api in (evaluate_run, _via_columns):
        res = api(qrels, run, "err,err@2,err@3").mean
        assert res == {"err": 0.44219970703125, "err@2": 0.1875, "err@3": 0.44140625}
    # max_grade: the top of the scale; a grade 4 on a 0-8 scale stops the user with (2^4 - 1) / 2^8
    assert evaluate_run({"q": {"c": 4}}, run, "err", max_grade=8).mean["err"] == pytest.approx(15 / 256 / 3)
    with pytest.raises(ValueError, match="a grade of 4 exceeds max_grade = 3"):
        evaluate_run(qrels, run, "err", max_grade=3)


def test_huge_grades_exact_ndcg_and_err_or_a_clear_error():
    # exponential gain of grade 2000 is 2^2000 - 1: no float holds it. NDCG is still exact (each gain
    # divided by the query's largest), ERR too; DCG itself cannot be represented: an error, never inf.
    qrels = {"q": {"a": 2000, "b": 1999}}
    run = {"q": {"b": 2.0, "a": 1.0}}  # b first
    d = np.log2(3.0)
    expected = (0.5 + 1 / d) / (1 + 0.5 / d)
    for api in (evaluate_run, _via_columns):
        ndcg = api(qrels, run, "ndcg,ndcg@2", gain="exponential").mean
        assert ndcg == {"ndcg": pytest.approx(expected, rel=1e-12), "ndcg@2": pytest.approx(expected)}
        assert api(qrels, run, "err", max_grade=2000).mean["err"] == pytest.approx(0.5 + 0.5 / 2)
        with pytest.raises(ValueError, match=r"dcg of query 'q' \(its largest grade, 2000, .*\) is inf: "
                                             r"its exponential gain 2\^grade - 1 does not fit in a float"):
            api(qrels, run, "dcg", gain="exponential")
    assert evaluate_run({"q": {"a": 1e300, "b": 1e300}}, run, "ndcg").mean["ndcg"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="grade inf of query 'q', document 'a' is not a finite number"):
        evaluate_run({"q": {"a": float("inf")}}, run, "ndcg")


@pytest.mark.reference
def test_negative_grades_agree_with_trec_eval():
    pytrec_eval = reference("pytrec_eval")
    qrels = {"q": {"a": 1, "c": -1, "d": 2}}
    run = {"q": {"c": 3.0, "a": 2.0, "d": 1.0}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"P.3", "map", "ndcg_cut.3"}).evaluate(run)["q"]
    ours = evaluate_run(qrels, run, "P@3,map,ndcg@3").per_query["q"]
    assert ours["P@3"] == pytest.approx(ref["P_3"])
    assert ours["map"] == pytest.approx(ref["map"])
    assert ours["ndcg@3"] == pytest.approx(ref["ndcg_cut_3"])


# --------------------------------------------------------------------------- conventions


def test_queries_without_relevant_docs_zero_or_skip():
    qrels = {"q1": {"a": 1}, "q2": {"a": 0}}
    run = {"q1": {"a": 1.0}, "q2": {"a": 1.0}}
    zero = evaluate_run(qrels, run, "ndcg@3,recall@3")
    assert zero.query_ids == ["q1", "q2"] and zero.mean["ndcg@3"] == 0.5
    skip = evaluate_run(qrels, run, "ndcg@3,recall@3", no_relevant="skip")
    assert skip.query_ids == ["q1"] and skip.mean["ndcg@3"] == 1.0
    assert skip.skipped == {"no_relevant": ["q2"]}


def test_queries_missing_from_run():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}, "q3": {"a": 1.0}}
    res = evaluate_run(qrels, run, "mrr")
    assert res.query_ids == ["q1"] and res.skipped == {"not_in_run": ["q2"]}
    complete = evaluate_run(qrels, run, "mrr", missing="zero")
    assert complete.per_query == {"q1": {"mrr": 1.0}, "q2": {"mrr": 0.0}}


def test_array_api_matches_dict_api():
    qrels, run = random_collection(8, ties=False, empty_queries=False)
    metrics = ["P@3", "recall@10", "hit_rate@3", "mrr", "mrr@3", "map", "map@5", "r_precision",
               "ndcg@5", "ndcg"]
    expected = evaluate_run(qrels, run, metrics)
    qids = expected.query_ids
    depth = max(len(run[q]) for q in qids)
    grades = np.zeros((len(qids), depth))
    ideal = np.zeros((len(qids), max(len(qrels[q]) for q in qids)))
    for i, q in enumerate(qids):
        ranking = sorted(run[q], key=lambda d: -run[q][d])
        grades[i, : len(ranking)] = [max(qrels[q].get(d, 0), 0) for d in ranking]
        ideal[i, : len(qrels[q])] = list(qrels[q].values())
    got = evaluate_arrays(grades, metrics, ideal_grades=ideal, query_ids=qids)
    for m in metrics:
        np.testing.assert_allclose(got.values[m], expected.values[m], atol=1e-12)
    n_rel = (ideal > 0).sum(axis=1)
    got2 = evaluate_arrays(grades, metrics, n_relevant=n_rel, ideal_grades=ideal)
    np.testing.assert_allclose(got2.values["recall@10"], expected.values["recall@10"])


def test_array_api_defaults_and_carbon_example():
    res = evaluate_arrays([[0, 2, 3, 1, 1]], "P@3,recall@3,P@5,recall@5,mrr,ndcg@5", gain="exponential")
    mean = {k: round(v, 3) for k, v in res.mean.items()}
    assert mean == {"P@3": 0.667, "recall@3": 0.5, "P@5": 0.8, "recall@5": 1.0, "mrr": 0.5, "ndcg@5": 0.632}
    assert round(evaluate_arrays([0, 2, 3, 1, 1], "ndcg@5").mean["ndcg@5"], 3) == 0.689


def test_run_result_views():
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}}
    res = evaluate_run(qrels, {"q1": {"a": 1.0}, "q2": {"a": 1.0, "b": 0.5}}, "mrr,P@1")
    assert isinstance(res, RunResult)
    assert res.per_query == {"q1": {"mrr": 1.0, "P@1": 1.0}, "q2": {"mrr": 0.5, "P@1": 0.0}}
    assert res.mean == {"mrr": 0.75, "P@1": 0.5}
    frame = res.to_frame()
    assert list(frame.columns) == ["mrr", "P@1"] and list(frame.index) == ["q1", "q2"]
    assert "mrr=0.7500" in repr(res)


def test_k_beyond_ranking_in_batch():
    res = evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@10")
    assert res.mean["P@10"] == 0.1


# --------------------------------------------------------------------------- bad input


def test_nan_score_names_query_and_document():
    with pytest.raises(ValueError, match="query 'q1', document 'b' is NaN"):
        evaluate_run({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": float("nan")}}, "mrr")


def test_non_numeric_score():
    with pytest.raises(ValueError, match="must be a number, got 'high'"):
        evaluate_run({"q1": {"a": 1}}, {"q1": {"a": "high"}}, "mrr")


def test_bad_options():
    with pytest.raises(ValueError, match="unknown gain"):
        evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, "ndcg@3", gain="exp")
    with pytest.raises(ValueError, match="no_relevant must be"):
        evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, "ndcg@3", no_relevant="drop")
    with pytest.raises(ValueError, match="'bleu' is a generation metric; only retrieval metrics apply"):
        evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, "bleu")
    with pytest.raises(ValueError, match="max_grade must be a positive number"):
        evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, "err", max_grade=0)


def test_inner_values_must_be_mappings():
    with pytest.raises(TypeError, match=r"run\['q1'\] must be a mapping \{doc: score\}, got list"):
        evaluate_run({"q1": {"a": 1}}, {"q1": ["a", "b"]}, "mrr")
    with pytest.raises(TypeError, match=r"qrels\['q1'\] must be a mapping"):
        evaluate_run({"q1": {"a"}}, {"q1": {"a": 1.0}}, "mrr")


def test_nothing_to_evaluate():
    with pytest.raises(ValueError, match="nothing to evaluate.*query ids"):
        evaluate_run({"q1": {"a": 1}}, {"Q1": {"a": 1.0}}, "mrr")


def test_array_api_errors():
    with pytest.raises(ValueError, match="NaN"):
        evaluate_arrays([[1, np.nan]], "mrr")
    with pytest.raises(ValueError, match=r"n_relevant\[0\] = 1 but row 0 of grades already holds 2"):
        evaluate_arrays([[1, 1]], "recall@2", n_relevant=[1])
    with pytest.raises(ValueError, match=r"n_relevant must be >= 0, got -1 at row 1"):
        evaluate_arrays([[1, 0], [0, 0]], "recall@2", n_relevant=[1, -1])
    with pytest.raises(ValueError, match=r"ideal_grades\[0\] holds 1 relevant grades but row 0 .* holds 2"):
        evaluate_arrays([[3, 2]], "ndcg@2", ideal_grades=[[3]])
    with pytest.raises(ValueError, match=r"ndcg@2 of row 1 is 3\.0000 > 1: .*ideal_grades does not hold"):
        evaluate_arrays([[1, 0], [3, 0]], "ndcg@2", ideal_grades=[[1], [1]])
    with pytest.raises(ValueError, match="one row per query"):
        evaluate_arrays([[1, 1]], "ndcg@2", ideal_grades=[[1], [2]])
    with pytest.raises(ValueError, match="nothing to evaluate"):
        evaluate_arrays([[0, 0]], "mrr", no_relevant="skip")


@pytest.mark.parametrize(
    "metrics", [["mrr", "ndcg@3"], ["r_precision", "P@2"], ["hit_rate@1", "mrr@2", "dcg@4"]]
)
def test_array_api_with_cut_metrics_only(metrics):
    # Only the first max(k) ranks are extracted here: the results must not change.
    qrels, run = random_collection(9, ties=False, empty_queries=False)
    expected = evaluate_run(qrels, run, metrics)
    grades = np.zeros((len(qrels), 40))
    ideal = np.zeros((len(qrels), 20))
    for i, q in enumerate(expected.query_ids):
        ranking = sorted(run[q], key=lambda d: -run[q][d])
        grades[i, : len(ranking)] = [qrels[q].get(d, 0) for d in ranking]
        ideal[i, : len(qrels[q])] = list(qrels[q].values())
    got = evaluate_arrays(grades, metrics, ideal_grades=ideal)
    for m in expected.metrics:
        np.testing.assert_allclose(got.values[m], expected.values[m], atol=1e-12, err_msg=m)


@pytest.mark.reference
def test_missing_and_no_relevant_queries_like_pytrec_eval():
    pytrec_eval = reference("pytrec_eval")
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 0}, "q3": {"c": 2}}  # q3 is not in the run
    run = {"q1": {"a": 0.2, "b": 0.9}, "q2": {"a": 1.0}, "q4": {"x": 1.0}}  # q4 has no judgements
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "ndcg_cut.5"}).evaluate(run)
    ours = evaluate_run(qrels, run, "mrr,ndcg@5")
    assert sorted(ref) == ours.query_ids == ["q1", "q2"]
    for q in ref:
        assert ours.per_query[q]["mrr"] == pytest.approx(ref[q]["recip_rank"])
        assert ours.per_query[q]["ndcg@5"] == pytest.approx(ref[q]["ndcg_cut_5"])
    assert ours.skipped == {"not_in_run": ["q3"]}


# --------------------------------------------------------------------------- properties

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_docs = st.sampled_from([f"d{i}" for i in range(12)])
_qrels = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), st.dictionaries(_docs, st.integers(-1, 3)),
                         min_size=1)
_run = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]),
                       st.dictionaries(_docs, st.sampled_from([0.0, 0.5, 1.0, 2.0])), min_size=1)
_ALL = ["P@1", "P@5", "recall@5", "hit_rate@3", "mrr", "mrr@2", "map", "map@3", "r_precision",
        "ndcg@3", "ndcg"]


@settings(max_examples=120, deadline=None)
@given(_qrels, _run, st.sampled_from(["linear", "exponential"]))
def test_a_run_is_ranked_by_score_then_document_id_descending(qrels, run, gain):
    """The formulas are held to their one-query definitions in test_conformance.py; here, only the
    ranking of a run: by score descending, ties broken by document id descending (trec_eval)."""
    try:
        res = evaluate_run(qrels, run, _ALL, gain=gain)
    except ValueError as exc:  # no judged query in the run: the documented error
        assert "nothing to evaluate" in str(exc)
        return
    rankings = {q: [d for d, _ in sorted(run[q].items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]
                for q in res.query_ids}
    same = evaluate_rankings(rankings, {q: qrels[q] for q in res.query_ids}, _ALL, gain=gain)
    assert same.query_ids == res.query_ids
    for m in _ALL:
        np.testing.assert_allclose(res.values[m], same.values[m], atol=1e-12)
