"""evaluate_outputs: the answers a system already produced, scored as given, with the pipeline's scoring."""

import json

import pytest

from ragworkbook.evaluation.outputs import evaluate_outputs
from ragworkbook.evaluation.report import Report
from ragworkbook.metrics.generation import token_f1
from ragworkbook.paths import data_path

RECORDS = [
    # right answer; relevance by the record's own ids: d1 relevant (and d9, never retrieved)
    {"id": "a", "question": "How many heads?", "answer": "Eight attention heads.",
     "contexts": [{"id": "d1", "text": "It uses h = 8 heads."}, {"id": "d2", "text": "Adam optimiser."},
                  {"id": "d3", "text": "Dropout 0.1."}],
     "ground_truth": "The model used eight attention heads.", "relevant_ids": ["d1", "d9"]},
    # wrong answer sharing no token with its reference; relevance by keyword
    {"id": "b", "question": "Which optimizer?", "answer": "Stochastic descent, probably.",
     "contexts": ["They trained with Adam.", "Warm-up steps.", "Adam with beta2 0.98."],
     "ground_truth": "They used Adam.", "keyword": "adam"},
    # no reference, no relevance
    {"id": "c", "question": "What dropout?", "answer": "0.1", "contexts": ["Pdrop = 0.1"]},
]


def test_answers_scored_verbatim_and_wrong_answer_scores_token_f1_zero():
    rep = evaluate_outputs(RECORDS, metrics=["token_f1", "precision@3", "recall@3", "mrr", "hit_rate@3"],
                           progress=False, name="mine")
    assert [r["answer"] for r in rep.rows] == [r["answer"] for r in RECORDS]
    assert rep.rows[1]["contexts"] == RECORDS[1]["contexts"]
    assert rep.rows[0]["context_ids"] == ["d1", "d2", "d3"] and rep.rows[1]["context_ids"] == [None] * 3
    v = {r["id"]: r["metrics"] for r in rep.rows}
    assert v["b"]["token_f1"] == 0.0  # "stochastic descent probably" vs "they used adam"
    assert v["a"]["token_f1"] == pytest.approx(token_f1(RECORDS[0]["answer"], RECORDS[0]["ground_truth"]))
    # by ids: d1 at rank 1 is one of two relevant
    assert v["a"]["precision@3"] == pytest.approx(1 / 3) and v["a"]["recall@3"] == 0.5
    assert v["a"]["mrr@3"] == 1.0
    # by keyword: contexts 1 and 3 contain "Adam" (case-insensitive); recall cannot be known
    assert v["b"]["precision@3"] == pytest.approx(2 / 3) and v["b"]["mrr@3"] == 1.0
    assert v["b"]["hit_rate@3"] == 1.0 and v["b"]["recall@3"] is None
    assert rep.rows[1]["unscored"]["recall@3"]["reason"] == "incomplete_relevance"
    # nothing to judge relevance or the answer by: undefined, with reasons, counted
    c = rep.rows[2]
    assert all(x is None for x in c["metrics"].values())
    assert c["unscored"]["token_f1"]["reason"] == "no_reference"
    assert c["unscored"]["recall@3"]["reason"] == "no_relevance"
    agg = rep.aggregates
    assert (agg["token_f1"].n, agg["token_f1"].undefined) == (2, 1)
    assert (agg["recall@3"].n, agg["recall@3"].undefined) == (1, 2)
    assert rep.meta["relevance"] == {"ids": 1, "keyword": 1, "no_relevance": 1}
    assert [r["relevance"] for r in rep.rows] == ["ids", "keyword", None]
    assert rep.meta["mode"] == "answers" and rep.meta["name"] == "mine"


def test_keyword_relevance_computes_the_metrics_that_need_only_the_retrieved_contexts():
    """What keyword relevance can compute is the registry's all_relevant flag, nothing else."""
    from ragworkbook.metrics.registry import specs

    needs_all = {s.name for s in specs("retrieval") if s.all_relevant}
    assert {"recall", "ndcg", "map", "r_precision"} <= needs_all
    assert not {"precision", "hit_rate", "mrr", "dcg", "err"} & needs_all
    rec = [{"id": "k", "question": "q?", "answer": "a", "keyword": "x", "contexts": ["x", "y", "x"]}]
    rep = evaluate_outputs(rec, metrics=["P@3", "mrr", "recall@3", "bpref"], progress=False)
    assert rep.rows[0]["metrics"]["P@3"] == pytest.approx(2 / 3) and rep.rows[0]["metrics"]["mrr@3"] == 1.0
    assert {m for m, u in rep.rows[0]["unscored"].items() if u["reason"] == "incomplete_relevance"} == {
        "recall@3", "bpref"}


def test_ragas_01_and_02_names_give_the_same_report():
    v02 = [{"user_input": r["question"], "response": r["answer"], "reference": r.get("ground_truth"),
            "retrieved_contexts": [c if isinstance(c, str) else c["text"] for c in r["contexts"]]}
           for r in RECORDS]
    v01 = [{"question": r["question"], "answer": r["answer"], "ground_truth": r.get("ground_truth"),
            "contexts": [c if isinstance(c, str) else c["text"] for c in r["contexts"]]} for r in RECORDS]
    a = evaluate_outputs(v01, metrics=["token_f1", "bleu", "exact_match"], progress=False).to_dict()
    b = evaluate_outputs(v02, metrics=["token_f1", "bleu", "exact_match"], progress=False).to_dict()
    assert a == b
    assert a["rows"][0]["id"].startswith("q-")  # no ids given: made from the questions


def test_qrels_mapping_and_missing_context_ids():
    qrels = {"a": {"d2": 1}, "zzz": {"x": 1}}
    rep = evaluate_outputs(RECORDS, qrels=qrels, metrics=["recall@3", "token_f1"], progress=False)
    rows = {r["id"]: r for r in rep.rows}
    assert rows["a"]["metrics"]["recall@3"] == 1.0  # the qrels win over the record's own ids
    assert rows["b"]["unscored"]["recall@3"]["reason"] == "no_context_ids"  # string contexts: no ids
    assert rows["a"]["relevance"] == "qrels"
    with_ids = [dict(RECORDS[2], contexts=[{"id": "p", "text": "Pdrop = 0.1"}])]
    rep = evaluate_outputs(with_ids, qrels=qrels, metrics=["recall@3"], progress=False)
    why = rep.rows[0]["unscored"]["recall@3"]
    assert why["reason"] == "no_relevance" and "'c' is not in the qrels" in why["message"]


def test_defaults_follow_what_the_records_give():
    no_ref = [{k: v for k, v in r.items() if k not in ("ground_truth", "relevant_ids", "keyword")}
              for r in RECORDS]
    with pytest.raises(ValueError, match="compares the answer with a reference"):
        evaluate_outputs(no_ref, metrics=["token_f1"], progress=False)
    with pytest.raises(ValueError, match="needs relevance judgements"):
        evaluate_outputs(no_ref, metrics=["recall@3"], progress=False)
    with pytest.raises(ValueError, match="is judged by an LLM"):
        evaluate_outputs(RECORDS, metrics=["faithfulness"], progress=False)


def test_judged_metrics_with_a_fake_judge():
    from fakes.judges import RuleJudge

    judge = RuleJudge()
    rep = evaluate_outputs(RECORDS, judge=judge, metrics=["faithfulness", "context_recall"], progress=False)
    rows = {r["id"]: r for r in rep.rows}
    assert rows["c"]["unscored"]["context_recall"]["reason"] == "no_reference"  # not sent to the judge
    assert rows["a"]["metrics"]["context_recall"] is not None
    assert rows["c"]["metrics"]["faithfulness"] is not None
    assert rep.meta["judge"] == "fake:rule-judge" and rep.meta["judge_model_calls"] == judge.calls > 0


def test_dataframe_and_file_give_the_same_report(tmp_path):
    import pandas as pd

    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    frame = pd.DataFrame(RECORDS)  # missing values become NaN
    a = evaluate_outputs(path, metrics=["token_f1", "precision@3"], progress=False)
    b = evaluate_outputs(frame, metrics=["token_f1", "precision@3"], progress=False)
    assert a.to_pandas(text=True).equals(b.to_pandas(text=True))
    assert a.meta["source"] == str(path) and b.meta["source"] == "<memory>"


def test_the_workbook_run_file_scores_like_the_pipeline():
    """Notebook 07's saved run, scored as given with keyword relevance over the notes (qrels), equals
    the pipeline's numbers from the same rankings: one scoring path."""
    from ragworkbook.corpus.chunking import chunk_pages
    from ragworkbook.corpus.eval_set import load_eval_set
    from ragworkbook.corpus.ground_truth import keyword_qrels
    from ragworkbook.corpus.pages import load_corpus
    from ragworkbook.evaluation.retrieval import score_rankings
    from ragworkbook.metrics.generation import generation_scores

    run = data_path("runs", "naive_rag_embedded.json")
    qrels = keyword_qrels(chunk_pages(load_corpus()), load_eval_set())
    names = ["recall@3", "ndcg@3", "mrr@3", "token_f1", "rouge_l"]
    rep = evaluate_outputs(run, qrels=qrels, metrics=names, progress=False)
    answers = json.loads(run.read_text(encoding="utf-8"))["answers"]
    rankings = {a["id"]: [c["id"] for c in a["contexts"]] for a in answers}
    direct = score_rankings(rankings, qrels, names[:3]).per_query
    gen = generation_scores([a["answer"] for a in answers], [a["reference"] for a in answers],
                            metrics=names[3:])
    for i, r in enumerate(rep.rows):
        for m in names[:3]:
            assert r["metrics"][m] == pytest.approx(direct[r["id"]][m])
        for m in names[3:]:
            assert r["metrics"][m] == pytest.approx(gen[m].iloc[i])
    assert rep.meta["ignored_fields"] == ["backend", "model", "prompt"]
    # the saved report loads back (validated), with its undefined values and reasons
    Report.from_dict(json.loads(json.dumps(rep.to_dict())))


def test_records_without_contexts_have_the_context_metrics_undefined():
    """A question, answer, reference export: generation metrics scored, every metric that reads the
    contexts undefined with its reason (the registry's 'contexts' need says which)."""
    from fakes.judges import RuleJudge

    records = [{"question": "How many heads?", "answer": "Eight heads.", "reference": "8 heads"},
               {"question": "Which optimizer?", "answer": "Adam", "reference": "Adam"}]
    rep = evaluate_outputs(records, judge=RuleJudge(), metrics=["token_f1", "faithfulness", "context_recall"],
                           qrels={"x": {"d": 1}}, progress=False)
    assert rep.aggregates["token_f1"].n == 2
    for m in ("faithfulness", "context_recall"):
        assert {u.reason for u in rep.unscored(m).values()} == {"no_contexts"}
    ids_only = [{"question": "Q?", "answer": "A", "retrieved_context_ids": ["d1", "d2"],
                 "reference_context_ids": ["d2"]}]
    rep = evaluate_outputs(ids_only, metrics=["precision@2", "mrr@2"], progress=False)
    assert rep.values("precision@2") == [0.5] and rep.values("mrr@2") == [0.5]  # relevance by id: scored


def test_an_answer_over_the_cap_is_kept_and_not_scored():
    from ragworkbook.corpus.answers import MAX_SCORED_CHARS

    long = "eight heads " * (MAX_SCORED_CHARS // 12 + 1)
    records = [{"question": "Q?", "answer": long, "contexts": ["c"], "reference": "8"},
               {"question": "Q2?", "answer": "8", "contexts": ["c"], "reference": "x" * 200_000}]
    rep = evaluate_outputs(records, metrics=["token_f1", "exact_match"], progress=False)
    why = rep.unscored("token_f1")
    assert {u.reason for u in why.values()} == {"text_too_long"} and rep.rows[0]["answer"] == long
    assert "the answer has" in why[rep.ids[0]].message and "the reference has" in why[rep.ids[1]].message
